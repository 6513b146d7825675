package builtin

// This file is the exact known-answer contract (issue 17) and the built-in
// operators' declarations of it, with the probabilistic bounds of their
// float64 references.

import (
	"fmt"
	. "github.com/tilefit/tilefit/kernel"
	"math"
)

// gemmLikely is the probabilistic bound of one fp32 accumulation over k
// terms of magnitude sum mag.
func gemmLikely(k int, mag float64) float64 { return LikelyGamma(k) * mag }

// exactLimit is 2²⁴: every partial sum, in units of the inputs' grid, must
// stay below it in magnitude.
const exactLimit = 1 << 24

// meanSquare is the mean of j² over j = 1..a.
func meanSquare(a int) float64 { return float64((a+1)*(2*a+1)) / 6 }

// gemmExactAmp is the largest a (≤ 8) for gemm_f16's exact inputs on K:
// Σ|x·w| ≤ K·a² < 2²⁴ (every partial sum an integer fp32 holds exactly);
// for an fp16 Y also 6·√K·E[j²] ≤ 2¹¹, so that nearly every |Y| stays where
// fp16 holds every integer (a changed term then changes Y's bits). 0 when
// even a = 1 is too large (K ≥ 2²⁴).
func gemmExactAmp(k int, f16 bool) int {
	a := 8
	for a > 1 && f16 && 6*math.Sqrt(float64(k))*meanSquare(a) > 1<<11 {
		a--
	}
	for a > 0 && k*a*a >= exactLimit {
		a--
	}
	return a
}

// gemmExact is gemm_f16's exact check. X and W are integers j, 1 ≤ |j| ≤ a
// (a from gemmExactAmp: 8 for an fp32 Y up to K 2¹⁸, then smaller; for an
// fp16 Y 2 at K 10240, 3 at 2560, 5 at 640, 6 at 320, up to K 2²⁴ − 1 with
// a = 1), exact in fp16. Every product is an integer of magnitude ≤ a², so
// every partial sum any kernel forms — a subset of the K products, added
// in any order or grouping — is an integer of magnitude ≤ K·a² < 2²⁴,
// which fp32 holds exactly: no addition or FMA rounds, and an adder that
// aligns its addends to the largest and keeps a 24-bit window loses
// nothing (the window reaches down to 2⁰). Y is that integer, rounded once
// to Y's type (exact for fp32; for fp16 exact while |Y| ≤ 2¹¹). A lost,
// repeated or misplaced term changes the sum by a non-zero integer (the
// inputs have no zeros), which an fp32 Y always shows and an fp16 Y shows
// while the sum stays in fp16's integer range — for a = 2 at K 10240 that is
// beyond 8 standard deviations of |Y|.
func gemmExact(o *Operator, d Dims) (*Exact, error) {
	k := d["K"]
	y, _, _ := o.Operand("Y")
	a := gemmExactAmp(k, y.DType == F16)
	if a == 0 {
		return nil, fmt.Errorf("K=%d: no integer inputs keep every partial sum of an fp32 accumulation exact (K ≥ 2²⁴)", k)
	}
	n := d["N"]
	draw := Draw{Kind: DrawInt, Max: a}
	return &Exact{
		Draws: []Draw{draw, draw},
		Want: func(in [][]byte, _, i int) float64 {
			sum, _ := DotF16(in[0], in[1], (i/n)*k, (i%n)*k, k)
			return sum
		},
		Covers: "every element of Y exactly (any tile, k order or split-K)",
	}, nil
}

// q8Exact is gemm_q8_f16's exact check. X and Wq are integers j with
// 1 ≤ |j| ≤ a, each group's scale ±2^−e with e uniform in [0, E] (E = 3,
// smaller only past K 2¹⁵): the dequantised weight q·2^−e is exact in fp16
// (8 bits at most), so DequantQ8 does not round and wdq is known exactly;
// every product x·w is a multiple of 2^−E of magnitude ≤ a², so every
// partial sum is a multiple of 2^−E of at most K·a²·2^E < 2²⁴ units of
// 2^−E: exact in fp32, as for gemm_f16. Y is that
// value (fp32, exact). Not covered: the dequantisation's rounding of
// inexact products and subnormal scales (the random check's scales, one
// group in eight below 2⁻¹², exercise them, and wdq is compared exactly
// there too).
func q8Exact(_ *Operator, d Dims) (*Exact, error) {
	k, g, n := d["K"], dimOr(d, "G", 32), d["N"]
	a, e := 8, 3
	for a > 1 && k*a*a<<e >= exactLimit {
		a--
	}
	for e > 0 && k*a*a<<e >= exactLimit {
		e--
	}
	if k*a*a<<e >= exactLimit {
		return nil, fmt.Errorf("K=%d: no integer inputs keep every partial sum of an fp32 accumulation exact (K ≥ 2²⁴)", k)
	}
	return &Exact{
		Draws: []Draw{{Kind: DrawInt, Max: a}, {Kind: DrawInt, Max: a}, {Kind: DrawPow2, Lo: -e, Hi: 0}},
		Want: func(in [][]byte, out, i int) float64 {
			if out == 4 { // wdq
				return f16At16(q8Weight(in, i/k, i%k, k, g))
			}
			m, c := i/n, i%n
			var sum float64
			for kk := 0; kk < k; kk++ {
				sum += f16At(in[0], m*k+kk) * f16At16(q8Weight(in, c, kk, k, g))
			}
			return sum
		},
		Covers: "Y and wdq exactly (power-of-two scales: the dequantisation does not round; its rounding and subnormal scales are the random check's)",
	}, nil
}

// f16At16 is the value of fp16 bit pattern h.
func f16At16(h uint16) float64 { return float64(f16Table[h]) }

// hcUpExact is hc_up_f16's exact check. X, W and H are integers j with
// 1 ≤ |j| ≤ a (a = 2; 1 past K 2¹⁹). Each stream's accumulator y_c is an
// integer with |y_c| ≤ K·a² (exact in fp32, as for gemm_f16), and the
// epilogue's s = y₀·h₀, s = fma(y_c, h_c, s) stays an integer of magnitude
// ≤ 4·K·a³ < 2²⁴: no step rounds; ¼·s is exact (a power of two), so mixed
// (fp32) is mix = ¼·Σ_c y_c·h_c exactly and mixh is mix rounded once to
// fp16. A lost term changes one y_c by x·w ≠ 0 and mix by at least ¼, which
// fp16 shows while |mix| < 2⁹ (nearly every element at K 320: |mix| is about
// 2·√K).
func hcUpExact(_ *Operator, d Dims) (*Exact, error) {
	k := d["K"]
	a := 2
	if 4*k*a*a*a >= exactLimit {
		a = 1
	}
	if 4*k*a*a*a >= exactLimit {
		return nil, fmt.Errorf("K=%d: no integer inputs keep hc_up's mix exact in fp32 (4·K ≥ 2²⁴)", k)
	}
	draw := Draw{Kind: DrawInt, Max: a}
	return &Exact{
		Draws: []Draw{draw, draw, draw},
		Want: func(in [][]byte, _, i int) float64 {
			mix, _ := hcUpRef(d, in, i)
			return mix
		},
		Covers: "mixh and mixed exactly, the 4-stream mix included (integers: no step rounds)",
	}, nil
}

// swigluExactScale is t of swiglu_f16's exact inputs: ⌊log₂(K/32)⌋, so
// that K·2^−t ≥ 32 (t < 0 for K < 32).
func swigluExactScale(k int) int { return int(math.Floor(math.Log2(float64(k) / 32))) }

// swigluExact is swiglu_f16's exact check. silu is nonlinear and its
// exponential is an approximation (ex2.approx on CUDA, the C library's
// expf on the CPU), so the inputs steer the gate to where silu is the
// identity in fp32: X ∈ {1, 2} and Wg ∈ {1, 2}·2^−t (positive; t from
// swigluExactScale), Wu ∈ ±{1, 2}·2^−t. Then g = Σ x·wg ≥ K·2^−t ≥ 32, and
// g, u are multiples of 2^−t of at most 4·K units (< 2²⁴: exact in fp32, as
// for gemm_f16); e^−g < 2⁻⁴⁶, so 1 + e^−g rounds to 1 and silu(g) = g/1 = g
// exactly whatever the exponential's error. h is fp16(fp32(g·u)), the
// epilogue's own rounding of the product, computed here in float32 — every
// correct kernel gives these bits. A lost term changes u by ≥ 2^−t and h by
// ≥ 32·2^−t, which fp16 shows in nearly every element (|h| ≈ 70–500 at the
// strata K); a term lost from the gate alone changes g by a relative
// 1/(2.25·K) and shows only where it crosses an fp16 rounding boundary (a
// few elements in ten). Not covered: silu's curved part (g below ~17: the
// exponential, the add and the division rounding) and negative gates — the
// random check's float64 bound covers those.
func swigluExact(_ *Operator, d Dims) (*Exact, error) {
	k, n := d["K"], d["N"]
	t := swigluExactScale(k)
	a := 2
	if 4*k >= exactLimit {
		a = 1
	}
	if k >= exactLimit {
		return nil, fmt.Errorf("K=%d: no integer inputs keep the gate and up accumulations exact in fp32 (K ≥ 2²⁴)", k)
	}
	return &Exact{
		Draws: []Draw{{Kind: DrawInt, Max: a, Positive: true}, {Kind: DrawInt, Max: a, Lo: -t, Positive: true}, {Kind: DrawInt, Max: a, Lo: -t}},
		Want: func(in [][]byte, _, i int) float64 {
			m, c := i/n, i%n
			g, _ := DotF16(in[0], in[1], m*k, c*k, k)
			u, _ := DotF16(in[0], in[2], m*k, c*k, k)
			p := float32(g) * float32(u)
			return float64(float32(p)) // the product rounded once to fp32
		},
		Covers: "both GEMMs and the product exactly, silu held at its identity (gate ≥ 32); silu's curved part and negative gates are the random check's",
	}, nil
}
