package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/tilefit/tilefit/policy"
)

// An outcomeJSON is a stats.Outcome as the report's JSON writes it.
type outcomeJSON struct {
	Ratio, Lo, Hi float64
	Verdict       string
}

// reportJSON is what TestViewsAgree reads of the report's JSON.
type reportJSON struct {
	Provenances []struct {
		Key    string
		Totals []totalJSON
		Cells  []struct {
			Shape      string
			M          int
			Candidates []struct {
				Tile        string
				VsReference *outcomeJSON `json:"vs_reference"`
			}
		}
	}
	Chunks []struct{ Totals []totalJSON }
}

type totalJSON struct {
	BestVsReference     *outcomeJSON            `json:"best_vs_reference"`
	OneClassVsReference *outcomeJSON            `json:"one_class_vs_reference"`
	VendorVsBest        map[string]*outcomeJSON `json:"vendor_vs_best"`
	VendorVsOneClass    map[string]*outcomeJSON `json:"vendor_vs_one_class"`
}

func (o *outcomeJSON) text() string {
	return fmt.Sprintf("%.3f [%.3f, %.3f] %s", o.Ratio, o.Lo, o.Hi, o.Verdict)
}

var (
	// intervalText is a comparison as every table prints it.
	intervalText = regexp.MustCompile(`[0-9]+\.[0-9]{3} \[[0-9]+\.[0-9]{3}, [0-9]+\.[0-9]{3}\] (faster|slower|tie|undecided)`)
	// shortText is the 2nd/3rd columns' "(0.912 faster)".
	shortText = regexp.MustCompile(`\(([0-9]+\.[0-9]{3}) (faster|slower|tie|undecided)\)`)
)

// comparisonsOf returns what the report's JSON says of every comparison:
// the texts of its outcomes (cells and totals) and the short "ratio
// verdict" texts of the cells' candidates.
func comparisonsOf(t *testing.T, data []byte) (full, short map[string]bool, doc reportJSON) {
	t.Helper()
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	full, short = map[string]bool{}, map[string]bool{}
	add := func(o *outcomeJSON) {
		if o != nil && o.Ratio != 0 {
			full[o.text()] = true
		}
	}
	totals := func(ts []totalJSON) {
		for _, tot := range ts {
			add(tot.BestVsReference)
			add(tot.OneClassVsReference)
			for _, o := range tot.VendorVsBest {
				add(o)
			}
			for _, o := range tot.VendorVsOneClass {
				add(o)
			}
		}
	}
	for _, sec := range doc.Provenances {
		totals(sec.Totals)
		for _, c := range sec.Cells {
			for _, cand := range c.Candidates {
				if o := cand.VsReference; o != nil {
					add(o)
					short[fmt.Sprintf("(%.3f %s)", o.Ratio, o.Verdict)] = true
				}
			}
		}
	}
	for _, ch := range doc.Chunks {
		totals(ch.Totals)
	}
	return full, short, doc
}

// checkPrinted checks that every comparison a view prints is one the JSON
// holds, and returns the printed full texts sorted (to compare views).
func checkPrinted(t *testing.T, view, text string, full, short map[string]bool) []string {
	t.Helper()
	got := intervalText.FindAllString(text, -1)
	if len(got) == 0 {
		t.Errorf("%s prints no comparison with an interval", view)
	}
	for _, s := range got {
		if !full[s] {
			t.Errorf("%s prints %q, which the JSON report does not hold", view, s)
		}
	}
	for _, s := range shortText.FindAllString(text, -1) {
		if !short[s] {
			t.Errorf("%s prints %q, which no candidate of the JSON report has", view, s)
		}
	}
	slices.Sort(got)
	return got
}

// TestViewsAgree is the golden agreement of the views on the recorded
// H200 database (docs/results/h200-final): the report's Markdown and HTML
// print only the comparisons its JSON holds (ratio, interval and verdict),
// the same ones, and tilefit select's decisions from the sweep's samples
// are the report's comparisons of the same tiles; and on a fresh CPU sweep
// the sweep's own report prints what tilefit report prints of its database.
func TestViewsAgree(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "docs", "results", "h200-final", "final.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	db := filepath.Join(dir, "final.sqlite")
	if err := os.WriteFile(db, src, 0o644); err != nil {
		t.Fatal(err)
	}
	wl := filepath.Join("..", "..", "docs", "results", "h200-final", "h200-final-gemm13.yaml")
	if _, err := os.Stat(wl); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) string {
		t.Helper()
		code, out, stderr := runCLI(t, args...)
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s", strings.Join(args, " "), code, stderr)
		}
		return out
	}
	full, short, doc := comparisonsOf(t, []byte(run("report", "--db", db, "--workload", wl, "--format", "json")))
	md := checkPrinted(t, "the Markdown report", run("report", "--db", db, "--workload", wl), full, short)
	page := checkPrinted(t, "the HTML report", run("report", "--db", db, "--workload", wl, "--format", "html"), full, short)
	if !slices.Equal(md, page) {
		t.Errorf("the Markdown prints %d comparisons and the HTML %d, not the same ones", len(md), len(page))
	}

	// select from the sweep's own samples (adaptive rule replayed, as the
	// report's cells): each decision's comparison is the report's.
	policyFile := filepath.Join(dir, "policy.json")
	selMD := run("select", "--db", db, "--workload", wl, "--confirm=false", "--policy-out", policyFile, "--backend", "cuda")
	p, err := policy.Load(policyFile)
	if err != nil {
		t.Fatal(err)
	}
	type key struct {
		shape string
		m     int
		tile  string
	}
	cells := map[key]*outcomeJSON{}
	for _, sec := range doc.Provenances {
		for _, c := range sec.Cells {
			for _, cand := range c.Candidates {
				cells[key{c.Shape, c.M, cand.Tile}] = cand.VsReference
			}
		}
	}
	compared := 0
	for _, d := range p.Cells {
		if d.Verdict == "" || d.Best == "" || d.Best == d.Baseline {
			continue
		}
		o := cells[key{d.Shape, d.M, d.Best}]
		if o == nil {
			t.Errorf("%s M=%d: select compared %s, the report did not", d.Shape, d.M, d.Best)
			continue
		}
		compared++
		if o.Ratio != d.Ratio || o.Lo != d.Lo || o.Hi != d.Hi || o.Verdict != string(d.Verdict) {
			t.Errorf("%s M=%d %s: select %.4f [%.4f, %.4f] %s, the report %s", d.Shape, d.M, d.Best, d.Ratio, d.Lo, d.Hi, d.Verdict, o.text())
		}
		// The decision table prints the same numbers.
		if row := fmt.Sprintf("| %.3f | [%.3f, %.3f] |", d.Ratio, d.Lo, d.Hi); !strings.Contains(selMD, row) {
			t.Errorf("%s M=%d: select's table lacks %q", d.Shape, d.M, row)
		}
	}
	if compared < 20 {
		t.Errorf("only %d of select's decisions compared with the report", compared)
	}

	// A sweep's own report prints what tilefit report prints of its
	// database.
	needCC(t)
	sdb := filepath.Join(dir, "smoke.db")
	sweep := run("sweep", "--db", sdb, "--tiles", "16_32_1,32_64_2", "--m", "1,37", "--rounds", "6", "--isolate=false", "--aa=false")
	fullS, shortS, _ := comparisonsOf(t, []byte(run("report", "--db", sdb, "--workload", "smoke", "--format", "json")))
	fromSweep := checkPrinted(t, "the sweep's report", sweep, fullS, shortS)
	fromReport := checkPrinted(t, "tilefit report", run("report", "--db", sdb, "--workload", "smoke"), fullS, shortS)
	if !slices.Equal(fromSweep, fromReport) {
		t.Errorf("the sweep printed %q, tilefit report %q", fromSweep, fromReport)
	}
}
