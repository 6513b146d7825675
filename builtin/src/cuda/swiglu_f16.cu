// swiglu_f16 for CUDA: the shared expert's gate/up projection with SwiGLU
// (compiled after fused_common.cu, which builtin/fused.go prepends).
//
//   g = X[M,K]·Wg[N,K]^T,  u = X·Wu^T,  h[M,N] = silu(g) ⊙ u,  silu(g) = g / (1 + e^-g)
//
// X, Wg, Wu row-major fp16 (K contiguous); h [M,N] row-major fp16.
//
// CHAIN=0, the fused kernel (one launch, two accumulator sets per warp: set 0
// multiplies by Wg, set 1 by Wu, from one shared-memory stage holding X's TM
// rows and TN rows of each weight):
//   tilefit_swiglu(X, Wg, Wu, h, M, N, K)
// CHAIN=1, the unfused chain (three launches, timed as one candidate):
//   tilefit_swiglu_gemm(X, Wg, G, M, N, K)   G [M,N] fp32 scratch
//   tilefit_swiglu_gemm(X, Wu, U, M, N, K)   U [M,N] fp32 scratch
//   tilefit_swiglu_act(G, U, h, M, N)
//
// THE EPILOGUE'S ARITHMETIC (fp32; every step rounded to nearest except the
// hardware exponential; act of epilogue_common.cuh, which the wgmma family
// swiglu_wgmma and the vendor baseline call too), for g and u the fp32
// accumulators (the core's k16 order):
//   e = ex2.approx.ftz(mul.rn(g, -log2(e)))     // e^-g
//   s = div.rn(g, add.rn(1, e));  h = fp16_rn(mul.rn(s, u))
// Both ways use this one function (act), so within each way every tile gives
// the same bits; the two ways are declared separate numerics classes (a
// chain through fp32 scratch need not equal the fused kernel, though with
// this core and this epilogue it is expected to).
//
// Block order: row-major over (tile row, tile column); with TAIL > 0 the last
// row of blocks runs TAIL-row tiles when M % TM ≠ 0.

#ifndef CHAIN
#define CHAIN 0
#endif

struct RowsMap {
	const f16_t *A;
	int rows, K, r0;
	__device__ __forceinline__ const f16_t *operator()(int r) const {
		return r0 + r < rows ? A + (size_t)(r0 + r) * K : nullptr;
	}
};

// GU maps stage rows [0, TN) to Wg's rows n0 + r and [TN, 2·TN) to Wu's.
struct GUMap {
	const f16_t *Wg, *Wu;
	int N, K, n0;
	__device__ __forceinline__ const f16_t *operator()(int r) const {
		const f16_t *W = r < TN ? Wg : Wu;
		const int n = n0 + (r < TN ? r : r - TN);
		return n < N ? W + (size_t)n * K : nullptr;
	}
};

// store_tile writes warp (wm, wn)'s outputs of a BM-row block at (m0, n0):
// out(m, n, set0, set1) gives the value, put(o, v0, v1, pair) stores two
// adjacent columns.
template <int BM, class Put>
__device__ __forceinline__ void store_tile(const float (&acc)[NACC][Geo<BM>::MI][Geo<BM>::NI][4], int M, int N, int m0, int n0, Put put) {
	typedef Geo<BM> G;
	const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
	const int wm = warp / G::WN, wn = warp % G::WN;
#pragma unroll
	for (int i = 0; i < G::MI; i++)
#pragma unroll
		for (int half = 0; half < 2; half++) {
			const int m = m0 + wm * G::WTM + i * 16 + (lane >> 2) + 8 * half;
			if (m >= M)
				continue;
#pragma unroll
			for (int j = 0; j < G::NI; j++) {
				const int n = n0 + wn * G::WTN + j * 8 + (lane & 3) * 2;
				if (n >= N)
					continue;
				const int x = 2 * half;
				put((size_t)m * N + n, acc[0][i][j][x], acc[0][i][j][x + 1], acc[NACC - 1][i][j][x], acc[NACC - 1][i][j][x + 1],
				    n + 1 < N, (N & 1) == 0);
			}
		}
}

template <int BM>
__device__ __forceinline__ void block(const f16_t *__restrict__ X, const f16_t *__restrict__ Wg, const f16_t *__restrict__ Wu, void *__restrict__ out,
				      int M, int N, int K, int m0, int n0) {
	extern __shared__ __align__(128) unsigned char smem[];
	float acc[NACC][Geo<BM>::MI][Geo<BM>::NI][4];
	zero_acc<BM>(acc);
	const bool aligned = (K % 8 == 0) && ((((size_t)X) | ((size_t)Wg) | ((size_t)Wu)) & 15) == 0;
	const auto la = row_loader<BM>(RowsMap{X, M, K, m0}, X, K);
#if CHAIN
	const auto lb = row_loader<TN>(RowsMap{Wg, N, K, n0}, Wg, K);
	mainloop<BM>(acc, la, lb, K, smem_addr(smem), aligned);
	float *Y = reinterpret_cast<float *>(out);
	store_tile<BM>(acc, M, N, m0, n0, [&](size_t o, float v0, float v1, float, float, bool two, bool even) {
		if (two && even) {
			*reinterpret_cast<float2 *>(Y + o) = make_float2(v0, v1);
		} else {
			Y[o] = v0;
			if (two)
				Y[o + 1] = v1;
		}
	});
#else
	const auto lb = row_loader<2 * TN>(GUMap{Wg, Wu, N, K, n0}, Wg, K);
	mainloop<BM>(acc, la, lb, K, smem_addr(smem), aligned);
	f16_t *h = reinterpret_cast<f16_t *>(out);
	store_tile<BM>(acc, M, N, m0, n0, [&](size_t o, float g0, float g1, float u0, float u1, bool two, bool even) {
		const f16_t h0 = f2h(act(g0, u0));
		if (two && even) {
			*reinterpret_cast<u32 *>(h + o) = (u32)h0 | ((u32)f2h(act(g1, u1)) << 16);
		} else {
			h[o] = h0;
			if (two)
				h[o + 1] = f2h(act(g1, u1));
		}
	});
#endif
}

__device__ __forceinline__ void dispatch(const f16_t *__restrict__ X, const f16_t *__restrict__ Wg, const f16_t *__restrict__ Wu, void *__restrict__ out,
					 long long M_, long long N_, long long K_) {
	const int M = (int)M_, N = (int)N_, K = (int)K_;
	const long long tilesN = (N + TN - 1) / TN;
	const long long bm = blockIdx.x / tilesN, bn = blockIdx.x % tilesN;
	if (bm >= row_blocks(M))
		return;
	const int m0 = (int)block_m0(bm, M), n0 = (int)bn * TN;
#if TAIL > 0 && TAIL < TM
	if (tail_block(bm, M)) {
		block<TAIL>(X, Wg, Wu, out, M, N, K, m0, n0);
		return;
	}
#endif
	block<TM>(X, Wg, Wu, out, M, N, K, m0, n0);
}

#if CHAIN
extern "C" __global__ void __launch_bounds__(NT) tilefit_swiglu_gemm(const f16_t *__restrict__ X, const f16_t *__restrict__ W, float *__restrict__ Y,
								     long long M, long long N, long long K) {
	dispatch(X, W, W, Y, M, N, K);
}

// tilefit_swiglu_act: h[i] = fp16_rn(act(G[i], U[i])), i < M·N, one element
// per thread of a 1-D grid.
extern "C" __global__ void __launch_bounds__(256) tilefit_swiglu_act(const float *__restrict__ G, const float *__restrict__ U, f16_t *__restrict__ h,
								     long long M, long long N) {
	const long long i = (long long)blockIdx.x * 256 + threadIdx.x;
	if (i < M * N)
		h[i] = f2h(act(G[i], U[i]));
}
#else
extern "C" __global__ void __launch_bounds__(NT) tilefit_swiglu(const f16_t *__restrict__ X, const f16_t *__restrict__ Wg, const f16_t *__restrict__ Wu,
								f16_t *__restrict__ h, long long M, long long N, long long K) {
	dispatch(X, Wg, Wu, h, M, N, K);
}
#endif
