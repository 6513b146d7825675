/*
 * f16_common.h — the portable fp16 ↔ fp32 conversions shared by tilefit's
 * CPU sources: gemm_f16.c (its plain C path) and fused_common.c (the core
 * of the fused families hc_up_f16, swiglu_f16, gemm_q8_f16, where they
 * stand in for F16C when it is not compiled in). It is not a family: Go
 * (builtin/source.go) concatenates this text before each of those sources,
 * with #line directives, so the compiler sees one file. It needs no
 * parameter (TM, TK, ...) and defines nothing but these two functions.
 *
 * Both are bit-exact IEEE binary16 ↔ binary32: h2f_soft is the exact value
 * (subnormals normalised, Inf and NaN payloads kept), f2h_soft rounds to
 * nearest, ties to even, as F16C's conversion with immediate 0 does.
 */
#include <stdint.h>
#include <string.h>

/* h2f_soft is the exact fp32 value of an fp16 bit pattern. */
static inline float h2f_soft(uint16_t h)
{
	uint32_t s = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ffu, b;
	if (e == 0x1f) {
		b = s | 0x7f800000u | (m << 13); /* Inf, NaN (payload kept) */
	} else if (e != 0) {
		b = s | ((e + 112) << 23) | (m << 13);
	} else if (m == 0) {
		b = s;
	} else { /* subnormal: normalise */
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

/* f2h_soft rounds to nearest, ties to even (the same as F16C with imm 0). */
static inline uint16_t f2h_soft(float f)
{
	uint32_t x;
	memcpy(&x, &f, 4);
	uint32_t s = (x >> 16) & 0x8000u, a = x & 0x7fffffffu;
	if (a >= 0x7f800000u) /* Inf or NaN (quiet it) */
		return (uint16_t)(s | 0x7c00u | (a > 0x7f800000u ? 0x200u | ((a >> 13) & 0x3ffu) : 0));
	if (a >= 0x477ff000u) /* rounds to ≥ 65520: overflow */
		return (uint16_t)(s | 0x7c00u);
	if (a >= 0x38800000u) { /* normal half */
		uint32_t r = a - 0x38000000u; /* rebias exponent by −112 */
		r = (r + 0x0fffu + ((r >> 13) & 1u)) >> 13;
		return (uint16_t)(s | r);
	}
	if (a < 0x33000000u) /* < 2^-25: rounds to zero */
		return (uint16_t)s;
	/* subnormal half: value = mant · 2^-24 */
	uint32_t e = a >> 23, mant = (a & 0x7fffffu) | 0x800000u;
	uint32_t shift = 126 - e; /* 14 .. 24 */
	uint32_t q = mant >> shift, rem = mant & ((1u << shift) - 1), half = 1u << (shift - 1);
	if (rem > half || (rem == half && (q & 1u)))
		q++;
	return (uint16_t)(s | q);
}
