/*
 * gemm_q8_f16 — a GEMM whose weights are int8 with one fp16 scale per group
 * of G consecutive k, dequantised to fp16 inside the kernel (compiled after
 * fused_common.c, which builtin/fused.go prepends).
 *
 *   W[n,k] = dq(Wq[n,k], scales[n, k/G])          (fp16)
 *   Y[M,N] = X[M,K] · W[N,K]ᵀ                     (fp32 out)
 *
 * X [M,K] fp16, Wq [N,K] int8, scales [N, K/G] fp16 (K % G == 0), all
 * row-major; Y [M,N] fp32; with DEBUG=1 also wdq [N,K] fp16, the dequantised
 * weights exactly as the GEMM used them (written by the tasks of the first
 * block row while they pack their panels).
 *
 * Entry (the operator contract's convention):
 *   int tilefit_gemm_q8(void **ptrs, const int64_t *args);
 *   ptrs = {X, Wq, scales, Y, wdq (DEBUG=1 only)},  args = {M, N, K, G}
 * returns 2 when G ≤ 0 or K % G ≠ 0.
 *
 * THE DEQUANTISATION, identical on CUDA and in Go (kernel.DequantQ8):
 *   dq(q, s) = fp16_rn((float)q · (float)s)
 * (float)q and (float)s are exact and their product needs at most 8 + 11 =
 * 19 significant bits, so the fp32 multiply is exact; the one rounding is
 * fp32 → fp16 to nearest, ties to even (subnormals kept, overflow to ±Inf).
 * The GEMM is the core's (fused_common.c) on the dequantised values, so every
 * tile gives the same bits.
 *
 * FAULT plants a bug for the tests: 1 dequantises the last k of each group
 * with the next group's scale.
 *
 * BASELINE=1 (the vendor baseline's build, kernel.OpenBLASGemmQ8F16) adds the
 * separate dequantisation step before a vendor GEMM:
 *   int tilefit_q8_dequant(void **ptrs, const int64_t *args);
 *   ptrs = {Wq, scales, W [N,K] fp16 (the operand wdq)},  args = {N, K, G}
 */
#ifndef DEBUG
#define DEBUG 0
#endif
#ifndef BASELINE
#define BASELINE 0
#endif

static inline uint16_t dq(int8_t q, uint16_t s) { return f2h((float)q * h2f(s)); }

typedef struct {
	const uint16_t *X;
	const int8_t *Wq;
	const uint16_t *Sc;
	float *Y;
	uint16_t *wdq;
	int64_t M, N, K, G, nbn;
} q8_t;

typedef struct {
	const q8_t *j;
	int64_t n0, nc;
	int first; /* a task of the first block row: writes wdq (DEBUG) */
} q8_panel_t;

static void q8_pack(const void *ctx, int64_t k0, int64_t kc, float *w, int cols)
{
	const q8_panel_t *p = ctx;
	const q8_t *j = p->j;
	const int64_t K = j->K, G = j->G;
	for (int c = 0; c < cols; c++) {
		if (c >= p->nc) {
			pack_col(NULL, k0, kc, w, cols, c);
			continue;
		}
		const int64_t n = p->n0 + c;
		const int8_t *q = j->Wq + n * K;
		const uint16_t *sc = j->Sc + n * (K / G);
		for (int64_t k = k0; k < k0 + kc; k++) {
			int64_t grp = k / G;
#if FAULT == 1
			if (k % G == G - 1 && k + 1 < K)
				grp++;
#endif
			uint16_t v = dq(q[k], sc[grp]);
			w[(k - k0) * cols + c] = h2f(v);
#if DEBUG
			if (p->first)
				j->wdq[n * K + k] = v;
#endif
		}
	}
}

static void q8_task(pool_t *pool, float *ws, int64_t t)
{
	const q8_t *j = pool->ctx;
	int64_t bm = t / j->nbn, bn = t % j->nbn, m0, mc;
	row_block(bm, j->M, &m0, &mc);
	q8_panel_t p = {j, bn * TN, j->N - bn * TN < TN ? j->N - bn * TN : TN, bm == 0};
	const float *acc = gemm_block(j->X, j->K, m0, mc, TN, q8_pack, &p, ws);
	for (int64_t r = 0; r < mc; r++)
		memcpy(j->Y + (m0 + r) * j->N + p.n0, acc + r * TN, (size_t)p.nc * sizeof(float));
}

int tilefit_gemm_q8(void **ptrs, const int64_t *args)
{
	q8_t j = {ptrs[0], ptrs[1], ptrs[2], ptrs[3], NULL, args[0], args[1], args[2], args[3], 0};
#if DEBUG
	j.wdq = ptrs[4];
#endif
	if (j.M < 0 || j.N < 0 || j.K < 0 || j.G <= 0 || j.K % j.G != 0)
		return 2;
	j.nbn = (j.N + TN - 1) / TN;
	pool_t pool = {q8_task, &j, WS_FLOATS(TN), row_blocks(j.M) * j.nbn, 0, 0};
	return pool_run(&pool);
}

#if BASELINE
typedef struct {
	const int8_t *Wq;
	const uint16_t *Sc;
	uint16_t *W;
	int64_t N, K, G;
} deq_t;

static void deq_task(pool_t *pool, float *ws, int64_t n)
{
	(void)ws;
	const deq_t *a = pool->ctx;
	const int64_t K = a->K;
	for (int64_t k = 0; k < K; k++)
		a->W[n * K + k] = dq(a->Wq[n * K + k], a->Sc[n * (K / a->G) + k / a->G]);
}

int tilefit_q8_dequant(void **ptrs, const int64_t *args)
{
	deq_t a = {ptrs[0], ptrs[1], ptrs[2], args[0], args[1], args[2]};
	if (a.N < 0 || a.K < 0 || a.G <= 0 || a.K % a.G != 0)
		return 2;
	pool_t pool = {deq_task, &a, 1, a.N, 0, 0};
	return pool_run(&pool);
}
#endif
