// fused_common.cu — the tensor-core GEMM core shared by tilefit's fused CUDA
// families (hc_up_f16, swiglu_f16, gemm_q8_f16). It is not a family: Go
// (builtin/fused.go) concatenates ptx_common.cuh, this text and each fused
// family's own source, so NVRTC sees one file and no #include is needed.
//
// What it provides (on top of ptx_common.cuh's cp.async, ldmatrix,
// mma.sync.m16n8k16 and fp32 -> fp16 wrappers):
//   - (from epilogue_common.cuh, which Go puts before this file: f16_t,
//     h2f, the explicitly rounded fp32 arithmetic and the epilogues' mix4
//     and act, shared with the wgmma families and the vendor baselines);
//   - Geo<BM>: the warp layout of a BM×TN block tile (WARPS warps as WM×WN,
//     warp tiles multiples of 16 rows and NQ columns, the most square one);
//   - RowLoader<ROWS, Map>: copies ROWS rows × TK k of an fp16 operand into a
//     swizzled shared-memory stage with cp.async, row r of the stage coming
//     from the global row Map(r) (nullptr: zeros), k ≥ K read as zero;
//   - mainloop<BM, NACC>(): the STAGES-deep cp.async pipeline over K, NACC
//     accumulator sets (set a multiplies the block's X rows by shared B rows
//     a·TN + [0, TN)), fragments double-buffered.
//
// THE REDUCTION-ORDER INVARIANT (every family built on this core): every
// accumulator element is
//     acc = 0;  for k0 = 0, 16, 32, … < K:  acc = mma(acc, A[m, k0:k0+16], B[n, k0:k0+16])
// with k ≥ K read as zero, one mma.m16n8k16 per k16 step in ascending order,
// K never split across warps or blocks. The tile shape, the warp layout, the
// pipeline depth and the row-tail tile change only which elements are
// computed together, so every tile gives the same accumulator bits — and the
// register-only variant of hc_up, which loads the same fragments straight
// from global memory, gives them too.
//
// Parameters every fused family defines (defaults below): TM, TN, WARPS, TK,
// STAGES, NQ (column quantum of a warp tile), NACC (accumulator sets), TAIL
// (rows of the last row of blocks when M % TM ≠ 0; 0: a TM-row tile).
// Dimensions arrive as long long (the operator contract's int64 ArgDim).

#ifndef TM
#define TM 64
#endif
#ifndef TN
#define TN 128
#endif
#ifndef WARPS
#define WARPS 4
#endif
#ifndef TK
#define TK 32
#endif
#ifndef STAGES
#define STAGES 3
#endif
#ifndef TAIL
#define TAIL 0
#endif
#ifndef FAULT
#define FAULT 0
#endif

constexpr int NT = WARPS * 32;
constexpr int CPR = TK / 8; // 16-byte chunks per shared-memory row
static_assert(TK % 32 == 0, "TK must be a multiple of 32");
static_assert(STAGES >= 2, "at least two stages");

// ---- warp layout ----

struct Layout {
	int wm, wn;
};

__host__ __device__ constexpr int log2ratio(int a, int b) {
	int s = 0;
	while (a > b) {
		a /= 2;
		s++;
	}
	while (b > a) {
		b /= 2;
		s++;
	}
	return s;
}

// pick_layout returns the WM×WN = WARPS layout over a bm×tn tile whose warp
// tiles have rows a multiple of 16 and columns a multiple of nq, the most
// square one (least |log2 of the side ratio|), ties to the larger WM; {0,0}
// when none exists. builtin/fused.go (FusedWarpLayout) has the same rule.
__host__ __device__ constexpr Layout pick_layout(int bm, int tn, int nq) {
	Layout best = {0, 0};
	int bestScore = 1 << 30;
	for (int wm = WARPS; wm >= 1; wm /= 2) {
		int wn = WARPS / wm;
		if (bm % (wm * 16) != 0 || tn % (wn * nq) != 0)
			continue;
		int s = log2ratio(bm / wm, tn / wn);
		if (s < bestScore) {
			bestScore = s;
			best.wm = wm;
			best.wn = wn;
		}
	}
	return best;
}

// Geo is the geometry of a BM-row block tile (BM = TM, or TAIL for the
// row-tail blocks) with NACC accumulator sets over TN columns each.
template <int BM> struct Geo {
	static constexpr Layout L = pick_layout(BM, TN, NQ);
	static constexpr int WM = L.wm > 0 ? L.wm : 1;
	static constexpr int WN = L.wn > 0 ? L.wn : 1;
	static constexpr int WTM = BM / WM; // warp tile rows
	static constexpr int WTN = TN / WN; // warp tile columns (per set)
	static constexpr int MI = WTM / 16; // m16 fragments per warp
	static constexpr int NI = WTN / 8;  // n8 fragments per warp and set
	static constexpr int NP = WTN / 16; // pairs of n8 fragments (one ldmatrix.x4)
	static constexpr int A_BYTES = BM * TK * 2;
	static constexpr int B_BYTES = NACC * TN * TK * 2;
	static constexpr int STAGE_BYTES = A_BYTES + B_BYTES;
	static_assert(L.wm > 0 && L.wn > 0, "no warp layout divides the tile");
	static_assert(WTN % 16 == 0, "warp tile columns must be a multiple of 16");
};

// swz maps chunk c of shared-memory row r to its stored position, so that the
// 8 rows one ldmatrix phase reads (same logical chunk) hit 8 distinct 16-byte
// bank groups, and so do the cp.async writes.
__device__ __forceinline__ int swz(int r, int c) {
	if (CPR == 4)
		return c ^ ((r >> 1) & 3);
	return c ^ (r & 7);
}

// The block row bm of an M-row problem: rows [m0, m0 + rows). With TAIL > 0
// and M % TM ≠ 0 the last, partial row of TM-row blocks is replaced by
// ceil((M % TM) / TAIL) blocks of TAIL rows. RowBlocks in builtin/fused.go
// counts the same blocks.
__device__ __forceinline__ bool tail_block(long long bm, long long M) {
	if (TAIL == 0 || TAIL >= TM)
		return false;
	return M % TM != 0 && bm >= M / TM;
}

__device__ __forceinline__ long long block_m0(long long bm, long long M) {
	if (tail_block(bm, M))
		return (M / TM) * TM + (bm - M / TM) * (long long)(TAIL > 0 ? TAIL : TM);
	return bm * TM;
}

__device__ __forceinline__ long long row_blocks(long long M) {
	if (TAIL == 0 || TAIL >= TM || M % TM == 0)
		return (M + TM - 1) / TM;
	return M / TM + (M % TM + (TAIL > 0 ? TAIL : 1) - 1) / (TAIL > 0 ? TAIL : 1);
}

// ---- the cp.async loader ----

// A RowLoader copies stage rows [0, ROWS) × k [k0, k0+TK) of an fp16 operand
// into a swizzled shared-memory stage: stage row r holds the global row at
// map(r) (K elements, row-major), or zeros when map(r) is nullptr; k ≥ K
// reads as zero. Thread tid always moves chunk tid % CPR of rows tid / CPR +
// p·RPP (p = 0, 1, …).
//
// aligned (K % 8 == 0 and every row 16-byte aligned): one 16-byte cp.async
// per chunk, zero-filled (src-size 0) out of range. Otherwise guarded 2-byte
// loads and a plain 16-byte shared store.
template <int ROWS, class Map> struct RowLoader {
	static constexpr int RPP = NT / CPR; // rows per pass
	static constexpr int PASSES = (ROWS + RPP - 1) / RPP;
	Map map;
	const void *any; // a valid global address for zero-size copies
	int K, rt, c;

	__device__ __forceinline__ RowLoader(Map m, const void *any_, int K_) : map(m), any(any_), K(K_) {
		rt = threadIdx.x / CPR;
		c = threadIdx.x % CPR;
	}

	__device__ __forceinline__ void load(u32 sbase, int k0, bool aligned) const {
		const int gk = k0 + c * 8;
#pragma unroll
		for (int p = 0; p < PASSES; p++) {
			const int r = rt + p * RPP;
			if (ROWS % RPP != 0 && r >= ROWS)
				break;
			const u32 dst = sbase + (u32)((r * CPR + swz(r, c)) * 16);
			const f16_t *row = map(r);
			if (aligned) {
				const bool in = row != nullptr && gk < K;
				cp_async16(dst, in ? (const void *)(row + gk) : any, in ? 16 : 0);
			} else {
				u32 w[4];
#pragma unroll
				for (int e = 0; e < 4; e++) {
					const int ka = gk + 2 * e, kb = ka + 1;
					const u32 lo = (row != nullptr && ka < K) ? row[ka] : 0u;
					const u32 hi = (row != nullptr && kb < K) ? row[kb] : 0u;
					w[e] = lo | (hi << 16);
				}
				st_shared16(dst, w[0], w[1], w[2], w[3]);
			}
		}
	}
};

template <int ROWS, class Map> __device__ __forceinline__ RowLoader<ROWS, Map> row_loader(Map m, const void *any, int K) {
	return RowLoader<ROWS, Map>(m, any, K);
}

// ---- the main loop ----

// mainloop runs the whole K loop of one block tile of BM rows: A (BM rows)
// through la, B (NACC·TN rows) through lb, into acc[a][i][j][e] — set a,
// m16 fragment i, n8 fragment j of warp (wm, wn) of the layout Geo<BM>;
// element e of an m16n8 fragment is row lane/4 (+8 for e ≥ 2), column
// 2·(lane%4) + (e & 1). Shared B rows a·TN + wn·WTN + [0, WTN) feed set a.
// The caller zeroes acc. Stage s lives at sbase + s·Geo<BM>::STAGE_BYTES.
template <int BM, class LA, class LB>
__device__ __forceinline__ void mainloop(float (&acc)[NACC][Geo<BM>::MI][Geo<BM>::NI][4], const LA &la, const LB &lb,
					 int K, u32 sbase, bool aligned) {
	typedef Geo<BM> G;
	constexpr int MI = G::MI, NP = G::NP, KK = TK / 16;
	constexpr u32 STAGE = G::STAGE_BYTES, A_BYTES = G::A_BYTES;
	const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
	const int wm = warp / G::WN, wn = warp % G::WN;
	const int KT = (K + TK - 1) / TK;

	// Prologue: tiles 0 .. STAGES-2 into stages 0 .. STAGES-2, one commit
	// group each (possibly empty).
#pragma unroll
	for (int s = 0; s < STAGES - 1; s++) {
		if (s < KT) {
			const u32 st = sbase + (u32)s * STAGE;
			la.load(st, s * TK, aligned);
			lb.load(st + A_BYTES, s * TK, aligned);
		}
		cp_async_commit();
	}

	// Per-lane ldmatrix byte offsets within a stage (fragment layouts of
	// mma.m16n8k16): A rows aRow + 16·i at chunk 2·kk + aHalf, B rows bRow +
	// 16·p (+ a·TN for set a) at chunk 2·kk + bHalf. Adding a multiple of 16
	// rows leaves the row bits swz reads unchanged, so those add constants,
	// and the chunk of k16 step kk lies at 16·((2·kk) ^ g) with g = swz(row,
	// half): offset = base + ((32·kk) ^ 16·g).
	constexpr u32 ROW16 = 16 * TK * 2; // bytes of 16 shared-memory rows
	constexpr u32 SET = TN * TK * 2;   // bytes of one set's TN rows
	const int aRow = wm * G::WTM + (lane & 15);
	const int bRow = wn * G::WTN + (lane & 7) + ((lane >> 4) << 3);
	const u32 aBase = (u32)(aRow * CPR * 16), aSw = (u32)(swz(aRow, lane >> 4) * 16);
	const u32 bBase = A_BYTES + (u32)(bRow * CPR * 16), bSw = (u32)(swz(bRow, (lane >> 3) & 1) * 16);

	u32 af[2][MI][4], bf[2][NACC][NP][4];
	auto loadFrags = [&](int buf, u32 stageAddr, int kk) {
		const u32 a = stageAddr + aBase + (((u32)kk * 32u) ^ aSw);
		const u32 b = stageAddr + bBase + (((u32)kk * 32u) ^ bSw);
#pragma unroll
		for (int i = 0; i < MI; i++)
			ldmatrix_x4(a + i * ROW16, af[buf][i][0], af[buf][i][1], af[buf][i][2], af[buf][i][3]);
#pragma unroll
		for (int s = 0; s < NACC; s++)
#pragma unroll
			for (int p = 0; p < NP; p++)
				ldmatrix_x4(b + s * SET + p * ROW16, bf[buf][s][p][0], bf[buf][s][p][1], bf[buf][s][p][2], bf[buf][s][p][3]);
	};

	u32 rs = 0;          // stage being read
	u32 ws = STAGES - 1; // stage the next tile is copied into
	cp_async_wait<STAGES - 2>();
	__syncthreads();
	loadFrags(0, sbase, 0);
	for (int kt = 0; kt < KT; kt++) {
		const bool lastTile = kt == KT - 1;
		const int kleft = K - kt * TK;
#pragma unroll
		for (int kk = 0; kk < KK; kk++) {
			if (kk == KK - 1) {
				// Before reading tile kt+1: its copies must have landed
				// and be visible to every warp. Every warp has loaded all
				// of tile kt's fragments before this barrier, so tile
				// kt+1's step 0 may refill tile kt's stage.
				cp_async_wait<STAGES - 2>();
				__syncthreads();
				rs = rs + 1 == STAGES ? 0 : rs + 1;
			}
			loadFrags((kk + 1) & 1, sbase + rs * STAGE, (kk + 1) % KK);
			if (kk == 0) {
				const int nk = kt + STAGES - 1;
				if (nk < KT) {
					const u32 st = sbase + ws * STAGE;
					la.load(st, nk * TK, aligned);
					lb.load(st + A_BYTES, nk * TK, aligned);
				}
				cp_async_commit();
				ws = ws + 1 == STAGES ? 0 : ws + 1;
			}
			// Only k16 steps that hold part of K: every tile issues
			// exactly ceil(K/16) mma per output element.
			if (!lastTile || kk * 16 < kleft) {
#pragma unroll
				for (int s = 0; s < NACC; s++)
#pragma unroll
					for (int i = 0; i < MI; i++)
#pragma unroll
						for (int p = 0; p < NP; p++) {
							mma16816(acc[s][i][2 * p], af[kk & 1][i], bf[kk & 1][s][p][0], bf[kk & 1][s][p][1]);
							mma16816(acc[s][i][2 * p + 1], af[kk & 1][i], bf[kk & 1][s][p][2], bf[kk & 1][s][p][3]);
						}
			}
		}
	}
	cp_async_wait<0>();
}

template <int BM> __device__ __forceinline__ void zero_acc(float (&acc)[NACC][Geo<BM>::MI][Geo<BM>::NI][4]) {
#pragma unroll
	for (int s = 0; s < NACC; s++)
#pragma unroll
		for (int i = 0; i < Geo<BM>::MI; i++)
#pragma unroll
			for (int j = 0; j < Geo<BM>::NI; j++)
#pragma unroll
				for (int e = 0; e < 4; e++)
					acc[s][i][j][e] = 0.0f;
}
