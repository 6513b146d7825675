package tune

import (
	"context"
	"testing"

	"github.com/tilefit/tilefit/kernel"
)

// TestSweepLeavesOutTilesThatDoNotFit: a default-sweep tile whose family
// says it does not fit a shape (kernel.Family.Fits) is not run, stored or
// reported in that shape's cells, at any M; it runs on the other shapes,
// an Extra tile joins the default sweep, and a tile named with --tiles runs
// everywhere. A resumed sweep does not measure a cell again for the tiles
// left out of it.
func TestSweepLeavesOutTilesThatDoNotFit(t *testing.T) {
	ctx := context.Background()
	fam := *fakeFamily()
	fam.Extra = []string{"32", "4"} // 32 joins; 4 is in the product already
	fam.Fits = func(p kernel.Params, d kernel.Dims) bool { return p["TM"] != 16 || d["N"] != 3 }
	run := func(tiles []string) (map[string]bool, *fakeBackend) {
		fb := newFake()
		cfg := testConfig()
		cfg.Families = []*kernel.Family{&fam}
		cfg.Tiles = tiles
		st := openStore(t)
		for i := 0; i < 2; i++ { // the second sweep resumes: nothing left to run
			if _, err := Sweep(ctx, cfg, NewLocal(func(context.Context) (backendT, error) { return fb, nil }, nil), st, nil); err != nil {
				t.Fatal(err)
			}
			if i == 0 {
				fb.runs = map[string]int{}
			}
		}
		got := map[string]bool{}
		for k := range statuses(t, st) {
			got[k] = true
		}
		return got, fb
	}
	got, fb := run(nil)
	for _, m := range []int{9, 17} {
		for _, want := range []struct {
			key string
			in  bool
		}{{"a/" + itoa(m) + "/16", true}, {"b/" + itoa(m) + "/16", false}, {"b/" + itoa(m) + "/32", true}, {"b/" + itoa(m) + "/4", true}} {
			if got[want.key] != want.in {
				t.Errorf("default sweep: %s stored %v, want %v (stored: %v)", want.key, got[want.key], want.in, got)
			}
		}
	}
	if n := len(fb.runs); n != 0 {
		t.Errorf("the resumed sweep ran %d kernels again: %v", n, fb.runs)
	}
	got, _ = run([]string{"16"})
	if !got["b/09/16"] || !got["b/17/16"] {
		t.Errorf("a tile named with --tiles was left out: %v", got)
	}
}
