// gemm_bias_wgmma — the worked example's operator on tilefit's Hopper
// mainloop (sm_90a): builtin.WgmmaFamilySource puts wgmma_core.cuh (TMA
// producer, mbarrier ring, consumer warpgroups, persistent grid) before this
// file, which supplies a producer (gemm_wgmma's stage: X's BM rows, W's BN
// rows, 64 k) and an epilogue that adds the bias.
//
//   Y[m,n] = (Σ_k X[m,k]·W[n,k]) + b[n]
//
// The sum is the core's fp32 accumulation (acc = 0, k16 steps ascending:
// gemm_wgmma's and gemm_f16's order); then one fp32 add of b[n], rounded to
// nearest — the order the reference (gemmbias.go) and the CPU family define:
// the whole dot product first, the bias last. So Y is bitwise
// fp32(gemm_wgmma's Y + b[n]).
//
// Entry (the order of HopperFamily's Plan):
//   gemm_bias_wgmma(const __grid_constant__ TMap tmX, const __grid_constant__ TMap tmW,
//                   const float *b, float *Y, long long M, long long N, long long K)
// tmX over X (dims {K, M}, box {64, BM}), tmW over W (dims {K, N}, box
// {64, BN}), both 128-byte swizzled (builtin.WgmmaMaps). K % 8 == 0.

// BPRE 1: the epilogue loads all of a thread's bias values before its
// stores (BN/4 registers); 0: a pair per column block, between the stores.
#ifndef BPRE
#define BPRE 0
#endif

struct BiasProd {
	const TMap *x, *w;
	__device__ __forceinline__ void prefetch() const {
		tma_prefetch(x);
		tma_prefetch(w);
	}
	__device__ __forceinline__ void init(u32) const {}
	__device__ __forceinline__ void stage(u32 st, u32 bar, const Unit &u, int kb) const {
		tma_load(st, x, kb * BK, u.bm * BM, bar);
		tma_load(st + A_BYTES, w, kb * BK, u.bn * BN, bar);
	}
	__device__ __forceinline__ void unit_begin(const Unit &, int, u32, u32) const {}
	__device__ __forceinline__ void unit_done(const Unit &, int, u32, u32) const {}
};

// BiasEpi: register 4j+e of m64 block i holds tile row
// (c·WGM or 0) + 64i + 16·warp + lane/4 (+8 for e ≥ 2), column
// 8j + 2·(lane%4) (+1 for odd e) (wgmma_core.cuh).
struct BiasEpi {
	const float *b;
	float *Y;
	int M, N;
	__device__ __forceinline__ void put(int r, int c, float v0, float v1, float b0, float b1) const {
		if (r >= M)
			return;
		float *y = Y + (size_t)r * N + c;
		float y0, y1; // one fp32 add each, round to nearest (never contracted)
		asm("add.rn.f32 %0, %1, %2;" : "=f"(y0) : "f"(v0), "f"(b0));
		asm("add.rn.f32 %0, %1, %2;" : "=f"(y1) : "f"(v1), "f"(b1));
		if ((N & 1) == 0 && c + 1 < N) {
			*reinterpret_cast<float2 *>(y) = make_float2(y0, y1);
		} else {
			if (c < N)
				y[0] = y0;
			if (c + 1 < N)
				y[1] = y1;
		}
	}
	__device__ __forceinline__ void operator()(float (&acc)[MW][BN / 2], const EpiCtx &e) const {
		const int r0 = e.w.bm * BM + (PINGPONG ? 0 : e.c * WGM) + e.warp * 16 + (e.lane >> 2);
		const int c0 = e.w.bn * BN + 2 * (e.lane & 3);
#if BPRE
		// All of the thread's bias values first: their loads issue back to
		// back instead of one pair per column block between the stores.
		float bv[BN / 4];
#pragma unroll
		for (int j = 0; j < BN / 8; j++) {
			const int c = c0 + 8 * j;
			bv[2 * j] = c < N ? __ldg(b + c) : 0.0f;
			bv[2 * j + 1] = c + 1 < N ? __ldg(b + c + 1) : 0.0f;
		}
#endif
#pragma unroll
		for (int j = 0; j < BN / 8; j++) {
			const int c = c0 + 8 * j;
#if BPRE
			const float b0 = bv[2 * j], b1 = bv[2 * j + 1];
#else
			const float b0 = c < N ? __ldg(b + c) : 0.0f, b1 = c + 1 < N ? __ldg(b + c + 1) : 0.0f;
#endif
#pragma unroll
			for (int i = 0; i < MW; i++) {
				put(r0 + i * 64, c, acc[i][4 * j], acc[i][4 * j + 1], b0, b1);
				put(r0 + i * 64 + 8, c, acc[i][4 * j + 2], acc[i][4 * j + 3], b0, b1);
			}
		}
	}
};

extern "C" __global__ void __launch_bounds__(NT, 1)
    gemm_bias_wgmma(const __grid_constant__ TMap tmX, const __grid_constant__ TMap tmW, const float *__restrict__ b, float *__restrict__ Y, long long M64,
		    long long N64, long long K64) {
	const int M = (int)M64, N = (int)N64, K = (int)K64;
	const BiasProd prod = {&tmX, &tmW};
	const BiasEpi epi = {b, Y, M, N};
	wg_kernel(prod, epi, (M + BM - 1) / BM, (N + BN - 1) / BN, (K + BK - 1) / BK);
}
