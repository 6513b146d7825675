package tune

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/tilefit/tilefit/backend"
	"github.com/tilefit/tilefit/kernel"
	"github.com/tilefit/tilefit/measure"
	"github.com/tilefit/tilefit/result"
	"github.com/tilefit/tilefit/stats"
	"github.com/tilefit/tilefit/store"
	"github.com/tilefit/tilefit/workload"
)

// noisyFake is the fake backend with seeded log-normal noise on every
// timed sample (deterministic: the calls come in a fixed order).
type noisyFake struct {
	*fakeBackend
	rng   *rand.Rand
	sigma float64
}

type noisyFakeProblem struct {
	backend.Problem
	f *noisyFake
}

func (f *noisyFake) NewProblem(ctx context.Context, op *kernel.Operator, d kernel.Dims, sets [][][]byte) (backend.Problem, error) {
	p, err := f.fakeBackend.NewProblem(ctx, op, d, sets)
	return &noisyFakeProblem{p, f}, err
}

func (p *noisyFakeProblem) Time(ctx context.Context, k backend.Kernel, n, first int) (time.Duration, error) {
	t, err := p.Problem.Time(ctx, k, n, first)
	return time.Duration(float64(t) * math.Exp(p.f.sigma*p.f.rng.NormFloat64())), err
}

func TestSweepAutoRounds(t *testing.T) {
	ctx := context.Background()
	fb := newFake()
	// Against the reference 8 (100 µs): 16 is 50 % slower (decided at the
	// first look), 4 the same (a tie, once the interval fits in ±1 %), 2
	// exactly 1 % slower, on the margin (never decided: the budget ends it).
	fb.times = map[string]time.Duration{"8": 100 * time.Microsecond, "16": 150 * time.Microsecond,
		"4": 100 * time.Microsecond, "2": 101 * time.Microsecond}
	nf := &noisyFake{fakeBackend: fb, rng: rand.New(rand.NewPCG(5, 6)), sigma: 0.01}
	w := workload.Workload{Name: "t", Shapes: []workload.Shape{{Name: "a", N: 5, K: 7, Calls: 2}}, Ms: []int{9}}
	// 400 rounds of the reference and tile 2 fit the budget.
	cfg := Config{Families: []*kernel.Family{fakeFamily()}, Workload: w, Seed: 7, Tiles: []string{"16", "4", "2"},
		Measure: measure.Options{Auto: true, MinRounds: 6, Dispatches: 1, Budget: 400 * 201 * time.Microsecond,
			Now: func() time.Time { return time.Unix(0, 0) }}} // only the measured time counts: no clock in the test
	st := openStore(t)
	if _, err := Sweep(ctx, cfg, NewLocal(func(context.Context) (backendT, error) { return nf, nil }, nil), st, nil); err != nil {
		t.Fatal(err)
	}
	cells, err := st.Cells(ctx, store.Filter{})
	if err != nil || len(cells) != 1 {
		t.Fatalf("%d cells (%v)", len(cells), err)
	}
	c := cells[0]
	ref := c.Find("8")
	if ref == nil || ref.Status != result.OK || len(ref.Samples) != c.Rounds {
		t.Fatalf("reference %+v, rounds %d", ref, c.Rounds)
	}
	if c.Rounds < 300 || c.Rounds > 400 {
		t.Errorf("rounds %d, want the budget's (about 300-400, tile 2 never decides)", c.Rounds)
	}
	so := stats.DefaultSequentialOptions()
	for tile, want := range map[string]stats.Verdict{"16": stats.Slower, "4": stats.Tie, "2": stats.Undecided} {
		cand := c.Find(tile)
		if cand == nil || cand.Status != result.OK {
			t.Fatalf("tile %s: %+v", tile, cand)
		}
		s, err := stats.Sequential(ref.Samples[:len(cand.Samples)], cand.Samples, so)
		if err != nil {
			t.Fatal(err)
		}
		if s.Verdict != want || s.Pairs != len(cand.Samples) {
			t.Errorf("tile %s: %d samples, replayed %s at %d pairs; want %s at its last sample", tile, len(cand.Samples), s.Verdict, s.Pairs, want)
		}
	}
	if n := len(c.Find("16").Samples); n != 12 {
		t.Errorf("tile 16 has %d samples, want 12: it left the rounds at the first look", n)
	}
	if n := len(c.Find("2").Samples); n != c.Rounds {
		t.Errorf("tile 2 has %d samples, want all %d rounds", n, c.Rounds)
	}
}
