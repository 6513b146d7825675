package cuda

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sync"
	"time"
	"unsafe"
)

// cuBLASLt: the vendor GEMM with its own autotuning (kernel.VendorGemmLt).
// For each GEMM shape a problem binds, cublasLtMatmulAlgoGetHeuristic is
// asked for its top ltCandidates algorithms; each is timed on the problem's
// own buffers (ltReps launches between CUDA events after a warm-up) and the
// fastest is kept for that shape, then used for every call. The tuning runs
// when the kernel is bound to the problem — before any graph capture or
// timed sample.

// cuBLASLt constants used here (cublasLt.h).
const (
	ltDescTransA       = 3 // CUBLASLT_MATMUL_DESC_TRANSA
	ltDescTransB       = 4 // CUBLASLT_MATMUL_DESC_TRANSB
	ltPrefMaxWorkspace = 1 // CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES
	// ltHeuristicBytes is sizeof(cublasLtMatmulHeuristicResult_t): the
	// algorithm (8 × uint64), size_t workspaceSize, cublasStatus_t state,
	// float wavesCount, int reserved[4].
	ltHeuristicBytes = 96
	ltCandidates     = 8
	ltReps           = 10
)

// cublasLt is libcublasLt with the entry points used here.
type cublasLt struct {
	*lib
}

// openCuBLASLt loads cuBLASLt: the sonames libcublasLt.so.13, .so.12, .so,
// then the toolkit folders.
func openCuBLASLt() (*cublasLt, error) {
	l, err := openLib("cuBLASLt (libcublasLt.so)", []string{"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"}, toolkitGlobs("libcublasLt.so*"))
	if err != nil {
		return nil, err
	}
	req := []string{"cublasLtCreate", "cublasLtDestroy", "cublasLtGetVersion",
		"cublasLtMatmulDescCreate", "cublasLtMatmulDescDestroy", "cublasLtMatmulDescSetAttribute",
		"cublasLtMatrixLayoutCreate", "cublasLtMatrixLayoutDestroy",
		"cublasLtMatmulPreferenceCreate", "cublasLtMatmulPreferenceDestroy", "cublasLtMatmulPreferenceSetAttribute",
		"cublasLtMatmulAlgoGetHeuristic", "cublasLtMatmul"}
	if err := l.resolve(req, nil); err != nil {
		return nil, err
	}
	return &cublasLt{lib: l}, nil
}

func (c *cublasLt) check(call string, r uintptr) error {
	if int32(r) == 0 {
		return nil
	}
	return fmt.Errorf("%s: cublasStatus %d", call, int32(r))
}

// version is cuBLASLt's version number as "MAJOR.MINOR.PATCH" (from
// cublasLtGetVersion's MAJOR·10000 + MINOR·100 + PATCH).
func (c *cublasLt) version() string {
	v := int(c.call("cublasLtGetVersion"))
	return fmt.Sprintf("%d.%d.%d", v/10000, v/100%100, v%100)
}

// ltKey is one GEMM shape and output type.
type ltKey struct {
	m, n, k int
	f16     bool
}

// An ltPlan is the descriptors of one shape and the algorithm chosen for it.
type ltPlan struct {
	desc, a, b, c uintptr
	algo          []uint64 // 8 words, heap-allocated (its address is passed)
	ws            uint64
	tried         int     // algorithms the heuristic returned and that ran
	bestMs        float64 // the chosen one's mean time
}

// An ltHandle is one cuBLASLt handle with its workspace and the plans of the
// shapes it has tuned.
type ltHandle struct {
	c     *cublasLt
	h     uintptr
	ws    devptr
	alpha *float32
	beta  *float32
	plans map[ltKey]*ltPlan
}

func (c *cublasLt) newHandle(d *driver) (*ltHandle, error) {
	h := new(uintptr)
	if err := c.check("cublasLtCreate", c.call("cublasLtCreate", uintptr(unsafe.Pointer(h)))); err != nil {
		return nil, err
	}
	lh := &ltHandle{c: c, h: *h, alpha: new(float32), beta: new(float32), plans: map[ltKey]*ltPlan{}}
	*lh.alpha = 1
	ws, err := d.alloc(cublasWorkspace)
	if err != nil {
		lh.destroy(d)
		return nil, fmt.Errorf("cuBLASLt workspace: %w", err)
	}
	lh.ws = ws
	return lh, nil
}

func (lh *ltHandle) destroy(d *driver) {
	for _, p := range lh.plans {
		lh.freePlan(p)
	}
	lh.plans = nil
	if lh.h != 0 {
		lh.c.call("cublasLtDestroy", lh.h)
		lh.h = 0
	}
	if lh.ws != 0 {
		_ = d.free(lh.ws)
		lh.ws = 0
	}
}

func (lh *ltHandle) freePlan(p *ltPlan) {
	for _, l := range []uintptr{p.a, p.b, p.c} {
		if l != 0 {
			lh.c.call("cublasLtMatrixLayoutDestroy", l)
		}
	}
	if p.desc != 0 {
		lh.c.call("cublasLtMatmulDescDestroy", p.desc)
	}
}

// ltPlanFor returns the tuned plan of key, tuning it on buffers x, w, y first
// (device thread; timing uses the backend's stream and events).
func (b *Backend) ltPlanFor(lh *ltHandle, key ltKey, x, w, y devptr) (*ltPlan, error) {
	if p, ok := lh.plans[key]; ok {
		return p, nil
	}
	c := lh.c
	p := &ltPlan{algo: make([]uint64, 8)}
	fail := func(err error) (*ltPlan, error) {
		lh.freePlan(p)
		return nil, err
	}
	// Row-major Y[M,N] = X·Wᵀ as column-major Yᵀ[N,M] = op_T(W)·X: A = W
	// stored K×N (ld K) and transposed, B = X stored K×M (ld K), C = D = Y
	// stored N×M (ld N).
	if err := c.check("cublasLtMatmulDescCreate", c.call("cublasLtMatmulDescCreate", uintptr(unsafe.Pointer(&p.desc)), cublasCompute32, cudaR32F)); err != nil {
		return fail(err)
	}
	opT, opN := new(int32), new(int32)
	*opT, *opN = cublasOpT, cublasOpN
	if err := c.check("cublasLtMatmulDescSetAttribute", c.call("cublasLtMatmulDescSetAttribute", p.desc, ltDescTransA, uintptr(unsafe.Pointer(opT)), 4)); err != nil {
		return fail(err)
	}
	if err := c.check("cublasLtMatmulDescSetAttribute", c.call("cublasLtMatmulDescSetAttribute", p.desc, ltDescTransB, uintptr(unsafe.Pointer(opN)), 4)); err != nil {
		return fail(err)
	}
	ctype := uintptr(cudaR32F)
	if key.f16 {
		ctype = cudaR16F
	}
	for _, l := range []struct {
		dst            *uintptr
		typ            uintptr
		rows, cols, ld int
	}{{&p.a, cudaR16F, key.k, key.n, key.k}, {&p.b, cudaR16F, key.k, key.m, key.k}, {&p.c, ctype, key.n, key.m, key.n}} {
		if err := c.check("cublasLtMatrixLayoutCreate", c.call("cublasLtMatrixLayoutCreate", uintptr(unsafe.Pointer(l.dst)), l.typ,
			uintptr(l.rows), uintptr(l.cols), uintptr(l.ld))); err != nil {
			return fail(err)
		}
	}
	pref := new(uintptr)
	if err := c.check("cublasLtMatmulPreferenceCreate", c.call("cublasLtMatmulPreferenceCreate", uintptr(unsafe.Pointer(pref)))); err != nil {
		return fail(err)
	}
	defer c.call("cublasLtMatmulPreferenceDestroy", *pref)
	wsBytes := new(uint64)
	*wsBytes = cublasWorkspace
	if err := c.check("cublasLtMatmulPreferenceSetAttribute", c.call("cublasLtMatmulPreferenceSetAttribute", *pref, ltPrefMaxWorkspace, uintptr(unsafe.Pointer(wsBytes)), 8)); err != nil {
		return fail(err)
	}
	res := make([]byte, ltHeuristicBytes*ltCandidates)
	count := new(int32)
	if err := c.check("cublasLtMatmulAlgoGetHeuristic", c.call("cublasLtMatmulAlgoGetHeuristic", lh.h, p.desc, p.a, p.b, p.c, p.c, *pref,
		ltCandidates, uintptr(unsafe.Pointer(&res[0])), uintptr(unsafe.Pointer(count)))); err != nil {
		return fail(err)
	}
	runtime.KeepAlive(opT)
	runtime.KeepAlive(opN)
	runtime.KeepAlive(wsBytes)
	d, st := b.drv, b.stream
	algo := make([]uint64, 8)
	run := func(ws uint64) error {
		r := c.call("cublasLtMatmul", lh.h, p.desc, uintptr(unsafe.Pointer(lh.alpha)), uintptr(w), p.a, uintptr(x), p.b,
			uintptr(unsafe.Pointer(lh.beta)), uintptr(y), p.c, uintptr(y), p.c, uintptr(unsafe.Pointer(&algo[0])), uintptr(lh.ws), uintptr(ws), st)
		return c.check("cublasLtMatmul", r)
	}
	best := math.Inf(1)
	for i := 0; i < int(*count) && i < ltCandidates; i++ {
		r := res[i*ltHeuristicBytes : (i+1)*ltHeuristicBytes]
		state := *(*int32)(unsafe.Pointer(&r[72]))
		ws := *(*uint64)(unsafe.Pointer(&r[64]))
		if state != 0 || ws > cublasWorkspace {
			continue
		}
		for j := range algo {
			algo[j] = *(*uint64)(unsafe.Pointer(&r[8*j]))
		}
		if err := run(ws); err != nil {
			continue // this algorithm does not run here; try the next
		}
		if err := d.do("cuEventRecord", uintptr(b.evStart), st); err != nil {
			return fail(err)
		}
		var rerr error
		for rep := 0; rep < ltReps && rerr == nil; rep++ {
			rerr = run(ws)
		}
		if err := d.do("cuEventRecord", uintptr(b.evEnd), st); err != nil {
			return fail(err)
		}
		if err := d.do("cuEventSynchronize", uintptr(b.evEnd)); err != nil {
			return fail(err)
		}
		if rerr != nil {
			continue
		}
		ms, err := d.elapsedMs(b.evStart, b.evEnd)
		if err != nil {
			return fail(err)
		}
		p.tried++
		if t := float64(ms) / ltReps; t < best {
			best = t
			copy(p.algo, algo)
			p.ws = ws
		}
	}
	if p.tried == 0 {
		return fail(fmt.Errorf("cuBLASLt: none of the %d algorithms the heuristic returned for M %d N %d K %d ran", *count, key.m, key.n, key.k))
	}
	p.bestMs = best
	lh.plans[key] = p
	return p, nil
}

// gemm runs one call of plan p (device thread).
func (lh *ltHandle) gemm(p *ltPlan, x, w, y devptr, stream uintptr) error {
	c := lh.c
	r := c.call("cublasLtMatmul", lh.h, p.desc, uintptr(unsafe.Pointer(lh.alpha)), uintptr(w), p.a, uintptr(x), p.b,
		uintptr(unsafe.Pointer(lh.beta)), uintptr(y), p.c, uintptr(y), p.c, uintptr(unsafe.Pointer(&p.algo[0])), uintptr(lh.ws), uintptr(p.ws), stream)
	runtime.KeepAlive(p)
	return c.check("cublasLtMatmul", r)
}

// ltState is the backend's cuBLASLt: the library (opened with the backend)
// and its one handle (created on first use).
type ltState struct {
	once   sync.Once
	lib    *cublasLt
	handle *ltHandle
	err    error
}

// ltHandleOf opens cuBLASLt and creates the backend's handle on first use.
func (b *Backend) ltHandleOf(ctx context.Context) (*ltHandle, error) {
	b.lt.once.Do(func() {
		if b.lt.lib == nil {
			b.lt.err = fmt.Errorf("cuBLASLt is not installed: %w", b.ltErr)
			return
		}
		t0 := time.Now()
		defer func() { b.steps.add("cublaslt handle", time.Since(t0)) }()
		b.lt.err = b.w.do(ctx, func() error {
			h, err := b.lt.lib.newHandle(b.drv)
			b.lt.handle = h
			return err
		})
		if b.lt.err != nil {
			b.lt.err = fmt.Errorf("cuda: cuBLASLt: %w", b.lt.err)
		}
	})
	return b.lt.handle, b.lt.err
}
