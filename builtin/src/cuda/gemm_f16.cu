// gemm_f16 for CUDA: Y[M,N] = X[M,K] · W[N,K]^T.
//
// X (M×K) and W (N×K) are row-major fp16 (K contiguous); Y (M×N) is row-major
// fp32, or fp16 when Y_DTYPE is 1 (kernel.DType codes: 1 fp16, 3 fp32; the
// output type chosen for the sweep).
//
// Entry point (tilefit's one CUDA convention: operand pointers, then int64
// dimensions, in the order of the family's Plan):
//   extern "C" __global__ void tilefit_gemm_f16(const __half *X, const __half *W, void *Y,
//                                               long long M, long long N, long long K);
// grid ceil(M/TM)·ceil(N/TN) blocks of WARPS·32 threads, STAGES·(TM+TN)·TK·2
// bytes of dynamic shared memory (builtin/cuda.go's Plan). Accumulation is fp32 on the tensor cores
// (mma.sync.m16n8k16, fragments loaded with ldmatrix from shared memory that a
// cp.async pipeline of STAGES stages fills).
//
// One block owns a TM×TN tile of Y and walks K in steps of TK; WARPS warps
// split the tile as WM×WN warp tiles of (TM/WM)×(TN/WN) (the most square
// layout whose warp tiles are multiples of 16×16; builtin/cuda.go has the same
// rule). Block order: SWZ 0 row-major over (tile row, tile column), 1 GROUP_M
// (GROUP tile rows walked column by column), 2 GROUP_N (GROUP tile columns
// walked row by row), 3 transposed (column-major).
//
// Reduction order, the same in every tile: every output element is
//   acc = 0; for k0 = 0, 16, 32, ... < K: acc = mma(acc, X[m, k0:k0+16], W[n, k0:k0+16])
// with elements past K read as zero. K is never split across warps or blocks,
// so every tile produces the same bits.
//
// FAULT plants a bug for the tests: 1 leaves the rows of the last, partial
// block row unwritten; 2 drops the cp.async wait and the barrier and reads
// the stage being refilled (shared memory read before the copies into it
// were waited for and published); 3 writes one element past the end of Y.
//
// No headers are included: fp16 values are handled as raw 16-bit patterns and
// converted with PTX, so the source compiles with NVRTC alone. The text
// compiled (and printed by "tilefit families source gemm_f16") is
// ptx_common.cuh, the PTX wrappers this file shares with gemm_stream.cu and
// the fused families, followed by this file, with #line directives.

#ifndef TM
#define TM 128
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
#define STAGES 4
#endif
#ifndef SWZ
#define SWZ 0
#endif
#ifndef GROUP
#define GROUP 8
#endif
#ifndef Y_DTYPE
#define Y_DTYPE 3
#endif
#if Y_DTYPE != 1 && Y_DTYPE != 3
#error "Y_DTYPE must be 1 (fp16) or 3 (fp32)"
#endif
#define OUT_F16 (Y_DTYPE == 1)
#ifndef TAIL
#define TAIL 0
#endif
#ifndef FAULT
#define FAULT 0
#endif

// __half is an fp16 bit pattern (the layout of cuda_fp16.h's __half), unless
// that header was included.
#ifndef __CUDA_FP16_H__
struct __align__(2) __half {
	unsigned short x;
};
#endif

// u32 and the PTX wrappers (smem_addr, cp.async, st_shared16, ldmatrix_x4,
// mma16816, f2h) are ptx_common.cuh's, which builtin/cuda.go puts before this
// text.

constexpr int NT = WARPS * 32;

// Layout is a WM×WN arrangement of warps over the block tile.
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

// pick_layout returns the WM×WN = WARPS layout whose warp tile (bm/WM)×(TN/WN)
// has both sides multiples of 16 and is the most square; ties go to larger WM.
// bm is TM, or TAIL for the row-tail blocks.
__host__ __device__ constexpr Layout pick_layout(int bm) {
	Layout best = {0, 0};
	int bestScore = 1 << 30;
	for (int wm = WARPS; wm >= 1; wm /= 2) {
		int wn = WARPS / wm;
		if (bm % (wm * 16) != 0 || TN % (wn * 16) != 0)
			continue;
		int s = log2ratio(bm / wm, TN / wn);
		if (s < bestScore) {
			bestScore = s;
			best.wm = wm;
			best.wn = wn;
		}
	}
	return best;
}

// Tile is the geometry of a BM-row block tile (BM = TM, or TAIL).
template <int BM> struct Tile {
	static constexpr Layout LAYOUT = pick_layout(BM);
	static constexpr int WM = LAYOUT.wm > 0 ? LAYOUT.wm : 1;
	static constexpr int WN = LAYOUT.wn > 0 ? LAYOUT.wn : 1;
	static_assert(LAYOUT.wm > 0 && LAYOUT.wn > 0, "no warp layout divides the tile");
	static constexpr int WTM = BM / WM; // warp tile rows
	static constexpr int WTN = TN / WN; // warp tile columns
	static constexpr int MI = WTM / 16; // m16 fragments per warp
	static constexpr int NI = WTN / 8;  // n8 fragments per warp
	static constexpr int NP = WTN / 16; // pairs of n8 fragments (one ldmatrix.x4 each)
	static constexpr int A_BYTES = BM * TK * 2;
	static constexpr int B_BYTES = TN * TK * 2;
	static constexpr int STAGE_BYTES = A_BYTES + B_BYTES;
};

// Row tail (TAIL > 0 and < TM, M % TM ≠ 0): the last, partial row of TM-row
// blocks is replaced by ceil((M % TM)/TAIL) blocks of TAIL rows
// (kernel.RowBlocks counts the same).
constexpr bool TAIL_ON = TAIL > 0 && TAIL < TM;
constexpr int TAIL_ROWS = TAIL_ON ? TAIL : TM;
constexpr int CPR = TK / 8; // 16-byte chunks per shared-memory row
static_assert(TK % 32 == 0, "TK must be a multiple of 32");
static_assert(STAGES >= 2, "at least two stages");

// swz maps chunk c of shared-memory row r to its stored position, so that
// the 8 rows one ldmatrix phase reads (same logical chunk) hit 8 distinct
// 16-byte bank groups, and so do cp.async writes.
__device__ __forceinline__ int swz(int r, int c) {
	if (CPR == 4)
		return c ^ ((r >> 1) & 3);
	return c ^ (r & 7);
}

// A Loader copies one operand's tile, rows [row0, row0+ROWS) × k [k0, k0+TK)
// of G (rows × K, row-major), into a swizzled shared-memory stage; rows ≥
// rows and k ≥ K read as zero. Thread tid always moves chunk tid % CPR of
// rows tid / CPR + p·RPP (p = 0, 1, ...), so the source pointer and the row
// checks are computed once per block.
//
// aligned (K % 8 == 0 and G 16-byte aligned): one 16-byte cp.async per
// chunk, zero-filled (src-size 0) when out of range. Otherwise guarded
// 2-byte loads and a plain 16-byte shared store.
template <int ROWS> struct Loader {
	static constexpr int RPP = NT / CPR;                // rows per pass
	static constexpr int PASSES = (ROWS + RPP - 1) / RPP;
	const __half *G;
	const __half *src; // G + (row0 + rt)·K + c·8
	int rows, row0, K, rt, c;
	unsigned long long valid; // bit p: row rt + p·RPP exists
	static_assert(PASSES <= 64, "too many rows per thread");

	__device__ __forceinline__ Loader(const __half *G_, int rows_, int row0_, int K_) : G(G_), rows(rows_), row0(row0_), K(K_) {
		rt = threadIdx.x / CPR;
		c = threadIdx.x % CPR;
		src = G + (size_t)(row0 + rt) * K + c * 8;
		valid = 0;
#pragma unroll
		for (int p = 0; p < PASSES; p++)
			if (rt + p * RPP < ROWS && row0 + rt + p * RPP < rows)
				valid |= 1ull << p;
	}

	__device__ __forceinline__ void load(u32 sbase, int k0, bool aligned) const {
		const int gk = k0 + c * 8;
		if (aligned) {
			// Pass p: row rt + p·RPP, source one pass stride (RPP·K
			// elements) further, destination RPP rows further (the same
			// swizzle when RPP is a multiple of 8).
			const __half *g = src + k0;
			const size_t stride = (size_t)RPP * K;
			const bool kin = gk < K;
#pragma unroll
			for (int p = 0; p < PASSES; p++) {
				const int r = rt + p * RPP;
				if (ROWS % RPP != 0 && r >= ROWS)
					break;
				u32 dst;
				if constexpr (RPP % 8 == 0)
					dst = sbase + (u32)((rt * CPR + swz(rt, c)) * 16) + (u32)(p * RPP * CPR * 16);
				else
					dst = sbase + (u32)((r * CPR + swz(r, c)) * 16);
				const bool in = ((valid >> p) & 1ull) && kin;
				cp_async16(dst, in ? g : G, in ? 16 : 0);
				g += stride;
			}
			return;
		}
#pragma unroll 1
		for (int p = 0; p < PASSES; p++) {
			const int r = rt + p * RPP;
			if (ROWS % RPP != 0 && r >= ROWS)
				break;
			const u32 dst = sbase + (u32)((r * CPR + swz(r, c)) * 16);
			const bool rowOK = (valid >> p) & 1ull;
			const unsigned short *g = reinterpret_cast<const unsigned short *>(src) + (size_t)p * RPP * K + k0;
			u32 w[4];
#pragma unroll
			for (int e = 0; e < 4; e++) {
				const int ka = gk + 2 * e, kb = ka + 1;
				const u32 lo = (rowOK && ka < K) ? g[2 * e] : 0u;
				const u32 hi = (rowOK && kb < K) ? g[2 * e + 1] : 0u;
				w[e] = lo | (hi << 16);
			}
			st_shared16(dst, w[0], w[1], w[2], w[3]);
		}
	}
};

__device__ __forceinline__ void store2(void *Y, int M, int N, int r, int c, float v0, float v1) {
#if FAULT == 1
	if (r >= (M / TM) * TM)
		return;
#endif
	if (r >= M)
		return;
	const size_t o = (size_t)r * N + c;
#if OUT_F16
	unsigned short *y = reinterpret_cast<unsigned short *>(Y);
	if ((N & 1) == 0 && c + 1 < N) {
		const u32 p = (u32)f2h(v0) | ((u32)f2h(v1) << 16);
		*reinterpret_cast<u32 *>(y + o) = p;
	} else {
		if (c < N)
			y[o] = f2h(v0);
		if (c + 1 < N)
			y[o + 1] = f2h(v1);
	}
#else
	float *y = reinterpret_cast<float *>(Y);
	if ((N & 1) == 0 && c + 1 < N) {
		*reinterpret_cast<float2 *>(y + o) = make_float2(v0, v1);
	} else {
		if (c < N)
			y[o] = v0;
		if (c + 1 < N)
			y[o + 1] = v1;
	}
#endif
}

// gemm_tile computes the BM-row block tile at (m0, n0) of Y.
template <int BM>
__device__ __forceinline__ void gemm_tile(const __half *__restrict__ X, const __half *__restrict__ W, void *__restrict__ Y, int M, int N, int K, int m0, int n0) {
	extern __shared__ __align__(128) unsigned char smem[];
	typedef Tile<BM> T;
	constexpr int WN = T::WN, WTM = T::WTM, WTN = T::WTN, MI = T::MI, NI = T::NI, NP = T::NP;
	constexpr int A_BYTES = T::A_BYTES, STAGE_BYTES = T::STAGE_BYTES;

	const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
	const int wm = warp / WN, wn = warp % WN;
	const bool aligned = (K % 8 == 0) && ((((size_t)X) | ((size_t)W)) & 15) == 0;
	const u32 sbase = smem_addr(smem);
	const int KT = (K + TK - 1) / TK;

	float acc[MI][NI][4];
#pragma unroll
	for (int i = 0; i < MI; i++)
#pragma unroll
		for (int j = 0; j < NI; j++)
#pragma unroll
			for (int e = 0; e < 4; e++)
				acc[i][j][e] = 0.0f;

	const Loader<BM> la(X, M, m0, K);
	const Loader<TN> lb(W, N, n0, K);

	// Prologue: tiles 0 .. STAGES-2 into stages 0 .. STAGES-2, one commit
	// group each (possibly empty).
#pragma unroll
	for (int s = 0; s < STAGES - 1; s++) {
		if (s < KT) {
			const u32 st = sbase + (u32)(s * STAGE_BYTES);
			la.load(st, s * TK, aligned);
			lb.load(st + A_BYTES, s * TK, aligned);
		}
		cp_async_commit();
	}

	// Per-lane ldmatrix byte offsets within a stage (fragment layouts of
	// mma.m16n8k16): A rows aRow + 16·i at chunk 2·kk + aHalf, B rows bRow +
	// 16·p at chunk 2·kk + bHalf. Adding 16 rows leaves the bits swz reads
	// unchanged, so fragment i (p) adds the constant 16·i·TK·2 bytes, and
	// the chunk of step kk is stored at 16·((2·kk) ^ g) with g = swz(row,
	// half) per lane: offset = base + ((32·kk) ^ 16·g).
	constexpr u32 ROW16 = 16 * TK * 2; // bytes of 16 shared-memory rows
	const int aRow = wm * WTM + (lane & 15);
	const int bRow = wn * WTN + (lane & 7) + ((lane >> 4) << 3);
	const u32 aBase = (u32)(aRow * CPR * 16), aSw = (u32)(swz(aRow, lane >> 4) * 16);
	const u32 bBase = (u32)(A_BYTES + bRow * CPR * 16), bSw = (u32)(swz(bRow, (lane >> 3) & 1) * 16);

	// Fragments are double-buffered: those of k16 step kk+1 (of the next
	// tile after the last step) load while step kk's mma run.
	u32 af[2][MI][4], bf[2][NP][4];
	auto loadFrags = [&](int buf, u32 stageAddr, int kk) {
		const u32 a = stageAddr + aBase + (((u32)kk * 32u) ^ aSw);
		const u32 b = stageAddr + bBase + (((u32)kk * 32u) ^ bSw);
#pragma unroll
		for (int i = 0; i < MI; i++)
			ldmatrix_x4(a + i * ROW16, af[buf][i][0], af[buf][i][1], af[buf][i][2], af[buf][i][3]);
#pragma unroll
		for (int p = 0; p < NP; p++)
			ldmatrix_x4(b + p * ROW16, bf[buf][p][0], bf[buf][p][1], bf[buf][p][2], bf[buf][p][3]);
	};

	constexpr int KK = TK / 16;
	u32 rs = 0;          // stage being read
	u32 ws = STAGES - 1; // stage the next tile is copied into
#if FAULT != 2
	cp_async_wait<STAGES - 2>();
	__syncthreads();
#endif
	loadFrags(0, sbase, 0);
	for (int kt = 0; kt < KT; kt++) {
		const bool lastTile = kt == KT - 1;
		const int kleft = K - kt * TK;
#pragma unroll
		for (int kk = 0; kk < KK; kk++) {
			if (kk == KK - 1) {
				// Before reading tile kt+1: its copies must have landed
				// (wait) and be visible to every warp (barrier). Every
				// warp has loaded all of tile kt's fragments before this
				// barrier, so tile kt+1's step 0 may refill tile kt's stage.
#if FAULT != 2
				cp_async_wait<STAGES - 2>();
				__syncthreads();
				rs = rs + 1 == STAGES ? 0 : rs + 1;
#else
				// Planted fault: read the stage being refilled, with no wait
				// and no barrier.
				rs = ws;
#endif
			}
			loadFrags((kk + 1) & 1, sbase + rs * (u32)STAGE_BYTES, (kk + 1) % KK);
			if (kk == 0) {
				const int nk = kt + STAGES - 1;
				if (nk < KT) {
					const u32 st = sbase + ws * (u32)STAGE_BYTES;
					la.load(st, nk * TK, aligned);
					lb.load(st + A_BYTES, nk * TK, aligned);
				}
				cp_async_commit();
				ws = ws + 1 == STAGES ? 0 : ws + 1;
			}
			// Only k16 steps that hold part of K: every tile issues exactly
			// ceil(K/16) mma per output element, whatever TK is.
			if (!lastTile || kk * 16 < kleft) {
#pragma unroll
				for (int i = 0; i < MI; i++)
#pragma unroll
					for (int p = 0; p < NP; p++) {
						mma16816(acc[i][2 * p], af[kk & 1][i], bf[kk & 1][p][0], bf[kk & 1][p][1]);
						mma16816(acc[i][2 * p + 1], af[kk & 1][i], bf[kk & 1][p][2], bf[kk & 1][p][3]);
					}
			}
		}
	}
	cp_async_wait<0>();

	// Epilogue: each lane holds rows (lane/4, lane/4+8) and columns
	// 2·(lane%4), +1 of every m16n8 fragment.
#pragma unroll
	for (int i = 0; i < MI; i++) {
		const int r = m0 + wm * WTM + i * 16 + (lane >> 2);
#pragma unroll
		for (int j = 0; j < NI; j++) {
			const int c = n0 + wn * WTN + j * 8 + (lane & 3) * 2;
			store2(Y, M, N, r, c, acc[i][j][0], acc[i][j][1]);
			store2(Y, M, N, r + 8, c, acc[i][j][2], acc[i][j][3]);
		}
	}
#if FAULT == 3
	if (blockIdx.x == 0 && tid == 0) {
#if OUT_F16
		reinterpret_cast<unsigned short *>(Y)[(size_t)M * N + 5] = 0;
#else
		reinterpret_cast<float *>(Y)[(size_t)M * N + 5] = 0.0f;
#endif
	}
#endif
}

extern "C" __global__ void __launch_bounds__(NT) tilefit_gemm_f16(const __half *__restrict__ X, const __half *__restrict__ W, void *__restrict__ Y, long long M64, long long N64, long long K64) {
	const int M = (int)M64, N = (int)N64, K = (int)K64;
	const int full = M / TM;
	const bool tails = TAIL_ON && M % TM != 0;
	const int tilesM = tails ? full + (M % TM + TAIL_ROWS - 1) / TAIL_ROWS : (M + TM - 1) / TM;
	const int tilesN = (N + TN - 1) / TN;
	const int bid = blockIdx.x;
	int bm, bn;
#if SWZ == 1
	{
		const int per = GROUP * tilesN, first = (bid / per) * GROUP;
		const int gs = min(tilesM - first, GROUP), l = bid % per;
		bm = first + l % gs;
		bn = l / gs;
	}
#elif SWZ == 2
	{
		const int per = GROUP * tilesM, first = (bid / per) * GROUP;
		const int gs = min(tilesN - first, GROUP), l = bid % per;
		bn = first + l % gs;
		bm = l / gs;
	}
#elif SWZ == 3
	bm = bid % tilesM;
	bn = bid / tilesM;
#else
	bm = bid / tilesN;
	bn = bid % tilesN;
#endif
	if (bm >= tilesM || bn >= tilesN)
		return;
	const int n0 = bn * TN;
	if constexpr (TAIL_ON) {
		if (tails && bm >= full) {
			gemm_tile<TAIL_ROWS>(X, W, Y, M, N, K, full * TM + (bm - full) * TAIL_ROWS, n0);
			return;
		}
	}
	gemm_tile<TM>(X, W, Y, M, N, K, bm * TM, n0);
}
