package stats

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// A Weighted cell is one (shape, M) cell of a production chunk: Weight is
// its number of calls per chunk, A and B its paired samples (µs per call).
type Weighted struct {
	Weight float64
	A, B   []float64
}

// A Total is the production-weighted time of a chunk under A and under B.
// Each cell contributes its A time scaled by its paired ratio, so drift
// between rounds cancels as it does within a cell:
//
//	A = Σ_c w_c·median(a_c),  ρ_c = median_i(b_ci / a_ci)
//	B = Σ_c w_c·median(a_c)·ρ_c,  Ratio = B/A
//
// with a confidence interval [Lo, Hi] for Ratio and the verdict of Decide.
// (Σ w·median(b) would mix medians taken in different rounds: on a drifting
// machine a 12 % slowdown could read as a tie.)
type Total struct {
	A, B, Ratio, Lo, Hi float64
	Verdict             Verdict
	Warnings            []string
}

// bootstrapStream is the PCG stream constant paired with Options.Seed.
const bootstrapStream = 0x7469_6c65_6669_7400 // "tilefit\0"

// WeightedTotal returns the production-weighted total of cells (see Total).
// The interval for Ratio is a percentile bootstrap: each of o.Resamples
// resamples draws, in every cell independently, len(a_c) pair indices with
// replacement (a pair's a and b move together), recomputes
// Ratio* = Σ w·median(a*)·median(b*/a*) / Σ w·median(a*), and [Lo, Hi] are
// the (1∓Confidence)/2 quantiles of the Ratio* (linear interpolation between
// order statistics). The generator is PCG(o.Seed, const), so the result is
// deterministic. The verdict is Decide(Lo, Hi), or Tie with the warning "too
// few pairs to decide" when a cell with positive weight has fewer than
// MinPairs pairs. It returns an error when there are no cells, a weight is
// negative or not finite, all weights are 0, a cell's A and B differ in
// length or hold an invalid sample, or o is invalid (including Resamples < 1).
// cells are not modified.
func WeightedTotal(cells []Weighted, o Options) (Total, error) {
	if err := o.check(); err != nil {
		return Total{}, err
	}
	if o.Resamples < 1 {
		return Total{}, fmt.Errorf("stats: resamples %d < 1", o.Resamples)
	}
	if len(cells) == 0 {
		return Total{}, fmt.Errorf("stats: no cells")
	}
	var t Total
	fewest := -1
	for i, c := range cells {
		if !(c.Weight >= 0) || math.IsInf(c.Weight, 0) {
			return Total{}, fmt.Errorf("stats: cell %d: weight %v not finite and ≥ 0", i, c.Weight)
		}
		if len(c.A) != len(c.B) {
			return Total{}, fmt.Errorf("stats: cell %d: %w: %d and %d", i, errLength, len(c.A), len(c.B))
		}
		if err := checkSamples("a", c.A); err != nil {
			return Total{}, fmt.Errorf("cell %d: %w", i, err)
		}
		if err := checkSamples("b", c.B); err != nil {
			return Total{}, fmt.Errorf("cell %d: %w", i, err)
		}
		if c.Weight == 0 {
			continue
		}
		ma := Median(c.A)
		t.A += c.Weight * ma
		t.B += c.Weight * ma * Median(pairRatios(c.A, c.B, nil))
		if fewest < 0 || len(c.A) < len(cells[fewest].A) {
			fewest = i
		}
	}
	if fewest < 0 {
		return Total{}, fmt.Errorf("stats: all weights are 0")
	}
	t.Ratio = t.B / t.A

	rng := rand.New(rand.NewPCG(o.Seed, bootstrapStream))
	ratios := make([]float64, o.Resamples)
	var bufA, bufR []float64
	for r := range ratios {
		var sa, sb float64
		for _, c := range cells {
			if c.Weight == 0 {
				continue
			}
			n := len(c.A)
			bufA, bufR = bufA[:0], bufR[:0]
			for range n {
				j := rng.IntN(n)
				bufA = append(bufA, c.A[j])
				bufR = append(bufR, c.B[j]/c.A[j])
			}
			slices.Sort(bufA)
			slices.Sort(bufR)
			ma := sortedMedian(bufA)
			sa += c.Weight * ma
			sb += c.Weight * ma * sortedMedian(bufR)
		}
		ratios[r] = sb / sa
	}
	slices.Sort(ratios)
	alpha := 1 - o.Confidence
	t.Lo, t.Hi = quantile(ratios, alpha/2), quantile(ratios, 1-alpha/2)

	if n := len(cells[fewest].A); n < o.MinPairs {
		t.Verdict = Tie
		t.Warnings = append(t.Warnings, fmt.Sprintf("%s: cell %d has %d < MinPairs %d", tooFew, fewest, n, o.MinPairs))
		return t, nil
	}
	t.Verdict = Decide(t.Lo, t.Hi, o)
	return t, nil
}

// pairRatios appends b_i/a_i to dst.
func pairRatios(a, b, dst []float64) []float64 {
	for i := range a {
		dst = append(dst, b[i]/a[i])
	}
	return dst
}

// quantile returns the p-quantile of sorted s, interpolating linearly
// between order statistics: h = (len(s)−1)·p, s[⌊h⌋] + (h−⌊h⌋)·(s[⌊h⌋+1] − s[⌊h⌋]).
func quantile(s []float64, p float64) float64 {
	h := float64(len(s)-1) * p
	i := int(math.Floor(h))
	if i+1 >= len(s) {
		return s[len(s)-1]
	}
	return s[i] + (h-float64(i))*(s[i+1]-s[i])
}
