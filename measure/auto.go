package measure

import (
	"context"
	"fmt"
	"time"

	"github.com/tilefit/tilefit/backend"
	"github.com/tilefit/tilefit/stats"
)

// runAuto is Run under Options.Auto: adaptive rounds.
//
// Every candidate but the anchor is one comparison, B = the candidate
// against A = the anchor, judged by stats.Sequential with o.Sequential. The
// rounds run in batches that end on the rule's scheduled looks (12, 24, 48,
// … pairs by default). After each batch every comparison still open is
// looked at; a decided one (faster, slower or tie) leaves the rounds, so the
// next batch times only the anchor and the undecided candidates, in the
// same rotating order (Order over the candidates still in). It stops when
// no comparison is open, when the looks are spent, or when the next batch
// no longer fits the budget: then it runs the rounds that still fit and
// ends there, where the rule makes its last look.
//
// Budget is spent on the longer of the measured time (Σ D·sample duration
// over all samples taken) and the wall time since the first round (Now),
// so dispatch and messaging overhead count too. The first batch runs at
// least MinRounds rounds whatever the budget (as the fixed protocol does);
// a batch is sized by the median sample of each candidate still in.
//
// Because the rule is a pure function of the samples, stats.Sequential on
// the stored samples (the anchor's prefix of the candidate's length) gives
// back the verdict each comparison stopped on.
func runAuto(ctx context.Context, p backend.Problem, ks []backend.Kernel, o Options, h Hooks, est []time.Duration, d []int) (Result, error) {
	n := len(ks)
	looks := o.Sequential.Looks()
	if looks == nil {
		return Result{}, fmt.Errorf("measure: invalid sequential options %+v", o.Sequential)
	}
	sets := max(p.Sets(), 1)
	samples := make([][]float64, n)
	active := make([]int, n)
	for i := range active {
		active[i] = i
	}
	// cost[i] is candidate i's expected sample duration: the median of its
	// samples so far (updated at every look), else the warm-up estimate.
	cost := make([]time.Duration, n)
	for i := range cost {
		cost[i] = time.Duration(d[i]) * est[i]
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	start := now()
	var measured time.Duration
	// spent is the budget used: the measured sample time, or the wall time
	// since the first round when that is longer (dispatch overhead, a
	// worker's messages).
	spent := func() time.Duration { return max(measured, now().Sub(start)) }
	next, r := 0, 0
	undecided := 0
	race := newRace(o, n)
	for _, target := range looks {
		if len(active) < 2 {
			break
		}
		want := target - r
		if o.Budget > 0 {
			var perRound time.Duration
			for _, i := range active {
				perRound += cost[i]
			}
			if perRound > 0 {
				fit := int((o.Budget - spent()) / perRound)
				if r == 0 {
					fit = max(fit, o.MinRounds)
				}
				want = min(want, max(fit, 0))
			}
		}
		if want <= 0 {
			break
		}
		for range want {
			if err := ctx.Err(); err != nil {
				return Result{}, err
			}
			for _, pos := range Order(len(active), r) {
				i := active[pos]
				if h.Begin != nil {
					h.Begin(i, d[i], cost[i])
				}
				t, err := p.Time(ctx, ks[i], d[i], next%sets)
				if err != nil {
					return Result{}, fmt.Errorf("round %d %s: %w", r, ks[i].Name(), err)
				}
				next += d[i]
				measured += t * time.Duration(d[i])
				samples[i] = append(samples[i], float64(t)/float64(time.Microsecond))
			}
			if h.Round != nil {
				h.Round(r)
			}
			r++
		}
		// The race's look (at the pair counts both schedules share), then
		// the rule's: keep the anchor and the comparisons still undecided.
		active = race.look(samples, active, r)
		still := active[:0:0]
		undecided = 0
		for _, i := range active {
			cost[i] = time.Duration(stats.Median(samples[i]) * float64(d[i]) * float64(time.Microsecond))
			if i == o.Anchor {
				still = append(still, i)
				continue
			}
			c, err := stats.Sequential(samples[o.Anchor][:len(samples[i])], samples[i], o.Sequential)
			if err != nil { // samples the rule cannot judge (a zero time): more of them will not help
				continue
			}
			if !c.Decided() {
				still = append(still, i)
				undecided++
			}
		}
		active = still
		if r < target { // the budget cut this batch short: that was the last look
			break
		}
	}
	return Result{Samples: samples, Dispatches: d, Rounds: r, Undecided: undecided, Left: race.left}, nil
}
