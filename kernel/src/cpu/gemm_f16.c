/* gemm_f16 (placeholder, simple): Y[M,N] = X[M,K]·W[N,K]^T, fp16 in, fp32 FMA in k order. */
#include <stdint.h>
#include <math.h>
#include <immintrin.h>
#ifndef TM
#define TM 64
#endif
#ifndef TN
#define TN 128
#endif
#ifndef OUT_F16
#define OUT_F16 0
#endif
static float h2f(uint16_t h) { return _cvtsh_ss(h); }
int tilefit_gemm(const uint16_t *X, const uint16_t *W, void *Y, int64_t M, int64_t N, int64_t K) {
	for (int64_t m0 = 0; m0 < M; m0 += TM)
	for (int64_t n0 = 0; n0 < N; n0 += TN)
	for (int64_t m = m0; m < m0 + TM && m < M; m++)
	for (int64_t n = n0; n < n0 + TN && n < N; n++) {
		float acc = 0.0f;
		for (int64_t k = 0; k < K; k++) acc = fmaf(h2f(X[m*K+k]), h2f(W[n*K+k]), acc);
#if OUT_F16
		((uint16_t*)Y)[m*N+n] = _cvtss_sh(acc, 0);
#else
		((float*)Y)[m*N+n] = acc;
#endif
	}
	return 0;
}
