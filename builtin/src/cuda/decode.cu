// gemm_decode for CUDA (sm_90): Y[M,N] = X[M,K] · W[N,K]^T for decode
// (M ≤ 16 per block), streaming the weights through a ring of shared-memory
// stages filled by bulk copies (cp.async.bulk, the TMA engine without a
// tensor map) that complete on mbarriers.
//
// X (M×K) and W (N×K) are row-major fp16 (K contiguous, K a multiple of 8,
// both 16-byte aligned); Y (M×N) is row-major fp32, or fp16 when Y_DTYPE is
// 1 (kernel.DType codes: 1 fp16, 3 fp32).
//
// Entry point (tilefit's CUDA convention: operand pointers, then int64
// dimensions, in the order of builtin/decode.go's Plan):
//   extern "C" __global__ void tilefit_gemm_decode(const __half *X, const __half *W, void *Y,
//                                                  long long M, long long N, long long K);
// grid (ceil(N/BN), ceil(M/16)), (WARPS+1)·32 threads, DECODE_SMEM bytes of
// dynamic shared memory (builtin/decode.go's DecodeSharedBytes).
//
// A block owns BN weight rows (n0 .. n0+BN) and 16 token rows (m0 .. m0+16)
// and walks K in stages of TK. Warp WARPS is the producer: for stage kt it
// waits until the consumers have released the ring slot kt % STAGES, arms
// the slot's "full" mbarrier with the stage's byte count and copies each W
// row segment W[n, k0 .. k0+TK) and each X row segment X[m, k0 .. k0+TK)
// that exists (n < N, m < M; the last stage is shorter when TK does not
// divide K) with one bulk copy per row, one row per lane. Shared-memory rows
// are 2·TK+16 bytes apart, so the 8 rows one ldmatrix phase reads fall in 8
// distinct 16-byte bank groups. Warps 0 .. WARPS-1 are the consumers: warp
// w owns weight rows 8·NB·w .. 8·NB·(w+1) (NB = BN/(8·WARPS) n8 groups) and
// all 16 token rows.
//
// Each consumer runs mma.sync.m16n8k16 with X as the 16-row A operand (M is
// padded to 16 rows only in registers: rows ≥ M are never copied, hold
// whatever the slot held before and are never stored — a row of the mma's
// D depends only on the same row of A) and W as the n8 B operand: the
// operand order of gemm_f16. Its fragments are double-buffered in blocks of
// 64 k (four k16 steps): block u+1's ldmatrix reads are issued before block
// u's mma, so the mma chain of each output element waits for nothing but
// its own previous step; after block u's mma are issued (its fragments are
// in registers) the last block of a stage releases the slot (one arrive per
// warp on the slot's "empty" mbarrier).
//
// Reduction order, the same as gemm_f16, gemm_wgmma and gemm_stream: every
// output element is
//   acc = 0; for k0 = 0, 16, 32, ... < K: acc = mma(acc, X[m, k0:k0+16], W[n, k0:k0+16])
// with elements past K zero (when K % 16 == 8 the last step's upper eight
// k are zeroed in registers). K is never split, so the class is gemm_f16's.
//
// PDL 1 launches with programmatic stream serialisation: the kernel
// triggers its dependents at entry and every thread waits (griddepcontrol
// .wait) before it touches global memory. PDL 2 is PDL 1 except that the
// producer copies the W rows of the first STAGES stages before it waits:
// it assumes the kernel before it does not write W (weights are constant
// during decode; a dequantising kernel before it would break that).
//
// WATCHDOG 1 (tests only): an mbarrier wait longer than ~2·10⁹ cycles traps.
//
// No headers are included (NVRTC alone compiles it) and no file is shared:
// the text compiled is this file, with its own one-instruction wrappers
// (ptx_common.cuh's rule is that a family including it uses all of it; the
// cp.async ones have no use here).

#ifndef BN
#define BN 32
#endif
#ifndef WARPS
#define WARPS 4
#endif
#ifndef TK
#define TK 256
#endif
#ifndef STAGES
#define STAGES 4
#endif
#ifndef PDL
#define PDL 0
#endif
#ifndef WATCHDOG
#define WATCHDOG 0
#endif
#ifndef Y_DTYPE
#define Y_DTYPE 3
#endif
#if Y_DTYPE != 1 && Y_DTYPE != 3
#error "Y_DTYPE must be 1 (fp16) or 3 (fp32)"
#endif
#define OUT_F16 (Y_DTYPE == 1)
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#error "gemm_decode needs sm_90 (cp.async.bulk, mbarrier transaction counts)"
#endif

#ifndef __CUDA_FP16_H__
struct __align__(2) __half {
	unsigned short x;
};
#endif

typedef unsigned int u32;

__device__ __forceinline__ u32 dec_smem(const void *p) {
	u32 r;
	asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(r) : "l"(p));
	return r;
}

__device__ __forceinline__ void dec_ldsm4(u32 addr, u32 &r0, u32 &r1, u32 &r2, u32 &r3) {
	asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
		     : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
		     : "r"(addr)
		     : "memory");
}

// dec_mma: c += A(16×16, row) · B(16×8, col), fp16 in, fp32 accumulate
// (the instruction and operand order of gemm_f16's mma16816).
__device__ __forceinline__ void dec_mma(float *c, const u32 *a, u32 b0, u32 b1) {
	asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
	    : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
	    : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// dec_f2h rounds to the nearest fp16, ties to even, and returns its bits.
__device__ __forceinline__ unsigned short dec_f2h(float v) {
	unsigned short h;
	asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(v));
	return h;
}

constexpr int NB = BN / (8 * WARPS); // n8 weight-row groups per consumer warp
constexpr int NT = (WARPS + 1) * 32;
constexpr int XR = 16;               // token rows per block (the mma's M)
constexpr int TF = 64;               // k per fragment block
constexpr int KF = TF / 16;          // k16 steps per fragment block
constexpr int SUB = TK / TF;         // fragment blocks per stage
constexpr int RS = 2 * TK + 16;      // bytes per shared-memory row
constexpr int STAGE_BYTES = (BN + XR) * RS;
constexpr int BAR_BYTES = (2 * STAGES * 8 + 127) / 128 * 128;
static_assert(NB >= 1 && NB * 8 * WARPS == BN, "BN must be a multiple of 8·WARPS");
static_assert(NB <= 4, "at most 4 n8 groups per warp");
static_assert(TK % TF == 0 && TK >= TF && TK <= 512, "TK must be 64, 128, 256 or 512");
static_assert(STAGES >= 2, "at least two stages");
static_assert(RS % 16 == 0, "bulk copies need 16-byte aligned rows");

__device__ __forceinline__ void dec_bar_init(u32 bar, u32 count) {
	asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}

__device__ __forceinline__ void dec_expect_tx(u32 bar, u32 bytes) {
	asm volatile("{\n\t.reg .b64 state;\n\tmbarrier.arrive.expect_tx.shared::cta.b64 state, [%0], %1;\n}\n" ::"r"(bar), "r"(bytes) : "memory");
}

__device__ __forceinline__ void dec_arrive(u32 bar) {
	asm volatile("{\n\t.reg .b64 state;\n\tmbarrier.arrive.shared::cta.b64 state, [%0];\n}\n" ::"r"(bar) : "memory");
}

// dec_wait returns once the phase of parity `parity` of bar has completed.
__device__ __forceinline__ void dec_wait(u32 bar, u32 parity) {
	u32 done;
#if WATCHDOG
	const long long t0 = clock64();
#endif
	do {
		asm volatile("{\n\t.reg .pred p;\n\t"
			     "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
			     "selp.u32 %0, 1, 0, p;\n}\n"
			     : "=r"(done)
			     : "r"(bar), "r"(parity)
			     : "memory");
#if WATCHDOG
		if (!done && clock64() - t0 > 2000000000ll)
			asm volatile("trap;");
#endif
	} while (!done);
}

// dec_bulk copies bytes (a multiple of 16) from global src to shared dst
// (both 16-byte aligned), completing bytes of bar's transaction count.
__device__ __forceinline__ void dec_bulk(u32 dst, const void *src, u32 bytes, u32 bar) {
	asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(dst), "l"(src), "r"(bytes), "r"(bar) : "memory");
}

// store writes Y[m, n] = v (fp16 when OUT_F16, else fp32) when inside.
__device__ __forceinline__ void dec_store(void *Y, int M, int N, int m, int n, float v) {
	if (m >= M || n >= N)
		return;
	const size_t o = (size_t)m * N + n;
#if OUT_F16
	reinterpret_cast<unsigned short *>(Y)[o] = dec_f2h(v);
#else
	reinterpret_cast<float *>(Y)[o] = v;
#endif
}

// Frags is one fragment block: the A fragments (X) of its KF k16 steps and
// the B fragments (W) of the warp's NB n8 groups.
struct Frags {
	u32 a[KF][4];
	u32 b[NB][KF][2];
};

// Consumer is a consumer warp's view of the ring.
struct Consumer {
	u32 ring, bars;  // shared addresses: stage 0, full[0] (empty[s] = full[s] + 8·STAGES)
	u32 aOff, bOff;  // this lane's ldmatrix byte offsets in a stage
	int K, U;        // K, fragment blocks ceil(K / TF)

	// load reads fragment block u into f, first waiting for its stage
	// when u begins one.
	__device__ __forceinline__ void load(Frags &f, int u) const {
		const int kt = u / SUB, s = kt % STAGES;
		if (u % SUB == 0)
			dec_wait(bars + 8u * s, (u32)((kt / STAGES) & 1));
		const u32 st = ring + (u32)(s * STAGE_BYTES) + (u32)((u % SUB) * TF * 2);
#pragma unroll
		for (int kk = 0; kk < KF; kk++)
			dec_ldsm4(st + aOff + kk * 32, f.a[kk][0], f.a[kk][1], f.a[kk][2], f.a[kk][3]);
#pragma unroll
		for (int j = 0; j < NB; j++)
#pragma unroll
			for (int q = 0; q < KF / 2; q++)
				dec_ldsm4(st + bOff + j * 8 * RS + q * 64, f.b[j][2 * q][0], f.b[j][2 * q][1], f.b[j][2 * q + 1][0], f.b[j][2 * q + 1][1]);
	}

	// compute runs block u's mma (k16 steps that hold part of K: ceil(K/16)
	// per output element, as gemm_f16), then releases u's stage when u is
	// its last block.
	__device__ __forceinline__ void compute(float (&acc)[NB][4], Frags &f, int u, int lane) const {
#pragma unroll
		for (int kk = 0; kk < KF; kk++) {
			const int k0 = u * TF + kk * 16;
			if (k0 < K) {
				if (K - k0 == 8) { // the step's upper eight k are past K
					f.a[kk][2] = f.a[kk][3] = 0u;
#pragma unroll
					for (int j = 0; j < NB; j++)
						f.b[j][kk][1] = 0u;
				}
#pragma unroll
				for (int j = 0; j < NB; j++)
					dec_mma(acc[j], f.a[kk], f.b[j][kk][0], f.b[j][kk][1]);
			}
		}
		if (u % SUB == SUB - 1 || u == U - 1) {
			__syncwarp();
			if (lane == 0)
				dec_arrive(bars + 8u * STAGES + 8u * ((u / SUB) % STAGES));
		}
	}
};

extern "C" __global__ void __launch_bounds__(NT) tilefit_gemm_decode(const __half *__restrict__ X, const __half *__restrict__ W, void *__restrict__ Y, long long M64, long long N64, long long K64) {
	const int M = (int)M64, N = (int)N64, K = (int)K64;
	extern __shared__ __align__(128) unsigned char smem[];
#if PDL
	asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
	const int n0 = blockIdx.x * BN, m0 = blockIdx.y * XR;
	const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
	const u32 bars = dec_smem(smem), ring = bars + BAR_BYTES;
	const int KT = (K + TK - 1) / TK;
	if (threadIdx.x == 0) {
		for (int s = 0; s < STAGES; s++) {
			dec_bar_init(bars + 8u * s, 1);                         // full: the producer's arrive + the bytes
			dec_bar_init(bars + 8u * STAGES + 8u * s, (u32)WARPS); // empty: one arrive per consumer warp
		}
		asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
	}
	__syncthreads();

	if (warp == WARPS) {
		// Producer. wr W rows and xr X rows of every stage exist.
		const int wr = min(BN, N - n0), xr = min(XR, M - m0);
		const int rows = wr + xr;
		// issue copies stage kt's W rows (w) and X rows (x); arm: lane 0
		// arms the full barrier with the whole stage's bytes first.
		auto issue = [&](int kt, bool arm, bool w, bool x) {
			const int s = kt % STAGES, k0 = kt * TK;
			const u32 kb = (u32)(min(TK, K - k0) * 2);
			const u32 full = bars + 8u * s, st = ring + (u32)(s * STAGE_BYTES);
			if (arm) {
				if (lane == 0)
					dec_expect_tx(full, (u32)rows * kb);
				__syncwarp();
			}
			for (int r = lane; r < rows; r += 32) {
				if (r < wr) {
					if (w)
						dec_bulk(st + (u32)(r * RS), W + (size_t)(n0 + r) * K + k0, kb, full);
				} else if (x) {
					dec_bulk(st + (u32)((BN + r - wr) * RS), X + (size_t)(m0 + r - wr) * K + k0, kb, full);
				}
			}
		};
		int kt = 0;
#if PDL == 2
		const int pre = min(STAGES, KT);
		for (; kt < pre; kt++)
			issue(kt, true, true, false);
		asm volatile("griddepcontrol.wait;\n" ::: "memory");
		for (int k = 0; k < pre; k++)
			issue(k, false, false, true);
#elif PDL
		asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
		for (; kt < KT; kt++) {
			if (kt >= STAGES)
				dec_wait(bars + 8u * STAGES + 8u * (kt % STAGES), (u32)((kt / STAGES - 1) & 1));
			issue(kt, true, true, true);
		}
		return;
	}

#if PDL
	asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
	// Consumers. ldmatrix offsets: A (X, x4 per k16 step): lane l reads
	// token row l % 16 at chunk l / 16 (a0..a3 of mma.m16n8k16); B (W, x4
	// per two k16 steps): lane l reads weight row l % 8 of the group at
	// chunk l / 8 of a 32-k window (b0, b1 of two steps).
	Consumer c;
	c.ring = ring;
	c.bars = bars;
	c.aOff = (u32)((BN + (lane & 15)) * RS + (lane >> 4) * 16);
	c.bOff = (u32)((warp * 8 * NB + (lane & 7)) * RS + (lane >> 3) * 16);
	c.K = K;
	c.U = (K + TF - 1) / TF;
	float acc[NB][4];
#pragma unroll
	for (int j = 0; j < NB; j++)
#pragma unroll
		for (int e = 0; e < 4; e++)
			acc[j][e] = 0.0f;
	Frags f0, f1;
	const int U = c.U;
	if (U > 0)
		c.load(f0, 0);
	for (int u = 0; u < U; u += 2) {
		if (u + 1 < U)
			c.load(f1, u + 1);
		c.compute(acc, f0, u, lane);
		if (u + 1 < U) {
			if (u + 2 < U)
				c.load(f0, u + 2);
			c.compute(acc, f1, u + 1, lane);
		}
	}

	// Epilogue: D (16 tokens × 8 weight rows per group): a lane holds
	// tokens lane/4 and lane/4 + 8, weight rows 2·(lane%4) and +1.
	const int g = lane >> 2, t = lane & 3;
#pragma unroll
	for (int j = 0; j < NB; j++) {
		const int n = n0 + warp * 8 * NB + j * 8 + 2 * t;
		dec_store(Y, M, N, m0 + g, n, acc[j][0]);
		dec_store(Y, M, N, m0 + g, n + 1, acc[j][1]);
		dec_store(Y, M, N, m0 + g + 8, n, acc[j][2]);
		dec_store(Y, M, N, m0 + g + 8, n + 1, acc[j][3]);
	}
}
