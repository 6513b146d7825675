// gemm_wgmma for CUDA sm_90a (Hopper): Y[M,N] = X[M,K] · W[N,K]^T, the plain
// GEMM on the shared mainloop wgmma_core.cuh (which Go puts before this file)
// with a store epilogue.
//
// X (M×K) and W (N×K) are row-major fp16 (K contiguous); Y (M×N) is row-major
// fp32, or fp16 when Y_DTYPE is 1 (kernel.DType codes: 1 fp16, 3 fp32).
// Accumulation is fp32 on the tensor cores with wgmma.mma_async m64nBNk16,
// both operands read from shared memory through matrix descriptors.
//
// Entry point (operand pointers and tensor maps, then int64 dimensions, in
// the order of builtin/cuda_wgmma.go's Plan):
//   extern "C" __global__ void tilefit_gemm_wgmma(const __grid_constant__ TMap tmX,
//       const __grid_constant__ TMap tmW, [const __grid_constant__ TMap tmY if EPI],
//       void *Y, long long M, long long N, long long K);
// tmX is a tensor map over X (dims {K, M}, box {64, BM}, 128-byte swizzle),
// tmW over W (dims {K, N}, box {64, BN}, 128-byte swizzle), both encoded on
// the host with cuTensorMapEncodeTiled. TMA needs row strides that are
// multiples of 16 bytes: K % 8 == 0 (the host refuses other K).
//
// A stage is a BM×64 slice of X (the A operand) and a BN×64 slice of W (the
// B operand); K is never split unless KSPLIT > 0. Reduction order: the core's
// (acc = 0, k16 steps ascending), the order of the mma.sync family gemm_f16.
//
// Epilogue: plain bounds-checked stores from the accumulators (8-byte fp32
// pairs, 4-byte fp16 pairs when N is even), rows ≥ M and columns ≥ N skipped.
// EPI 1 (fp16 Y, N % 8 == 0, K not split into partials, SWAP 0): the
// core's staged epilogue — the same fp16 pairs into the consumer's staging
// tile, then TMA stores through tmY (dims {N, M}, box {EPI_BOXC, WGM}); the
// kernel then has tmY after tmW. Other shapes and fp32 Y store as EPI 0 (the
// Plan passes a placeholder map when N % 8 != 0).
// KSPLIT > 0: chunk j's fp32 partial goes to P[j] (Y is then the scratch
// buffer P of S·M·N floats) and tilefit_gemm_wgmma_reduce adds them; with
// KFOLD 1 the consumer folds the chunks in registers in the same order and
// stores Y directly (the same bits, one kernel).
//
// SWAP 1 (small M): the Plan hands the kernel the transposed problem —
// tmX over W, tmW over X, M and N exchanged — so the kernel computes
// Yᵀ = W·Xᵀ with 64 weight rows per wgmma and BN tokens on the N side, and
// the epilogue stores element (r, c) at Y[c, r]. Each output element is the
// same 16 products per k16 step at the same k positions, in the same order.

#ifndef SWAP
#define SWAP 0
#endif
#ifndef Y_DTYPE
#define Y_DTYPE 3
#endif
#if Y_DTYPE != 1 && Y_DTYPE != 3
#error "Y_DTYPE must be 1 (fp16) or 3 (fp32)"
#endif
#define OUT_F16 (Y_DTYPE == 1)

// store2 writes Y[r, c] = v0 and Y[r, c+1] = v1 (fp16 when F16, else fp32),
// skipping what lies outside.
template <bool F16> __device__ __forceinline__ void store2(void *Y, int M, int N, int r, int c, float v0, float v1) {
	if (r >= M)
		return;
	const size_t o = (size_t)r * N + c;
	if (F16) {
		unsigned short *y = reinterpret_cast<unsigned short *>(Y);
		if ((N & 1) == 0 && c + 1 < N) {
			*reinterpret_cast<u32 *>(y + o) = (u32)f2h(v0) | ((u32)f2h(v1) << 16);
		} else {
			if (c < N)
				y[o] = f2h(v0);
			if (c + 1 < N)
				y[o + 1] = f2h(v1);
		}
	} else {
		float *y = reinterpret_cast<float *>(Y);
		if ((N & 1) == 0 && c + 1 < N) {
			*reinterpret_cast<float2 *>(y + o) = make_float2(v0, v1);
		} else {
			if (c < N)
				y[o] = v0;
			if (c + 1 < N)
				y[o + 1] = v1;
		}
	}
}

// store2T is store2 for SWAP 1: the kernel computes the transpose, so its
// element (r, c) is Y[c, r], stored at c·M + r of the N×M (kernel dims)
// output; v1 is element (r, c+1).
template <bool F16> __device__ __forceinline__ void store2T(void *Y, int M, int N, int r, int c, float v0, float v1) {
	if (r >= M)
		return;
	if (F16) {
		unsigned short *y = reinterpret_cast<unsigned short *>(Y);
		if (c < N)
			y[(size_t)c * M + r] = f2h(v0);
		if (c + 1 < N)
			y[(size_t)(c + 1) * M + r] = f2h(v1);
	} else {
		float *y = reinterpret_cast<float *>(Y);
		if (c < N)
			y[(size_t)c * M + r] = v0;
		if (c + 1 < N)
			y[(size_t)(c + 1) * M + r] = v1;
	}
}

#if SWAP
#define STORE2 store2T
#else
#define STORE2 store2
#endif

// GemmProd loads a stage: X's rows bm·BM + [0, BM) and W's rows bn·BN +
// [0, BN), k-block kb.
struct GemmProd {
	const TMap *x, *w;
	__device__ __forceinline__ void prefetch() const {
		tma_prefetch(x);
		tma_prefetch(w);
	}
	__device__ __forceinline__ void init(u32) const {}
	// With MC 2 the pair shares the first operand's rows, with MC 1
	// the second's (each CTA loads its half, multicast).
	__device__ __forceinline__ void stage_a(u32 st, u32 bar, const Unit &u, int kb) const {
		wg_load_rows(st, x, kb * BK, u.bm * BM, BM, bar, MC == 2);
	}
	__device__ __forceinline__ void stage_b(u32 st, u32 bar, const Unit &u, int kb) const {
		wg_load_rows(st + A_BYTES, w, kb * BK, u.bn * BN, BN, bar, MC == 1);
	}
	__device__ __forceinline__ void stage(u32 st, u32 bar, const Unit &u, int kb) const {
		stage_a(st, bar, u, kb);
		stage_b(st, bar, u, kb);
	}
	// PDL 2 (the core's WG_PRELOAD): the weights' rows, the second operand
	// (W), or the first with SWAP (the kernel then computes W·Xᵀ), go
	// before griddepcontrol.wait; the activations' rows after it.
	__device__ __forceinline__ void stage_const(u32 st, u32 bar, const Unit &u, int kb) const {
		if (SWAP)
			stage_a(st, bar, u, kb);
		else
			stage_b(st, bar, u, kb);
	}
	__device__ __forceinline__ void stage_rest(u32 st, u32 bar, const Unit &u, int kb) const {
		if (SWAP)
			stage_b(st, bar, u, kb);
		else
			stage_a(st, bar, u, kb);
	}
	__device__ __forceinline__ void unit_begin(const Unit &, int, u32, u32) const {}
	__device__ __forceinline__ void unit_done(const Unit &, int, u32, u32) const {}
};

// StoreEpi stores a consumer's accumulators into Y (or, split K, chunk j's
// partial into P[j]).
// WG_EPI_USED (the prelude, builtin/cuda_wgmma.go) is Y_DTYPE == 1: an fp32
// Y reserves no staging tile.
#define EPI_STAGED (EPI && OUT_F16 && !KUNITS && !SWAP)
static_assert(WG_EPI_USED == OUT_F16, "gemm_wgmma: the prelude's WG_EPI_USED must be Y_DTYPE == 1");
static_assert(!EPI || (!KUNITS && !SWAP), "gemm_wgmma: EPI 1 needs SWAP 0 and no split-K partials");

struct StoreEpi {
	void *Y;
	int M, N;
	const TMap *ym; // EPI 1: the tensor map over Y
	__device__ __forceinline__ void operator()(float (&acc)[MW][BN / 2], const EpiCtx &e) const {
		const int lane = e.lane;
#if EPI_STAGED
		if ((N & 7) == 0) {
			epi_begin(e);
			const int rs = e.warp * 16 + (lane >> 2), cs = 2 * (lane & 3);
#pragma unroll
			for (int i = 0; i < MW; i++)
#pragma unroll
				for (int j = 0; j < BN / 8; j++) {
					sts32(e.stg + epi_off(rs + i * 64, cs + 8 * j), pack_h2(acc[i][4 * j], acc[i][4 * j + 1]));
					sts32(e.stg + epi_off(rs + i * 64 + 8, cs + 8 * j), pack_h2(acc[i][4 * j + 2], acc[i][4 * j + 3]));
				}
			epi_end(e, ym, e.w.bn * BN, e.w.bm * BM + (PINGPONG ? 0 : e.c * WGM));
			return;
		}
#endif
		const int r0 = e.w.bm * BM + (PINGPONG ? 0 : e.c * WGM) + e.warp * 16 + (lane >> 2);
		const int c0 = e.w.bn * BN + 2 * (lane & 3);
#if KUNITS
		void *out = reinterpret_cast<float *>(Y) + (size_t)e.w.j * M * N;
#else
		void *out = Y;
#endif
#pragma unroll
		for (int i = 0; i < MW; i++)
#pragma unroll
			for (int j = 0; j < BN / 8; j++) {
				STORE2<OUT_F16 && !KUNITS>(out, M, N, r0 + i * 64, c0 + 8 * j, acc[i][4 * j], acc[i][4 * j + 1]);
				STORE2<OUT_F16 && !KUNITS>(out, M, N, r0 + i * 64 + 8, c0 + 8 * j, acc[i][4 * j + 2], acc[i][4 * j + 3]);
			}
	}
};

extern "C" __global__ void __launch_bounds__(NT, 1)
    tilefit_gemm_wgmma(const __grid_constant__ TMap tmX, const __grid_constant__ TMap tmW,
#if EPI
		       const __grid_constant__ TMap tmY,
#endif
		       void *__restrict__ Y, long long M64, long long N64, long long K64) {
	const int M = (int)M64, N = (int)N64, K = (int)K64;
	const GemmProd prod = {&tmX, &tmW};
#if EPI
	const StoreEpi epi = {Y, M, N, &tmY};
#else
	const StoreEpi epi = {Y, M, N, nullptr};
#endif
	wg_kernel(prod, epi, (M + BM - 1) / BM, (N + BN - 1) / BN, (K + BK - 1) / BK);
}

// tilefit_gemm_wgmma_reduce finishes a split-K call (KSPLIT > 0): Y[i] =
// ((P[0][i] + P[1][i]) + P[2][i]) + ... over the S partials in ascending
// chunk order, in fp32, then rounded to Y's type. The order depends on K and
// KSPLIT alone, never on M or the tile, so the result is batch-invariant
// and every tile of one KSPLIT gives the same bits.
extern "C" __global__ void __launch_bounds__(256) tilefit_gemm_wgmma_reduce(const float *__restrict__ P, void *__restrict__ Y, long long M64, long long N64, long long S64) {
#if PDL
	// Launched early (programmatic dependent launch): wait until the
	// partials kernel has finished and its writes are visible.
	asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
	asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
	const size_t mn = (size_t)M64 * (size_t)N64;
	const int S = (int)S64;
	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < mn; i += (size_t)gridDim.x * blockDim.x) {
		float acc = P[i];
		for (int j = 1; j < S; j++)
			acc += P[(size_t)j * mn + i];
#if OUT_F16
		reinterpret_cast<unsigned short *>(Y)[i] = f2h(acc);
#else
		reinterpret_cast<float *>(Y)[i] = acc;
#endif
	}
}
