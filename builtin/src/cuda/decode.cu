// gemm_decode for CUDA (sm_90): Y[M,N] = X[M,K] · W[N,K]^T for decode
// (M ≤ 16 per block), streaming the weights through a ring of shared-memory
// stages filled by TMA (cp.async.bulk.tensor, 2-D boxes of 64 k × rows,
// 128-byte swizzle) that complete on mbarriers.
//
// X (M×K) and W (N×K) are row-major fp16 (K contiguous, K a multiple of 8:
// TMA row strides are multiples of 16 bytes); Y (M×N) is row-major fp32, or
// fp16 when Y_DTYPE is 1 (kernel.DType codes: 1 fp16, 3 fp32).
//
// Entry point (tilefit's CUDA convention: tensor maps and pointers, then
// int64 dimensions, in the order of builtin/decode.go's Plan):
//   extern "C" __global__ void tilefit_gemm_decode(const __grid_constant__ TMap tmX,
//       const __grid_constant__ TMap tmW, void *Y, long long M, long long N, long long K
//       [, const unsigned short *W: with PG > 0 only]);
// tmX: dims {K, M}, box {64, 16}; tmW: dims {K, N}, box {64, BN}; both
// 128-byte swizzle. Grid (ceil(N/BN)·KC, ceil(M/16)), (WARPS+1)·32 threads,
// DecodeSharedBytes (builtin/decode.go) of dynamic shared memory.
//
// A block owns BN weight rows (n0 .. n0+BN) and 16 token rows (m0 .. m0+16)
// and walks K in stages of TK = SUB·64. Warp WARPS is the producer: for
// stage kt it waits until the consumers have released ring slot
// kt % STAGES, arms the slot's "full" mbarrier with the stage's bytes, and
// lane i loads box i of W (64 k × BN rows) and of X (64 k × 16 rows); TMA
// fills rows past N or M and k past K with zeros. Warps 0 .. WARPS-1 are
// the consumers: warp w owns weight rows 8·NB·w .. 8·NB·(w+1) (NB =
// BN/(8·WARPS) n8 groups) and all 16 token rows.
//
// Each consumer runs mma.sync.m16n8k16 with X as the 16-row A operand (M is
// padded to 16 rows by the zero-filled box, only in shared memory and
// registers) and W as the n8 B operand: the operand order of gemm_f16. Its
// fragments are double-buffered per 64-k box: box u+1's ldmatrix reads are
// issued before box u's mma, so the mma chain of each output element waits
// for nothing but its own previous step; once box u's mma are issued (its
// fragments are in registers) the last box of a stage releases the slot
// (one arrive per warp on the slot's "empty" mbarrier).
//
// Reduction order without KSPLIT, the same as gemm_f16, gemm_wgmma and
// gemm_stream: every output element is
//   acc = 0; for k0 = 0, 16, 32, ... < K: acc = mma(acc, X[m, k0:k0+16], W[n, k0:k0+16])
// with elements past K zero (TMA's fill); the class is gemm_f16's.
//
// KSPLIT > 0 (fixed split-K, chunk CH = 64·KSPLIT, K a multiple of CH):
// chunk c's partial is the loop above over k0 = c·CH .. (c+1)·CH from
// acc = 0, and the output is tot = P0; tot = tot + P1; ... in chunk order —
// the order of gemm_wgmma's reduce kernel and KFOLD, so the class is
// gemm_f16/splitkCH. The WARPS consumers form KW groups of RG = WARPS/KW
// warps; group w runs chunks w, w + KW, ... (the Plan makes the number of
// chunks a multiple of KW), each group's warps own BN/RG weight rows; the
// partials go to shared memory after the ring and group 0 adds them.
//
// KC > 1 (with KSPLIT; clusters of KC CTAs along the grid's x, which is
// ceil(N/BN)·KC): the S = K/CH chunks of a row block are spread over the
// cluster, rank r streaming chunks r·S/KC .. (r+1)·S/KC - 1 (each through
// its own ring, KW groups side by side as above), so a row block's bytes
// come in through KC SMs and the grid can fill the GPU on shapes with few
// row blocks (Wout: 64 blocks of 40 rows × 2 = 128 CTAs, not 80). Every
// chunk's partial (from zero) is stored into rank 0's shared memory
// (st.shared::cluster, P[chunk][token row][n], the rows < min(M, 16));
// every consumer thread of the cluster then arrives (release, cluster
// scope) on an mbarrier of rank 0, whose warps kw = 0 wait (acquire) and
// add P0 + P1 + ... in chunk order from chunk 0 — the order depends on K
// and KSPLIT only, never on which CTA finishes first, so the class is the
// same gemm_f16/splitkCH. The barrier's initialisation is published by a
// cluster barrier (every thread arrives after the init; a thread waits on
// it before its first remote access or, the producer, before it exits).
//
// PDL 1 launches with programmatic stream serialisation: the kernel
// triggers its dependents at entry and every thread waits (griddepcontrol
// .wait) before it touches global memory. PDL 2 is PDL 1 except that the
// producer loads the W boxes of the first STAGES stages (PRE > 0: of the
// first PRE) before it waits:
// it assumes the kernel before it does not write W (weights are constant
// during decode; a dequantising kernel before it would break that).
//
// PF > 0 asks the L2 for W ahead of the ring (cp.async.bulk.prefetch
// .tensor, the W boxes of a stage): stages 0 .. PF-1 at entry, before
// griddepcontrol.wait (and before the barriers exist), then, when PF >
// STAGES, stage q + PF as stage q is issued (PF <= STAGES: only the first
// fill of the ring is asked for early, the assumption-free form of PDL 2).
// A prefetch writes no shared memory and arms no barrier; it only brings
// lines into the L2, where the stores of the kernel before land too, so it
// assumes nothing about that kernel (PDL 2 does). PG > 0 does the same
// with prefetch.global.L2 (the load unit's path, one 128-byte line per
// lane and instruction; the kernel then takes W's address as a seventh
// argument), PG stages ahead whatever STAGES, so that the tensor unit's
// queue holds only the ring's loads.
// XM 1: X boxes of xr = min(M, 16) rows (the host's map says so); the
// consumers zero rows xr .. 15 of every X slot once, bytes no copy writes,
// so the mma's rows past M multiply zeros as with TMA's fill. LD 1 (with
// PDL): the producer triggers the dependents after its last stage, not
// the kernel at entry. None of PF, PG, XM, LD changes the arithmetic.
//
// XG > 0: the consumers read X themselves, straight from global memory
// into the mma's A fragments (ld.global, 4 bytes per lane and register,
// rows past M and k past K zero, as TMA's fill gives), issued before the
// wait for the box's W stage; the ring holds W alone (no X boxes, fewer
// bytes per stage) and the producer copies nothing of X. Under PDL 2 a
// preloaded stage then completes on its W alone: no X copy queued behind
// the W copies of the ring's first fill (the read ceiling of
// docs/results/h200-decode6). XG 2 also asks the L1 for the X lines of
// each chunk (prefetch.global.L1, after the wait) when the chunk starts.
// The kernel takes X's address as one more argument (after PG's W). The
// A fragments hold the same bits as the ldmatrix reads of the TMA boxes,
// so the arithmetic and the class do not change.
//
// XA 1 (with PDL 2): the X boxes of the stages whose W is copied before
// the wait are copied after it with cp.async (16 bytes a lane and
// instruction, the load unit's path, into the slot in the 128-byte
// swizzle TMA writes, zeros past M and K by a source size of 0), not by
// TMA: a TMA copy of X issued after the wait queues behind the preloaded
// W in the tensor unit (h200-decode8: copying those X boxes before the
// wait too, valid only when X is constant, made the full preload 8-10 %
// faster). Stage q's copier is one warp of the group that reads it,
// warp (q % KW)·RG + (q / KW) % RG, which copies right after its own
// wait. Every full barrier counts XC = 32 arrivals more than the
// producer's: for a preloaded stage the copier's lanes make them, each by
// cp.async.mbarrier.arrive.noinc once its copies have landed (the
// producer armed the W bytes alone); for every other stage the producer
// makes them with its arrive. The copier fences the proxies before it
// releases the slot, so the tensor unit's next copy into it follows the
// cp.async writes. The kernel takes X's address as one more argument
// (after PG's W); the bytes in the slots are TMA's, so the class is
// unchanged.
//
// XS n (2 … 8): X leaves the ring. The W stages hold W alone, and X has
// its own ring of XSL = n·KW slots (one stage's X boxes each) after them,
// group w's stages taking slots w, w + KW, ... in turn, so the same
// shared memory holds more W stages (under PDL 2, more W copied before the
// wait). Every stage's X is copied by cp.async as XA copies it, by the
// stage's copier warp: the first XSL stages right after the wait, and
// stage q + XSL once every warp of the group has released stage q (the
// copier waits on q's empty barrier after its own release). n ≥ 2: a
// warp's fragments run one box ahead, so it waits for stage q + KW before
// it releases q, and with one slot per group that stage's X would wait
// for the release. Only the token rows < M are copied; rows M .. 15 of
// every X slot are zeroed once. The bytes the mma reads are the same, so
// the class is unchanged; any PDL; not with XA, XG or XM.
//
// ER 1 (early release): a consumer warp runs the mma of a stage's last
// box and releases the stage before it loads the first box of its next
// stage (waiting for that stage), not after; without it a warp holds
// every slot until its next stage has landed, so about KW of the STAGES
// slots are held, not in flight. Only the overlap of those ldmatrix reads
// with the mma is lost; the arithmetic is unchanged.
//
// RV 1 (KC > 1): the partials go to rank 0 in the order a lane holds its
// fragment, P[chunk][row group][lane][n8 group][4], two floats a remote
// store (st.shared::cluster.v2) where the rows exist, and rank 0's warp of
// the same row group and lane reads them back, not P[chunk][row][n] one
// float a store; the sums are the same, in the same chunk order. The
// partials then take 16 rows' room whatever M.
//
// MB n (1, 2, 4 or 8; not with XG, XS or XM): a block owns n token rows,
// not 16 (grid y = ceil(M/n)), so its X boxes are n rows (n·128 bytes) and
// a stage carries that much X, not 2 KiB a box: at M ≤ n the same shared
// memory holds more W stages, and under PDL 2 more W is copied before the
// wait. The X boxes live in slots of their own after the W stages (slot
// q % STAGES, on the stage's barriers; n < 8 boxes are not 1024-byte
// multiples), in the 128-byte swizzle for n = 8 and unswizzled below (the
// map's layout either way). The A registers of rows 0 .. 7 come from
// ldmatrix.x4 (n = 8: the a0 and a2 of two k16 steps) or each lane's own
// 4-byte shared loads from its token row lane/4 (n < 8); the registers of
// rows n .. 15 are zeros, as TMA's fill gives the 16-row box past M, so an
// output row's mma chain is the same instructions on the same bits and the
// class is unchanged. Only rows < n are stored.
//
// WATCHDOG 1 (tests only): an mbarrier wait longer than ~2·10⁹ cycles traps.
//
// No headers are included (NVRTC alone compiles it) and no file is shared:
// the text compiled is this file, with its own one-instruction wrappers
// (ptx_common.cuh's rule is that a family including it uses all of it; the
// cp.async ones have no use here).

#ifndef BN
#define BN 32
#endif
#ifndef WARPS
#define WARPS 4
#endif
#ifndef TK
#define TK 256
#endif
#ifndef STAGES
#define STAGES 4
#endif
#ifndef PDL
#define PDL 0
#endif
#ifndef KSPLIT
#define KSPLIT 0
#endif
#ifndef KW
#define KW 1
#endif
#ifndef KC
#define KC 1
#endif
#ifndef PF
#define PF 0
#endif
#ifndef XM
#define XM 0
#endif
#ifndef LD
#define LD 0
#endif
// PRE n (PDL 2 only; 0: STAGES): the producer copies the W boxes of the
// first min(n, STAGES) stages before griddepcontrol.wait, not of the whole
// ring's first fill, so that fewer of the next call's bytes compete with
// the drain of the call before. Values are unchanged.
#ifndef PRE
#define PRE 0
#endif
static_assert(PRE >= 0 && PRE <= STAGES && (PRE == 0 || PDL == 2), "PRE: PDL 2, at most STAGES");
#ifndef PG
#define PG 0
#endif
#ifndef XA
#define XA 0
#endif
#ifndef XG
#define XG 0
#endif
#ifndef XS
#define XS 0
#endif
#ifndef ER
#define ER 0
#endif
#ifndef RV
#define RV 0
#endif
#ifndef MB
#define MB 0
#endif
// WR 1: W's map is 3-D, (64 k, K/64 boxes, N rows), and a stage's W is one
// copy of SUB boxes × BN rows laid out row by row (line r·SUB + i holds
// row r's box i), so each weight row's TK·2 contiguous bytes are asked for
// together; needs K % 64 == 0 (the Plan) and chunks of whole stages.
#ifndef WR
#define WR 0
#endif
#ifndef WATCHDOG
#define WATCHDOG 0
#endif
#ifndef Y_DTYPE
#define Y_DTYPE 3
#endif
#if Y_DTYPE != 1 && Y_DTYPE != 3
#error "Y_DTYPE must be 1 (fp16) or 3 (fp32)"
#endif
#define OUT_F16 (Y_DTYPE == 1)
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#error "gemm_decode needs sm_90 (cp.async.bulk, mbarrier transaction counts)"
#endif

typedef unsigned int u32;

__device__ __forceinline__ u32 dec_smem(const void *p) {
	u32 r;
	asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(r) : "l"(p));
	return r;
}

__device__ __forceinline__ void dec_ldsm4(u32 addr, u32 &r0, u32 &r1, u32 &r2, u32 &r3) {
	asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
		     : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
		     : "r"(addr)
		     : "memory");
}

// dec_lds32 reads the 4 bytes at shared addr (MB's A registers); volatile
// and the clobber keep it after the stage's wait, as ldmatrix.
__device__ __forceinline__ u32 dec_lds32(u32 addr) {
	u32 r;
	asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(r) : "r"(addr) : "memory");
	return r;
}

// dec_mma: c += A(16×16, row) · B(16×8, col), fp16 in, fp32 accumulate
// (the instruction and operand order of gemm_f16's mma16816).
__device__ __forceinline__ void dec_mma(float *c, const u32 *a, u32 b0, u32 b1) {
	asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
	    : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
	    : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// dec_f2h rounds to the nearest fp16, ties to even, and returns its bits.
__device__ __forceinline__ unsigned short dec_f2h(float v) {
	unsigned short h;
	asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(v));
	return h;
}

constexpr int RG = WARPS / KW;      // consumer warps along the block's weight rows
constexpr int NB = BN / (8 * RG);    // n8 weight-row groups per consumer warp
constexpr int CH = 64 * KSPLIT;      // K chunk of the split class (0: K not split)
constexpr int NT = (WARPS + 1) * 32;
constexpr int XR = MB ? MB : 16;     // token rows per block (16: the mma's M; MB: rows MB .. 15 are zeros in registers)
constexpr bool XSW = XR >= 8;        // X boxes in the 128-byte swizzle (MB 1, 2, 4: unswizzled rows of 128 bytes)
constexpr int TF = 64;               // k per box (128 bytes: one swizzle row)
constexpr int KF = TF / 16;          // k16 steps per box
constexpr int SUB = TK / TF;         // boxes per stage and operand
constexpr int WBOX = BN * 128;       // bytes of a W box
constexpr int XBOX = XR * 128;       // bytes of an X box
constexpr int STAGE_BYTES = SUB * (WBOX + (XG || XS || MB ? 0 : XBOX)); // XG, XS, MB: W alone
static_assert(WR == 0 || (WR == 1 && PF == 0 && (KSPLIT == 0 || KSPLIT % (TK / 64) == 0)), "WR 1: no PF, chunks of whole stages");
constexpr int XSL = XS * KW;         // XS: X slots (XS per warp group), after the W stages
constexpr int XSLOTS = XS ? XSL : MB ? STAGES : 0; // X slots after the W stages (MB: one per stage)
constexpr int RING_BYTES = STAGES * STAGE_BYTES + XSLOTS * SUB * XBOX; // the split-K partials follow
// 2·STAGES mbarriers, + the cluster's reduce barrier (builtin/decode.go's
// DecodeSharedBytes says the same)
constexpr int BAR_BYTES = STAGES > 16 ? 1024 : KC > 1 ? 512 : 256;
static_assert(KW >= 1 && RG * KW == WARPS, "KW must divide WARPS");
static_assert(KSPLIT > 0 || KW == 1, "KW > 1 needs KSPLIT > 0");
static_assert(STAGES % KW == 0 && STAGES >= 2 * KW, "STAGES a multiple of KW, at least 2·KW (see Seq)");
static_assert(KSPLIT == 0 || CH % TK == 0, "TK must divide the chunk 64·KSPLIT");
static_assert(NB >= 1 && NB * 8 * RG == BN, "BN must be a multiple of 8·WARPS/KW");
static_assert(NB <= 6, "at most 6 n8 groups per warp");
static_assert(KC >= 1 && KC <= 8, "1 to 8 CTAs per cluster along K");
static_assert(KC == 1 || KSPLIT > 0, "KC > 1 needs KSPLIT > 0 (chunks to spread over the cluster)");
static_assert(TK % TF == 0 && TK >= TF && TK <= 512, "TK must be 64, 128, 256 or 512");
static_assert(STAGES >= 2 && STAGES <= 32, "2 to 32 stages");
static_assert(WBOX % 1024 == 0 && (XBOX % 1024 == 0 || (MB && !XSW)), "128-byte swizzled boxes start 1024-byte aligned");
static_assert(MB == 0 || ((MB == 1 || MB == 2 || MB == 4 || MB == 8) && XG == 0 && XS == 0 && XM == 0), "MB: 1, 2, 4 or 8 token rows per block, not with XG, XS or XM");
static_assert(PF >= 0 && PF <= 128, "PF: 0 to 128 stages of W prefetched into L2 ahead of the ring");
static_assert(XM == 0 || XM == 1, "XM is 0 (X boxes of 16 rows) or 1 (min(M, 16) rows)");
static_assert(LD == 0 || LD == 1, "LD is 0 (trigger dependents at entry) or 1 (after the last stage is issued)");
static_assert(LD == 0 || PDL > 0, "LD 1 needs PDL");
static_assert(PG >= 0 && PG <= 64, "PG: 0 to 64 stages of W prefetched into the L2 by prefetch.global.L2");
static_assert(XG >= 0 && XG <= 2, "XG is 0 (X by TMA), 1 (X by the consumers' loads) or 2 (1 with an L1 prefetch per chunk)");
static_assert(XG == 0 || XM == 0, "XG replaces the X boxes XM shapes");
static_assert(XA == 0 || (XA == 1 && PDL == 2 && XG == 0 && XM == 0), "XA 1: PDL 2, with TMA's 16-row X boxes (not XG, not XM)");
static_assert(RV == 0 || (RV == 1 && KC > 1), "RV 1: the cluster's partials in lane order (KC > 1)");
static_assert(ER == 0 || ER == 1, "ER is 0 (a stage released after the next stage's first box is loaded) or 1 (before)");
static_assert(XS == 0 || (XS >= 2 && XS <= 8 && XA == 0 && XG == 0 && XM == 0 && XSL <= STAGES), "XS: 2 to 8 X slots per warp group, XS·KW <= STAGES, not with XA, XG or XM");

// A TMap is a CUtensorMap: 128 opaque bytes, 64-byte aligned.
struct __align__(64) TMap {
	unsigned long long v[16];
};

__device__ __forceinline__ void dec_bar_init(u32 bar, u32 count) {
	asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}

__device__ __forceinline__ void dec_expect_tx(u32 bar, u32 bytes) {
	asm volatile("{\n\t.reg .b64 state;\n\tmbarrier.arrive.expect_tx.shared::cta.b64 state, [%0], %1;\n}\n" ::"r"(bar), "r"(bytes) : "memory");
}

__device__ __forceinline__ void dec_arrive(u32 bar) {
	asm volatile("{\n\t.reg .b64 state;\n\tmbarrier.arrive.shared::cta.b64 state, [%0];\n}\n" ::"r"(bar) : "memory");
}

#if XA || XS
// XC: the arrivals a full barrier counts besides the producer's (XA, XS:
// the lanes of the warp that copies the stage's X by cp.async).
constexpr int XC = 32;

#if XA
// dec_arrive_n arrives count times on bar (the producer's share of XC).
__device__ __forceinline__ void dec_arrive_n(u32 bar, u32 count) {
	asm volatile("{\n\t.reg .b64 state;\n\tmbarrier.arrive.shared::cta.b64 state, [%0], %1;\n}\n" ::"r"(bar), "r"(count) : "memory");
}
#endif

// dec_cp16 copies 16 bytes from src to shared dst by cp.async (L2 only),
// or writes 16 zero bytes when n is 0 (the source size).
__device__ __forceinline__ void dec_cp16(u32 dst, const void *src, u32 n) {
	asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(n) : "memory");
}

// dec_cp_arrive arrives on bar once this thread's earlier cp.async copies
// have landed (.noinc: one of the arrivals the barrier was set up with).
__device__ __forceinline__ void dec_cp_arrive(u32 bar) {
	asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(bar) : "memory");
}
#else
constexpr int XC = 0;
#endif

// dec_wait_on returns once the phase of parity `parity` of bar has
// completed: Cluster false, a local wait (the ring's barriers); true, with
// acquire at cluster scope (the cluster's reduce barrier, which other
// CTAs' threads arrive on with release). dec_wait is the local one. The
// two try_wait forms differ only in the qualifier DEC_TRY_WAIT takes.
#define DEC_TRY_WAIT(sem) "{\n\t.reg .pred p;\n\tmbarrier.try_wait.parity" sem ".shared::cta.b64 p, [%1], %2;\n\tselp.u32 %0, 1, 0, p;\n}\n"
template <bool Cluster>
__device__ __forceinline__ void dec_wait_on(u32 bar, u32 parity) {
	u32 done;
#if WATCHDOG
	const long long t0 = clock64();
#endif
	do {
		if (Cluster)
			asm volatile(DEC_TRY_WAIT(".acquire.cluster") : "=r"(done) : "r"(bar), "r"(parity) : "memory");
		else
			asm volatile(DEC_TRY_WAIT("") : "=r"(done) : "r"(bar), "r"(parity) : "memory");
#if WATCHDOG
		if (!done && clock64() - t0 > 2000000000ll)
			asm volatile("trap;");
#endif
	} while (!done);
}

__device__ __forceinline__ void dec_wait(u32 bar, u32 parity) { dec_wait_on<false>(bar, parity); }

// dec_tma copies the box at (c0, c1) (c0 innermost, in elements) of map
// into shared memory at dst (1024-byte aligned); the copy completes its
// bytes on bar.
__device__ __forceinline__ void dec_tma(u32 dst, const TMap *map, int c0, int c1, u32 bar) {
	asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::"r"(dst),
		     "l"(reinterpret_cast<unsigned long long>(map)), "r"(c0), "r"(c1), "r"(bar)
		     : "memory");
}

// dec_tma3 copies the 3-D box at (c0, c1, c2) of map (WR 1's W).
__device__ __forceinline__ void dec_tma3(u32 dst, const TMap *map, int c0, int c1, int c2, u32 bar) {
	asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];\n" ::"r"(dst),
		     "l"(reinterpret_cast<unsigned long long>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(bar)
		     : "memory");
}

// dec_prefetch asks for the box at (c0, c1) of map to be brought into the
// L2 (a hint: nothing is written to shared memory and no barrier counts
// it). The L2 is where every SM's stores land, so a line prefetched before
// the kernel before this one has finished cannot be stale when this kernel
// reads it after griddepcontrol.wait: PF is valid after any kernel.
__device__ __forceinline__ void dec_prefetch(const TMap *map, int c0, int c1) {
	asm volatile("cp.async.bulk.prefetch.tensor.2d.L2.global.tile [%0, {%1, %2}];\n" ::"l"(reinterpret_cast<unsigned long long>(map)), "r"(c0), "r"(c1)
		     : "memory");
}

// dec_prefetch_line asks the L2 for the line holding p (prefetch.global.L2:
// an ordinary load-unit instruction, not the tensor unit's queue); the same
// argument as dec_prefetch's makes it valid before griddepcontrol.wait.
__device__ __forceinline__ void dec_prefetch_line(const void *p) {
	asm volatile("prefetch.global.L2 [%0];\n" ::"l"(p) : "memory");
}

// Cluster helpers (KC > 1): this CTA's rank in its cluster, the address
// of shared location addr in CTA rank's shared memory, a store there and
// an arrive (release, cluster scope) on an mbarrier there (the wait,
// acquire at cluster scope, is dec_wait_on<true>).
__device__ __forceinline__ u32 dec_ctarank() {
	u32 r;
	asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
	return r;
}

__device__ __forceinline__ u32 dec_mapa(u32 addr, u32 rank) {
	u32 r;
	asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(r) : "r"(addr), "r"(rank));
	return r;
}

__device__ __forceinline__ void dec_st_cluster(u32 addr, float v) {
	asm volatile("st.shared::cluster.f32 [%0], %1;\n" ::"r"(addr), "f"(v) : "memory");
}

// dec_st_cluster2 stores two floats at addr (8-byte aligned) in a
// cluster CTA's shared memory (RV).
__device__ __forceinline__ void dec_st_cluster2(u32 addr, float v0, float v1) {
	asm volatile("st.shared::cluster.v2.f32 [%0], {%1, %2};\n" ::"r"(addr), "f"(v0), "f"(v1) : "memory");
}

__device__ __forceinline__ void dec_arrive_cluster(u32 bar) {
	asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];\n" ::"r"(bar) : "memory");
}

// dec_ldx loads the 4 bytes at p (two fp16 of X) by an ordinary (weak)
// global load: X may be the output of the kernel before, which
// griddepcontrol.wait (PDL) or the stream order has made visible; volatile
// keeps it ahead of the stage wait that follows it in Consumer::load.
__device__ __forceinline__ u32 dec_ldx(const unsigned short *p) {
	u32 v;
	asm volatile("ld.global.u32 %0, [%1];\n" : "=r"(v) : "l"(p));
	return v;
}

// store writes Y[m, n] = v (fp16 when OUT_F16, else fp32) when inside.
__device__ __forceinline__ void dec_store(void *Y, int M, int N, int m, int n, float v) {
	if (m >= M || n >= N)
		return;
	const size_t o = (size_t)m * N + n;
#if OUT_F16
	reinterpret_cast<unsigned short *>(Y)[o] = dec_f2h(v);
#else
	reinterpret_cast<float *>(Y)[o] = v;
#endif
}

// Frags is one box's fragments: the A fragments (X) of its KF k16 steps
// and the B fragments (W) of the warp's NB n8 groups.
struct Frags {
	u32 a[KF][4];
	u32 b[NB][KF][2];
};

// Seq is the ring's stage sequence, the same for producer and consumers.
// Stage q holds TK k of one chunk: q = (i·T + t)·KW + w for round i, step
// t of T = chunk/TK, and chunk c = w + i·KW (KW chunks stream side by side,
// one per group of RG consumer warps). Without KSPLIT there is one chunk,
// all of K, and T = ceil(K/TK). Stage q lives in slot q % STAGES; with
// STAGES a multiple of KW every slot serves one warp group, which waits
// on it phase after phase (a group two phases ahead of a slot would read
// the parity of an old phase as complete), and with STAGES ≥ 2·KW a warp
// holding stage q while it waits for q + KW never blocks the producer.
struct Seq {
	int K, C, T, S, B; // K, chunk (K when not split), stages per chunk, chunks of this CTA, k of its first chunk
	__device__ __forceinline__ int chunk(int q) const { return q % KW + (q / (KW * T)) * KW; }
	__device__ __forceinline__ int k0(int q) const { return B + chunk(q) * C + ((q / KW) % T) * TK; }
	__device__ __forceinline__ int kend(int c) const { return min(K, B + (c + 1) * C); }
	// boxes is the 64-k boxes stage q loads: SUB, fewer at the chunk's end
	// (boxes wholly past it are not loaded; no consumer reads them).
	__device__ __forceinline__ int boxes(int q) const { return min(SUB, (kend(chunk(q)) - k0(q) + TF - 1) / TF); }
};

// dec_xslot is the shared address of stage q's first X box (ring: slot
// 0): in its ring slot after the W boxes, or with XS in X slot q % XSL
// after the W stages (the slots of group w are w, w + KW, ...: XSL is a
// multiple of KW), or with MB in X slot q % STAGES there (X boxes of MB
// rows are not 1024-byte multiples, so they cannot sit between W boxes).
__device__ __forceinline__ u32 dec_xslot(u32 ring, int q) {
	return XSLOTS ? ring + (u32)(STAGES * STAGE_BYTES + (q % (XSLOTS ? XSLOTS : 1)) * SUB * XBOX) : ring + (u32)((q % STAGES) * STAGE_BYTES + SUB * WBOX);
}

// Consumer is a consumer warp's view of the ring. In a 128-byte swizzled
// box, 16-byte chunk c of row r is stored at chunk c ^ (r % 8) of the row.
struct Consumer {
	u32 ring, bars;  // shared addresses: slot 0, full[0] (empty[s] = full[s] + 8·STAGES)
	u32 aRow, bRow;  // this lane's ldmatrix row offsets in an X box, a W box
	u32 aSw, bSw;    // its rows' swizzle (row % 8)
	u32 aC, bC;      // its chunk within a k16 step (A) or a 32-k window (B); MB: aC its byte in a chunk
#if MB && MB < 8
	bool aIn;        // MB 1, 2, 4: this lane's token row lane / 4 is one of the block's MB
#endif
	int kw, round;   // this warp's chunk lane and the round of the chunk it runs
	int kbase, kend; // k of the chunk's first box, end of the chunk
	int U;           // boxes of the chunk, ceil((kend - kbase) / 64)
	int T;           // stages per chunk
	int xaPre;       // XA: the preloaded stages (their X copied by cp.async), 0 otherwise
	int warp;        // this warp (XA, XS: the copier of stage q is copier(q))
#if XA || XS
	Seq sq;                  // the stage sequence (a stage's k and chunk)
	const unsigned short *X; // X's address
	int M, K, m0;            // X's rows and k, and this block's first token row
	int xrows;               // the token rows copied (XS: min(16, M - m0), the rest zero; XA: 16)
	int Q;                   // stages in all
#endif
#if XG
	const unsigned short *x0, *x1; // XG: this lane's X rows m0 + lane/4 and + 8 (null past M)
	int K, t2;                     // K, and 2·(lane % 4): the lane's k pair in a k16 step
#endif

	// copier is the warp that copies preloaded stage q's X (XA): one of
	// the RG warps of the group that reads it.
	__device__ __forceinline__ static int copier(int q) { return (q % KW) * RG + (q / KW) % RG; }

	// stage is the ring stage q of box u of the current chunk.
	__device__ __forceinline__ int stage(int u) const { return (round * T + u / SUB) * KW + kw; }

	__device__ __forceinline__ u32 xslot(int q) const { return dec_xslot(ring, q); }

#if XA || XS
	// copyX copies stage q's X boxes into xslot(q) by cp.async, in TMA's
	// 128-byte swizzle (piece i: box i / (8·xrows), row (i / 8) % xrows,
	// 16-byte chunk i % 8, stored at chunk c ^ (row % 8); MB 1, 2, 4: at
	// chunk c, the map's layout without swizzle), zeros past M
	// and K (a source size of 0), then every lane arrives on the stage's
	// full barrier once its copies have landed (noinc: the XC arrivals).
	__device__ __forceinline__ void copyX(int q, int lane) const {
		const int k0 = sq.k0(q), nbox = sq.boxes(q);
		const u32 xb = xslot(q);
		for (int i = lane; i < nbox * xrows * 8; i += 32) {
			const int b = i / (xrows * 8), r = (i / 8) % xrows, ch = i % 8;
			const int kk = k0 + b * TF + ch * 8, m = m0 + r;
			const bool in = m < M && kk < K;
			dec_cp16(xb + (u32)(b * XBOX + r * 128 + ((XSW ? ch ^ (r & 7) : ch) << 4)), in ? X + (size_t)m * K + kk : X, in ? 16u : 0u);
		}
		dec_cp_arrive(bars + 8u * (q % STAGES));
	}
#endif

	// load reads box u's fragments into f, first waiting for its stage
	// when u begins one.
	__device__ __forceinline__ void load(Frags &f, int u) const {
		const int q = stage(u), s = q % STAGES, i = u % SUB;
#if XG
		// A fragment of m16n8k16 (the registers ldmatrix.x4 gives):
		// a0 = X[g][k+t2..], a1 = X[g+8][k+t2..], a2 = X[g][k+8+t2..],
		// a3 = X[g+8][k+8+t2..]; zero past M or K.
#pragma unroll
		for (int kk = 0; kk < KF; kk++) {
			const int k = kbase + u * TF + kk * 16 + t2;
			f.a[kk][0] = x0 && k < K ? dec_ldx(x0 + k) : 0u;
			f.a[kk][1] = x1 && k < K ? dec_ldx(x1 + k) : 0u;
			f.a[kk][2] = x0 && k + 8 < K ? dec_ldx(x0 + k + 8) : 0u;
			f.a[kk][3] = x1 && k + 8 < K ? dec_ldx(x1 + k + 8) : 0u;
		}
#endif
		if (i == 0)
			dec_wait(bars + 8u * s, (u32)((q / STAGES) & 1));
#if WR
		// WR 1: row r's box i is line r·SUB + i (bRow = r·SUB·128, bSw =
		// r·SUB % 8), groups of 8 rows 8·SUB lines apart.
		const u32 wb = ring + (u32)(s * STAGE_BYTES + i * 128) + bRow, wsw = (bSw + (u32)i) & 7u, wj = 8u * SUB * 128u;
#else
		const u32 wb = ring + (u32)(s * STAGE_BYTES + i * WBOX) + bRow, wsw = bSw, wj = 8u * 128u;
#endif
#if !XG
		const u32 xb = xslot(q) + (u32)(i * XBOX) + aRow;
#if MB == 8
		// MB 8: one ldmatrix.x4 per two k16 steps, lane l giving row l % 8
		// of 8-k chunk 4·kp + l / 8 (aRow, aC): the four matrices are a0
		// and a2 of steps 2·kp and 2·kp + 1; a1 and a3 (rows 8 .. 15) are
		// zeros, as the 16-row box's rows past M would be.
#pragma unroll
		for (int kp = 0; kp < KF / 2; kp++) {
			dec_ldsm4(xb + ((((u32)(4 * kp) + aC) ^ aSw) << 4), f.a[2 * kp][0], f.a[2 * kp][2], f.a[2 * kp + 1][0], f.a[2 * kp + 1][2]);
			f.a[2 * kp][1] = f.a[2 * kp][3] = f.a[2 * kp + 1][1] = f.a[2 * kp + 1][3] = 0u;
		}
#elif MB
		// MB 1, 2, 4: the registers of lane (g, t) = (lane / 4, lane % 4)
		// read from its token row g < MB: a0 the k pair 2t of the step
		// (chunk 2kk), a2 the pair 8 + 2t (chunk 2kk + 1); a1 and a3 (rows
		// 8 .. 15) and every register of a row ≥ MB are zeros, as the
		// 16-row box's rows past M would be.
#pragma unroll
		for (int kk = 0; kk < KF; kk++) {
			f.a[kk][0] = aIn ? dec_lds32(xb + ((((u32)(2 * kk)) ^ aSw) << 4) + aC) : 0u;
			f.a[kk][2] = aIn ? dec_lds32(xb + ((((u32)(2 * kk + 1)) ^ aSw) << 4) + aC) : 0u;
			f.a[kk][1] = 0u;
			f.a[kk][3] = 0u;
		}
#else
#pragma unroll
		for (int kk = 0; kk < KF; kk++)
			dec_ldsm4(xb + ((((u32)(2 * kk) + aC) ^ aSw) << 4), f.a[kk][0], f.a[kk][1], f.a[kk][2], f.a[kk][3]);
#endif
#endif
#pragma unroll
		for (int j = 0; j < NB; j++)
#pragma unroll
			for (int q2 = 0; q2 < KF / 2; q2++)
				dec_ldsm4(wb + (u32)j * wj + ((((u32)(4 * q2) + bC) ^ wsw) << 4), f.b[j][2 * q2][0], f.b[j][2 * q2][1], f.b[j][2 * q2 + 1][0], f.b[j][2 * q2 + 1][1]);
	}

	// compute runs box u's mma (the k16 steps that hold part of the chunk:
	// ceil(K/16) per output element when K is not split, as gemm_f16), then
	// releases u's stage when u is its last box.
	__device__ __forceinline__ void compute(float (&acc)[NB][4], const Frags &f, int u, int lane) const {
#pragma unroll
		for (int kk = 0; kk < KF; kk++) {
			const int k0 = kbase + u * TF + kk * 16;
			if (k0 < kend) {
#pragma unroll
				for (int j = 0; j < NB; j++)
					dec_mma(acc[j], f.a[kk], f.b[j][kk][0], f.b[j][kk][1]);
			}
		}
		if (u % SUB == SUB - 1 || u == U - 1) {
#if XA
			// A slot this warp filled by cp.async: its writes are ordered
			// before the tensor unit's next copy into the slot.
			if (stage(u) < xaPre && copier(stage(u)) == warp)
				asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
			__syncwarp();
			if (lane == 0)
				dec_arrive(bars + 8u * STAGES + 8u * (stage(u) % STAGES));
#if XS
			// XS: the copier of stage q + XSL refills q's X slot once
			// every warp of the group has released q (its empty barrier,
			// the phase of q; it cannot be a phase further on, which
			// needs this warp's release of q + STAGES).
			const int q = stage(u);
			if (q + XSL < Q && copier(q + XSL) == warp) {
				dec_wait(bars + 8u * STAGES + 8u * (q % STAGES), (u32)((q / STAGES) & 1));
				copyX(q + XSL, lane);
			}
#endif
		}
	}

	// run computes the current chunk into acc: acc = 0, then every k16
	// step of the chunk in ascending k, fragments one box ahead.
	__device__ __forceinline__ void run(float (&acc)[NB][4], int lane) const {
#if XG == 2
		// The chunk's X lines into the L1 (one per row and box): the
		// lanes with t2 == 0 ask for their rows x0 and x1.
		if (t2 == 0)
			for (int b = 0; b < U; b++) {
				const int k = kbase + b * TF;
				if (k < K && x0)
					asm volatile("prefetch.global.L1 [%0];\n" ::"l"(x0 + k));
				if (k < K && x1)
					asm volatile("prefetch.global.L1 [%0];\n" ::"l"(x1 + k));
			}
#endif
#pragma unroll
		for (int j = 0; j < NB; j++)
#pragma unroll
			for (int e = 0; e < 4; e++)
				acc[j][e] = 0.0f;
		Frags f0, f1;
		if (U > 0)
			load(f0, 0);
		for (int u = 0; u < U; u += 2) {
			step(acc, f0, f1, u, lane);
			if (u + 1 < U)
				step(acc, f1, f0, u + 1, lane);
		}
	}

	// step computes box u from cur and loads box u + 1 into nxt: the load
	// first, so that its ldmatrix reads overlap u's mma, except with ER 1
	// when u is its stage's last box, where u's mma (and the release of
	// its stage) come first, so that the slot is not held while the warp
	// waits for its next stage. The mma of every output element runs in the
	// same order either way.
	__device__ __forceinline__ void step(float (&acc)[NB][4], Frags &cur, Frags &nxt, int u, int lane) const {
		const bool first = ER && u % SUB == SUB - 1;
		if (first)
			compute(acc, cur, u, lane);
		if (u + 1 < U)
			load(nxt, u + 1);
		if (!first)
			compute(acc, cur, u, lane);
	}
};

extern "C" __global__ void __launch_bounds__(NT)
    tilefit_gemm_decode(const __grid_constant__ TMap tmX, const __grid_constant__ TMap tmW, void *__restrict__ Y, long long M64, long long N64, long long K64
#if PG
			, const unsigned short *__restrict__ Wp
#endif
#if XG || XA || XS
			, const unsigned short *Xp
#endif
    ) {
	const int M = (int)M64, N = (int)N64, K = (int)K64;
	extern __shared__ __align__(128) unsigned char smem[];
#if PDL && !LD
	asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
	// With KC > 1 the grid's x is (row block, rank): clusters of KC CTAs
	// along x, rank r streaming chunks r·S .. r·S + S - 1 of the row block.
	const int rank = KC > 1 ? (int)dec_ctarank() : 0;
	const int n0 = (blockIdx.x / KC) * BN, m0 = blockIdx.y * XR;
	const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
	const u32 bars = dec_smem(smem), ring = (bars + BAR_BYTES + 1023u) & ~1023u;
	Seq sq;
	sq.K = K;
#if KSPLIT
	// The Plan guarantees K % CH == 0 and (K / CH) % KW == 0.
	// With KC > 1, (K / CH) % (KC·KW) == 0; this CTA runs S of the chunks.
	sq.C = CH;
	sq.T = CH / TK;
	sq.S = K / CH / KC;
	sq.B = rank * sq.S * CH;
#else
	sq.C = K;
	sq.T = (K + TK - 1) / TK;
	sq.S = 1;
	sq.B = 0;
#endif
	const int Q = sq.T * sq.S; // stages in all
	// xr: the rows of an X box (the map's box, builtin/decode.go's
	// DecodeXRows): 16, or with XM min(M, 16), when the consumers zero the
	// rows xr .. 15 of every X slot once (TMA never writes them), so the
	// mma's A rows past M read zeros as with TMA's fill.
	const int xr = XM ? min(M, XR) : XR;
	// pf asks the L2 for stage q's W boxes (lane i box i, the boxes issue
	// loads); PF > 0: the producer asks for stages 0 .. PF-1 at entry,
	// before griddepcontrol.wait and before the barriers exist, and, when
	// PF > STAGES (ahead of the ring), for stage q + PF as it issues q.
#if PF > STAGES
	auto pf = [&](int q) {
		const int k0 = sq.k0(q);
		if (lane < SUB && k0 + lane * TF < sq.kend(sq.chunk(q)))
			dec_prefetch(&tmW, k0 + lane * TF, n0);
	};
#endif
#if PG
	// pg asks the L2 for stage q's W rows by prefetch.global.L2, one
	// 128-byte line (a 64-k box row) per lane and step: the rows < N of
	// the block, the boxes the stage loads. PG > 0: stages 0 .. PG-1 at
	// entry (before the wait, as PF), then stage q + PG as q is issued.
	auto pg = [&](int q) {
		const int k0 = sq.k0(q);
		const int nbox = sq.boxes(q);
		const int rows = min(BN, N - n0);
		for (int i = lane; i < rows * nbox; i += 32)
			dec_prefetch_line(Wp + (size_t)(n0 + i / nbox) * K + k0 + (i % nbox) * TF);
	};
	if (warp == WARPS)
		for (int q = 0; q < min(PG, Q); q++)
			pg(q);
#endif
#if PF
	if (warp == WARPS) {
		const int pre = min(PF, Q);
		for (int i = lane; i < pre * SUB; i += 32) {
			const int q = i / SUB, b = i % SUB, k0 = sq.k0(q);
			if (k0 + b * TF < sq.kend(sq.chunk(q)))
				dec_prefetch(&tmW, k0 + b * TF, n0);
		}
	}
#endif
	if (threadIdx.x == 0) {
		for (int s = 0; s < STAGES; s++) {
			dec_bar_init(bars + 8u * s, (u32)(1 + XC));           // full: the producer's arrive (XA, XS: + XC) + the bytes
			dec_bar_init(bars + 8u * STAGES + 8u * s, (u32)RG); // empty: one arrive per warp reading it
		}
#if KC > 1
		dec_bar_init(bars + 16u * STAGES, (u32)(KC * WARPS * 32)); // red: every consumer thread of the cluster
#endif
		asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
	}
	__syncthreads();
#if KC > 1
	// Every thread arrives once (rank 0's red barrier is initialised);
	// each waits before it touches another CTA's shared memory (consumers)
	// or before it exits (the producer), long after the phase completed.
	asm volatile("barrier.cluster.arrive.release;\n" ::: "memory");
#endif

	if (warp == WARPS) {
		// Producer. issue loads stage q's W boxes (w) and X boxes (x), lane
		// i box i (boxes wholly past the chunk are not loaded: no consumer
		// reads them); arm: lane 0 first arms the full barrier with the
		// bytes of every box the stage loads.
		if (lane == 0) {
			asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<unsigned long long>(&tmW)) : "memory");
			asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<unsigned long long>(&tmX)) : "memory");
		}
		auto issue = [&](int q, bool arm, bool w, bool x) {
			const int s = q % STAGES, k0 = sq.k0(q);
			const int nbox = sq.boxes(q);
			const u32 full = bars + 8u * s, st = ring + (u32)(s * STAGE_BYTES);
			if (arm) {
				// XA: a stage armed without its X (preloaded) leaves the
				// XC arrivals to its copier's cp.async; otherwise the
				// producer makes them too. XS: the producer never copies
				// X (x is false) and the copier always arrives. WR 1: W is
				// always SUB whole boxes (those past K zero-filled).
				if (lane == 0) {
					dec_expect_tx(full, (u32)((WR ? SUB : nbox) * WBOX + nbox * (XG || XS || (XA && !x) ? 0 : xr * 128)));
#if XA
					if (x)
						dec_arrive_n(full, (u32)XC);
#endif
				}
				__syncwarp();
			}
#if WR
			if (w && lane == 0)
				dec_tma3(st, &tmW, 0, k0 / TF, n0, full);
#endif
			if (lane < nbox) {
				if (w && !WR)
					dec_tma(st + (u32)(lane * WBOX), &tmW, k0 + lane * TF, n0, full);
				if (x && !XG)
					dec_tma(dec_xslot(ring, q) + (u32)(lane * XBOX), &tmX, k0 + lane * TF, m0, full);
			}
		};
		int q = 0;
#if PDL == 2
		const int pre = min(PRE ? PRE : STAGES, Q);
		for (; q < pre; q++) {
			issue(q, true, true, false);
#if PF > STAGES
			if (q + PF < Q)
				pf(q + PF);
#endif
#if PG
			if (q + PG < Q)
				pg(q + PG);
#endif
		}
		asm volatile("griddepcontrol.wait;\n" ::: "memory");
#if !XA && !XS
		for (int k = 0; k < pre && !XG; k++)
			issue(k, false, false, true);
#endif
#elif PDL
		asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
		for (; q < Q; q++) {
			if (q >= STAGES)
				dec_wait(bars + 8u * STAGES + 8u * (q % STAGES), (u32)((q / STAGES - 1) & 1));
			issue(q, true, true, !XS);
#if PF > STAGES
			if (q + PF < Q)
				pf(q + PF);
#endif
#if PG
			if (q + PG < Q)
				pg(q + PG);
#endif
		}
#if PDL && LD
		// LD 1: the dependents may launch once every CTA has issued all
		// its loads (with CTAs small enough to share an SM, the next
		// call's CTAs start, and prefetch, while this call drains).
		if (lane == 0)
			asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
#if KC > 1
		asm volatile("barrier.cluster.wait.acquire;\n" ::: "memory");
#endif
		return;
	}

#if XM
	// The consumers zero rows xr .. 15 of every X slot (16-byte stores),
	// bytes no TMA copy writes, then wait for each other before any reads.
	if (xr < XR) {
		const int per = (XR - xr) * 8; // 16-byte pieces of an X box's rows xr .. 15
		for (int i = threadIdx.x; i < STAGES * SUB * per; i += WARPS * 32) {
			const int bx = i / per, r = i % per;
			const u32 a = ring + (u32)((bx / SUB) * STAGE_BYTES + SUB * WBOX + (bx % SUB) * XBOX + xr * 128 + r * 16);
			asm volatile("st.shared.v4.u32 [%0], {%1, %1, %1, %1};\n" ::"r"(a), "r"(0u) : "memory");
		}
		asm volatile("bar.sync 2, %0;\n" ::"n"(WARPS * 32) : "memory");
	}
#endif
#if XS
	// XS: rows xrows .. 15 of every X slot (the token rows past M) are
	// zero, written once here (no copy writes them); the consumers wait
	// for each other before any reads.
	if (M - m0 < XR) {
		const int xrows = M - m0, per = (XR - xrows) * 8; // 16-byte pieces of a box's rows xrows .. 15
		for (int i = threadIdx.x; i < XSL * SUB * per; i += WARPS * 32) {
			const u32 a = ring + (u32)(STAGES * STAGE_BYTES + (i / per) * XBOX + xrows * 128 + (i % per) * 16);
			asm volatile("st.shared.v4.u32 [%0], {%1, %1, %1, %1};\n" ::"r"(a), "r"(0u) : "memory");
		}
		asm volatile("bar.sync 2, %0;\n" ::"n"(WARPS * 32) : "memory");
	}
#endif
#if PDL
	asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
#if KC > 1
	asm volatile("barrier.cluster.wait.acquire;\n" ::: "memory");
#endif
	// Consumers: warp = kw·RG + rg. ldmatrix rows: A (X, x4 per k16 step):
	// lane l reads token row l % 16 at chunk l / 16 of the step (a0..a3 of
	// mma.m16n8k16); B (W, x4 per two k16 steps): lane l reads weight row
	// l % 8 of the group at chunk l / 8 of a 32-k window (b0, b1 of both).
	const int kw = warp / RG, rg = warp % RG;
	Consumer c;
	c.ring = ring;
	c.bars = bars;
#if MB == 8
	// MB 8 (ldmatrix.x4 of two k16 steps): lane l reads row l % 8 at
	// chunk l / 8 of the four.
	c.aRow = (u32)((lane & 7) * 128);
	c.aSw = (u32)(lane & 7);
	c.aC = (u32)(lane >> 3);
#elif MB
	// MB 1, 2, 4: lane (g, t) reads token row g's 4 bytes at k 2t of a
	// chunk.
	c.aIn = (lane >> 2) < XR;
	c.aRow = c.aIn ? (u32)((lane >> 2) * 128) : 0u;
	c.aSw = XSW ? (u32)((lane >> 2) & 7) : 0u;
	c.aC = (u32)(4 * (lane & 3));
#else
	c.aRow = (u32)((lane & 15) * 128);
	c.aSw = (u32)(lane & 7);
	c.aC = (u32)(lane >> 4);
#endif
	c.bRow = (u32)((rg * 8 * NB + (lane & 7)) * (WR ? SUB : 1) * 128);
	c.bSw = (u32)(((lane & 7) * (WR ? SUB : 1)) & 7);
	c.bC = (u32)(lane >> 3);
	c.kw = kw;
	c.T = sq.T;
	c.warp = warp;
#if XA || XS
	c.sq = sq;
	c.X = Xp;
	c.M = M;
	c.K = K;
	c.m0 = m0;
	c.Q = Q;
	c.xrows = XS ? min(XR, M - m0) : XR;
#endif
#if XA || XS
	// The X this warp copies (copier) right after the wait, in stage
	// order: XA, the boxes of the stages preloaded before it; XS, those of
	// each group's first XS stages (X slots 0 .. XSL-1; compute copies
	// the rest).
	const int xFirst = min(XA ? (PRE ? PRE : STAGES) : XSL, Q);
	for (int k = 0; k < xFirst; k++)
		if (Consumer::copier(k) == warp)
			c.copyX(k, lane);
	c.xaPre = XA ? xFirst : 0;
#else
	c.xaPre = 0;
#endif
#if XG
	c.K = K;
	c.t2 = 2 * (lane & 3);
	c.x0 = m0 + (lane >> 2) < M ? Xp + (size_t)(m0 + (lane >> 2)) * K : nullptr;
	c.x1 = m0 + (lane >> 2) + 8 < M ? Xp + (size_t)(m0 + (lane >> 2) + 8) * K : nullptr;
#endif
	float acc[NB][4];
	const int g = lane >> 2, t = lane & 3;
#if KC > 1
	// Each chunk's partial (from zero) goes to rank 0's shared memory
	// P[chunk][row][n] (global chunk index, rows < min(M, 16), the Plan's
	// size); every consumer thread of the cluster then arrives on rank 0's
	// red barrier (release), and rank 0's warps kw = 0 wait for all of them
	// (acquire) and add the partials in chunk order, tot = P0; tot = tot +
	// P1; ... — the same order as without a cluster (gemm_f16/splitkC).
	const int MR = min(M, XR), rows = min(XR, M - m0);
	const u32 P0 = ring + (u32)RING_BYTES, Pt = dec_mapa(P0, 0u), red = bars + 16u * STAGES;
	for (int i = 0; i * KW < sq.S; i++) {
		const int ch = kw + i * KW;
		c.round = i;
		c.kbase = sq.B + ch * CH;
		c.kend = sq.kend(ch);
		c.U = (c.kend - c.kbase + TF - 1) / TF;
		c.run(acc, lane);
		const int gch = rank * sq.S + ch;
#if RV
		// RV: P[chunk][rg][lane][j][e], the fragment as the lane holds
		// it, two floats a store (row g: e 0, 1; row g + 8: e 2, 3).
#pragma unroll
		for (int j = 0; j < NB; j++) {
			const u32 a = Pt + 4u * (u32)((((gch * RG + rg) * 32 + lane) * NB + j) * 4);
			if (g < rows)
				dec_st_cluster2(a, acc[j][0], acc[j][1]);
			if (g + 8 < rows)
				dec_st_cluster2(a + 8u, acc[j][2], acc[j][3]);
		}
#else
#pragma unroll
		for (int j = 0; j < NB; j++)
#pragma unroll
			for (int e = 0; e < 4; e++) {
				const int row = g + (e >> 1) * 8, col = rg * 8 * NB + j * 8 + 2 * t + (e & 1);
				if (row < rows)
					dec_st_cluster(Pt + 4u * (u32)((gch * MR + row) * BN + col), acc[j][e]);
			}
#endif
	}
	dec_arrive_cluster(dec_mapa(red, 0u));
	if (rank != 0 || kw != 0)
		return;
	dec_wait_on<true>(red, 0u);
	const float *P = reinterpret_cast<const float *>(smem + (P0 - bars));
#pragma unroll
	for (int j = 0; j < NB; j++)
#pragma unroll
		for (int e = 0; e < 4; e++) {
			const int row = g + (e >> 1) * 8, col = rg * 8 * NB + j * 8 + 2 * t + (e & 1);
			float v = 0.0f;
			if (row < rows) {
#if RV
				(void)col;
				v = P[((rg * 32 + lane) * NB + j) * 4 + e];
				for (int ch = 1; ch < KC * sq.S; ch++)
					v = v + P[(((ch * RG + rg) * 32 + lane) * NB + j) * 4 + e];
#else
				v = P[row * BN + col];
				for (int ch = 1; ch < KC * sq.S; ch++)
					v = v + P[(ch * MR + row) * BN + col];
#endif
			}
			acc[j][e] = v;
		}
#elif KSPLIT
	// Each chunk's partial (from zero) goes to shared memory P[chunk];
	// then warp kw = 0 of each row group adds them in chunk order,
	// tot = P0; tot = tot + P1; ... — gemm_wgmma's split-K reduce (class
	// gemm_f16/splitkC), so the bits are its.
	float *P = reinterpret_cast<float *>(smem + (ring - bars) + RING_BYTES);
	for (int i = 0; i * KW < sq.S; i++) {
		const int ch = kw + i * KW;
		c.round = i;
		c.kbase = ch * CH;
		c.kend = sq.kend(ch);
		c.U = (c.kend - c.kbase + TF - 1) / TF;
		c.run(acc, lane);
		float *pc = P + ((size_t)(ch * RG + rg) * 32 + lane) * (4 * NB);
#pragma unroll
		for (int j = 0; j < NB; j++)
#pragma unroll
			for (int e = 0; e < 4; e++)
				pc[j * 4 + e] = acc[j][e];
	}
	asm volatile("bar.sync 1, %0;\n" ::"n"(WARPS * 32) : "memory");
	if (kw != 0)
		return;
#pragma unroll
	for (int j = 0; j < NB; j++)
#pragma unroll
		for (int e = 0; e < 4; e++)
			acc[j][e] = P[((size_t)rg * 32 + lane) * (4 * NB) + j * 4 + e];
	for (int ch = 1; ch < sq.S; ch++) {
		const float *pc = P + ((size_t)(ch * RG + rg) * 32 + lane) * (4 * NB);
#pragma unroll
		for (int j = 0; j < NB; j++)
#pragma unroll
			for (int e = 0; e < 4; e++)
				acc[j][e] = acc[j][e] + pc[j * 4 + e];
	}
#else
	c.round = 0;
	c.kbase = 0;
	c.kend = K;
	c.U = (K + TF - 1) / TF;
	c.run(acc, lane);
#endif

	// Epilogue: D (16 tokens × 8 weight rows per group): a lane holds
	// tokens lane/4 and lane/4 + 8, weight rows 2·(lane%4) and +1; only
	// the block's XR rows are its (MB: rows ≥ MB belong to the next block).
#pragma unroll
	for (int j = 0; j < NB; j++) {
		const int n = n0 + rg * 8 * NB + j * 8 + 2 * t;
		if (g < XR) {
			dec_store(Y, M, N, m0 + g, n, acc[j][0]);
			dec_store(Y, M, N, m0 + g, n + 1, acc[j][1]);
		}
		if (g + 8 < XR) {
			dec_store(Y, M, N, m0 + g + 8, n, acc[j][2]);
			dec_store(Y, M, N, m0 + g + 8, n + 1, acc[j][3]);
		}
	}
}
