package measure

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/tilefit/tilefit/backend"
	"github.com/tilefit/tilefit/builtin"
	"github.com/tilefit/tilefit/kernel"
	"github.com/tilefit/tilefit/stats"
)

type fakeKernel struct {
	name string
	per  time.Duration
}

func (k *fakeKernel) Name() string { return k.name }
func (k *fakeKernel) Close() error { return nil }

// fakeProblem returns per·(1+drift) so a shared drift is visible, and logs
// every Time call.
type fakeProblem struct {
	sets   int
	calls  []string
	firsts []int
	drift  float64
}

func (p *fakeProblem) Operator() *kernel.Operator { return builtin.GemmF16() }
func (p *fakeProblem) Dims() kernel.Dims          { return kernel.Dims{"M": 1, "N": 1, "K": 1} }
func (p *fakeProblem) Sets() int                  { return p.sets }
func (p *fakeProblem) Run(context.Context, backend.Kernel, int) ([][]byte, error) {
	return nil, nil
}
func (p *fakeProblem) Time(_ context.Context, k backend.Kernel, n, first int) (time.Duration, error) {
	p.calls = append(p.calls, k.Name())
	p.firsts = append(p.firsts, first)
	p.drift += 0.1
	return time.Duration(float64(k.(*fakeKernel).per) * (1 + p.drift)), nil
}
func (p *fakeProblem) Close() error { return nil }

func TestOrderRotatesAndReverses(t *testing.T) {
	// Even rounds rotate by r/2; odd rounds reverse the previous order.
	want := [][]int{{0, 1, 2}, {2, 1, 0}, {1, 2, 0}, {0, 2, 1}, {2, 0, 1}, {1, 0, 2}}
	for r, w := range want {
		got := Order(3, r)
		for i := range w {
			if got[i] != w[i] {
				t.Fatalf("Order(3,%d) = %v, want %v", r, got, w)
			}
		}
	}
	// Two candidates alternate ABBA.
	for r, w := range [][]int{{0, 1}, {1, 0}, {1, 0}, {0, 1}, {0, 1}, {1, 0}} {
		if got := Order(2, r); got[0] != w[0] || got[1] != w[1] {
			t.Fatalf("Order(2,%d) = %v, want %v", r, got, w)
		}
	}
	// With many candidates every pair swaps places from round 2k to round
	// 2k+1 (so every two rounds are balanced), and every candidate leads a
	// round within 2n rounds.
	const n = 33
	pos := func(order []int, c int) int { return slices.Index(order, c) }
	first := map[int]bool{}
	for r := 0; r < 2*n; r += 2 {
		o, next := Order(n, r), Order(n, r+1)
		first[o[0]], first[next[0]] = true, true
		for a := 0; a < n; a += 5 {
			for b := a + 1; b < n; b += 7 {
				if (pos(o, a) < pos(o, b)) == (pos(next, a) < pos(next, b)) {
					t.Fatalf("rounds %d, %d: candidates %d and %d keep their order", r, r+1, a, b)
				}
			}
		}
	}
	if len(first) != n {
		t.Fatalf("%d of %d candidates lead a round", len(first), n)
	}
}

func TestPlan(t *testing.T) {
	o := Options{Rounds: 12, MinRounds: 6, MaxDispatches: 64, TargetSample: time.Millisecond, Budget: time.Second}
	d, r := Plan([]time.Duration{10 * time.Microsecond, 400 * time.Microsecond, 5 * time.Millisecond}, o)
	if d[0] != 3 || d[1] != 3 || d[2] != 3 {
		t.Fatalf("D = %v, want [3 3 3]: one D for the cell, from the median estimate (400 µs)", d)
	}
	// Two copies of one kernel with noisy warm-ups get the same D.
	if d, _ := Plan([]time.Duration{50 * time.Microsecond, 77 * time.Microsecond}, o); d[0] != d[1] || d[0] != 16 {
		t.Fatalf("D = %v, want [16 16] (1 ms / the median 63.5 µs)", d)
	}
	// per round: 3·(10µs + 400µs + 5ms) = 16.23ms → 61 rounds fit → capped at 12.
	if r != 12 {
		t.Fatalf("rounds = %d, want 12", r)
	}
	o.Budget = 120 * time.Millisecond // 7 rounds fit
	if _, r = Plan([]time.Duration{10 * time.Microsecond, 400 * time.Microsecond, 5 * time.Millisecond}, o); r != 7 {
		t.Fatalf("rounds = %d, want 7", r)
	}
	o.Budget = time.Millisecond // none fit → MinRounds
	if _, r = Plan([]time.Duration{5 * time.Millisecond}, o); r != 6 {
		t.Fatalf("rounds = %d, want MinRounds 6", r)
	}
	o.Dispatches, o.Budget = 8, time.Second // fits: 6 rounds of 8·5 ms (a D past the budget is cut: budget_test.go)
	if d, _ = Plan([]time.Duration{5 * time.Millisecond}, o); d[0] != 8 {
		t.Fatalf("fixed D ignored: %v", d)
	}
}

func TestRunPairsAndRotatesSets(t *testing.T) {
	p := &fakeProblem{sets: 3}
	ks := []backend.Kernel{&fakeKernel{"a", time.Millisecond}, &fakeKernel{"b", 2 * time.Millisecond}}
	rounds := 0
	res, err := Run(context.Background(), p, ks, Options{Rounds: 4, MinRounds: 4}, Hooks{Round: func(int) { rounds++ }})
	if err != nil {
		t.Fatal(err)
	}
	if res.Rounds != 4 || rounds != 4 || len(res.Samples[0]) != 4 || len(res.Samples[1]) != 4 {
		t.Fatalf("rounds %d/%d samples %v", res.Rounds, rounds, res.Samples)
	}
	// 2 warm-ups + 8 timed calls; round order a b, b a, b a? (rotated+reversed)
	if len(p.calls) != 10 {
		t.Fatalf("calls %v", p.calls)
	}
	seenSets := map[int]bool{}
	for _, f := range p.firsts[2:] {
		seenSets[f] = true
	}
	if len(seenSets) != 3 {
		t.Fatalf("sets not rotated: %v", p.firsts)
	}
	// b is twice a within each round despite the drift: ratio ≈ 2 (drift grows 10%/call).
	for r := 0; r < 4; r++ {
		ratio := res.Samples[1][r] / res.Samples[0][r]
		if ratio < 1.6 || ratio > 2.5 {
			t.Fatalf("round %d ratio %.2f", r, ratio)
		}
	}
}

func TestSets(t *testing.T) {
	if n := Sets(10<<20, 32<<20, 0, 16); n != 7 {
		t.Fatalf("Sets = %d, want 7", n)
	}
	if n := Sets(100<<20, 32<<20, 0, 16); n != 1 {
		t.Fatalf("Sets = %d, want 1", n)
	}
	if n := Sets(1<<20, 32<<20, 0, 16); n != 16 {
		t.Fatalf("Sets = %d, want cap 16", n)
	}
	if n := Sets(10<<20, 32<<20, 25<<20, 16); n != 2 {
		t.Fatalf("Sets = %d, want 2 under a 25 MiB budget", n)
	}
}

// noisyProblem times kernel k as base·ratio[k]·exp(σ·Z) per call, with a
// seeded generator: deterministic, no clock.
type noisyProblem struct {
	rng   *rand.Rand
	ratio map[string]float64
	base  time.Duration
	sigma float64
	calls map[string]int
}

func newNoisy(seed uint64, sigma float64, ratio map[string]float64) *noisyProblem {
	return &noisyProblem{rng: rand.New(rand.NewPCG(seed, 9)), ratio: ratio, base: 100 * time.Microsecond, sigma: sigma, calls: map[string]int{}}
}

func (p *noisyProblem) Operator() *kernel.Operator { return builtin.GemmF16() }
func (p *noisyProblem) Dims() kernel.Dims          { return kernel.Dims{"M": 1, "N": 1, "K": 1} }
func (p *noisyProblem) Sets() int                  { return 2 }
func (p *noisyProblem) Run(context.Context, backend.Kernel, int) ([][]byte, error) {
	return nil, nil
}
func (p *noisyProblem) Time(_ context.Context, k backend.Kernel, n, first int) (time.Duration, error) {
	p.calls[k.Name()]++
	return time.Duration(float64(p.base) * p.ratio[k.Name()] * math.Exp(p.sigma*p.rng.NormFloat64())), nil
}
func (p *noisyProblem) Close() error { return nil }

func kernels(names ...string) []backend.Kernel {
	ks := make([]backend.Kernel, len(names))
	for i, n := range names {
		ks[i] = &fakeKernel{n, 100 * time.Microsecond}
	}
	return ks
}

// replay is the verdict stats.Sequential gives on stored samples: the
// anchor's prefix of the candidate's length.
func replay(t *testing.T, res Result, anchor, c int) stats.SequentialComparison {
	t.Helper()
	s, err := stats.Sequential(res.Samples[anchor][:len(res.Samples[c])], res.Samples[c], stats.DefaultSequentialOptions())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestAutoStopsWhenDecided(t *testing.T) {
	// A, B 10 % slower, C 2 % faster, D the same as A; 1 % noise per call.
	p := newNoisy(1, 0.01, map[string]float64{"a": 1, "b": 1.10, "c": 0.98, "d": 1})
	o := Options{Auto: true, Anchor: 0, Dispatches: 1}
	res, err := Run(context.Background(), p, kernels("a", "b", "c", "d"), o, Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[int]stats.Verdict{1: stats.Slower, 2: stats.Faster, 3: stats.Tie}
	for c, v := range want {
		s := replay(t, res, 0, c)
		if s.Verdict != v || s.Pairs != len(res.Samples[c]) {
			t.Errorf("candidate %d: replayed %s at %d pairs, has %d samples; want %s at its last sample", c, s.Verdict, s.Pairs, len(res.Samples[c]), v)
		}
	}
	// B is decided at the first look; the others need more rounds, and the
	// run stops at the look that decided the last of them.
	if len(res.Samples[1]) != 12 {
		t.Errorf("b: %d samples, want 12 (decided at the first look)", len(res.Samples[1]))
	}
	last := max(len(res.Samples[2]), len(res.Samples[3]))
	if res.Rounds != last || len(res.Samples[0]) != res.Rounds || res.Undecided != 0 {
		t.Errorf("rounds %d, anchor samples %d, undecided %d; want %d, %d, 0", res.Rounds, len(res.Samples[0]), res.Undecided, last, last)
	}
	if !slices.Contains(stats.DefaultSequentialOptions().Looks(), res.Rounds) {
		t.Errorf("stopped at %d rounds, not a scheduled look %v", res.Rounds, stats.DefaultSequentialOptions().Looks())
	}
	if p.calls["b"] != 12+1 { // 12 rounds + the warm-up
		t.Errorf("b timed %d times, want 13: a decided candidate leaves the rounds", p.calls["b"])
	}
}

func TestAutoBudgetCutsAndReportsUndecided(t *testing.T) {
	// B is 1 % slower, right on the margin: never decided. A budget of
	// 100 rounds of two 100 µs samples stops it between looks 96 and 192.
	p := newNoisy(2, 0.01, map[string]float64{"a": 1, "b": 1.01})
	frozen := time.Unix(0, 0) // only the measured time counts: no clock in the test
	o := Options{Auto: true, Anchor: 0, Dispatches: 1, Budget: 100 * 200 * time.Microsecond, Now: func() time.Time { return frozen }}
	res, err := Run(context.Background(), p, kernels("a", "b"), o, Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Rounds < 90 || res.Rounds > 110 || res.Undecided != 1 {
		t.Fatalf("rounds %d, undecided %d; want about 100 and 1", res.Rounds, res.Undecided)
	}
	s := replay(t, res, 0, 1)
	if s.Verdict != stats.Undecided || s.Pairs != res.Rounds {
		t.Errorf("replay: %s at %d pairs; want undecided at the cut, %d", s.Verdict, s.Pairs, res.Rounds)
	}
	// A budget too small for anything still gives MinRounds rounds.
	p = newNoisy(3, 0.01, map[string]float64{"a": 1, "b": 1.01})
	o.Budget = time.Microsecond
	if res, err = Run(context.Background(), p, kernels("a", "b"), o, Hooks{}); err != nil || res.Rounds != 6 {
		t.Errorf("tiny budget: rounds %d (%v), want MinRounds 6", res.Rounds, err)
	}
}

func TestAutoFallsBackToFixedRounds(t *testing.T) {
	for _, o := range []Options{
		{Auto: true, Anchor: 5, Rounds: 7, MinRounds: 7},  // no such anchor
		{Auto: true, Anchor: -1, Rounds: 7, MinRounds: 7}, // none
		{Auto: false, Anchor: 0, Rounds: 7, MinRounds: 7}, // fixed
	} {
		p := newNoisy(4, 0.01, map[string]float64{"a": 1, "b": 1.5})
		res, err := Run(context.Background(), p, kernels("a", "b"), o, Hooks{})
		if err != nil || res.Rounds != 7 || len(res.Samples[1]) != 7 {
			t.Errorf("%+v: rounds %d (%v), want the fixed 7", o, res.Rounds, err)
		}
	}
}
