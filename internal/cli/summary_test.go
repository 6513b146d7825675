package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestSweepSummaryWholeChunk: a sweep of a workload of three operators
// (a plain GEMM, SwiGLU and hc_up) prints one report, not one per
// operator: one whole-chunk table whose sums and ratios cover every shape
// of the workload, the verdicts counted (undecided among them), and what
// to do next — one tilefit select command per operator for this database
// and workload (issue 19: three partial per-chunk tables, no total, no
// next step).
func TestSweepSummaryWholeChunk(t *testing.T) {
	needCC(t)
	dir := t.TempDir()
	wl := filepath.Join(dir, "three.yaml")
	if err := os.WriteFile(wl, []byte(`name: three
m: [4, 7]
shapes:
  - {name: g, n: 16, k: 24, calls: 3}
  - {name: sw, op: swiglu_f16, n: 16, k: 24, calls: 2}
  - {name: up, op: hc_up_f16, s: 16, k: 24, calls: 1}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "three.db")
	code, out, stderr := runCLI(t, "sweep", "--workload", wl, "--db", db, "--tiles", "16_64_1,32_64_1", "--rounds", "6", "--aa=false", "--isolate=false")
	if code != 0 {
		t.Fatalf("sweep: exit %d\n%s", code, stderr)
	}
	if n := strings.Count(out, "\n# tilefit report"); n != 1 {
		t.Errorf("%d reports printed, want one over every operator:\n%s", n, out)
	}
	if n := strings.Count(out, "## The whole chunk"); n != 1 {
		t.Fatalf("%d whole-chunk tables, want 1:\n%s", n, out)
	}
	if !strings.Contains(out, "over the workload's 3 shapes (3 with cells here, 3 operators)") {
		t.Errorf("the whole chunk does not cover the three operators:\n%s", out)
	}
	// Both M rows, complete (no partial star), each ratio with its
	// interval and verdict.
	chunk := out[strings.Index(out, "## The whole chunk"):]
	chunk = chunk[:strings.Index(chunk, "\n## ")]
	row := regexp.MustCompile(`(?m)^\|\s+(4|7) \|([^\n]*)$`)
	rows := row.FindAllStringSubmatch(chunk, -1)
	if len(rows) != 2 {
		t.Fatalf("whole chunk rows %q:\n%s", rows, chunk)
	}
	interval := regexp.MustCompile(`[0-9]\.[0-9]{3} \[[0-9]\.[0-9]{3}, [0-9]\.[0-9]{3}\] (faster|slower|tie|undecided)`)
	for _, r := range rows {
		if strings.Contains(r[2], "*") || !interval.MatchString(r[2]) {
			t.Errorf("M=%s: %q, want whole sums and a ratio with its interval and verdict", r[1], r[2])
		}
	}
	if strings.Contains(chunk, "partial sum") {
		t.Errorf("the whole chunk says a sum is partial:\n%s", chunk)
	}
	if !regexp.MustCompile(`Decisions against the reference: [0-9]+ comparisons — [0-9]+ faster, [0-9]+ slower, [0-9]+ tie, [0-9]+ undecided`).MatchString(out) {
		t.Errorf("no verdict counts in the summary:\n%s", out)
	}
	// What to do next: one select per operator, on this database and
	// workload, each with its own emit folder.
	next := out[strings.Index(out, "Next: "):]
	for _, op := range []string{"gemm_f16", "swiglu_f16", "hc_up_f16"} {
		want := regexp.MustCompile(`tilefit select --db ` + regexp.QuoteMeta(db) + ` --backend cpu --workload ` + regexp.QuoteMeta(wl) +
			` --provenance [0-9a-f]{16} --emit go,c,cpp,json --emit-dir tileselect/` + op + `\n`)
		if !want.MatchString(next) {
			t.Errorf("next steps lack the select of %s:\n%s", op, next)
		}
	}
}

// TestOutTypeAppliesWhereThereIsY: --out-type f16 on a workload of plain
// GEMMs and fused operators (the strata preset's mix) applies to the
// operators with an output operand Y and says which, instead of refusing
// the whole sweep (issue 19: "--out-type: operator swiglu_f16 has no
// operand "Y""); the GEMM's cells are stored with fp16 Y, the fused
// operators' with their own types.
func TestOutTypeAppliesWhereThereIsY(t *testing.T) {
	needCC(t)
	dir := t.TempDir()
	wl := filepath.Join(dir, "mix.yaml")
	if err := os.WriteFile(wl, []byte(`name: mix
m: [5]
shapes:
  - {name: g, n: 16, k: 24, calls: 3}
  - {name: sw, op: swiglu_f16, n: 16, k: 24, calls: 2}
  - {name: up, op: hc_up_f16, s: 16, k: 24, calls: 1}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "mix.db")
	code, _, stderr := runCLI(t, "sweep", "--workload", wl, "--db", db, "--out-type", "f16", "--tiles", "16_64_1", "--rounds", "6",
		"--aa=false", "--isolate=false", "--vendor=false", "--report=false")
	if code != 0 {
		t.Fatalf("sweep --out-type f16: exit %d\n%s", code, stderr)
	}
	want := "--out-type f16: applied to the output Y of gemm_f16; swiglu_f16 (outputs h f16), hc_up_f16 (outputs mixh f16, mixed f32) have no operand Y and keep their own output types\n"
	if !strings.Contains(stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr)
	}
	code, md, stderr := runCLI(t, "report", "--db", db, "--workload", wl)
	if code != 0 {
		t.Fatalf("report: exit %d\n%s", code, stderr)
	}
	if !regexp.MustCompile(`\| output +\| fp16 +\|`).MatchString(md) || !strings.Contains(md, "X=f16,Wg=f16,Wu=f16,h=f16") {
		t.Errorf("the report does not show gemm_f16 with fp16 Y beside swiglu_f16's own types:\n%s", md)
	}
	// A workload without any operand Y is refused, naming what it has.
	only := filepath.Join(dir, "fused.yaml")
	if err := os.WriteFile(only, []byte("name: fused\nm: [5]\nshapes:\n  - {name: sw, op: swiglu_f16, n: 16, k: 24, calls: 2}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = runCLI(t, "sweep", "--workload", only, "--db", db, "--out-type", "f16")
	if code != 2 || !strings.Contains(stderr, "--out-type f16: no operator of the workload has an output operand Y (swiglu_f16 (outputs h f16))") {
		t.Errorf("fused only: exit %d: %s", code, stderr)
	}
}

// TestStrataChunkCPU: the report of the recorded CPU sweep of the strata
// preset (docs/results/cpu-strata-chunk) has one whole-chunk table over
// its 13 shapes and 3 operators whose tilefit and OpenBLAS columns each
// cover all 13 (issue 19: three partial tables, each lacking a dozen
// shapes).
func TestStrataChunkCPU(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "docs", "results", "cpu-strata-chunk", "strata-m256.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), "strata.sqlite")
	if err := os.WriteFile(db, src, 0o644); err != nil {
		t.Fatal(err)
	}
	code, js, stderr := runCLI(t, "report", "--db", db, "--workload", "strata", "--format", "json")
	if code != 0 {
		t.Fatalf("report: exit %d\n%s", code, stderr)
	}
	var doc struct {
		Chunks []struct {
			Shapes []struct {
				Shape, Operator string
				Present         bool
			}
			Vendors []string
			Totals  []struct {
				Complete bool
				BestMs   *float64            `json:"best_ms"`
				VendorMs map[string]*float64 `json:"vendor_ms"`
				Missing  []string
			}
		}
	}
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Chunks) != 1 {
		t.Fatalf("%d chunks, want one", len(doc.Chunks))
	}
	ch := doc.Chunks[0]
	ops := map[string]bool{}
	for _, s := range ch.Shapes {
		if !s.Present {
			t.Errorf("shape %s has no cell", s.Shape)
		}
		ops[s.Operator] = true
	}
	if len(ch.Shapes) != 13 || len(ops) != 3 || !slices.Equal(ch.Vendors, []string{"openblas"}) {
		t.Fatalf("chunk of %d shapes, operators %v, vendors %v", len(ch.Shapes), ops, ch.Vendors)
	}
	for _, tot := range ch.Totals {
		if !tot.Complete || len(tot.Missing) > 0 || tot.BestMs == nil || tot.VendorMs["openblas"] == nil {
			t.Errorf("the chunk total is partial: %+v", tot)
		}
	}
	code, md, _ := runCLI(t, "report", "--db", db, "--workload", "strata")
	if code != 0 || strings.Count(md, "## The whole chunk") != 1 || strings.Contains(md[:strings.Index(md, "\n## cpu")], "partial sum") {
		t.Errorf("the Markdown's whole chunk:\n%s", md)
	}
}
