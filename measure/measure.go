// Package measure is the timing protocol: paired, interleaved rounds over
// every candidate of a cell, so that drift on a shared machine hits all
// candidates alike and per-round ratios stay reliable.
//
// In round r every candidate is timed once; the order is the candidate list
// rotated by ⌊r/2⌋ and reversed in odd rounds, so every two candidates swap
// places from round 2k to round 2k+1 (for two candidates: AB, BA, BA, AB,
// ... — ABBA) and no candidate is always first or always after the same
// neighbour. One sample is the mean time of D back-to-back dispatches (one
// D for the cell, chosen so that a sample of the median candidate lasts
// about TargetSample), each dispatch on the next input/output set so the
// working set exceeds the last-level cache.
// Samples are returned in µs per call, one per round, index r in every
// candidate's slice coming from round r (paired).
package measure

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/tilefit/tilefit/backend"
	"github.com/tilefit/tilefit/stats"
)

// Options configure the protocol.
type Options struct {
	// Rounds is the number of paired rounds (default 12).
	Rounds int
	// MinRounds is the fewest rounds the budget may cut to (default 6).
	MinRounds int
	// Dispatches fixes D for every candidate; 0 chooses one D for the cell
	// from the median candidate's estimate (see Plan).
	Dispatches int
	// MaxDispatches caps an automatic D (default 64).
	MaxDispatches int
	// TargetSample is the time one sample should last (default 1 ms).
	TargetSample time.Duration
	// Budget is the timing budget of one cell: rounds are cut (down to
	// MinRounds) so that rounds × Σ D·estimate ≤ Budget. 0 means no limit.
	Budget time.Duration
	// Warmup is the number of untimed dispatches per candidate (default 1).
	Warmup int
	// Auto replaces the fixed Rounds by the sequential rule (see RunAuto):
	// rounds are added in batches while a comparison with the Anchor is
	// undecided and the Budget lasts.
	Auto bool
	// Sequential is the rule Auto stops by; its zero value means
	// stats.DefaultSequentialOptions().
	Sequential stats.SequentialOptions
	// Anchor is the index of the candidate every other one is compared with
	// under Auto (the cell's reference tile; A in an A/B). Out of range, or
	// fewer than two candidates: Auto falls back to the fixed Rounds.
	Anchor int
	// Now is the clock Auto's budget reads wall time from (nil: time.Now);
	// tests stop it so that only the measured time counts.
	Now func() time.Time `json:"-"`
	// Race lets candidates leave a cell of many early: at each look of
	// RaceRule (6, 12, 24 pairs by default) that ends before the rounds
	// do, every candidate but the anchor and those in Keep is compared with
	// the best so far — the lowest median of the rounds so far among the
	// anchor and the candidates not in Keep — and leaves the rounds when
	// stats.RaceOut confirms it slower by the rule's margin and its fastest
	// sample so far is slower than the best's median by RaceNear: its Samples
	// are a prefix, Result.Left says after how many pairs. The anchor and
	// Keep (a sweep's reference tile, A/A twin and vendors) are timed to
	// the end, and so is the best: the winner's comparisons with the
	// reference and the vendor keep their full rounds. A sweep races
	// (tune.Config.NoRace turns it off); an A/B, whose one comparison is
	// the point, does not.
	Race bool `json:"race,omitempty"`
	// RaceRule is the race's rule; its zero value means
	// stats.DefaultRaceOptions().
	RaceRule stats.SequentialOptions `json:"race_rule"`
	// RaceNear guards the race against a candidate whose samples so far
	// are one state of several: a candidate RaceRule confirms slower
	// leaves only when its fastest sample so far is also slower than the
	// best's median by more than RaceNear (0: DefaultRaceNear; negative:
	// no guard). A tile that holds a slow state for several rounds (on the
	// H200 hc_up's 128_160_2 read 11.3 µs for its first six pairs and
	// 9.65 µs in an exhaustive run; hc_read's gemm_wgmma 128_48_2 reads
	// 36–38 or 45–47 µs, each for several rounds) is confirmed slower by a
	// paired rule, which compares it with the best round by round, but its
	// fastest sample in that state is within ~25% of the best: it stays
	// and is timed to the end, where its other state shows. The guard only
	// keeps candidates in, so the rule's bound on false verdicts
	// (stats.DefaultRaceOptions) still bounds the candidates that leave.
	RaceNear float64 `json:"race_near,omitempty"`
	// Keep lists candidates (indices into Run's kernels) that never leave
	// the race.
	Keep []int `json:"keep,omitempty"`
}

// DefaultOptions returns the defaults: 12 rounds (at least 6), automatic D
// up to 64 for samples of about 1 ms, a 30 s budget per cell, 1 warm-up.
func DefaultOptions() Options {
	return Options{Rounds: 12, MinRounds: 6, MaxDispatches: 64, TargetSample: time.Millisecond, Budget: 30 * time.Second, Warmup: 1}
}

// withDefaults fills zero fields from DefaultOptions.
func (o Options) withDefaults() Options {
	d := DefaultOptions()
	if o.Rounds <= 0 {
		o.Rounds = d.Rounds
	}
	if o.MinRounds <= 0 {
		o.MinRounds = d.MinRounds
	}
	if o.MinRounds > o.Rounds {
		o.MinRounds = o.Rounds
	}
	if o.MaxDispatches <= 0 {
		o.MaxDispatches = d.MaxDispatches
	}
	if o.TargetSample <= 0 {
		o.TargetSample = d.TargetSample
	}
	if o.Warmup < 0 {
		o.Warmup = 0
	}
	if o.Sequential == (stats.SequentialOptions{}) {
		o.Sequential = stats.DefaultSequentialOptions()
	}
	if o.RaceRule == (stats.SequentialOptions{}) {
		o.RaceRule = stats.DefaultRaceOptions()
	}
	if o.RaceNear == 0 {
		o.RaceNear = DefaultRaceNear
	}
	return o
}

// DefaultRaceNear is Options.RaceNear's default: a candidate leaves the
// race only when even its fastest sample so far is more than 30% slower
// than the best's median. Replayed on the samples of an exhaustive H200
// strata sweep (docs/results/h200-verify4), the race without it saves
// 45.1% of the samples, with it 41.1%; the slow states seen there are
// 17% and 25% above the tiles' fast ones.
const DefaultRaceNear = 0.30

// Plan chooses D, the dispatches per sample, and the number of rounds that
// fits the budget. D is one number for every candidate of the cell, chosen
// so that a sample of the median candidate lasts about TargetSample:
//
//	D = Dispatches if set, else clamp(ceil(TargetSample / median_c est_c), 1, MaxDispatches)
//	D = min(D, max(floor(Budget / (MinRounds · Σ_c est_c)), 1))   (with a Budget)
//	rounds = clamp(floor(Budget / Σ_c D·est_c), MinRounds, Rounds)
//
// One D for all (it was one per candidate, from each one's warm-up) keeps
// the per-sample costs that do not scale with D — the first, cold dispatch
// after another candidate ran, the clock reads — the same share of every
// candidate's time, so they cancel in the paired ratio: two copies of one
// kernel that drew D = 13 and D = 20 from noisy warm-ups read several
// percent apart on the 2-core CPU.
func Plan(est []time.Duration, o Options) (d []int, rounds int) {
	o = o.withDefaults()
	d = make([]int, len(est))
	common := o.MaxDispatches
	var pos []float64
	for _, e := range est {
		if e > 0 {
			pos = append(pos, float64(e))
		}
	}
	if len(pos) > 0 {
		slices.Sort(pos)
		med := pos[len(pos)/2]
		if len(pos)%2 == 0 {
			med = (pos[len(pos)/2-1] + med) / 2
		}
		common = min(max(int(math.Ceil(float64(o.TargetSample)/med)), 1), o.MaxDispatches)
	}
	if o.Dispatches > 0 {
		common = o.Dispatches
	}
	if o.Budget > 0 {
		// The budget cuts a sample too: MinRounds rounds must fit in it,
		// whatever D was asked for (issue 18: --dispatches 2⁴⁰ never ended).
		var sum time.Duration
		for _, e := range est {
			sum += max(e, 0)
		}
		if sum > 0 {
			if fit := int64(o.Budget) / (int64(max(o.MinRounds, 1)) * int64(sum)); int64(common) > fit {
				common = int(max(fit, 1))
			}
		}
	}
	var perRound time.Duration
	for i, e := range est {
		d[i] = common
		perRound += time.Duration(d[i]) * e
	}
	rounds = o.Rounds
	if o.Budget > 0 && perRound > 0 {
		fit := int(o.Budget / perRound)
		rounds = min(max(fit, o.MinRounds), o.Rounds)
	}
	return d, rounds
}

// Order returns the order candidates are timed in round r of n candidates:
// the identity rotated left by ⌊r/2⌋, reversed when r is odd. Reversing
// flips the order of every pair, so any two candidates swap places from
// round 2k to round 2k+1, and a trend within a round or a candidate that
// runs faster right after a similar one cancels in every two rounds; the
// rotation moves every candidate through every position. (Reversing only
// every n rounds, as before, left a pair in one order for n rounds: with
// 33 candidates a 12-round comparison saw one order only.)
func Order(n, r int) []int {
	out := make([]int, n)
	if n == 0 {
		return out
	}
	for i := range out {
		out[i] = (i + r/2) % n
	}
	if r%2 == 1 {
		for i, j := 0, n-1; i < j; i, j = i+1, j-1 {
			out[i], out[j] = out[j], out[i]
		}
	}
	return out
}

// A RoundTimer is a Problem that times a round's samples in one call (the
// CUDA problem: one hand-over to its device thread per round, not per
// sample). TimeRound must time sample j exactly as Time(ctx, ks[j], n[j],
// first[j]) does, call begin(j) right before it, and on an error return
// the durations of the samples before the failing one.
type RoundTimer interface {
	TimeRound(ctx context.Context, ks []backend.Kernel, n, first []int, begin func(j int)) ([]time.Duration, error)
}

// Hooks observe a measurement; any field may be nil.
type Hooks struct {
	// Begin is called before candidate i is dispatched n times; expect is
	// its estimated duration (0 when unknown), for a watchdog.
	Begin func(i, n int, expect time.Duration)
	// Round is called after each round with its index.
	Round func(r int)
}

// Result is the outcome of Run.
type Result struct {
	// Samples[c][r] is candidate c's µs per call in round r.
	Samples [][]float64
	// Dispatches[c] is D for candidate c.
	Dispatches []int
	// Rounds is the number of rounds run. Under Auto a candidate whose
	// comparison was decided leaves the rounds: its Samples are a prefix,
	// Samples[c][r] still from round r.
	Rounds int
	// Undecided counts, under Auto, the comparisons with the anchor still
	// undecided when the budget or the looks ran out (0 otherwise).
	Undecided int
	// Left[c] is the number of pairs after which the race took candidate
	// c out of the rounds (0: timed to the end); nil when none left.
	Left []int
	// Warmup is the wall time of the warm-up dispatches (before round 0),
	// host work included.
	Warmup time.Duration
}

// Run times every kernel of ks on p with the paired protocol. est are the
// per-dispatch estimates (from warm-up when nil). An error from any dispatch
// stops the measurement; the caller decides what it means (a failing
// candidate should have been excluded by verification before).
func Run(ctx context.Context, p backend.Problem, ks []backend.Kernel, o Options, h Hooks) (Result, error) {
	o = o.withDefaults()
	n := len(ks)
	if n == 0 {
		return Result{}, nil
	}
	sets := max(p.Sets(), 1)
	est := make([]time.Duration, n)
	warm := time.Now()
	if rt, ok := p.(RoundTimer); ok {
		ns, firsts := make([]int, n), make([]int, n)
		for i := range ks {
			ns[i], firsts[i] = max(o.Warmup, 1), i%sets
		}
		ts, err := rt.TimeRound(ctx, ks, ns, firsts, func(i int) {
			if h.Begin != nil {
				h.Begin(i, max(o.Warmup, 1), 0)
			}
		})
		if err != nil {
			if len(ts) < n {
				return Result{}, fmt.Errorf("warm-up %s: %w", ks[len(ts)].Name(), err)
			}
			return Result{}, fmt.Errorf("warm-up: %w", err)
		}
		copy(est, ts)
	} else {
		for i, k := range ks {
			if h.Begin != nil {
				h.Begin(i, max(o.Warmup, 1), 0)
			}
			t, err := p.Time(ctx, k, max(o.Warmup, 1), i%sets)
			if err != nil {
				return Result{}, fmt.Errorf("warm-up %s: %w", k.Name(), err)
			}
			est[i] = t
		}
	}
	warmup := time.Since(warm)
	if o.Auto && n >= 2 && o.Anchor >= 0 && o.Anchor < n {
		d, _ := Plan(est, o)
		res, err := runAuto(ctx, p, ks, o, h, est, d)
		res.Warmup = warmup
		return res, err
	}
	d, rounds := Plan(est, o)
	res := Result{Samples: make([][]float64, n), Dispatches: d, Rounds: rounds, Warmup: warmup}
	for i := range res.Samples {
		res.Samples[i] = make([]float64, 0, rounds)
	}
	race := newRace(o, n)
	active := make([]int, n)
	for i := range active {
		active[i] = i
	}
	next := 0 // rotating set index
	rt, _ := p.(RoundTimer)
	for r := 0; r < rounds; r++ {
		if err := ctx.Err(); err != nil {
			return Result{}, err
		}
		order := Order(len(active), r)
		if rt != nil {
			// The same samples in the same order, from the same sets, timed
			// in one call of the backend's.
			idx := make([]int, len(order))
			rks := make([]backend.Kernel, len(order))
			ns := make([]int, len(order))
			firsts := make([]int, len(order))
			for q, pos := range order {
				i := active[pos]
				idx[q], rks[q], ns[q], firsts[q] = i, ks[i], d[i], next%sets
				next += d[i]
			}
			begin := func(q int) {
				if h.Begin != nil {
					i := idx[q]
					h.Begin(i, d[i], time.Duration(d[i])*est[i])
				}
			}
			ts, err := rt.TimeRound(ctx, rks, ns, firsts, begin)
			for q, t := range ts {
				res.Samples[idx[q]] = append(res.Samples[idx[q]], float64(t)/float64(time.Microsecond))
			}
			if err != nil {
				if len(ts) < len(idx) {
					return Result{}, fmt.Errorf("round %d %s: %w", r, ks[idx[len(ts)]].Name(), err)
				}
				return Result{}, fmt.Errorf("round %d: %w", r, err)
			}
		} else {
			for _, pos := range order {
				i := active[pos]
				if h.Begin != nil {
					h.Begin(i, d[i], time.Duration(d[i])*est[i])
				}
				t, err := p.Time(ctx, ks[i], d[i], next%sets)
				if err != nil {
					return Result{}, fmt.Errorf("round %d %s: %w", r, ks[i].Name(), err)
				}
				next += d[i]
				res.Samples[i] = append(res.Samples[i], float64(t)/float64(time.Microsecond))
			}
		}
		if h.Round != nil {
			h.Round(r)
		}
		if r+1 < rounds {
			active = race.look(res.Samples, active, r+1)
		}
	}
	res.Left = race.left
	return res, nil
}

// race is Options.Race's state in one Run.
type race struct {
	o     Options
	looks map[int]bool
	keep  []bool
	left  []int // nil until a candidate leaves
}

func newRace(o Options, n int) *race {
	rc := &race{o: o, looks: map[int]bool{}, keep: make([]bool, n)}
	if !o.Race {
		return rc
	}
	for _, m := range o.RaceRule.Looks() {
		rc.looks[m] = true
	}
	for _, k := range o.Keep {
		if k >= 0 && k < n {
			rc.keep[k] = true
		}
	}
	if o.Anchor >= 0 && o.Anchor < n {
		rc.keep[o.Anchor] = true
	}
	return rc
}

// look is the race's look after pairs rounds (a no-op off its schedule):
// it returns the candidates still in, without those confirmed slower than
// the best so far, and records when they left.
func (rc *race) look(samples [][]float64, active []int, pairs int) []int {
	if !rc.looks[pairs] {
		return active
	}
	best, bestMed := -1, math.Inf(1)
	for _, i := range active {
		if rc.keep[i] && i != rc.o.Anchor || len(samples[i]) < pairs {
			continue
		}
		if m := stats.Median(samples[i][:pairs]); m < bestMed {
			best, bestMed = i, m
		}
	}
	if best < 0 {
		return active
	}
	still := active[:0:0]
	for _, i := range active {
		if !rc.keep[i] && i != best && len(samples[i]) >= pairs && rc.far(samples[i][:pairs], bestMed) &&
			stats.RaceOut(samples[best][:pairs], samples[i][:pairs], rc.o.RaceRule) {
			if rc.left == nil {
				rc.left = make([]int, len(rc.keep))
			}
			rc.left[i] = pairs
			continue
		}
		still = append(still, i)
	}
	return still
}

// far reports whether every sample of c is slower than the best's median
// bestMed by more than Options.RaceNear (always, with no guard): only then
// may c leave (Options.RaceNear).
func (rc *race) far(c []float64, bestMed float64) bool {
	if rc.o.RaceNear < 0 {
		return true
	}
	return len(c) > 0 && slices.Min(c) > bestMed*(1+rc.o.RaceNear)
}

// Sets returns how many input/output sets rotate so that their total size
// exceeds twice the last-level cache: clamp(ceil(2·cache / perSet), 1, maxSets),
// also capped so that sets·perSet stays within memBudget (when > 0).
func Sets(perSet, cache, memBudget int64, maxSets int) int {
	if perSet <= 0 {
		return 1
	}
	n := int((2*cache + perSet - 1) / perSet)
	n = min(max(n, 1), maxSets)
	if memBudget > 0 {
		for n > 1 && int64(n)*perSet > memBudget {
			n--
		}
	}
	return n
}
