package stats

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// A Weighted cell is one (shape, M) cell of a production chunk: Weight is
// its number of calls per chunk, A and B its paired samples (µs per call).
//
// B may be shorter than A: a candidate that left adaptive rounds early
// holds the first len(B) rounds, paired with A's first len(B); A, timed in
// every round, gives the cell's scale over all of its samples (as
// AnchoredMedian). With Unpaired, A and B were not timed in the same
// rounds (two runs of a resumed sweep): the cell's ratio is
// median(B)/median(A), and drift between the runs is not cancelled.
type Weighted struct {
	Weight   float64
	A, B     []float64
	Unpaired bool
}

// pairs is the number of pairs of a paired cell, or the smaller sample of
// an unpaired one.
func (c Weighted) pairs() int { return min(len(c.A), len(c.B)) }

// ratio is the cell's ratio B/A: the median paired ratio over the first
// len(B) rounds, or median(B)/median(A) when unpaired.
func (c Weighted) ratio() float64 {
	if c.Unpaired {
		return Median(c.B) / Median(c.A)
	}
	return Median(pairRatios(c.A[:len(c.B)], c.B, nil))
}

// A Total is the production-weighted time of a chunk under A and under B.
// Each cell contributes its A time scaled by its paired ratio, so drift
// between rounds cancels as it does within a cell:
//
//	A = Σ_c w_c·median(a_c),  ρ_c = median_i(b_ci / a_ci)  (i < len(b_c))
//	B = Σ_c w_c·median(a_c)·ρ_c,  Ratio = B/A
//
// (an Unpaired cell's ρ_c is median(b_c)/median(a_c), so it adds
// w_c·median(b_c) to B)
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
// order statistics). A cell whose B is shorter than A draws len(a_c)
// indices for median(a*) and, apart, len(b_c) pair indices among the first
// len(b_c) rounds for the ratios; an Unpaired cell draws A and B apart and
// uses median(b*)/median(a*). The generator is PCG(o.Seed, const), so the
// result is deterministic. The verdict is Decide(Lo, Hi), or Undecided with the
// warning "too few pairs to decide" when a cell with positive weight has
// fewer than MinPairs pairs; an unpaired cell adds a warning. It returns an
// error when there are no cells, a weight is negative or not finite, all
// weights are 0, a paired cell's B is longer than its A, a cell holds an
// invalid sample, or o is invalid (including Resamples < 1). cells are not
// modified.
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
	fewest, unpaired := -1, 0
	for i, c := range cells {
		if !(c.Weight >= 0) || math.IsInf(c.Weight, 0) {
			return Total{}, fmt.Errorf("stats: cell %d: weight %v not finite and ≥ 0", i, c.Weight)
		}
		if !c.Unpaired && len(c.A) < len(c.B) {
			return Total{}, fmt.Errorf("stats: cell %d: %w: %d and %d (B may be a prefix of A, not longer)", i, errLength, len(c.A), len(c.B))
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
		t.B += c.Weight * ma * c.ratio()
		if fewest < 0 || c.pairs() < cells[fewest].pairs() {
			fewest = i
		}
		if c.Unpaired {
			unpaired++
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
			switch {
			case c.Unpaired:
				for range n {
					bufA = append(bufA, c.A[rng.IntN(n)])
				}
				for range len(c.B) {
					bufR = append(bufR, c.B[rng.IntN(len(c.B))])
				}
			case len(c.B) < n: // B left early: its pairs are the first len(B) rounds
				for range n {
					bufA = append(bufA, c.A[rng.IntN(n)])
				}
				for range len(c.B) {
					j := rng.IntN(len(c.B))
					bufR = append(bufR, c.B[j]/c.A[j])
				}
			default:
				for range n {
					j := rng.IntN(n)
					bufA = append(bufA, c.A[j])
					bufR = append(bufR, c.B[j]/c.A[j])
				}
			}
			ma := medianInPlace(bufA)
			sa += c.Weight * ma
			if c.Unpaired {
				sb += c.Weight * medianInPlace(bufR) // median(b*)/median(a*) × median(a*)
			} else {
				sb += c.Weight * ma * medianInPlace(bufR)
			}
		}
		ratios[r] = sb / sa
	}
	slices.Sort(ratios)
	alpha := 1 - o.Confidence
	t.Lo, t.Hi = quantile(ratios, alpha/2), quantile(ratios, 1-alpha/2)

	if unpaired > 0 {
		t.Warnings = append(t.Warnings, fmt.Sprintf("%d %s not timed in the same rounds (different runs): drift between the runs is not cancelled there", unpaired, plural(unpaired, "cell", "cells")))
	}
	if n := cells[fewest].pairs(); n < o.MinPairs {
		t.Verdict = Undecided
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

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// medianInPlace returns the median of xs (non-empty), as Median does,
// reordering xs: a quickselect, linear on average, so that a bootstrap of
// cells with thousands of samples stays fast.
func medianInPlace(xs []float64) float64 {
	n := len(xs)
	k := n / 2
	quickselect(xs, k)
	if n%2 == 1 {
		return xs[k]
	}
	return (slices.Max(xs[:k]) + xs[k]) / 2
}

// quickselect reorders xs so that xs[k] is the k-th smallest, every element
// before it ≤ it and every one after ≥ it. Three-way partitions keep it
// linear when many values are equal (a bootstrap draws duplicates).
func quickselect(xs []float64, k int) {
	lo, hi := 0, len(xs)-1
	for lo < hi {
		// Median of three as the pivot.
		a, b, c := xs[lo], xs[lo+(hi-lo)/2], xs[hi]
		pivot := max(min(a, b), min(max(a, b), c))
		// xs[lo:lt] < pivot, xs[lt:i] == pivot, xs[gt+1:hi+1] > pivot.
		lt, i, gt := lo, lo, hi
		for i <= gt {
			switch {
			case xs[i] < pivot:
				xs[lt], xs[i] = xs[i], xs[lt]
				lt++
				i++
			case xs[i] > pivot:
				xs[gt], xs[i] = xs[i], xs[gt]
				gt--
			default:
				i++
			}
		}
		switch {
		case k < lt:
			hi = lt - 1
		case k > gt:
			lo = gt + 1
		default:
			return
		}
	}
}
