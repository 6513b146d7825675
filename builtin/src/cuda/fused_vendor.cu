// fused_vendor.cu — the elementwise steps of the CUDA vendor baselines of
// the fused operators (builtin/fused_vendor.go): what an engine runs after a
// cuBLAS GEMM whose output it keeps in fp16, and what torch.compile
// generates for it — one pass, 16-byte loads and stores, grid-stride. Go
// puts ptx_common.cuh (f2h) and epilogue_common.cuh (mix4, act: the
// arithmetic every candidate of the operator runs) before this file.
//
//   tilefit_hc_up_mix16(Y4, H, mixh, [mixed if BOUND], long long M, S)
//     Y4 [M,4S] fp16 (the GEMM's output), H [M,4,S] fp16:
//     mixh[t,d] = fp16(mix4(Y4[t, c·S+d], H[t,c,d] for c < 4))
//   tilefit_swiglu_act16(G, U, h, long long n)
//     G, U [n] fp16 (the two GEMMs' outputs): h[i] = fp16(act(G[i], U[i]))
//
// Eight outputs per thread and step (one 16-byte store of fp16, 16-byte
// loads of every input); hc_up's rows need S % 8 == 0 for that, else one
// element per step. Indices are 32-bit (the Plans require M·S and n below
// 2³¹).

#ifndef BOUND
#define BOUND 0
#endif

__device__ __forceinline__ void ldg16(const f16_t *p, u32 (&v)[4]) {
	asm("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];\n" : "=r"(v[0]), "=r"(v[1]), "=r"(v[2]), "=r"(v[3]) : "l"(p));
}

__device__ __forceinline__ void stg16(f16_t *p, u32 a, u32 b, u32 c, u32 d) {
	asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};\n" ::"l"(p), "r"(a), "r"(b), "r"(c), "r"(d) : "memory");
}

// el is fp16 element e (0..7) of eight held as four 32-bit words.
__device__ __forceinline__ float el(const u32 (&v)[4], int e) { return h2f((f16_t)(e & 1 ? v[e >> 1] >> 16 : v[e >> 1] & 0xFFFFu)); }

extern "C" __global__ void __launch_bounds__(256) tilefit_hc_up_mix16(const f16_t *__restrict__ Y4, const f16_t *__restrict__ H, f16_t *__restrict__ mixh,
#if BOUND
								      float *__restrict__ mixed,
#endif
								      long long M64, long long S64) {
	const unsigned M = (unsigned)M64, S = (unsigned)S64;
	const unsigned step = gridDim.x * blockDim.x;
	if ((S & 7) == 0) {
		const unsigned per = S / 8, groups = M * per;
		for (unsigned t = blockIdx.x * blockDim.x + threadIdx.x; t < groups; t += step) {
			const unsigned m = t / per, d = (t - m * per) * 8;
			const size_t row = (size_t)m * 4 * S + d;
			u32 y[4][4], h[4][4];
#pragma unroll
			for (int c = 0; c < 4; c++) {
				ldg16(Y4 + row + (size_t)c * S, y[c]);
				ldg16(H + row + (size_t)c * S, h[c]);
			}
			float v[8];
#pragma unroll
			for (int e = 0; e < 8; e++)
				v[e] = mix4(el(y[0], e), el(y[1], e), el(y[2], e), el(y[3], e), el(h[0], e), el(h[1], e), el(h[2], e), el(h[3], e));
			const size_t o = (size_t)m * S + d;
			stg16(mixh + o, (u32)f2h(v[0]) | ((u32)f2h(v[1]) << 16), (u32)f2h(v[2]) | ((u32)f2h(v[3]) << 16),
			      (u32)f2h(v[4]) | ((u32)f2h(v[5]) << 16), (u32)f2h(v[6]) | ((u32)f2h(v[7]) << 16));
#if BOUND
			*reinterpret_cast<float4 *>(mixed + o) = make_float4(v[0], v[1], v[2], v[3]);
			*reinterpret_cast<float4 *>(mixed + o + 4) = make_float4(v[4], v[5], v[6], v[7]);
#endif
		}
	} else {
		const unsigned all = M * S;
		for (unsigned t = blockIdx.x * blockDim.x + threadIdx.x; t < all; t += step) {
			const unsigned m = t / S, d = t - m * S;
			const f16_t *y = Y4 + (size_t)m * 4 * S + d, *h = H + (size_t)m * 4 * S + d;
			const float v = mix4(h2f(y[0]), h2f(y[S]), h2f(y[2 * S]), h2f(y[3 * S]), h2f(h[0]), h2f(h[S]), h2f(h[2 * S]), h2f(h[3 * S]));
			mixh[t] = f2h(v);
#if BOUND
			mixed[t] = v;
#endif
		}
	}
}

extern "C" __global__ void __launch_bounds__(256) tilefit_swiglu_act16(const f16_t *__restrict__ G, const f16_t *__restrict__ U, f16_t *__restrict__ h,
								       long long n64) {
	const unsigned n = (unsigned)n64, groups = n / 8;
	const unsigned step = gridDim.x * blockDim.x, first = blockIdx.x * blockDim.x + threadIdx.x;
	for (unsigned t = first; t < groups; t += step) {
		u32 g[4], u[4];
		ldg16(G + (size_t)t * 8, g);
		ldg16(U + (size_t)t * 8, u);
		u32 w[4];
#pragma unroll
		for (int q = 0; q < 4; q++)
			w[q] = (u32)f2h(act(el(g, 2 * q), el(u, 2 * q))) | ((u32)f2h(act(el(g, 2 * q + 1), el(u, 2 * q + 1))) << 16);
		stg16(h + (size_t)t * 8, w[0], w[1], w[2], w[3]);
	}
	for (unsigned i = groups * 8 + first; i < n; i += step)
		h[i] = f2h(act(h2f(G[i]), h2f(U[i])));
}
