/*
 * fused_common.c — the fp32 GEMM core shared by tilefit's fused CPU families
 * (hc_up_f16, swiglu_f16, gemm_q8_f16). It is not a family: Go
 * (builtin/fused.go) concatenates f16_common.h, this text and each fused
 * family's own source, so the compiler sees one file and no #include of ours
 * is needed.
 *
 * Entry-point convention of every CPU family (the operator contract):
 *     int ENTRY(void **ptrs, const int64_t *args);
 * ptrs holds the pointer arguments (operands, scratch buffers) and args the
 * integer arguments (dimensions, constants), each in the order of the
 * family's Launch.Args; 0 is success, non-zero a failure (no workspace, bad
 * dimensions).
 *
 * What it provides:
 *   - exact fp16 ↔ fp32 conversion h2f, f2h (F16C when compiled in, else
 *     f16_common.h's portable code; both round fp32 → fp16 to nearest, ties
 *     to even);
 *   - row blocks with the row-tail option (TAIL);
 *   - a pool of THREADS POSIX threads taking tasks from an atomic counter,
 *     each with its own 64-byte-aligned fp32 workspace;
 *   - block_fma(): acc[r][c] = fma(x[r][k], w[k][c], acc[r][c]) for k in
 *     panel order, over a block of rows × columns.
 *
 * THE REDUCTION-ORDER INVARIANT (every family built on this core): every
 * accumulator element is one fp32 fused-multiply-add chain
 *     acc = +0.0f;  for k = 0, 1, …, K−1:  acc = fmaf(x[m,k], w[n,k], acc);
 * with x, w the exact fp32 values of the operands. Panels of TK k carry acc
 * exactly (fp32 in the task's workspace) from one to the next; there is no K
 * splitting, no horizontal sum, no separate multiply and add (fmaf, and the
 * compiler runs with -ffp-contract=off so it neither creates nor breaks an
 * FMA). Tiles (TM, TN, TK, THREADS, TAIL) only change which elements are
 * computed together and when, so every tile gives the same accumulator bits,
 * and the epilogues (written as fixed sequences of fp32 operations) the same
 * output bits.
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
#define TM 32
#endif
#ifndef TN
#define TN 128
#endif
#ifndef TK
#define TK 256
#endif
#ifndef THREADS
#define THREADS 2
#endif
#ifndef TAIL
#define TAIL 0
#endif
#ifndef FAULT
#define FAULT 0
#endif

#if TM < 1 || TN < 1 || TK < 1 || THREADS < 1 || TAIL < 0
#error "TM, TN, TK and THREADS must be positive, TAIL non-negative"
#endif
#if TN % 16 != 0
#error "TN must be a multiple of 16 (the column step of block_fma)"
#endif

/* ---- fp16 ↔ fp32 (bit-exact) ---- */

/* h2f_soft and f2h_soft, the portable conversions, are f16_common.h's (put
 * before this text); with F16C compiled in, the hardware's are used. */
#if defined(__F16C__) && !defined(TILEFIT_SCALAR)
static inline float h2f(uint16_t h) { return _cvtsh_ss(h); }
static inline uint16_t f2h(float f) { return (uint16_t)_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT); }
#else
static inline float h2f(uint16_t h) { return h2f_soft(h); }
static inline uint16_t f2h(float f) { return f2h_soft(f); }
#endif

/* ---- row blocks ----
 * Block row bm covers rows [m0, m0 + mc). With TAIL > 0 (and TAIL < TM) and
 * M % TM ≠ 0, the last, partial row of TM-row blocks is replaced by
 * ceil((M % TM) / TAIL) blocks of TAIL rows (RowBlocks in builtin/fused.go
 * counts the same blocks).
 */
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

/* ---- the thread pool ---- */

typedef struct pool pool_t;
struct pool {
	void (*task)(pool_t *p, float *ws, int64_t t);
	void *ctx;
	size_t ws_floats;
	int64_t ntasks;
	int64_t next; /* next task (atomic) */
	int err;      /* set (atomic) when a worker could not allocate */
};

static void *pool_worker(void *arg)
{
	pool_t *p = arg;
	float *ws = NULL;
	if (posix_memalign((void **)&ws, 64, (p->ws_floats ? p->ws_floats : 1) * sizeof(float)) != 0) {
		__atomic_store_n(&p->err, 1, __ATOMIC_RELAXED);
		return NULL;
	}
	for (;;) {
		int64_t t = __atomic_fetch_add(&p->next, 1, __ATOMIC_RELAXED);
		if (t >= p->ntasks)
			break;
		p->task(p, ws, t);
	}
	free(ws);
	return NULL;
}

/* pool_run runs tasks 0 .. ntasks−1 on up to THREADS threads (the caller is
 * one of them); 1 when no thread got a workspace and tasks were left. */
static int pool_run(pool_t *p)
{
	if (p->ntasks <= 0)
		return 0;
	int nt = THREADS < p->ntasks ? THREADS : (int)p->ntasks;
	pthread_t th[THREADS];
	int started[THREADS] = {0};
	for (int i = 1; i < nt; i++)
		started[i] = pthread_create(&th[i], NULL, pool_worker, p) == 0;
	pool_worker(p);
	for (int i = 1; i < nt; i++)
		if (started[i])
			pthread_join(th[i], NULL);
	if (__atomic_load_n(&p->err, __ATOMIC_RELAXED))
		return __atomic_load_n(&p->next, __ATOMIC_RELAXED) < p->ntasks ? 1 : 0;
	return 0;
}

/* ---- packing and the block FMA ---- */

/* pack_rows converts rows [0, rows) × k [k0, k0+kc) of the fp16 matrix A
 * (leading dimension ld) to fp32 x[r·kc + k]. */
static void pack_rows(const uint16_t *A, int64_t ld, int64_t rows, int64_t k0, int64_t kc, float *x)
{
	for (int64_t r = 0; r < rows; r++) {
		const uint16_t *a = A + r * ld + k0;
		float *o = x + r * kc;
		for (int64_t k = 0; k < kc; k++)
			o[k] = h2f(a[k]);
	}
}

/* pack_col writes k [k0, k0+kc) of one fp16 row (or zeros when row is NULL)
 * as column col of the panel w[k·ldw + col]. */
static void pack_col(const uint16_t *row, int64_t k0, int64_t kc, float *w, int ldw, int col)
{
	for (int64_t k = 0; k < kc; k++)
		w[k * ldw + col] = row ? h2f(row[k0 + k]) : 0.0f;
}

#define RB 4  /* rows per register block */
#define CB 16 /* columns per register block */

/*
 * block_fma: for r < rows, c < cols (cols a multiple of CB):
 *     for k = 0 .. kc−1 in order:  acc[r·ldc + c] = fmaf(x[r·kc + k], w[k·ldw + c], acc[r·ldc + c])
 * RB×CB accumulators stay in registers over the panel; each element's chain
 * is the same whatever the blocking.
 */
static void block_fma(int64_t rows, int cols, int64_t kc, const float *restrict x, const float *restrict w, int ldw,
		      float *restrict acc, int ldc)
{
	int64_t r = 0;
	for (; r + RB <= rows; r += RB)
		for (int c0 = 0; c0 < cols; c0 += CB) {
			float a[RB][CB];
			for (int i = 0; i < RB; i++)
				for (int j = 0; j < CB; j++)
					a[i][j] = acc[(r + i) * ldc + c0 + j];
			const float *xr = x + r * kc;
			for (int64_t k = 0; k < kc; k++) {
				const float *wk = w + k * ldw + c0;
				for (int i = 0; i < RB; i++) {
					const float xi = xr[i * kc + k];
					for (int j = 0; j < CB; j++)
						a[i][j] = fmaf(xi, wk[j], a[i][j]);
				}
			}
			for (int i = 0; i < RB; i++)
				for (int j = 0; j < CB; j++)
					acc[(r + i) * ldc + c0 + j] = a[i][j];
		}
	for (; r < rows; r++)
		for (int c0 = 0; c0 < cols; c0 += CB) {
			float a[CB];
			for (int j = 0; j < CB; j++)
				a[j] = acc[r * ldc + c0 + j];
			const float *xr = x + r * kc;
			for (int64_t k = 0; k < kc; k++) {
				const float *wk = w + k * ldw + c0;
				const float xi = xr[k];
				for (int j = 0; j < CB; j++)
					a[j] = fmaf(xi, wk[j], a[j]);
			}
			for (int j = 0; j < CB; j++)
				acc[r * ldc + c0 + j] = a[j];
		}
}

/*
 * A panel GEMM over one block: the task's workspace holds
 *     x   [TM][TK]      the block's rows of the left operand, fp32
 *     w   [TK][COLS]    the block's right-operand columns, fp32
 *     acc [TM][COLS]    the accumulators
 * COLS_MAX is the widest COLS a family uses.
 */
#define WS_X ((size_t)TM * TK)
#define WS_W(cols) ((size_t)TK * (cols))
#define WS_ACC(cols) ((size_t)TM * (cols))
#define WS_FLOATS(cols) (WS_X + WS_W(cols) + WS_ACC(cols))

/* A panel packer writes k [k0, k0+kc) of the block's right-operand columns
 * [0, cols) as w[k·cols + c] (fp32; zeros for columns that do not exist). */
typedef void (*pack_fn)(const void *ctx, int64_t k0, int64_t kc, float *w, int cols);

/*
 * gemm_block computes acc[r·cols + c] (r < mc, c < cols) = Σ_k X[m0+r, k]·w[k, c]
 * over all K in TK panels, in k order (the invariant above), in the
 * workspace ws; it returns acc.
 */
static float *gemm_block(const uint16_t *X, int64_t K, int64_t m0, int64_t mc, int cols, pack_fn pack, const void *ctx, float *ws)
{
	float *x = ws, *w = ws + WS_X, *acc = ws + WS_X + WS_W(cols);
	memset(acc, 0, (size_t)mc * cols * sizeof(float));
	for (int64_t k0 = 0; k0 < K; k0 += TK) {
		int64_t kc = K - k0 < TK ? K - k0 : TK;
		pack_rows(X + m0 * K, K, mc, k0, kc, x);
		pack(ctx, k0, kc, w, cols);
		block_fma(mc, cols, kc, x, w, cols, acc, cols);
	}
	return acc;
}
