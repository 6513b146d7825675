package cpu

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/tilefit/tilefit/backend"
)

var _ backend.Ceilings = (*CPU)(nil)

// Ceiling sizes on the CPU.
const (
	// CopyMinBytes and CopyMaxBytes bound the buffer copied for copy_gbps:
	// four times the last-level cache, within these limits.
	CopyMinBytes = 64 << 20
	CopyMaxBytes = 512 << 20
	// GemmSize is M = N = K of the OpenBLAS sgemm timed for vendor_tflops.
	GemmSize = 2048
)

// Ceilings measures this machine's ceilings, in the keys the CUDA backend
// uses: "copy_gbps", a copy of a buffer four times the last-level cache
// (64–512 MiB) split over every core, counted as bytes read + written per
// second (best of 5 after a warm-up), and — when OpenBLAS is installed —
// "vendor_tflops", cblas_sgemm at GemmSize³ on random fp32 data (2·n³ flop
// per call, best of 3 after a warm-up). It measures each time it is called
// (about a second); tilefit devices stores the readings.
func (c *CPU) Ceilings(ctx context.Context) (map[string]string, error) {
	out := map[string]string{}
	gbps, err := copyRate(ctx, copyBytes())
	if err != nil {
		return nil, fmt.Errorf("copy ceiling: %w", err)
	}
	out["copy_gbps"] = strconv.FormatFloat(gbps, 'f', 1, 64)
	b, err := c.openBLAS()
	if err != nil {
		return nil, fmt.Errorf("OpenBLAS ceiling: %w", err)
	}
	if b != nil {
		tf, err := sgemmRate(ctx, b, GemmSize)
		if err != nil {
			return nil, fmt.Errorf("OpenBLAS ceiling: %w", err)
		}
		out["vendor_tflops"] = strconv.FormatFloat(tf, 'g', 3, 64)
	}
	return out, nil
}

// copyBytes is four times the last-level cache, within CopyMinBytes and
// CopyMaxBytes.
func copyBytes() int {
	llc := int64(0)
	for k, v := range cacheSizes() {
		if k == "l3" || (k == "l2" && llc == 0) {
			llc = max(llc, parseCacheSize(v))
		}
	}
	return int(min(max(4*llc, CopyMinBytes), CopyMaxBytes))
}

// parseCacheSize parses a sysfs cache size ("32768K", "1M", "512").
func parseCacheSize(s string) int64 {
	mult := int64(1)
	switch {
	case strings.HasSuffix(s, "K"):
		s, mult = strings.TrimSuffix(s, "K"), 1<<10
	case strings.HasSuffix(s, "M"):
		s, mult = strings.TrimSuffix(s, "M"), 1<<20
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0
	}
	return n * mult
}

// copyRate copies n bytes between two buffers, the work split over every
// core, and returns the best rate in GB/s (read + written).
func copyRate(ctx context.Context, n int) (float64, error) {
	src, dst := make([]byte, n), make([]byte, n)
	for i := 0; i < n; i += 4096 {
		src[i] = byte(i >> 12) // touch every page
	}
	workers := runtime.NumCPU()
	chunk := (n + workers - 1) / workers
	best := 0.0
	for i := 0; i < 6; i++ {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		t0 := time.Now()
		var wg sync.WaitGroup
		for w := 0; w < workers; w++ {
			lo, hi := w*chunk, min((w+1)*chunk, n)
			if lo >= hi {
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				copy(dst[lo:hi], src[lo:hi])
			}()
		}
		wg.Wait()
		if r := 2 * float64(n) / time.Since(t0).Seconds() / 1e9; i > 0 && r > best {
			best = r
		}
	}
	runtime.KeepAlive(dst)
	return best, nil
}

// sgemmRate times cblas_sgemm at n³ on random data and returns the best
// rate in TFLOP/s.
func sgemmRate(ctx context.Context, b *openBLAS, n int) (float64, error) {
	rng := rand.New(rand.NewPCG(1, 2))
	x, w, y := make([]float32, n*n), make([]float32, n*n), make([]float32, n*n)
	for i := range x {
		x[i], w[i] = 2*rng.Float32()-1, 2*rng.Float32()-1
	}
	best := 0.0
	for i := 0; i < 4; i++ {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		t0 := time.Now()
		b.sgemm(n, n, n, x, w, unsafe.Pointer(&y[0]))
		if r := 2 * float64(n) * float64(n) * float64(n) / time.Since(t0).Seconds() / 1e12; i > 0 && r > best {
			best = r
		}
	}
	return best, nil
}
