package builtin

import (
	"math"

	. "github.com/tilefit/tilefit/kernel"
)

// GemmF16 returns the operator gemm_f16:
//
//	Y[M,N] = X[M,K]·W[N,K]ᵀ,  Y[m,n] = Σ_k X[m,k]·W[n,k]
//
// X and W row-major fp16, fp32 accumulation; Y row-major fp32 (the
// default) or fp16 — the output type is chosen per sweep (Operator.Typed,
// `tilefit sweep --out-type f16`) and reaches a source as Y_DTYPE (3 f32, 1 f16).
//
// Reference: the exact float64 sum of the products of the fp16 inputs;
// an element passes when |y − ref| ≤ K·2⁻²⁴·2·Σ_k|x·w| (plus, for fp16
// output, 2⁻¹¹·|ref| + 2⁻²⁵ for the final rounding).
func GemmF16() *Operator {
	o := &Operator{
		Name: "gemm_f16",
		Doc:  "Y[M,N] = X[M,K]·W[N,K]ᵀ, fp16 in, fp32 accumulate, Y fp32 or fp16",
		Dims: []string{"M", "N", "K"},
		Operands: []Operand{
			{Name: "X", Dir: In, DType: F16, Shape: []string{"M", "K"}},
			{Name: "W", Dir: In, DType: F16, Shape: []string{"N", "K"}},
			{Name: "Y", Dir: Out, DType: F32, DTypes: []DType{F32, F16}, Shape: []string{"M", "N"}},
		},
		FLOPs: func(d Dims) float64 { return 2 * float64(d["M"]) * float64(d["N"]) * float64(d["K"]) },
		// Bytes nil: X, W read and Y written once. Inputs nil: UniformInputs.
		Gemm:  &GemmOperands{X: "X", W: "W", Y: "Y"},
		Exact: gemmExact,
	}
	o.ReferenceBounds = func(o *Operator, d Dims, in [][]byte, out, i int) RefValue {
		n, k := d["N"], d["K"]
		sum, mag := DotF16(in[0], in[1], (i/n)*k, (i%n)*k, k)
		bound := float64(k) * UnitF32 * GemmSafety * mag
		likely := gemmLikely(k, mag)
		if o.Operands[out].DType == F16 {
			bound += UnitF16*math.Abs(sum) + HalfSubF16
			likely += UnitF16*math.Abs(sum) + HalfSubF16
		}
		return RefValue{Want: sum, Bound: bound, Likely: likely}
	}
	o.Reference = func(o *Operator, d Dims, in [][]byte, out, i int) (float64, float64) { return o.Ref(d, in, out, i) }
	return o
}

// DotF16 returns Σ_{j<k} a[ai+j]·b[bi+j] and Σ|a·b| in float64 over fp16
// elements of a and b (little-endian bytes; each product of two fp16 values
// is exact in float64): the reference of one GEMM output element.
//
// Each product is exact; the sums round as any float64 sum does (≤
// K·2⁻⁵³·Σ|x·w| off the exact value, 2⁻³⁰ of the check's bound), so the
// order they are added in is free: on amd64 with AVX2 and F16C the whole
// groups of eight run in dotF16x8 (eight conversions, products and
// widenings an instruction each, eight float64 lanes a sum: 4.3× the
// portable loop at K 10240 on an AMD EPYC, docs/results/speed-cpu), the
// rest in the portable loop.
func DotF16(a, b []byte, ai, bi, k int) (sum, mag float64) {
	a = a[2*ai : 2*(ai+k)]
	b = b[2*bi : 2*(bi+k)]
	j := 0
	if haveDotF16x8 && k >= 8 {
		j = k &^ 7
		sum, mag = dotF16x8(&a[0], &b[0], j)
	}
	s, m := dotF16From(a, b, j, k)
	return sum + s, mag + m
}

// dotF16From is DotF16's portable loop over terms j0 … k−1 of a and b
// (already sliced to their k elements).
func dotF16From(a, b []byte, j0, k int) (sum, mag float64) {
	t := &f16Table // the table, not a 256 KiB copy of it
	// Four partial sums (terms j ≡ 0, 1, 2, 3 mod 4, each in order, then
	// added as (s0+s1)+(s2+s3)): four independent chains of additions
	// where one chain waited on each add's latency.
	var s0, s1, s2, s3, m0, m1, m2, m3 float64
	j := j0
	for ; j+4 <= k; j += 4 {
		x, w := a[2*j:2*j+8], b[2*j:2*j+8]
		p0 := float64(t[(uint16(x[0])|uint16(x[1])<<8)]) * float64(t[(uint16(w[0])|uint16(w[1])<<8)])
		p1 := float64(t[(uint16(x[2])|uint16(x[3])<<8)]) * float64(t[(uint16(w[2])|uint16(w[3])<<8)])
		p2 := float64(t[(uint16(x[4])|uint16(x[5])<<8)]) * float64(t[(uint16(w[4])|uint16(w[5])<<8)])
		p3 := float64(t[(uint16(x[6])|uint16(x[7])<<8)]) * float64(t[(uint16(w[6])|uint16(w[7])<<8)])
		s0, s1, s2, s3 = s0+p0, s1+p1, s2+p2, s3+p3
		m0, m1, m2, m3 = m0+math.Abs(p0), m1+math.Abs(p1), m2+math.Abs(p2), m3+math.Abs(p3)
	}
	for ; j < k; j++ {
		p := float64(t[uint16(a[2*j])|uint16(a[2*j+1])<<8]) * float64(t[uint16(b[2*j])|uint16(b[2*j+1])<<8])
		s0 += p
		m0 += math.Abs(p)
	}
	return (s0 + s1) + (s2 + s3), (m0 + m1) + (m2 + m3)
}
