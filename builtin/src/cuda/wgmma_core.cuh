// wgmma_core.cuh — the Hopper (sm_90a) GEMM mainloop shared by tilefit's
// wgmma families: gemm_wgmma (a plain GEMM), hc_up_wgmma (hc_up with its
// 4-stream mix) and swiglu_wgmma (the dual-B gate/up GEMM with SwiGLU). It is
// not a family: Go (builtin/cuda_wgmma.go) puts this text before each of those
// sources (with #line directives), so NVRTC sees one file and no #include is
// needed. A family supplies a producer (which TMA boxes make a stage) and an
// epilogue (what happens to the finished fp32 accumulators), and its kernel
// entry calls wg_kernel(producer, epilogue, tilesM, tilesN, nk).
//
// What the core does (every family the same):
//   Block: (CONSUMERS + 1) warpgroups. Warpgroup 0 is the producer: it gives
//   up registers (setmaxnreg.dec) and one thread issues the TMA copies of each
//   stage (the family's Producer::stage: BM rows × 64 k of the A operand at
//   the stage's start, BN rows × 64 k of the B operand after them, 128 bytes
//   a row, 128-byte swizzled) into a STAGES-deep ring of shared-memory
//   stages, completing on the stage's "full" mbarrier (transaction count
//   STAGE_BYTES). Warpgroups 1..CONSUMERS are consumers: they take registers
//   (setmaxnreg.inc), and each owns BM/CONSUMERS rows of the tile: it waits on
//   "full", issues 4 k16 steps of wgmma (one m64nBNk16 per 64 rows) and, once
//   the previous stage's wgmma group completed, releases that stage on its
//   "empty" mbarrier (one arrive per consumer warp). PINGPONG 1 (two
//   consumers): each consumer owns whole BM×BN tiles, alternate ones, and the
//   two take turns on the tensor cores, so one consumer's epilogue runs while
//   the other's k loop does.
//
//   Persistent grid: gridDim.x CTAs walk the work units u = blockIdx.x,
//   blockIdx.x + gridDim.x, ...; a unit is one BM×BN tile and one K chunk
//   (KSPLIT k-blocks of 64; all of K when KSPLIT is 0), tiles in a grouped
//   order: RASTER 0 takes GROUP tile rows at a time, walked column by column;
//   RASTER 1 GROUP tile columns at a time, walked row by row. The pipeline
//   runs on across units, so the producer loads the next unit while the
//   consumers finish this one. Before and after a unit's stages the
//   producer calls Producer::unit_begin and unit_done (hc_up loads its H
//   tile in one of them); after a unit's k loop each consumer calls the
//   epilogue with its accumulators.
//
//   Reduction order, the same in every tile: every accumulator element is
//     acc = 0; for k0 = 0, 16, 32, ... (within the unit's K chunk):
//         acc = mma(acc, A[m, k0:k0+16], B[n, k0:k0+16])
//   with elements past K read as zero (TMA fills them). That is the order of
//   the mma.sync families (gemm_f16, and the fused core fused_common.cu),
//   which skip the k16 steps that start at or past K: here the last stage's
//   steps all run, on zeros, which leaves the accumulators' bits unchanged.
//
//   The epilogue receives acc[MW][BN/2] of consumer c: register 4j+e of
//   m64 block i of a thread of warp w (of its warpgroup) holds tile row
//   (PINGPONG ? 0 : c·WGM) + 64i + 16w + lane/4 (+8 for e ≥ 2), tile column
//   8j + 2·(lane%4) (+1 for odd e).
//
//   PDL 1: every thread runs griddepcontrol.launch_dependents and then
//   griddepcontrol.wait after the barrier init, so the launch and prologue
//   overlap the previous kernel's tail when the Plan launches with
//   programmatic stream serialisation. PDL 2 (a family that sets
//   WG_PRELOAD): PDL 1, except that the producer thread first issues the
//   constant operand's copies (prod.stage_const: the B rows, weights) of
//   its first unit's first min(NST, k-blocks) stages, each stage's full
//   barrier armed with all its bytes, and only then waits; after the wait
//   the walk issues the rest of those stages (prod.stage_rest: the A rows)
//   without arming them again. It assumes the kernel before does not write
//   B (constant weights during inference); the bytes and places of every
//   copy, hence the bits, are PDL 1's.
//
// Shared memory: the barriers (full[NST], empty[NST], turn[2], then
// WG_AUX_BARS of the family's own) in the first BAR_BYTES, then the stages
// from the next 1024-byte boundary (the 128-byte swizzle pattern repeats
// every 1024 bytes; wgmma descriptors assume it starts there), then
// WG_EXTRA_BYTES of the family's own (a multiple of 1024), then with EPI 1
// the consumers' staging tiles (EPI_BYTES, below). The host allocates
// NST·STAGE_BYTES + WG_EXTRA_BYTES + EPI_BYTES + BAR_BYTES + 1024 (for a
// family whose output type varies, the larger of that and EPI 0's layout).
//
// EPI 1 (the staged epilogue; 0, the default, leaves every epilogue as it
// was): each consumer has a staging tile in shared memory of its WGM rows
// × EPI_N fp16 output columns (WG_EPI_N, set by the family: BN, or BN/4,
// BN/2 for the fused families), laid out as EPI_NBOX boxes of EPI_BOXC
// columns (64, 32, 16 or 8: the widest that divides EPI_N), each box's rows
// swizzled over its EPI_ROWB bytes (128-, 64- or 32-byte swizzle; none for
// 16-byte rows) the way TMA reads them. The epilogue rounds each value to
// fp16 exactly as before (f2h, RN), writes the pairs with 32-bit shared
// stores (epi_off: one warp store is 8 rows × 16 bytes, which the swizzle
// puts in 8 distinct 16-byte bank groups, conflict free), and one thread
// sends the tile out with one TMA bulk tensor store per box (a tensor map
// over the output; TMA clips rows and columns past its dims, so the M and
// N tails need no test). The stores are asynchronous: the consumer goes on
// to its next unit's k loop at once, and only before writing its staging
// tile again does its thread 0 wait until the previous stores have read it
// (cp.async.bulk.wait_group.read 0; a whole k loop later, so it does not
// wait). Values and rounding are unchanged, so the bits are the same.
//
// No headers are included: the source compiles with NVRTC alone, for
// sm_90a (wgmma and setmaxnreg exist only there).

#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 256
#endif
#ifndef STAGES
#define STAGES 0
#endif
#ifndef CONSUMERS
#define CONSUMERS 2
#endif
#ifndef KSPLIT
#define KSPLIT 0
#endif
#ifndef PINGPONG
#define PINGPONG 0
#endif
// KFOLD 1 (with KSPLIT > 0): a unit is a whole tile; the consumer computes
// the tile's K chunks one after another, each from zero, and folds them in
// chunk order in registers (tot = p0; tot = tot + p1; ...), the order of the
// split-K reduce kernel, so the tile is bitwise the split-K class without
// partials or a second kernel. The epilogue receives tot.
#ifndef KFOLD
#define KFOLD 0
#endif
#if KFOLD && !KSPLIT
#error "KFOLD needs KSPLIT > 0"
#endif
// KUNITS: units split K into chunks (split K with partials).
#define KUNITS (KSPLIT && !KFOLD)
#ifndef RASTER
#define RASTER 0
#endif
#ifndef GROUP
#define GROUP 8
#endif
#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#error "the wgmma families need sm_90a (wgmma, setmaxnreg): compile with --gpu-architecture=sm_90a"
#endif
#ifndef WATCHDOG
#define WATCHDOG 0
#endif
#ifndef PDL
#define PDL 0
#endif
// MC: a thread-block cluster of two CTAs sharing one operand's stage by TMA
// multicast (0: no cluster). The two CTAs of cluster c (blocks 2c, 2c+1,
// cluster ranks 0 and 1) walk the same units of a pair grid and take the two
// tiles of a pair: MC 1 tiles (2p, bn) and (2p+1, bn), which read the same B
// rows, so each CTA loads half of a stage's B rows (its rank's) multicast to
// both; MC 2 tiles (bm, 2q) and (bm, 2q+1), sharing the A rows the same way.
// The other operand each loads whole for itself. A stage of a CTA is
// overwritten by both producers, so each consumer warp releases it in both
// CTAs (empty barriers count both CTAs' warps), and each CTA's full barrier
// expects all STAGE_BYTES (its own copies and the peer's multicast). A pair
// tile past the last tile row (column) reads zeros (TMA's out-of-bounds
// fill) and stores nothing. The k order of every element is unchanged, so
// MC never changes a tile's bits.
#ifndef MC
#define MC 0
#endif
// The family's own shared memory after the stages, and its own mbarriers
// after the core's (set by the family's prelude).
#ifndef WG_EXTRA_BYTES
#define WG_EXTRA_BYTES 0
#endif
#ifndef WG_AUX_BARS
#define WG_AUX_BARS 0
#endif
// Producer-side hooks, each defaulting to the behaviour of the families that
// load whole stages by TMA (gemm_q8_wgmma sets them: int8 rows by TMA into a
// raw area, converted into the fp16 B operand by the producer's other warps).
//   WG_STAGE_EXTRA   bytes of the family's own at the end of every stage, after
//                    B (a multiple of 1024; default 0)
//   WG_FULL_TX       the bytes the producer thread's TMA copies complete on a
//                    stage's full barrier (default all of A and B)
//   WG_FULL_COUNT    the arrivals that complete a full barrier's phase: the
//                    producer thread's expect_tx and any converting threads'
//                    (default 1)
//   WG_CONVERT       1: the producer warpgroup's threads other than thread 0
//                    run prod.convert(tilesM, tilesN, ntiles, nunits, nk,
//                    stages, fullBar, aux, extra) while thread 0 issues the
//                    copies (default 0: they idle)
//   WG_PRODUCER_REGS, WG_CONSUMER_REGS   the setmaxnreg targets with two
//                    consumers (default 40 and 232)
//   WG_SETMAXNREG    1: the warpgroups rebalance registers with setmaxnreg
//                    to those targets (default: with two consumers only, as
//                    before; hc_up_wgmma's MINB 2 sets 1 for one consumer
//                    and its own targets, which fit half the register file)
#ifndef WG_STAGE_EXTRA
#define WG_STAGE_EXTRA 0
#endif
#ifndef WG_FULL_TX
#define WG_FULL_TX STAGE_BYTES
#endif
#ifndef WG_FULL_COUNT
#define WG_FULL_COUNT 1
#endif
#ifndef WG_CONVERT
#define WG_CONVERT 0
#endif
#ifndef WG_PRODUCER_REGS
#define WG_PRODUCER_REGS 40
#endif
#ifndef WG_CONSUMER_REGS
#define WG_CONSUMER_REGS 232
#endif
#ifndef WG_SETMAXNREG
#define WG_SETMAXNREG (CONSUMERS > 1)
#endif
#ifndef EPI
#define EPI 0
#endif
// WG_EPI_N: the fp16 output columns of a tile that EPI 1 stages;
// WG_EPI_USED 0: the family stores this program's output directly even
// with EPI 1 (gemm_wgmma's fp32 Y), so no staging tile is reserved and the
// ring keeps EPI 0's stages.
#ifndef WG_EPI_N
#define WG_EPI_N BN
#endif
#ifndef WG_EPI_USED
#define WG_EPI_USED 1
#endif
// WG_MMA_N: the N of one wgmma instruction (default BN: one m64nBNk16 per
// 64 rows and k16 step). A family with a tile wider than wgmma's 256
// columns sets it to a divisor of BN and defines
//   wgmma_part(float *d, u64 da, u64 db)   (m64nWG_MMA_Nk16, D += A·B)
// before this file; the consumer then issues BN / WG_MMA_N of them per 64
// rows and k16 step, part p on B rows [p·WG_MMA_N, (p+1)·WG_MMA_N) into
// registers [p·WG_MMA_N/2, (p+1)·WG_MMA_N/2) of the accumulator row, so the
// register layout (register 4j+e holds tile column 8j + ...) and every
// element's k order are those of one BN-wide wgmma. WG_MAX_ACC: the most
// fp32 accumulators per consumer thread the family allows (default 128).
#ifndef WG_MMA_N
#define WG_MMA_N BN
#endif
#ifndef WG_MAX_ACC
#define WG_MAX_ACC 128
#endif
// WG_UNIT_SLOTS: ring slots of the family's own after each unit's k-blocks
// (default 0: none). The producer fills them in ring order after the unit's
// stages, each once the consumers released it, by prod.slot(dst, fullBar,
// unit, jj, i) for i < WG_UNIT_SLOTS (its own expect_tx and copies onto the
// slot's full barrier); the epilogue waits for slot i with wg_slot_wait(ctx,
// i), which returns its shared address, reads it and releases it with
// wg_slot_release(ctx, i) (one arrive per consumer warp, both CTAs with MC,
// like a stage). The consumers release every k-block's stage before their
// epilogue, so a unit's slots never wait for its own stages: a family
// operand of the epilogue (hc_up's H tile) rides in the ring instead of a
// buffer of its own, and the ring keeps those bytes as stages. Needs NST ≥
// WG_UNIT_SLOTS; not with PINGPONG.
#ifndef WG_UNIT_SLOTS
#define WG_UNIT_SLOTS 0
#endif
// WG_A_RES: the A operand is resident instead of in the stages (default 0:
// each stage holds its A rows). With n > 0 a stage is only the B rows (and
// WG_STAGE_EXTRA); the A rows of k-block kb of a unit (kb < n, counted from
// the unit's first) are read at extra + WG_A_RES_OFF + kb·A_BYTES, inside
// the family's own bytes, where its producer loads them onto the stage's
// full barrier when they change (hc_up_wgmma's XRES: consecutive units of a
// CTA with the same tile row keep X). WG_STAGE_TX(prod, w, kb): the bytes
// the producer's copies complete on the stage's full barrier (default
// WG_FULL_TX), so a stage that also brings A rows expects them. Needs no
// PINGPONG, MC or KSPLIT.
#ifndef WG_A_RES
#define WG_A_RES 0
#endif
#ifndef WG_A_RES_OFF
#define WG_A_RES_OFF 0
#endif
#ifndef WG_STAGE_TX
#define WG_STAGE_TX(prod, w, kb) (WG_FULL_TX)
#endif
// WG_OVL n (default 0: off): the consumer overlaps a unit's epilogue with
// the next unit's first n k-blocks. It keeps two accumulator sets; after a
// unit's k loop it zeroes the other set, issues the next unit's first n
// k-blocks into it (waiting for their stages as usual), waits until only
// those n wgmma groups are outstanding (so the unit's own are complete),
// releases the unit's last stage, runs the epilogue on the finished set
// while the tensor cores work on the next unit, then goes on with the next
// unit's k loop. Every accumulator's k order is unchanged. Needs no
// PINGPONG, KSPLIT, WG_UNIT_SLOTS or MC, and 2·MW·BN/2 accumulators.
#ifndef WG_OVL
#define WG_OVL 0
#endif
// WG_PRELOAD 1: the family's producer splits a stage into stage_const (the
// copies of an operand no kernel before writes) and stage_rest, which PDL 2
// needs (default 0: PDL 2 is refused).
#ifndef WG_PRELOAD
#define WG_PRELOAD 0
#endif
static_assert(PDL >= 0 && PDL <= 2, "PDL: 0, 1 or 2");
static_assert(PDL != 2 || (WG_PRELOAD && MC == 0 && !WG_A_RES && !WG_CONVERT), "PDL 2: a family with WG_PRELOAD, no MC, no resident A, no converter");
// WPRE n (PDL 2; 0: NST): the constant operand of only the first min(n,
// NST) stages is copied before the wait, so that the activations of stage
// 0, copied after it, queue behind fewer preloaded bytes in the tensor
// unit (gemm_decode's PRE, docs/results/h200-decode8). Never changes the
// bits.
#ifndef WPRE
#define WPRE 0
#endif
static_assert(WPRE >= 0 && (WPRE == 0 || PDL == 2), "WPRE: PDL 2 only");

typedef unsigned int u32;
typedef unsigned long long u64;

// A TMap is a CUtensorMap: 128 opaque bytes, 64-byte aligned.
struct __align__(64) TMap {
	u64 v[16];
};

constexpr int BK = 64; // K per stage: 64 fp16 = 128 bytes, one swizzle row
constexpr int NT = (CONSUMERS + 1) * 128;
constexpr int WGM = PINGPONG ? BM : BM / CONSUMERS; // tile rows per consumer warpgroup
constexpr int MW = WGM / 64;        // m64 blocks per consumer
constexpr int A_BYTES = BM * BK * 2;
constexpr int B_BYTES = BN * BK * 2;
constexpr int A_STAGE = WG_A_RES ? 0 : A_BYTES; // A bytes in a stage (0 when A is resident)
constexpr int STAGE_BYTES = A_STAGE + B_BYTES + WG_STAGE_EXTRA;
// The staged epilogue's geometry (EPI 1): per consumer EPI_NBOX boxes of
// WGM rows × EPI_BOXC fp16 columns, EPI_ROWB bytes a row, EPI_BOXBYTES a box
// (a multiple of 1024: WGM is a multiple of 64), EPI_STG bytes in all;
// builtin/cuda_wgmma.go's wgmmaEpiBytes computes the same.
constexpr int EPI_N = WG_EPI_N;
constexpr int EPI_BOXC = EPI_N % 64 == 0 ? 64 : EPI_N % 32 == 0 ? 32 : EPI_N % 16 == 0 ? 16 : 8;
constexpr int EPI_ROWB = EPI_BOXC * 2;
constexpr int EPI_NBOX = EPI_N / EPI_BOXC;
constexpr int EPI_BOXBYTES = WGM * EPI_ROWB;
constexpr int EPI_STG = (EPI && WG_EPI_USED) ? EPI_NBOX * EPI_BOXBYTES : 0;
constexpr int EPI_BYTES = CONSUMERS * EPI_STG;
constexpr int EXTRA_BYTES = WG_EXTRA_BYTES + EPI_BYTES;
constexpr int BAR_BYTES = 256;
// MAX_ST is the most stages whose barriers fit beside turn[2] and the
// family's own; NST is the pipeline depth: STAGES, or when it is 0 as many
// stages as fit in 227 KiB beside the barriers, the alignment slack and the
// family's own bytes, at most MAX_ST (kernel.WgmmaStages computes the same).
constexpr int MAX_ST = (BAR_BYTES - 16 - 8 * WG_AUX_BARS) / 16 < 15 ? (BAR_BYTES - 16 - 8 * WG_AUX_BARS) / 16 : 15;
constexpr int FIT_ST = (227 * 1024 - 1280 - EXTRA_BYTES) / STAGE_BYTES;
constexpr int NST = STAGES > 0 ? STAGES : (FIT_ST < MAX_ST ? FIT_ST : MAX_ST);
// Registers per thread after setmaxnreg: the block starts at 168
// (__launch_bounds__(384, 1): 65536/384 rounded down to 8); the producer
// gives 128 of them back, the two consumers take 64 each.
// (WG_SETMAXNREG: by default with two consumers only.)
#if WG_SETMAXNREG
constexpr int PRODUCER_REGS = WG_PRODUCER_REGS;
constexpr int CONSUMER_REGS = WG_CONSUMER_REGS;
static_assert(PRODUCER_REGS % 8 == 0 && CONSUMER_REGS % 8 == 0 && PRODUCER_REGS >= 24 && CONSUMER_REGS <= 256 && PRODUCER_REGS <= CONSUMER_REGS,
	      "setmaxnreg targets: multiples of 8 in 24..256");
#endif

static_assert(CONSUMERS == 1 || CONSUMERS == 2, "CONSUMERS must be 1 or 2");
static_assert(BM % 64 == 0 && WGM % 64 == 0 && BM <= 256, "BM must be a multiple of 64·CONSUMERS (64 with PINGPONG), at most 256");
static_assert(WG_MMA_N % 8 == 0 && WG_MMA_N >= 8 && WG_MMA_N <= 256 && BN % WG_MMA_N == 0, "BN must be a multiple of 8 in 8..256 (or of WG_MMA_N)");
static_assert(MW * BN / 2 <= WG_MAX_ACC, "at most WG_MAX_ACC (128) fp32 accumulators per consumer thread");
static_assert(NST >= 2 && 2 * NST * 8 + 16 + 8 * WG_AUX_BARS <= BAR_BYTES, "STAGES must be in 2..MAX_ST");
static_assert(EXTRA_BYTES % 1024 == 0, "the family's shared memory must be a multiple of 1024 bytes");
static_assert(EPI == 0 || EPI == 1, "EPI must be 0 or 1");
static_assert(!EPI || (EPI_N % 8 == 0 && EPI_N >= 8 && WGM <= 256), "EPI 1 stages a multiple of 8 columns in boxes of at most 256 rows");
static_assert(!PINGPONG || CONSUMERS == 2, "PINGPONG needs two consumers");
static_assert(WG_A_RES == 0 || (!PINGPONG && !MC && !KSPLIT), "WG_A_RES: no PINGPONG, MC or KSPLIT");
static_assert(WG_OVL >= 0 && WG_OVL <= 2 && (WG_OVL == 0 || (!PINGPONG && !MC && !KSPLIT && !WG_UNIT_SLOTS)), "WG_OVL: 0..2, no PINGPONG, MC, KSPLIT or unit slots");
static_assert(WG_UNIT_SLOTS == 0 || (!PINGPONG && NST >= WG_UNIT_SLOTS), "WG_UNIT_SLOTS needs NST ≥ WG_UNIT_SLOTS and no PINGPONG");
static_assert(MC == 0 || MC == 1 || MC == 2, "MC must be 0, 1 or 2");
static_assert(MC != 1 || BN % 16 == 0, "MC 1 multicasts halves of the B rows: BN must be a multiple of 16 (1024-byte swizzle atoms)");
constexpr int CL = MC ? 2 : 1; // CTAs per cluster

__device__ __forceinline__ u32 smem_addr(const void *p) {
	u32 r;
	asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(r) : "l"(p));
	return r;
}

__device__ __forceinline__ void mbar_init(u32 bar, u32 count) {
	asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}

__device__ __forceinline__ void mbar_expect_tx(u32 bar, u32 bytes) {
	asm volatile("{\n\t.reg .b64 state;\n\tmbarrier.arrive.expect_tx.shared::cta.b64 state, [%0], %1;\n}\n" ::"r"(bar), "r"(bytes) : "memory");
}

__device__ __forceinline__ void mbar_arrive(u32 bar) {
	asm volatile("{\n\t.reg .b64 state;\n\tmbarrier.arrive.shared::cta.b64 state, [%0];\n}\n" ::"r"(bar) : "memory");
}

// wg_rank is the CTA's rank in its cluster (0 without MC).
__device__ __forceinline__ int wg_rank() {
#if MC
	u32 r;
	asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
	return (int)r;
#else
	return 0;
#endif
}

// stage_release releases a stage: an arrive on its empty barrier in this
// CTA and, with MC, on the same barrier of the peer CTA (whose producer
// multicasts into this CTA's stage too).
__device__ __forceinline__ void stage_release(u32 bar) {
	mbar_arrive(bar);
#if MC
	u32 ra;
	asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(ra) : "r"(bar), "r"((u32)(wg_rank() ^ 1)));
	// The default semantics (release at CTA scope): nothing of this
	// thread's needs publishing, its wgmma reads of the stage are complete
	// (wait_group); a .release.cluster arrive here measured 1.5–2.6x slower
	// on the H200 (a cluster-scope fence in every k-block).
	asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];\n" ::"r"(ra) : "memory");
#endif
}

// cluster_sync is a barrier of every thread of the cluster (MC), with
// release/acquire ordering; __syncthreads without MC.
__device__ __forceinline__ void cluster_sync() {
#if MC
	__syncwarp();
	asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
#else
	__syncthreads();
#endif
}

// mbar_wait returns once the phase of parity `parity` of bar has completed.
// With WATCHDOG=1 (tests only) a wait longer than ~2·10⁹ cycles traps, so a
// pipeline bug fails the launch instead of hanging it.
__device__ __forceinline__ void mbar_wait(u32 bar, u32 parity) {
	u32 done;
#if WATCHDOG
	const long long t0 = clock64();
#endif
	do {
		asm volatile("{\n\t.reg .pred p;\n\t"
			     "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
			     "selp.u32 %0, 1, 0, p;\n}\n"
			     : "=r"(done)
			     : "r"(bar), "r"(parity)
			     : "memory");
#if WATCHDOG
		if (!done && clock64() - t0 > 2000000000ll)
			asm volatile("trap;");
#endif
	} while (!done);
}

// tma_load copies the box at (c0, c1) (c0 innermost, in elements) of map into
// shared memory at dst; the copy completes bytes on bar.
__device__ __forceinline__ void tma_load(u32 dst, const TMap *map, int c0, int c1, u32 bar) {
	asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::"r"(dst),
		     "l"(reinterpret_cast<u64>(map)), "r"(c0), "r"(c1), "r"(bar)
		     : "memory");
}

// tma_load3 is tma_load of a rank-3 map, the box at (c0, c1, c2).
__device__ __forceinline__ void tma_load3(u32 dst, const TMap *map, int c0, int c1, int c2, u32 bar) {
	asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];\n" ::"r"(dst),
		     "l"(reinterpret_cast<u64>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(bar)
		     : "memory");
}

// tma_load_mc is tma_load multicast to both CTAs of the cluster (MC): the box
// lands at dst in each, completing bytes on bar in each.
__device__ __forceinline__ void tma_load_mc(u32 dst, const TMap *map, int c0, int c1, u32 bar) {
	asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;\n" ::"r"(dst),
		     "l"(reinterpret_cast<u64>(map)), "r"(c0), "r"(c1), "r"(bar), "h"((unsigned short)3)
		     : "memory");
}

// wg_load_rows loads rows [row, row + rows) × 64 k (from k) of a K-major
// operand into dst. When the operand is the one the cluster pair shares
// (shared, with MC), this CTA loads only its rank's half, rows/2 rows at
// dst + rank·rows/2·128 bytes, multicast to both CTAs (the map's box is
// rows/2 then); otherwise the whole box, for itself.
__device__ __forceinline__ void wg_load_rows(u32 dst, const TMap *map, int k, int row, int rows, u32 bar, bool shared) {
	if (MC && shared) {
		const int r = wg_rank(), h = rows / 2;
		tma_load_mc(dst + (u32)(r * h * 128), map, k, row + r * h, bar);
	} else {
		tma_load(dst, map, k, row, bar);
	}
}

__device__ __forceinline__ void tma_prefetch(const TMap *map) {
	asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<u64>(map)) : "memory");
}

__device__ __forceinline__ void wg_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wg_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N> __device__ __forceinline__ void wg_wait() {
	asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// fence_reg keeps the compiler from moving accesses of r across it (the
// wgmma accumulators are written asynchronously).
__device__ __forceinline__ void fence_reg(float &r) { asm volatile("" : "+f"(r)::"memory"); }

// sdesc is the wgmma matrix descriptor of a K-major operand at shared address
// addr in the 128-byte swizzled layout TMA wrote: rows of 128 bytes, 8-row
// groups 1024 bytes apart (stride byte offset), leading byte offset unused
// (encoded 1), swizzle mode 1 (128 B) in bits 62–63. Advancing addr by 32
// bytes selects the next k16 slice of the same rows: the hardware applies the
// swizzle to the computed addresses, as TMA did when writing.
__device__ __forceinline__ u64 sdesc(u32 addr) {
	return (u64)((addr & 0x3FFFF) >> 4) | ((u64)1 << 16) | ((u64)(1024 >> 4) << 32) | ((u64)1 << 62);
}

// BEGIN GENERATED wgmma wrappers (builtin/wgmma_ops.go; do not edit)
#if BN == 8
__device__ __forceinline__ void wgmma(float *d, u64 da, u64 db) {
	asm volatile("wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {"
		"%0, %1, %2, %3"
		"}, %4, %5, 1, 1, 1, 0, 0;\n"
		: "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
		: "l"(da), "l"(db)
		: "memory");
}
#endif
#if BN == 16
__device__ __forceinline__ void wgmma(float *d, u64 da, u64 db) {
	asm volatile("wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 {"
		"%0, %1, %2, %3, %4, %5, %6, %7"
		"}, %8, %9, 1, 1, 1, 0, 0;\n"
		: "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
		: "l"(da), "l"(db)
		: "memory");
}
#endif
#if BN == 24
__device__ __forceinline__ void wgmma(float *d, u64 da, u64 db) {
	asm volatile("wgmma.mma_async.sync.aligned.m64n24k16.f32.f16.f16 {"
		"%0, %1, %2, %3, %4, %5, %6, %7,"
		"%8, %9, %10, %11"
		"}, %12, %13, 1, 1, 1, 0, 0;\n"
		: "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
		 "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11])
		: "l"(da), "l"(db)
		: "memory");
}
#endif
#if BN == 32
__device__ __forceinline__ void wgmma(float *d, u64 da, u64 db) {
	asm volatile("wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16 {"
		"%0, %1, %2, %3, %4, %5, %6, %7,"
		"%8, %9, %10, %11, %12, %13, %14, %15"
		"}, %16, %17, 1, 1, 1, 0, 0;\n"
		: "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
		 "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
		: "l"(da), "l"(db)
		: "memory");
}
#endif
#if BN == 40
__device__ __forceinline__ void wgmma(float *d, u64 da, u64 db) {
	asm volatile("wgmma.mma_async.sync.aligned.m64n40k16.f32.f16.f16 {"
		"%0, %1, %2, %3, %4, %5, %6, %7,"
		"%8, %9, %10, %11, %12, %13, %14, %15,"
		"%16, %17, %18, %19"
		"}, %20, %21, 1, 1, 1, 0, 0;\n"
		: "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
		 "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
		 "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19])
		: "l"(da), "l"(db)
		: "memory");
}
#endif
#if BN == 48
__device__ __forceinline__ void wgmma(float *d, u64 da, u64 db) {
	asm volatile("wgmma.mma_async.sync.aligned.m64n48k16.f32.f16.f16 {"
		"%0, %1, %2, %3, %4, %5, %6, %7,"
		"%8, %9, %10, %11, %12, %13, %14, %15,"
		"%16, %17, %18, %19, %20, %21, %22, %23"
		"}, %24, %25, 1, 1, 1, 0, 0;\n"
		: "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
		 "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
		 "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23])
		: "l"(da), "l"(db)
		: "memory");
}
#endif
#if BN == 56
__device__ __forceinline__ void wgmma(float *d, u64 da, u64 db) {
	asm volatile("wgmma.mma_async.sync.aligned.m64n56k16.f32.f16.f16 {"
		"%0, %1, %2, %3, %4, %5, %6, %7,"
		"%8, %9, %10, %11, %12, %13, %14, %15,"
		"%16, %17, %18, %19, %20, %21, %22, %23,"
		"%24, %25, %26, %27"
		"}, %28, %29, 1, 1, 1, 0, 0;\n"
		: "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
		 "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
		 "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
		 "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27])
		: "l"(da), "l"(db)
		: "memory");
}
#endif
#if BN == 64
__device__ __forceinline__ void wgmma(float *d, u64 da, u64 db) {
	asm volatile("wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {"
		"%0, %1, %2, %3, %4, %5, %6, %7,"
		"%8, %9, %10, %11, %12, %13, %14, %15,"
		"%16, %17, %18, %19, %20, %21, %22, %23,"
		"%24, %25, %26, %27, %28, %29, %30, %31"
		"}, %32, %33, 1, 1, 1, 0, 0;\n"
		: "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
		 "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
		 "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
		 "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
		: "l"(da), "l"(db)
		: "memory");
}
#endif
#if BN == 72
__device__ __forceinline__ void wgmma(float *d, u64 da, u64 db) {
	asm volatile("wgmma.mma_async.sync.aligned.m64n72k16.f32.f16.f16 {"
		"%0, %1, %2, %3, %4, %5, %6, %7,"
		"%8, %9, %10, %11, %12, %13, %14, %15,"
		"%16, %17, %18, %19, %20, %21, %22, %23,"
		"%24, %25, %26, %27, %28, %29, %30, %31,"
		"%32, %33, %34, %35"
		"}, %36, %37, 1, 1, 1, 0, 0;\n"
		: "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
		 "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
		 "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
		 "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
		 "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35])
		: "l"(da), "l"(db)
		: "memory");
}
#endif
#if BN == 80
__device__ __forceinline__ void wgmma(float *d, u64 da, u64 db) {
	asm volatile("wgmma.mma_async.sync.aligned.m64n80k16.f32.f16.f16 {"
		"%0, %1, %2, %3, %4, %5, %6, %7,"
		"%8, %9, %10, %11, %12, %13, %14, %15,"
		"%16, %17, %18, %19, %20, %21, %22, %23,"
		"%24, %25, %26, %27, %28, %29, %30, %31,"
		"%32, %33, %34, %35, %36, %37, %38, %39"
		"}, %40, %41, 1, 1, 1, 0, 0;\n"
		: "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
		 "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
		 "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
		 "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
		 "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39])
		: "l"(da), "l"(db)
		: "memory");
}
#endif
#if BN == 88
__device__ __forceinline__ void wgmma(float *d, u64 da, u64 db) {
	asm volatile("wgmma.mma_async.sync.aligned.m64n88k16.f32.f16.f16 {"
		"%0, %1, %2, %3, %4, %5, %6, %7,"
		"%8, %9, %10, %11, %12, %13, %14, %15,"
		"%16, %17, %18, %19, %20, %21, %22, %23,"
		"%24, %25, %26, %27, %28, %29, %30, %31,"
		"%32, %33, %34, %35, %36, %37, %38, %39,"
		"%40, %41, %42, %43"
		"}, %44, %45, 1, 1, 1, 0, 0;\n"
		: "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
		 "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
		 "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
		 "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
		 "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
		 "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43])
		: "l"(da), "l"(db)
		: "memory");
}
#endif
#if BN == 96
__device__ __forceinline__ void wgmma(float *d, u64 da, u64 db) {
	asm volatile("wgmma.mma_async.sync.aligned.m64n96k16.f32.f16.f16 {"
		"%0, %1, %2, %3, %4, %5, %6, %7,"
		"%8, %9, %10, %11, %12, %13, %14, %15,"
		"%16, %17, %18, %19, %20, %21, %22, %23,"
		"%24, %25, %26, %27, %28, %29, %30, %31,"
		"%32, %33, %34, %35, %36, %37, %38, %39,"
		"%40, %41, %42, %43, %44, %45, %46, %47"
		"}, %48, %49, 1, 1, 1, 0, 0;\n"
		: "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
		 "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
		 "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
		 "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
		 "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
		 "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47])
		: "l"(da), "l"(db)
		: "memory");
}
#endif
#if BN == 104
__device__ __forceinline__ void wgmma(float *d, u64 da, u64 db) {
	asm volatile("wgmma.mma_async.sync.aligned.m64n104k16.f32.f16.f16 {"
		"%0, %1, %2, %3, %4, %5, %6, %7,"
		"%8, %9, %10, %11, %12, %13, %14, %15,"
		"%16, %17, %18, %19, %20, %21, %22, %23,"
		"%24, %25, %26, %27, %28, %29, %30, %31,"
		"%32, %33, %34, %35, %36, %37, %38, %39,"
		"%40, %41, %42, %43, %44, %45, %46, %47,"
		"%48, %49, %50, %51"
		"}, %52, %53, 1, 1, 1, 0, 0;\n"
		: "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
		 "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
		 "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
		 "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
		 "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
		 "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
		 "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51])
		: "l"(da), "l"(db)
		: "memory");
}
#endif
#if BN == 112
__device__ __forceinline__ void wgmma(float *d, u64 da, u64 db) {
	asm volatile("wgmma.mma_async.sync.aligned.m64n112k16.f32.f16.f16 {"
		"%0, %1, %2, %3, %4, %5, %6, %7,"
		"%8, %9, %10, %11, %12, %13, %14, %15,"
		"%16, %17, %18, %19, %20, %21, %22, %23,"
		"%24, %25, %26, %27, %28, %29, %30, %31,"
		"%32, %33, %34, %35, %36, %37, %38, %39,"
		"%40, %41, %42, %43, %44, %45, %46, %47,"
		"%48, %49, %50, %51, %52, %53, %54, %55"
		"}, %56, %57, 1, 1, 1, 0, 0;\n"
		: "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
		 "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
		 "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
		 "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
		 "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
		 "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
		 "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55])
		: "l"(da), "l"(db)
		: "memory");
}
#endif
#if BN == 120
__device__ __forceinline__ void wgmma(float *d, u64 da, u64 db) {
	asm volatile("wgmma.mma_async.sync.aligned.m64n120k16.f32.f16.f16 {"
		"%0, %1, %2, %3, %4, %5, %6, %7,"
		"%8, %9, %10, %11, %12, %13, %14, %15,"
		"%16, %17, %18, %19, %20, %21, %22, %23,"
		"%24, %25, %26, %27, %28, %29, %30, %31,"
		"%32, %33, %34, %35, %36, %37, %38, %39,"
		"%40, %41, %42, %43, %44, %45, %46, %47,"
		"%48, %49, %50, %51, %52, %53, %54, %55,"
		"%56, %57, %58, %59"
		"}, %60, %61, 1, 1, 1, 0, 0;\n"
		: "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
		 "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
		 "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
		 "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
		 "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
		 "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
		 "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
		 "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59])
		: "l"(da), "l"(db)
		: "memory");
}
#endif
#if BN == 128
__device__ __forceinline__ void wgmma(float *d, u64 da, u64 db) {
	asm volatile("wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {"
		"%0, %1, %2, %3, %4, %5, %6, %7,"
		"%8, %9, %10, %11, %12, %13, %14, %15,"
		"%16, %17, %18, %19, %20, %21, %22, %23,"
		"%24, %25, %26, %27, %28, %29, %30, %31,"
		"%32, %33, %34, %35, %36, %37, %38, %39,"
		"%40, %41, %42, %43, %44, %45, %46, %47,"
		"%48, %49, %50, %51, %52, %53, %54, %55,"
		"%56, %57, %58, %59, %60, %61, %62, %63"
		"}, %64, %65, 1, 1, 1, 0, 0;\n"
		: "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
		 "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
		 "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
		 "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
		 "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
		 "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
		 "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
		 "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
		: "l"(da), "l"(db)
		: "memory");
}
#endif
#if BN == 136
__device__ __forceinline__ void wgmma(float *d, u64 da, u64 db) {
	asm volatile("wgmma.mma_async.sync.aligned.m64n136k16.f32.f16.f16 {"
		"%0, %1, %2, %3, %4, %5, %6, %7,"
		"%8, %9, %10, %11, %12, %13, %14, %15,"
		"%16, %17, %18, %19, %20, %21, %22, %23,"
		"%24, %25, %26, %27, %28, %29, %30, %31,"
		"%32, %33, %34, %35, %36, %37, %38, %39,"
		"%40, %41, %42, %43, %44, %45, %46, %47,"
		"%48, %49, %50, %51, %52, %53, %54, %55,"
		"%56, %57, %58, %59, %60, %61, %62, %63,"
		"%64, %65, %66, %67"
		"}, %68, %69, 1, 1, 1, 0, 0;\n"
		: "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
		 "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
		 "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
		 "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
		 "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
		 "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
		 "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
		 "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
		 "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67])
		: "l"(da), "l"(db)
		: "memory");
}
#endif
#if BN == 144
__device__ __forceinline__ void wgmma(float *d, u64 da, u64 db) {
	asm volatile("wgmma.mma_async.sync.aligned.m64n144k16.f32.f16.f16 {"
		"%0, %1, %2, %3, %4, %5, %6, %7,"
		"%8, %9, %10, %11, %12, %13, %14, %15,"
		"%16, %17, %18, %19, %20, %21, %22, %23,"
		"%24, %25, %26, %27, %28, %29, %30, %31,"
		"%32, %33, %34, %35, %36, %37, %38, %39,"
		"%40, %41, %42, %43, %44, %45, %46, %47,"
		"%48, %49, %50, %51, %52, %53, %54, %55,"
		"%56, %57, %58, %59, %60, %61, %62, %63,"
		"%64, %65, %66, %67, %68, %69, %70, %71"
		"}, %72, %73, 1, 1, 1, 0, 0;\n"
		: "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
		 "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
		 "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
		 "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
		 "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
		 "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
		 "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
		 "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
		 "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71])
		: "l"(da), "l"(db)
		: "memory");
}
#endif
#if BN == 152
__device__ __forceinline__ void wgmma(float *d, u64 da, u64 db) {
	asm volatile("wgmma.mma_async.sync.aligned.m64n152k16.f32.f16.f16 {"
		"%0, %1, %2, %3, %4, %5, %6, %7,"
		"%8, %9, %10, %11, %12, %13, %14, %15,"
		"%16, %17, %18, %19, %20, %21, %22, %23,"
		"%24, %25, %26, %27, %28, %29, %30, %31,"
		"%32, %33, %34, %35, %36, %37, %38, %39,"
		"%40, %41, %42, %43, %44, %45, %46, %47,"
		"%48, %49, %50, %51, %52, %53, %54, %55,"
		"%56, %57, %58, %59, %60, %61, %62, %63,"
		"%64, %65, %66, %67, %68, %69, %70, %71,"
		"%72, %73, %74, %75"
		"}, %76, %77, 1, 1, 1, 0, 0;\n"
		: "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
		 "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
		 "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
		 "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
		 "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
		 "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
		 "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
		 "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
		 "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
		 "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75])
		: "l"(da), "l"(db)
		: "memory");
}
#endif
#if BN == 160
__device__ __forceinline__ void wgmma(float *d, u64 da, u64 db) {
	asm volatile("wgmma.mma_async.sync.aligned.m64n160k16.f32.f16.f16 {"
		"%0, %1, %2, %3, %4, %5, %6, %7,"
		"%8, %9, %10, %11, %12, %13, %14, %15,"
		"%16, %17, %18, %19, %20, %21, %22, %23,"
		"%24, %25, %26, %27, %28, %29, %30, %31,"
		"%32, %33, %34, %35, %36, %37, %38, %39,"
		"%40, %41, %42, %43, %44, %45, %46, %47,"
		"%48, %49, %50, %51, %52, %53, %54, %55,"
		"%56, %57, %58, %59, %60, %61, %62, %63,"
		"%64, %65, %66, %67, %68, %69, %70, %71,"
		"%72, %73, %74, %75, %76, %77, %78, %79"
		"}, %80, %81, 1, 1, 1, 0, 0;\n"
		: "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
		 "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
		 "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
		 "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
		 "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
		 "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
		 "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
		 "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
		 "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
		 "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79])
		: "l"(da), "l"(db)
		: "memory");
}
#endif
#if BN == 168
__device__ __forceinline__ void wgmma(float *d, u64 da, u64 db) {
	asm volatile("wgmma.mma_async.sync.aligned.m64n168k16.f32.f16.f16 {"
		"%0, %1, %2, %3, %4, %5, %6, %7,"
		"%8, %9, %10, %11, %12, %13, %14, %15,"
		"%16, %17, %18, %19, %20, %21, %22, %23,"
		"%24, %25, %26, %27, %28, %29, %30, %31,"
		"%32, %33, %34, %35, %36, %37, %38, %39,"
		"%40, %41, %42, %43, %44, %45, %46, %47,"
		"%48, %49, %50, %51, %52, %53, %54, %55,"
		"%56, %57, %58, %59, %60, %61, %62, %63,"
		"%64, %65, %66, %67, %68, %69, %70, %71,"
		"%72, %73, %74, %75, %76, %77, %78, %79,"
		"%80, %81, %82, %83"
		"}, %84, %85, 1, 1, 1, 0, 0;\n"
		: "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
		 "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
		 "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
		 "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
		 "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
		 "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
		 "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
		 "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
		 "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
		 "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
		 "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83])
		: "l"(da), "l"(db)
		: "memory");
}
#endif
#if BN == 176
__device__ __forceinline__ void wgmma(float *d, u64 da, u64 db) {
	asm volatile("wgmma.mma_async.sync.aligned.m64n176k16.f32.f16.f16 {"
		"%0, %1, %2, %3, %4, %5, %6, %7,"
		"%8, %9, %10, %11, %12, %13, %14, %15,"
		"%16, %17, %18, %19, %20, %21, %22, %23,"
		"%24, %25, %26, %27, %28, %29, %30, %31,"
		"%32, %33, %34, %35, %36, %37, %38, %39,"
		"%40, %41, %42, %43, %44, %45, %46, %47,"
		"%48, %49, %50, %51, %52, %53, %54, %55,"
		"%56, %57, %58, %59, %60, %61, %62, %63,"
		"%64, %65, %66, %67, %68, %69, %70, %71,"
		"%72, %73, %74, %75, %76, %77, %78, %79,"
		"%80, %81, %82, %83, %84, %85, %86, %87"
		"}, %88, %89, 1, 1, 1, 0, 0;\n"
		: "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
		 "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
		 "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
		 "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
		 "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
		 "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
		 "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
		 "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
		 "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
		 "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
		 "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87])
		: "l"(da), "l"(db)
		: "memory");
}
#endif
#if BN == 184
__device__ __forceinline__ void wgmma(float *d, u64 da, u64 db) {
	asm volatile("wgmma.mma_async.sync.aligned.m64n184k16.f32.f16.f16 {"
		"%0, %1, %2, %3, %4, %5, %6, %7,"
		"%8, %9, %10, %11, %12, %13, %14, %15,"
		"%16, %17, %18, %19, %20, %21, %22, %23,"
		"%24, %25, %26, %27, %28, %29, %30, %31,"
		"%32, %33, %34, %35, %36, %37, %38, %39,"
		"%40, %41, %42, %43, %44, %45, %46, %47,"
		"%48, %49, %50, %51, %52, %53, %54, %55,"
		"%56, %57, %58, %59, %60, %61, %62, %63,"
		"%64, %65, %66, %67, %68, %69, %70, %71,"
		"%72, %73, %74, %75, %76, %77, %78, %79,"
		"%80, %81, %82, %83, %84, %85, %86, %87,"
		"%88, %89, %90, %91"
		"}, %92, %93, 1, 1, 1, 0, 0;\n"
		: "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
		 "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
		 "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
		 "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
		 "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
		 "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
		 "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
		 "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
		 "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
		 "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
		 "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
		 "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91])
		: "l"(da), "l"(db)
		: "memory");
}
#endif
#if BN == 192
__device__ __forceinline__ void wgmma(float *d, u64 da, u64 db) {
	asm volatile("wgmma.mma_async.sync.aligned.m64n192k16.f32.f16.f16 {"
		"%0, %1, %2, %3, %4, %5, %6, %7,"
		"%8, %9, %10, %11, %12, %13, %14, %15,"
		"%16, %17, %18, %19, %20, %21, %22, %23,"
		"%24, %25, %26, %27, %28, %29, %30, %31,"
		"%32, %33, %34, %35, %36, %37, %38, %39,"
		"%40, %41, %42, %43, %44, %45, %46, %47,"
		"%48, %49, %50, %51, %52, %53, %54, %55,"
		"%56, %57, %58, %59, %60, %61, %62, %63,"
		"%64, %65, %66, %67, %68, %69, %70, %71,"
		"%72, %73, %74, %75, %76, %77, %78, %79,"
		"%80, %81, %82, %83, %84, %85, %86, %87,"
		"%88, %89, %90, %91, %92, %93, %94, %95"
		"}, %96, %97, 1, 1, 1, 0, 0;\n"
		: "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
		 "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
		 "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
		 "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
		 "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
		 "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
		 "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
		 "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
		 "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
		 "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
		 "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
		 "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95])
		: "l"(da), "l"(db)
		: "memory");
}
#endif
#if BN == 200
__device__ __forceinline__ void wgmma(float *d, u64 da, u64 db) {
	asm volatile("wgmma.mma_async.sync.aligned.m64n200k16.f32.f16.f16 {"
		"%0, %1, %2, %3, %4, %5, %6, %7,"
		"%8, %9, %10, %11, %12, %13, %14, %15,"
		"%16, %17, %18, %19, %20, %21, %22, %23,"
		"%24, %25, %26, %27, %28, %29, %30, %31,"
		"%32, %33, %34, %35, %36, %37, %38, %39,"
		"%40, %41, %42, %43, %44, %45, %46, %47,"
		"%48, %49, %50, %51, %52, %53, %54, %55,"
		"%56, %57, %58, %59, %60, %61, %62, %63,"
		"%64, %65, %66, %67, %68, %69, %70, %71,"
		"%72, %73, %74, %75, %76, %77, %78, %79,"
		"%80, %81, %82, %83, %84, %85, %86, %87,"
		"%88, %89, %90, %91, %92, %93, %94, %95,"
		"%96, %97, %98, %99"
		"}, %100, %101, 1, 1, 1, 0, 0;\n"
		: "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
		 "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
		 "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
		 "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
		 "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
		 "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
		 "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
		 "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
		 "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
		 "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
		 "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
		 "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
		 "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99])
		: "l"(da), "l"(db)
		: "memory");
}
#endif
#if BN == 208
__device__ __forceinline__ void wgmma(float *d, u64 da, u64 db) {
	asm volatile("wgmma.mma_async.sync.aligned.m64n208k16.f32.f16.f16 {"
		"%0, %1, %2, %3, %4, %5, %6, %7,"
		"%8, %9, %10, %11, %12, %13, %14, %15,"
		"%16, %17, %18, %19, %20, %21, %22, %23,"
		"%24, %25, %26, %27, %28, %29, %30, %31,"
		"%32, %33, %34, %35, %36, %37, %38, %39,"
		"%40, %41, %42, %43, %44, %45, %46, %47,"
		"%48, %49, %50, %51, %52, %53, %54, %55,"
		"%56, %57, %58, %59, %60, %61, %62, %63,"
		"%64, %65, %66, %67, %68, %69, %70, %71,"
		"%72, %73, %74, %75, %76, %77, %78, %79,"
		"%80, %81, %82, %83, %84, %85, %86, %87,"
		"%88, %89, %90, %91, %92, %93, %94, %95,"
		"%96, %97, %98, %99, %100, %101, %102, %103"
		"}, %104, %105, 1, 1, 1, 0, 0;\n"
		: "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
		 "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
		 "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
		 "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
		 "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
		 "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
		 "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
		 "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
		 "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
		 "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
		 "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
		 "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
		 "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103])
		: "l"(da), "l"(db)
		: "memory");
}
#endif
#if BN == 216
__device__ __forceinline__ void wgmma(float *d, u64 da, u64 db) {
	asm volatile("wgmma.mma_async.sync.aligned.m64n216k16.f32.f16.f16 {"
		"%0, %1, %2, %3, %4, %5, %6, %7,"
		"%8, %9, %10, %11, %12, %13, %14, %15,"
		"%16, %17, %18, %19, %20, %21, %22, %23,"
		"%24, %25, %26, %27, %28, %29, %30, %31,"
		"%32, %33, %34, %35, %36, %37, %38, %39,"
		"%40, %41, %42, %43, %44, %45, %46, %47,"
		"%48, %49, %50, %51, %52, %53, %54, %55,"
		"%56, %57, %58, %59, %60, %61, %62, %63,"
		"%64, %65, %66, %67, %68, %69, %70, %71,"
		"%72, %73, %74, %75, %76, %77, %78, %79,"
		"%80, %81, %82, %83, %84, %85, %86, %87,"
		"%88, %89, %90, %91, %92, %93, %94, %95,"
		"%96, %97, %98, %99, %100, %101, %102, %103,"
		"%104, %105, %106, %107"
		"}, %108, %109, 1, 1, 1, 0, 0;\n"
		: "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
		 "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
		 "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
		 "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
		 "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
		 "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
		 "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
		 "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
		 "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
		 "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
		 "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
		 "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
		 "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
		 "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107])
		: "l"(da), "l"(db)
		: "memory");
}
#endif
#if BN == 224
__device__ __forceinline__ void wgmma(float *d, u64 da, u64 db) {
	asm volatile("wgmma.mma_async.sync.aligned.m64n224k16.f32.f16.f16 {"
		"%0, %1, %2, %3, %4, %5, %6, %7,"
		"%8, %9, %10, %11, %12, %13, %14, %15,"
		"%16, %17, %18, %19, %20, %21, %22, %23,"
		"%24, %25, %26, %27, %28, %29, %30, %31,"
		"%32, %33, %34, %35, %36, %37, %38, %39,"
		"%40, %41, %42, %43, %44, %45, %46, %47,"
		"%48, %49, %50, %51, %52, %53, %54, %55,"
		"%56, %57, %58, %59, %60, %61, %62, %63,"
		"%64, %65, %66, %67, %68, %69, %70, %71,"
		"%72, %73, %74, %75, %76, %77, %78, %79,"
		"%80, %81, %82, %83, %84, %85, %86, %87,"
		"%88, %89, %90, %91, %92, %93, %94, %95,"
		"%96, %97, %98, %99, %100, %101, %102, %103,"
		"%104, %105, %106, %107, %108, %109, %110, %111"
		"}, %112, %113, 1, 1, 1, 0, 0;\n"
		: "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
		 "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
		 "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
		 "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
		 "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
		 "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
		 "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
		 "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
		 "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
		 "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
		 "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
		 "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
		 "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
		 "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111])
		: "l"(da), "l"(db)
		: "memory");
}
#endif
#if BN == 232
__device__ __forceinline__ void wgmma(float *d, u64 da, u64 db) {
	asm volatile("wgmma.mma_async.sync.aligned.m64n232k16.f32.f16.f16 {"
		"%0, %1, %2, %3, %4, %5, %6, %7,"
		"%8, %9, %10, %11, %12, %13, %14, %15,"
		"%16, %17, %18, %19, %20, %21, %22, %23,"
		"%24, %25, %26, %27, %28, %29, %30, %31,"
		"%32, %33, %34, %35, %36, %37, %38, %39,"
		"%40, %41, %42, %43, %44, %45, %46, %47,"
		"%48, %49, %50, %51, %52, %53, %54, %55,"
		"%56, %57, %58, %59, %60, %61, %62, %63,"
		"%64, %65, %66, %67, %68, %69, %70, %71,"
		"%72, %73, %74, %75, %76, %77, %78, %79,"
		"%80, %81, %82, %83, %84, %85, %86, %87,"
		"%88, %89, %90, %91, %92, %93, %94, %95,"
		"%96, %97, %98, %99, %100, %101, %102, %103,"
		"%104, %105, %106, %107, %108, %109, %110, %111,"
		"%112, %113, %114, %115"
		"}, %116, %117, 1, 1, 1, 0, 0;\n"
		: "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
		 "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
		 "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
		 "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
		 "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
		 "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
		 "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
		 "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
		 "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
		 "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
		 "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
		 "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
		 "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
		 "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]),
		 "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115])
		: "l"(da), "l"(db)
		: "memory");
}
#endif
#if BN == 240
__device__ __forceinline__ void wgmma(float *d, u64 da, u64 db) {
	asm volatile("wgmma.mma_async.sync.aligned.m64n240k16.f32.f16.f16 {"
		"%0, %1, %2, %3, %4, %5, %6, %7,"
		"%8, %9, %10, %11, %12, %13, %14, %15,"
		"%16, %17, %18, %19, %20, %21, %22, %23,"
		"%24, %25, %26, %27, %28, %29, %30, %31,"
		"%32, %33, %34, %35, %36, %37, %38, %39,"
		"%40, %41, %42, %43, %44, %45, %46, %47,"
		"%48, %49, %50, %51, %52, %53, %54, %55,"
		"%56, %57, %58, %59, %60, %61, %62, %63,"
		"%64, %65, %66, %67, %68, %69, %70, %71,"
		"%72, %73, %74, %75, %76, %77, %78, %79,"
		"%80, %81, %82, %83, %84, %85, %86, %87,"
		"%88, %89, %90, %91, %92, %93, %94, %95,"
		"%96, %97, %98, %99, %100, %101, %102, %103,"
		"%104, %105, %106, %107, %108, %109, %110, %111,"
		"%112, %113, %114, %115, %116, %117, %118, %119"
		"}, %120, %121, 1, 1, 1, 0, 0;\n"
		: "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
		 "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
		 "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
		 "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
		 "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
		 "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
		 "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
		 "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
		 "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
		 "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
		 "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
		 "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
		 "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
		 "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]),
		 "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119])
		: "l"(da), "l"(db)
		: "memory");
}
#endif
#if BN == 248
__device__ __forceinline__ void wgmma(float *d, u64 da, u64 db) {
	asm volatile("wgmma.mma_async.sync.aligned.m64n248k16.f32.f16.f16 {"
		"%0, %1, %2, %3, %4, %5, %6, %7,"
		"%8, %9, %10, %11, %12, %13, %14, %15,"
		"%16, %17, %18, %19, %20, %21, %22, %23,"
		"%24, %25, %26, %27, %28, %29, %30, %31,"
		"%32, %33, %34, %35, %36, %37, %38, %39,"
		"%40, %41, %42, %43, %44, %45, %46, %47,"
		"%48, %49, %50, %51, %52, %53, %54, %55,"
		"%56, %57, %58, %59, %60, %61, %62, %63,"
		"%64, %65, %66, %67, %68, %69, %70, %71,"
		"%72, %73, %74, %75, %76, %77, %78, %79,"
		"%80, %81, %82, %83, %84, %85, %86, %87,"
		"%88, %89, %90, %91, %92, %93, %94, %95,"
		"%96, %97, %98, %99, %100, %101, %102, %103,"
		"%104, %105, %106, %107, %108, %109, %110, %111,"
		"%112, %113, %114, %115, %116, %117, %118, %119,"
		"%120, %121, %122, %123"
		"}, %124, %125, 1, 1, 1, 0, 0;\n"
		: "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
		 "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
		 "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
		 "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
		 "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
		 "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
		 "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
		 "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
		 "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
		 "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
		 "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
		 "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
		 "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
		 "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]),
		 "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),
		 "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123])
		: "l"(da), "l"(db)
		: "memory");
}
#endif
#if BN == 256
__device__ __forceinline__ void wgmma(float *d, u64 da, u64 db) {
	asm volatile("wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 {"
		"%0, %1, %2, %3, %4, %5, %6, %7,"
		"%8, %9, %10, %11, %12, %13, %14, %15,"
		"%16, %17, %18, %19, %20, %21, %22, %23,"
		"%24, %25, %26, %27, %28, %29, %30, %31,"
		"%32, %33, %34, %35, %36, %37, %38, %39,"
		"%40, %41, %42, %43, %44, %45, %46, %47,"
		"%48, %49, %50, %51, %52, %53, %54, %55,"
		"%56, %57, %58, %59, %60, %61, %62, %63,"
		"%64, %65, %66, %67, %68, %69, %70, %71,"
		"%72, %73, %74, %75, %76, %77, %78, %79,"
		"%80, %81, %82, %83, %84, %85, %86, %87,"
		"%88, %89, %90, %91, %92, %93, %94, %95,"
		"%96, %97, %98, %99, %100, %101, %102, %103,"
		"%104, %105, %106, %107, %108, %109, %110, %111,"
		"%112, %113, %114, %115, %116, %117, %118, %119,"
		"%120, %121, %122, %123, %124, %125, %126, %127"
		"}, %128, %129, 1, 1, 1, 0, 0;\n"
		: "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
		 "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
		 "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
		 "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
		 "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
		 "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
		 "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
		 "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
		 "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
		 "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
		 "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
		 "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
		 "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
		 "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]),
		 "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),
		 "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
		: "l"(da), "l"(db)
		: "memory");
}
#endif
// END GENERATED wgmma wrappers

__device__ __forceinline__ unsigned short f2h(float v) {
	unsigned short h;
	asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(v));
	return h;
}

// tile_of maps the t-th tile of the walk to its tile row bm and column bn.
__device__ __forceinline__ void tile_of(int t, int tilesM, int tilesN, int &bm, int &bn) {
#if RASTER == 0
	const int per = GROUP * tilesN, first = (t / per) * GROUP;
	const int gs = min(tilesM - first, GROUP), l = t % per;
	bm = first + l % gs;
	bn = l / gs;
#else
	const int per = GROUP * tilesM, first = (t / per) * GROUP;
	const int gs = min(tilesN - first, GROUP), l = t % per;
	bn = first + l % gs;
	bm = l / gs;
#endif
}

// A work unit is one tile and one K chunk: u = j·ntiles + t covers tile t
// (tile_of) and k-blocks [kb0, kb1) of chunk j (KSPLIT k-blocks each; the
// whole K when KSPLIT is 0).
struct Unit {
	int bm, bn, j, kb0, kb1;
};

//
// With MC, tilesM × tilesN is the pair grid (wg_kernel halves the tile rows
// or columns) and the CTA's rank picks its tile of the pair.
__device__ __forceinline__ Unit unit_of(int u, int tilesM, int tilesN, int ntiles, int nk) {
	Unit r;
	const int t = u % ntiles;
	r.j = u / ntiles;
	tile_of(t, tilesM, tilesN, r.bm, r.bn);
#if MC == 1
	r.bm = 2 * r.bm + wg_rank();
#elif MC == 2
	r.bn = 2 * r.bn + wg_rank();
#endif
#if KUNITS
	r.kb0 = r.j * KSPLIT;
	r.kb1 = min(nk, r.kb0 + KSPLIT);
#else
	r.kb0 = 0;
	r.kb1 = nk;
#endif
	return r;
}

// What the epilogue is told besides the accumulators: the unit, its index
// jj among the CTA's units (0, 1, ...), the consumer c, the warp and lane in
// the consumer warpgroup, and the addresses of the family's own barriers and
// shared memory.
struct EpiCtx {
	Unit w;
	int jj, c, warp, lane;
	u32 aux, extra;
	u32 stg; // EPI 1: this consumer's staging tile (0 otherwise)
	// WG_UNIT_SLOTS: the ring position (slot rs, phase parity rph) of the
	// unit's first slot of its own, and the ring's barriers and stages.
	int rs;
	u32 rph, fullBar, emptyBar, stages;
};

#if WG_UNIT_SLOTS
// wg_slot_wait returns the shared address of the unit's own ring slot i
// once the producer's copies into it completed.
__device__ __forceinline__ u32 wg_slot_wait(const EpiCtx &e, int i) {
	const int p = e.rs + i, s = p % NST;
	mbar_wait(e.fullBar + 8 * s, e.rph ^ (u32)((p / NST) & 1));
	return e.stages + (u32)(s * STAGE_BYTES);
}
// wg_slot_release: every lane of the warp has read slot i; release it.
__device__ __forceinline__ void wg_slot_release(const EpiCtx &e, int i) {
	__syncwarp();
	if (e.lane == 0)
		stage_release(e.emptyBar + 8 * ((e.rs + i) % NST));
}
#endif

// The staged epilogue (EPI 1; see the header). epi_off is the byte offset
// in a consumer's staging tile of the fp16 pair at row r (of the consumer's
// WGM rows) and even column col (of EPI_N): box col / EPI_BOXC, then the
// TMA swizzle of the box's EPI_ROWB-byte rows (bits 4.. of the offset XOR
// bits 7.., as many as a row has 16-byte chunks; boxes start on 1024-byte
// boundaries).
__device__ __forceinline__ u32 epi_off(int r, int col) {
	constexpr u32 SW = EPI_ROWB == 128 ? 7 : EPI_ROWB == 64 ? 3 : EPI_ROWB == 32 ? 1 : 0;
	const u32 o = (u32)(r * EPI_ROWB + (col % EPI_BOXC) * 2);
	return (u32)((col / EPI_BOXC) * EPI_BOXBYTES) + (o ^ (((o >> 7) & SW) << 4));
}

__device__ __forceinline__ void sts32(u32 a, u32 v) { asm volatile("st.shared.u32 [%0], %1;\n" ::"r"(a), "r"(v) : "memory"); }

// pack_h2 rounds two fp32 values to fp16 (f2h, RN) as one 32-bit pair, v0
// at the lower address.
__device__ __forceinline__ u32 pack_h2(float v0, float v1) { return (u32)f2h(v0) | ((u32)f2h(v1) << 16); }

// epi_bar syncs the 128 threads of consumer c (named barrier 1 + c; 0 is
// __syncthreads).
__device__ __forceinline__ void epi_bar(int c) { asm volatile("bar.sync %0, 128;\n" ::"r"(1 + c) : "memory"); }

// tma_store copies the box at shared address src to (c0, c1) of map's
// tensor (elements past its dims are not written), in the thread's current
// bulk group.
__device__ __forceinline__ void tma_store(const TMap *map, u32 src, int c0, int c1) {
	asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];\n" ::"l"(reinterpret_cast<u64>(map)), "r"(c0), "r"(c1),
		     "r"(src)
		     : "memory");
}

// epi_begin: before a consumer writes its staging tile, its thread 0 waits
// until the bulk stores of its previous tile have read it, then the
// consumer's threads sync.
__device__ __forceinline__ void epi_begin(const EpiCtx &e) {
	if (e.warp == 0 && e.lane == 0)
		asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
	epi_bar(e.c);
}

// epi_end: after writing the staging tile, every thread makes its shared
// stores visible to the async proxy, the consumer syncs, and its thread 0
// stores the EPI_NBOX boxes at output column col0 + b·EPI_BOXC, row row0
// (the tile's first) as one bulk group.
__device__ __forceinline__ void epi_end(const EpiCtx &e, const TMap *map, int col0, int row0) {
	asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
	epi_bar(e.c);
	if (e.warp == 0 && e.lane == 0) {
#pragma unroll
		for (int b = 0; b < EPI_NBOX; b++)
			tma_store(map, e.stg + (u32)(b * EPI_BOXBYTES), col0 + b * EPI_BOXC, row0);
		asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
	}
}

// wg_zero zeroes an accumulator set (fence_reg: the zeros are not moved
// past the next wgmma, which reads them).
__device__ __forceinline__ void wg_zero(float (&acc)[MW][BN / 2]) {
#pragma unroll
	for (int i = 0; i < MW; i++)
#pragma unroll
		for (int j = 0; j < BN / 2; j++) {
			acc[i][j] = 0.0f;
			fence_reg(acc[i][j]);
		}
}

// wg_kblock issues one k-block into acc as one wgmma group: the BK/16 k16
// steps of every 64-row block, A's rows at shared address a, B's at b (both
// 128-byte swizzled rows of 64 k). All four steps run also past K in the
// last stage: TMA filled both operands there with zeros, and a step of zero
// products leaves the accumulator's bits as they are (acc + (+0) = acc; the
// accumulator starts at +0 and round-to-nearest addition never makes -0
// from it). A condition here would make ptxas inject warpgroup arrives and
// serialise the wgmma (C7519/C7520).
__device__ __forceinline__ void wg_kblock(float (&acc)[MW][BN / 2], u32 a, u32 b) {
	wg_fence();
#pragma unroll
	for (int kk = 0; kk < BK / 16; kk++)
#pragma unroll
		for (int i = 0; i < MW; i++)
#if WG_MMA_N == BN
			wgmma(acc[i], sdesc(a + (u32)(i * 64 * 128 + kk * 32)), sdesc(b + (u32)(kk * 32)));
#else
#pragma unroll
			for (int pt = 0; pt < BN / WG_MMA_N; pt++)
				wgmma_part(acc[i] + pt * (WG_MMA_N / 2), sdesc(a + (u32)(i * 64 * 128 + kk * 32)), sdesc(b + (u32)(pt * WG_MMA_N * 128 + kk * 32)));
#endif
	wg_commit();
}

// wg_settle waits for every outstanding wgmma group of the thread and keeps
// the compiler from reading acc before that (the accumulators are written
// asynchronously).
__device__ __forceinline__ void wg_settle(float (&acc)[MW][BN / 2]) {
	wg_wait<0>();
#pragma unroll
	for (int i = 0; i < MW; i++)
#pragma unroll
		for (int j = 0; j < BN / 2; j++)
			fence_reg(acc[i][j]);
}

// wg_consume is the work of consumer warpgroup threadIdx.x/128 - 1: the same
// walk of units and stages as the producer; per unit the k loop, then
// epi(acc, ctx).
template <class Epi>
__device__ __forceinline__ void wg_consume(int tilesM, int tilesN, int ntiles, int nunits, int nk, u32 fullBar, u32 emptyBar, u32 turnBar, u32 stages,
					   u32 aux, u32 extra, const Epi &epi) {
	const int c = threadIdx.x / 128 - 1, tid = threadIdx.x % 128, warp = tid / 32, lane = tid % 32;
	float acc[MW][BN / 2];
#if KFOLD
	float tot[MW][BN / 2];
#endif
	int s = 0;
	u32 ph = 0;
	// pos counts the stages of the ring used by the CTA's units before this
	// one (the producer fills them in the same order).
	int pos = 0;
	int jj = 0;
#if PINGPONG
	// Consumer c takes the CTA's units jj = c, c+2, c+4, ...; the two take
	// turns on the tensor cores: c waits until the other has issued its
	// whole k loop (turnBar[c]), so the stages of unit jj are the next ones
	// in the ring and no barrier is a full phase behind.
	u32 turnPh = 0;
	for (int u = blockIdx.x / CL; u < nunits; u += gridDim.x / CL, jj++) {
		const Unit w = unit_of(u, tilesM, tilesN, ntiles, nk);
		if ((jj & 1) != c) {
			pos += w.kb1 - w.kb0 + WG_UNIT_SLOTS;
			continue;
		}
		if (jj > 0) {
			mbar_wait(turnBar + 8 * c, turnPh);
			turnPh ^= 1;
		}
#else
	for (int u = blockIdx.x / CL; u < nunits; u += gridDim.x / CL, jj++) {
		const Unit w = unit_of(u, tilesM, tilesN, ntiles, nk);
#endif
		s = pos % NST;
		ph = (pos / NST) & 1;
		pos += w.kb1 - w.kb0 + WG_UNIT_SLOTS;
		int prev = -1;
#if KFOLD
		// The tile's K chunks in order, each from zero, folded into tot.
		for (int kc = w.kb0; kc < w.kb1; kc += KSPLIT) {
			const int kend = min(w.kb1, kc + KSPLIT);
#else
		{
			const int kc = w.kb0, kend = w.kb1;
#endif
		wg_zero(acc);
		for (int kb = kc; kb < kend; kb++) {
			mbar_wait(fullBar + 8 * s, ph);
#if WG_A_RES
			const u32 a = extra + (u32)(WG_A_RES_OFF + (kb - w.kb0) * A_BYTES + c * WGM * 128);
#else
			const u32 a = stages + (u32)(s * STAGE_BYTES + (PINGPONG ? 0 : c * WGM * 128));
#endif
			wg_kblock(acc, a, stages + (u32)(s * STAGE_BYTES + A_STAGE));
			// The group before this one has completed: its stage is free.
			wg_wait<1>();
			if (prev >= 0) {
				__syncwarp();
				if (lane == 0)
					stage_release(emptyBar + 8 * prev);
			}
			prev = s;
			if (++s == NST) {
				s = 0;
				ph ^= 1;
			}
		}
#if KFOLD
		// The chunk is complete: release its last stage, fold it.
		wg_settle(acc);
		if (prev >= 0) {
			__syncwarp();
			if (lane == 0)
				stage_release(emptyBar + 8 * prev);
		}
		prev = -1;
		if (kc == w.kb0) {
#pragma unroll
			for (int i = 0; i < MW; i++)
#pragma unroll
				for (int j = 0; j < BN / 2; j++)
					tot[i][j] = acc[i][j];
		} else {
#pragma unroll
			for (int i = 0; i < MW; i++)
#pragma unroll
				for (int j = 0; j < BN / 2; j++)
					tot[i][j] = tot[i][j] + acc[i][j];
		}
#endif
		}
#if PINGPONG
		// The other consumer's turn: its k loop overlaps this epilogue.
		__syncwarp();
		if (lane == 0)
			mbar_arrive(turnBar + 8 * (1 - c));
#endif
		wg_settle(acc);
		if (prev >= 0) {
			__syncwarp();
			if (lane == 0)
				stage_release(emptyBar + 8 * prev);
		}
		const EpiCtx ctx = {w, jj, c, warp, lane, aux, extra, EPI ? extra + (u32)(WG_EXTRA_BYTES + c * EPI_STG) : 0u, s, ph, fullBar, emptyBar, stages};
#if KFOLD
		epi(tot, ctx);
#else
		epi(acc, ctx);
#endif
	}
#if EPI
	// The last tile's bulk stores: complete before the CTA (and its shared
	// memory) goes away.
	if (tid == 0)
		asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory");
#endif
}

#if WG_OVL
// wg_ovl_issue waits for ring stage s (phase ph) and issues k-block kbu
// (of the unit) from it into acc as one wgmma group.
__device__ __forceinline__ void wg_ovl_issue(float (&acc)[MW][BN / 2], u32 fullBar, u32 stages, u32 extra, int c, int s, u32 ph, int kbu) {
	mbar_wait(fullBar + 8 * s, ph);
#if WG_A_RES
	const u32 a = extra + (u32)(WG_A_RES_OFF + kbu * A_BYTES + c * WGM * 128);
#else
	const u32 a = stages + (u32)(s * STAGE_BYTES + c * WGM * 128);
	(void)extra;
	(void)kbu;
#endif
	wg_kblock(acc, a, stages + (u32)(s * STAGE_BYTES + A_STAGE));
}
// The consumer's ring cursor and the stage whose release is pending.
struct OvlCur {
	int s, prev;
	u32 ph;
	__device__ __forceinline__ void advance() {
		prev = s;
		if (++s == NST) {
			s = 0;
			ph ^= 1;
		}
	}
	__device__ __forceinline__ void release(u32 emptyBar, int lane) {
		if (prev >= 0) {
			__syncwarp();
			if (lane == 0)
				stage_release(emptyBar + 8 * prev);
		}
		prev = -1;
	}
};
// wg_ovl_unit runs k-blocks [from, kb1) of unit w into acc (from > 0: the
// first were issued before the previous epilogue), then, if the CTA has a
// next unit, waits for the unit's own groups (wait_group 0), zeroes nacc,
// issues the next unit's first n = min(WG_OVL, its k-blocks) k-blocks into
// it and runs the epilogue of acc while they run; nfrom is n (0 without a
// next unit). With n = 2 the second is issued without a wait (two groups
// in flight during the epilogue), and its step's wait and release follow
// the epilogue.
template <class Epi>
__device__ __forceinline__ void wg_ovl_unit(float (&acc)[MW][BN / 2], float (&nacc)[MW][BN / 2], const Unit &w, int jj, int u, int from, int &nfrom,
					    int tilesM, int tilesN, int ntiles, int nunits, int nk, OvlCur &cur, u32 fullBar, u32 emptyBar, u32 stages,
					    u32 aux, u32 extra, int c, int warp, int lane, const Epi &epi) {
	for (int kb = w.kb0 + from; kb < w.kb1; kb++) {
		wg_ovl_issue(acc, fullBar, stages, extra, c, cur.s, cur.ph, kb - w.kb0);
		wg_wait<1>();
		cur.release(emptyBar, lane);
		cur.advance();
	}
	const int un = u + gridDim.x;
	nfrom = 0;
	if (un < nunits) {
		const Unit nw = unit_of(un, tilesM, tilesN, ntiles, nk);
		const int n = min(WG_OVL, nw.kb1 - nw.kb0);
		// The unit's groups complete and its last stage is released as
		// without OVL; the next set is zeroed with no group in flight
		// (ptxas serialises every wgmma of a kernel in which registers of
		// an accumulator set are written while a group is outstanding:
		// C7515).
		wg_settle(acc);
		cur.release(emptyBar, lane);
		wg_zero(nacc);
		// The next unit's first k-block (its stage is released by the next
		// step's wait), with n = 2 the second without a wait: the
		// epilogue, which only reads acc, runs under them.
		wg_ovl_issue(nacc, fullBar, stages, extra, c, cur.s, cur.ph, 0);
		cur.advance();
		int s1 = -1;
		if (n > 1) {
			wg_ovl_issue(nacc, fullBar, stages, extra, c, cur.s, cur.ph, 1);
			s1 = cur.s;
			if (++cur.s == NST) {
				cur.s = 0;
				cur.ph ^= 1;
			}
		}
		const EpiCtx ctx = {w, jj, c, warp, lane, aux, extra, 0u, cur.s, cur.ph, fullBar, emptyBar, stages};
		epi(acc, ctx);
		if (n > 1) {
			wg_wait<1>();
			cur.release(emptyBar, lane);
			cur.prev = s1;
		}
		nfrom = n;
		return;
	}
	wg_settle(acc);
	cur.release(emptyBar, lane);
	const EpiCtx ctx = {w, jj, c, warp, lane, aux, extra, 0u, cur.s, cur.ph, fullBar, emptyBar, stages};
	epi(acc, ctx);
}
// wg_consume_ovl is wg_consume with WG_OVL: units alternate between the
// two accumulator sets (the loop body takes two units, so every index is
// static).
template <class Epi>
__device__ __forceinline__ void wg_consume_ovl(int tilesM, int tilesN, int ntiles, int nunits, int nk, u32 fullBar, u32 emptyBar, u32 stages, u32 aux,
					       u32 extra, const Epi &epi) {
	const int c = threadIdx.x / 128 - 1, tid = threadIdx.x % 128, warp = tid / 32, lane = tid % 32;
	(void)tid;
	float acc0[MW][BN / 2], acc1[MW][BN / 2];
	OvlCur cur = {0, -1, 0u};
	int from = 0, jj = 0;
	int u = blockIdx.x;
	if (u >= nunits)
		return;
	wg_zero(acc0);
	for (;;) {
		wg_ovl_unit(acc0, acc1, unit_of(u, tilesM, tilesN, ntiles, nk), jj, u, from, from, tilesM, tilesN, ntiles, nunits, nk, cur, fullBar, emptyBar,
			    stages, aux, extra, c, warp, lane, epi);
		u += gridDim.x;
		jj++;
		if (u >= nunits)
			break;
		wg_ovl_unit(acc1, acc0, unit_of(u, tilesM, tilesN, ntiles, nk), jj, u, from, from, tilesM, tilesN, ntiles, nunits, nk, cur, fullBar, emptyBar,
			    stages, aux, extra, c, warp, lane, epi);
		u += gridDim.x;
		jj++;
		if (u >= nunits)
			break;
	}
	// No group is outstanding here (a unit issues the next unit's k-blocks
	// only when there is one), but ptxas cannot see that: without this
	// wait it inserts one on the exit path itself and, that path being
	// divergent, serialises every wgmma of the kernel (C7518).
	wg_wait<0>();
}
#endif

// wg_kernel is the whole kernel body: shared-memory layout, barrier init
// (the family's own through prod.init(aux)), PDL, then the producer's walk
// (prod.stage per k-block, prod.unit_done per unit) or a consumer's
// (wg_consume). A Producer has prefetch(), init(u32 aux), stage(u32 dst,
// u32 bar, const Unit &, int kb) — TMA copies of STAGE_BYTES in all onto
// bar — and unit_begin and unit_done(const Unit &, int jj, u32 aux, u32
// extra); an
// epilogue is callable as epi(float (&acc)[MW][BN / 2], const EpiCtx &).
template <class Prod, class Epi>
__device__ __forceinline__ void wg_kernel(const Prod &prod, const Epi &epi, int tilesM, int tilesN, int nk) {
	extern __shared__ __align__(1024) unsigned char smem[];
	const u32 raw = smem_addr(smem);
	const u32 fullBar = raw, emptyBar = raw + 8 * NST, turnBar = raw + 16 * NST, aux = turnBar + 16;
	const u32 stages = (raw + BAR_BYTES + 1023) & ~1023u;
	const u32 extra = stages + (u32)(NST * STAGE_BYTES);
#if MC == 1
	tilesM = (tilesM + 1) / 2; // the pair grid
#elif MC == 2
	tilesN = (tilesN + 1) / 2;
#endif
	const int ntiles = tilesM * tilesN;
#if KUNITS
	const int nunits = ntiles * ((nk + KSPLIT - 1) / KSPLIT);
#else
	const int nunits = ntiles;
#endif
	const int wg = threadIdx.x / 128;

	if (threadIdx.x == 0) {
		prod.prefetch();
		for (int s = 0; s < NST; s++) {
			mbar_init(fullBar + 8 * s, WG_FULL_COUNT);
			mbar_init(emptyBar + 8 * s, (PINGPONG ? 4 : CONSUMERS * 4) * CL);
		}
		mbar_init(turnBar, 4);
		mbar_init(turnBar + 8, 4);
		prod.init(aux);
		asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
	}
	// With MC the peer's multicast and arrives reach this CTA's barriers:
	// both CTAs' barriers are initialised before either producer starts.
	cluster_sync();
#if PDL
	// Programmatic dependent launch: the next kernel may begin its launch
	// (its prologue overlaps this one's tail); this one waits here, after
	// its own prologue, until the previous kernel has finished and its
	// writes are visible, before any thread reads an input or writes an
	// output (PDL 2: but the producer's copies of the constant operand for
	// the ring's first fill, npre stages: all NST, or WPRE's first).
	asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#if PDL == 2
	int npre = 0;
	if (threadIdx.x == 0 && (int)blockIdx.x < nunits) {
		const Unit w = unit_of(blockIdx.x, tilesM, tilesN, ntiles, nk);
		npre = min(WPRE ? min(WPRE, NST) : NST, w.kb1 - w.kb0);
		for (int i = 0; i < npre; i++) {
			mbar_expect_tx(fullBar + 8 * i, WG_STAGE_TX(prod, w, w.kb0 + i));
			prod.stage_const(stages + (u32)(i * STAGE_BYTES), fullBar + 8 * i, w, w.kb0 + i);
		}
	}
#endif
	asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif

	if (wg == 0) {
		// Producer.
#if WG_SETMAXNREG
		asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(PRODUCER_REGS));
#endif
		if (threadIdx.x == 0) {
			int s = 0;
			u32 ph = 0;
			int jj = 0;
			for (int u = blockIdx.x / CL; u < nunits; u += gridDim.x / CL, jj++) {
				const Unit w = unit_of(u, tilesM, tilesN, ntiles, nk);
				prod.unit_begin(w, jj, aux, extra);
				for (int kb = w.kb0; kb < w.kb1; kb++) {
					mbar_wait(emptyBar + 8 * s, ph ^ 1);
					const u32 st = stages + (u32)(s * STAGE_BYTES);
#if PDL == 2
					// The ring's first npre stages: armed, their constant
					// copies issued before the wait.
					if (jj == 0 && kb - w.kb0 < npre) {
						prod.stage_rest(st, fullBar + 8 * s, w, kb);
					} else
#endif
					{
						mbar_expect_tx(fullBar + 8 * s, WG_STAGE_TX(prod, w, kb));
						prod.stage(st, fullBar + 8 * s, w, kb);
					}
					if (++s == NST) {
						s = 0;
						ph ^= 1;
					}
				}
#if WG_UNIT_SLOTS
				for (int i = 0; i < WG_UNIT_SLOTS; i++) {
					mbar_wait(emptyBar + 8 * s, ph ^ 1);
					prod.slot(stages + (u32)(s * STAGE_BYTES), fullBar + 8 * s, w, jj, i);
					if (++s == NST) {
						s = 0;
						ph ^= 1;
					}
				}
#endif
				prod.unit_done(w, jj, aux, extra);
			}
		}
#if WG_CONVERT
		else {
			prod.convert(tilesM, tilesN, ntiles, nunits, nk, stages, fullBar, aux, extra);
		}
#endif
	} else {
		// Consumers.
#if WG_SETMAXNREG
		asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(CONSUMER_REGS));
#endif
#if WG_OVL
		(void)turnBar;
		wg_consume_ovl(tilesM, tilesN, ntiles, nunits, nk, fullBar, emptyBar, stages, aux, extra, epi);
#else
		wg_consume(tilesM, tilesN, ntiles, nunits, nk, fullBar, emptyBar, turnBar, stages, aux, extra, epi);
#endif
	}
#if MC
	// The peer may still release stages here (remote arrives) until its
	// consumers finish: neither CTA exits before both are done.
	cluster_sync();
#endif
}
