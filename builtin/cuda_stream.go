package builtin

import (
	_ "embed"
	"fmt"
	. "github.com/tilefit/tilefit/kernel"
)

//go:embed src/cuda/gemm_stream.cu
var cudaGemmStreamSource string

// StreamEntry is gemm_stream's kernel symbol.
const StreamEntry = "tilefit_gemm_stream"

// StreamMaxFragmentRegs bounds the registers a gemm_stream thread holds for
// its mma: 4·RW·NJ fp32 accumulators plus the double-buffered fragments of
// a whole stage, 2·(TK/16)·(4·RW + 2·NJ) (RW = BN/(16·WARPS) weight-row
// groups per warp, NJ = MT/8 token groups). ptxas has 255; the rest holds
// addresses, loop state and the loaders.
const StreamMaxFragmentRegs = 160

// CUDAGemmStream returns the CUDA family gemm_stream: Y[M,N] = X[M,K]·W[N,K]ᵀ
// for small M (decode) and skinny N, X (M×K) and W (N×K) row-major fp16, Y
// row-major fp32 or fp16 (Y_DTYPE), fp32 accumulation with mma.sync.m16n8k16
// with the operands swapped (Yᵀ = W·Xᵀ): 16 weight rows fill the mma's
// M side and up to 8 tokens its n8 side, so M = 1 streams the weights
// without padding them to a 16- or 64-row X tile.
//
// A block of WARPS·32 threads owns BN weight rows and MT tokens and walks K
// in steps of TK through a STAGES-deep cp.async pipeline; grid
// (ceil(N/BN), ceil(M/MT)). Every output element is reduced as acc = 0;
// acc = mma(acc, 16 k) for k = 0, 16, ... < K with k ≥ K read as zero, K
// never split: the order of gemm_f16 and gemm_wgmma, so its numerics class
// is theirs (StreamNumerics) and a selector may use it for M ≤ 16 and the
// others above without changing a bit of any row.
//
// Entry point (the CUDA convention: operand pointers, then int64 dims):
//
//	extern "C" __global__ void tilefit_gemm_stream(const __half *X, const __half *W, void *Y,
//	                                               long long M, long long N, long long K)
//
// PDL 1 launches it with programmatic stream serialisation (sm_90): the
// kernel triggers its dependents at once and waits for the previous kernel
// with griddepcontrol before it touches memory, so its launch and prologue
// overlap the previous kernel's tail.
func CUDAGemmStream() *Family {
	return &Family{
		Name:       "gemm_stream",
		Backend:    "cuda",
		Doc:        "Y[M,N] = X[M,K]·W[N,K]^T for small M and skinny N, fp16 in, fp32 accumulate: mma.sync m16n8k16 with W as the 16-row side and X as the n8 side (swap AB, k ascending in 16s, class gemm_f16), BN weight rows × MT tokens per block of WARPS warps, STAGES-deep cp.async pipeline; PDL 1: programmatic dependent launch (sm_90)",
		Source:     joinSource("", ptxCommon(), srcFile{"gemm_stream.cu", cudaGemmStreamSource}),
		SourceFile: "gemm_stream.cu",
		Params: []Param{
			{Name: "BN", Values: []int{16, 32, 48, 64, 96, 128}, Sweep: []int{32, 64}, Doc: "weight rows (columns of Y) per block: a multiple of 16·WARPS"},
			{Name: "MT", Values: []int{8, 16, 32}, Sweep: []int{8, 16}, Doc: "tokens (rows of Y) per block: 8, 16 or 32"},
			{Name: "WARPS", Values: []int{1, 2, 4, 8}, Sweep: []int{2, 4}, Doc: "warps per block; each owns BN/WARPS weight rows and every token"},
			{Name: "TK", Values: []int{64, 32, 128}, Sweep: []int{64}, Doc: "K per pipeline stage (one barrier per stage)"},
			{Name: "STAGES", Values: []int{8, 2, 3, 4, 6, 12, 16}, Sweep: []int{8}, Doc: "cp.async pipeline stages (all of them in flight)"},
			{Name: "PDL", Values: []int{0, 1}, Sweep: []int{0}, Doc: "1: programmatic dependent launch (griddepcontrol; sm_90)"},
		},
		Positional: []string{"BN", "MT", "WARPS"},
		Reference:  "32_8_2",
		Restrict:   streamRestrict,
		Operator:   GemmF16(),
		Plan:       streamPlan,
		Numerics:   StreamNumerics,
	}
}

// StreamNumerics is the numerics class of every gemm_stream tile: the class
// of gemm_f16 (WgmmaNumericsClass). PDL changes when a launch starts, not
// what it computes.
func StreamNumerics(Params) string { return WgmmaNumericsClass }

// StreamSharedBytes is the dynamic shared memory of a gemm_stream block:
// STAGES·(BN+MT)·TK·2 bytes.
func StreamSharedBytes(p Params) int { return p["STAGES"] * (p["BN"] + p["MT"]) * p["TK"] * 2 }

// StreamFragmentRegs is the fragment and accumulator registers per thread
// of p (see StreamMaxFragmentRegs).
func StreamFragmentRegs(p Params) int {
	w := p["WARPS"]
	if w <= 0 {
		return 0
	}
	rw, nj, kk := p["BN"]/(16*w), p["MT"]/8, p["TK"]/16
	return 4*rw*nj + 2*kk*(4*rw+2*nj)
}

func streamRestrict(p Params) error {
	bn, mt, w, tk, st := p["BN"], p["MT"], p["WARPS"], p["TK"], p["STAGES"]
	if w < 1 || w > 8 || w&(w-1) != 0 {
		return fmt.Errorf("WARPS = %d (want 1, 2, 4 or 8)", w)
	}
	if bn < 16 || bn%(16*w) != 0 {
		return fmt.Errorf("BN = %d is not a multiple of 16·WARPS = %d", bn, 16*w)
	}
	if mt != 8 && mt != 16 && mt != 32 {
		return fmt.Errorf("MT = %d (want 8, 16 or 32)", mt)
	}
	if tk != 32 && tk != 64 && tk != 128 {
		return fmt.Errorf("TK = %d (want 32, 64 or 128)", tk)
	}
	if st < 2 {
		return fmt.Errorf("STAGES = %d (want ≥ 2)", st)
	}
	if pdl := p["PDL"]; pdl != 0 && pdl != 1 {
		return fmt.Errorf("PDL = %d (want 0 or 1)", pdl)
	}
	if r := StreamFragmentRegs(p); r > StreamMaxFragmentRegs {
		return fmt.Errorf("%d weight-row groups × %d token groups with TK %d need %d fragment and accumulator registers per thread, more than %d", bn/(16*w), mt/8, tk, r, StreamMaxFragmentRegs)
	}
	if b := StreamSharedBytes(p); b > CUDAMaxSharedBytes {
		return fmt.Errorf("shared memory STAGES·(BN+MT)·TK·2 = %d bytes exceeds %d", b, CUDAMaxSharedBytes)
	}
	return nil
}

// StreamGrid is the launch grid of p on M×N: (ceil(N/BN), ceil(M/MT)).
func StreamGrid(p Params, m, n int) [3]int {
	return [3]int{(n + p["BN"] - 1) / p["BN"], (m + p["MT"] - 1) / p["MT"], 1}
}

// streamPlan is one launch of tilefit_gemm_stream(X, W, Y, M, N, K).
func streamPlan(p Params, d Dims) (Plan, error) {
	m, n := d["M"], d["N"]
	g := StreamGrid(p, m, n)
	if g[1] > 65535 {
		return Plan{}, fmt.Errorf("gemm_stream: M = %d needs %d blocks in y, more than 65535 (MT = %d)", m, g[1], p["MT"])
	}
	return Plan{Launches: []Launch{{
		Entry:  StreamEntry,
		Grid:   g,
		Block:  [3]int{p["WARPS"] * 32, 1, 1},
		Shared: StreamSharedBytes(p),
		PDL:    p["PDL"] == 1,
		Args:   Args(Operands("X", "W", "Y"), DimArgs("M", "N", "K")),
	}}}, nil
}
