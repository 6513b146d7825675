package builtin

import (
	_ "embed"
	"fmt"
	. "github.com/tilefit/tilefit/kernel"
)

//go:embed src/cuda/gemm_f16.cu
var cudaGemmF16Source string

// CUDA limits the gemm_f16 restrictions check against (Hopper, sm_90).
const (
	// CUDAMaxSharedBytes is the most dynamic shared memory one block may
	// opt in to on sm_90 (227 KiB).
	CUDAMaxSharedBytes = 227 << 10
	// CUDAMaxFragmentRegs bounds the registers a thread holds for the mma:
	// 4·MI·NI fp32 accumulators plus double-buffered A and B fragments
	// 2·(4·MI + 4·NP) (MI = warp rows/16, NI = warp columns/8, NP = NI/2).
	// Above it ptxas spills (seen at 208 with NVRTC 11.8 for sm_90).
	CUDAMaxFragmentRegs = 192
)

// CUDAGemmF16 returns the CUDA family gemm_f16: Y[M,N] = X[M,K]·W[N,K]ᵀ with
// X (M×K) and W (N×K) row-major fp16 and Y row-major fp32 (fp16 when Y_DTYPE
// is 1, the operand type chosen per sweep), fp32 accumulation on the tensor cores with
// mma.sync.m16n8k16 fed by ldmatrix from a STAGES-deep cp.async pipeline.
//
// A block of WARPS·32 threads owns a TM×TN tile of Y and walks K in steps of
// TK; the warps split the tile WM×WN (CUDAWarpLayout). Every output element
// is reduced as acc = 0; acc = mma(acc, 16 k) for k = 0, 16, 32, ... < K, with
// k ≥ K read as zero and K never split, so every tile gives the same bits.
// SWZ orders the blocks: 0 row-major, 1 GROUP_M (GROUP tile rows at a time),
// 2 GROUP_N (GROUP tile columns at a time), 3 transposed (column-major).
//
// Entry point (the CUDA convention: operand pointers, then int64 dims):
//
//	extern "C" __global__ void tilefit_gemm_f16(const __half *X, const __half *W, void *Y,
//	                                            long long M, long long N, long long K)
//
// Grid: ceil(M/TM)·ceil(N/TN) blocks in one dimension; dynamic shared memory
// STAGES·(TM+TN)·TK·2 bytes (CUDASharedBytes).
func CUDAGemmF16() *Family {
	return &Family{
		Name:       "gemm_f16",
		Backend:    "cuda",
		Doc:        "Y[M,N] = X[M,K]·W[N,K]^T, fp16 in, fp32 accumulate on tensor cores (mma.sync m16n8k16, k ascending in 16s), ldmatrix + cp.async STAGES-deep pipeline, TM×TN tile per block of WARPS warps",
		Source:     joinSource("", ptxCommon(), srcFile{"gemm_f16.cu", cudaGemmF16Source}),
		SourceFile: "gemm_f16.cu",
		Params: []Param{
			{Name: "TM", Values: []int{16, 32, 64, 128}, Sweep: []int{16, 32, 64, 128}, Doc: "rows of Y per block"},
			{Name: "TN", Values: []int{32, 64, 128, 256}, Sweep: []int{32, 64, 128, 256}, Doc: "columns of Y per block"},
			{Name: "WARPS", Values: []int{1, 2, 4, 8}, Sweep: []int{1, 2, 4, 8}, Doc: "warps per block (the seeds' SG)"},
			{Name: "TK", Values: []int{32, 64}, Sweep: []int{32}, Doc: "K step per pipeline stage"},
			{Name: "STAGES", Values: []int{2, 3, 4, 5}, Sweep: []int{4}, Doc: "cp.async pipeline stages"},
			{Name: "SWZ", Values: []int{0, 1, 2, 3}, Sweep: []int{0}, Doc: "block order: 0 row-major, 1 GROUP_M, 2 GROUP_N, 3 transposed"},
			{Name: "GROUP", Values: []int{8, 2, 4, 16}, Sweep: []int{8}, Doc: "tile rows (SWZ 1) or columns (SWZ 2) per group"},
			tailParam,
		},
		Positional: []string{"TM", "TN", "WARPS"},
		Reference:  "128_128_4",
		Restrict:   cudaRestrict,
		Operator:   GemmF16(),
		Plan:       cudaGemmPlan,
	}
}

// cudaGemmPlan is one launch of tilefit_gemm_f16(X, W, Y, M, N, K): grid
// ceil(M/TM)·ceil(N/TN) blocks, WARPS·32 threads, CUDASharedBytes(p).
func cudaGemmPlan(p Params, d Dims) (Plan, error) {
	m, n := d["M"], d["N"]
	grid := RowBlocks(m, p["TM"], p["TAIL"]) * ((n + p["TN"] - 1) / p["TN"])
	return Plan{Launches: []Launch{{
		Entry: "tilefit_gemm_f16",
		Grid:  [3]int{grid, 1, 1}, Block: [3]int{p["WARPS"] * 32, 1, 1},
		Shared: CUDASharedBytes(p),
		Args:   Args(Operands("X", "W", "Y"), DimArgs("M", "N", "K")),
	}}}, nil
}

// CuBLASGemmF16 is the CUDA vendor baseline of gemm_f16: cublasGemmEx with
// fp16 inputs, fp32 compute and Y of the chosen type (VendorGemm).
func CuBLASGemmF16() *Baseline {
	return &Baseline{Name: VendorCuBLAS, Backend: "cuda", Operator: "gemm_f16", Library: "cublas",
		Install: "the CUDA toolkit's cuBLAS (libcublas.so.13; NVIDIA's package libcublas-13-0), on the library path or under $CUDA_HOME",
		Doc:     "cublasGemmEx, fp16 in, CUBLAS_COMPUTE_32F, Y fp32 or fp16", Plan: vendorGemmPlan}
}

// CUDAWarpLayout returns the WM×WN = warps arrangement of warps over a TM×TN
// tile that the CUDA gemm_f16 source picks: warp tiles (TM/WM)×(TN/WN) with
// both sides multiples of 16, the most square one (least |log2 of the side
// ratio|), ties to the larger WM. ok is false when none divides the tile.
func CUDAWarpLayout(tm, tn, warps int) (wm, wn int, ok bool) {
	best := 1 << 30
	for m := warps; m >= 1; m /= 2 {
		n := warps / m
		if m*n != warps || tm%(m*16) != 0 || tn%(n*16) != 0 {
			continue
		}
		if s := log2Ratio(tm/m, tn/n); s < best {
			best, wm, wn, ok = s, m, n, true
		}
	}
	return wm, wn, ok
}

func log2Ratio(a, b int) int {
	s := 0
	for a > b {
		a /= 2
		s++
	}
	for b > a {
		b /= 2
		s++
	}
	return s
}

// CUDAFragmentRegs is the registers per thread of a wtm×wtn warp tile's
// accumulators and double-buffered fragments: 4·MI·NI + 2·(4·MI + 4·NP)
// with MI = wtm/16, NI = wtn/8, NP = wtn/16.
func CUDAFragmentRegs(wtm, wtn int) int {
	mi, ni, np := wtm/16, wtn/8, wtn/16
	return 4*mi*ni + 2*(4*mi+4*np)
}

// CUDASharedBytes is the dynamic shared memory of a gemm_f16 CUDA block:
// STAGES·(TM+TN)·TK·2 bytes.
func CUDASharedBytes(p Params) int {
	return p["STAGES"] * (p["TM"] + p["TN"]) * p["TK"] * 2
}

func cudaRestrict(p Params) error {
	tm, tn, w := p["TM"], p["TN"], p["WARPS"]
	wm, wn, ok := CUDAWarpLayout(tm, tn, w)
	if !ok {
		return fmt.Errorf("no layout of %d warps splits %d×%d into warp tiles of multiples of 16×16", w, tm, tn)
	}
	if r := CUDAFragmentRegs(tm/wm, tn/wn); r > CUDAMaxFragmentRegs {
		return fmt.Errorf("warp tile %d×%d needs %d accumulator and fragment registers per thread, more than %d", tm/wm, tn/wn, r, CUDAMaxFragmentRegs)
	}
	if b := CUDASharedBytes(p); b > CUDAMaxSharedBytes {
		return fmt.Errorf("shared memory STAGES·(TM+TN)·TK·2 = %d bytes exceeds %d", b, CUDAMaxSharedBytes)
	}
	if s := p["SWZ"]; (s == 0 || s == 3) && p["GROUP"] != 8 {
		return fmt.Errorf("GROUP applies only to SWZ 1 and 2 (leave it at 8)")
	}
	if err := checkTail(p); err != nil {
		return err
	}
	if t := p["TAIL"]; t > 0 {
		// The row-tail blocks run a TAIL×TN tile with the same warps.
		wm, wn, ok := CUDAWarpLayout(t, tn, w)
		if !ok {
			return fmt.Errorf("no layout of %d warps splits the %d×%d row-tail tile into warp tiles of multiples of 16×16", w, t, tn)
		}
		if r := CUDAFragmentRegs(t/wm, tn/wn); r > CUDAMaxFragmentRegs {
			return fmt.Errorf("row-tail warp tile %d×%d needs %d registers per thread, more than %d", t/wm, tn/wn, r, CUDAMaxFragmentRegs)
		}
	}
	return nil
}
