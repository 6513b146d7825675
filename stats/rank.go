package stats

import (
	"math"
	"slices"
	"sort"
)

// Exact null distributions are computed up to these sizes; beyond them the
// normal approximation with continuity correction is used (it is then
// accurate to well under 0.1 % in coverage).
const (
	maxExactSignedRank = 200  // n pairs
	maxExactRankSum    = 2500 // n·m
)

// signedRankInterval returns the Hodges–Lehmann estimate and the exact
// Wilcoxon signed-rank interval for the centre of x (log scale), its
// coverage, and whether the coverage reaches conf. x must be non-empty.
// The N = n(n+1)/2 Walsh averages are never all formed: the three or four
// order statistics needed are selected from them (walshSelect), so a look at
// thousands of pairs costs O(n log n), not O(n² log n).
func signedRankInterval(x []float64, conf float64) (est, lo, hi, level float64, ok bool) {
	n := len(x)
	s := slices.Clone(x)
	slices.Sort(s)
	total := n * (n + 1) / 2
	c, level, ok := critical(signedRankCDF(n), (1-conf)/2)
	if total%2 == 1 {
		est = walshSelect(s, total/2)
	} else {
		est = (walshSelect(s, total/2-1) + walshSelect(s, total/2)) / 2
	}
	return est, walshSelect(s, c), walshSelect(s, total-1-c), level, ok
}

// walshCount returns how many Walsh averages (s_i + s_j)/2, i ≤ j, of the
// sorted s are ≤ v. The average is computed exactly as it is everywhere
// else, so counts and values agree bit for bit. O(n): b, the largest i
// (over all i) with (s_i + s_j)/2 ≤ v, only moves left as j grows.
func walshCount(s []float64, v float64) int {
	n, count := len(s), 0
	b := n - 1
	for j := 0; j < n; j++ {
		for b >= 0 && (s[b]+s[j])/2 > v {
			b--
		}
		if b < 0 {
			break
		}
		count += min(b, j) + 1
	}
	return count
}

// walshSelect returns the k-th smallest (from 0) Walsh average of the
// sorted, non-empty s: it bisects on the value, counting with walshCount,
// until at most a few n averages lie in the bracket, then lists and sorts
// those. The result is the same value sorting all n(n+1)/2 averages gives.
func walshSelect(s []float64, k int) float64 {
	n := len(s)
	lo, hi := s[0], s[n-1] // (s_0+s_0)/2 = s_0 is the smallest average, s_{n−1} the largest
	if walshCount(s, lo) > k {
		return lo
	}
	clo, chi := walshCount(s, lo), n*(n+1)/2 // invariant: clo ≤ k < chi, answer in (lo, hi]
	for step := 0; chi-clo > 4*n+16; step++ {
		// Probe where the counts say the k-th average lies (linear
		// interpolation), every other step halfway, so the bracket
		// shrinks fast on smooth data and surely on any.
		mid := lo + (hi-lo)/2
		if step%2 == 0 {
			f := (float64(k-clo) + 0.5) / float64(chi-clo)
			mid = lo + (hi-lo)*min(max(f, 0.01), 0.99)
		}
		if !(mid > lo && mid < hi) { // no float between: every average in (lo, hi] is hi
			if mid = lo + (hi-lo)/2; !(mid > lo && mid < hi) {
				return hi
			}
		}
		if c := walshCount(s, mid); c > k {
			hi, chi = mid, c
		} else {
			lo, clo = mid, c
		}
	}
	// List the averages in (lo, hi]: for each j, the i ≤ j with lo < (s_i+s_j)/2 ≤ hi.
	in := make([]float64, 0, chi-clo)
	for j := range s {
		i0 := sort.Search(j+1, func(i int) bool { return (s[i]+s[j])/2 > lo })
		for i := i0; i <= j; i++ {
			w := (s[i] + s[j]) / 2
			if w > hi {
				break
			}
			in = append(in, w)
		}
	}
	slices.Sort(in)
	return in[k-clo]
}

// rankSumInterval returns the Hodges–Lehmann estimate and the exact
// Mann–Whitney interval for the shift y − x (log scale), its coverage, and
// whether the coverage reaches conf. x and y must be non-empty.
func rankSumInterval(x, y []float64, conf float64) (est, lo, hi, level float64, ok bool) {
	d := make([]float64, 0, len(x)*len(y))
	for _, xi := range x {
		for _, yj := range y {
			d = append(d, yj-xi)
		}
	}
	slices.Sort(d)
	c, level, ok := critical(rankSumCDF(len(x), len(y)), (1-conf)/2)
	return sortedMedian(d), d[c], d[len(d)-1-c], level, ok
}

// critical returns the largest c ≥ 0 with cdf(c) ≤ tail, the coverage
// 1 − 2·cdf(c) of the interval [v_(c+1), v_(N−c)], and whether such a c
// exists. When none does, c = 0 (the widest interval) and ok is false.
func critical(cdf func(int) float64, tail float64) (c int, level float64, ok bool) {
	const eps = 1e-12 // float slack for exact ties with tail
	if cdf(0) > tail+eps {
		return 0, 1 - 2*cdf(0), false
	}
	// cdf is non-decreasing: bisect for the last c with cdf(c) ≤ tail (the
	// statistic never exceeds 2^31, far past any n·m here).
	lo, hi := 0, 1
	for cdf(hi) <= tail+eps {
		lo, hi = hi, 2*hi
	}
	for hi-lo > 1 { // cdf(lo) ≤ tail < cdf(hi)
		mid := lo + (hi-lo)/2
		if cdf(mid) <= tail+eps {
			lo = mid
		} else {
			hi = mid
		}
	}
	c = lo
	return c, 1 - 2*cdf(c), true
}

// signedRankCDF returns t ↦ P(T⁺ ≤ t) for the Wilcoxon signed-rank
// statistic of n pairs under the null (each rank's sign a fair coin):
// exact by the recursion p_k(t) = ½·p_{k−1}(t) + ½·p_{k−1}(t−k) for
// n ≤ maxExactSignedRank, else normal with mean n(n+1)/4 and variance
// n(n+1)(2n+1)/24.
func signedRankCDF(n int) func(int) float64 {
	top := n * (n + 1) / 2
	if n > maxExactSignedRank {
		mu := float64(top) / 2
		sd := math.Sqrt(float64(n) * float64(n+1) * float64(2*n+1) / 24)
		return func(t int) float64 { return normalCDF((float64(t) + 0.5 - mu) / sd) }
	}
	p := make([]float64, top+1)
	p[0] = 1
	for k := 1; k <= n; k++ {
		for t := k * (k + 1) / 2; t >= 0; t-- {
			if t >= k {
				p[t] = (p[t] + p[t-k]) / 2
			} else {
				p[t] /= 2
			}
		}
	}
	return cumulative(p)
}

// rankSumCDF returns u ↦ P(U ≤ u) for the Mann–Whitney statistic of samples
// of sizes n and m under the null: exact by the recursion
// P_{i,j}(u) = i/(i+j)·P_{i−1,j}(u−j) + j/(i+j)·P_{i,j−1}(u) for
// n·m ≤ maxExactRankSum, else normal with mean nm/2 and variance
// nm(n+m+1)/12.
func rankSumCDF(n, m int) func(int) float64 {
	if n*m > maxExactRankSum {
		mu := float64(n*m) / 2
		sd := math.Sqrt(float64(n) * float64(m) * float64(n+m+1) / 12)
		return func(u int) float64 { return normalCDF((float64(u) + 0.5 - mu) / sd) }
	}
	// prev[i] = P_{i,j−1}, cur[i] = P_{i,j}, as polynomials in u.
	prev := make([][]float64, n+1)
	for i := range prev {
		prev[i] = []float64{1} // P_{i,0}: U = 0
	}
	for j := 1; j <= m; j++ {
		cur := make([][]float64, n+1)
		cur[0] = []float64{1} // P_{0,j}: U = 0
		for i := 1; i <= n; i++ {
			q := make([]float64, i*j+1)
			fi, fj := float64(i)/float64(i+j), float64(j)/float64(i+j)
			for u, v := range cur[i-1] { // largest is an x: it exceeds all j y's
				q[u+j] += fi * v
			}
			for u, v := range prev[i] { // largest is a y
				q[u] += fj * v
			}
			cur[i] = q
		}
		prev = cur
	}
	return cumulative(prev[n])
}

// cumulative turns a probability mass function into its CDF, 0 below the
// support and 1 above it.
func cumulative(p []float64) func(int) float64 {
	c := make([]float64, len(p))
	s := 0.0
	for i, v := range p {
		s += v
		c[i] = s
	}
	return func(t int) float64 {
		switch {
		case t < 0:
			return 0
		case t >= len(c):
			return 1
		}
		return c[t]
	}
}

func normalCDF(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }
