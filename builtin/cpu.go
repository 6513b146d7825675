package builtin

import (
	_ "embed"
	"fmt"
	. "github.com/tilefit/tilefit/kernel"
)

//go:embed src/cpu/gemm_f16.c
var cpuGemmF16Source string

// CPUGemmF16 returns the CPU family gemm_f16: Y[M,N] = X[M,K]·W[N,K]ᵀ with
// fp16 inputs converted to fp32 while packing, fp32 FMA accumulation in
// k order 0..K-1 for every output element (so every tile gives the same
// bits), parallel over THREADS POSIX threads.
//
// Entry point (the CPU convention, see Launch):
//
//	int tilefit_gemm_f16(void **ptrs, const int64_t *args)
//
// ptrs = {X, W, Y}, args = {M, N, K}.
//
// Parameters: TM×TN is the block of Y one task owns (rows × columns), TK
// the K step of the packed panels, THREADS the threads a call uses.
func CPUGemmF16() *Family {
	return &Family{
		Name:       "gemm_f16",
		Backend:    "cpu",
		Doc:        "Y[M,N] = X[M,K]·W[N,K]^T, fp16 in, fp32 accumulate (FMA, k ascending), AVX2/F16C, TM×TN blocks over THREADS threads",
		Source:     joinSource("", f16Common(), srcFile{"gemm_f16.c", cpuGemmF16Source}),
		SourceFile: "gemm_f16.c",
		Params: []Param{
			{Name: "TM", Values: []int{16, 32, 64, 128}, Sweep: []int{16, 32, 64, 128}, Doc: "rows of Y per block"},
			{Name: "TN", Values: []int{32, 64, 128, 256}, Sweep: []int{32, 64, 128, 256}, Doc: "columns of Y per block"},
			{Name: "THREADS", Values: []int{1, 2, 4, 8}, Sweep: []int{1, 2}, Doc: "threads per call"},
			{Name: "TK", Values: []int{64, 128, 256, 512}, Sweep: []int{256}, Doc: "K step of the packed panels"},
			tailParam,
		},
		Positional: []string{"TM", "TN", "THREADS"},
		Reference:  "64_128_2",
		Operator:   GemmF16(),
		Plan: func(p Params, d Dims) (Plan, error) {
			return Plan{Launches: []Launch{{Entry: "tilefit_gemm_f16",
				Args: Args(Operands("X", "W", "Y"), DimArgs("M", "N", "K"))}}}, nil
		},
		Restrict: func(p Params) error {
			// Both packed fp32 panels of one block must fit a 512 KiB share of L2.
			if b := (p["TM"] + p["TN"]) * p["TK"] * 4; b > 512<<10 {
				return fmt.Errorf("packed panels (TM+TN)·TK·4 = %d bytes exceed 512 KiB", b)
			}
			return checkTail(p)
		},
	}
}

// OpenBLASGemmF16 is the CPU vendor baseline of gemm_f16: OpenBLAS
// cblas_sgemm on fp32 copies of the inputs (VendorGemm).
func OpenBLASGemmF16() *Baseline {
	return &Baseline{Name: VendorOpenBLAS, Backend: "cpu", Operator: "gemm_f16", Library: "openblas",
		Install: "apt-get install libopenblas0-pthread (Debian/Ubuntu; libopenblas.so.0 on the library path)",
		Doc:     "OpenBLAS cblas_sgemm on fp32 copies of X and W (made outside the timed region); fp16 Y rounded after the timed call",
		Plan:    vendorGemmPlan}
}

func vendorGemmPlan(op *Operator, d Dims) (Plan, error) {
	return Plan{Launches: []Launch{{Vendor: VendorGemm, Args: Args(Operands("X", "W", "Y"), DimArgs("M", "N", "K"))}}}, nil
}
