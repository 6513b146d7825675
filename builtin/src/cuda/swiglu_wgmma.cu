// swiglu_wgmma for CUDA sm_90a: the shared expert's gate/up projection with
// SwiGLU as one dual-B GEMM on the shared wgmma mainloop (wgmma_core.cuh,
// then epilogue_common.cuh, which Go puts before this file).
//
//   g = X[M,K]·Wg[N,K]^T,  u = X·Wu^T,  h[M,N] = silu(g) ⊙ u
//
// X, Wg, Wu row-major fp16 (K contiguous); h [M,N] row-major fp16.
//
// Entry points (the order of builtin/fused_wgmma.go's Plan):
//   tilefit_swiglu_wgmma(const __grid_constant__ TMap tmX, tmWg, tmWu, [tmH if EPI],
//                        out, long long M, N, K)
//   tilefit_swiglu_wgmma_act(const float *P, f16_t *h, long long M, N, S)
//                        (KSPLIT > 0 only)
// tmX: X, dims {K, M}, box {64, BM}; tmWg, tmWu: dims {K, N}, box {64, BN/2};
// all 128-byte swizzled. TMA needs K % 8 == 0 (the Plan refuses other K).
//
// Tiling: a tile is BM rows × TN = BN/2 output columns n0 + [0, TN). The B
// operand of a stage is two TMA boxes stacked in shared memory — Wg's rows
// n0 + [0, TN), then Wu's — so one wgmma m64nBNk16 multiplies X by both
// weights: tile column j < TN is g of output column n0 + j, column TN + j its
// u, and the thread holding g of a column (fragment q) holds its u too
// (fragment q + TN/8). One X tile feeds both, one set of accumulators holds
// both.
//
// KSPLIT 0: out is h; the epilogue is act (epilogue_common.cuh, the function
// the mma.sync family swiglu_f16 calls) on the fp32 accumulators g, u (the
// core's k16 order, bitwise the mma.sync core's): h = fp16_rn(act(g, u)), the
// numerics class "fused" of swiglu_f16.
//
// KSPLIT > 0 (K split in chunks of 64·KSPLIT, set by K alone): out is the
// fp32 scratch P [S][M][2N]; chunk j's partial g goes to P[j][m][n], its u to
// P[j][m][N + n]; then tilefit_swiglu_wgmma_act adds the S partials in chunk
// order (g = ((P0 + P1) + P2) + ..., fp32 round to nearest) and applies act.
// The order depends on K and KSPLIT alone, never on M or the tile: numerics
// class "fused/splitkC" (C = 64·KSPLIT), batch-invariant.

// EPI 1 (KSPLIT 0): h goes through the core's staged epilogue (WG_EPI_N =
// TN columns; the same fp16 values into the consumer's staging tile, then
// TMA stores through tmH, a map over h, dims {N, M}, box {EPI_BOXC, WGM};
// the kernel then has tmH after tmWu) when N % 8 == 0, as before otherwise
// (the Plan passes a placeholder map).

constexpr int TN = BN / 2; // output columns per tile
constexpr int QN = TN / 8; // n8 fragments per operand

static_assert(BN % 16 == 0, "swiglu_wgmma: BN must be a multiple of 16 (TN = BN/2 a multiple of 8)");
static_assert(!EPI || !KSPLIT, "swiglu_wgmma: EPI 1 needs KSPLIT 0");

struct GuProd {
	const TMap *x, *g, *u;
	__device__ __forceinline__ void prefetch() const {
		tma_prefetch(x);
		tma_prefetch(g);
		tma_prefetch(u);
	}
	__device__ __forceinline__ void init(u32) const {}
	// stage is stage_rest (X's rows) then stage_const (Wg's and Wu's);
	// PDL 2 (the core's WG_PRELOAD) issues a first-fill stage's weights
	// before griddepcontrol.wait and its X after.
	__device__ __forceinline__ void stage(u32 st, u32 bar, const Unit &w, int kb) const {
		stage_rest(st, bar, w, kb);
		stage_const(st, bar, w, kb);
	}
	__device__ __forceinline__ void stage_rest(u32 st, u32 bar, const Unit &w, int kb) const {
		wg_load_rows(st, x, kb * BK, w.bm * BM, BM, bar, MC == 2);
	}
	__device__ __forceinline__ void stage_const(u32 st, u32 bar, const Unit &w, int kb) const {
		if (MC == 1) {
			// The pair shares the weight rows: rank 0 loads Wg's box,
			// rank 1 Wu's, each multicast to both CTAs.
			const int r = wg_rank();
			tma_load_mc(st + A_BYTES + (u32)(r * TN * 128), r ? u : g, kb * BK, w.bn * TN, bar);
		} else {
			tma_load(st + A_BYTES, g, kb * BK, w.bn * TN, bar);
			tma_load(st + A_BYTES + (u32)(TN * 128), u, kb * BK, w.bn * TN, bar);
		}
	}
	__device__ __forceinline__ void unit_begin(const Unit &, int, u32, u32) const {}
	__device__ __forceinline__ void unit_done(const Unit &, int, u32, u32) const {}
};

// put2 stores two adjacent fp32 values at p (8-byte store when aligned and
// both exist).
__device__ __forceinline__ void put2(float *p, float v0, float v1, bool two, bool aligned) {
	if (two && aligned) {
		*reinterpret_cast<float2 *>(p) = make_float2(v0, v1);
	} else {
		p[0] = v0;
		if (two)
			p[1] = v1;
	}
}

struct ActEpi {
	void *out;
	int M, N;
	const TMap *hm; // EPI 1: the tensor map over h
	__device__ __forceinline__ void operator()(float (&acc)[MW][BN / 2], const EpiCtx &e) const {
		const int lane = e.lane;
#if EPI && !KSPLIT
		if ((N & 7) == 0) {
			epi_begin(e);
			const int rs = e.warp * 16 + (lane >> 2), cs = 2 * (lane & 3);
#pragma unroll
			for (int i = 0; i < MW; i++)
#pragma unroll
				for (int half = 0; half < 2; half++)
#pragma unroll
					for (int q = 0; q < QN; q++) {
						const int x = 2 * half;
						const float g0 = acc[i][4 * q + x], g1 = acc[i][4 * q + x + 1];
						const float u0 = acc[i][4 * (q + QN) + x], u1 = acc[i][4 * (q + QN) + x + 1];
						sts32(e.stg + epi_off(rs + i * 64 + 8 * half, cs + 8 * q), pack_h2(act(g0, u0), act(g1, u1)));
					}
			epi_end(e, hm, e.w.bn * TN, e.w.bm * BM + (PINGPONG ? 0 : e.c * WGM));
			return;
		}
#endif
		const int r0 = e.w.bm * BM + (PINGPONG ? 0 : e.c * WGM) + e.warp * 16 + (lane >> 2);
		const int n0 = e.w.bn * TN + 2 * (lane & 3);
		const bool even = (N & 1) == 0;
#if KSPLIT
		float *P = reinterpret_cast<float *>(out) + (size_t)e.w.j * M * 2 * N;
#else
		f16_t *h = reinterpret_cast<f16_t *>(out);
#endif
#pragma unroll
		for (int i = 0; i < MW; i++)
#pragma unroll
			for (int half = 0; half < 2; half++) {
				const int m = r0 + i * 64 + 8 * half;
				if (m >= M)
					continue;
#pragma unroll
				for (int q = 0; q < QN; q++) {
					const int n = n0 + 8 * q;
					if (n >= N)
						continue;
					const int x = 2 * half;
					const float g0 = acc[i][4 * q + x], g1 = acc[i][4 * q + x + 1];
					const float u0 = acc[i][4 * (q + QN) + x], u1 = acc[i][4 * (q + QN) + x + 1];
					const bool two = n + 1 < N;
#if KSPLIT
					float *row = P + (size_t)m * 2 * N;
					put2(row + n, g0, g1, two, true);
					put2(row + N + n, u0, u1, two, even);
#else
					const size_t o = (size_t)m * N + n;
					const f16_t h0 = f2h(act(g0, u0));
					if (two && even) {
						*reinterpret_cast<u32 *>(h + o) = (u32)h0 | ((u32)f2h(act(g1, u1)) << 16);
					} else {
						h[o] = h0;
						if (two)
							h[o + 1] = f2h(act(g1, u1));
					}
#endif
				}
			}
	}
};

extern "C" __global__ void __launch_bounds__(NT, 1)
    tilefit_swiglu_wgmma(const __grid_constant__ TMap tmX, const __grid_constant__ TMap tmWg, const __grid_constant__ TMap tmWu,
#if EPI
			 const __grid_constant__ TMap tmH,
#endif
			 void *__restrict__ out, long long M64, long long N64, long long K64) {
	const int M = (int)M64, N = (int)N64, K = (int)K64;
	const GuProd prod = {&tmX, &tmWg, &tmWu};
#if EPI
	const ActEpi epi = {out, M, N, &tmH};
#else
	const ActEpi epi = {out, M, N, nullptr};
#endif
	wg_kernel(prod, epi, (M + BM - 1) / BM, (N + TN - 1) / TN, (K + BK - 1) / BK);
}

#if KSPLIT
__device__ __forceinline__ float4 ldg4(const float *p) {
	float4 v;
	asm("ld.global.nc.v4.f32 {%0, %1, %2, %3}, [%4];\n" : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p));
	return v;
}

// tilefit_swiglu_wgmma_act finishes a split-K call: h[m,n] = fp16_rn(act(g,
// u)) with g = Σ_j P[j][m][n] and u = Σ_j P[j][m][N+n] added in ascending
// chunk order. Four columns per thread (16-byte loads, an 8-byte store) when
// N % 4 == 0, else one; grid-stride, 32-bit indices (the Plan requires
// M·N < 2³¹).
extern "C" __global__ void __launch_bounds__(256) tilefit_swiglu_wgmma_act(const float *__restrict__ P, f16_t *__restrict__ h, long long M64, long long N64,
									   long long S64) {
#if PDL
	asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
	asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
	const unsigned M = (unsigned)M64, N = (unsigned)N64;
	const int S = (int)S64;
	const size_t chunk = (size_t)M * 2 * N;
	const unsigned step = gridDim.x * blockDim.x;
	if ((N & 3) == 0) {
		const unsigned q = N / 4, groups = M * q; // groups of 4 columns
		for (unsigned t = blockIdx.x * blockDim.x + threadIdx.x; t < groups; t += step) {
			const unsigned m = t / q, n = (t - m * q) * 4;
			const float *p = P + (size_t)m * 2 * N + n;
			float4 g = ldg4(p), u = ldg4(p + N);
			for (int j = 1; j < S; j++) {
				const float4 a = ldg4(p + j * chunk), b = ldg4(p + j * chunk + N);
				g.x = add_rn(g.x, a.x);
				g.y = add_rn(g.y, a.y);
				g.z = add_rn(g.z, a.z);
				g.w = add_rn(g.w, a.w);
				u.x = add_rn(u.x, b.x);
				u.y = add_rn(u.y, b.y);
				u.z = add_rn(u.z, b.z);
				u.w = add_rn(u.w, b.w);
			}
			const u32 lo = (u32)f2h(act(g.x, u.x)) | ((u32)f2h(act(g.y, u.y)) << 16);
			const u32 hi = (u32)f2h(act(g.z, u.z)) | ((u32)f2h(act(g.w, u.w)) << 16);
			*reinterpret_cast<uint2 *>(h + (size_t)m * N + n) = make_uint2(lo, hi);
		}
	} else {
		const unsigned all = M * N;
		for (unsigned t = blockIdx.x * blockDim.x + threadIdx.x; t < all; t += step) {
			const unsigned m = t / N, n = t - m * N;
			const float *p = P + (size_t)m * 2 * N + n;
			float g = p[0], u = p[N];
			for (int j = 1; j < S; j++) {
				g = add_rn(g, p[j * chunk]);
				u = add_rn(u, p[j * chunk + N]);
			}
			h[t] = f2h(act(g, u));
		}
	}
}
#endif
