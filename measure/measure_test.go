package measure

import (
	"context"
	"testing"
	"time"

	"github.com/tilefit/tilefit/backend"
	"github.com/tilefit/tilefit/kernel"
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

func (p *fakeProblem) Operator() *kernel.Operator { return kernel.GemmF16() }
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
	// Rounds 0-2 rotate; rounds 3-5 rotate and reverse.
	want := [][]int{{0, 1, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}, {0, 2, 1}, {1, 0, 2}}
	for r, w := range want {
		got := Order(3, r)
		for i := range w {
			if got[i] != w[i] {
				t.Fatalf("Order(3,%d) = %v, want %v", r, got, w)
			}
		}
	}
	// Two candidates alternate ABBA.
	for r, w := range [][]int{{0, 1}, {1, 0}, {1, 0}, {0, 1}} {
		if got := Order(2, r); got[0] != w[0] || got[1] != w[1] {
			t.Fatalf("Order(2,%d) = %v, want %v", r, got, w)
		}
	}
	// Over 2n rounds every candidate is first at least once.
	first := map[int]bool{}
	for r := 0; r < 6; r++ {
		first[Order(3, r)[0]] = true
	}
	if len(first) != 3 {
		t.Fatalf("not every candidate leads a round: %v", first)
	}
}

func TestPlan(t *testing.T) {
	o := Options{Rounds: 12, MinRounds: 6, MaxDispatches: 64, TargetSample: time.Millisecond, Budget: time.Second}
	d, r := Plan([]time.Duration{10 * time.Microsecond, 400 * time.Microsecond, 5 * time.Millisecond}, o)
	if d[0] != 64 || d[1] != 3 || d[2] != 1 {
		t.Fatalf("D = %v, want [64 3 1]", d)
	}
	// per round: 640µs + 1.2ms + 5ms = 6.84ms → 146 rounds fit → capped at 12.
	if r != 12 {
		t.Fatalf("rounds = %d, want 12", r)
	}
	o.Budget = 50 * time.Millisecond // 7 rounds fit
	if _, r = Plan([]time.Duration{10 * time.Microsecond, 400 * time.Microsecond, 5 * time.Millisecond}, o); r != 7 {
		t.Fatalf("rounds = %d, want 7", r)
	}
	o.Budget = time.Millisecond // none fit → MinRounds
	if _, r = Plan([]time.Duration{5 * time.Millisecond}, o); r != 6 {
		t.Fatalf("rounds = %d, want MinRounds 6", r)
	}
	o.Dispatches = 8
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
