package builtin

import (
	_ "embed"
	. "github.com/tilefit/tilefit/kernel"
	"math"
)

//go:embed src/cpu/swiglu_f16.c
var cpuSwigluSource string

//go:embed src/cuda/swiglu_f16.cu
var cudaSwigluSource string

// SwigluF16 returns the operator swiglu_f16, the shared expert's gate/up
// projection with SwiGLU:
//
//	g = X[M,K]·Wg[N,K]ᵀ,  u = X·Wuᵀ,  h[M,N] = silu(g)⊙u,  silu(g) = g/(1+e^−g)
//
// X, Wg, Wu fp16; h fp16.
//
// Reference: g, u exactly in float64, h = g/(1+e^−g)·u. Bound (fp32, before
// the output rounding): 1.1·|u|·e_g + |silu(g)|·e_u (the accumulation errors
// e_g, e_u — the GEMM bound K·2⁻²⁴·2·Σ|x·w| — carried through silu, whose
// slope lies within [−0.1, 1.1]) + 2·(|g| + 8)·2⁻²⁴·|h| (the epilogue: the
// exponential's argument rounding, worth |g|·2⁻²⁴ relative, the exponential
// itself within 4·2⁻²⁴ — ex2.approx on CUDA, the C library's expf on the CPU
// — and one rounding each for the add, the divide and the multiply, doubled)
// + 2⁻¹²⁶; then the fp16 rounding of h, 2⁻¹¹·(|h| + bound) + 2⁻²⁵.
// Probabilistic bound: the same with e_g, e_u by LikelyGamma(K)·Σ|x·w|.
// Exact check: swigluExact (the GEMMs and the product; silu held at its
// identity).
func SwigluF16() *Operator {
	return &Operator{
		Name: "swiglu_f16",
		Doc:  "h[M,N] = silu(X·Wgᵀ) ⊙ (X·Wuᵀ); X[M,K], Wg[N,K], Wu[N,K] fp16; h fp16",
		Dims: []string{"M", "N", "K"},
		Operands: []Operand{
			{Name: "X", Dir: In, DType: F16, Shape: []string{"M", "K"}},
			{Name: "Wg", Dir: In, DType: F16, Shape: []string{"N", "K"}},
			{Name: "Wu", Dir: In, DType: F16, Shape: []string{"N", "K"}},
			{Name: "h", Dir: Out, DType: F16, Shape: []string{"M", "N"}},
		},
		FLOPs: func(d Dims) float64 {
			m, n, k := float64(d["M"]), float64(d["N"]), float64(d["K"])
			return 4*m*n*k + 5*m*n
		},
		// Bytes nil: X, Wg, Wu read and h written once. Inputs nil:
		// UniformInputs (uniform in [−1, 1), no zeros).
		ReferenceBounds: func(_ *Operator, d Dims, in [][]byte, out, i int) RefValue {
			h, b, l := swigluRef(d, in, i)
			return RefValue{Want: h, Bound: f16Bound(h, b), Likely: f16Bound(h, l)}
		},
		Exact: swigluExact,
		Unfused: func(_ *Operator, d Dims, in [][]byte, out, i int) (float64, float64) {
			h, b := swigluUnfusedRef(d, in, i)
			return h, f16Bound(h, b)
		},
	}
}

// swigluUnfusedRef is swigluRef for the composition that rounds g and u to
// fp16 before SwiGLU (the vendor baseline's GEMM outputs): the same value;
// g errs by r_g = e_g + 2⁻¹¹·(|g| + e_g) + 2⁻²⁵ (accumulation, then the
// rounding to fp16), u by r_u likewise, so h errs by 1.1·(|u| + r_u)·r_g +
// |silu(g)|·r_u (silu's slope within [−0.1, 1.1]) plus the epilogue's own
// 2·(|g| + r_g + 8)·2⁻²⁴·(|h| + that) + 2⁻¹²⁶.
func swigluUnfusedRef(d Dims, in [][]byte, i int) (h, bound float64) {
	n, k := d["N"], d["K"]
	m, c := i/n, i%n
	g, gm := DotF16(in[0], in[1], m*k, c*k, k)
	u, um := DotF16(in[0], in[2], m*k, c*k, k)
	eg, eu := gemmBound(k, gm), gemmBound(k, um)
	rg := eg + UnitF16*(math.Abs(g)+eg) + HalfSubF16
	ru := eu + UnitF16*(math.Abs(u)+eu) + HalfSubF16
	s := silu(g)
	h = s * u
	prop := 1.1*(math.Abs(u)+ru)*rg + math.Abs(s)*ru
	bound = prop + 2*(math.Abs(g)+rg+8)*UnitF32*(math.Abs(h)+prop) + tinyF32
	return h, bound
}

// swigluRef is the float64 h of element i (= m·N + n), its fp32 bound and
// its probabilistic fp32 bound (the accumulation errors by gemmLikely, the
// epilogue's worst case kept).
func swigluRef(d Dims, in [][]byte, i int) (h, bound, likely float64) {
	n, k := d["N"], d["K"]
	m, c := i/n, i%n
	g, gm := DotF16(in[0], in[1], m*k, c*k, k)
	u, um := DotF16(in[0], in[2], m*k, c*k, k)
	s := silu(g)
	h = s * u
	epi := 2*(math.Abs(g)+8)*UnitF32*math.Abs(h) + tinyF32
	bound = 1.1*math.Abs(u)*gemmBound(k, gm) + math.Abs(s)*gemmBound(k, um) + epi
	likely = 1.1*math.Abs(u)*gemmLikely(k, gm) + math.Abs(s)*gemmLikely(k, um) + epi
	return h, bound, likely
}

// silu is g/(1+e^−g) in float64.
func silu(g float64) float64 { return g / (1 + math.Exp(-g)) }

// swigluNumerics names the two ways' numerics classes: they need not be
// bitwise equal to each other.
func swigluNumerics(p Params) string {
	if p["CHAIN"] == 1 {
		return "chain"
	}
	return "fused"
}

var chainParam = Param{Name: "CHAIN", Values: []int{0, 1}, Sweep: []int{0, 1},
	Doc: "0: fused (one kernel, two accumulator sets); 1: the unfused chain (two GEMMs into fp32 scratch, then the elementwise SwiGLU)"}

// swigluPlan returns the launches of one call: the fused kernel, or the
// chain of three launches with its two fp32 scratch buffers. geo gives a
// GEMM launch's grid, block and shared memory; act the elementwise one's.
func swigluPlan(p Params, d Dims, gemm, act func(Launch) Launch) Plan {
	dims := DimArgs("M", "N", "K")
	sc := func(n string) []Arg { return []Arg{{Kind: ArgScratch, Name: n}} }
	if p["CHAIN"] == 0 {
		return Plan{Launches: []Launch{gemm(Launch{Entry: "tilefit_swiglu", Args: Args(Operands("X", "Wg", "Wu", "h"), dims)})}}
	}
	mn := d["M"] * d["N"]
	return Plan{
		Launches: []Launch{
			gemm(Launch{Entry: "tilefit_swiglu_gemm", Args: Args(Operands("X", "Wg"), sc("g"), dims)}),
			gemm(Launch{Entry: "tilefit_swiglu_gemm", Args: Args(Operands("X", "Wu"), sc("u"), dims)}),
			act(Launch{Entry: "tilefit_swiglu_act", Args: Args(sc("g"), sc("u"), Operands("h"), DimArgs("M", "N"))}),
		},
		Scratch: []Scratch{{Name: "g", DType: F32, Elems: mn}, {Name: "u", DType: F32, Elems: mn}},
	}
}

// CPUSwigluF16 returns the CPU family swiglu_f16 (src/cpu/swiglu_f16.c on the
// shared core src/cpu/fused_common.c). CHAIN=0: one call, a task packs Wg's
// and Wu's TN rows side by side into one panel, so one block FMA runs both
// GEMMs (two accumulator sets) and the epilogue applies SwiGLU. CHAIN=1: the
// unfused chain — tilefit_swiglu_gemm twice (into fp32 scratch g and u), then
// tilefit_swiglu_act — timed as one candidate. Numerics classes "fused" and
// "chain".
func CPUSwigluF16() *Family {
	return &Family{
		Name:       "swiglu_f16",
		Backend:    "cpu",
		Doc:        "SwiGLU on two GEMMs: fp32 FMA chains (k ascending); CHAIN=0 fused (two accumulator sets, one call), CHAIN=1 two GEMMs into fp32 scratch + an elementwise call",
		Source:     cpuFusedSource(cpuSwigluSource, "swiglu_f16.c"),
		SourceFile: "swiglu_f16.c",
		Params: []Param{
			{Name: "TM", Values: []int{16, 32, 64, 128}, Sweep: []int{16, 32, 64}, Doc: "rows of h per task"},
			{Name: "TN", Values: []int{32, 64, 128, 256}, Sweep: []int{32, 64, 128}, Doc: "columns of h per task"},
			{Name: "THREADS", Values: []int{1, 2, 4, 8}, Sweep: []int{1, 2}, Doc: "threads per call"},
			{Name: "TK", Values: []int{64, 128, 256, 512}, Sweep: []int{256}, Doc: "K step of the packed panels"},
			chainParam,
			tailParam,
		},
		Positional: []string{"TM", "TN", "THREADS"},
		Reference:  "32_64_2",
		Restrict:   checkTail,
		Operator:   SwigluF16(),
		Numerics:   swigluNumerics,
		Plan: func(p Params, d Dims) (Plan, error) {
			id := func(l Launch) Launch { return l }
			return swigluPlan(p, d, id, id), nil
		},
	}
}

// CUDASwigluF16 returns the CUDA family swiglu_f16 (src/cuda/swiglu_f16.cu on
// the shared core src/cuda/fused_common.cu). CHAIN=0: one kernel, each warp
// holds two accumulator sets (g and u of the same outputs) fed from one
// shared-memory stage of X's TM rows and TN rows of each weight, SwiGLU in
// registers. CHAIN=1: the unfused chain — the same core as a plain GEMM into
// fp32 scratch, twice, then an elementwise kernel (256 threads, one element
// each) — timed as one candidate. Numerics classes "fused" and "chain".
//
// Kernels: tilefit_swiglu(X, Wg, Wu, h, M, N, K) or
// tilefit_swiglu_gemm(X, W, Y, M, N, K) ×2 + tilefit_swiglu_act(G, U, h, M, N);
// GEMM grid RowBlocks(M, TM, TAIL)·ceil(N/TN) blocks of WARPS·32 threads,
// dynamic shared memory STAGES·(TM + S·TN)·TK·2 bytes (S = 2 fused, 1 chain).
func CUDASwigluF16() *Family {
	return &Family{
		Name:       "swiglu_f16",
		Backend:    "cuda",
		Doc:        "SwiGLU on two GEMMs: mma.sync m16n8k16 (k ascending in 16s); CHAIN=0 fused (two accumulator sets per warp), CHAIN=1 two GEMM launches into fp32 scratch + an elementwise kernel",
		Source:     cudaFusedSource("#define NQ 16\n#if CHAIN\n#define NACC 1\n#else\n#define NACC 2\n#endif", cudaSwigluSource, "swiglu_f16.cu"),
		SourceFile: "swiglu_f16.cu",
		Params: []Param{
			{Name: "TM", Values: []int{16, 32, 64, 128}, Sweep: []int{16, 32, 64, 128}, Doc: "rows of h per block"},
			{Name: "TN", Values: []int{32, 64, 128, 256}, Sweep: []int{32, 64, 128}, Doc: "columns of h per block"},
			{Name: "WARPS", Values: []int{1, 2, 4, 8}, Sweep: []int{1, 2, 4, 8}, Doc: "warps per block"},
			chainParam,
			{Name: "TK", Values: []int{32, 64}, Sweep: []int{32}, Doc: "K step per pipeline stage"},
			{Name: "STAGES", Values: []int{3, 2, 4}, Sweep: []int{3}, Doc: "cp.async pipeline stages"},
			tailParam,
		},
		Positional: []string{"TM", "TN", "WARPS"},
		Reference:  "64_64_4",
		Restrict: func(p Params) error {
			nacc := 2 - p["CHAIN"]
			return checkFusedCUDA(p, 16, nacc, false, swigluShared(p))
		},
		Operator: SwigluF16(),
		Numerics: swigluNumerics,
		Plan: func(p Params, d Dims) (Plan, error) {
			grid := RowBlocks(d["M"], p["TM"], p["TAIL"]) * ceilDiv(d["N"], p["TN"])
			gemm := func(l Launch) Launch {
				l.Grid = [3]int{max(grid, 1), 1, 1}
				l.Block = [3]int{p["WARPS"] * 32, 1, 1}
				l.Shared = swigluShared(p)
				return l
			}
			act := func(l Launch) Launch {
				l.Grid = [3]int{max(ceilDiv(d["M"]*d["N"], 256), 1), 1, 1}
				l.Block = [3]int{256, 1, 1}
				return l
			}
			return swigluPlan(p, d, gemm, act), nil
		},
	}
}

// swigluShared is the dynamic shared memory of a CUDA swiglu tile.
func swigluShared(p Params) int {
	return p["STAGES"] * (p["TM"] + (2-p["CHAIN"])*p["TN"]) * p["TK"] * 2
}
