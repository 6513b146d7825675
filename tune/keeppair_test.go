package tune

import (
	"context"
	"maps"
	"strings"
	"testing"

	"github.com/tilefit/tilefit/kernel"
	"github.com/tilefit/tilefit/result"
	"github.com/tilefit/tilefit/store"
)

// TestKeepPairCatchesEveryFault: a verifier with KeepPair (the CUDA
// problem's two verification runs with one wait) is used for every
// candidate, and each planted fault — rows left unwritten, a write
// past the output into its guard, a run that differs from the other, one
// wrong element (flip) — fails its candidate with the same status and detail as
// two Keeps give, in every cell; the correct tiles pass.
func TestKeepPairCatchesEveryFault(t *testing.T) {
	ctx := context.Background()
	bugs := map[string]string{"2": "tail", "4": "guard", "16": "flip", "32": "nondet"}
	run := func(pair bool) (map[string]result.Candidate, *fakeBackend) {
		fb := newFake()
		fb.pair = pair
		fb.vendor = true
		for tile, bug := range bugs {
			fb.bugs[tile] = bug
		}
		cfg := testConfig()
		cfg.Baselines = []*kernel.Baseline{fakeBaseline()}
		cfg.Tiles = []string{"2", "4", "16", "32"}
		st := openStore(t)
		if _, err := Sweep(ctx, cfg, NewLocal(func(context.Context) (backendT, error) { return fb, nil }, nil), st, nil); err != nil {
			t.Fatal(err)
		}
		cells, err := st.Cells(ctx, store.Filter{})
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
	want, _ := run(false)
	got, fb := run(true)
	// Every verified candidate of every cell kept its two runs through
	// KeepPair (the exact check's one run per candidate is a Keep).
	if fb.pairs < len(want) || fb.keeps > len(want) {
		t.Fatalf("KeepPair called %d times, Keep outside it %d, for %d candidate results: the pair was not used", fb.pairs, fb.keeps, len(want))
	}
	if len(got) != len(want) {
		t.Fatalf("%d candidate results with KeepPair, %d without", len(got), len(want))
	}
	failed := map[string]int{}
	for key, w := range want {
		g := got[key]
		if g.Status != w.Status || g.Detail != w.Detail {
			t.Errorf("%s: %s %q with KeepPair, %s %q with two Keeps", key, g.Status, g.Detail, w.Status, w.Detail)
		}
		if g.Status != result.OK {
			failed[g.Tile]++
		}
	}
	for tile, bug := range bugs {
		if bug != "" && failed[tile] == 0 {
			t.Errorf("tile %s (%s) never failed", tile, bug)
		}
	}
	if failed["8"] != 0 || failed["openblas"] != 0 {
		t.Errorf("correct candidates failed: %v", failed)
	}
}

// TestKernelsBoundInTheLoadPhase: with a problem that binds kernels ahead
// of their first run (the CUDA problem's Bind), every loaded kernel is
// bound to the cell's problem and to the exact check's in the load phase,
// before any of its runs, and the results are those of a sweep without it.
func TestKernelsBoundInTheLoadPhase(t *testing.T) {
	ctx := context.Background()
	run := func(bind bool) (map[string]result.Status, *fakeBackend) {
		fb := newFake()
		fb.bind = bind
		fb.vendor = true
		fb.bugs["4"] = "tail"
		cfg := testConfig()
		cfg.Baselines = []*kernel.Baseline{fakeBaseline()}
		cfg.Tiles = []string{"4", "16"}
		st := openStore(t)
		if _, err := Sweep(ctx, cfg, NewLocal(func(context.Context) (backendT, error) { return fb, nil }, nil), st, nil); err != nil {
			t.Fatal(err)
		}
		return statuses(t, st), fb
	}
	want, _ := run(false)
	got, fb := run(true)
	if len(fb.binds) == 0 || fb.runBeforeBind != 0 {
		t.Fatalf("%d binds, %d runs of a kernel not bound yet", len(fb.binds), fb.runBeforeBind)
	}
	problems := map[string]bool{}
	for _, b := range fb.binds {
		_, p, _ := strings.Cut(b, "@")
		problems[p] = true
	}
	if len(problems) < 2 {
		t.Errorf("kernels bound to %d problems, want the cell's and the exact check's", len(problems))
	}
	if !maps.Equal(got, want) {
		t.Errorf("with Bind the sweep stored %v, without %v", got, want)
	}
}
