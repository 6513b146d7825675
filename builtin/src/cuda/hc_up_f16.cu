// hc_up_f16 for CUDA: the engine's hc_up projection with its fused 4-stream
// epilogue (compiled after fused_common.cu, which builtin/fused.go prepends).
//
//   Y4[M, 4S] = X[M,K] · W[4S,K]^T          (never stored)
//   mix[t,d]  = ¼ · Σ_{c<4} Y4[t, c·S+d] · H[t,c,d]        t < M, d < S
//   mixh[t,d] = fp16(mix[t,d]);  mixed[t,d] = mix[t,d] (fp32, BOUND=1 only)
//
// X [M,K], W [4,S,K] (stream c's rows are W[c·S + d]) and H [M,4,S] are
// row-major fp16; mixh [M,S] fp16; mixed [M,S] fp32.
//
// Kernel parameters (the operator contract's order):
//   tilefit_hc_up(X, W, H, mixh, [mixed if BOUND], M, S, K)
//
// THE EPILOGUE'S ARITHMETIC (fp32, each step rounded to nearest even, in this
// order; mix4 of epilogue_common.cuh, which the wgmma family hc_up_wgmma and
// the vendor baseline call too; the CPU source and the Go reference document
// the same):
//   y_c = the fp32 accumulator of Y4[t, c·S+d] (the core's k16 order)
//   h_c = the exact fp32 value of H[t,c,d]
//   s = y_0·h_0;  s = fma(y_1, h_1, s);  s = fma(y_2, h_2, s);  s = fma(y_3, h_3, s)
//   mix = s · 0.25;  mixh = fp16_rn(mix);  mixed = mix
// Every tile gives the same bits: the accumulators do (the core's invariant)
// and the epilogue is this one fixed sequence of mul.rn/fma.rn/cvt.rn.
//
// Tiling: a block owns TM rows × TD = TN/4 mix columns, i.e. TN columns of Y4
// — all four streams of its TD columns, so the mix happens in registers.
// Warps split the block as WM×WN (warp tiles of 16·MI rows × WTN columns,
// WTN a multiple of 32): warp wn's WTN columns are the four streams of mix
// columns d0 + wn·WTN/4 + [0, WTN/4), stream-major, so n8 fragment f of a warp
// is stream f / NF4, columns (f % NF4)·8 + [0, 8) with NF4 = WTN/32, and a
// lane holds the same two mix columns in all four streams.
//
// REG=0: X and the block's W rows go through the core's cp.async pipeline in
// shared memory (ldmatrix). REG=1: no shared memory at all — every lane loads
// its own mma fragments from global memory (32-bit loads, the next k16 step
// prefetched into registers while this one multiplies); the same fragments,
// so the same bits.
//
// FAULT plants a bug for the tests: 1 skips stream 3 in the mix; 2 leaves
// mixed (BOUND=1) unwritten.
//
#ifndef BOUND
#define BOUND 0
#endif
#ifndef REG
#define REG 0
#endif

// the block's rows of W: stage row r → stream c, mix column d0 + w·WTN/4 + j
template <int BM> struct HcMap {
	const f16_t *W;
	int S, K, d0;
	__device__ __forceinline__ const f16_t *operator()(int r) const {
		constexpr int WTN = Geo<BM>::WTN, Q = WTN / 4;
		const int w = r / WTN, q = r % WTN, c = q / Q, j = q % Q;
		const int d = d0 + w * Q + j;
		return d < S ? W + ((size_t)c * S + d) * K : nullptr;
	}
};

struct XMap {
	const f16_t *X;
	int M, K, m0;
	__device__ __forceinline__ const f16_t *operator()(int r) const {
		return m0 + r < M ? X + (size_t)(m0 + r) * K : nullptr;
	}
};

// epilogue mixes warp (wm, wn)'s accumulators of a BM-row block at (m0, d0)
// and stores mixh (and mixed).
template <int BM>
__device__ __forceinline__ void epilogue(const float (&acc)[1][Geo<BM>::MI][Geo<BM>::NI][4], const f16_t *__restrict__ H,
					 f16_t *__restrict__ mixh, float *__restrict__ mixed, int M, int S, int m0, int d0) {
	typedef Geo<BM> G;
	constexpr int NF4 = G::WTN / 32;
	const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
	const int wm = warp / G::WN, wn = warp % G::WN;
	const bool pair = (S & 1) == 0;
#pragma unroll
	for (int i = 0; i < G::MI; i++)
#pragma unroll
		for (int half = 0; half < 2; half++) {
			const int m = m0 + wm * G::WTM + i * 16 + (lane >> 2) + 8 * half;
			if (m >= M)
				continue;
			const f16_t *h = H + (size_t)m * 4 * S;
#pragma unroll
			for (int jj = 0; jj < NF4; jj++) {
				const int d = d0 + wn * (G::WTN / 4) + jj * 8 + (lane & 3) * 2;
				float v[2];
#pragma unroll
				for (int e = 0; e < 2; e++) {
					const int dd = d + e;
					if (dd < S) {
						const int x = 2 * half + e;
						v[e] = mix4(acc[0][i][0 * NF4 + jj][x], acc[0][i][1 * NF4 + jj][x], acc[0][i][2 * NF4 + jj][x], acc[0][i][3 * NF4 + jj][x],
							    h2f(h[dd]), h2f(h[S + dd]), h2f(h[2 * S + dd]), h2f(h[3 * S + dd]));
					} else {
						v[e] = 0.0f;
					}
				}
				const size_t o = (size_t)m * S + d;
				if (pair && d + 1 < S) {
					*reinterpret_cast<u32 *>(mixh + o) = (u32)f2h(v[0]) | ((u32)f2h(v[1]) << 16);
#if BOUND && FAULT != 2
					*reinterpret_cast<float2 *>(mixed + o) = make_float2(v[0], v[1]);
#endif
				} else {
#pragma unroll
					for (int e = 0; e < 2; e++)
						if (d + e < S) {
							mixh[o + e] = f2h(v[e]);
#if BOUND && FAULT != 2
							mixed[o + e] = v[e];
#endif
						}
				}
			}
		}
}

#if REG
// ld_pair returns the 32-bit word of fp16 elements (k, k+1) of row (zeros out
// of range); fast when the whole step is in range and 4-byte aligned.
__device__ __forceinline__ u32 ld_pair(const f16_t *row, int k, int K, bool fast) {
	if (row == nullptr)
		return 0u;
	if (fast)
		return __ldg(reinterpret_cast<const unsigned int *>(row + k));
	const u32 lo = k < K ? row[k] : 0u, hi = k + 1 < K ? row[k + 1] : 0u;
	return lo | (hi << 16);
}

// reg_tile computes a BM-row block with no shared memory: each lane loads its
// mma fragments (the layouts ldmatrix would produce) from global memory.
template <int BM>
__device__ __forceinline__ void reg_tile(float (&acc)[1][Geo<BM>::MI][Geo<BM>::NI][4], const f16_t *__restrict__ X, const f16_t *__restrict__ W,
					 int M, int S, int K, int m0, int d0) {
	typedef Geo<BM> G;
	constexpr int MI = G::MI, NI = G::NI, NF4 = G::WTN / 32;
	const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
	const int wm = warp / G::WN, wn = warp % G::WN;
	const int g = lane >> 2, t2 = (lane & 3) * 2;
	const f16_t *xr[MI][2];
#pragma unroll
	for (int i = 0; i < MI; i++)
#pragma unroll
		for (int h = 0; h < 2; h++) {
			const int m = m0 + wm * G::WTM + i * 16 + g + 8 * h;
			xr[i][h] = m < M ? X + (size_t)m * K : nullptr;
		}
	const f16_t *wr[NI];
#pragma unroll
	for (int f = 0; f < NI; f++) {
		const int c = f / NF4, d = d0 + wn * (G::WTN / 4) + (f % NF4) * 8 + g;
		wr[f] = d < S ? W + ((size_t)c * S + d) * K : nullptr;
	}
	const bool even = (K & 1) == 0 && ((((size_t)X) | ((size_t)W)) & 3) == 0;
	u32 a[2][MI][4], b[2][NI][2];
	auto load = [&](int buf, int k0) {
		const bool fast = even && k0 + 16 <= K;
#pragma unroll
		for (int i = 0; i < MI; i++) {
			a[buf][i][0] = ld_pair(xr[i][0], k0 + t2, K, fast);
			a[buf][i][1] = ld_pair(xr[i][1], k0 + t2, K, fast);
			a[buf][i][2] = ld_pair(xr[i][0], k0 + 8 + t2, K, fast);
			a[buf][i][3] = ld_pair(xr[i][1], k0 + 8 + t2, K, fast);
		}
#pragma unroll
		for (int f = 0; f < NI; f++) {
			b[buf][f][0] = ld_pair(wr[f], k0 + t2, K, fast);
			b[buf][f][1] = ld_pair(wr[f], k0 + 8 + t2, K, fast);
		}
	};
	const int steps = (K + 15) / 16;
	if (steps > 0)
		load(0, 0);
#pragma unroll 1
	for (int s = 0; s < steps; s += 2) {
		if (s + 1 < steps)
			load(1, (s + 1) * 16);
#pragma unroll
		for (int i = 0; i < MI; i++)
#pragma unroll
			for (int f = 0; f < NI; f++)
				mma16816(acc[0][i][f], a[0][i], b[0][f][0], b[0][f][1]);
		if (s + 1 >= steps)
			break;
		if (s + 2 < steps)
			load(0, (s + 2) * 16);
#pragma unroll
		for (int i = 0; i < MI; i++)
#pragma unroll
			for (int f = 0; f < NI; f++)
				mma16816(acc[0][i][f], a[1][i], b[1][f][0], b[1][f][1]);
	}
}
#endif

template <int BM>
__device__ __forceinline__ void hc_block(const f16_t *__restrict__ X, const f16_t *__restrict__ W, const f16_t *__restrict__ H,
					 f16_t *__restrict__ mixh, float *__restrict__ mixed, int M, int S, int K, int m0, int d0) {
	float acc[1][Geo<BM>::MI][Geo<BM>::NI][4];
	zero_acc<BM>(acc);
#if REG
	reg_tile<BM>(acc, X, W, M, S, K, m0, d0);
#else
	extern __shared__ __align__(128) unsigned char smem[];
	const bool aligned = (K % 8 == 0) && ((((size_t)X) | ((size_t)W)) & 15) == 0;
	const auto la = row_loader<BM>(XMap{X, M, K, m0}, X, K);
	const auto lb = row_loader<TN>(HcMap<BM>{W, S, K, d0}, W, K);
	mainloop<BM>(acc, la, lb, K, smem_addr(smem), aligned);
#endif
	epilogue<BM>(acc, H, mixh, mixed, M, S, m0, d0);
}

extern "C" __global__ void __launch_bounds__(NT, 1) tilefit_hc_up(const f16_t *__restrict__ X, const f16_t *__restrict__ W, const f16_t *__restrict__ H,
							       f16_t *__restrict__ mixh,
#if BOUND
							       float *__restrict__ mixed,
#endif
							       long long M_, long long S_, long long K_) {
#if !BOUND
	float *mixed = nullptr;
#endif
	constexpr int TD = TN / 4;
	const int M = (int)M_, S = (int)S_, K = (int)K_;
	const long long tilesD = (S + TD - 1) / TD;
	const long long bm = blockIdx.x / tilesD, bd = blockIdx.x % tilesD;
	if (bm >= row_blocks(M))
		return;
	const int m0 = (int)block_m0(bm, M), d0 = (int)bd * TD;
#if TAIL > 0 && TAIL < TM
	if (tail_block(bm, M)) {
		hc_block<TAIL>(X, W, H, mixh, mixed, M, S, K, m0, d0);
		return;
	}
#endif
	hc_block<TM>(X, W, H, mixh, mixed, M, S, K, m0, d0);
}
