package stats

import (
	"fmt"
	"math"
)

// Undecided is the verdict of a comparison whose interval still straddles
// an edge of the practical band when its rounds ended (fixed rounds, or the
// sequential rule's looks or budget ran out), or that had too few pairs:
// more rounds might decide it, these could not.
const Undecided Verdict = "undecided"

// SequentialOptions configure Sequential, the rule that adds paired rounds
// to a comparison until it is decided.
//
// The rule looks at the pairs at fixed counts n_1 < n_2 < … < n_K (Looks):
// n_1 = First, n_{k+1} = ⌈Growth·n_k⌉, K = MaxLooks. At every look it forms
// the exact signed-rank (Hodges–Lehmann) interval of Paired, spike screen
// included, at the per-look confidence 1 − α/K (α = 1 − Confidence), and
// classifies it with DecideBand. The first look that is not Undecided
// decides; later pairs do not change the verdict.
//
// Why an α split equally over a fixed schedule of looks (a Bonferroni
// "alpha-spending" of the repeated-confidence-interval kind), and not a
// Pocock or O'Brien–Fleming boundary or a confidence sequence:
//
//   - It is valid without a model of how the looks depend on each other:
//     each look's interval misses the true ratio with probability at most
//     α/K (exact signed-rank coverage), so by the union bound all K
//     intervals cover it at once with probability at least 1 − α. Every
//     verdict the rule can give (faster, slower, tie = inside the band) is
//     then true, whatever the data make the rule stop on, and a cut of the
//     rounds by a time budget is one more look at no extra cost (it takes
//     the place of the next scheduled one). Group-sequential boundaries
//     spend α more cleverly but need the joint law of the looks, which for
//     a rank statistic with a spike screen under drift is only asymptotic.
//   - It reuses the one interval the rest of tilefit trusts: exact at small
//     n, distribution-free for symmetric noise, robust to spikes.
//   - Geometric looks keep K small (10 looks reach 6144 pairs), so the price
//     of the repeated looks is modest: the per-look z grows from 1.96 to
//     2.81, and a comparison stops at most Growth times later than the
//     first count that would have decided it.
//   - It is a pure function of the samples: any stored comparison can be
//     replayed and gives the verdict the measurement stopped on.
//
// A confidence sequence (valid at every n) was the alternative; it was not
// tried, because ten looks already meet the targets (docs/rounds.md).
type SequentialOptions struct {
	// Options give the practical band (MinGain, MaxRegress), the overall
	// confidence 1 − α over all looks (Confidence), MinPairs and the spike
	// screen (OutlierK). Resamples and Seed are not used.
	Options
	// First is the number of pairs at the first look (default 12).
	First int
	// Growth is the ratio between successive looks, > 1 (default 2).
	Growth float64
	// MaxLooks is the number of looks α is split over (default 10: looks at
	// 12, 24, …, 6144 pairs).
	MaxLooks int
}

// DefaultSequentialOptions returns DefaultOptions with First = 12,
// Growth = 2 and MaxLooks = 10.
func DefaultSequentialOptions() SequentialOptions {
	return SequentialOptions{Options: DefaultOptions(), First: 12, Growth: 2, MaxLooks: 10}
}

func (o SequentialOptions) check() error {
	if err := o.Options.check(); err != nil {
		return err
	}
	switch {
	case o.First < 1:
		return fmt.Errorf("stats: first look %d < 1", o.First)
	case !(o.Growth > 1) || math.IsInf(o.Growth, 0):
		return fmt.Errorf("stats: growth %v not finite and > 1", o.Growth)
	case o.MaxLooks < 1 || o.MaxLooks > 64:
		return fmt.Errorf("stats: max looks %d not in [1, 64]", o.MaxLooks)
	}
	return nil
}

// Looks returns the pair counts n_1 < … < n_K at which the rule looks:
// n_1 = First, n_{k+1} = max(⌈Growth·n_k⌉, n_k + 1), K = MaxLooks. It
// returns nil when o is invalid.
func (o SequentialOptions) Looks() []int {
	if o.check() != nil {
		return nil
	}
	out := make([]int, 0, o.MaxLooks)
	n := o.First
	for range o.MaxLooks {
		out = append(out, n)
		next := math.Ceil(o.Growth * float64(n))
		if next > math.MaxInt32 {
			break
		}
		n = max(int(next), n+1)
	}
	return out
}

// LookConfidence returns 1 − (1 − Confidence)/MaxLooks, the confidence of
// the interval at each look.
func (o SequentialOptions) LookConfidence() float64 {
	return 1 - (1-o.Confidence)/float64(o.MaxLooks)
}

// DecideBand classifies an interval [lo, hi] for the ratio B/A against the
// practical band [1 − MinGain, 1 + MaxRegress]:
//
//	Faster     if hi < 1 − MinGain
//	Slower     if lo > 1 + MaxRegress
//	Tie        if 1 − MinGain ≤ lo and hi ≤ 1 + MaxRegress (inside the band)
//	Undecided  otherwise: the interval straddles an edge (also on NaN).
//
// Decide, the fixed-round rule, is the same rule: a tie is a finding (the
// difference is within the margins), not the absence of one.
func DecideBand(lo, hi float64, o Options) Verdict {
	switch {
	case hi < 1-o.MinGain:
		return Faster
	case lo > 1+o.MaxRegress:
		return Slower
	case lo >= 1-o.MinGain && hi <= 1+o.MaxRegress:
		return Tie
	}
	return Undecided
}

// A SequentialComparison is the outcome of Sequential.
type SequentialComparison struct {
	// Comparison is Paired's analysis of the first Pairs pairs at the
	// per-look confidence, with Verdict set by DecideBand (Undecided also
	// when the pairs are too few for the look's confidence).
	Comparison
	// Look is the 1-based index of the deciding look, or of the last look
	// made when none decided.
	Look int
	// Pairs is the number of pairs at that look (the prefix analysed).
	Pairs int
	// Next is the pair count of the next scheduled look when the verdict is
	// Undecided (0 when decided, or when the looks are spent): where a
	// measurement goes on.
	Next int
}

// Decided reports whether the comparison reached faster, slower or tie.
func (s SequentialComparison) Decided() bool { return s.Verdict != Undecided }

// Sequential replays the sequential rule (see SequentialOptions) on paired
// samples a[i], b[i] from round i, as a measurement that added rounds in
// batches up to len(a) pairs would have applied it: it looks at every
// scheduled count n_k ≤ len(a) and stops at the first decided look. When
// len(a) is not a scheduled count (a budget cut the rounds short) and the
// looks are not spent, it makes one more look at len(a), in place of the
// next scheduled one. Pairs past the last scheduled look are not used.
//
// The verdict is wrong (a faster or slower on an A/A, a tie or the wrong
// direction when the true ratio lies outside the band) with probability at
// most 1 − Confidence, however many looks were made. It returns an error
// when a and b differ in length, are empty, or hold a sample that is not
// finite and positive, or when o is invalid. a and b are not modified.
func Sequential(a, b []float64, o SequentialOptions) (SequentialComparison, error) {
	if err := o.check(); err != nil {
		return SequentialComparison{}, err
	}
	if len(a) != len(b) {
		return SequentialComparison{}, fmt.Errorf("%w: %d and %d", errLength, len(a), len(b))
	}
	if err := checkSamples("a", a); err != nil {
		return SequentialComparison{}, err
	}
	if err := checkSamples("b", b); err != nil {
		return SequentialComparison{}, err
	}
	looks := o.Looks()
	n := len(a)
	var counts []int
	for _, m := range looks {
		if m > n {
			break
		}
		counts = append(counts, m)
	}
	if len(counts) < len(looks) && (len(counts) == 0 || counts[len(counts)-1] < n) {
		counts = append(counts, n) // a look at the cut, in place of the next one
	}
	po := o.Options
	po.Confidence = o.LookConfidence()
	var out SequentialComparison
	for k, m := range counts {
		c, err := Paired(a[:m], b[:m], po)
		if err != nil {
			return SequentialComparison{}, err
		}
		if hasTooFew(c.Warnings) {
			c.Verdict = Undecided
		} else {
			c.Verdict = DecideBand(c.Lo, c.Hi, o.Options)
		}
		out = SequentialComparison{Comparison: c, Look: k + 1, Pairs: m}
		if c.Verdict != Undecided {
			return out, nil
		}
	}
	for _, m := range looks { // the next scheduled look after the pairs analysed
		if m > out.Pairs {
			out.Next = m
			break
		}
	}
	if out.Look >= len(looks) {
		out.Next = 0 // the looks are spent
	}
	return out, nil
}

// hasTooFew reports whether Paired forced its verdict for lack of pairs.
func hasTooFew(ws []string) bool {
	for _, w := range ws {
		if len(w) >= len(tooFew) && w[:len(tooFew)] == tooFew {
			return true
		}
	}
	return false
}

// ExpectedFalse returns the number of false verdicts to expect, at most,
// among n comparisons each judged at confidence conf: (1 − conf)·n. Each
// comparison ends in a false verdict with probability at most 1 − conf
// (for the sequential rule: summed over its looks; an undecided comparison
// is never false), so the bound holds however the comparisons depend on
// each other. On an A/A, where a false verdict needs an interval that misses
// by more than the margin, the count is usually far lower.
func ExpectedFalse(n int, conf float64) float64 {
	return float64(n) * (1 - conf)
}

// AnchoredMedian returns the typical time of a candidate that was timed in
// the first len(c) rounds of a run only (its comparison was decided and it
// left), on the scale of the whole run, whose anchor was timed in every
// round:
//
//	median(anchor) · median_i(c_i / anchor_i),  i < min(len(c), len(anchor)).
//
// Drift between the rounds c was in and the later ones cancels in the
// paired ratio, so candidates that left at different rounds can be ranked
// against each other and against those that stayed. NaN when either slice is
// empty. Neither slice is modified.
func AnchoredMedian(anchor, c []float64) float64 {
	n := min(len(anchor), len(c))
	if n == 0 {
		return math.NaN()
	}
	return Median(anchor) * Median(pairRatios(anchor[:n], c[:n], nil))
}
