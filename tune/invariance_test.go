package tune

import (
	"bytes"
	"context"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tilefit/tilefit/kernel"
	"github.com/tilefit/tilefit/result"
	"github.com/tilefit/tilefit/store"
	"github.com/tilefit/tilefit/workload"
)

// invConfig sweeps the fake family over one shape with K 33 (long enough
// that summing k backwards changes most rows) at ms.
func invConfig(ms ...int) Config {
	cfg := testConfig()
	cfg.Workload = workload.Workload{Name: "inv", Shapes: []workload.Shape{{Name: "a", N: 5, K: 33, Calls: 1}}, Ms: ms}
	cfg.Tiles = []string{"4", "16"}
	cfg.Baselines = []*kernel.Baseline{fakeBaseline()}
	return cfg
}

func sweepInto(t *testing.T, path string, cfg Config, fb *fakeBackend) Summary {
	t.Helper()
	// A fresh store handle per sweep: what a resumed sweep in a later
	// process sees.
	st, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sum, err := Sweep(context.Background(), cfg, NewLocal(func(context.Context) (backendT, error) { return fb, nil }, nil), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

func storedCells(t *testing.T, path string) []result.CellResult {
	t.Helper()
	st, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cells, err := st.Cells(context.Background(), store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	return cells
}

// TestSweepInvariantTilesKeepRows: every verified candidate of every cell
// carries its row hashes and the cell its input rows; the inputs of the
// smaller M are a prefix of the larger M's; nothing fails.
func TestSweepInvariantTilesKeepRows(t *testing.T) {
	fb := newFake()
	fb.vendor = true
	path := filepath.Join(t.TempDir(), "t.db")
	sum := sweepInto(t, path, invConfig(1, 9, 17), fb)
	if sum.Failures != 0 || len(sum.Warnings) != 0 {
		t.Fatalf("invariant sweep: %+v", sum)
	}
	cells := storedCells(t, path)
	if len(cells) != 3 {
		t.Fatalf("%d cells", len(cells))
	}
	big := cells[2]
	for _, c := range cells {
		if len(c.InputRows) != c.Cell.M || c.InputKey == "" || c.InputKey != big.InputKey {
			t.Fatalf("M=%d inputs: key %q (largest %q), %d input rows", c.Cell.M, c.InputKey, big.InputKey, len(c.InputRows))
		}
		for r := range c.InputRows {
			if c.InputRows[r] != big.InputRows[r] {
				t.Fatalf("M=%d input row %d is not M=17's: inputs are not prefixes", c.Cell.M, r)
			}
		}
		if c.Seed != big.Seed {
			t.Errorf("seed of M=%d differs from M=17's: the seed depends on M", c.Cell.M)
		}
		for _, cand := range c.Candidates {
			if cand.Status != result.OK || len(cand.Rows) != 1 || cand.Rows[0].Operand != "Y" || len(cand.Rows[0].Hashes) != c.Cell.M {
				t.Errorf("M=%d %s: %s, rows %+v", c.Cell.M, cand.Tile, cand.Status, cand.Rows)
			}
			// The rows at M are the first rows at the largest M.
			for r, h := range cand.Rows[0].Hashes {
				if want := big.Find(cand.Tile).Rows[0].Hashes[r]; h != want {
					t.Errorf("M=%d %s row %d changed", c.Cell.M, cand.Tile, r)
				}
			}
		}
	}
}

// TestSweepCatchesNonInvariantSource: a source whose sum order depends on M
// ("mdep": backwards when M > 12) is bitwise equal across tiles in every
// cell, so only the comparison across M catches it: every tile fails
// parity at M=17, the message naming the M values and the first changed
// row; a vendor that changes with M is reported, never failed.
func TestSweepCatchesNonInvariantSource(t *testing.T) {
	fb := newFake()
	fb.vendor = true
	fb.vendorBug = "mdep"
	cfg := invConfig(1, 9, 17)
	cfg.Source = "mdep"
	path := filepath.Join(t.TempDir(), "t.db")
	sum := sweepInto(t, path, cfg, fb)
	cells := storedCells(t, path)
	fails := 0
	for _, c := range cells {
		for _, cand := range c.Candidates {
			switch {
			case c.Cell.M < 17 || cand.Vendor:
				if cand.Status != result.OK {
					t.Errorf("M=%d %s: %s %q, want ok", c.Cell.M, cand.Tile, cand.Status, cand.Detail)
				}
			default:
				fails++
				if cand.Status != result.ParityFailed || cand.Samples != nil || !cand.Bitwise ||
					!strings.HasPrefix(cand.Detail, "not batch-invariant: ") || !strings.Contains(cand.Detail, "between M 1, 9 and M=17") ||
					!strings.Contains(cand.Detail, "(first: row 0 of Y at M=1 differs from M=17)") {
					t.Errorf("M=17 %s: %s %q (%d samples)", cand.Tile, cand.Status, cand.Detail, len(cand.Samples))
				}
			}
		}
	}
	if fails != 3 || sum.Failures != 3 {
		t.Errorf("%d tiles failed at M=17 (summary %d), want 3", fails, sum.Failures)
	}
}

// TestInvarianceAcrossResumedSweeps: the rows kept in the store let a
// sweep in a later process check against cells it did not run — whether
// the new M is larger (it is the reference) or smaller (it is compared
// with the largest stored M).
func TestInvarianceAcrossResumedSweeps(t *testing.T) {
	for _, tc := range []struct {
		name         string
		first, later []int
		failM        int
		detail       string
	}{
		{"larger M later", []int{9}, []int{9, 17}, 17, "9 of 9 rows changed between M 9 and M=17 (first: row 0 of Y at M=9 differs from M=17)"},
		{"smaller M later", []int{17}, []int{1, 17}, 1, "1 of 1 rows changed between M 1 and M=17"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fb := newFake()
			fb.vendor = true
			path := filepath.Join(t.TempDir(), "t.db")
			cfg := invConfig(tc.first...)
			cfg.Source = "mdep"
			if sum := sweepInto(t, path, cfg, fb); sum.Failures != 0 {
				t.Fatalf("one M: nothing to compare, yet %d failures", sum.Failures)
			}
			cfg.Workload.Ms = tc.later
			sum := sweepInto(t, path, cfg, fb)
			if sum.Cells != 1 || sum.Skipped != 1 {
				t.Fatalf("resume: %+v", sum)
			}
			for _, c := range storedCells(t, path) {
				for _, cand := range c.Candidates {
					if want := c.Cell.M == tc.failM && !cand.Vendor; (cand.Status == result.ParityFailed) != want {
						t.Errorf("M=%d %s: %s %q", c.Cell.M, cand.Tile, cand.Status, cand.Detail)
					} else if want && !strings.Contains(cand.Detail, tc.detail) {
						t.Errorf("M=%d %s: detail %q, want %q", c.Cell.M, cand.Tile, cand.Detail, tc.detail)
					}
				}
			}
		})
	}
}

// TestInvarianceNeedsPrefixInputs: cells whose inputs are not prefixes of
// one another (here: another --seed on resume) are not compared — a
// warning, not a failure.
func TestInvarianceNeedsPrefixInputs(t *testing.T) {
	fb := newFake()
	fb.vendor = true
	path := filepath.Join(t.TempDir(), "t.db")
	cfg := invConfig(9)
	cfg.Source = "mdep"
	sweepInto(t, path, cfg, fb)
	cfg.Workload.Ms = []int{9, 17}
	cfg.Seed++
	sum := sweepInto(t, path, cfg, fb)
	if sum.Failures != 0 || len(sum.Warnings) != 1 || !strings.Contains(sum.Warnings[0], "batch invariance of a not checked at M=17: its inputs and those of M 9 are not prefixes") {
		t.Fatalf("summary %+v", sum)
	}
}

// TestPackRowsOverTheWorkerPipe: the row hashes a worker sends come back
// whole, each distinct list sent once (three bitwise-equal tiles share
// one; the vendor has its own).
func TestPackRowsOverTheWorkerPipe(t *testing.T) {
	fb := newFake()
	fb.vendor = true
	cfg := invConfig(40)
	st := openStore(t)
	var res result.CellResult
	rec := &recorder{Results: st, saved: &res}
	if _, err := Sweep(context.Background(), cfg, NewLocal(func(context.Context) (backendT, error) { return fb, nil }, nil), rec, nil); err != nil {
		t.Fatal(err)
	}
	p := packRows(res)
	if len(p.Rows) != 2 || len(p.RowsOf) != len(res.Candidates) {
		t.Fatalf("%d distinct row lists for %d candidates (%v), want 2", len(p.Rows), len(res.Candidates), p.RowsOf)
	}
	var buf bytes.Buffer
	if err := WriteFrame(&buf, kindResult, p); err != nil {
		t.Fatal(err)
	}
	f, err := ReadFrame(&buf)
	if err != nil {
		t.Fatal(err)
	}
	var back packedResult
	if err := f.Decode(kindResult, &back); err != nil {
		t.Fatal(err)
	}
	got, err := back.unpack()
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range got.Candidates {
		if len(c.Rows) != 1 || !reflect.DeepEqual(c.Rows, res.Candidates[i].Rows) {
			t.Errorf("candidate %s: rows %v after the pipe, want %v", c.Tile, c.Rows, res.Candidates[i].Rows)
		}
	}
	if !reflect.DeepEqual(got.InputRows, res.InputRows) || got.InputKey != res.InputKey {
		t.Error("input rows lost on the pipe")
	}
	bad := back
	bad.RowsOf = append([]int(nil), back.RowsOf...)
	bad.RowsOf[0] = 7
	if _, err := bad.unpack(); err == nil {
		t.Error("a reference past the table accepted")
	}
}

// recorder keeps the last cell saved.
type recorder struct {
	Results
	saved *result.CellResult
}

func (r *recorder) SaveCell(ctx context.Context, c result.CellResult) (int64, error) {
	*r.saved = c
	return r.Results.SaveCell(ctx, c)
}
