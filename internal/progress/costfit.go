package progress

import (
	"math"

	"gonum.org/v1/gonum/mat"
)

// A CostFit estimates a step's duration as a non-negative combination of its
// features (for a sweep's cells: 1, FLOPs, bytes moved), fitted by least
// squares to the durations of the steps that did work so far. One weight
// per step (FLOPs plus a constant) mispredicts a GPU sweep badly: there a
// cell's time is mostly verification, which grows with the bytes of its
// outputs, not with its FLOPs (the H200's first cell predicted 30 minutes
// for a sweep of 2¼, and mid-sweep 8 s were "remaining" for 45).
type CostFit struct {
	k     int
	scale []float64 // per feature: the largest |value| over every step (1 if none)
	xtx   [][]float64
	xty   []float64
	n     int
	coef  []float64 // per scaled feature; nil until a fit exists
}

// NewCostFit returns the fit for steps with features feats (one vector
// per step, all of one length; the scale of each feature is its largest
// |value|), nil when there are none.
func NewCostFit(feats [][]float64) *CostFit {
	if len(feats) == 0 || len(feats[0]) == 0 {
		return nil
	}
	k := len(feats[0])
	f := &CostFit{k: k, scale: make([]float64, k), xty: make([]float64, k)}
	f.xtx = make([][]float64, k)
	for i := range f.xtx {
		f.xtx[i] = make([]float64, k)
	}
	for _, v := range feats {
		for j := 0; j < k && j < len(v); j++ {
			f.scale[j] = max(f.scale[j], math.Abs(v[j]))
		}
	}
	for j := range f.scale {
		if f.scale[j] == 0 {
			f.scale[j] = 1
		}
	}
	return f
}

// Add records that a step with features v took secs seconds, and refits.
func (f *CostFit) Add(v []float64, secs float64) {
	x := f.scaled(v)
	for i := 0; i < f.k; i++ {
		for j := 0; j < f.k; j++ {
			f.xtx[i][j] += x[i] * x[j]
		}
		f.xty[i] += x[i] * secs
	}
	f.n++
	if f.n >= f.k {
		f.coef = f.solve()
	}
}

func (f *CostFit) scaled(v []float64) []float64 {
	x := make([]float64, f.k)
	for j := 0; j < f.k && j < len(v); j++ {
		x[j] = v[j] / f.scale[j]
	}
	return x
}

// Predict is the fitted duration (seconds) of steps whose features sum to v;
// ok is false before a fit exists.
func (f *CostFit) Predict(v []float64) (secs float64, ok bool) {
	if f == nil || f.coef == nil {
		return 0, false
	}
	x := f.scaled(v)
	for j := range x {
		secs += f.coef[j] * x[j]
	}
	return secs, true
}

// Features returns the number of features per step (0 for a nil fit).
func (f *CostFit) Features() int {
	if f == nil {
		return 0
	}
	return f.k
}

// solve is non-negative least squares by trying every subset of the
// features (k ≤ 3: at most 7 small systems): among the subsets whose
// normal equations have a solution with every coefficient ≥ 0, the one with
// the smallest residual. nil when none has (too few distinct steps).
func (f *CostFit) solve() []float64 {
	var best []float64
	bestRes := math.Inf(1)
	for mask := 1; mask < 1<<f.k; mask++ {
		var idx []int
		for j := 0; j < f.k; j++ {
			if mask&(1<<j) != 0 {
				idx = append(idx, j)
			}
		}
		a := mat.NewDense(len(idx), len(idx), nil)
		b := mat.NewVecDense(len(idx), nil)
		for r, i := range idx {
			for c, j := range idx {
				a.Set(r, c, f.xtx[i][j])
			}
			b.SetVec(r, f.xty[i])
		}
		var c mat.VecDense
		if err := c.SolveVec(a, b); err != nil {
			continue // singular or near it: these features do not separate the steps
		}
		coef := make([]float64, f.k)
		neg := false
		for r, j := range idx {
			if c.AtVec(r) < 0 {
				neg = true
			}
			coef[j] = c.AtVec(r)
		}
		if neg {
			continue
		}
		// Residual up to the constant yᵀy: cᵀXᵀXc − 2cᵀXᵀy.
		res := 0.0
		for i := 0; i < f.k; i++ {
			for j := 0; j < f.k; j++ {
				res += coef[i] * f.xtx[i][j] * coef[j]
			}
			res -= 2 * coef[i] * f.xty[i]
		}
		if res < bestRes {
			best, bestRes = coef, res
		}
	}
	return best
}
