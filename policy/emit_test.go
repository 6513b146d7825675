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
	for _, f := range []func(Policy) (map[string][]byte, error){EmitGo, EmitC, EmitJSON} {
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
	want := []string{"parity.go", "select.go", "select_test.go", "tilefit_select.h", "tilefit_select_parity.h", "tileselect.json", "tileselect_parity.json"}
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
	// Without a default the selector says so.
	q.Default = ""
	g, _ := EmitGo(q)
	c, _ := EmitC(q)
	if !bytes.Contains(g["select.go"], []byte(`return "", false`)) || !bytes.Contains(c["tilefit_select.h"], []byte("return NULL;")) {
		t.Error("no-default selectors do not fail for unknown shapes")
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

// TestEmittedGoCompiles vets and tests the generated package in a module of
// its own (skipped without the go tool).
func TestEmittedGoCompiles(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go not on PATH")
	}
	if testing.Short() {
		t.Skip("-short")
	}
	dir := t.TempDir()
	if _, err := EmitFiles(dir, fixturePolicy(t), EmitKinds); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/tileselect\n\ngo 1.22\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"vet", "./..."}, {"test", "-count=1", "./..."}} {
		cmd := exec.Command(goTool, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off", "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// TestEmittedCCompiles compiles the generated headers with a small program
// that checks tilefit_select against the parity table, and runs it
// (skipped without cc).
func TestEmittedCCompiles(t *testing.T) {
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("cc not on PATH")
	}
	dir := t.TempDir()
	p := fixturePolicy(t)
	if _, err := EmitFiles(dir, p, []string{"c"}); err != nil {
		t.Fatal(err)
	}
	main := `#include <stdio.h>
#include "tilefit_select.h"
#include "tilefit_select_parity.h"
int main(void) {
	int bad = 0;
	for (int i = 0; i < TILEFIT_PARITY_LEN; i++) {
		const char *got = tilefit_select(tilefit_parity[i].shape, tilefit_parity[i].m);
		if (got == NULL || strcmp(got, tilefit_parity[i].tile) != 0) {
			printf("%s %d: got %s want %s\n", tilefit_parity[i].shape, tilefit_parity[i].m, got ? got : "NULL", tilefit_parity[i].tile);
			bad++;
		}
	}
	if (strcmp(tilefit_select("unknown", 5), "64_128_2") != 0) bad++;
	printf("%d rows, %d bad\n", TILEFIT_PARITY_LEN, bad);
	return bad != 0;
}
`
	src := filepath.Join(dir, "main.c")
	if err := os.WriteFile(src, []byte(main), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{"tilefit_select.h", "tilefit_select_parity.h"} {
		cmd := exec.Command(cc, "-std=c99", "-Wall", "-Wextra", "-Werror", "-fsyntax-only", "-x", "c", filepath.Join(dir, h))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("cc -fsyntax-only %s: %v\n%s", h, err, out)
		}
	}
	bin := filepath.Join(dir, "parity")
	if out, err := exec.Command(cc, "-std=c99", "-Wall", "-Wextra", "-Werror", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("cc: %v\n%s", err, out)
	}
	out, err := exec.Command(bin).CombinedOutput()
	if err != nil {
		t.Fatalf("parity program: %v\n%s", err, out)
	}
	if want := fmt.Sprintf("%d rows, 0 bad", len(Parity(p))); !strings.Contains(string(out), want) {
		t.Errorf("parity program said %q; want %q", out, want)
	}
}
