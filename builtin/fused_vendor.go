package builtin

// The vendor baselines of the fused operators: what a user would write
// without a fused kernel. On the CPU: OpenBLAS sgemm (Launch.Vendor =
// VendorGemm) into fp32 scratch, then a separate elementwise call. On CUDA,
// what an engine runs (and what PyTorch eager or torch.compile generate):
// the cuBLAS GEMM with fp16 output — the type an engine keeps between
// kernels — then ONE vectorised elementwise pass (src/cuda/fused_vendor.cu:
// 16-byte loads and stores, grid-stride) writing exactly the outputs of the
// candidates it is compared with (hc_up: mixh; BOUND's fp32 mixed is the
// candidates' option, not the engine's). gemm_q8_f16's baseline is a
// separate dequantisation kernel into fp16, then the vendor GEMM. The
// elementwise steps run the same epilogue arithmetic (epilogue_common.cuh on
// CUDA), so a baseline pays for the unfused data movement and the fp16
// round trip only. Baselines are checked against the float64 reference,
// never required to be bitwise equal; the CUDA fused ones, whose GEMM results
// pass through fp16, against the operator's Unfused bound.

import (
	_ "embed"
	"fmt"
	. "github.com/tilefit/tilefit/kernel"
)

// elementwise shapes an elementwise launch over n elements: on CUDA 256
// threads per block, one element each; nothing on the CPU.
type elementwise func(l Launch, n int) Launch

func cpuElementwise(l Launch, _ int) Launch { return l }

func cudaElementwise(l Launch, n int) Launch {
	l.Grid = [3]int{max(ceilDiv(n, 256), 1), 1, 1}
	l.Block = [3]int{256, 1, 1}
	return l
}

func baselineSource(defines, familySource string) string { return defines + "\n" + familySource }

func scratchArg(name string) []Arg { return []Arg{{Kind: ArgScratch, Name: name}} }

// hcUpBaselinePlan (CPU): Y4 = vendor GEMM(X, W) into fp32 scratch [M,4S],
// then tilefit_hc_up_mix(Y4, H, mixh, mixed, M, S). It writes every output,
// the fp32 mixed too (as the bound variant does).
func hcUpBaselinePlan(ew elementwise) func(*Operator, Dims) (Plan, error) {
	return func(_ *Operator, d Dims) (Plan, error) {
		m, s := d["M"], d["S"]
		return Plan{
			Launches: []Launch{
				{Vendor: VendorGemm, Args: Args(Operands("X", "W"), scratchArg("y4"), DimArgs("M"), []Arg{{Kind: ArgInt, Value: int64(4 * s)}}, DimArgs("K"))},
				ew(Launch{Entry: "tilefit_hc_up_mix", Args: Args(scratchArg("y4"), Operands("H", "mixh", "mixed"), DimArgs("M", "S"))}, m*s),
			},
			Scratch: []Scratch{{Name: "y4", DType: F32, Elems: m * 4 * s}},
		}, nil
	}
}

// swigluBaselinePlan (CPU): g, u = vendor GEMM(X, Wg), vendor GEMM(X, Wu)
// into fp32 scratch, then tilefit_swiglu_act(g, u, h, M, N).
func swigluBaselinePlan(ew elementwise) func(*Operator, Dims) (Plan, error) {
	return func(_ *Operator, d Dims) (Plan, error) {
		mn := d["M"] * d["N"]
		return Plan{
			Launches: []Launch{
				{Vendor: VendorGemm, Args: Args(Operands("X", "Wg"), scratchArg("g"), DimArgs("M", "N", "K"))},
				{Vendor: VendorGemm, Args: Args(Operands("X", "Wu"), scratchArg("u"), DimArgs("M", "N", "K"))},
				ew(Launch{Entry: "tilefit_swiglu_act", Args: Args(scratchArg("g"), scratchArg("u"), Operands("h"), DimArgs("M", "N"))}, mn),
			},
			Scratch: []Scratch{{Name: "g", DType: F32, Elems: mn}, {Name: "u", DType: F32, Elems: mn}},
		}, nil
	}
}

// HcUpVendorPlan is the CUDA vendor baseline of hc_up_f16: Y4 = cuBLAS
// GEMM(X, W) with fp16 output into scratch y4 [M,4S], then
// tilefit_hc_up_mix16(y4, H, mixh, M, S) (fused_vendor.cu) writing mixh.
func HcUpVendorPlan(op *Operator, d Dims) (Plan, error) { return hcUpVendorPlan(VendorGemm, op, d) }

// SwigluVendorPlan is the CUDA vendor baseline of swiglu_f16: g, u = cuBLAS
// GEMM(X, Wg), GEMM(X, Wu) with fp16 output into scratch, then
// tilefit_swiglu_act16(g, u, h, M·N) (fused_vendor.cu).
func SwigluVendorPlan(op *Operator, d Dims) (Plan, error) { return swigluVendorPlan(VendorGemm, op, d) }

// CuBLASLtGemmF16 is the CUDA vendor baseline "cublaslt" of gemm_f16:
// cuBLASLt with its own autotuning (VendorGemmLt: the heuristic's top
// algorithms timed on the cell's buffers, the fastest kept per shape), fp16
// inputs, fp32 compute, Y of the chosen type.
func CuBLASLtGemmF16() *Baseline {
	return &Baseline{Name: VendorCuBLASLt, Backend: "cuda", Operator: "gemm_f16", Library: "cublaslt",
		Install: "the CUDA toolkit's cuBLASLt (libcublasLt.so.13; NVIDIA's package libcublas-13-0), on the library path or under $CUDA_HOME",
		Doc:     "cublasLtMatmul autotuned: the heuristic's top 8 algorithms timed per shape, the fastest kept; fp16 in, CUBLAS_COMPUTE_32F, Y fp32 or fp16",
		Plan: func(*Operator, Dims) (Plan, error) {
			return Plan{Launches: []Launch{{Vendor: VendorGemmLt, Args: Args(Operands("X", "W", "Y"), DimArgs("M", "N", "K"))}}}, nil
		}}
}

func hcUpVendorPlan(vendor string, _ *Operator, d Dims) (Plan, error) {
	m, s := d["M"], d["S"]
	if int64(m)*int64(s)*4 >= 1<<31 {
		return Plan{}, fmt.Errorf("the hc_up baseline needs M·4S < 2^31 (32-bit indices); M = %d, S = %d", m, s)
	}
	work := m * s
	if s%8 == 0 {
		work /= 8
	}
	return Plan{
		Launches: []Launch{
			{Vendor: vendor, Args: Args(Operands("X", "W"), scratchArg("y4"), DimArgs("M"), []Arg{{Kind: ArgInt, Value: int64(4 * s)}}, DimArgs("K"))},
			{Entry: "tilefit_hc_up_mix16", Grid: [3]int{ElementwiseGrid(work), 1, 1}, Block: [3]int{256, 1, 1},
				Args: Args(scratchArg("y4"), Operands("H", "mixh"), DimArgs("M", "S"))},
		},
		Scratch: []Scratch{{Name: "y4", DType: F16, Elems: m * 4 * s}},
	}, nil
}

func swigluVendorPlan(vendor string, _ *Operator, d Dims) (Plan, error) {
	mn := d["M"] * d["N"]
	if int64(d["M"])*int64(d["N"]) >= 1<<31 {
		return Plan{}, fmt.Errorf("the swiglu baseline needs M·N < 2^31 (32-bit indices); M·N = %d", int64(d["M"])*int64(d["N"]))
	}
	return Plan{
		Launches: []Launch{
			{Vendor: vendor, Args: Args(Operands("X", "Wg"), scratchArg("g"), DimArgs("M", "N", "K"))},
			{Vendor: vendor, Args: Args(Operands("X", "Wu"), scratchArg("u"), DimArgs("M", "N", "K"))},
			{Entry: "tilefit_swiglu_act16", Grid: [3]int{ElementwiseGrid(max(mn/8, 1)), 1, 1}, Block: [3]int{256, 1, 1},
				Args: Args(scratchArg("g"), scratchArg("u"), Operands("h"), []Arg{{Kind: ArgInt, Value: int64(mn)}})},
		},
		Scratch: []Scratch{{Name: "g", DType: F16, Elems: mn}, {Name: "u", DType: F16, Elems: mn}},
	}, nil
}

//go:embed src/cuda/fused_vendor.cu
var cudaFusedVendorSource string

// CUDAFusedVendorSource is the text of the CUDA vendor baselines'
// elementwise kernels: ptx_common.cuh, epilogue_common.cuh, fused_vendor.cu.
func CUDAFusedVendorSource() string {
	return joinSource("", ptxCommon(), epilogueCommon(), srcFile{"fused_vendor.cu", cudaFusedVendorSource})
}

// q8BaselinePlan: W = tilefit_q8_dequant(Wq, scales) (DequantQ8's
// definition) into the fp16 output wdq [N,K] — a baseline writes every
// output, and wdq is exactly the dequantised operand a user's unfused
// pipeline materialises — then vendor GEMM(X, wdq) into Y.
func q8BaselinePlan(ew elementwise) func(*Operator, Dims) (Plan, error) {
	return func(_ *Operator, d Dims) (Plan, error) {
		if err := checkQ8Dims(d); err != nil {
			return Plan{}, err
		}
		nk := d["N"] * d["K"]
		return Plan{
			Launches: []Launch{
				ew(Launch{Entry: "tilefit_q8_dequant", Args: Args(Operands("Wq", "scales", "wdq"), DimArgs("N", "K", "G"))}, nk),
				{Vendor: VendorGemm, Args: Args(Operands("X", "wdq", "Y"), DimArgs("M", "N", "K"))},
			},
		}, nil
	}
}

// FusedBaselines returns the vendor baselines of hc_up_f16, swiglu_f16 and
// gemm_q8_f16 on the CPU (OpenBLAS, fp32 scratch) and CUDA (cuBLAS, and for
// hc_up and SwiGLU autotuned cuBLASLt too, with fp16 intermediates and one
// vectorised elementwise pass; gemm_q8_f16 a dequantisation kernel first).
func FusedBaselines() []*Baseline {
	out := []*Baseline{
		{Name: VendorOpenBLAS, Backend: "cpu", Operator: "hc_up_f16", Library: "openblas",
			Doc:    "openblas GEMM X·Wᵀ into fp32 scratch [M,4S], then an elementwise 4-stream mix (tilefit_hc_up_mix) writing mixh and mixed",
			Source: baselineSource("#define BASELINE 1", CPUHcUpF16().Source), SourceFile: "hc_up_f16.c",
			Plan: hcUpBaselinePlan(cpuElementwise)},
		{Name: VendorOpenBLAS, Backend: "cpu", Operator: "swiglu_f16", Library: "openblas",
			Doc:    "two openblas GEMMs into fp32 scratch g, u, then an elementwise SwiGLU (tilefit_swiglu_act)",
			Source: baselineSource("#define BASELINE 1\n#define CHAIN 1", CPUSwigluF16().Source), SourceFile: "swiglu_f16.c",
			Plan: swigluBaselinePlan(cpuElementwise)},
		{Name: VendorOpenBLAS, Backend: "cpu", Operator: "gemm_q8_f16", Library: "openblas",
			Doc:    "an elementwise dequantisation into wdq [N,K] fp16 (tilefit_q8_dequant), then the openblas GEMM on it",
			Source: baselineSource("#define BASELINE 1", CPUGemmQ8F16().Source), SourceFile: "gemm_q8_f16.c",
			Plan: q8BaselinePlan(cpuElementwise)},
		{Name: VendorCuBLAS, Backend: "cuda", Operator: "hc_up_f16", Library: "cublas",
			Doc:    "cublas GEMM X·Wᵀ with fp16 output into scratch Y4 [M,4S], then one vectorised mix pass (tilefit_hc_up_mix16: 16-byte loads and stores) writing mixh",
			Source: CUDAFusedVendorSource(), SourceFile: "fused_vendor.cu",
			Plan: HcUpVendorPlan, Params: Params{"BOUND": 0}, F16Intermediate: true},
		{Name: VendorCuBLAS, Backend: "cuda", Operator: "swiglu_f16", Library: "cublas",
			Doc:    "two cublas GEMMs with fp16 output into scratch g, u, then one vectorised SwiGLU pass (tilefit_swiglu_act16: 16-byte loads and stores)",
			Source: CUDAFusedVendorSource(), SourceFile: "fused_vendor.cu",
			Plan: SwigluVendorPlan, F16Intermediate: true},
		{Name: VendorCuBLASLt, Backend: "cuda", Operator: "hc_up_f16", Library: "cublaslt",
			Doc:    "autotuned cublasLt GEMM X·Wᵀ with fp16 output into scratch Y4 [M,4S], then one vectorised mix pass (tilefit_hc_up_mix16) writing mixh",
			Source: CUDAFusedVendorSource(), SourceFile: "fused_vendor.cu",
			Plan: func(op *Operator, d Dims) (Plan, error) { return hcUpVendorPlan(VendorGemmLt, op, d) }, Params: Params{"BOUND": 0}, F16Intermediate: true},
		{Name: VendorCuBLASLt, Backend: "cuda", Operator: "swiglu_f16", Library: "cublaslt",
			Doc:    "two autotuned cublasLt GEMMs with fp16 output into scratch g, u, then one vectorised SwiGLU pass (tilefit_swiglu_act16)",
			Source: CUDAFusedVendorSource(), SourceFile: "fused_vendor.cu",
			Plan: func(op *Operator, d Dims) (Plan, error) { return swigluVendorPlan(VendorGemmLt, op, d) }, F16Intermediate: true},
		{Name: VendorCuBLAS, Backend: "cuda", Operator: "gemm_q8_f16", Library: "cublas",
			Doc:    "an elementwise dequantisation into wdq [N,K] fp16 (tilefit_q8_dequant), then the cublas GEMM on it",
			Source: baselineSource("#define BASELINE 1", CUDAGemmQ8F16().Source), SourceFile: "gemm_q8_f16.cu",
			Plan: q8BaselinePlan(cudaElementwise)},
	}
	return out
}
