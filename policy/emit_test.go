package policy

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/tilefit/tilefit/kernel"
	"github.com/tilefit/tilefit/result"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// golden compares got with testdata/name, rewriting it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test -update rewrites it):\n%s", name, diffLines(string(want), string(got)))
	}
}

// diffLines shows the first differing lines.
func diffLines(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < max(len(w), len(g)); i++ {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			return fmt.Sprintf("line %d:\n- %s\n+ %s", i+1, a, b)
		}
	}
	return "(equal lines, different bytes)"
}

// fixturePolicy selects a policy from a small fixture sweep: a threshold
// kept by the baseline, a midpoint between two departures, a gain inside
// the noise, a winner's curse, a vendor beside.
func fixturePolicy(t *testing.T) Policy {
	t.Helper()
	var cells []result.CellResult
	cf := &confirmer{byCell: map[string]conf{}}
	for _, m := range []int{256, 1024, 1983} {
		u := float64(m) / 10
		if m < 1983 {
			cells = append(cells, sweepCell("Wout", 2560, 6144, m, 48, fc{tile: ref, us: u}, fc{tile: "128_64_2", us: u * 1.1}, fc{tile: "openblas", us: u * 0.9, vendor: true}))
		} else {
			cells = append(cells, sweepCell("Wout", 2560, 6144, m, 48, fc{tile: ref, us: u}, fc{tile: "128_64_2", us: u * 0.8}, fc{tile: "openblas", us: u * 0.9, vendor: true}))
			cf.byCell[fmt.Sprintf("Wout/%d/%s/128_64_2", m, ref)] = conf{us: u, ratio: 0.82}
		}
		win, lose := "16_64_1", "32_64_1"
		if m >= 1024 {
			win, lose = lose, win
		}
		cells = append(cells, sweepCell("Walbe", 48, 2560, m, 72, fc{tile: ref, us: u}, fc{tile: win, us: u * 0.7}, fc{tile: lose, us: u * 0.9}))
		cf.byCell[fmt.Sprintf("Walbe/%d/%s/%s", m, ref, win)] = conf{us: u, ratio: 0.75}
		cells = append(cells, sweepCell("Wsg", 1, 2560, m, 48, fc{tile: ref, us: u / 4}, fc{tile: "16_32_1", us: u / 4 * 0.97}))
		r := 0.996
		if m == 1983 {
			r = 1.03
		}
		cf.byCell[fmt.Sprintf("Wsg/%d/%s/16_32_1", m, ref)] = conf{us: u / 4, ratio: r}
	}
	p, err := Select(context.Background(), cells, SelectOptions{Reference: ref, RequireBitwise: true, Confirm: cf.confirm, Workload: "fixture"})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestMarkdownGolden(t *testing.T) {
	p := fixturePolicy(t)
	var b bytes.Buffer
	if err := Markdown(&b, p); err != nil {
		t.Fatal(err)
	}
	golden(t, "decisions.md.golden", b.Bytes())
	var j bytes.Buffer
	if err := Write(&j, p); err != nil {
		t.Fatal(err)
	}
	golden(t, "fixture_policy.json.golden", j.Bytes())
}

func TestTotals(t *testing.T) {
	p := fixturePolicy(t)
	ts := Totals(p)
	if len(ts) != 4 || ts[3].M != 0 {
		t.Fatalf("totals %+v; want 3 M values and the sum", ts)
	}
	for _, c := range ts {
		if c.Err != nil || c.Cells != 3 && c.M != 0 {
			t.Errorf("M=%d: %+v", c.M, c)
		}
		if !(c.New < c.Old) || c.Total.Verdict != "faster" {
			t.Errorf("M=%d: old %.1f new %.1f verdict %s; want the policy faster", c.M, c.Old, c.New, c.Total.Verdict)
		}
	}
}

func emitAll(t *testing.T, p Policy) map[string][]byte {
	t.Helper()
	all := map[string][]byte{}
	for _, f := range []func(Policy) (map[string][]byte, error){EmitGo, EmitC, EmitCPP, EmitJSON} {
		files, err := f(p)
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range files {
			all[k] = v
		}
	}
	return all
}

func TestEmitGolden(t *testing.T) {
	p := fixturePolicy(t)
	files := emitAll(t, p)
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	slices.Sort(names)
	want := []string{"parity.go", "select.go", "select_test.go", "tilefit_select.h", "tilefit_select.hpp", "tilefit_select_parity.h", "tileselect.json", "tileselect_parity.json"}
	if !slices.Equal(names, want) {
		t.Fatalf("files %v; want %v", names, want)
	}
	for _, name := range names {
		golden(t, "emit_"+name+".golden", files[name])
	}
	// Deterministic: the same policy with its shapes in another order
	// gives the same bytes.
	q := p
	q.Shapes = slices.Clone(p.Shapes)
	slices.Reverse(q.Shapes)
	for name, data := range emitAll(t, q) {
		if !bytes.Equal(data, files[name]) {
			t.Errorf("%s depends on the order of the policy's shapes", name)
		}
	}
	// Without a default there is none to fall back to.
	q.Default = ""
	g, _ := EmitGo(q)
	c, _ := EmitC(q)
	if !bytes.Contains(g["select.go"], []byte("var Default = Tile{}")) || !bytes.Contains(c["tilefit_select.h"], []byte("tilefit_default(void)\n{\n\treturn NULL;")) {
		t.Error("no-default selectors name a default")
	}
}

// multiPolicy is a policy over two families of one operator with classes
// per shape (one shape moved to a split-K class), two shapes of one size,
// and a shape kept from a baseline (no dims).
func multiPolicy() Policy {
	prov := result.Provenance{Backend: "cuda", Device: "NVIDIA H200", Arch: "sm_90", Compiler: "nvrtc 13.0", Family: "gemm_f16,gemm_wgmma",
		SourceHash: strings.Repeat("cd", 32), Operator: "gemm_f16", Types: "X=f16,W=f16,Y=f32"}
	return Policy{Version: Version, Family: prov.Family, Backend: "cuda", Operator: "gemm_f16", Dims: []string{"N", "K"},
		Provenance: prov.Key(), Sweep: &prov, Workload: "strata", Swept: "2026-11-30T12:00:00Z", Baseline: "reference tile 64_64_2 everywhere",
		Default: "64_64_2",
		Shapes: []Shape{
			{Shape: "hc_read", N: 324, K: 10240, Calls: 96, Class: "gemm_f16/splitk1024", Rules: []Rule{{Tile: "gemm_wgmma/128_64.ks10", Below: 1024}, {Tile: "gemm_wgmma/128_128.ks10"}}},
			{Shape: "Wout", N: 2560, K: 6144, Calls: 48, Class: "gemm_f16", Rules: []Rule{{Tile: "64_64_2", Below: 512}, {Tile: "gemm_wgmma/128_256"}}},
			{Shape: "Wpv", N: 2560, K: 6144, Calls: 1, Class: "gemm_f16", Rules: []Rule{{Tile: "64_64_2"}}},
			{Shape: "kept", Class: "gemm_f16", Rules: []Rule{{Tile: "64_64_2"}}},
		},
		Tiles: []Tile{
			{Name: "64_64_2", Family: "gemm_f16", Class: "gemm_f16", Params: kernel.Params{"TM": 64, "TN": 64, "WARPS": 2}},
			{Name: "gemm_wgmma/128_128.ks10", Family: "gemm_wgmma", Class: "gemm_f16/splitk1024", Params: kernel.Params{"BM": 128, "BN": 128, "KSPLIT": 10}},
			{Name: "gemm_wgmma/128_256", Family: "gemm_wgmma", Class: "gemm_f16", Params: kernel.Params{"BM": 128, "BN": 256, "KSPLIT": 1}},
			{Name: "gemm_wgmma/128_64.ks10", Family: "gemm_wgmma", Class: "gemm_f16/splitk1024", Params: kernel.Params{"BM": 128, "BN": 64, "KSPLIT": 10}},
		},
		Invariance: &Invariance{BatchInvariant: true, Checked: []string{"Wout", "Wpv", "hc_read"}, Unchecked: []string{"kept"}},
		Cells: []Decision{
			{Shape: "hc_read", N: 324, K: 10240, M: 256, Calls: 96, Chosen: "gemm_wgmma/128_64.ks10"},
			{Shape: "hc_read", N: 324, K: 10240, M: 2048, Calls: 96, Chosen: "gemm_wgmma/128_128.ks10"},
			{Shape: "Wout", N: 2560, K: 6144, M: 256, Calls: 48, Chosen: "64_64_2"},
			{Shape: "Wout", N: 2560, K: 6144, M: 1983, Calls: 48, Chosen: "gemm_wgmma/128_256"},
			{Shape: "Wpv", N: 2560, K: 6144, M: 1983, Calls: 1, Chosen: "64_64_2"},
		},
	}
}

// hcPolicy is a policy of an operator with dimensions S and K (hc_up).
func hcPolicy() Policy {
	return Policy{Version: Version, Family: "hc_up_f16", Backend: "cpu", Operator: "hc_up_f16", Dims: []string{"S", "K"}, Baseline: "none",
		Shapes: []Shape{{Shape: "hc_up", Dims: kernel.Dims{"S": 2560, "K": 320}, Calls: 96, Class: "hc_up_f16", Rules: []Rule{{Tile: "32_128_4.bound1", Below: 100}, {Tile: "64_128_4.bound1"}}}},
		Tiles: []Tile{
			{Name: "32_128_4.bound1", Family: "hc_up_f16", Class: "hc_up_f16", Params: kernel.Params{"TM": 32, "TN": 128, "WARPS": 4, "BOUND": 1}},
			{Name: "64_128_4.bound1", Family: "hc_up_f16", Class: "hc_up_f16", Params: kernel.Params{"TM": 64, "TN": 128, "WARPS": 4, "BOUND": 1}},
		},
		Cells: []Decision{{Shape: "hc_up", M: 37, Calls: 96, Chosen: "32_128_4.bound1"}, {Shape: "hc_up", M: 130, Calls: 96, Chosen: "64_128_4.bound1"}},
	}
}

func TestEmitMulti(t *testing.T) {
	p := multiPolicy()
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	files := emitAll(t, p)
	golden(t, "emit_multi_select.go.golden", files["select.go"])
	golden(t, "emit_multi_tilefit_select.h.golden", files["tilefit_select.h"])
	hdr := strings.ReplaceAll(string(files["select.go"]), "\n// ", " ")
	for _, want := range []string{"families gemm_f16,gemm_wgmma (operator gemm_f16)", "Batch-invariant: every shape uses tiles of one numerics class at every M",
		"hc_read gemm_f16/splitk1024", "Wout gemm_f16", "Wout and Wpv have the same dimensions N 2560, K 6144; by dimensions the selector gives Wout's rules (the most calls per chunk",
		"BM     int", "KSPLIT int", "WARPS  int"} {
		if !strings.Contains(hdr, want) {
			t.Errorf("select.go lacks %q:\n%s", want, hdr)
		}
	}
	var rows []ParityRow
	for _, r := range Parity(p) {
		rows = append(rows, r)
	}
	if len(rows) != 5 || rows[0].Shape != "Wout" || !rows[0].ByDims || rows[2].Shape != "Wpv" || rows[2].ByDims || !slices.Equal(rows[2].Dims, []int{2560, 6144}) {
		t.Errorf("parity rows %+v", rows)
	}
	// Validate refuses a rule tile the tiles do not describe.
	q := multiPolicy()
	q.Tiles = q.Tiles[1:]
	if err := q.Validate(); err == nil || !strings.Contains(err.Error(), `tile "64_64_2" is not described`) {
		t.Errorf("undescribed tile: %v", err)
	}
}

func TestEmitFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	paths, err := EmitFiles(dir, fixturePolicy(t), []string{"c", "json"})
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 4 {
		t.Errorf("paths %v", paths)
	}
	if _, err := EmitFiles(dir, fixturePolicy(t), []string{"rust"}); err == nil || !strings.Contains(err.Error(), `unknown kind "rust"`) {
		t.Errorf("unknown kind: %v", err)
	}
}

// emittedPolicies are the policies whose emitted code the compile tests
// build and run: the fixture sweep's (one family, N and K), one over two
// families with classes, one of an operator with dimensions S and K.
func emittedPolicies(t *testing.T) map[string]Policy {
	return map[string]Policy{"fixture": fixturePolicy(t), "multi": multiPolicy(), "hc": hcPolicy()}
}

// TestEmittedGoCompiles vets and tests the generated package in a module of
// its own, then runs a program that imports it and looks up a known shape
// by name and by (N, K), an unknown shape and size, the default and the
// provenance (skipped without the go tool).
func TestEmittedGoCompiles(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go not on PATH")
	}
	if testing.Short() {
		t.Skip("-short")
	}
	for name, p := range emittedPolicies(t) {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			pkg := filepath.Join(dir, "tileselect")
			if _, err := EmitFiles(pkg, p, EmitKinds); err != nil {
				t.Fatal(err)
			}
			write(t, filepath.Join(dir, "go.mod"), "module example.com/engine\n\ngo 1.22\n")
			write(t, filepath.Join(dir, "main.go"), goProgram(p))
			run := func(args ...string) string {
				cmd := exec.Command(goTool, args...)
				cmd.Dir = dir
				cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off", "CGO_ENABLED=0")
				out, err := cmd.CombinedOutput()
				if err != nil {
					t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
				}
				return string(out)
			}
			run("vet", "./...")
			run("test", "-count=1", "./tileselect")
			if got, want := run("run", "."), expectedLookups(p); got != want {
				t.Errorf("go run printed\n%s\nwant\n%s", got, want)
			}
		})
	}
}

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// lookup is one lookup the compile tests make: by name or by dims.
type lookup struct {
	shape string
	dims  []int
	m     int
}

// lookups are a known shape by name and by its dims at a small and a
// large M, an unknown shape and an unknown size.
func lookups(p Policy) []lookup {
	dims := p.Dims
	if len(dims) == 0 {
		dims = []string{"N", "K"}
	}
	s := sortedShapes(p)[0]
	d, _ := s.DimsOf(dims)
	unknown := make([]int, len(dims))
	for i := range unknown {
		unknown[i] = 7
	}
	return []lookup{{shape: s.Shape, m: 1}, {shape: s.Shape, m: 4096}, {dims: d, m: 1}, {dims: d, m: 4096}, {shape: "no_such_shape", m: 1}, {dims: unknown, m: 1}}
}

// expectedLookups is what the programs print for lookups(p): per lookup
// "name family class TM=… ok" or "none", then the default and the
// provenance checks, computed from the policy in Go.
func expectedLookups(p Policy) string {
	m := newEmitModel(p)
	var b strings.Builder
	show := func(name string, ok bool) {
		if !ok {
			b.WriteString("none\n")
			return
		}
		t := m.tiles[m.index[name]]
		fmt.Fprintf(&b, "%s %s %s", t.Name, t.Family, t.Class)
		for _, k := range m.params {
			fmt.Fprintf(&b, " %s=%d", k, t.Params[k])
		}
		b.WriteString("\n")
	}
	for _, l := range lookups(p) {
		shape := l.shape
		if l.dims != nil {
			shape = m.owner[dimsKey(l.dims)]
		}
		tile, ok := "", false
		if shape != "" && p.Shape(shape) != nil {
			tile, ok = p.Lookup(shape, l.m)
		}
		show(tile, ok)
	}
	show(p.Default, p.Default != "")
	b.WriteString("provenance ok, other refused\n")
	return b.String()
}

func goProgram(p Policy) string {
	m := newEmitModel(p)
	var b strings.Builder
	b.WriteString("package main\n\nimport (\n\t\"fmt\"\n\n\t\"example.com/engine/tileselect\"\n)\n\n")
	b.WriteString("func show(t tileselect.Tile, ok bool) {\n\tif !ok {\n\t\tfmt.Println(\"none\")\n\t\treturn\n\t}\n\tfmt.Print(t.Name, \" \", t.Family, \" \", t.Class)\n")
	for _, k := range m.params {
		fmt.Fprintf(&b, "\tfmt.Printf(\" %s=%%d\", t.Params.%s)\n", k, goField(k))
	}
	b.WriteString("\tfmt.Println()\n}\n\nfunc main() {\n")
	for _, l := range lookups(p) {
		if l.dims != nil {
			fmt.Fprintf(&b, "\tshow(tileselect.SelectDims(%s, %d))\n", joinInts(l.dims), l.m)
		} else {
			fmt.Fprintf(&b, "\tshow(tileselect.Select(%q, %d))\n", l.shape, l.m)
		}
	}
	b.WriteString("\tshow(tileselect.Default, tileselect.Default != tileselect.Tile{})\n")
	b.WriteString("\tif tileselect.CheckProvenance(tileselect.Provenance) == nil && tileselect.CheckProvenance(\"0123456789abcdef\") != nil {\n\t\tfmt.Println(\"provenance ok, other refused\")\n\t}\n}\n")
	return b.String()
}

// cProgram is the C (or, with cpp, C++) program that checks the selector
// against the parity table (by name, and by dims where a row is reached by
// them), then prints the lookups of lookups(p).
func cProgram(p Policy, cpp bool) string {
	m := newEmitModel(p)
	var b strings.Builder
	b.WriteString("#include <stdio.h>\n#include <string.h>\n")
	if cpp {
		b.WriteString("#include \"tilefit_select.hpp\"\n")
	} else {
		b.WriteString("#include \"tilefit_select.h\"\n")
	}
	b.WriteString("#include \"tilefit_select_parity.h\"\n\n")
	if cpp {
		b.WriteString("namespace sel = tilefit::select;\n")
		if len(p.Shapes) > 0 {
			s := sortedShapes(p)[0]
			t, _ := p.Lookup(s.Shape, 1)
			fmt.Fprintf(&b, "static_assert(sel::select(%q, 1)->name == %q, \"select is constexpr\");\n", s.Shape, t)
		}
		b.WriteString("static_assert(!sel::select(\"no_such_shape\", 1).has_value(), \"unknown shape\");\n")
		b.WriteString("static_assert(sel::check_provenance(sel::provenance), \"provenance\");\n\n")
		b.WriteString("static void show(const std::optional<sel::Tile> &t) {\n\tif (!t) {\n\t\tprintf(\"none\\n\");\n\t\treturn;\n\t}\n")
		b.WriteString("\tprintf(\"%.*s %.*s %.*s\", (int)t->name.size(), t->name.data(), (int)t->family.size(), t->family.data(), (int)t->numerics.size(), t->numerics.data());\n")
	} else {
		b.WriteString("static void show(const struct tilefit_tile *t) {\n\tif (t == NULL) {\n\t\tprintf(\"none\\n\");\n\t\treturn;\n\t}\n")
		b.WriteString("\tprintf(\"%s %s %s\", t->name, t->family, t->numerics);\n")
	}
	for _, k := range m.params {
		fmt.Fprintf(&b, "\tprintf(\" %s=%%d\", t->params.%s);\n", k, k)
	}
	b.WriteString("\tprintf(\"\\n\");\n}\n\nint main(void) {\n\tint bad = 0;\n\tfor (int i = 0; i < TILEFIT_PARITY_LEN; i++) {\n\t\tconst struct tilefit_parity_row *r = &tilefit_parity[i];\n")
	dimArgs := make([]string, len(m.dims))
	for i := range dimArgs {
		dimArgs[i] = fmt.Sprintf("r->dims[%d]", i)
	}
	if cpp {
		b.WriteString("\t\tauto got = sel::select(r->shape, r->m);\n\t\tif (!got || got->name != r->tile)\n\t\t\tbad++;\n")
		fmt.Fprintf(&b, "\t\tif (r->by_dims) {\n\t\t\tauto byDims = sel::select_dims(%s, r->m);\n\t\t\tif (!byDims || !got || byDims->name != got->name)\n\t\t\t\tbad++;\n\t\t}\n", strings.Join(dimArgs, ", "))
	} else {
		b.WriteString("\t\tconst struct tilefit_tile *got = tilefit_select(r->shape, r->m);\n\t\tif (got == NULL || strcmp(got->name, r->tile) != 0)\n\t\t\tbad++;\n")
		fmt.Fprintf(&b, "\t\tif (r->by_dims && tilefit_select_dims(%s, r->m) != got)\n\t\t\tbad++;\n", strings.Join(dimArgs, ", "))
	}
	b.WriteString("\t}\n\tif (bad) {\n\t\tprintf(\"%d of %d parity rows bad\\n\", bad, TILEFIT_PARITY_LEN);\n\t\treturn 1;\n\t}\n")
	prefix, dimsFn := "tilefit_select(", "tilefit_select_dims("
	if cpp {
		prefix, dimsFn = "sel::select(", "sel::select_dims("
	}
	for _, l := range lookups(p) {
		if l.dims != nil {
			fmt.Fprintf(&b, "\tshow(%s%s, %d));\n", dimsFn, joinInts(l.dims), l.m)
		} else {
			fmt.Fprintf(&b, "\tshow(%s\"%s\", %d));\n", prefix, l.shape, l.m)
		}
	}
	if cpp {
		b.WriteString("\tshow(sel::default_tile());\n\tif (sel::check_provenance(sel::provenance) && !sel::check_provenance(\"0123456789abcdef\"))\n")
	} else {
		b.WriteString("\tshow(tilefit_default());\n\tif (tilefit_check_provenance(TILEFIT_PROVENANCE) && !tilefit_check_provenance(\"0123456789abcdef\") && !tilefit_check_provenance(NULL))\n")
	}
	b.WriteString("\t\tprintf(\"provenance ok, other refused\\n\");\n\treturn 0;\n}\n")
	return b.String()
}

// TestEmittedCCompiles compiles the generated C headers (each on its own,
// warnings as errors) and a program that checks tilefit_select and
// tilefit_select_dims against the parity table and prints the lookups of
// an unknown shape and size, the default and the provenance check; runs it
// (skipped without cc).
func TestEmittedCCompiles(t *testing.T) {
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("cc not on PATH")
	}
	for name, p := range emittedPolicies(t) {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if _, err := EmitFiles(dir, p, []string{"c"}); err != nil {
				t.Fatal(err)
			}
			for _, h := range []string{"tilefit_select.h", "tilefit_select_parity.h"} {
				cmd := exec.Command(cc, "-std=c99", "-Wall", "-Wextra", "-Werror", "-fsyntax-only", "-x", "c", filepath.Join(dir, h))
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("cc -fsyntax-only %s: %v\n%s", h, err, out)
				}
			}
			src := filepath.Join(dir, "main.c")
			write(t, src, cProgram(p, false))
			bin := filepath.Join(dir, "parity")
			if out, err := exec.Command(cc, "-std=c99", "-Wall", "-Wextra", "-Werror", "-o", bin, src).CombinedOutput(); err != nil {
				t.Fatalf("cc: %v\n%s\n%s", err, out, cProgram(p, false))
			}
			out, err := exec.Command(bin).CombinedOutput()
			if err != nil {
				t.Fatalf("parity program: %v\n%s", err, out)
			}
			if want := expectedLookups(p); string(out) != want {
				t.Errorf("C program printed\n%s\nwant\n%s", out, want)
			}
		})
	}
}

// TestEmittedCPPCompiles does the same with the C++17 header, whose
// lookups are also checked at compile time (static_assert).
func TestEmittedCPPCompiles(t *testing.T) {
	cxx, err := exec.LookPath("c++")
	if err != nil {
		t.Skip("c++ not on PATH")
	}
	for name, p := range emittedPolicies(t) {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if _, err := EmitFiles(dir, p, []string{"c", "cpp"}); err != nil {
				t.Fatal(err)
			}
			src := filepath.Join(dir, "main.cpp")
			write(t, src, cProgram(p, true))
			bin := filepath.Join(dir, "parity")
			if out, err := exec.Command(cxx, "-std=c++17", "-Wall", "-Wextra", "-Werror", "-o", bin, src).CombinedOutput(); err != nil {
				t.Fatalf("c++: %v\n%s\n%s", err, out, cProgram(p, true))
			}
			out, err := exec.Command(bin).CombinedOutput()
			if err != nil {
				t.Fatalf("parity program: %v\n%s", err, out)
			}
			if want := expectedLookups(p); string(out) != want {
				t.Errorf("C++ program printed\n%s\nwant\n%s", out, want)
			}
		})
	}
}

// TestSelectorSchema validates every emitted tileselect.json against
// docs/selector.schema.json, and checks the schema refuses broken ones.
func TestSelectorSchema(t *testing.T) {
	c := jsonschema.NewCompiler()
	sch, err := c.Compile(filepath.Join("..", "docs", "selector.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	for name, p := range emittedPolicies(t) {
		files, err := EmitJSON(p)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(files["tileselect.json"]))
		if err != nil {
			t.Fatal(err)
		}
		if err := sch.Validate(doc); err != nil {
			t.Errorf("%s: tileselect.json does not follow the schema: %v", name, err)
		}
	}
	files, _ := EmitJSON(multiPolicy())
	for _, bad := range []struct{ from, to string }{
		{`"tile": "64_64_2",`, `"tile": 5,`},
		{`"below": 512`, `"below": "512"`},
		{`"provenance": "`, `"provenance": "x`},
		{`"batch_invariant": true,`, ``},
		{`"KSPLIT": 10`, `"KSPLIT": 1.5`},
	} {
		broken := strings.Replace(string(files["tileselect.json"]), bad.from, bad.to, 1)
		if broken == string(files["tileselect.json"]) {
			t.Fatalf("%q not in the document", bad.from)
		}
		doc, err := jsonschema.UnmarshalJSON(strings.NewReader(broken))
		if err != nil {
			continue // not JSON any more: refused anyway
		}
		if err := sch.Validate(doc); err == nil {
			t.Errorf("schema accepts %q → %q", bad.from, bad.to)
		}
	}
}

// TestEmittedHeadersStateTheirStandard: the C header says it needs C99 and
// the C++ header C++17, and an older standard stops at an #error that says
// so instead of a page of syntax errors (issue 19: unstated).
func TestEmittedHeadersStateTheirStandard(t *testing.T) {
	var p Policy
	for _, q := range emittedPolicies(t) {
		p = q
		break
	}
	dir := t.TempDir()
	if _, err := EmitFiles(dir, p, []string{"c", "cpp"}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		file, says, compiler, old, lang string
	}{
		{"tilefit_select.h", "Needs C99 or later", "cc", "-std=c89", "c"},
		{"tilefit_select.hpp", "Needs C++17 or later", "c++", "-std=c++14", "c++"},
	} {
		text, err := os.ReadFile(filepath.Join(dir, tc.file))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(text), tc.says) {
			t.Errorf("%s does not say %q", tc.file, tc.says)
		}
		bin, err := exec.LookPath(tc.compiler)
		if err != nil {
			t.Logf("%s not on PATH: the %s check is not compiled", tc.compiler, tc.old)
			continue
		}
		out, err := exec.Command(bin, tc.old, "-fsyntax-only", "-x", tc.lang, filepath.Join(dir, tc.file)).CombinedOutput()
		if err == nil || !strings.Contains(string(out), tc.file+" needs") {
			t.Errorf("%s %s %s: %v, want the header's #error:\n%s", tc.compiler, tc.old, tc.file, err, out)
		}
	}
}

// TestEmitNamesAreWhatEmitWrites: select checks the files --emit will
// write against its inputs before writing any (EmitNames); the list must
// be what EmitFiles writes (moved from internal/cli).
func TestEmitNamesAreWhatEmitWrites(t *testing.T) {
	p := fixturePolicy(t)
	for _, k := range EmitKinds {
		dir := t.TempDir()
		paths, err := EmitFiles(dir, p, []string{k})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, p := range paths {
			got = append(got, filepath.Base(p))
		}
		want := slices.Clone(EmitNames(k))
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("--emit %s writes %v; EmitNames says %v", k, got, want)
		}
	}
	if EmitNames("rust") != nil {
		t.Errorf("an unknown kind has names")
	}
}
