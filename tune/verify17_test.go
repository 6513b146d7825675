package tune

import (
	"context"
	"strings"
	"testing"

	"github.com/tilefit/tilefit/builtin"
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

// exactSweep sweeps cfg on a fake backend made by mk and returns every
// stored candidate by shape/M/tile with the fake.
func exactSweep(t *testing.T, cfg Config, mk func() *fakeBackend) (map[string]result.Candidate, *fakeBackend) {
	t.Helper()
	fb := mk()
	st := openStore(t)
	if _, err := Sweep(context.Background(), cfg, NewLocal(func(context.Context) (backendT, error) { return fb, nil }, nil), st, nil); err != nil {
		t.Fatal(err)
	}
	cells, err := st.Cells(context.Background(), store.Filter{})
	if err != nil || len(cells) == 0 {
		t.Fatalf("%d cells: %v", len(cells), err)
	}
	out := map[string]result.Candidate{}
	for _, c := range cells {
		for _, cand := range c.Candidates {
			out[c.Cell.Shape+"/"+itoa(c.Cell.M)+"/"+cand.Tile] = cand
		}
	}
	return out, fb
}

// TestExactRunInTheVerifyBatch: with a verifier that keeps the exact
// check's run in the same wait as the two verification runs (KeepPairAnd,
// as the CUDA problem does), every candidate's exact run comes from that
// batch (no Keep of its own), and every planted fault fails its candidate
// with the same status and detail as without the batch: a tile off only on
// the exact inputs (flipexact: numeric, "exact check: …"), one writing past
// its output only on them (guardexact: numeric, "exact check: … guard"),
// rows left unwritten, a run that differs from the other; correct tiles
// pass.
func TestExactRunInTheVerifyBatch(t *testing.T) {
	bugs := map[string]string{"2": "tail", "4": "guardexact", "16": "flipexact", "32": "nondet"}
	mk := func(triple bool) func() *fakeBackend {
		return func() *fakeBackend {
			fb := newFake()
			fb.triple, fb.vendor = triple, true
			for tile, bug := range bugs {
				fb.bugs[tile] = bug
			}
			return fb
		}
	}
	cfg := testConfig()
	cfg.Baselines = []*kernel.Baseline{fakeBaseline()}
	cfg.Tiles = []string{"2", "4", "16", "32"}
	want, _ := exactSweep(t, cfg, mk(false))
	got, fb := exactSweep(t, cfg, mk(true))
	if fb.triples < len(want)/2 || fb.keeps != 0 {
		t.Fatalf("KeepPairAnd called %d times, Keep outside it %d, for %d candidate results: the exact runs were not batched", fb.triples, fb.keeps, len(want))
	}
	if len(got) != len(want) {
		t.Fatalf("%d candidate results batched, %d without", len(got), len(want))
	}
	for key, w := range want {
		if g := got[key]; g.Status != w.Status || g.Detail != w.Detail {
			t.Errorf("%s: %s %q batched, %s %q without", key, g.Status, g.Detail, w.Status, w.Detail)
		}
	}
	for key, g := range got {
		tile := g.Tile
		switch bugs[tile] {
		case "flipexact", "guardexact":
			if g.Status != result.NumericFailed || !strings.HasPrefix(g.Detail, "exact check: ") {
				t.Errorf("%s (%s): %s %q, want numeric \"exact check: …\"", key, bugs[tile], g.Status, g.Detail)
			}
			if bugs[tile] == "guardexact" && !strings.Contains(g.Detail, "guard") {
				t.Errorf("%s: %q does not name the guard", key, g.Detail)
			}
		case "":
			if g.Status != result.OK {
				t.Errorf("%s: correct candidate %s %q", key, g.Status, g.Detail)
			}
		default:
			if g.Status == result.OK {
				t.Errorf("%s (%s) passed", key, bugs[tile])
			}
		}
	}
}

// TestExactBaseCheckedAfterTheLastCandidate: when every tile is off the
// exact answer in the same element (so all are bitwise equal on the exact
// inputs and only the base's sampled elements can tell), the base's
// samples, compared after the time phase (exactFinish), fail it and every
// candidate that matched it, each numeric with the exact check's message
// (the members naming the base), batched or not; none of them keeps the
// timing samples it was given, and the A/A twin of the failed reference
// takes its verdict.
func TestExactBaseCheckedAfterTheLastCandidate(t *testing.T) {
	for _, triple := range []bool{false, true} {
		cfg := testConfig()
		cfg.Source = "flipexact"
		cfg.Tiles = []string{"4", "16"}
		cfg.AA = true
		got, fb := exactSweep(t, cfg, func() *fakeBackend { fb := newFake(); fb.triple = triple; return fb })
		if len(fb.timed) == 0 {
			t.Fatal("nothing was timed: the exact check's samples were compared before the time phase")
		}
		twins := 0
		for key, g := range got {
			if len(g.Samples) > 0 || g.Dispatches > 0 || g.LeftAt > 0 {
				t.Errorf("triple %v %s: failed, yet stored %d samples (%d dispatches, left at %d)", triple, key, len(g.Samples), g.Dispatches, g.LeftAt)
			}
			if g.AA {
				twins++
				if g.Status != result.Skipped || !strings.Contains(g.Detail, "reference tile failed") {
					t.Errorf("triple %v %s: the twin of the failed reference is %s %q", triple, key, g.Status, g.Detail)
				}
				continue
			}
			if g.Status != result.NumericFailed || !strings.HasPrefix(g.Detail, "exact check: ") || !strings.Contains(g.Detail, "index 0") {
				t.Errorf("triple %v %s: %s %q, want numeric, off the exact answer at element 0", triple, key, g.Status, g.Detail)
				continue
			}
			member := strings.Contains(g.Detail, "(bitwise equal to 8 on the exact inputs)")
			if member != (g.Tile != "8") {
				t.Errorf("triple %v %s: %q: the base's members (not the base) should name it", triple, key, g.Detail)
			}
		}
		if twins == 0 {
			t.Errorf("triple %v: no A/A twin stored", triple)
		}
	}
}

// TestUnfusedReferenceOfTheVendorsOutputs: the unfused float64 reference
// is computed only for the outputs the vendor baselines checked against
// it have (hc_up's cuBLAS composition writes mixh alone; its mixed was
// computed for nothing), and not at all without such a vendor.
func TestUnfusedReferenceOfTheVendorsOutputs(t *testing.T) {
	op := builtin.HcUpF16()
	all := []bool{true, true, true, true, true}
	vendor := []bool{true, true, true, true, false}
	r := &cellRun{op: op, job: CellJob{Candidates: []JobCandidate{
		{Tile: "32_128_4.bound1", Present: all},
		{Tile: "cublas", Vendor: true, F16Intermediate: true, Present: vendor},
	}}}
	if !r.needsUnfused() {
		t.Fatal("a vendor with fp16 intermediates, yet no unfused reference")
	}
	got := r.unfusedOutputs()
	want := []bool{true, true, true, true, false} // inputs are skipped by references (not outputs)
	for j, o := range op.Operands {
		if o.Dir == kernel.Out && got[j] != want[j] {
			t.Errorf("output %s: unfused reference %v, want %v", o.Name, got[j], want[j])
		}
	}
	r.job.Candidates[1].Status = result.CompileFailed
	if r.needsUnfused() {
		t.Error("the vendor did not load, yet the unfused reference is computed")
	}
}
