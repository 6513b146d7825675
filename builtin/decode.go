package builtin

import (
	_ "embed"
	"fmt"

	. "github.com/tilefit/tilefit/kernel"
)

//go:embed src/cuda/decode.cu
var cudaGemmDecodeSource string

// DecodeEntry is gemm_decode's kernel symbol.
const DecodeEntry = "tilefit_gemm_decode"

// DecodeRows is the token rows a gemm_decode block covers: the 16 rows of
// the mma's A side, padded in registers when M is smaller.
const DecodeRows = 16

// DecodeMinWeights is the smallest N·K a default gemm_decode tile is timed
// on (Fits): the decode shapes have N·K ≥ 2560·6144; below it a
// weight matrix is a few MiB and the stage ring's start-up dominates.
const DecodeMinWeights = 2560 * 6144

// CUDAGemmDecode returns the CUDA family gemm_decode: Y[M,N] =
// X[M,K]·W[N,K]ᵀ for decode (a few tokens), X (M×K) and W (N×K) row-major
// fp16, Y row-major fp32 or fp16 (Y_DTYPE), fp32 accumulation with
// mma.sync.m16n8k16 in gemm_f16's operand order (X the 16-row A side, M
// padded to 16 only in registers; W the n8 B side), so its class is
// gemm_f16's (DecodeNumerics) and a selector may use it at M ≤ 16 beside
// the other families above.
//
// A block of (WARPS+1)·32 threads owns BN weight rows and 16 tokens: one
// producer warp streams TK k per stage into a STAGES-deep shared-memory
// ring by TMA (TK/64 boxes of 64 k × BN rows of W and 64 k × 16 rows of X,
// 128-byte swizzle, zero-filled past N, M and K), completing on the stage's
// mbarrier; WARPS consumer warps, each owning BN/WARPS weight rows, read
// their fragments box by box one box ahead of their mma and release a
// stage with one arrive each. Grid (ceil(N/BN), ceil(M/16)); sm_90 only; K
// must be a multiple of 8.
//
// Entry point (the CUDA convention):
//
//	extern "C" __global__ void tilefit_gemm_decode(const __grid_constant__ TMap tmX,
//	    const __grid_constant__ TMap tmW, void *Y, long long M, long long N, long long K)
//
// PDL 1: programmatic dependent launch (the kernel waits for the previous
// one before it touches memory). PDL 2: the same, but the W rows of the
// first STAGES stages are copied before that wait — valid only when the
// kernel before it does not write W (constant weights).
func CUDAGemmDecode() *Family {
	return &Family{
		Name:       "gemm_decode",
		Backend:    "cuda",
		Doc:        "Y[M,N] = X[M,K]·W[N,K]^T for decode (M ≤ 16 per block), fp16 in, fp32 accumulate (class gemm_f16): a producer warp streams BN weight rows × TK k per stage into a STAGES-deep shared ring by TMA (64-k boxes, 128-byte swizzle, mbarriers), WARPS consumer warps run mma.sync m16n8k16 (X padded to 16 rows in registers), fragments one 64-k block ahead; sm_90; PDL 1: programmatic dependent launch, 2: also copy W before the wait (W must be constant)",
		Source:     cudaGemmDecodeSource,
		SourceFile: "decode.cu",
		Params: []Param{
			{Name: "BN", Values: []int{8, 16, 24, 32, 48, 64, 96, 128}, Sweep: []int{16, 32}, Doc: "weight rows (columns of Y) per block: a multiple of 8·WARPS, at most 32·WARPS"},
			{Name: "WARPS", Values: []int{1, 2, 4, 8}, Sweep: []int{2, 4}, Doc: "consumer warps per block (plus one producer warp); each owns BN/WARPS weight rows"},
			{Name: "TK", Values: []int{64, 128, 256, 512}, Sweep: []int{256}, Doc: "K per ring stage (TK/64 TMA boxes per operand)"},
			{Name: "STAGES", Values: []int{2, 3, 4, 6, 8, 12, 16}, Sweep: []int{4}, Doc: "ring stages (2 … 16)"},
			{Name: "PDL", Values: []int{0, 1, 2}, Sweep: []int{0}, Doc: "1: programmatic dependent launch (griddepcontrol); 2: also copy W before the wait (W must not be written by the kernel before)"},
		},
		Positional: []string{"BN", "WARPS"},
		Reference:  "32_4",
		Restrict:   decodeRestrict,
		Fits:       decodeFits,
		Operator:   GemmF16(),
		Plan:       decodePlan,
		Numerics:   DecodeNumerics,
	}
}

// DecodeNumerics is the numerics class of every gemm_decode tile: the class
// of gemm_f16 (WgmmaNumericsClass). Neither PDL nor the ring changes what
// is computed or in which order.
func DecodeNumerics(Params) string { return WgmmaNumericsClass }

// DecodeStageBytes is the shared memory of one ring stage: TK/64 boxes of
// W (BN rows of 128 bytes) and of X (16 rows of 128 bytes).
func DecodeStageBytes(p Params) int { return p["TK"] / 64 * (p["BN"] + DecodeRows) * 128 }

// DecodeSharedBytes is the dynamic shared memory of a gemm_decode block:
// 256 bytes of mbarriers, up to 1024 bytes to align the ring (128-byte
// swizzled boxes start 1024-byte aligned), then STAGES stages.
func DecodeSharedBytes(p Params) int { return 256 + 1024 + p["STAGES"]*DecodeStageBytes(p) }

// DecodeMaps returns the tensor maps of X (dims {K, M}, box {64, 16}) and W
// (dims {K, N}, box {64, BN}): row stride 2K bytes, 128-byte swizzle,
// 256-byte L2 promotion. TMA fills rows past M or N and k past K with zeros.
func DecodeMaps(p Params, m, n, k int) (x, w *TensorMap) {
	mk := func(buf string, rows, box int) *TensorMap {
		return &TensorMap{Buffer: buf, DType: F16, Dims: []int64{int64(k), int64(rows)}, Strides: []int64{int64(k) * 2},
			Box: []int{64, box}, Swizzle: 3, L2Promotion: 3}
	}
	return mk("X", m, DecodeRows), mk("W", n, p["BN"])
}

func decodeRestrict(p Params) error {
	bn, w, tk, st := p["BN"], p["WARPS"], p["TK"], p["STAGES"]
	if w < 1 || w > 8 || w&(w-1) != 0 {
		return fmt.Errorf("WARPS = %d (want 1, 2, 4 or 8)", w)
	}
	if bn < 8 || bn%(8*w) != 0 {
		return fmt.Errorf("BN = %d is not a multiple of 8·WARPS = %d", bn, 8*w)
	}
	if bn > 32*w {
		return fmt.Errorf("BN = %d gives a warp %d n8 weight-row groups, more than 4", bn, bn/(8*w))
	}
	if tk != 64 && tk != 128 && tk != 256 && tk != 512 {
		return fmt.Errorf("TK = %d (want 64, 128, 256 or 512)", tk)
	}
	if st < 2 || st > 16 {
		return fmt.Errorf("STAGES = %d (want 2 … 16)", st)
	}
	if pdl := p["PDL"]; pdl < 0 || pdl > 2 {
		return fmt.Errorf("PDL = %d (want 0, 1 or 2)", pdl)
	}
	if b := DecodeSharedBytes(p); b > CUDAMaxSharedBytes {
		return fmt.Errorf("shared memory %d bytes (STAGES·TK/64·(BN+16)·128 + 1280) exceeds %d", b, CUDAMaxSharedBytes)
	}
	return nil
}

// decodeFits keeps the default tiles on shapes whose weights are large
// enough to be worth streaming (N·K ≥ DecodeMinWeights) and whose K the
// bulk copies can take (a multiple of 8). It reads N and K only, never M.
func decodeFits(_ Params, d Dims) bool {
	n, k := d["N"], d["K"]
	return k%8 == 0 && n*k >= DecodeMinWeights
}

// DecodeGrid is the launch grid of p on M×N: (ceil(N/BN), ceil(M/16)).
func DecodeGrid(p Params, m, n int) [3]int {
	return [3]int{(n + p["BN"] - 1) / p["BN"], (m + DecodeRows - 1) / DecodeRows, 1}
}

// decodePlan is one launch of tilefit_gemm_decode(X, W, Y, M, N, K).
func decodePlan(p Params, d Dims) (Plan, error) {
	m, n, k := d["M"], d["N"], d["K"]
	if k%8 != 0 {
		return Plan{}, fmt.Errorf("gemm_decode: K = %d is not a multiple of 8 (TMA row strides are multiples of 16 bytes)", k)
	}
	if m < 1 || n < 1 || k < 1 {
		return Plan{}, fmt.Errorf("gemm_decode needs M, N, K ≥ 1 for its tensor maps; got %d, %d, %d", m, n, k)
	}
	x, w := DecodeMaps(p, m, n, k)
	g := DecodeGrid(p, m, n)
	if g[1] > 65535 {
		return Plan{}, fmt.Errorf("gemm_decode: M = %d needs %d blocks in y, more than 65535", m, g[1])
	}
	return Plan{Launches: []Launch{{
		Entry:  DecodeEntry,
		Grid:   g,
		Block:  [3]int{(p["WARPS"] + 1) * 32, 1, 1},
		Shared: DecodeSharedBytes(p),
		PDL:    p["PDL"] >= 1,
		Args: []Arg{
			{Kind: ArgTensorMap, Name: "X", Map: x},
			{Kind: ArgTensorMap, Name: "W", Map: w},
			{Kind: ArgOperand, Name: "Y"},
			{Kind: ArgDim, Name: "M"}, {Kind: ArgDim, Name: "N"}, {Kind: ArgDim, Name: "K"},
		},
	}}}, nil
}
