// gemm_stream for CUDA: Y[M,N] = X[M,K] · W[N,K]^T for small M (decode) and
// skinny N, streaming the weights.
//
// X (M×K) and W (N×K) are row-major fp16 (K contiguous); Y (M×N) is row-major
// fp32, or fp16 when Y_DTYPE is 1 (kernel.DType codes: 1 fp16, 3 fp32).
//
// Swap AB: the kernel computes Yᵀ = W·Xᵀ with mma.sync.m16n8k16 taking W as
// the A operand (16 weight rows fill the mma's M side) and X as the B
// operand (up to 8 tokens per mma fill its n8 side), so a call with M = 1
// wastes 7/8 of a small mma instead of 15/16 of a big one, and every byte of
// W is read once per MT tokens.
//
// Entry point (tilefit's CUDA convention: operand pointers, then int64
// dimensions, in the order of builtin/cuda_stream.go's Plan):
//   extern "C" __global__ void tilefit_gemm_stream(const __half *X, const __half *W, void *Y,
//                                                  long long M, long long N, long long K);
// grid (ceil(N/BN), ceil(M/MT)), WARPS·32 threads, STAGES·(BN+MT)·TK·2 bytes
// of dynamic shared memory.
//
// A block owns BN rows of W (weight rows n0 .. n0+BN) and MT tokens (rows
// m0 .. m0+MT of X) and walks K in steps of TK through a STAGES-deep cp.async
// pipeline (16-byte copies, zero-filled past N, M and K). Warp w owns weight
// rows 16·RW·w .. 16·RW·(w+1) of the block (RW = BN/(16·WARPS) m16 row
// groups) and every token of the block (MT/8 n8 groups); its fragments come
// from shared memory through ldmatrix.
//
// Reduction order, the same as the mma.sync family gemm_f16 and the wgmma
// family gemm_wgmma: every output element is
//   acc = 0; for k0 = 0, 16, 32, ... < K: acc = mma(acc, W[n, k0:k0+16], X[m, k0:k0+16])
// with elements past K read as zero; K is never split. The mma's A and B
// swap places against gemm_f16 (W is A here, X is B there); each element is
// the same 16 products at the same k positions added to the same
// accumulator, so the class is gemm_f16's if the tensor core treats its two
// operands alike — measured on the H200 (docs/results/h200-wgmma.md).
//
// PDL 1 (sm_90): the kernel lets the next kernel in the stream start its
// launch early (griddepcontrol.launch_dependents) and waits for the previous
// one (griddepcontrol.wait) before it reads X or W or writes Y; the Plan
// launches it with programmatic stream serialisation.
//
// No headers are included: fp16 values are handled as raw 16-bit patterns and
// converted with PTX, so the source compiles with NVRTC alone. The text
// compiled (and printed by "tilefit families source gemm_stream") is
// ptx_common.cuh, the PTX wrappers this file shares with gemm_f16.cu and the
// fused families, followed by this file, with #line directives.

#ifndef BN
#define BN 64
#endif
#ifndef MT
#define MT 8
#endif
#ifndef WARPS
#define WARPS 4
#endif
#ifndef TK
#define TK 64
#endif
#ifndef STAGES
#define STAGES 8
#endif
#ifndef PDL
#define PDL 0
#endif
#ifndef Y_DTYPE
#define Y_DTYPE 3
#endif
#if Y_DTYPE != 1 && Y_DTYPE != 3
#error "Y_DTYPE must be 1 (fp16) or 3 (fp32)"
#endif
#define OUT_F16 (Y_DTYPE == 1)
#if PDL && defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#error "PDL needs sm_90 (griddepcontrol)"
#endif

#ifndef __CUDA_FP16_H__
struct __align__(2) __half {
	unsigned short x;
};
#endif

constexpr int NT = WARPS * 32;
constexpr int RW = BN / (16 * WARPS); // m16 weight-row groups per warp
constexpr int NJ = MT / 8;            // n8 token groups
constexpr int CPR = TK / 8;           // 16-byte chunks per shared-memory row
constexpr int W_BYTES = BN * TK * 2;
constexpr int X_BYTES = MT * TK * 2;
constexpr int STAGE_BYTES = W_BYTES + X_BYTES;
constexpr int KK = TK / 16;
static_assert(RW >= 1 && RW * 16 * WARPS == BN, "BN must be a multiple of 16·WARPS");
static_assert(MT == 8 || MT == 16 || MT == 32, "MT must be 8, 16 or 32");
static_assert(TK == 32 || TK == 64 || TK == 128, "TK must be 32, 64 or 128");
static_assert(STAGES >= 2, "at least two stages");

// swz maps chunk c of shared-memory row r to its stored position, so that
// the 8 rows one ldmatrix phase reads (same logical chunk) hit 8 distinct
// 16-byte bank groups (gemm_f16's layout; with 16 chunks a row, TK 128, the
// low three bits of c are permuted within each half of the row).
__device__ __forceinline__ int swz(int r, int c) {
	if (CPR == 4)
		return c ^ ((r >> 1) & 3);
	return c ^ (r & 7);
}

// ldmatrix_x2 loads two 8×8 b16 matrices (the token fragments). The other
// PTX wrappers (smem_addr, cp.async, ldmatrix_x4, mma16816, f2h) and u32 are
// ptx_common.cuh's, which builtin/cuda_stream.go puts before this text.
__device__ __forceinline__ void ldmatrix_x2(u32 addr, u32 &r0, u32 &r1) {
	asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];\n" : "=r"(r0), "=r"(r1) : "r"(addr) : "memory");
}

// A Loader copies rows [row0, row0+ROWS) × k [k0, k0+TK) of G (rows × K,
// row-major) into a swizzled shared-memory region; rows ≥ rows and k ≥ K
// read as zero. Thread tid moves chunk tid % CPR of rows tid / CPR + p·RPP
// (p = 0, 1, ...). aligned (K % 8 == 0 and G 16-byte aligned): one 16-byte
// cp.async per chunk, zero-filled (src-size 0) when out of range; otherwise
// guarded 2-byte loads and a plain 16-byte shared store.
template <int ROWS> struct Loader {
	static constexpr int RPP = NT / CPR;
	static constexpr int PASSES = (ROWS + RPP - 1) / RPP;
	const __half *G;
	const __half *src;
	int K, rt, c;
	unsigned long long valid; // bit p: row rt + p·RPP exists
	static_assert(PASSES <= 64, "too many rows per thread");

	__device__ __forceinline__ Loader(const __half *G_, int rows, int row0, int K_) : G(G_), K(K_) {
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
			const __half *g = src + k0;
			const size_t stride = (size_t)RPP * K;
			const bool kin = gk < K;
#pragma unroll
			for (int p = 0; p < PASSES; p++) {
				const int r = rt + p * RPP;
				if (ROWS % RPP != 0 && r >= ROWS)
					break;
				const u32 dst = sbase + (u32)((r * CPR + swz(r, c)) * 16);
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

// store writes Y[m, n] = v (fp16 when OUT_F16, else fp32) when inside.
__device__ __forceinline__ void store(void *Y, int M, int N, int m, int n, float v) {
	if (m >= M || n >= N)
		return;
	const size_t o = (size_t)m * N + n;
#if OUT_F16
	reinterpret_cast<unsigned short *>(Y)[o] = f2h(v);
#else
	reinterpret_cast<float *>(Y)[o] = v;
#endif
}

// FragAddr holds a lane's ldmatrix offsets in a stage. A (W): rows aRow +
// 16·i at chunk 2·kk + lane/16: the 16×16 A fragment of mma.m16n8k16. B
// (X): token rows bRow (+16 per x4 pair) at chunk 2·kk + (lane/8)%2: an x4
// gives b0, b1 of tokens 0..7 and of tokens 8..15, an x2 those of tokens
// 0..7. Adding 16 rows leaves the swizzle bits unchanged, and chunk 2·kk + h
// is stored at 16·((2·kk) ^ swz(row, h)).
struct FragAddr {
	u32 aBase, aSw, bBase, bSw;
};

constexpr u32 ROW16 = 16 * TK * 2; // bytes of 16 shared-memory rows

// load_frags reads the fragments of the whole tile in stage st into buffer
// BUF (a compile-time index: registers, never local memory).
template <int BUF> __device__ __forceinline__ void load_frags(u32 (&af)[2][KK][RW][4], u32 (&bf)[2][KK][NJ][2], u32 st, const FragAddr &fa) {
#pragma unroll
	for (int kk = 0; kk < KK; kk++) {
#pragma unroll
		for (int i = 0; i < RW; i++)
			ldmatrix_x4(st + fa.aBase + (((u32)kk * 32u) ^ fa.aSw) + i * ROW16, af[BUF][kk][i][0], af[BUF][kk][i][1], af[BUF][kk][i][2], af[BUF][kk][i][3]);
		if constexpr (NJ == 1) {
			ldmatrix_x2(st + fa.bBase + (((u32)kk * 32u) ^ fa.bSw), bf[BUF][kk][0][0], bf[BUF][kk][0][1]);
		} else {
#pragma unroll
			for (int p = 0; p < NJ / 2; p++)
				ldmatrix_x4(st + fa.bBase + (((u32)kk * 32u) ^ fa.bSw) + p * ROW16, bf[BUF][kk][2 * p][0], bf[BUF][kk][2 * p][1], bf[BUF][kk][2 * p + 1][0], bf[BUF][kk][2 * p + 1][1]);
		}
	}
}

// step is iteration kt of the k loop, tile kt's fragments in buffer CUR:
// wait until tile kt+1 has landed and, after the barrier, everyone's copies
// are visible — and every warp has read tile kt's fragments (the iteration
// before), so tile kt's stage rs is refilled with tile kt+STAGES; read tile
// kt+1's fragments into the other buffer; run tile kt's mma.
template <int CUR>
__device__ __forceinline__ void step(float (&acc)[RW][NJ][4], u32 (&af)[2][KK][RW][4], u32 (&bf)[2][KK][NJ][2], int &rs, int kt, int KT, int K, u32 sbase, const FragAddr &fa,
				     const Loader<BN> &lw, const Loader<MT> &lx, bool aligned) {
	// Committed: tiles 0 .. kt+STAGES-1; tile kt+1 is complete when at
	// most STAGES-2 groups are pending.
	cp_async_wait<STAGES - 2>();
	__syncthreads();
	const int nk = kt + STAGES;
	if (nk < KT) {
		const u32 st = sbase + (u32)(rs * STAGE_BYTES);
		lw.load(st, nk * TK, aligned);
		lx.load(st + W_BYTES, nk * TK, aligned);
	}
	cp_async_commit();
	rs = rs + 1 == STAGES ? 0 : rs + 1;
	if (kt + 1 < KT)
		load_frags<CUR ^ 1>(af, bf, sbase + (u32)(rs * STAGE_BYTES), fa);
	// Only k16 steps that hold part of K: ceil(K/16) mma per output
	// element, as gemm_f16.
	const int kleft = K - kt * TK;
#pragma unroll
	for (int kk = 0; kk < KK; kk++) {
		if (kk * 16 < kleft) {
#pragma unroll
			for (int i = 0; i < RW; i++)
#pragma unroll
				for (int j = 0; j < NJ; j++)
					mma16816(acc[i][j], af[CUR][kk][i], bf[CUR][kk][j][0], bf[CUR][kk][j][1]);
		}
	}
}

extern "C" __global__ void __launch_bounds__(NT) tilefit_gemm_stream(const __half *__restrict__ X, const __half *__restrict__ W, void *__restrict__ Y, long long M64, long long N64, long long K64) {
	const int M = (int)M64, N = (int)N64, K = (int)K64;
	extern __shared__ __align__(128) unsigned char smem[];
#if PDL
	// The next kernel may begin its launch; this one waits for the previous
	// kernel's writes before it touches X, W or Y.
	asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
	asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
	const int n0 = blockIdx.x * BN, m0 = blockIdx.y * MT;
	const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
	const bool aligned = (K % 8 == 0) && ((((size_t)X) | ((size_t)W)) & 15) == 0;
	const u32 sbase = smem_addr(smem);
	const int KT = (K + TK - 1) / TK;

	float acc[RW][NJ][4];
#pragma unroll
	for (int i = 0; i < RW; i++)
#pragma unroll
		for (int j = 0; j < NJ; j++)
#pragma unroll
			for (int e = 0; e < 4; e++)
				acc[i][j][e] = 0.0f;

	const Loader<BN> lw(W, N, n0, K);
	const Loader<MT> lx(X, M, m0, K);

	// ldmatrix offsets (FragAddr).
	const int aRow = warp * 16 * RW + (lane & 15);
	const u32 aBase = (u32)(aRow * CPR * 16), aSw = (u32)(swz(aRow, lane >> 4) * 16);
	const int bRow = NJ == 1 ? (lane & 7) : (lane & 7) + ((lane >> 4) << 3);
	const u32 bBase = (u32)(W_BYTES + bRow * CPR * 16), bSw = (u32)(swz(bRow, (lane >> 3) & 1) * 16);

	// Fragments of a whole tile, double-buffered: tile kt+1's are read
	// from shared memory while tile kt's mma run.
	u32 af[2][KK][RW][4], bf[2][KK][NJ][2];
	const FragAddr fa = {aBase, aSw, bBase, bSw};

	// Pipeline: tile t lives in stage t % STAGES. The prologue issues tiles
	// 0 .. STAGES-1 (one commit group each, possibly empty) and reads tile
	// 0's fragments; then step() per tile, unrolled by two so that the
	// fragment buffer index is a constant.
#pragma unroll
	for (int s = 0; s < STAGES; s++) {
		if (s < KT) {
			const u32 st = sbase + (u32)(s * STAGE_BYTES);
			lw.load(st, s * TK, aligned);
			lx.load(st + W_BYTES, s * TK, aligned);
		}
		cp_async_commit();
	}
	cp_async_wait<STAGES - 1>();
	__syncthreads();
	load_frags<0>(af, bf, sbase, fa);

	int rs = 0; // stage of tile kt
	for (int kt = 0; kt < KT; kt += 2) {
		step<0>(acc, af, bf, rs, kt, KT, K, sbase, fa, lw, lx, aligned);
		if (kt + 1 < KT)
			step<1>(acc, af, bf, rs, kt + 1, KT, K, sbase, fa, lw, lx, aligned);
	}
	cp_async_wait<0>();

	// Epilogue: D = Yᵀ; a lane holds D rows (weight rows) lane/4 and
	// lane/4 + 8 and columns (tokens) 2·(lane%4), +1 of each m16n8 tile.
#pragma unroll
	for (int i = 0; i < RW; i++) {
		const int n = n0 + warp * 16 * RW + i * 16 + (lane >> 2);
#pragma unroll
		for (int j = 0; j < NJ; j++) {
			const int m = m0 + j * 8 + 2 * (lane & 3);
			store(Y, M, N, m, n, acc[i][j][0]);
			store(Y, M, N, m + 1, n, acc[i][j][1]);
			store(Y, M, N, m, n + 8, acc[i][j][2]);
			store(Y, M, N, m + 1, n + 8, acc[i][j][3]);
		}
	}
}
