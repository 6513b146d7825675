package kernel

// This file is the exact known-answer contract (issue 17) and the error
// constants of the float64 references with their probabilistic bound.

import "math"

// The error bound's constants of the GEMM references: an fp32 FMA chain
// over K terms is within K·u·Σ|x·w| of the exact sum (u = 2⁻²⁴, first
// order); GemmSafety doubles that.
const (
	// GemmSafety is c in γ = K·2⁻²⁴·c.
	GemmSafety = 2.0
	// UnitF32 is the fp32 unit roundoff 2⁻²⁴.
	UnitF32 = 1.0 / (1 << 24)
	// UnitF16 is the fp16 unit roundoff 2⁻¹¹ (output rounding).
	UnitF16 = 1.0 / (1 << 11)
	// HalfSubF16 is half the smallest fp16 subnormal, 2⁻²⁵: the absolute
	// rounding error of fp16 output in the subnormal range.
	HalfSubF16 = 1.0 / (1 << 25)
)

// An Exact is an operator's exact known-answer check on one cell: input
// distributions (small integers, scaled by powers of two where the operator
// needs it) on which every partial result a correct kernel can form — in
// any tile, k order, K blocking, split-K with its partials added in any
// order, or a tensor core's multi-term addition — is exactly representable,
// so that the right output is one number per element, known on the host.
// Every correct candidate must equal it (values: +0 and −0 count as equal);
// a dropped term, a wrong index or a lost partial changes it at any K,
// which a worst-case error bound cannot promise (it grows like K·2⁻²⁴·Σ|x·w|,
// faster than one term).
type Exact struct {
	// Draws gives each In operand, in Operands order, the distribution of
	// its elements; the sweep draws them with the counter-based generator
	// (Drawn), on the host or on the device.
	Draws []Draw
	// Want returns the exact value of element i of output operand out (an
	// index into Operands) on inputs in (the In operands drawn from Draws,
	// in order): the exact result, or the result of the operator's stated
	// epilogue arithmetic on exact intermediates; the check rounds it once
	// to the operand's type (DType.Round). Safe for concurrent use.
	Want func(in [][]byte, out, i int) float64
	// Covers says what the check pins down and what it cannot (a nonlinear
	// epilogue off the values the inputs steer it to): one sentence.
	Covers string
}

// A RefValue is the float64 reference of one output element with two
// bounds on a correct kernel's error |got − Want|: Bound, the worst case
// (any order of accumulation, every rounding at its largest), and Likely, a
// probabilistic bound under a stated model of the rounding errors (0: none
// declared), much tighter at large K.
type RefValue struct {
	Want, Bound, Likely float64
}

// LikelyLambda is λ of the probabilistic bounds: a bound holds except with
// probability at most 2K·e^(−λ²(1−u)²/2) ≈ 2K·e⁻⁵⁰ per element (4·10⁻¹⁸ at
// K 10240), negligible over every element a sweep ever checks.
const LikelyLambda = 10

// LikelyGamma is the probabilistic error constant of a K-term fp32
// accumulation (Higham and Mary, "A new approach to probabilistic rounding
// error analysis", SIAM J. Sci. Comput. 41, 2019, Theorem 3.1):
//
//	γ̃(K) = exp(λ·√K·u + K·u²/(1−u)) − 1,   u = 2⁻²⁴, λ = LikelyLambda,
//
// so that |ŷ − y| ≤ γ̃(K)·Σ|x·w|. Model (the assumption): the relative
// rounding errors δ of the additions are independent random variables of
// mean zero (round to nearest), however the terms are grouped — any tile,
// k order or split-K. Hardware that truncates in its multi-term additions
// has biased errors; on the random check's inputs (uniform in [−1, 1),
// mean zero) the partial sums it truncates change sign at random, and its
// error stays an order of magnitude inside this bound (TestLikelyBoundHolds
// checks a truncating adder). Every fp16×fp16 product is exact in fp32, so
// the additions are the only roundings.
func LikelyGamma(k int) float64 {
	u := UnitF32
	return math.Expm1(LikelyLambda*math.Sqrt(float64(k))*u + float64(k)*u*u/(1-u))
}
