// ptx_common.cuh — the PTX wrappers shared by tilefit's mma.sync CUDA
// sources: gemm_f16.cu, gemm_stream.cu and fused_common.cu (the core of the
// fused families hc_up_f16, swiglu_f16, gemm_q8_f16). It is not a family:
// Go (builtin/source.go) concatenates this text before each of those
// sources, with #line directives, so NVRTC sees one file and no #include is
// needed. It needs no parameter (TM, TK, ...) and defines nothing but u32
// and these functions, each written once.
//
// Every wrapper is one PTX instruction (or the cvta/cvt pair of smem_addr);
// the asm strings are the instructions of the PTX ISA:
//   - smem_addr: the 32-bit shared-memory address of a generic pointer;
//   - cp_async16, cp_async_commit, cp_async_wait<N>: 16-byte cp.async.cg
//     copies (zero-filled past src-size bytes) and their groups;
//   - st_shared16: one 16-byte shared store of four 32-bit words;
//   - ldmatrix_x4: four 8×8 b16 matrices from shared memory;
//   - mma16816: mma.sync.m16n8k16, fp16 in, fp32 accumulate;
//   - f2h: fp32 → fp16 bit pattern, round to nearest even.

typedef unsigned int u32;

__device__ __forceinline__ u32 smem_addr(const void *p) {
	u32 r;
	asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(r) : "l"(p));
	return r;
}

__device__ __forceinline__ void cp_async16(u32 dst, const void *src, int bytes) {
	asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(bytes) : "memory");
}

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }

template <int N> __device__ __forceinline__ void cp_async_wait() {
	asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

__device__ __forceinline__ void st_shared16(u32 dst, u32 a, u32 b, u32 c, u32 d) {
	asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};\n" ::"r"(dst), "r"(a), "r"(b), "r"(c), "r"(d) : "memory");
}

__device__ __forceinline__ void ldmatrix_x4(u32 addr, u32 &r0, u32 &r1, u32 &r2, u32 &r3) {
	asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
		     : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
		     : "r"(addr)
		     : "memory");
}

// mma16816: c += A(16×16, row) · B(16×8, col), fp16 in, fp32 accumulate.
__device__ __forceinline__ void mma16816(float *c, const u32 *a, u32 b0, u32 b1) {
	asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
	    : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
	    : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// f2h rounds to the nearest fp16, ties to even (subnormals kept), and
// returns the fp16 bit pattern.
__device__ __forceinline__ unsigned short f2h(float v) {
	unsigned short h;
	asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(v));
	return h;
}
