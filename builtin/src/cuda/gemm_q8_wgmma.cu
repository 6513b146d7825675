// gemm_q8_wgmma for CUDA sm_90a: the operator gemm_q8_f16 on the shared
// Hopper mainloop wgmma_core.cuh (which Go puts before this file, after the
// prelude of builtin/gemmq8_wgmma.go that sets the core's producer hooks).
//
//   W[n,k] = dq(Wq[n,k], scales[n, k/G])          (fp16)
//   Y[M,N] = X[M,K] · W[N,K]^T                     (fp32 out)
//
// X [M,K] fp16, Wq [N,K] int8, scales [N, K/G] fp16, all row-major; Y [M,N]
// fp32; with DEBUG=1 also wdq [N,K] fp16, the dequantised weights exactly as
// they entered the tensor cores (written by the units of tile row 0).
//
// Entry point (the order of the Plan):
//   tilefit_gemm_q8_wgmma(const __grid_constant__ TMap tmX, tmWq, const f16 *scales,
//                         float *Y, [f16 *wdq if DEBUG], long long M, N, K, G)
// tmX: X, dims {K, M}, box {64, BM}, 128-byte swizzle (gemm_wgmma's map);
// tmWq: Wq as bytes, dims {K, N}, box {64, BN}, no swizzle. TMA needs K % 16
// == 0 (16-byte int8 rows); the item walk below needs G % 16 == 0 (the Plan
// refuses other shapes; the mma.sync family gemm_q8_f16 takes them).
//
// A stage is, as in gemm_wgmma, BM×64 of X (A, by TMA onto the stage's full
// barrier) and BN×64 fp16 of W (B, 128-byte swizzled), followed by the
// stage's raw area (WG_STAGE_EXTRA = BN·64 bytes) into which thread 0 of the
// producer warpgroup copies Wq's rows bn·BN + [0, BN), k-block kb, by TMA,
// completing on the stage's raw barrier (one of this family's WG_AUX_BARS).
// The other 96 threads of the producer warpgroup (warps 1..3, the core's
// WG_CONVERT hook) walk the same stages: each loads its items' scales from
// global memory, waits on the raw barrier, dequantises its items (16 k of one
// row each) into the swizzled B operand, fences the writes for the async
// proxy (wgmma reads shared memory through it) and arrives on the full
// barrier, which therefore completes on X's TMA bytes (WG_FULL_TX = A_BYTES)
// and 1 + 96 arrivals (WG_FULL_COUNT).
//
// THE DEQUANTISATION (kernel.DequantQ8, the mma.sync family's dq):
//   dq(q, s) = fp16_rn((float)q · (float)s)
// CVT 0 computes it so, per element (cvt, mul.rn.f32, cvt.rn.f16.f32). CVT 1
// computes it two k at a time in fp16x2: q is made exact in fp16 by the
// magic-number trick (the byte q + 128 under the exponent of 1024, minus
// 1152: an integer below 2048, exact), and mul.rn.f16x2 multiplies it by s
// with one IEEE round to nearest of the exact product (subnormals kept:
// no .ftz) — the same single rounding of the same exact product, so the same
// bits. Elements past N or past K get scale 0 (TMA fills their q with 0),
// +0 like the mma.sync family's zero fill.
//
// Reduction order: the core's (acc = 0, k16 steps ascending, K never split),
// the order of the mma.sync core on the same fp16 W: numerics class
// gemm_q8_f16.

#ifndef DEBUG
#define DEBUG 0
#endif
#ifndef CVT
#define CVT 1
#endif

constexpr int RAW_BYTES = BN * BK;     // int8 rows of a stage
constexpr int NCV = 96;                // converting threads: warps 1..3 of the producer warpgroup
constexpr int PER = (BN * 4 + NCV - 1) / NCV; // items (16 k of a row) per thread and stage: rows r0 + 24i
#ifndef QCH
#define QCH 6
#endif
static_assert(QCH >= 1, "QCH: items per load batch");

static_assert(WG_STAGE_EXTRA == RAW_BYTES, "gemm_q8_wgmma: the prelude must set WG_STAGE_EXTRA to BN*64");
static_assert(RAW_BYTES % 1024 == 0, "gemm_q8_wgmma: BN must be a multiple of 16");
static_assert(NST <= WG_AUX_BARS, "gemm_q8_wgmma: a raw barrier per stage");
static_assert(MC == 0, "gemm_q8_wgmma: no cluster multicast");

__device__ __forceinline__ void st_shared4(u32 a, u32 x, u32 y, u32 z, u32 w) {
	asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(a), "r"(x), "r"(y), "r"(z), "r"(w) : "memory");
}

__device__ __forceinline__ void ld_shared4(u32 a, u32 &x, u32 &y, u32 &z, u32 &w) {
	asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];\n" : "=r"(x), "=r"(y), "=r"(z), "=r"(w) : "r"(a) : "memory");
}

// dq4 dequantises the four int8 of word v (k ascending from its low byte)
// with the scale s2 (the fp16 scale in both halves): lo gets k 0, 1, hi k 2, 3.
__device__ __forceinline__ void dq4(u32 v, u32 s2, u32 &lo, u32 &hi) {
#if CVT == 1
	const u32 x = v ^ 0x80808080u; // q + 128 in each byte
	u32 a, b;
	asm("prmt.b32 %0, %1, %2, 0x4140;\n" : "=r"(a) : "r"(x), "r"(0x64646464u));
	asm("prmt.b32 %0, %1, %2, 0x4342;\n" : "=r"(b) : "r"(x), "r"(0x64646464u));
	// (1024 + q + 128) - 1152 = q, exact.
	asm("sub.rn.f16x2 %0, %0, %1;\n" : "+r"(a) : "r"(0x64806480u));
	asm("sub.rn.f16x2 %0, %0, %1;\n" : "+r"(b) : "r"(0x64806480u));
	asm("mul.rn.f16x2 %0, %0, %1;\n" : "+r"(a) : "r"(s2));
	asm("mul.rn.f16x2 %0, %0, %1;\n" : "+r"(b) : "r"(s2));
	lo = a;
	hi = b;
#else
	float s;
	asm("cvt.f32.f16 %0, %1;" : "=f"(s) : "h"((unsigned short)(s2 & 0xffff)));
	u32 h[4];
#pragma unroll
	for (int e = 0; e < 4; e++) {
		float p;
		asm("mul.rn.f32 %0, %1, %2;" : "=f"(p) : "f"((float)(int)(signed char)(v >> (8 * e))), "f"(s));
		h[e] = f2h(p);
	}
	lo = h[0] | (h[1] << 16);
	hi = h[2] | (h[3] << 16);
#endif
}

struct Q8Prod {
	const TMap *x, *wq;
	const unsigned short *sc;
	unsigned short *wdq;
	int N, K, G;
	__device__ __forceinline__ void prefetch() const {
		tma_prefetch(x);
		tma_prefetch(wq);
	}
	// The raw barriers: one per stage, completing on the raw TMA bytes.
	__device__ __forceinline__ void init(u32 aux) const {
		for (int s = 0; s < NST; s++)
			mbar_init(aux + 8 * s, 1);
	}
	__device__ __forceinline__ void stage(u32 st, u32 bar, const Unit &u, int kb) const {
		tma_load(st, x, kb * BK, u.bm * BM, bar);
		// bar is full[s]; raw[s] is aux + 8s = full[s] + 16·NST + 16.
		const u32 rawBar = bar + 16 * NST + 16;
		mbar_expect_tx(rawBar, RAW_BYTES);
		tma_load(st + A_BYTES + B_BYTES, wq, kb * BK, u.bn * BN, rawBar);
	}
	__device__ __forceinline__ void unit_begin(const Unit &, int, u32, u32) const {}
	__device__ __forceinline__ void unit_done(const Unit &, int, u32, u32) const {}

	// convert: warps 1..3 of the producer warpgroup, the same walk of units
	// and stages as thread 0's. Converting thread ct (0..95) owns piece p =
	// ct % 4 (k 16p .. 16p+15 of the k-block) of rows r0 + 24i, r0 = ct / 4:
	// since 24 is a multiple of 8 every row it owns has the same swizzle
	// phase, so its shared-memory offsets are fixed and only the stage base
	// moves. Per item: one 16-byte load of raw int8 (QCH items' loads
	// issued together), four dq4, two 16-byte stores; the next item's scale
	// is loaded (L1: the row's scales are contiguous) while this one
	// converts.
	__device__ __forceinline__ void convert(int tilesM, int tilesN, int ntiles, int nunits, int nk, u32 stages, u32 fullBar, u32 aux, u32) const {
		const int ct = (int)threadIdx.x - 32;
		if (ct < 0)
			return; // warp 0: lane 0 issues the copies, the rest idle
		const int p = ct & 3, r0 = ct >> 2;
		const u32 rawOff = (u32)(A_BYTES + B_BYTES + r0 * 64 + p * 16);
		const u32 bOff = (u32)(A_BYTES + r0 * 128);
		const u32 c0 = (u32)(((2 * p) ^ (r0 & 7)) * 16), c1 = (u32)(((2 * p + 1) ^ (r0 & 7)) * 16);
		const int kg = K / G;
		const size_t kg24 = (size_t)kg * 24;
		int s = 0;
		u32 ph = 0;
		for (int u = blockIdx.x; u < nunits; u += gridDim.x) {
			const Unit w = unit_of(u, tilesM, tilesN, ntiles, nk);
			const int n0 = w.bn * BN + r0;
			const int rows = N - n0; // item i exists if 24i < rows (and r0 + 24i < BN)
			const unsigned short *srow = sc + (size_t)(n0 < N ? n0 : 0) * kg;
			for (int kb = w.kb0; kb < w.kb1; kb++) {
				const u32 st = stages + (u32)(s * STAGE_BYTES);
				const int k = kb * BK + p * 16;
				const bool kin = k < K;
				const unsigned short *sg = srow + (kin ? k / G : 0);
				// The first item's scale before the wait.
				u32 nx = (kin && rows > 0) ? (u32)__ldg(sg) : 0u;
				mbar_wait(aux + 8 * s, ph);
				// In chunks of QCH items: the chunk's raw loads back to
				// back (their latencies overlap), then its conversions.
#pragma unroll
				for (int i0 = 0; i0 < PER; i0 += QCH) {
					u32 q[QCH][4];
#pragma unroll
					for (int j = 0; j < QCH; j++) {
						const int i = i0 + j;
						if (i < PER && (BN % 24 == 0 || r0 + 24 * i < BN))
							ld_shared4(st + rawOff + (u32)(i * 24 * 64), q[j][0], q[j][1], q[j][2], q[j][3]);
					}
#pragma unroll
					for (int j = 0; j < QCH; j++) {
						const int i = i0 + j;
						if (i >= PER || (BN % 24 != 0 && r0 + 24 * i >= BN))
							break;
						const u32 h = nx;
						if (i + 1 < PER && (BN % 24 == 0 || r0 + 24 * (i + 1) < BN))
							nx = (kin && 24 * (i + 1) < rows) ? (u32)__ldg(sg + (i + 1) * kg24) : 0u;
						const u32 s2 = h | (h << 16);
						u32 o[8];
						dq4(q[j][0], s2, o[0], o[1]);
						dq4(q[j][1], s2, o[2], o[3]);
						dq4(q[j][2], s2, o[4], o[5]);
						dq4(q[j][3], s2, o[6], o[7]);
						// The 128-byte swizzle: 16-byte chunk c of row r at
						// position c ^ (r % 8), and r % 8 = r0 % 8.
						const u32 row = st + bOff + (u32)(i * 24 * 128);
						st_shared4(row + c0, o[0], o[1], o[2], o[3]);
						st_shared4(row + c1, o[4], o[5], o[6], o[7]);
#if DEBUG
						if (w.bm == 0 && kin && 24 * i < rows) {
							uint4 *d = reinterpret_cast<uint4 *>(wdq + (size_t)(n0 + 24 * i) * K + k);
							d[0] = make_uint4(o[0], o[1], o[2], o[3]);
							d[1] = make_uint4(o[4], o[5], o[6], o[7]);
						}
#endif
					}
				}
				// The B operand is read by wgmma through the async proxy.
				asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
				mbar_arrive(fullBar + 8 * s);
				if (++s == NST) {
					s = 0;
					ph ^= 1;
				}
			}
		}
	}
};

// Q8Epi stores a consumer's accumulators into Y (fp32 pairs; rows ≥ M and
// columns ≥ N skipped).
struct Q8Epi {
	float *Y;
	int M, N;
	__device__ __forceinline__ void put(int r, int c, float v0, float v1) const {
		if (r >= M)
			return;
		float *y = Y + (size_t)r * N + c;
		if ((N & 1) == 0 && c + 1 < N) {
			*reinterpret_cast<float2 *>(y) = make_float2(v0, v1);
		} else {
			if (c < N)
				y[0] = v0;
			if (c + 1 < N)
				y[1] = v1;
		}
	}
	__device__ __forceinline__ void operator()(float (&acc)[MW][BN / 2], const EpiCtx &e) const {
		const int r0 = e.w.bm * BM + (PINGPONG ? 0 : e.c * WGM) + e.warp * 16 + (e.lane >> 2);
		const int c0 = e.w.bn * BN + 2 * (e.lane & 3);
#pragma unroll
		for (int i = 0; i < MW; i++)
#pragma unroll
			for (int j = 0; j < BN / 8; j++) {
				put(r0 + i * 64, c0 + 8 * j, acc[i][4 * j], acc[i][4 * j + 1]);
				put(r0 + i * 64 + 8, c0 + 8 * j, acc[i][4 * j + 2], acc[i][4 * j + 3]);
			}
	}
};

extern "C" __global__ void __launch_bounds__(NT, 1)
    tilefit_gemm_q8_wgmma(const __grid_constant__ TMap tmX, const __grid_constant__ TMap tmWq, const unsigned short *__restrict__ Sc, float *__restrict__ Y,
#if DEBUG
			  unsigned short *__restrict__ wdq,
#endif
			  long long M64, long long N64, long long K64, long long G64) {
	const int M = (int)M64, N = (int)N64, K = (int)K64, G = (int)G64;
	if (G <= 0 || G % 16 != 0 || K % G != 0)
		return;
#if !DEBUG
	unsigned short *wdq = nullptr;
#endif
	const Q8Prod prod = {&tmX, &tmWq, Sc, wdq, N, K, G};
	const Q8Epi epi = {Y, M, N};
	wg_kernel(prod, epi, (M + BM - 1) / BM, (N + BN - 1) / BN, (K + BK - 1) / BK);
}
