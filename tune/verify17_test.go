package tune

import (
	"context"
	"strings"
	"testing"

	"github.com/tilefit/tilefit/kernel"
	"github.com/tilefit/tilefit/result"
	"github.com/tilefit/tilefit/store"
)

// TestTwinOfFailedReference (issue 17, defect 2): the A/A twin of a
// reference tile that fails verification is not stored ok, bitwise, with
// max_err 0 and samples: it takes the reference's verdict.
func TestTwinOfFailedReference(t *testing.T) {
	ctx := context.Background()
	fb := newFake()
	fb.bugs["8"] = "tail" // 9 % 8 and 17 % 8: the last row is never written
	cfg := testConfig()
	cfg.AA = true
	cfg.Tiles = []string{"4", "16"}
	st := openStore(t)
	if _, err := Sweep(ctx, cfg, NewLocal(func(context.Context) (backendT, error) { return fb, nil }, nil), st, nil); err != nil {
		t.Fatal(err)
	}
	cells, _ := st.Cells(ctx, store.Filter{})
	twins := 0
	for _, c := range cells {
		for _, cand := range c.Candidates {
			if !cand.AA {
				continue
			}
			twins++
			if ref := c.Find("8"); ref == nil || ref.Status != result.NumericFailed {
				t.Fatalf("the reference did not fail: %+v", ref)
			}
			if cand.Status == result.OK || cand.Bitwise || len(cand.Samples) > 0 || !strings.Contains(cand.Detail, "reference tile failed") {
				t.Errorf("%s M=%d: the twin of a failed reference is %s (bitwise %v, %d samples, %q)", c.Cell.Shape, c.Cell.M, cand.Status, cand.Bitwise, len(cand.Samples), cand.Detail)
			}
		}
	}
	if twins == 0 {
		t.Fatal("no A/A twin in the sweep")
	}
}

// TestSweepFailsDroppedTerm: a source whose every tile skips its last k
// term (so every tile is bitwise equal to every other) fails every tile of
// every cell, by the probabilistic bound or the exact check.
func TestSweepFailsDroppedTerm(t *testing.T) {
	ctx := context.Background()
	cfg := testConfig()
	cfg.Source = "droplast"
	cfg.Workload.Shapes[1].K = 2560
	st := openStore(t)
	if _, err := Sweep(ctx, cfg, NewLocal(func(context.Context) (backendT, error) { return newFake(), nil }, nil), st, nil); err != nil {
		t.Fatal(err)
	}
	cells, _ := st.Cells(ctx, store.Filter{})
	for _, c := range cells {
		for _, cand := range c.Candidates {
			if cand.Status != result.NumericFailed || !strings.Contains(cand.Detail, "bound") && !strings.Contains(cand.Detail, "exact check") {
				t.Errorf("%s M=%d %s: %s %q", c.Cell.Shape, c.Cell.M, cand.Tile, cand.Status, cand.Detail)
			}
		}
	}
}

// TestExactCheckBlamesTheWrongBase: the reference tile is wrong on the
// exact inputs in one element the sample does not cover; the next tile
// differs from it there, the exact value of that element says the
// reference is wrong, so the reference fails (with the tiles that matched
// it) and the others pass.
func TestExactCheckBlamesTheWrongBase(t *testing.T) {
	ctx := context.Background()
	fb := newFake()
	fb.bugs["8"] = "flipexact"
	cfg := testConfig()
	cfg.Tiles = []string{"4", "16"}
	cfg.MaxSamples = 1 // the sample: one element, the last row and the last column
	cfg.Workload.Ms = []int{17}
	st := openStore(t)
	if _, err := Sweep(ctx, cfg, NewLocal(func(context.Context) (backendT, error) { return fb, nil }, nil), st, nil); err != nil {
		t.Fatal(err)
	}
	cells, _ := st.Cells(ctx, store.Filter{})
	for _, c := range cells {
		ref, a, b := c.Find("8"), c.Find("4"), c.Find("16")
		if ref.Status != result.NumericFailed || !strings.Contains(ref.Detail, "exact check") || !strings.Contains(ref.Detail, "found against 4") {
			t.Errorf("%s: the wrong reference is %s %q", c.Cell.Shape, ref.Status, ref.Detail)
		}
		if a.Status != result.OK || b.Status != result.OK {
			t.Errorf("%s: the right tiles are %s %q and %s %q", c.Cell.Shape, a.Status, a.Detail, b.Status, b.Detail)
		}
	}
}

// TestSweepWarnsWithoutExact: an operator that declares no exact check is
// swept with a warning saying so, not silently.
func TestSweepWarnsWithoutExact(t *testing.T) {
	cfg := testConfig()
	f := fakeFamily()
	op := *f.Operator
	op.Name, op.Exact, op.Gemm = "gemm_noexact", nil, nil
	f.Operator = &op
	cfg.Families = []*kernel.Family{f}
	for i := range cfg.Workload.Shapes {
		cfg.Workload.Shapes[i].Op = op.Name
	}
	reg, err := kernel.NewRegistry(f)
	if err != nil {
		t.Fatal(err)
	}
	ex := NewLocal(func(context.Context) (backendT, error) { return newFake(), nil }, reg)
	sum, err := Sweep(context.Background(), cfg, ex, openStore(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, w := range sum.Warnings {
		if strings.Contains(w, "declares no exact known-answer inputs") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d warnings about the missing exact check, want one: %q", n, sum.Warnings)
	}
}

// TestVendorOffTheExactAnswer: a vendor baseline right on random inputs
// but off the exact answer stays ok (its arithmetic is its own) and the
// sweep warns once, naming it.
func TestVendorOffTheExactAnswer(t *testing.T) {
	ctx := context.Background()
	fb := newFake()
	fb.vendor, fb.vendorBug = true, "flipexact"
	cfg := testConfig()
	cfg.Baselines = []*kernel.Baseline{fakeBaseline()}
	st := openStore(t)
	sum, err := Sweep(ctx, cfg, NewLocal(func(context.Context) (backendT, error) { return fb, nil }, nil), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, w := range sum.Warnings {
		if strings.Contains(w, "vendor openblas is off the exact answer") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d warnings about the vendor, want one: %q", n, sum.Warnings)
	}
	cells, _ := st.Cells(ctx, store.Filter{})
	for _, c := range cells {
		if v := c.Find("openblas"); v == nil || v.Status != result.OK {
			t.Errorf("%s M=%d: vendor %+v", c.Cell.Shape, c.Cell.M, v)
		}
	}
}
