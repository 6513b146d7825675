/*
 * swiglu_f16 — the shared expert's gate/up projection with SwiGLU (compiled
 * after fused_common.c, which builtin/fused.go prepends).
 *
 *   g = X[M,K]·Wg[N,K]ᵀ,  u = X·Wuᵀ,  h[M,N] = silu(g) ⊙ u,  silu(g) = g / (1 + e^-g)
 *
 * X, Wg, Wu row-major fp16 bit patterns (K contiguous); h [M,N] row-major fp16.
 *
 * Entries (the operator contract's convention, int ENTRY(void **ptrs, const int64_t *args)):
 *   CHAIN=0, fused (one call, two accumulator sets):
 *     tilefit_swiglu        ptrs = {X, Wg, Wu, h}   args = {M, N, K}
 *   CHAIN=1, the unfused chain (three calls, timed as one candidate):
 *     tilefit_swiglu_gemm   ptrs = {X, W, Y}        args = {M, N, K}   Y [M,N] fp32 scratch
 *     tilefit_swiglu_act    ptrs = {G, U, h}        args = {M, N}
 *
 * THE EPILOGUE'S ARITHMETIC (fp32, each step rounded to nearest, in this
 * order), for g and u the fp32 accumulators (the core's fmaf chains):
 *   e = expf(-g);  s = g / (1.0f + e);  h = fp16_rn(s · u)
 * (expf is the C library's, the same function for every tile.) Both ways use
 * this one function (act), so within each way every tile gives the same
 * bits; the two ways are declared separate numerics classes.
 *
 * BASELINE=1 (the vendor baseline's build, kernel.OpenBLASSwigluF16) compiles
 * tilefit_swiglu_act alone: the elementwise step after two vendor GEMMs.
 *
 * Tiling (fused): a task owns TM rows (TAIL in the row tail) × TN columns of
 * h; its packed panel holds Wg's TN rows in columns [0, TN) and Wu's in
 * [TN, 2·TN), so one block_fma runs both GEMMs and the epilogue reads g and u
 * side by side from the task's accumulators.
 */
#ifndef CHAIN
#define CHAIN 0
#endif
#ifndef BASELINE
#define BASELINE 0
#endif

static inline float act(float g, float u)
{
	float e = expf(-g);
	float s = g / (1.0f + e);
	return s * u;
}

typedef struct {
	const uint16_t *X, *Wg, *Wu;
	void *out;
	int64_t M, N, K, nbn; /* nbn: blocks along N */
} sw_t;

typedef struct {
	const sw_t *j;
	int64_t n0, nc;
} sw_panel_t;

/* sw_pack: columns [0, TN) from Wg (CHAIN=0) or the chain's one weight, and
 * for CHAIN=0 columns [TN, 2·TN) from Wu. */
static void sw_pack(const void *ctx, int64_t k0, int64_t kc, float *w, int cols)
{
	const sw_panel_t *p = ctx;
	const int64_t K = p->j->K;
	for (int jj = 0; jj < TN; jj++) {
		pack_col(jj < p->nc ? p->j->Wg + (p->n0 + jj) * K : NULL, k0, kc, w, cols, jj);
#if !CHAIN
		pack_col(jj < p->nc ? p->j->Wu + (p->n0 + jj) * K : NULL, k0, kc, w, cols, TN + jj);
#endif
	}
}

#if CHAIN
#define COLS TN
#else
#define COLS (2 * TN)
#endif

static void sw_task(pool_t *pool, float *ws, int64_t t)
{
	const sw_t *j = pool->ctx;
	int64_t bm = t / j->nbn, bn = t % j->nbn, m0, mc;
	row_block(bm, j->M, &m0, &mc);
	sw_panel_t p = {j, bn * TN, j->N - bn * TN < TN ? j->N - bn * TN : TN};
	const float *acc = gemm_block(j->X, j->K, m0, mc, COLS, sw_pack, &p, ws);
	for (int64_t r = 0; r < mc; r++) {
		const float *a = acc + r * COLS;
		const int64_t o = (m0 + r) * j->N + p.n0;
		for (int64_t c = 0; c < p.nc; c++) {
#if CHAIN
			((float *)j->out)[o + c] = a[c];
#else
			((uint16_t *)j->out)[o + c] = f2h(act(a[c], a[TN + c]));
#endif
		}
	}
}

static int sw_run(sw_t *j)
{
	if (j->M < 0 || j->N < 0 || j->K < 0)
		return 2;
	j->nbn = (j->N + TN - 1) / TN;
	pool_t pool = {sw_task, j, WS_FLOATS(COLS), row_blocks(j->M) * j->nbn, 0, 0};
	return pool_run(&pool);
}

#if CHAIN
int tilefit_swiglu_gemm(void **ptrs, const int64_t *args)
{
	sw_t j = {ptrs[0], ptrs[1], NULL, ptrs[2], args[0], args[1], args[2], 0};
	return sw_run(&j);
}
#endif

#if CHAIN || BASELINE

typedef struct {
	const float *G, *U;
	uint16_t *h;
	int64_t n;
} act_t;

#define ACT_CHUNK 4096

static void act_task(pool_t *pool, float *ws, int64_t t)
{
	(void)ws;
	const act_t *a = pool->ctx;
	int64_t i0 = t * ACT_CHUNK, i1 = i0 + ACT_CHUNK < a->n ? i0 + ACT_CHUNK : a->n;
	for (int64_t i = i0; i < i1; i++)
		a->h[i] = f2h(act(a->G[i], a->U[i]));
}

int tilefit_swiglu_act(void **ptrs, const int64_t *args)
{
	if (args[0] < 0 || args[1] < 0)
		return 2;
	act_t a = {ptrs[0], ptrs[1], ptrs[2], args[0] * args[1]};
	pool_t pool = {act_task, &a, 1, (a.n + ACT_CHUNK - 1) / ACT_CHUNK, 0, 0};
	return pool_run(&pool);
}
#endif

#if !CHAIN
int tilefit_swiglu(void **ptrs, const int64_t *args)
{
	sw_t j = {ptrs[0], ptrs[1], ptrs[2], ptrs[3], args[0], args[1], args[2], 0};
	return sw_run(&j);
}
#endif
