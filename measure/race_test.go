package measure

import (
	"context"
	"testing"

	"github.com/tilefit/tilefit/stats"
)

// TestRaceLetsClearlySlowerLeave (issue 17): with the race, a candidate
// 1.5× slower than the best leaves after 6 pairs (its samples a prefix,
// Left says when); the best, a candidate within the margin of it, the
// anchor and a kept candidate (a vendor) are timed all 12 rounds; without
// the race every one is.
func TestRaceLetsClearlySlowerLeave(t *testing.T) {
	names := []string{"ref", "best", "slow", "near", "vendor"}
	ratio := map[string]float64{"ref": 1.0, "best": 0.8, "slow": 1.5, "near": 0.82, "vendor": 2.0}
	for _, race := range []bool{true, false} {
		p := newNoisy(5, 0.01, ratio)
		o := Options{Rounds: 12, MinRounds: 6, Anchor: 0, Race: race, Keep: []int{4}}
		res, err := Run(context.Background(), p, kernels(names...), o, Hooks{})
		if err != nil {
			t.Fatal(err)
		}
		for i, n := range names {
			want := 12
			if race && n == "slow" {
				want = 6
			}
			left := 0
			if res.Left != nil {
				left = res.Left[i]
			}
			if len(res.Samples[i]) != want || (want == 6) != (left == 6) {
				t.Errorf("race %v: %s has %d samples, left after %d pairs; want %d samples", race, n, len(res.Samples[i]), left, want)
			}
		}
		if res.Rounds != 12 {
			t.Errorf("race %v: %d rounds, want 12", race, res.Rounds)
		}
	}
}

// TestRaceRule: the race's rule leaves a candidate out only when every one
// of six pairs reads it more than 10% slower than the best.
func TestRaceRule(t *testing.T) {
	o := stats.DefaultRaceOptions()
	best := []float64{10, 10.1, 9.9, 10, 10.2, 9.8}
	for _, c := range []struct {
		f    float64
		out  bool
		what string
	}{{1.5, true, "1.5× slower"}, {1.2, true, "1.2× slower"}, {1.05, false, "5% slower, within the margin"}, {0.9, false, "faster"}} {
		cand := make([]float64, len(best))
		for i, b := range best {
			cand[i] = b * c.f
		}
		if got := stats.RaceOut(best, cand, o); got != c.out {
			t.Errorf("%s: out %v, want %v", c.what, got, c.out)
		}
	}
	// One pair of six reading it faster keeps it in.
	cand := []float64{15, 15, 15, 15, 15, 9}
	if stats.RaceOut(best, cand, o) {
		t.Error("left the race with one pair of six faster than the best")
	}
}
