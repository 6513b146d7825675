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
// the mma's A side, padded with zeros (TMA's fill) when M is smaller.
const DecodeRows = 16

// DecodeMinWeights and DecodeMinK bound the shapes a default gemm_decode
// tile is timed on (Fits): N·K ≥ 2560·6144 (the decode shapes)
// and K ≥ 4096. On the wide, shallow strata shapes (Wqkv, Wq: K 2560)
// gemm_stream streams faster (85–87% of copy against 57–58% at M 1–16,
// docs/results/h200-decode), so the family stays off them and off every
// strata cell but Wout's.
const (
	DecodeMinWeights = 2560 * 6144
	DecodeMinK       = 4096
)

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
// KSPLIT > 0 splits K into chunks of 64·KSPLIT: each chunk's partial from
// zero, the partials added in chunk order (gemm_wgmma's split-K class of
// the same chunk, DecodeNumerics); KW warp groups run KW chunks side by
// side, so a reduction chain is a chunk long, not K.
//
// KC > 1 (with KSPLIT) spreads a row block's chunks over a thread-block
// cluster of KC CTAs: each streams its share of K, stores its chunks'
// partials into rank 0's shared memory (distributed shared memory), and
// rank 0 adds all of them in chunk order after an mbarrier that every
// consumer thread of the cluster arrives on — the same class, one launch,
// and ceil(N/BN)·KC CTAs, so a shape with few row blocks (Wout) still
// streams through every SM.
//
// PDL 1: programmatic dependent launch (the kernel waits for the previous
// one before it touches memory). PDL 2: the same, but the W boxes of the
// first STAGES stages (PRE n > 0: of the first n) are loaded before that
// wait — valid only when the kernel before it does not write W (constant
// weights).
//
// PF > 0 prefetches W into the L2 (cp.async.bulk.prefetch.tensor) PF
// stages ahead of the ring, the first PF stages at entry, before the wait:
// unlike PDL 2 it assumes nothing about the kernel before, since a
// prefetch writes nothing but L2 lines, which that kernel's stores update.
// PG > 0 asks for the same lines with prefetch.global.L2 (the load unit,
// not the tensor unit), through W's address as a seventh argument.
// XM 1 loads X boxes of min(M, 16) rows (DecodeXRows). LD 1 (with PDL)
// lets the next kernel launch once every CTA has issued its last load, not
// at entry. LP sets W's L2 promotion (host only). XG > 0 has the
// consumers load X's A fragments straight from global memory (X's address
// as one more argument) instead of X boxes in the ring, which then holds W
// alone: under PDL 2 a preloaded stage completes on its W, with no X copy
// queued behind the ring's first fill (XG 2 adds an L1 prefetch of each
// chunk's X lines). None of them changes what is computed. On the H200
// (docs/results/h200-decode4) PF and PG made every tile slower, XM and LD
// gave nothing, LP 2 0–2.5%; XG was 20–130% slower (h200-decode6).
// XA 1 (PDL 2) copies the X boxes of the stages preloaded before the wait
// by cp.async after it, so that they do not queue behind the preloaded W
// in the tensor unit (X's address as one more argument). XS n moves X out
// of the ring into n slots per warp group, copied by cp.async n stages
// ahead, so the ring's stages hold W alone and more of them fit
// (DecodeXRingBytes); on the H200 it was slower wherever more than one
// token row is copied (docs/results/h200-decode9). ER 1 releases a stage
// before the warp waits for its next one (the one-box-ahead fragment load
// otherwise holds it): 0.3–1.6 % on the XA tiles. MB n gives a block n
// token rows (1, 2, 4 or 8), X boxes of n rows in slots of their own
// after the W stages (DecodeXRingBytes), so that at M ≤ n a stage is
// nearly W alone and more W stages fit; its A registers are built per
// lane with rows n … 15 zero, the same bits per output row.
func CUDAGemmDecode() *Family {
	return &Family{
		Name:       "gemm_decode",
		Backend:    "cuda",
		Doc:        "Y[M,N] = X[M,K]·W[N,K]^T for decode (M ≤ 16 per block), fp16 in, fp32 accumulate (class gemm_f16): a producer warp streams BN weight rows × TK k per stage into a STAGES-deep shared ring by TMA (64-k boxes, 128-byte swizzle, mbarriers), WARPS consumer warps run mma.sync m16n8k16 (X padded to 16 rows by TMA's zero fill), fragments one 64-k box ahead; KSPLIT > 0: fixed split-K in gemm_wgmma's class gemm_f16/splitkC (KW chunks side by side, partials added in chunk order); KC > 1: the chunks of a row block spread over a cluster of KC CTAs, reduced in chunk order in rank 0's shared memory; sm_90; PDL 1: programmatic dependent launch, 2: also copy W before the wait (W must be constant; PRE n: only the first n stages' W); PF: prefetch W into the L2 PF stages ahead, the first before the wait (valid after any kernel); PG: the same by prefetch.global.L2 (W's address as an extra argument); XM 1: X boxes of min(M, 16) rows; LD 1: trigger the next kernel after the last load, not at entry; LP: W's L2 promotion; XG: X's A fragments loaded by the consumers from global memory (the ring holds W alone); XA 1 (PDL 2): the X boxes of the preloaded stages copied by cp.async after the wait, not queued behind the preloaded W in the tensor unit; XS n: X in its own ring of n slots per warp group, copied by cp.async n stages ahead, the ring's stages W alone; ER 1: a stage released before the warp waits for its next one; MB n: blocks of n token rows, X boxes of n rows in slots of their own",
		Source:     cudaGemmDecodeSource,
		SourceFile: "decode.cu",
		Params: []Param{
			{Name: "BN", Values: []int{8, 16, 24, 32, 40, 48, 64, 80, 96, 128}, Sweep: []int{64}, Doc: "weight rows (columns of Y) per block: a multiple of 8·WARPS/KW, at most 48·WARPS/KW"},
			{Name: "WARPS", Values: []int{1, 2, 4, 5, 8, 10, 16}, Sweep: []int{4}, Doc: "consumer warps per block (plus one producer warp); each owns BN·KW/WARPS weight rows (5 and 10: BN 40 in n8 groups of one per warp)"},
			{Name: "TK", Values: []int{64, 128, 256, 512}, Sweep: []int{256}, Doc: "K per ring stage (TK/64 TMA boxes per operand)"},
			{Name: "STAGES", Values: []int{2, 3, 4, 6, 8, 10, 12, 14, 16, 18, 20, 24, 28, 32}, Sweep: []int{4}, Doc: "ring stages (2 … 32)"},
			{Name: "PDL", Values: []int{0, 1, 2}, Sweep: []int{0}, Doc: "1: programmatic dependent launch (griddepcontrol); 2: also copy W before the wait (W must not be written by the kernel before)"},
			{Name: "KSPLIT", Values: []int{0, 4, 8, 10, 16, 20, 24, 40, 48, 80}, Sweep: []int{0}, Doc: "K chunk in k-blocks of 64 (0: K not split): each chunk's fp32 partial starts from zero and the partials are added in chunk order — gemm_wgmma's split-K class gemm_f16/splitkC, C = 64·KSPLIT (K must be a multiple of C)"},
			{Name: "KW", Values: []int{1, 2, 4, 8}, Sweep: []int{1}, Doc: "consumer warps along K (with KSPLIT > 0): KW chunks stream side by side, each through WARPS/KW warps; the number of chunks must be a multiple of KW"},
			{Name: "KC", Values: []int{1, 2, 3, 4, 6, 8}, Sweep: []int{1}, Doc: "CTAs per thread-block cluster along K (with KSPLIT > 0): a row block's chunks are spread over KC CTAs (rank r streams the r-th KC-th of K), their partials go to rank 0's shared memory, which adds them in chunk order — the same class; the number of chunks must be a multiple of KC·KW"},
			{Name: "PF", Values: []int{0, 2, 4, 8, 16, 32, 64, 128}, Sweep: []int{0}, Doc: "W stages prefetched into the L2 (0: none): stages 0 … PF-1 at entry, before the wait for the kernel before (valid after any kernel: a prefetch only warms the L2, where every write lands), and with PF > STAGES stage q+PF as stage q is loaded; PF ≥ the CTA's stages asks for all of its weights at once (H200: 12–40% slower, docs/results/h200-decode4)"},
			{Name: "PG", Values: []int{0, 4, 8, 16, 24, 32, 64}, Sweep: []int{0}, Doc: "W stages prefetched into the L2 by prefetch.global.L2 (the load unit's path, not the tensor unit's queue; one 128-byte line per lane and instruction): stages 0 … PG-1 at entry, before the wait (valid after any kernel, as PF), then stage q+PG as stage q is loaded; the kernel then takes W's address as a seventh argument (H200: 30–70% slower, docs/results/h200-decode4)"},
			{Name: "LP", Values: []int{0, 1, 2, 3}, Sweep: []int{3}, Doc: "L2 promotion of W's tensor map: 0 none, 1 64 B, 2 128 B, 3 256 B (a 128-byte box row then brings its neighbour into the L2 too)"},
			{Name: "XM", Values: []int{0, 1}, Sweep: []int{0}, Doc: "1: X boxes of min(M, 16) token rows, not 16 (the rows past M zeroed once in shared memory): fewer X bytes per stage at M < 16, the same arithmetic (H200: within 1–2% of XM 0)"},
			{Name: "XG", Values: []int{0, 1, 2}, Sweep: []int{0}, Doc: "1: the consumers load X's mma A fragments from global memory themselves (4-byte loads, zero past M and K), issued before they wait for the box's W; the ring holds W alone and, under PDL 2, a preloaded stage completes on its W (no X copy queued behind the ring's first fill); X's address is one more kernel argument; 2: 1 plus an L1 prefetch of each chunk's X lines; not with XM (H200: bitwise, but 20–130% slower — the consumers' X loads, one box ahead, are latency-bound; docs/results/h200-decode6)"},
			{Name: "XA", Values: []int{0, 1}, Sweep: []int{0}, Doc: "1 (with PDL 2, not XG or XM): the X boxes of the stages whose W is copied before the wait are copied after it by cp.async (the load unit's path, by a consumer warp of the group that reads the stage, into TMA's swizzled layout), not by TMA, where they queue behind the preloaded W; X's address is one more kernel argument"},
			{Name: "XS", Values: []int{0, 2, 3, 4}, Sweep: []int{0}, Doc: "n > 0 (not with XA, XG or XM; n·KW ≤ STAGES): X leaves the ring for its own n slots per warp group after it, each stage's X copied by cp.async (as XA's) by a consumer warp of its group, the first n right after the wait and the next one when the group releases a stage; the ring's stages then hold W alone, so more of them fit (under PDL 2 more W is copied before the wait); only the token rows < M are copied (the rest zeroed once); X's address is one more kernel argument (H200: bitwise, but slower wherever more than one token row is copied — every CTA copies the same X lines at once and n slots are too short a lookahead for that L2 latency; docs/results/h200-decode9)"},
			{Name: "ER", Values: []int{0, 1}, Sweep: []int{0}, Doc: "1: a consumer warp runs a stage's last mma and releases the stage before it loads (and waits for) its next stage's first box, so that no slot is held while the next stage lands; the arithmetic is unchanged (H200: the XA tiles 0.3–1.6 % faster, docs/results/h200-decode9)"},
			{Name: "RV", Values: []int{0, 1}, Sweep: []int{0}, Doc: "1 (KC > 1): the cluster's partials stored into rank 0 in the order a lane holds its fragment, two floats a remote store, and read back by rank 0's warp of the same lane (16 rows' room whatever M), not one float a store in row order; the sums and their order are the same (H200: 1–3 % faster on the 64_8 and PRE 4 cluster tiles, 7 % slower on Wout's 12-stage XA tile, docs/results/h200-decode9 call 3)"},
			{Name: "MB", Values: []int{0, 1, 2, 4, 8}, Sweep: []int{0}, Doc: "n > 0 (1, 2, 4 or 8; not with XG, XS or XM): a block owns n token rows, not 16 (the grid's y is ceil(M/n)), so its X boxes are n rows and a stage carries n·128 bytes of X a box, not 2 KiB: at M ≤ n the same shared memory holds more W stages (under PDL 2 more W copied before the wait); X sits in slots of its own after the W stages, and each lane builds its mma A registers from its token row, the rows n … 15 zeros; the arithmetic of every output row is unchanged"},
			{Name: "WR", Values: []int{0, 1}, Sweep: []int{0}, Doc: "1 (not with PF; K a multiple of 64): W's tensor map is 3-D (64 k, K/64 boxes, N rows) and a stage's W is one TMA copy of TK/64 boxes × BN rows, row by row in shared memory (line r·TK/64 + i holds row r's box i), so each weight row's TK·2 contiguous bytes are asked for together and the tensor unit gets one copy a stage, not TK/64; the consumers' ldmatrix addresses follow (two-way bank conflicts at TK 128); the arithmetic is unchanged"},
			{Name: "PRE", Values: []int{0, 1, 2, 4, 8}, Sweep: []int{0}, Doc: "with PDL 2: the stages whose W boxes are copied before the wait (0: all STAGES of the ring's first fill; n: the first n, at most STAGES), so that fewer of this call's bytes compete with the drain of the call before"},
			{Name: "LD", Values: []int{0, 1}, Sweep: []int{0}, Doc: "with PDL: 0 lets the next kernel launch at entry, 1 once every CTA has issued all its loads (the next call's CTAs, where they fit beside this call's, then start during its drain; H200: the rings small enough to share an SM cost more than the overlap gave)"},
		},
		Positional: []string{"BN", "WARPS"},
		Reference:  "32_4",
		Restrict:   decodeRestrict,
		Extra:      decodeExtraTiles,
		// With --const-weights: the plain tile with PDL 2, 94 % of copy
		// bandwidth on 8192² against 86 % for its PDL 1 twin in the same
		// rounds (docs/results/h200-decode7); on 4096² and Wout the split
		// tiles' PDL 2 with all STAGES before the wait was slower than PDL
		// 1, with PRE 1 (4096²) and PRE 4 (Wout) 1–2 % and 4–5 % faster
		// (docs/results/h200-fused9 call 2). XA (the preloaded stages' X
		// by cp.async) makes the whole first fill pay: on 4096² the XA
		// tile is 3–5 % faster than PRE 1 in every cell, 79–81 % of copy
		// bandwidth, and on Wout XA with 12 stages ties PRE 4 (better at
		// M 16, worse at M 1), so both stay (docs/results/h200-decode8).
		// ER 1 (a stage released before the warp waits for its next
		// one) made both XA tiles 1–1.5 % (4096²) and 0.5–1 % (Wout)
		// faster in two passes of one call, and the 64_8 cluster tile
		// with XA and ER is the fastest at M 1 on 4096² (82 %; 74 % at
		// M 16, where its cluster's end costs more), so it joins for the
		// selector to pick per M in the same class (docs/results/
		// h200-decode9). RV 1 (the cluster's partials two floats a
		// remote store) made the 64_8 tile 1 % and Wout's PRE 4 tile 3 %
		// faster in two passes (call 3), so those carry it; Wout's XA
		// tile was 7 % slower with it and does not. MB 8 (blocks of 8
		// token rows, so a stage carries 2 KiB of X, not 4) made the
		// 4096² XA tile 2–3.5 % faster at M 1 and 0.5–1.5 % at M 7 in four
		// passes of two calls; with X's A registers by ldmatrix.x4 its 16
		// stages beat 20 (call 3: 9.34 µs at M 1, 85–86 %, 9.51–9.54 at M
		// 7, against the pick's 9.70 and 9.67; h200-decode10). The selector
		// takes it at M ≤ 8 (at M 16 it runs two row blocks, each reading
		// all of W). On Wout MB was 1–8 % slower at every stage count, so
		// Wout keeps its tiles.
		ConstWeights:        []string{"64_4.tk128.stages8.pdl2.lp2", "32_8.tk128.stages16.pdl2.ksplit16.kw4.lp2.xa1.er1", "32_8.tk128.stages16.pdl2.ksplit16.kw4.lp2.xa1.er1.mb8", "64_8.tk128.stages10.pdl2.ksplit16.kw2.kc2.lp2.xa1.er1.rv1", "40_10.tk128.stages8.pdl2.ksplit24.kw2.kc2.lp2.rv1.pre4", "40_10.tk128.stages12.pdl2.ksplit24.kw2.kc2.lp2.xa1.er1"},
		AssumesConstWeights: pdl2,
		Fits:                decodeFits,
		Operator:            GemmF16(),
		Plan:                decodePlan,
		Numerics:            DecodeNumerics,
	}
}

// decodeExtraTiles are the tiles the default sweep runs besides the plain
// 64_4 (the product of the Sweep lists), the fastest without PDL 2 of
// docs/results/h200-decode4's call 2 (H200, fp16 Y, M 1, 7, 16, paired
// rounds): the plain 64_4.tk128.stages8.pdl1.lp2 (K 8192: 86% of copy, the
// plain class), and for each chunk size that tiles the decode shapes' K one
// split tile in gemm_wgmma's class of that chunk — 1024 (K 4096, 8192):
// 32_8.ksplit16.kw4.tk128.stages16.pdl1.lp2 (4096²: 75–76%); 1536 (K
// 6144): the ten-warp cluster tile 40_10.ksplit24.kw2.kc2.tk128.stages8.
// pdl1.lp2 (Wout: 128 CTAs of five warps per chunk, 68–73%, where the
// two-warp 40_2 of h200-decode3 read 57–64%) — so a selector finds the
// class at every M (gemm_wgmma's KFOLD tiles above M 16). LP 2 (W's L2
// promotion at 128 bytes) was 0–1.5% faster than 256 bytes on 4096² and
// Wout and 2.5% on 8192² in the same rounds. Fits keeps each off the shapes
// whose K it does not tile. No default tile uses PDL 2 (its assumption is
// the caller's), PF or PG (both slower there).
var decodeExtraTiles = []string{"64_4.tk128.stages8.pdl1.lp2", "32_8.ksplit16.kw4.tk128.stages16.pdl1.lp2", "40_10.ksplit24.kw2.kc2.tk128.stages8.pdl1.lp2"}

// DecodeNumerics is the numerics class of a gemm_decode tile: gemm_f16's
// (WgmmaNumericsClass) when K is not split, and with KSPLIT > 0 gemm_wgmma's
// split-K class gemm_f16/splitkC, C = 64·KSPLIT (WgmmaNumerics): each
// chunk's partial from zero, k16 steps ascending, the partials added in
// chunk order. Neither PDL, KW nor the ring changes what is computed or in
// which order.
func DecodeNumerics(p Params) string { return WgmmaNumerics(Params{"KSPLIT": p["KSPLIT"]}) }

// DecodeStageBytes is the shared memory of one ring stage: TK/64 boxes of
// W (BN rows of 128 bytes) and of X (16 rows of 128 bytes), W's alone with
// XG (the consumers load X), XS or MB (X has its own slots,
// DecodeXRingBytes).
func DecodeStageBytes(p Params) int {
	if p["XG"] > 0 || p["XS"] > 0 || p["MB"] > 0 {
		return p["TK"] / 64 * p["BN"] * 128
	}
	return p["TK"] / 64 * (p["BN"] + DecodeRows) * 128
}

// DecodeMaxNB is the most n8 weight-row groups a consumer warp owns
// (BN·KW/(8·WARPS); the source's static_assert).
const DecodeMaxNB = 6

// DecodeXRingBytes is the shared memory of the X slots after the W
// stages: with XS, XS·KW slots of one stage's X boxes (TK/64 boxes of 16
// rows of 128 bytes); with MB, STAGES slots of TK/64 boxes of MB rows; 0
// otherwise (X in the stages).
func DecodeXRingBytes(p Params) int {
	if mb := p["MB"]; mb > 0 {
		return p["STAGES"] * p["TK"] / 64 * mb * 128
	}
	return p["XS"] * max(p["KW"], 1) * p["TK"] / 64 * DecodeRows * 128
}

// DecodeBlockRows is the token rows a block of p owns: 16 (DecodeRows, the
// mma's M), or MB.
func DecodeBlockRows(p Params) int {
	if mb := p["MB"]; mb > 0 {
		return mb
	}
	return DecodeRows
}

// DecodeSharedBytes is the dynamic shared memory of a gemm_decode block
// without its split-K partials: the mbarriers (2·STAGES: 256 bytes, 512
// with KC > 1 for the cluster's reduce barrier, 1024 above 16 stages), up
// to 1024 bytes to align the ring (128-byte swizzled boxes start 1024-byte
// aligned), then STAGES stages and XS's X slots.
func DecodeSharedBytes(p Params) int {
	bars := 256
	switch {
	case p["STAGES"] > 16:
		bars = 1024
	case p["KC"] > 1:
		bars = 512
	}
	return bars + 1024 + p["STAGES"]*DecodeStageBytes(p) + DecodeXRingBytes(p)
}

// DecodeMaps returns the tensor maps of X (dims {K, M}, box {64, 16},
// {64, min(M, 16)} with XM, {64, MB} with MB) and W (dims {K, N}, box
// {64, BN}): row stride 2K bytes, 128-byte swizzle (X with MB 1, 2 or 4:
// none, rows of 128 bytes as the source reads them), L2 promotion 256
// bytes (W: LP's). TMA fills rows past M or N and k past K with zeros.
func DecodeMaps(p Params, m, n, k int) (x, w *TensorMap) {
	mk := func(buf string, rows, box int) *TensorMap {
		return &TensorMap{Buffer: buf, DType: F16, Dims: []int64{int64(k), int64(rows)}, Strides: []int64{int64(k) * 2},
			Box: []int{64, box}, Swizzle: 3, L2Promotion: 3}
	}
	x, w = mk("X", m, DecodeXRows(p, m)), mk("W", n, p["BN"])
	if mb := p["MB"]; mb > 0 && mb < 8 {
		x.Swizzle = 0
	}
	w.L2Promotion = p["LP"]
	if p["WR"] == 1 {
		// (64 k, K/64 boxes, N rows): one box is a stage's TK/64 boxes of
		// BN rows, each row's boxes contiguous (K % 64 == 0, the Plan).
		w.Dims = []int64{64, int64(k / 64), int64(n)}
		w.Strides = []int64{128, int64(k) * 2}
		w.Box = []int{64, p["TK"] / 64, p["BN"]}
	}
	return x, w
}

// DecodeXRows is the token rows of p's X box on M: 16 (DecodeRows), or
// with XM min(M, 16) — the source's xr, which zeroes rows xr … 15 of its X
// slots once, so the mma reads the same zeros past M as with TMA's fill —
// or with MB the block's MB rows.
func DecodeXRows(p Params, m int) int {
	if p["XM"] == 1 {
		return min(max(m, 1), DecodeRows)
	}
	return DecodeBlockRows(p)
}

func decodeRestrict(p Params) error {
	bn, w, tk, st, ks, kw, kc := p["BN"], p["WARPS"], p["TK"], p["STAGES"], p["KSPLIT"], p["KW"], p["KC"]
	if w != 1 && w != 2 && w != 4 && w != 5 && w != 8 && w != 10 && w != 16 {
		return fmt.Errorf("WARPS = %d (want 1, 2, 4, 5, 8, 10 or 16)", w)
	}
	if kw < 1 || kw > w || w%kw != 0 {
		return fmt.Errorf("KW = %d does not divide WARPS = %d", kw, w)
	}
	if kw > 1 && ks == 0 {
		return fmt.Errorf("KW = %d needs KSPLIT > 0 (chunks to stream side by side)", kw)
	}
	if ks < 0 {
		return fmt.Errorf("KSPLIT = %d", ks)
	}
	if kc < 1 || kc > 8 {
		return fmt.Errorf("KC = %d (want 1 … 8)", kc)
	}
	if kc > 1 && ks == 0 {
		return fmt.Errorf("KC = %d needs KSPLIT > 0 (chunks to spread over the cluster)", kc)
	}
	if ks > 0 && 64*ks%tk != 0 {
		return fmt.Errorf("TK = %d does not divide the chunk 64·KSPLIT = %d", tk, 64*ks)
	}
	rg := w / kw
	if bn < 8 || bn%(8*rg) != 0 {
		return fmt.Errorf("BN = %d is not a multiple of 8·WARPS/KW = %d", bn, 8*rg)
	}
	if bn > 8*DecodeMaxNB*rg {
		return fmt.Errorf("BN = %d gives a warp %d n8 weight-row groups, more than %d", bn, bn/(8*rg), DecodeMaxNB)
	}
	if st%kw != 0 || st < 2*kw {
		return fmt.Errorf("STAGES = %d is not a multiple of KW = %d of at least 2·KW (each ring slot serves one warp group)", st, kw)
	}
	if tk != 64 && tk != 128 && tk != 256 && tk != 512 {
		return fmt.Errorf("TK = %d (want 64, 128, 256 or 512)", tk)
	}
	if st < 2 || st > 32 {
		return fmt.Errorf("STAGES = %d (want 2 … 32)", st)
	}
	if pdl := p["PDL"]; pdl < 0 || pdl > 2 {
		return fmt.Errorf("PDL = %d (want 0, 1 or 2)", pdl)
	}
	if xg := p["XG"]; xg < 0 || xg > 2 {
		return fmt.Errorf("XG = %d (want 0, 1 or 2)", xg)
	}
	if xa := p["XA"]; xa != 0 && (xa != 1 || p["PDL"] != 2 || p["XG"] > 0 || p["XM"] == 1) {
		return fmt.Errorf("XA = %d needs PDL 2, XG 0 and XM 0 (it copies the 16-row X boxes of the W preloaded before the wait)", xa)
	}
	if rv := p["RV"]; rv != 0 && (rv != 1 || p["KC"] < 2) {
		return fmt.Errorf("RV = %d needs KC > 1 (it orders the cluster's partials)", rv)
	}
	if xs := p["XS"]; xs != 0 && (xs < 2 || xs > 8 || p["XA"] > 0 || p["XG"] > 0 || p["XM"] == 1 || xs*kw > st) {
		return fmt.Errorf("XS = %d needs 2 … 8 slots per warp group, XS·KW = %d at most STAGES = %d, and not XA, XG or XM (it copies X itself)", xs, xs*kw, st)
	}
	if mb := p["MB"]; mb != 0 && ((mb != 1 && mb != 2 && mb != 4 && mb != 8) || p["XG"] > 0 || p["XS"] > 0 || p["XM"] == 1) {
		return fmt.Errorf("MB = %d needs 1, 2, 4 or 8 token rows per block and not XG, XS or XM (its X boxes are MB rows in slots of their own)", mb)
	}
	if wr := p["WR"]; wr != 0 && (wr != 1 || p["PF"] > 0) {
		return fmt.Errorf("WR = %d needs 1 and PF 0 (PF prefetches W's 2-D boxes)", wr)
	}
	if p["XG"] > 0 && p["XM"] == 1 {
		return fmt.Errorf("XG = %d with XM = 1: XG loads no X boxes for XM to shape", p["XG"])
	}
	if pre := p["PRE"]; pre != 0 && (p["PDL"] != 2 || pre > p["STAGES"]) {
		return fmt.Errorf("PRE = %d needs PDL 2 and at most STAGES = %d stages (the W boxes copied before the wait)", pre, p["STAGES"])
	}
	if p["LD"] == 1 && p["PDL"] == 0 {
		return fmt.Errorf("LD = 1 needs PDL 1 or 2 (it moves the trigger of programmatic dependent launch)")
	}
	if b := DecodeSharedBytes(p); b > CUDAMaxSharedBytes {
		return fmt.Errorf("shared memory %d bytes (STAGES stages of TK/64·(BN+16)·128, X slots, barriers) exceeds %d", b, CUDAMaxSharedBytes)
	}
	return nil
}

// decodeFits keeps the default tiles on shapes whose weights are large and
// deep enough to be worth streaming (DecodeMinWeights, DecodeMinK), whose
// K TMA can take (a multiple of 8), for a split tile whose K its chunks
// tile, and whose partials fit the shared memory at the most rows a block
// holds (16, or MB), so that no M of the shape fails to plan. It reads N
// and K only, never M.
func decodeFits(p Params, d Dims) bool {
	n, k := d["N"], d["K"]
	return k%8 == 0 && (p["WR"] == 0 || k%64 == 0) && k >= DecodeMinK && n*k >= DecodeMinWeights && decodeChunksFit(p, k) == nil &&
		DecodeSharedBytes(p)+DecodePartialBytes(p, DecodeBlockRows(p), k) <= CUDAMaxSharedBytes
}

// DecodeChunks is the number of K chunks of p on K: K/(64·KSPLIT), 1 when
// K is not split.
func DecodeChunks(p Params, k int) int {
	if c := 64 * p["KSPLIT"]; c > 0 {
		return k / c
	}
	return 1
}

// decodeChunksFit says why split tile p cannot run on K: the chunks must
// tile K exactly, number at least two and a multiple of KW.
func decodeChunksFit(p Params, k int) error {
	c := 64 * p["KSPLIT"]
	if c == 0 {
		return nil
	}
	if g := p["KW"] * max(p["KC"], 1); k%c != 0 || k/c < 2 || (k/c)%g != 0 {
		return fmt.Errorf("gemm_decode: K = %d is not 2 or more chunks of 64·KSPLIT = %d in a multiple of KC·KW = %d", k, c, g)
	}
	return nil
}

// DecodePartialBytes is the shared memory of the split-K partials on M×K:
// chunks × 16 tokens × BN × 4 bytes (0 when K is not split: every lane's
// fragment, whatever MB); with KC > 1 (rank 0 holds every chunk's
// partial, only the token rows that exist) chunks × min(M, rows) × BN × 4
// (rows 16, or MB), or with RV (in the fragments' order) 16 rows whatever
// M.
func DecodePartialBytes(p Params, m, k int) int {
	if p["KSPLIT"] == 0 {
		return 0
	}
	rows := DecodeRows
	if p["KC"] > 1 && p["RV"] == 0 {
		rows = min(m, DecodeBlockRows(p))
	}
	return DecodeChunks(p, k) * rows * p["BN"] * 4
}

// DecodeGrid is the launch grid of p on M×N: (ceil(N/BN)·KC, ceil(M/16)),
// or ceil(M/MB) with MB, clusters of KC CTAs along x (DecodeCluster).
func DecodeGrid(p Params, m, n int) [3]int {
	r := DecodeBlockRows(p)
	return [3]int{(n + p["BN"] - 1) / p["BN"] * max(p["KC"], 1), (m + r - 1) / r, 1}
}

// DecodeCluster is the cluster shape of p: (KC, 1, 1) with KC > 1, none
// otherwise.
func DecodeCluster(p Params) [3]int {
	if p["KC"] > 1 {
		return [3]int{p["KC"], 1, 1}
	}
	return [3]int{}
}

// decodePlan is one launch of tilefit_gemm_decode(X, W, Y, M, N, K), with
// PG > 0 (X, W, Y, M, N, K, W's address), with XG, XA or XS > 0 X's
// address last.
func decodePlan(p Params, d Dims) (Plan, error) {
	m, n, k := d["M"], d["N"], d["K"]
	if k%8 != 0 {
		return Plan{}, fmt.Errorf("gemm_decode: K = %d is not a multiple of 8 (TMA row strides are multiples of 16 bytes)", k)
	}
	if m < 1 || n < 1 || k < 1 {
		return Plan{}, fmt.Errorf("gemm_decode needs M, N, K ≥ 1 for its tensor maps; got %d, %d, %d", m, n, k)
	}
	if err := decodeChunksFit(p, k); err != nil {
		return Plan{}, err
	}
	if p["WR"] == 1 && k%64 != 0 {
		return Plan{}, fmt.Errorf("gemm_decode WR 1: K = %d is not a multiple of 64 (W's 3-D map views each row as K/64 boxes of 64)", k)
	}
	shared := DecodeSharedBytes(p) + DecodePartialBytes(p, m, k)
	if shared > CUDAMaxSharedBytes {
		return Plan{}, fmt.Errorf("gemm_decode: %d bytes of shared memory with the partials of %d chunks, more than %d", shared, DecodeChunks(p, k), CUDAMaxSharedBytes)
	}
	x, w := DecodeMaps(p, m, n, k)
	args := []Arg{
		{Kind: ArgTensorMap, Name: "X", Map: x},
		{Kind: ArgTensorMap, Name: "W", Map: w},
		{Kind: ArgOperand, Name: "Y"},
		{Kind: ArgDim, Name: "M"}, {Kind: ArgDim, Name: "N"}, {Kind: ArgDim, Name: "K"},
	}
	if p["PG"] > 0 {
		args = append(args, Arg{Kind: ArgOperand, Name: "W"}) // W's address for prefetch.global.L2
	}
	if p["XG"] > 0 || p["XA"] > 0 || p["XS"] > 0 {
		args = append(args, Arg{Kind: ArgOperand, Name: "X"}) // X's address for the consumers' loads (XG) or cp.async copies (XA, XS)
	}
	g := DecodeGrid(p, m, n)
	if g[1] > 65535 {
		return Plan{}, fmt.Errorf("gemm_decode: M = %d needs %d blocks in y, more than 65535", m, g[1])
	}
	return Plan{Launches: []Launch{{
		Entry:   DecodeEntry,
		Grid:    g,
		Block:   [3]int{(p["WARPS"] + 1) * 32, 1, 1},
		Shared:  shared,
		Cluster: DecodeCluster(p),
		PDL:     p["PDL"] >= 1,
		Args:    args,
	}}}, nil
}

// pdl2 reports whether tile p copies weights before griddepcontrol.wait
// (PDL 2 of gemm_decode and hc_up_wgmma): valid only when the kernel
// before does not write them (kernel.Family.AssumesConstWeights).
func pdl2(p Params) bool { return p["PDL"] == 2 }
