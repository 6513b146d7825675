package report

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/perf/benchfmt"

	"github.com/tilefit/tilefit/result"
)

func TestBenchfmtGoldenAndParse(t *testing.T) {
	in := fixtureInput(t)
	var b bytes.Buffer
	if err := Benchfmt(&b, in); err != nil {
		t.Fatal(err)
	}
	golden(t, "report.benchfmt.golden", b.Bytes())

	// benchfmt reads back one result per stored sample of every OK
	// candidate, with the cell and tile as name keys.
	want := 0
	for _, sec := range build(in).Provenances {
		for _, c := range sec.Cells {
			for _, cand := range c.Candidates {
				if cand.Status == result.OK {
					want += cand.Samples
				}
			}
		}
	}
	r := benchfmt.NewReader(bytes.NewReader(b.Bytes()), "fixture")
	got := 0
	keys := map[string]bool{}
	for r.Scan() {
		switch rec := r.Result().(type) {
		case *benchfmt.SyntaxError:
			t.Fatalf("benchfmt: %v", rec)
		case *benchfmt.Result:
			got++
			base, parts := rec.Name.Parts()
			if string(base) != BenchName || len(parts) != 6 {
				t.Fatalf("name %s: base %s, %d parts", rec.Name, base, len(parts))
			}
			for i, k := range []string{"shape", "n", "k", "m", "op", "tile"} {
				kv := strings.TrimPrefix(string(parts[i]), "/")
				if !strings.HasPrefix(kv, k+"=") {
					t.Errorf("name %s: part %d is %q, want key %s", rec.Name, i, kv, k)
				}
				keys[kv] = true
			}
			if v, ok := rec.Value("sec/op"); !ok || v <= 0 {
				t.Errorf("%s: sec/op %v", rec.Name, v)
			}
			if rec.GetConfig("backend") == "" || rec.GetConfig("operator") != "gemm_f16" {
				t.Errorf("%s: config %v", rec.Name, rec.Config)
			}
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	if got != want || got == 0 {
		t.Errorf("%d results, want %d (one per sample)", got, want)
	}
	for _, k := range []string{"shape=Walbe", "m=1983", "tile=64_64_2~aa", "tile=openblas", "tile=cublas", "op=gemm_f16"} {
		if !keys[k] {
			t.Errorf("no result with %s", k)
		}
	}
	for _, v := range []struct{ in, out string }{{"gemm_wgmma/128_256_2", "gemm_wgmma:128_256_2"}, {"a b=c", "a_b_c"}, {"x-8", "x_8"}, {"hc-down", "hc-down"}, {"", "_"}} {
		if got := benchValue(v.in); got != v.out {
			t.Errorf("benchValue(%q) = %q, want %q", v.in, got, v.out)
		}
	}
}

// TestBenchstatComparesTwoRuns runs benchstat (golang.org/x/perf/cmd/benchstat,
// the version go.mod pins as a tool) on the benchfmt output of two runs — the
// fixture, and the fixture with one tile 10% faster in every sample — and
// checks that it prints the comparison.
func TestBenchstatComparesTwoRuns(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("no go command to run benchstat with: %v", err)
	}
	old := fixtureInput(t)
	faster := fixtureInput(t)
	for i := range faster.Cells {
		for j := range faster.Cells[i].Candidates {
			cand := &faster.Cells[i].Candidates[j]
			if cand.Tile == "64_128_2" {
				s := append([]float64(nil), cand.Samples...)
				for k := range s {
					s[k] *= 0.9
				}
				cand.Samples = s
			}
		}
	}
	dir := t.TempDir()
	for name, in := range map[string]Input{"old.txt": old, "new.txt": faster} {
		var b bytes.Buffer
		if err := Benchfmt(&b, in); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(goCmd, "tool", "benchstat", filepath.Join(dir, "old.txt"), filepath.Join(dir, "new.txt"))
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go tool benchstat: %v\n%s", err, out)
	}
	text := string(out)
	t.Logf("benchstat:\n%s", text)
	// A table per unit, columns per file, rows per cell and tile.
	for _, want := range []string{"old.txt", "new.txt", "sec/op", "GFLOP/s", "backend: cpu", "backend: cuda",
		"Tilefit/shape=Wout/n=2560/k=6144/m=1983/op=gemm_f16/tile=64_128_2"} {
		if !strings.Contains(text, want) {
			t.Errorf("benchstat output lacks %q", want)
		}
	}
	// The faster tile: -10.00% with p=0.002 (6 samples each, every one
	// faster); an unchanged tile: ~.
	var faster10, unchanged bool
	for _, line := range strings.Split(text, "\n") {
		if strings.Contains(line, "tile=64_128_2") && strings.Contains(line, "-10.00%") && strings.Contains(line, "p=0.002") {
			faster10 = true
		}
		if strings.Contains(line, "tile=32_64_2") && strings.Contains(line, " ~ ") {
			unchanged = true
		}
	}
	if !faster10 || !unchanged {
		t.Errorf("benchstat does not show the 10%% faster tile (%v) and the unchanged one (%v)", faster10, unchanged)
	}
}

// TestBenchfmtCleanNumbers: a sample of 4.078 µs prints as 4078 ns/op, not
// the binary product 4078.0000000000005 (issue 19).
func TestBenchfmtCleanNumbers(t *testing.T) {
	c := ok("t", 4.078)
	c.Samples = []float64{4.078, 0.1, 1234.5678}
	in := Input{Cells: []result.CellResult{row("s", 8, time.Unix(0, 0).UTC(), c)}}
	var b bytes.Buffer
	if err := Benchfmt(&b, in); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{" 4078 ns/op", " 100 ns/op", " 1.2345678e+06 ns/op"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("benchfmt lacks %q:\n%s", want, b.String())
		}
	}
	if strings.Contains(b.String(), "00000000") {
		t.Errorf("benchfmt prints floating-point noise:\n%s", b.String())
	}
}
