/*
 * gemm_bias_f16 — a user's own CPU family (the worked example of
 * docs/operators.md).
 *
 *   Y[M,N] = X[M,K] · W[N,K]ᵀ + b[N],   Y[m,n] = (Σ_{k<K} X[m,k]·W[n,k]) + b[n]
 *
 * X is M×K and W is N×K, row-major IEEE binary16 bit patterns; b is N fp32;
 * Y is M×N row-major fp32.
 *
 * Entry point (tilefit's CPU convention):
 *   int gemm_bias_f16(void **ptrs, const int64_t *args);
 *   ptrs = {X, W, b, Y}, args = {M, N, K}; returns 0.
 *
 * Parameters: TM×TN, the block of Y computed together. Every element is one
 * fmaf chain, k = 0..K-1 from +0, then one fp32 add of b[n]: every tile
 * gives the same bits.
 */
#include <stdint.h>
#include <string.h>
#include <math.h>

#ifndef TM
#define TM 8
#endif
#ifndef TN
#define TN 16
#endif

static float h2f(uint16_t h)
{
	uint32_t s = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ffu, b;
	if (e == 0x1f) {
		b = s | 0x7f800000u | (m << 13);
	} else if (e != 0) {
		b = s | ((e + 112) << 23) | (m << 13);
	} else if (m == 0) {
		b = s;
	} else {
		e = 113;
		while (!(m & 0x400u)) {
			m <<= 1;
			e--;
		}
		b = s | (e << 23) | ((m & 0x3ffu) << 13);
	}
	float f;
	memcpy(&f, &b, 4);
	return f;
}

int gemm_bias_f16(void **ptrs, const int64_t *args)
{
	const uint16_t *X = ptrs[0], *W = ptrs[1];
	const float *bias = ptrs[2];
	float *Y = ptrs[3];
	int64_t M = args[0], N = args[1], K = args[2];
	for (int64_t m0 = 0; m0 < M; m0 += TM)
		for (int64_t n0 = 0; n0 < N; n0 += TN)
			for (int64_t m = m0; m < m0 + TM && m < M; m++)
				for (int64_t n = n0; n < n0 + TN && n < N; n++) {
					float acc = 0.0f;
					for (int64_t k = 0; k < K; k++)
						acc = fmaf(h2f(X[m * K + k]), h2f(W[n * K + k]), acc);
					Y[m * N + n] = acc + bias[n];
				}
	return 0;
}
