package builtin

import (
	_ "embed"
	"fmt"
	. "github.com/tilefit/tilefit/kernel"
	"math"
)

//go:embed src/cpu/hc_up_f16.c
var cpuHcUpSource string

//go:embed src/cuda/hc_up_f16.cu
var cudaHcUpSource string

// HcUpF16 returns the operator hc_up_f16, the engine's hc_up projection with
// its fused 4-stream epilogue:
//
//	Y4[M,4S] = X[M,K]·W[4S,K]ᵀ  (never stored)
//	mix[t,d] = ¼·Σ_{c<4} Y4[t, c·S+d]·H[t,c,d]
//	mixh[M,S] = fp16(mix),  mixed[M,S] = mix (fp32; only when BOUND=1)
//
// X [M,K], W [4,S,K] (= [4S,K], stream c's rows c·S+d), H [M,4,S], all fp16.
//
// The epilogue's arithmetic is fixed (fp32, each step rounded to nearest
// even): s = y₀·h₀; s = fma(y₁,h₁,s); s = fma(y₂,h₂,s); s = fma(y₃,h₃,s);
// mix = s·0.25; mixh = fp16(mix) — the sources state the same.
//
// Reference: y_c = Σ_k x·w exactly in float64, mix = ¼·Σ_c y_c·h_c. Bound of
// mixed: ¼·Σ_c |h_c|·e_c (each y_c's accumulation error, e_c = K·2⁻²⁴·2·Σ_k|x·w|,
// the GEMM bound) + ¼·2·4·2⁻²⁴·Σ_c|y_c·h_c| (one product and three FMAs, each
// rounding within 2⁻²⁴ of partial sums at most Σ_c|y_c·h_c|, doubled) + 2⁻¹²⁶
// (results in the subnormal range); mixh adds its fp16 rounding,
// 2⁻¹¹·(|mix| + bound) + 2⁻²⁵.
//
// Probabilistic bound: the same with each stream's accumulation error by
// LikelyGamma(K)·Σ_k|x·w|. Exact check: hcUpExact.
//
// Bytes counts X, W, H read and mixh written once (mixed, present only in
// the bound variant, is left out).
func HcUpF16() *Operator {
	return &Operator{
		Name: "hc_up_f16",
		Doc:  "mix[t,d] = ¼·Σ_{c<4} (X·Wᵀ)[t, c·S+d]·H[t,c,d]; X[M,K], W[4S,K], H[M,4,S] fp16; mixh[M,S] fp16, mixed[M,S] fp32 (BOUND=1)",
		Dims: []string{"M", "S", "K"},
		Operands: []Operand{
			{Name: "X", Dir: In, DType: F16, Shape: []string{"M", "K"}},
			{Name: "W", Dir: In, DType: F16, Shape: []string{"4", "S", "K"}},
			{Name: "H", Dir: In, DType: F16, Shape: []string{"M", "4", "S"}},
			{Name: "mixh", Dir: Out, DType: F16, Shape: []string{"M", "S"}},
			{Name: "mixed", Dir: Out, DType: F32, Shape: []string{"M", "S"}, When: "BOUND"},
		},
		FLOPs: func(d Dims) float64 {
			m, s, k := float64(d["M"]), float64(d["S"]), float64(d["K"])
			return 2*m*4*s*k + 8*m*s
		},
		Bytes: func(_ *Operator, d Dims) float64 {
			m, s, k := float64(d["M"]), float64(d["S"]), float64(d["K"])
			return 2*m*k + 2*4*s*k + 2*m*4*s + 2*m*s
		},
		// Inputs nil: UniformInputs (X, W, H uniform in [−1, 1), no zeros).
		ReferenceBounds: func(o *Operator, d Dims, in [][]byte, out, i int) RefValue {
			mix, b32, l32 := hcUpBounds(d, in, i)
			if o.Operands[out].DType == F16 {
				return RefValue{Want: mix, Bound: f16Bound(mix, b32), Likely: f16Bound(mix, l32)}
			}
			return RefValue{Want: mix, Bound: b32, Likely: l32}
		},
		Exact: hcUpExact,
		Unfused: func(o *Operator, d Dims, in [][]byte, out, i int) (float64, float64) {
			mix, b32 := hcUpUnfusedRef(d, in, i)
			if o.Operands[out].DType == F16 {
				return mix, f16Bound(mix, b32)
			}
			return mix, b32
		},
	}
}

// hcUpUnfusedRef is hcUpRef for the composition that rounds each y_c to
// fp16 before the mix (the vendor baseline's Y4 in fp16): the same value;
// each y_c now errs by r_c = e_c + 2⁻¹¹·(|y_c| + e_c) + 2⁻²⁵ (its
// accumulation error, then the rounding to fp16, subnormals included), so
// the bound is ¼·Σ_c |h_c|·r_c + ¼·2·4·2⁻²⁴·Σ_c |h_c|·(|y_c| + r_c) (the
// mix's own roundings on values that large) + 2⁻¹²⁶.
func hcUpUnfusedRef(d Dims, in [][]byte, i int) (mix, bound float64) {
	s, k := d["S"], d["K"]
	t, dd := i/s, i%s
	var sum, mag, prop float64
	for c := 0; c < 4; c++ {
		y, ym := DotF16(in[0], in[1], t*k, (c*s+dd)*k, k)
		h := math.Abs(f16At(in[2], (t*4+c)*s+dd))
		e := gemmBound(k, ym)
		r := e + UnitF16*(math.Abs(y)+e) + HalfSubF16
		sum += y * f16At(in[2], (t*4+c)*s+dd)
		mag += h * (math.Abs(y) + r)
		prop += h * r
	}
	mix = 0.25 * sum
	return mix, 0.25*prop + 0.25*2*4*UnitF32*mag + tinyF32
}

// hcUpRef is the float64 mix of element i (= t·S + d) and its fp32 bound.
func hcUpRef(d Dims, in [][]byte, i int) (mix, bound float64) {
	mix, bound, _ = hcUpBounds(d, in, i)
	return mix, bound
}

// hcUpBounds is hcUpRef with the probabilistic bound: the streams'
// accumulation errors by gemmLikely instead of gemmBound (the epilogue's
// four roundings keep their worst case).
func hcUpBounds(d Dims, in [][]byte, i int) (mix, bound, likely float64) {
	s, k := d["S"], d["K"]
	t, dd := i/s, i%s
	var sum, mag, prop, plike float64
	for c := 0; c < 4; c++ {
		y, ym := DotF16(in[0], in[1], t*k, (c*s+dd)*k, k)
		h := f16At(in[2], (t*4+c)*s+dd)
		sum += y * h
		mag += math.Abs(y * h)
		prop += math.Abs(h) * gemmBound(k, ym)
		plike += math.Abs(h) * gemmLikely(k, ym)
	}
	mix = 0.25 * sum
	epi := 0.25*2*4*UnitF32*mag + tinyF32
	return mix, 0.25*prop + epi, 0.25*plike + epi
}

// hcUpParamsCPU are the CPU family's parameters.
func hcUpParamsCPU() []Param {
	return []Param{
		{Name: "TM", Values: []int{16, 32, 64}, Sweep: []int{16, 32, 64}, Doc: "rows of mix per task"},
		{Name: "TN", Values: []int{64, 128, 256}, Sweep: []int{64, 128, 256}, Doc: "columns of Y4 per task: four streams of TN/4 mix columns"},
		{Name: "THREADS", Values: []int{1, 2, 4, 8}, Sweep: []int{1, 2}, Doc: "threads per call"},
		{Name: "TK", Values: []int{64, 128, 256, 512}, Sweep: []int{256}, Doc: "K step of the packed panels"},
		{Name: "BOUND", Values: []int{0, 1}, Sweep: []int{0, 1}, Doc: "1: also write the fp32 mix (operand mixed)"},
		tailParam,
	}
}

// CPUHcUpF16 returns the CPU family hc_up_f16 (src/cpu/hc_up_f16.c on the
// shared core src/cpu/fused_common.c): a task owns TM rows × TN/4 mix
// columns, packs the four streams' W rows into one fp32 panel, accumulates
// with the core's fmaf chains (k ascending) and mixes from its accumulators.
//
// Entry: int tilefit_hc_up(void **ptrs, const int64_t *args),
// ptrs = {X, W, H, mixh, mixed (BOUND=1)}, args = {M, S, K}.
func CPUHcUpF16() *Family {
	return &Family{
		Name:       "hc_up_f16",
		Backend:    "cpu",
		Doc:        "hc_up with its fused 4-stream epilogue: fp16 in, fp32 FMA chains (k ascending), mix in fp32 (fixed order), mixh fp16 (+ mixed fp32 with BOUND=1); TM×TN/4 blocks over THREADS threads",
		Source:     cpuFusedSource(cpuHcUpSource, "hc_up_f16.c"),
		SourceFile: "hc_up_f16.c",
		Params:     hcUpParamsCPU(),
		Positional: []string{"TM", "TN", "THREADS"},
		Reference:  "32_128_2.bound1",
		Restrict:   checkTail,
		Operator:   HcUpF16(),
		Plan: func(p Params, d Dims) (Plan, error) {
			return Plan{Launches: []Launch{{Entry: "tilefit_hc_up", Args: hcUpArgs(p)}}}, nil
		},
	}
}

func hcUpArgs(p Params) []Arg {
	ops := Operands("X", "W", "H", "mixh")
	if p["BOUND"] != 0 {
		ops = append(ops, Operands("mixed")...)
	}
	return Args(ops, DimArgs("M", "S", "K"))
}

// CUDAHcUpF16 returns the CUDA family hc_up_f16 (src/cuda/hc_up_f16.cu on the
// shared core src/cuda/fused_common.cu): a block of WARPS warps owns TM rows ×
// TN/4 mix columns (TN columns of Y4, all four streams), accumulates with
// mma.sync m16n8k16 in ascending k16 steps, and mixes in registers: a lane
// holds the same mix columns of all four streams. REG=0 feeds the tensor
// cores from a STAGES-deep cp.async pipeline in shared memory; REG=1 uses no
// shared memory (each lane loads its fragments from global memory) — the
// seeds' winner kept its accumulators in registers this way.
//
// Kernel: tilefit_hc_up(X, W, H, mixh, [mixed], long long M, S, K); grid
// RowBlocks(M, TM, TAIL)·ceil(S/(TN/4)) blocks of WARPS·32 threads; dynamic
// shared memory STAGES·(TM+TN)·TK·2 bytes (0 with REG=1).
func CUDAHcUpF16() *Family {
	return &Family{
		Name:       "hc_up_f16",
		Backend:    "cuda",
		Doc:        "hc_up with its fused 4-stream epilogue: mma.sync m16n8k16 (k ascending in 16s), the four streams of a mix column in one lane's registers; REG=1: no shared memory",
		Source:     cudaFusedSource("#define NQ 32\n#define NACC 1", cudaHcUpSource, "hc_up_f16.cu"),
		SourceFile: "hc_up_f16.cu",
		Params: []Param{
			{Name: "TM", Values: []int{16, 32, 64}, Sweep: []int{16, 32, 64}, Doc: "rows of mix per block"},
			{Name: "TN", Values: []int{64, 128, 256}, Sweep: []int{64, 128, 256}, Doc: "columns of Y4 per block: four streams of TN/4 mix columns"},
			{Name: "WARPS", Values: []int{1, 2, 4, 8}, Sweep: []int{1, 2, 4, 8}, Doc: "warps per block"},
			{Name: "REG", Values: []int{0, 1}, Sweep: []int{0, 1}, Doc: "1: register-only, no shared memory (fragments loaded from global memory)"},
			{Name: "BOUND", Values: []int{0, 1}, Sweep: []int{0, 1}, Doc: "1: also write the fp32 mix (operand mixed)"},
			{Name: "TK", Values: []int{32, 64}, Sweep: []int{32}, Doc: "K step per pipeline stage (REG=0)"},
			{Name: "STAGES", Values: []int{3, 2, 4}, Sweep: []int{3}, Doc: "cp.async pipeline stages (REG=0)"},
			tailParam,
		},
		Positional: []string{"TM", "TN", "WARPS"},
		Reference:  "32_128_4.bound1",
		Restrict: func(p Params) error {
			reg := p["REG"] == 1
			if reg && (p["TK"] != 32 || p["STAGES"] != 3) {
				return fmt.Errorf("REG=1 has no pipeline: leave TK and STAGES at their defaults")
			}
			return checkFusedCUDA(p, 32, 1, reg, hcUpShared(p))
		},
		Operator: HcUpF16(),
		Plan: func(p Params, d Dims) (Plan, error) {
			grid := RowBlocks(d["M"], p["TM"], p["TAIL"]) * ceilDiv(d["S"], p["TN"]/4)
			return Plan{Launches: []Launch{{
				Entry:  "tilefit_hc_up",
				Grid:   [3]int{max(grid, 1), 1, 1},
				Block:  [3]int{p["WARPS"] * 32, 1, 1},
				Shared: hcUpShared(p),
				Args:   hcUpArgs(p),
			}}}, nil
		},
	}
}

// hcUpShared is the dynamic shared memory of a CUDA hc_up tile.
func hcUpShared(p Params) int {
	if p["REG"] == 1 {
		return 0
	}
	return p["STAGES"] * (p["TM"] + p["TN"]) * p["TK"] * 2
}
