package measure

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tilefit/tilefit/backend"
)

// roundProblem is fakeProblem with TimeRound: each sample as Time gives
// it, begin called before each; fail makes the sample of that kernel fail.
type roundProblem struct {
	fakeProblem
	rounds int
	fail   string
}

func (p *roundProblem) TimeRound(ctx context.Context, ks []backend.Kernel, n, first []int, begin func(int)) ([]time.Duration, error) {
	p.rounds++
	var out []time.Duration
	for j, k := range ks {
		begin(j)
		if k.Name() == p.fail {
			return out, errors.New("launch failed")
		}
		t, err := p.fakeProblem.Time(ctx, k, n[j], first[j])
		if err != nil {
			return out, err
		}
		out = append(out, t)
	}
	return out, nil
}

// TestRoundTimerSameSamples: a problem that times a round in one call
// (RoundTimer) gets the same calls — kernels, counts, first sets, in the
// same order, with Begin before each — and the measurement the same
// samples, race and all, as one that is asked sample by sample; an error
// names the kernel whose sample failed.
func TestRoundTimerSameSamples(t *testing.T) {
	ks := []backend.Kernel{&fakeKernel{"a", 10 * time.Microsecond}, &fakeKernel{"b", 30 * time.Microsecond}, &fakeKernel{"c", 11 * time.Microsecond}, &fakeKernel{"d", 50 * time.Microsecond}}
	o := Options{Rounds: 12, MinRounds: 6, TargetSample: 100 * time.Microsecond, Race: true, Anchor: 0}
	var begins1, begins2 []int
	plain := &fakeProblem{sets: 3}
	r1, err := Run(context.Background(), plain, ks, o, Hooks{Begin: func(i, n int, _ time.Duration) { begins1 = append(begins1, i, n) }})
	if err != nil {
		t.Fatal(err)
	}
	rp := &roundProblem{fakeProblem: fakeProblem{sets: 3}}
	r2, err := Run(context.Background(), rp, ks, o, Hooks{Begin: func(i, n int, _ time.Duration) { begins2 = append(begins2, i, n) }})
	if err != nil {
		t.Fatal(err)
	}
	if rp.rounds == 0 {
		t.Fatal("TimeRound was not used")
	}
	r1.Warmup, r2.Warmup = 0, 0
	if !reflect.DeepEqual(r1, r2) {
		t.Errorf("results differ:\n%+v\n%+v", r1, r2)
	}
	if !reflect.DeepEqual(plain.calls, rp.calls) || !reflect.DeepEqual(plain.firsts, rp.firsts) || !reflect.DeepEqual(begins1, begins2) {
		t.Errorf("calls differ:\n%v %v %v\n%v %v %v", plain.calls, plain.firsts, begins1, rp.calls, rp.firsts, begins2)
	}
	if r2.Left == nil {
		t.Error("the race took no candidate out: the test does not cover it")
	}

	bad := &roundProblem{fakeProblem: fakeProblem{sets: 3}, fail: "c"}
	if _, err := Run(context.Background(), bad, ks, o, Hooks{}); err == nil || !strings.Contains(err.Error(), "c: launch failed") {
		t.Errorf("a failing sample: %v, want its kernel named", err)
	}
}
