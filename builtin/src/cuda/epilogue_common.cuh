// epilogue_common.cuh — the epilogue arithmetic of tilefit's fused CUDA
// operators, written once and shared by every source that computes them:
// the mma.sync core's families (after ptx_common.cuh, before
// fused_common.cu), the wgmma families (after wgmma_core.cuh) and the vendor
// baselines' elementwise kernels (fused_vendor.cu). It is not a family: Go
// (builtin/source.go) concatenates it, with #line directives. Because every
// candidate of an operator runs this one text, the epilogue cannot differ
// between a fused tile, a chain and a baseline; only the accumulators fed to
// it can.
//
//   - f16_t, h2f: an fp16 bit pattern and its exact fp32 value;
//   - mul_rn/add_rn/fma_rn/div_rn: fp32 arithmetic with explicit
//     round-to-nearest (ptxas never contracts or splits an instruction that
//     names its rounding, so the order of operations is exactly the order
//     written); ex2_approx: the hardware 2^x;
//   - mix4: hc_up's 4-stream mix, s = y0·h0; s = fma(y1,h1,s);
//     s = fma(y2,h2,s); s = fma(y3,h3,s); mix = s·0.25 (builtin/hcup.go);
//   - act: SwiGLU's silu(g)·u, e = ex2.approx.ftz(g·(−log2 e));
//     s = g/(1+e); h = s·u (builtin/swiglu.go).
//
// FAULT=1 (tests only) skips stream 3 in mix4.

#ifndef FAULT
#define FAULT 0
#endif

typedef unsigned short f16_t; // an fp16 bit pattern

// h2f is the exact fp32 value of an fp16 pattern.
__device__ __forceinline__ float h2f(f16_t h) {
	float f;
	asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
	return f;
}

__device__ __forceinline__ float mul_rn(float a, float b) {
	float r;
	asm("mul.rn.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
	return r;
}

__device__ __forceinline__ float add_rn(float a, float b) {
	float r;
	asm("add.rn.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
	return r;
}

// fma_rn is a·b + c rounded once.
__device__ __forceinline__ float fma_rn(float a, float b, float c) {
	float r;
	asm("fma.rn.f32 %0, %1, %2, %3;" : "=f"(r) : "f"(a), "f"(b), "f"(c));
	return r;
}

__device__ __forceinline__ float div_rn(float a, float b) {
	float r;
	asm("div.rn.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
	return r;
}

// ex2_approx is 2^x with the hardware's approximation (ex2.approx.ftz.f32).
__device__ __forceinline__ float ex2_approx(float x) {
	float r;
	asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
	return r;
}

// mix4 is hc_up's mix of the four streams' values y_c and weights h_c.
__device__ __forceinline__ float mix4(float y0, float y1, float y2, float y3, float h0, float h1, float h2, float h3) {
	float s = mul_rn(y0, h0);
	s = fma_rn(y1, h1, s);
	s = fma_rn(y2, h2, s);
#if FAULT != 1
	s = fma_rn(y3, h3, s);
#endif
	return mul_rn(s, 0.25f);
}

// act is SwiGLU's silu(g)·u.
__device__ __forceinline__ float act(float g, float u) {
	const float e = ex2_approx(mul_rn(g, -1.4426950408889634f));
	const float s = div_rn(g, add_rn(1.0f, e));
	return mul_rn(s, u);
}
