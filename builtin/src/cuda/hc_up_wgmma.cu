// hc_up_wgmma for CUDA sm_90a: the engine's hc_up projection with its fused
// 4-stream epilogue on the shared wgmma mainloop (wgmma_core.cuh, then
// epilogue_common.cuh, which Go puts before this file).
//
//   Y4[M, 4S] = X[M,K] · W[4S,K]^T          (never stored)
//   mix[t,d]  = ¼ · Σ_{c<4} Y4[t, c·S+d] · H[t,c,d]        t < M, d < S
//   mixh[t,d] = fp16(mix[t,d]);  mixed[t,d] = mix[t,d] (fp32, BOUND=1 only)
//
// X [M,K], W [4,S,K] (stream c's rows are W[c·S + d]) and H [M,4,S] are
// row-major fp16; mixh [M,S] fp16; mixed [M,S] fp32.
//
// Entry point (the order of builtin/fused_wgmma.go's Plan):
//   tilefit_hc_up_wgmma(const __grid_constant__ TMap tmX, tmW, tmH, [tmM if EPI],
//                       mixh, [mixed if BOUND], long long M, S, K)
// tmX: X, dims {K, M}, box {64, BM}, 128-byte swizzle;
// tmW: W, dims {K, 4S}, box {64, BN/4}, 128-byte swizzle;
// tmH: H, dims {S, 4, M}, box {BN/4, 1, BM}, swizzled over its BN/2-byte rows
//      (HSW=1: 32-, 64- or 128-byte swizzle) or not (HSW=0).
// TMA needs 16-byte row strides: K % 8 == 0 and S % 8 == 0 (the Plan
// refuses other shapes; the mma.sync family hc_up_f16 runs them).
//
// Tiling: a tile is BM rows × TD = BN/4 mix columns d0 + [0, TD), i.e. BN
// columns of Y4 — all four streams of its TD columns. The B operand of a
// stage is four TMA boxes stacked in shared memory, stream c's W rows
// c·S + d0 + [0, TD) at B + c·TD·128 bytes, so the wgmma's BN columns are
// stream-major (tile column n = c·TD + j) and the thread holding column j of
// stream 0 (fragment q = j/8) holds the same column of every stream
// (fragments q, q + TD/8, q + 2·TD/8, q + 3·TD/8): the mix happens in
// registers. Columns d ≥ S of the last tile read other rows (or zeros) and are
// never stored. BN 320 (TD 80, past wgmma's 256 columns) is computed as two
// halves of 160 (the prelude sets the core's WG_MMA_N; wgmma_part is the
// m64n160k16 wrapper): half p holds streams 2p and 2p+1 in accumulator
// registers 80p.., the same layout as one 320-wide wgmma.
//
// THE EPILOGUE'S ARITHMETIC is mix4 (epilogue_common.cuh), the function the
// mma.sync family hc_up_f16 calls, on y_c = the fp32 accumulator of Y4[t,
// c·S+d] (the core's k16 order, bitwise the mma.sync core's) and h_c = the
// exact fp32 value of H[t,c,d]; mixh = fp16_rn(mix). So every tile of both
// families gives the same bits: numerics class hc_up_f16.
//
// H: the producer loads each unit's H tile — four TMA boxes of BM rows ×
// TD, one per stream, H_BYTES in all — into buffer b = jj % NHB, on
// hfull[b], after waiting until the consumers released the buffer's last
// use (hempty[b]). NHB = 2 with PINGPONG (each consumer its own) or HBUF=2,
// else 1. The load is issued after the unit's stages, when the consumers
// finish the previous unit's epilogue and begin this unit's k loop, so it
// overlaps that k loop; with HBUF=2 (and no PINGPONG) before the unit's
// stages (the buffer's previous user, unit jj-2, is long done), so it
// overlaps the previous unit's k loop too. (Measured on the H200: with
// PINGPONG the early load makes the producer wait for the other consumer's
// epilogue before prefetching the next stages, 10% slower at M 1983; so
// PINGPONG loads late.) After the k loop the consumers
// wait on hfull[b], read H from shared memory (32-bit loads, conflict free:
// swizzled for rows of 32, 64 or 128 bytes, and rows of 48, 80 or 112 bytes
// fall in distinct banks unswizzled), store mixh (4-byte pairs; 8-byte fp32
// pairs for mixed) and release the buffer (one arrive per warp).
//
// EPI 1: mixh goes through the core's staged epilogue (WG_EPI_N = TD
// columns; the same fp16 pairs into the consumer's staging tile, then TMA
// stores through tmM, a map over mixh, dims {S, M}, box {EPI_BOXC, WGM}; the
// kernel then has tmM after tmH); mixed (BOUND=1) is stored as before.
//
// FAULT plants a bug for the tests: 1 skips stream 3 in the mix; 2 leaves
// mixed (BOUND=1) unwritten.
//
// PDL 2 (no MC, no XRES): PDL 1, except that the producer issues the W
// boxes of its first unit's first stages (as many as the ring holds, at
// most the unit's five k-blocks at K 320) before griddepcontrol.wait, and
// their X boxes after it (the core's WG_PRELOAD, which the prelude sets).
// It assumes the kernel before does not write W: the weights are constant
// during inference, as gemm_decode's PDL 2 assumes. X and H, the
// activations, are read only after the wait, and mixh is written after
// it. The bytes, their places and the bits are PDL 1's.
//
// MINB 2: two CTAs per SM (__launch_bounds__(NT, 2)), so one CTA's
// prologue, H wait and epilogue overlap the other's k loop. One consumer
// only (the Plan refuses two): the block of 256 threads starts at
// 65536 / (2·256) = 128 registers a thread, and the prelude sets the core's
// WG_SETMAXNREG with targets producer 40, consumer 216 (the prelude's
// defines; (40 + 216)·128 = 32768, the CTA's half of the register file, so
// setmaxnreg.inc never waits for registers another CTA holds). The CTA's
// shared memory fits half the SM's 228 KiB less the 1 KiB each CTA
// reserves: NST·STAGE_BYTES + EXTRA_BYTES + 1024 ≤ 115712. The host
// allocates the 1024-byte alignment slack without the core's extra 256
// (the barriers sit in the slack when the dynamic shared memory starts on a
// 1024-byte boundary, as it does on the H200); the kernel checks that the
// layout fits the allocation (%dynamic_smem_size) and traps if not. The
// walk, the arithmetic and the bits are unchanged.

#ifndef BOUND
#define BOUND 0
#endif
#ifndef HSW
#define HSW 1
#endif
#ifndef HBUF
#define HBUF 1
#endif
// HPRE 1 (two H buffers: PINGPONG or HBUF=2): unit 0's H tile is loaded
// after its stages (they come first), and a later unit's before its
// stages when its buffer needs no wait: every unit with HBUF=2, the second
// unit (the first use of buffer 1) with PINGPONG. So a CTA's second H tile
// is in flight during the first unit's k loop instead of being issued as
// the second unit's k loop starts (short K and few units per CTA: M 512).
#ifndef HPRE
#define HPRE 0
#endif
// HPF 2: the producer prefetches the CTA's NEXT unit's H tile into L2 (the
// same four boxes) after the current unit's stages and H load (in
// unit_done), so the prefetch waits behind this unit's copies instead of
// holding them up, and the next unit's H load (HBUF 1: after this unit's
// epilogue) finds its tile in L2. No MC. Values are unchanged.
// HPF 1: the producer prefetches each unit's H tile into L2 (four
// cp.async.bulk.prefetch.tensor boxes, no shared memory) as the unit's walk
// begins, before its stages; the TMA load into the H buffer comes later (as
// HBUF/HPRE say) and finds the tile in L2. With HBUF 1 a CTA's second unit
// cannot load its H tile until the first unit's epilogue has read the
// buffer; the prefetch moves that tile's DRAM latency under the first
// unit's k loop. Values are unchanged. Measured slower on the H200
// (docs/results/h200-fused5: +28–43 %): issued just before the unit's stage
// copies, the prefetches hold them up.
#ifndef HPF
#define HPF 0
#endif
// HRING 1 (HBUF 1, no PINGPONG or HPRE): the H tile rides in the core's
// stage ring instead of a buffer of its own: after a unit's k-blocks the
// producer fills the unit's WG_UNIT_SLOTS = ceil(4 / HPS) slots of its own,
// HPS stream boxes each (as many as a stage holds, at most 4: the prelude's
// HC_HPS), on the slots' full barriers, and the epilogue reads stream c's
// box at slot c / HPS, offset (c % HPS)·HBOX, then releases the slots. The
// H buffer's bytes become stages (128_320_2: 4 stages instead of 2). The
// producer loads a unit's H tile as soon as the ring has room after its
// stages, which for a CTA's second unit is while the first unit's epilogue
// runs. Values are unchanged.
#ifndef HRING
#define HRING 0
#endif
#ifndef MINB
#define MINB 1
#endif
// XRES n (n > 0; HBUF any, no PINGPONG, HRING or MC): X is resident. The
// prelude sets the core's WG_A_RES = n: a stage holds only the unit's W
// rows, and X's BM rows × K (n k-blocks of 64, at most: K ≤ 64·n, the Plan
// refuses more and the kernel traps) sit in the family's bytes after the H
// buffers. The producer loads a unit's X k-blocks (onto the stages' full
// barriers, which then expect them too: the prelude's WG_STAGE_TX) only when
// the unit's tile row differs from the CTA's previous unit's; at M 512 with
// 128-row tiles on 132 CTAs every CTA's two units share their tile row
// (132 % 4 == 0), so the second unit loads 80 KiB less. Before overwriting
// X for a new tile row the producer waits on xempty (aux + 32, a fifth
// barrier of its own), on which every consumer warp arrives when its k
// loop of a unit whose successor has another tile row is done. The k order
// and the bits are unchanged.
#ifndef XRES
#define XRES 0
#endif

constexpr int TD = BN / 4;       // mix columns per tile
constexpr int QF = TD / 8;       // n8 fragments per stream
constexpr int HROW = TD * 2;     // bytes of one row of an H box
constexpr int HBOX = BM * HROW;  // one stream's H box
constexpr int H_BYTES = 4 * HBOX; // one H buffer
constexpr int NHB = (PINGPONG || HBUF == 2) ? 2 : 1;
// HEARLY: the H tile is loaded before the unit's stages (HBUF=2 without
// PINGPONG), else after them.
constexpr bool HEARLY = HBUF == 2 && !PINGPONG;
static_assert(!HPRE || NHB == 2, "HPRE needs two H buffers (PINGPONG or HBUF=2)");

// h_early reports whether unit jj's H tile is loaded before its stages
// (unit_begin) rather than after them (unit_done).
__device__ __forceinline__ bool h_early(int jj) {
	if (!HPRE)
		return HEARLY;
	if (jj == 0)
		return false;
	return PINGPONG ? jj < NHB : true;
}
// HSWZ: the H rows are swizzled (HSW=1 and a row of 32, 64 or 128 bytes).
constexpr bool HSWZ = HSW && (HROW == 32 || HROW == 64 || HROW == 128);
constexpr int HEMPTY = PINGPONG ? 4 : CONSUMERS * 4;

static_assert(BN % 32 == 0, "hc_up_wgmma: BN must be a multiple of 32 (TD = BN/4 a multiple of 8)");
static_assert(KSPLIT == 0, "hc_up_wgmma does not split K");
static_assert(WG_AUX_BARS >= 4, "hc_up_wgmma needs 4 barriers of its own");
static_assert(HRING || EXTRA_BYTES >= NHB * H_BYTES, "hc_up_wgmma: WG_EXTRA_BYTES must hold the H buffers");
static_assert(MINB == 1 || MINB == 2, "MINB must be 1 or 2");
static_assert(HPF >= 0 && HPF <= 2 && (HPF != 2 || !MC), "HPF: 0, 1 or 2 (2 without MC)");
static_assert(XRES >= 0 && (XRES == 0 || (!PINGPONG && !HRING && !MC && WG_A_RES == XRES && WG_AUX_BARS >= 5)), "XRES: no PINGPONG, HRING or MC");
static_assert(XRES == 0 || EXTRA_BYTES >= NHB * H_BYTES + XRES * A_BYTES, "XRES: WG_EXTRA_BYTES must hold the H buffers and X");
#if MINB == 2
// HC_ENTRY_REGS: registers a thread of the block starts with (the launch
// bound's 65536 / (NT·MINB), down to a multiple of 8); HC_CTA_SMEM: the
// most shared memory a CTA may take with two on an SM (228 KiB less two
// 1 KiB reserves, halved).
constexpr int HC_ENTRY_REGS = 65536 / (NT * MINB) / 8 * 8;
constexpr int HC_CTA_SMEM = (228 * 1024 - 2 * 1024) / 2;
static_assert(CONSUMERS == 1 && WG_SETMAXNREG, "MINB 2: one consumer, with setmaxnreg (the prelude's targets)");
static_assert((PRODUCER_REGS + CONSUMERS * CONSUMER_REGS) * 128 <= HC_ENTRY_REGS * NT, "MINB 2: the setmaxnreg targets exceed the CTA's registers");
static_assert(NST * STAGE_BYTES + EXTRA_BYTES + 1024 <= HC_CTA_SMEM, "MINB 2: the CTA's shared memory does not fit twice on an SM");
#endif
#if HRING
constexpr int HPS = HC_HPS; // H boxes per ring slot
static_assert(!PINGPONG && HBUF == 1 && !HPRE, "HRING: the H tile rides in the ring (HBUF 1, no PINGPONG, no HPRE)");
static_assert(HPS >= 1 && HPS * HBOX <= STAGE_BYTES && WG_UNIT_SLOTS * HPS >= 4, "HRING: H boxes per slot");
#else
constexpr int HPS = 4;
#endif

// hswz is the position TMA wrote byte o of an H box at (the 32-, 64- or
// 128-byte swizzle: bits 4.. of o XOR bits 7.. of o, as many as the span has
// 16-byte chunks; boxes start on 1024-byte boundaries).
__device__ __forceinline__ u32 hswz(u32 o) {
	if (!HSWZ)
		return o;
	return o ^ (((o >> 7) & (u32)(HROW / 16 - 1)) << 4);
}

__device__ __forceinline__ u32 lds32(u32 a) {
	u32 v;
	asm volatile("ld.shared.u32 %0, [%1];\n" : "=r"(v) : "r"(a));
	return v;
}

// tma_prefetch_l2_3 prefetches the box at (c0, c1, c2) of a rank-3 map into
// L2 (no shared memory, no barrier).
__device__ __forceinline__ void tma_prefetch_l2_3(const TMap *map, int c0, int c1, int c2) {
	asm volatile("cp.async.bulk.prefetch.tensor.3d.L2.global.tile [%0, {%1, %2, %3}];\n" ::"l"(reinterpret_cast<u64>(map)), "r"(c0), "r"(c1), "r"(c2)
		     : "memory");
}

// half16 is fp16 element e (0: the lower address) of a 32-bit pair.
__device__ __forceinline__ f16_t half16(u32 v, int e) { return (f16_t)(e ? v >> 16 : v & 0xFFFFu); }

// Barriers of its own (aux): hfull[0..1] at aux, hempty[0..1] at aux + 16.
struct HcProd {
	const TMap *x, *w, *h;
	int S, M;
	// XRES: whether the current unit loads X, the previous unit's tile row,
	// xempty's phase, X's shared address.
	mutable int xload, pbm;
	mutable u32 xph, xres;
	// next_unit: the CTA's unit after its jj-th (index), and its tile.
	__device__ __forceinline__ bool next_unit(int jj, Unit &nx) const {
		const int tm = (M + BM - 1) / BM, tn = (S + TD - 1) / TD, un = blockIdx.x + (jj + 1) * gridDim.x;
		if (un >= tm * tn)
			return false;
		nx = unit_of(un, tm, tn, tm * tn, 1);
		return true;
	}
	// stage_tx: the bytes a stage's copies complete on its full barrier.
	__device__ __forceinline__ u32 stage_tx() const { return (u32)(STAGE_BYTES + (XRES && xload ? A_BYTES : 0)); }
	__device__ __forceinline__ void prefetch() const {
		tma_prefetch(x);
		tma_prefetch(w);
		tma_prefetch(h);
	}
	__device__ __forceinline__ void init(u32 aux) const {
		for (int b = 0; b < NHB; b++) {
			mbar_init(aux + 8 * b, 1);
			mbar_init(aux + 16 + 8 * b, HEMPTY);
		}
		if (XRES)
			mbar_init(aux + 32, CONSUMERS * 4);
	}
	// stage is stage_rest (X) then stage_const (the four streams' W rows);
	// PDL 2 issues a first-fill stage's W before griddepcontrol.wait (the
	// core's WG_PRELOAD) and its X after.
	__device__ __forceinline__ void stage_rest(u32 st, u32 bar, const Unit &u, int kb) const {
#if XRES
		if (xload)
			tma_load(xres + (u32)((kb - u.kb0) * A_BYTES), x, kb * BK, u.bm * BM, bar);
		(void)st;
#else
		wg_load_rows(st, x, kb * BK, u.bm * BM, BM, bar, MC == 2);
#endif
	}
	__device__ __forceinline__ void stage_const(u32 st, u32 bar, const Unit &u, int kb) const {
		if (MC == 1) {
			// The pair shares the W rows: rank r loads streams 2r and
			// 2r + 1, each multicast to both CTAs.
			const int r = wg_rank();
#pragma unroll
			for (int c = 2 * r; c < 2 * r + 2; c++)
				tma_load_mc(st + A_STAGE + (u32)(c * TD * 128), w, kb * BK, c * S + u.bn * TD, bar);
		} else {
#pragma unroll
			for (int c = 0; c < 4; c++)
				tma_load(st + A_STAGE + (u32)(c * TD * 128), w, kb * BK, c * S + u.bn * TD, bar);
		}
	}
	__device__ __forceinline__ void stage(u32 st, u32 bar, const Unit &u, int kb) const {
		stage_rest(st, bar, u, kb);
		stage_const(st, bar, u, kb);
	}
	__device__ __forceinline__ void unit_begin(const Unit &u, int jj, u32 aux, u32 extra) const {
#if XRES
		// A new tile row overwrites X: wait until the consumers finished
		// the k loop of the last unit that read it.
		xres = extra + (u32)(NHB * H_BYTES);
		xload = jj == 0 || u.bm != pbm;
		if (jj > 0 && xload) {
			mbar_wait(aux + 32, xph);
			xph ^= 1;
		}
		pbm = u.bm;
#endif
		if (HPF == 1 && !h_early(jj)) {
#pragma unroll
			for (int c = 0; c < 4; c++)
				tma_prefetch_l2_3(h, u.bn * TD, c, u.bm * BM);
		}
		if (h_early(jj))
			load_h(u, jj, aux, extra);
	}
	__device__ __forceinline__ void unit_done(const Unit &u, int jj, u32 aux, u32 extra) const {
		if (HRING) // the H tile rides in the ring (slot)
			return;
		if (!h_early(jj))
			load_h(u, jj, aux, extra);
		if (HPF == 2) {
			Unit nx;
			if (next_unit(jj, nx)) {
#pragma unroll
				for (int c = 0; c < 4; c++)
					tma_prefetch_l2_3(h, nx.bn * TD, c, nx.bm * BM);
			}
		}
	}
	// slot (HRING): the unit's own ring slot i holds stream boxes
	// [i·HPS, min(4, (i+1)·HPS)) of its H tile.
	__device__ __forceinline__ void slot(u32 st, u32 bar, const Unit &u, int jj, int i) const {
		const int c0 = i * HPS, n = 4 - c0 < HPS ? 4 - c0 : HPS;
		(void)jj;
		mbar_expect_tx(bar, (u32)(n * HBOX));
		for (int c = c0; c < c0 + n; c++)
			tma_load3(st + (u32)((c - c0) * HBOX), h, u.bn * TD, c, u.bm * BM, bar);
	}
	__device__ __forceinline__ void load_h(const Unit &u, int jj, u32 aux, u32 extra) const {
		const int b = jj % NHB;
		mbar_wait(aux + 16 + 8 * b, (u32)(((jj / NHB) & 1) ^ 1));
		mbar_expect_tx(aux + 8 * b, H_BYTES);
		const u32 dst = extra + (u32)(b * H_BYTES);
#pragma unroll
		for (int c = 0; c < 4; c++)
			tma_load3(dst + (u32)(c * HBOX), h, u.bn * TD, c, u.bm * BM, aux + 8 * b);
	}
};

struct HcEpi {
	f16_t *mixh;
	float *mixed;
	int M, S;
	const TMap *mm; // EPI 1: the tensor map over mixh
	__device__ __forceinline__ void operator()(float (&acc)[MW][BN / 2], const EpiCtx &e) const {
		const int b = e.jj % NHB, lane = e.lane;
		(void)b;
#if XRES
		// The k loop is done (the core waited for its wgmma): if the CTA's
		// next unit has another tile row, X may be overwritten.
		{
			const int tm = (M + BM - 1) / BM, tn = (S + TD - 1) / TD, un = blockIdx.x + (e.jj + 1) * gridDim.x;
			if (un < tm * tn && unit_of(un, tm, tn, tm * tn, 1).bm != e.w.bm) {
				__syncwarp();
				if (lane == 0)
					mbar_arrive(e.aux + 32);
			}
		}
#endif
		// hbx[c]: stream c's H box in shared memory.
		u32 hbx[4];
#if HRING
#pragma unroll
		for (int i = 0; i < WG_UNIT_SLOTS; i++) {
			const u32 a = wg_slot_wait(e, i);
#pragma unroll
			for (int c = i * HPS; c < 4 && c < (i + 1) * HPS; c++)
				hbx[c] = a + (u32)((c - i * HPS) * HBOX);
		}
#else
		mbar_wait(e.aux + 8 * b, (u32)((e.jj / NHB) & 1));
#pragma unroll
		for (int c = 0; c < 4; c++)
			hbx[c] = e.extra + (u32)(b * H_BYTES + c * HBOX);
#endif
#if EPI
		epi_begin(e);
#endif
		const int rt = (PINGPONG ? 0 : e.c * WGM) + e.warp * 16 + (lane >> 2); // tile row of this thread's first rows
		const int d0 = e.w.bn * TD;
#pragma unroll
		for (int i = 0; i < MW; i++)
#pragma unroll
			for (int half = 0; half < 2; half++) {
				const int rl = rt + i * 64 + 8 * half;
				const int m = e.w.bm * BM + rl;
#pragma unroll
				for (int q = 0; q < QF; q++) {
					const int dl = 8 * q + 2 * (lane & 3);
					const u32 o = hswz((u32)(rl * HROW + dl * 2));
					u32 h[4];
#pragma unroll
					for (int c = 0; c < 4; c++)
						h[c] = lds32(hbx[c] + o);
					float v[2];
#pragma unroll
					for (int ee = 0; ee < 2; ee++) {
						const int x = 2 * half + ee;
						v[ee] = mix4(acc[i][4 * (0 * QF + q) + x], acc[i][4 * (1 * QF + q) + x], acc[i][4 * (2 * QF + q) + x],
							     acc[i][4 * (3 * QF + q) + x], h2f(half16(h[0], ee)), h2f(half16(h[1], ee)), h2f(half16(h[2], ee)),
							     h2f(half16(h[3], ee)));
					}
					const int d = d0 + dl;
#if EPI
					sts32(e.stg + epi_off(rl - (PINGPONG ? 0 : e.c * WGM), dl), pack_h2(v[0], v[1]));
					(void)m;
					(void)d;
#if BOUND && FAULT != 2
					if (m < M && d < S)
						*reinterpret_cast<float2 *>(mixed + (size_t)m * S + d) = make_float2(v[0], v[1]);
#endif
#else
					// S % 8 == 0: d < S means d + 1 < S, and the pair is aligned.
					if (m < M && d < S) {
						const size_t off = (size_t)m * S + d;
						*reinterpret_cast<u32 *>(mixh + off) = (u32)f2h(v[0]) | ((u32)f2h(v[1]) << 16);
#if BOUND && FAULT != 2
						*reinterpret_cast<float2 *>(mixed + off) = make_float2(v[0], v[1]);
#endif
					}
#endif
				}
			}
		// Every lane of the warp has read its H words: release the buffer
		// (HRING: the unit's slots).
#if HRING
#pragma unroll
		for (int i = 0; i < WG_UNIT_SLOTS; i++)
			wg_slot_release(e, i);
#else
		__syncwarp();
		if (lane == 0)
			mbar_arrive(e.aux + 16 + 8 * b);
#endif
#if EPI
		epi_end(e, mm, d0, e.w.bm * BM + (PINGPONG ? 0 : e.c * WGM));
#endif
	}
};

extern "C" __global__ void __launch_bounds__(NT, MINB)
    tilefit_hc_up_wgmma(const __grid_constant__ TMap tmX, const __grid_constant__ TMap tmW, const __grid_constant__ TMap tmH,
#if EPI
			const __grid_constant__ TMap tmM,
#endif
			f16_t *__restrict__ mixh,
#if BOUND
			float *__restrict__ mixed,
#endif
			long long M64, long long S64, long long K64) {
#if !BOUND
	float *mixed = nullptr;
#endif
	const int M = (int)M64, S = (int)S64, K = (int)K64;
#if MINB == 2
	{
		// The host allocated the slack without the core's 256 extra bytes:
		// the core's layout (barriers, stages from the next 1024-byte
		// boundary, the family's bytes) must end inside the allocation.
		extern __shared__ __align__(1024) unsigned char smem[];
		const u32 raw = smem_addr(smem);
		u32 have;
		asm volatile("mov.u32 %0, %%dynamic_smem_size;\n" : "=r"(have));
		if (((raw + BAR_BYTES + 1023) & ~1023u) - raw + (u32)(NST * STAGE_BYTES + EXTRA_BYTES) > have)
			asm volatile("trap;");
	}
#endif
#if XRES
	if ((K + BK - 1) / BK > XRES)
		asm volatile("trap;");
#endif
	const HcProd prod = {&tmX, &tmW, &tmH, S, M, 0, 0, 0u, 0u};
#if EPI
	const HcEpi epi = {mixh, mixed, M, S, &tmM};
#else
	const HcEpi epi = {mixh, mixed, M, S, nullptr};
#endif
	wg_kernel(prod, epi, (M + BM - 1) / BM, (S + TD - 1) / TD, (K + BK - 1) / BK);
}
