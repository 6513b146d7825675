package cpu

import (
	"fmt"
	"strings"
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

// openBLASCores are the core types a DYNAMIC_ARCH OpenBLAS names in
// openblas_get_config() (the x86 kernels it carries; a build for one core
// names it in capitals, e.g. "HASWELL"), each with whether its kernels are
// far weaker than a CPU with AVX2: the pre-AVX kernels, and Sandybridge
// (AVX without FMA or AVX2). Bulldozer's family (AVX, FMA4/FMA3) is left
// out: OpenBLAS picks it only on those CPUs, none of which has AVX2 but
// Excavator, whose kernels it names after it.
var openBLASCores = map[string]bool{
	"katmai": true, "coppermine": true, "northwood": true, "prescott": true, "banias": true,
	"atom": true, "core2": true, "penryn": true, "dunnington": true, "nehalem": true,
	"athlon": true, "opteron": true, "opteron_sse3": true, "barcelona": true, "nano": true,
	"bobcat": true, "sandybridge": true,
	"bulldozer": false, "piledriver": false, "steamroller": false, "excavator": false,
	"haswell": false, "zen": false, "skylakex": false, "cooperlake": false, "sapphirerapids": false,
}

// openBLASWarning says when OpenBLAS runs kernels far weaker than the CPU:
// config is openblas_get_config() (e.g. "OpenBLAS 0.3.21 NO_LAPACKE
// DYNAMIC_ARCH NO_AFFINITY Prescott MAX_THREADS=64"), flags the CPU's
// instruction-set flags (/proc/cpuinfo) and coretype $OPENBLAS_CORETYPE.
// It returns "" unless the config names a pre-AVX2 core (openBLASCores)
// and the CPU has avx2 or avx512f; then the message names the core, the
// CPU's best flag and what to do: OPENBLAS_CORETYPE=SkylakeX (with
// avx512f) or Haswell for a DYNAMIC_ARCH build, a newer OpenBLAS, or one
// built for this CPU. It does not change what OpenBLAS does: the user
// decides.
func openBLASWarning(config string, flags map[string]bool, coretype string) string {
	fields := strings.Fields(config)
	core, dynamic := "", false
	for _, f := range fields {
		if f == "DYNAMIC_ARCH" {
			dynamic = true
		}
		if _, ok := openBLASCores[strings.ToLower(f)]; ok && core == "" {
			core = f
		}
	}
	if core == "" || !openBLASCores[strings.ToLower(core)] {
		return ""
	}
	var has, suggest string
	switch {
	case flags["avx512f"]:
		has, suggest = "avx512f", "SkylakeX (AVX-512) or Haswell (AVX2)"
	case flags["avx2"]:
		has, suggest = "avx2", "Haswell (AVX2)"
	default:
		return ""
	}
	lib := "OpenBLAS"
	if len(fields) > 1 && fields[0] == "OpenBLAS" {
		lib += " " + fields[1]
	}
	why := "it does not know this CPU model"
	switch {
	case strings.TrimSpace(coretype) != "":
		why = "OPENBLAS_CORETYPE=" + strings.TrimSpace(coretype) + " asked for them"
	case !dynamic:
		why = "a build for that core only"
	}
	msg := fmt.Sprintf("%s chose its %s kernels on a CPU with %s (%s): the openblas column and vendor_tflops understate the vendor; ", lib, core, has, why)
	if dynamic {
		return msg + "set OPENBLAS_CORETYPE=" + suggest + " before running tilefit, or install a newer OpenBLAS"
	}
	return msg + "install an OpenBLAS built for this CPU (a DYNAMIC_ARCH build picks its kernels at run time and takes OPENBLAS_CORETYPE=" + suggest + ")"
}
