package tune

import (
	"context"
	"encoding/binary"
	"math"
	"strings"
	"testing"

	"github.com/tilefit/tilefit/backend"
	"github.com/tilefit/tilefit/kernel"
	"github.com/tilefit/tilefit/measure"
	"github.com/tilefit/tilefit/result"
	"github.com/tilefit/tilefit/store"
	"github.com/tilefit/tilefit/workload"
)

// truncBackend is the fake backend whose family tiles (not the vendor)
// keep 22 significant bits of the accumulator after every step: every tile
// is bitwise equal to the others and within the float64 bound, but not
// exact.
type truncBackend struct{ *fakeBackend }

type truncProblem struct{ *fakeProblem }

func (f truncBackend) NewProblem(ctx context.Context, op *kernel.Operator, d kernel.Dims, sets [][][]byte) (backend.Problem, error) {
	p, err := f.fakeBackend.NewProblem(ctx, op, d, sets)
	return truncProblem{p.(*fakeProblem)}, err
}

func (p truncProblem) Run(ctx context.Context, kk backend.Kernel, set int) ([][]byte, error) {
	out, err := p.fakeProblem.Run(ctx, kk, set)
	if err != nil || kk.(*fakeKernel).bug == "reorder" {
		return out, err
	}
	in := p.sets[set]
	M, N, K := p.d["M"], p.d["N"], p.d["K"]
	for m := 0; m < M; m++ {
		for n := 0; n < N; n++ {
			var acc float32
			for k := 0; k < K; k++ {
				acc = fma32(h(binary.LittleEndian.Uint16(in[0][2*(m*K+k):])), h(binary.LittleEndian.Uint16(in[1][2*(n*K+k):])), acc)
				acc = math.Float32frombits(math.Float32bits(acc) &^ 3)
			}
			binary.LittleEndian.PutUint32(out[2][4*(m*N+n):], math.Float32bits(acc))
		}
	}
	return out, nil
}

func laplacianConfig() Config {
	w := workload.Workload{Name: "lap", Shapes: []workload.Shape{{Name: "sq", N: 256, K: 256, Calls: 1}, {Name: "wide", N: 5, K: 7, Calls: 1}}, Ms: []int{64}}
	return Config{Families: []*kernel.Family{fakeFamily()}, Workload: w, Seed: 3, Measure: measure.Options{Rounds: 2, MinRounds: 2},
		Tiles: []string{"4", "16"}, Baselines: []*kernel.Baseline{fakeBaseline()}, Laplacian: true}
}

// TestSweepLaplacianPasses: exact tiles and the vendor pass the check, and
// each runs once more on the square cell (and not on the other one).
func TestSweepLaplacianPasses(t *testing.T) {
	ctx := context.Background()
	runs := map[bool]map[string]int{}
	for _, lap := range []bool{false, true} {
		fb := newFake()
		fb.vendor = true
		cfg := laplacianConfig()
		cfg.Laplacian = lap
		st := openStore(t)
		if _, err := Sweep(ctx, cfg, NewLocal(func(context.Context) (backendT, error) { return fb, nil }, nil), st, nil); err != nil {
			t.Fatal(err)
		}
		for k, s := range statuses(t, st) {
			if s != result.OK {
				t.Errorf("laplacian=%v: %s %s", lap, k, s)
			}
		}
		runs[lap] = fb.runs
	}
	// One more run on the square cell, none on the other.
	for _, tile := range []string{"8", "4", "16", "openblas"} {
		if runs[true][tile] != runs[false][tile]+1 {
			t.Errorf("tile %s ran %d times with the check, %d without: want one more", tile, runs[true][tile], runs[false][tile])
		}
	}
}

// TestSweepLaplacianCatchesInexactTiles: a family that passes the bitwise
// and float64 checks but is not exact fails the check; the exact vendor
// passes.
func TestSweepLaplacianCatchesInexactTiles(t *testing.T) {
	ctx := context.Background()
	fb := newFake()
	fb.vendor = true
	st := openStore(t)
	tb := truncBackend{fb}
	cfg := laplacianConfig()
	cfg.Workload.Shapes = cfg.Workload.Shapes[:1] // the square cell
	if _, err := Sweep(ctx, cfg, NewLocal(func(context.Context) (backendT, error) { return tb, nil }, nil), st, nil); err != nil {
		t.Fatal(err)
	}
	cells, err := st.Cells(ctx, store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cells {
		for _, cand := range c.Candidates {
			want := result.OK
			if c.Cell.Shape == "sq" && !cand.Vendor {
				want = result.NumericFailed
			}
			if cand.Status != want {
				t.Errorf("%s %s: %s (%s), want %s", c.Cell.Shape, cand.Tile, cand.Status, cand.Detail, want)
			}
			if want == result.NumericFailed && !strings.Contains(cand.Detail, "laplacian check: Y = X·Lᵀ") {
				t.Errorf("%s %s: detail %q", c.Cell.Shape, cand.Tile, cand.Detail)
			}
		}
	}
}
