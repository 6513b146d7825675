package stats

// This file is the race (issue 17): in a cell of many candidates, one
// confirmed slower than the best so far by a clear margin stops being
// timed.

// DefaultRaceOptions returns the race's rule: the sequential rule
// (Sequential) with the practical band at ±10% (MinGain = MaxRegress =
// 0.10: "slower" means slower than the best by more than 10%, a clear
// margin), overall confidence 0.90 over three looks at 6, 12 and 24 pairs
// (0.967 per look: the exact signed-rank interval reaches it at 6 pairs,
// where it is the range of the Walsh averages — every pair of the six must
// read the candidate more than 10% slower).
//
// What it bounds: a candidate whose true ratio to the best is within the
// margin leaves with probability at most 0.10 over all looks (such a
// candidate does not win by more than the margin anyway); the true best
// leaves only when an interval misses its ratio by more than the margin,
// which at six pairs needs every pair misread by more than 10% in one
// direction (probability at most 2⁻⁶ per look under any symmetric noise;
// never seen on the GPU, whose pairs spread by about 1%).
func DefaultRaceOptions() SequentialOptions {
	o := DefaultOptions()
	o.MinGain, o.MaxRegress, o.Confidence = 0.10, 0.10, 0.90
	return SequentialOptions{Options: o, First: 6, Growth: 2, MaxLooks: 3}
}

// RaceOut reports whether candidate c leaves the race against the best so
// far, best: Sequential on their pairs (the same rounds) gives Slower —
// c/best above 1 + MaxRegress at the rule's confidence. An invalid sample
// (a zero time) keeps it in.
func RaceOut(best, c []float64, o SequentialOptions) bool {
	n := min(len(best), len(c))
	if n == 0 {
		return false
	}
	s, err := Sequential(best[:n], c[:n], o)
	return err == nil && s.Verdict == Slower
}
