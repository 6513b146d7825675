package cpu

import (
	"fmt"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/tilefit/tilefit/internal/dl"
)

// OpenBLASNames are the library names tried, in order, by Vendor.
var OpenBLASNames = []string{"libopenblas.so.0", "libopenblas.so"}

// CBLAS enum values.
const (
	cblasRowMajor = 101
	cblasNoTrans  = 111
	cblasTrans    = 112
)

// openBLAS is the loaded library.
type openBLAS struct {
	path   string
	config string // openblas_get_config(), e.g. "OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY Zen MAX_THREADS=64"
	// cblas_sgemm(order, transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc)
	sgemmFn func(order, ta, tb, m, n, k int32, alpha float32, a unsafe.Pointer, lda int32, b unsafe.Pointer, ldb int32, beta float32, c unsafe.Pointer, ldc int32)
}

// sgemm computes y[M,N] = x[M,K]·w[N,K]ᵀ in fp32: row-major, A = x not
// transposed (lda K), B = w transposed (ldb K), C = y (ldc N), α 1, β 0.
func (b *openBLAS) sgemm(m, n, k int, x, w []float32, y unsafe.Pointer) {
	if m <= 0 || n <= 0 {
		return
	}
	if k <= 0 {
		// Y = 0 (an empty sum); OpenBLAS would read no inputs either.
		clear(unsafe.Slice((*float32)(y), m*n))
		return
	}
	b.sgemmFn(cblasRowMajor, cblasNoTrans, cblasTrans, int32(m), int32(n), int32(k),
		1, unsafe.Pointer(&x[0]), int32(k), unsafe.Pointer(&w[0]), int32(k), 0, y, int32(n))
}

// openBLAS loads OpenBLAS once; (nil, nil) when it is not installed.
func (c *CPU) openBLAS() (*openBLAS, error) {
	c.blasOnce.Do(func() {
		var h uintptr
		var path string
		for _, name := range OpenBLASNames {
			var err error
			if h, err = dl.Open(name, purego.RTLD_NOW|purego.RTLD_LOCAL); err == nil {
				path = name
				break
			}
		}
		if h == 0 {
			return
		}
		sym, err := dl.Sym(h, "cblas_sgemm")
		if err != nil {
			purego.Dlclose(h)
			c.blasErr = fmt.Errorf("openblas %s: no cblas_sgemm: %w", path, err)
			return
		}
		b := &openBLAS{path: path}
		purego.RegisterFunc(&b.sgemmFn, sym)
		if cfg, err := dl.Sym(h, "openblas_get_config"); err == nil {
			var getConfig func() string
			purego.RegisterFunc(&getConfig, cfg)
			b.config = getConfig()
		}
		c.blas = b
	})
	return c.blas, c.blasErr
}
