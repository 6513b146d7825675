package kernel

// The vendor baselines of the fused operators: what a user would write
// without a fused kernel — the vendor GEMM (OpenBLAS sgemm on the CPU,
// cuBLAS on CUDA; Launch.Vendor = VendorGemm) into fp32 scratch, then a
// separate elementwise kernel, or (gemm_q8_f16) a separate dequantisation
// kernel into fp16 scratch, then the vendor GEMM. The elementwise kernels are
// the families' own sources built with BASELINE=1 (same epilogue arithmetic),
// so the baseline pays exactly for the unfused data movement. Baselines are
// checked against the float64 reference, never required to be bitwise equal.

import "fmt"

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

// hcUpBaselinePlan: Y4 = vendor GEMM(X, W) into fp32 scratch [M,4S], then
// tilefit_hc_up_mix(Y4, H, mixh, mixed, M, S). A baseline has no BOUND
// parameter: it writes every output, the fp32 mixed too (as the bound
// variant does).
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

// swigluBaselinePlan: g, u = vendor GEMM(X, Wg), vendor GEMM(X, Wu) into
// fp32 scratch, then tilefit_swiglu_act(g, u, h, M, N).
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
// gemm_q8_f16 on the CPU (OpenBLAS) and CUDA (cuBLAS).
func FusedBaselines() []*Baseline {
	var out []*Baseline
	for _, be := range []struct {
		backend, name, lib string
		ew                 elementwise
		hc, sw, q8         string // family sources
		file               string // source file extension
	}{
		{"cpu", VendorOpenBLAS, "openblas", cpuElementwise, CPUHcUpF16().Source, CPUSwigluF16().Source, CPUGemmQ8F16().Source, "c"},
		{"cuda", VendorCuBLAS, "cublas", cudaElementwise, CUDAHcUpF16().Source, CUDASwigluF16().Source, CUDAGemmQ8F16().Source, "cu"},
	} {
		out = append(out,
			&Baseline{Name: be.name, Backend: be.backend, Operator: "hc_up_f16", Library: be.lib,
				Doc:    fmt.Sprintf("%s GEMM X·Wᵀ into fp32 scratch [M,4S], then an elementwise 4-stream mix (tilefit_hc_up_mix) writing mixh and mixed", be.name),
				Source: baselineSource("#define BASELINE 1", be.hc), SourceFile: "hc_up_f16." + be.file,
				Plan: hcUpBaselinePlan(be.ew)},
			&Baseline{Name: be.name, Backend: be.backend, Operator: "swiglu_f16", Library: be.lib,
				Doc:    fmt.Sprintf("two %s GEMMs into fp32 scratch g, u, then an elementwise SwiGLU (tilefit_swiglu_act)", be.name),
				Source: baselineSource("#define BASELINE 1\n#define CHAIN 1", be.sw), SourceFile: "swiglu_f16." + be.file,
				Plan: swigluBaselinePlan(be.ew)},
			&Baseline{Name: be.name, Backend: be.backend, Operator: "gemm_q8_f16", Library: be.lib,
				Doc:    fmt.Sprintf("an elementwise dequantisation into wdq [N,K] fp16 (tilefit_q8_dequant), then the %s GEMM on it", be.name),
				Source: baselineSource("#define BASELINE 1", be.q8), SourceFile: "gemm_q8_f16." + be.file,
				Plan: q8BaselinePlan(be.ew)},
		)
	}
	return out
}
