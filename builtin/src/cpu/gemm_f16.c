/*
 * gemm_f16 — the CPU family of tilefit.
 *
 *   Y[M,N] = X[M,K] · W[N,K]ᵀ,   Y[m,n] = Σ_{k=0}^{K-1} X[m,k]·W[n,k]
 *
 * Shapes and layout: X is M×K and W is N×K, both row-major IEEE binary16 bit
 * patterns (uint16_t, K contiguous, leading dimension K). Y is M×N row-major
 * (leading dimension N): fp32, or fp16 (round to nearest even) when Y_DTYPE=1
 * (the operand type chosen for the sweep; 3 = fp32, the default).
 *
 * Entry point (tilefit's one CPU convention: pointers, then int64 arguments,
 * each in the order of the family's Plan):
 *   int tilefit_gemm_f16(void **ptrs, const int64_t *args);
 *   ptrs = {const uint16_t *X, const uint16_t *W, void *Y}, args = {M, N, K}
 * returns 0 on success, 1 when a workspace allocation failed (Y is then
 * undefined). M ≤ 0 or N ≤ 0 writes nothing; K ≤ 0 writes zeros.
 *
 * Compile-time parameters (-D):
 *   TM, TN   the block of Y one task owns (rows × columns); any positive value
 *            works, the family sweeps TM ∈ {16,32,64,128}, TN ∈ {32,64,128,256}
 *   TK       the K step of the packed fp32 panels (64..512)
 *   THREADS  POSIX threads per call (the calling thread is one of them);
 *            tasks (TM×TN blocks) are handed out through an atomic counter
 *   TAIL     row-tail trimming: when M % TM ≠ 0 (and 0 < TAIL < TM) the last,
 *            partial row of TM-row blocks is replaced by ceil((M % TM)/TAIL)
 *            blocks of TAIL rows (kernel.RowBlocks); 0 (the default) keeps
 *            one TM-row block. Only the task split changes, not the bits.
 *   Y_DTYPE  the element type of Y: 3 fp32, 1 fp16 (kernel.DType codes)
 *   TILEFIT_NO_AVX512=1 / TILEFIT_SCALAR=1 force the AVX2 / the plain C path
 *   (for tests: every path gives the same bits).
 *
 * THE REDUCTION-ORDER INVARIANT. Every output element is computed as one fp32
 * fused-multiply-add chain
 *
 *   acc = +0.0f;  for k = 0, 1, …, K−1:  acc = fma(x[m,k], w[n,k], acc);
 *
 * with x, w the exact fp32 values of the fp16 inputs, and the final acc is
 * rounded once to the output type. Tiles only change which elements are
 * computed together and when; the accumulator is carried exactly (as fp32,
 * in registers or in a per-task fp32 buffer) from one TK panel to the next.
 * There is no K splitting across threads or vector lanes, no horizontal sum,
 * no separate multiply and add (scalar code uses fmaf; the compiler is run
 * with -ffp-contract=off so it cannot create or break FMAs on its own).
 * Hence every tile, every thread count, every TK and every instruction-set
 * path gives bitwise identical results. Zero padding of partial register
 * blocks only feeds rows/columns that are never stored.
 *
 * Writes: every element of Y is written exactly once, with its final value;
 * nothing outside Y[0 .. M·N) is written.
 *
 * Structure: a task owns the block Y[m0:m0+TM, n0:n0+TN]. For each TK panel
 * it converts (F16C) and packs X's block rows into MR-row strips laid out
 * [k][MR] and W's block rows into NR-column strips laid out [k][NR] (an 8×8
 * transpose per 8 rows × 8 k), then runs an MR×NR register-blocked FMA
 * microkernel over the block: 8×32 with AVX-512 (two zmm per row), 6×16 with
 * AVX2 (two ymm per row).
 *
 * The text compiled (and printed by "tilefit families source gemm_f16") is
 * f16_common.h, the portable fp16 conversions this file shares with the
 * fused families' core, followed by this file, with #line directives.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <pthread.h>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#ifndef TM
#define TM 64
#endif
#ifndef TN
#define TN 128
#endif
#ifndef TK
#define TK 256
#endif
#ifndef TAIL
#define TAIL 0
#endif
#ifndef THREADS
#define THREADS 2
#endif
#ifndef Y_DTYPE
#define Y_DTYPE 3
#endif
#if Y_DTYPE != 1 && Y_DTYPE != 3
#error "Y_DTYPE must be 1 (fp16) or 3 (fp32)"
#endif
#define OUT_F16 (Y_DTYPE == 1)
#ifndef TILEFIT_NO_AVX512
#define TILEFIT_NO_AVX512 0
#endif
#ifndef TILEFIT_SCALAR
#define TILEFIT_SCALAR 0
#endif

#if TM < 1 || TN < 1 || TK < 1 || THREADS < 1
#error "TM, TN, TK and THREADS must be positive"
#endif

#if !TILEFIT_SCALAR && defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__) && defined(__F16C__) && !TILEFIT_NO_AVX512
#define ISA_AVX512 1
#define MR 8
#define NR 32
#elif !TILEFIT_SCALAR && defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#define ISA_AVX2 1
#define MR 6
#define NR 16
#else
#define ISA_SCALAR 1
#endif

#if OUT_F16
typedef uint16_t out_t;
#else
typedef float out_t;
#endif

/* ---- scalar conversions (portable; bit-exact IEEE binary16 ↔ binary32) ----
 * h2f_soft and f2h_soft are f16_common.h's, which builtin/cpu.go puts before
 * this text; the SIMD paths convert with F16C. */

static inline float h2f(uint16_t h) { return h2f_soft(h); }
static inline uint16_t f2h(float f) { return f2h_soft(f); }

#if !ISA_SCALAR
/* ---- packing: fp16 rows → fp32 strips laid out [k][R] ---- */

static inline void tr8x8(__m256 r[8])
{
	__m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
	__m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
	__m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
	__m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
	__m256 s0 = _mm256_shuffle_ps(t0, t2, 0x44), s1 = _mm256_shuffle_ps(t0, t2, 0xEE);
	__m256 s2 = _mm256_shuffle_ps(t1, t3, 0x44), s3 = _mm256_shuffle_ps(t1, t3, 0xEE);
	__m256 s4 = _mm256_shuffle_ps(t4, t6, 0x44), s5 = _mm256_shuffle_ps(t4, t6, 0xEE);
	__m256 s6 = _mm256_shuffle_ps(t5, t7, 0x44), s7 = _mm256_shuffle_ps(t5, t7, 0xEE);
	r[0] = _mm256_permute2f128_ps(s0, s4, 0x20);
	r[1] = _mm256_permute2f128_ps(s1, s5, 0x20);
	r[2] = _mm256_permute2f128_ps(s2, s6, 0x20);
	r[3] = _mm256_permute2f128_ps(s3, s7, 0x20);
	r[4] = _mm256_permute2f128_ps(s0, s4, 0x31);
	r[5] = _mm256_permute2f128_ps(s1, s5, 0x31);
	r[6] = _mm256_permute2f128_ps(s2, s6, 0x31);
	r[7] = _mm256_permute2f128_ps(s3, s7, 0x31);
}

/*
 * pack_strip converts src[0:R, k0:k0+kc] (rows of leading dimension ld, only
 * the first nvalid rows exist) into out[k·R + r], zero for rows ≥ nvalid.
 * When R is not a multiple of 8 each 8-float row store spills 8−R floats into
 * the next row, which the next store (or a later strip) overwrites; callers
 * leave 8 floats of slack after the panel.
 */
static void pack_strip(const uint16_t *src, int64_t ld, int nvalid, int R, int64_t k0, int64_t kc, float *out)
{
	int64_t kc8 = kc & ~(int64_t)7;
	for (int g = 0; g < R; g += 8) {
		int nr = nvalid - g; /* rows of this group that exist */
		if (nr > 8)
			nr = 8;
		if (nr > R - g)
			nr = R - g;
		const uint16_t *p = src + (int64_t)g * ld + k0;
		for (int64_t k = 0; k < kc8; k += 8) {
			__m256 r[8];
			for (int i = 0; i < 8; i++)
				r[i] = i < nr ? _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(p + i * ld + k))) : _mm256_setzero_ps();
			tr8x8(r);
			float *o = out + k * R + g;
			for (int t = 0; t < 8; t++)
				_mm256_storeu_ps(o + t * R, r[t]);
		}
	}
	for (int64_t k = kc8; k < kc; k++)
		for (int r = 0; r < R; r++)
			out[k * R + r] = r < nvalid ? _cvtsh_ss(src[(int64_t)r * ld + k0 + k]) : 0.0f;
}
#endif

#if ISA_AVX512
/*
 * ukr computes the 8×32 block acc[r][j] (r < MR, j < NR) over one K panel:
 * acc starts at +0 (first panel) or is loaded from cb (row stride ldc), then
 * acc[r][j] = fma(a[k][r], b[k][j], acc[r][j]) for k = 0..kc−1 in order. It
 * stores the result back to cb (not the last panel) or converts and writes
 * rows < rows, columns < cols to y (leading dimension ldy).
 */
static inline __attribute__((always_inline)) void ukr(int64_t kc, const float *restrict a, const float *restrict b,
                                                      float *restrict cb, int64_t ldc, int first, int last,
                                                      out_t *restrict y, int64_t ldy, int rows, int cols)
{
	__m512 c0[MR], c1[MR];
#pragma GCC unroll 8
	for (int r = 0; r < MR; r++) {
		if (first) {
			c0[r] = _mm512_setzero_ps();
			c1[r] = _mm512_setzero_ps();
		} else {
			c0[r] = _mm512_loadu_ps(cb + r * ldc);
			c1[r] = _mm512_loadu_ps(cb + r * ldc + 16);
		}
	}
#pragma GCC unroll 2
	for (int64_t k = 0; k < kc; k++) {
		__m512 b0 = _mm512_loadu_ps(b), b1 = _mm512_loadu_ps(b + 16);
#pragma GCC unroll 8
		for (int r = 0; r < MR; r++) {
			__m512 ar = _mm512_set1_ps(a[r]);
			c0[r] = _mm512_fmadd_ps(ar, b0, c0[r]);
			c1[r] = _mm512_fmadd_ps(ar, b1, c1[r]);
		}
		a += MR;
		b += NR;
	}
	if (!last) {
#pragma GCC unroll 8
		for (int r = 0; r < MR; r++) {
			_mm512_storeu_ps(cb + r * ldc, c0[r]);
			_mm512_storeu_ps(cb + r * ldc + 16, c1[r]);
		}
		return;
	}
	__mmask16 m0 = cols >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << cols) - 1);
	__mmask16 m1 = cols >= 32 ? (__mmask16)0xffff : cols <= 16 ? (__mmask16)0 : (__mmask16)((1u << (cols - 16)) - 1);
#pragma GCC unroll 8
	for (int r = 0; r < MR; r++) {
		if (r < rows) {
#if OUT_F16
			_mm256_mask_storeu_epi16(y + r * ldy, m0, _mm512_cvtps_ph(c0[r], _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
			_mm256_mask_storeu_epi16(y + r * ldy + 16, m1, _mm512_cvtps_ph(c1[r], _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
#else
			_mm512_mask_storeu_ps(y + r * ldy, m0, c0[r]);
			_mm512_mask_storeu_ps(y + r * ldy + 16, m1, c1[r]);
#endif
		}
	}
}
#endif

#if ISA_AVX2
/* ukr: the AVX2 6×16 microkernel; same contract as the AVX-512 one. */
static inline __attribute__((always_inline)) void ukr(int64_t kc, const float *restrict a, const float *restrict b,
                                                      float *restrict cb, int64_t ldc, int first, int last,
                                                      out_t *restrict y, int64_t ldy, int rows, int cols)
{
	__m256 c0[MR], c1[MR];
#pragma GCC unroll 8
	for (int r = 0; r < MR; r++) {
		if (first) {
			c0[r] = _mm256_setzero_ps();
			c1[r] = _mm256_setzero_ps();
		} else {
			c0[r] = _mm256_loadu_ps(cb + r * ldc);
			c1[r] = _mm256_loadu_ps(cb + r * ldc + 8);
		}
	}
#pragma GCC unroll 2
	for (int64_t k = 0; k < kc; k++) {
		__m256 b0 = _mm256_loadu_ps(b), b1 = _mm256_loadu_ps(b + 8);
#pragma GCC unroll 8
		for (int r = 0; r < MR; r++) {
			__m256 ar = _mm256_broadcast_ss(a + r);
			c0[r] = _mm256_fmadd_ps(ar, b0, c0[r]);
			c1[r] = _mm256_fmadd_ps(ar, b1, c1[r]);
		}
		a += MR;
		b += NR;
	}
	if (!last) {
#pragma GCC unroll 8
		for (int r = 0; r < MR; r++) {
			_mm256_storeu_ps(cb + r * ldc, c0[r]);
			_mm256_storeu_ps(cb + r * ldc + 8, c1[r]);
		}
		return;
	}
	if (rows == MR && cols == NR) {
#pragma GCC unroll 8
		for (int r = 0; r < MR; r++) {
#if OUT_F16
			_mm_storeu_si128((__m128i *)(y + r * ldy), _mm256_cvtps_ph(c0[r], _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
			_mm_storeu_si128((__m128i *)(y + r * ldy + 8), _mm256_cvtps_ph(c1[r], _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
#else
			_mm256_storeu_ps(y + r * ldy, c0[r]);
			_mm256_storeu_ps(y + r * ldy + 8, c1[r]);
#endif
		}
		return;
	}
	float tmp[MR * NR];
#pragma GCC unroll 8
	for (int r = 0; r < MR; r++) {
		_mm256_storeu_ps(tmp + r * NR, c0[r]);
		_mm256_storeu_ps(tmp + r * NR + 8, c1[r]);
	}
	for (int r = 0; r < rows; r++)
		for (int j = 0; j < cols; j++)
#if OUT_F16
			y[r * ldy + j] = _cvtss_sh(tmp[r * NR + j], _MM_FROUND_TO_NEAREST_INT);
#else
			y[r * ldy + j] = tmp[r * NR + j];
#endif
}
#endif

/* Row blocks with the row tail (TAIL): block row bm covers [m0, m0 + mc). */
#define TAIL_ON (TAIL > 0 && TAIL < TM)
#define TAIL_ROWS (TAIL_ON ? TAIL : TM)

static inline int64_t row_blocks(int64_t M)
{
	if (!TAIL_ON || M % TM == 0)
		return (M + TM - 1) / TM;
	return M / TM + (M % TM + TAIL_ROWS - 1) / TAIL_ROWS;
}

static inline void row_block(int64_t bm, int64_t M, int64_t *m0, int64_t *mc)
{
	int64_t full = M / TM;
	int tail = TAIL_ON && M % TM != 0 && bm >= full;
	int64_t tile = tail ? TAIL_ROWS : TM;
	*m0 = tail ? full * TM + (bm - full) * TAIL_ROWS : bm * TM;
	*mc = M - *m0 < tile ? M - *m0 : tile;
}

typedef struct {
	const uint16_t *X, *W;
	out_t *Y;
	int64_t M, N, K;
	int64_t nbn;    /* blocks along N */
	int64_t ntasks; /* blocks in all */
	int64_t next;   /* next task (atomic) */
	int err;        /* set (atomic) when a worker could not allocate */
} job_t;

#if ISA_SCALAR
/* The plain C path: one fmaf chain per element, the same order as the SIMD paths. */
static void run_task(job_t *j, float *ws, int64_t t)
{
	(void)ws;
	int64_t m0, mc, n0 = (t % j->nbn) * TN, K = j->K;
	row_block(t / j->nbn, j->M, &m0, &mc); /* rows of this block */
	int64_t nc = j->N - n0 < TN ? j->N - n0 : TN;
	for (int64_t m = m0; m < m0 + mc; m++)
		for (int64_t n = n0; n < n0 + nc; n++) {
			const uint16_t *x = j->X + m * K, *w = j->W + n * K;
			float acc = 0.0f;
			for (int64_t k = 0; k < K; k++)
				acc = fmaf(h2f(x[k]), h2f(w[k]), acc);
#if OUT_F16
			j->Y[m * j->N + n] = f2h(acc);
#else
			j->Y[m * j->N + n] = acc;
#endif
		}
}
#define WS_FLOATS 1
#else
#define TMP (((TM) + MR - 1) / MR * MR) /* TM padded to whole strips */
#define TNP (((TN) + NR - 1) / NR * NR)
#define A_FLOATS ((int64_t)TMP * TK + 16)
#define B_FLOATS ((int64_t)TNP * TK + 16)
#define C_FLOATS ((int64_t)TMP * TNP)
#define WS_FLOATS (A_FLOATS + B_FLOATS + C_FLOATS)

/* run_task computes the block t of Y: rows m0..m0+mc, columns n0..n0+nc. */
static void run_task(job_t *j, float *ws, int64_t t)
{
	float *ap = ws, *bp = ws + A_FLOATS, *cb = ws + A_FLOATS + B_FLOATS;
	int64_t m0, mc, n0 = (t % j->nbn) * TN, K = j->K, N = j->N;
	row_block(t / j->nbn, j->M, &m0, &mc); /* rows of this block */
	int64_t nc = N - n0 < TN ? N - n0 : TN;       /* columns of this block */
	int ms = (int)((mc + MR - 1) / MR), ns = (int)((nc + NR - 1) / NR);
	for (int64_t k0 = 0; k0 < K; k0 += TK) {
		int64_t kc = K - k0 < TK ? K - k0 : TK; /* this panel's K extent */
		int first = k0 == 0, last = k0 + kc >= K;
		for (int i = 0; i < ms; i++)
			pack_strip(j->X + (m0 + (int64_t)i * MR) * K, K, (int)(mc - (int64_t)i * MR), MR, k0, kc, ap + (int64_t)i * MR * kc);
		for (int s = 0; s < ns; s++)
			pack_strip(j->W + (n0 + (int64_t)s * NR) * K, K, (int)(nc - (int64_t)s * NR), NR, k0, kc, bp + (int64_t)s * NR * kc);
		for (int i = 0; i < ms; i++) {
			int rows = (int)(mc - (int64_t)i * MR < MR ? mc - (int64_t)i * MR : MR);
			for (int s = 0; s < ns; s++) {
				int cols = (int)(nc - (int64_t)s * NR < NR ? nc - (int64_t)s * NR : NR);
				ukr(kc, ap + (int64_t)i * MR * kc, bp + (int64_t)s * NR * kc, cb + (int64_t)i * MR * TNP + s * NR, TNP,
				    first, last, j->Y + (m0 + (int64_t)i * MR) * N + n0 + (int64_t)s * NR, N, rows, cols);
			}
		}
	}
}
#endif

static void *worker(void *arg)
{
	job_t *j = arg;
	float *ws = NULL;
	if (posix_memalign((void **)&ws, 64, (size_t)WS_FLOATS * sizeof(float)) != 0) {
		__atomic_store_n(&j->err, 1, __ATOMIC_RELAXED);
		return NULL;
	}
	for (;;) {
		int64_t t = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED);
		if (t >= j->ntasks)
			break;
		run_task(j, ws, t);
	}
	free(ws);
	return NULL;
}

static int gemm(const uint16_t *X, const uint16_t *W, void *Y, int64_t M, int64_t N, int64_t K)
{
	if (M <= 0 || N <= 0)
		return 0;
	if (K <= 0) {
		memset(Y, 0, (size_t)(M * N) * sizeof(out_t));
		return 0;
	}
	job_t j = {X, W, (out_t *)Y, M, N, K, (N + TN - 1) / TN, 0, 0, 0};
	j.ntasks = row_blocks(M) * j.nbn;
	int nt = THREADS < j.ntasks ? THREADS : (int)j.ntasks;
	pthread_t th[THREADS];
	int started[THREADS] = {0};
	for (int i = 1; i < nt; i++)
		started[i] = pthread_create(&th[i], NULL, worker, &j) == 0;
	worker(&j); /* the calling thread works too; it alone would finish every task */
	for (int i = 1; i < nt; i++)
		if (started[i])
			pthread_join(th[i], NULL);
	if (__atomic_load_n(&j.err, __ATOMIC_RELAXED)) {
		/* A worker without workspace took no task; if every worker failed, say so. */
		return __atomic_load_n(&j.next, __ATOMIC_RELAXED) < j.ntasks ? 1 : 0;
	}
	return 0;
}

int tilefit_gemm_f16(void **ptrs, const int64_t *args)
{
	return gemm((const uint16_t *)ptrs[0], (const uint16_t *)ptrs[1], ptrs[2], args[0], args[1], args[2]);
}
