package cuda

import (
	"fmt"
	"runtime"
	"unsafe"

	"github.com/ebitengine/purego"
)

// cuBLAS constants used here (cublas_api.h, library_types.h).
const (
	cublasOpN       = 0
	cublasOpT       = 1
	cudaR16F        = 2
	cudaR32F        = 0
	cublasCompute32 = 68 // CUBLAS_COMPUTE_32F
	cublasGemmDflt  = -1 // CUBLAS_GEMM_DEFAULT
	// cublasWorkspace is the workspace given to cuBLAS (32 MiB, the size
	// NVIDIA recommends on Hopper), so that it allocates nothing during
	// graph capture.
	cublasWorkspace = 32 << 20
)

// cublas is libcublas with the entry points used here.
type cublas struct {
	*lib
	statusString func(int32) string // nil when the library lacks it
}

// openCuBLAS loads cuBLAS: the sonames libcublas.so.13, .so.12, .so, then
// the toolkit folders.
func openCuBLAS() (*cublas, error) {
	l, err := openLib("cuBLAS (libcublas.so)", []string{"libcublas.so.13", "libcublas.so.12", "libcublas.so"}, toolkitGlobs("libcublas.so*"))
	if err != nil {
		return nil, err
	}
	req := []string{"cublasCreate_v2", "cublasDestroy_v2", "cublasSetStream_v2", "cublasSetWorkspace_v2", "cublasGemmEx", "cublasGetVersion_v2"}
	if err := l.resolve(req, []string{"cublasGetStatusString", "cublasGetProperty"}); err != nil {
		return nil, err
	}
	c := &cublas{lib: l}
	if l.has("cublasGetStatusString") {
		purego.RegisterFunc(&c.statusString, l.syms["cublasGetStatusString"])
	}
	return c, nil
}

func (c *cublas) check(call string, r uintptr) error {
	if int32(r) == 0 {
		return nil
	}
	msg := fmt.Sprintf("cublasStatus %d", int32(r))
	if c.statusString != nil {
		msg = c.statusString(int32(r))
	}
	return fmt.Errorf("%s: %s", call, msg)
}

// A blasHandle is one cuBLAS handle bound to the backend's stream, with its
// own workspace.
type blasHandle struct {
	c       *cublas
	h       uintptr
	ws      devptr
	version int
	alpha   *float32
	beta    *float32
}

// newHandle creates a handle on stream (call on the device thread).
func (c *cublas) newHandle(d *driver, stream uintptr) (*blasHandle, error) {
	h := new(uintptr)
	if err := c.check("cublasCreate_v2", c.call("cublasCreate_v2", uintptr(unsafe.Pointer(h)))); err != nil {
		return nil, err
	}
	b := &blasHandle{c: c, h: *h, alpha: new(float32), beta: new(float32)}
	*b.alpha = 1
	if err := c.check("cublasSetStream_v2", c.call("cublasSetStream_v2", b.h, stream)); err != nil {
		b.destroy(d)
		return nil, err
	}
	ws, err := d.alloc(cublasWorkspace)
	if err != nil {
		b.destroy(d)
		return nil, fmt.Errorf("cuBLAS workspace: %w", err)
	}
	b.ws = ws
	if err := c.check("cublasSetWorkspace_v2", c.call("cublasSetWorkspace_v2", b.h, uintptr(ws), cublasWorkspace)); err != nil {
		b.destroy(d)
		return nil, err
	}
	v := new(int32)
	if err := c.check("cublasGetVersion_v2", c.call("cublasGetVersion_v2", b.h, uintptr(unsafe.Pointer(v)))); err != nil {
		b.destroy(d)
		return nil, err
	}
	b.version = int(*v)
	return b, nil
}

func (b *blasHandle) destroy(d *driver) {
	if b.h != 0 {
		b.c.call("cublasDestroy_v2", b.h)
		b.h = 0
	}
	if b.ws != 0 {
		_ = d.free(b.ws)
		b.ws = 0
	}
}

// gemm computes row-major Y[M,N] = X[M,K]·W[N,K]ᵀ (fp16 in, fp32 compute,
// Y fp16 when outF16 else fp32; kernel.VendorGemm) as the column-major
// Yᵀ = op_T(W)·X:
// cublasGemmEx(transa T, transb N, m = N, n = M, k = K, A = W, lda = K,
// B = X, ldb = K, C = Y, ldc = N).
func (b *blasHandle) gemm(x, w, y devptr, m, n, k int, outF16 bool) error {
	ctype := uintptr(cudaR32F)
	if outF16 {
		ctype = cudaR16F
	}
	algo := int32(cublasGemmDflt)
	r := b.c.call("cublasGemmEx", b.h, cublasOpT, cublasOpN,
		uintptr(n), uintptr(m), uintptr(k),
		uintptr(unsafe.Pointer(b.alpha)),
		uintptr(w), cudaR16F, uintptr(k),
		uintptr(x), cudaR16F, uintptr(k),
		uintptr(unsafe.Pointer(b.beta)),
		uintptr(y), ctype, uintptr(n),
		cublasCompute32, uintptr(uint32(algo)))
	runtime.KeepAlive(b)
	return b.c.check("cublasGemmEx", r)
}

// version is cuBLAS's "MAJOR.MINOR.PATCH" ("" when unknown).
func (c *cublas) version() string {
	if !c.has("cublasGetProperty") {
		return ""
	}
	var v [3]int
	for i := range v {
		x := new(int32)
		if c.call("cublasGetProperty", uintptr(i), uintptr(unsafe.Pointer(x))) != 0 {
			return ""
		}
		v[i] = int(*x)
	}
	return fmt.Sprintf("%d.%d.%d", v[0], v[1], v[2])
}
