package stats

import (
	"math"
	"slices"
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
func signedRankInterval(x []float64, conf float64) (est, lo, hi, level float64, ok bool) {
	n := len(x)
	w := make([]float64, 0, n*(n+1)/2)
	for i := range x {
		for j := i; j < n; j++ {
			w = append(w, (x[i]+x[j])/2)
		}
	}
	slices.Sort(w)
	c, level, ok := critical(signedRankCDF(n), (1-conf)/2)
	return sortedMedian(w), w[c], w[len(w)-1-c], level, ok
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
	for cdf(c+1) <= tail+eps {
		c++
	}
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
