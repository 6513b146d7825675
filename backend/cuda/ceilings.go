package cuda

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/x448/float16"
)

// Ceiling sizes.
const (
	// CopyBytes is the size of the device-to-device copy timed for copy_gbps.
	CopyBytes = 1 << 30
	// GemmSize is M = N = K of the cuBLAS fp16 matmul timed for vendor_tflops.
	GemmSize = 8192
)

// Ceilings measures the device once (then returns the same values):
// "copy_gbps", a CopyBytes device-to-device copy counted as bytes read +
// written per second (best of 10 after a warm-up), and "vendor_tflops",
// cuBLAS fp16 in / fp16 out / fp32 compute at GemmSize³ on random data
// (2·GemmSize³ flop per call, best of 3 samples of 5 calls after a warm-up).
// The values also appear in Device's Props afterwards.
func (b *Backend) Ceilings(ctx context.Context) (map[string]string, error) {
	b.ceilOnce.Do(func() {
		out := map[string]string{}
		gbps, err := b.copyRate(ctx)
		if err != nil {
			b.ceilErr = fmt.Errorf("copy ceiling: %w", err)
			return
		}
		out["copy_gbps"] = fmt.Sprintf("%.0f", gbps)
		if b.blas != nil {
			tf, err := b.vendorRate(ctx)
			if err != nil {
				b.ceilErr = fmt.Errorf("cuBLAS ceiling: %w", err)
				return
			}
			out["vendor_tflops"] = fmt.Sprintf("%.0f", tf)
		}
		b.ceil = out
	})
	return b.ceil, b.ceilErr
}

// copyRate times cuMemcpyDtoDAsync of CopyBytes: 2·CopyBytes / t, in GB/s.
func (b *Backend) copyRate(ctx context.Context) (float64, error) {
	var best float64
	err := b.w.do(ctx, func() error {
		d, st := b.drv, b.stream
		src, err := d.alloc(CopyBytes)
		if err != nil {
			return err
		}
		defer d.free(src)
		dst, err := d.alloc(CopyBytes)
		if err != nil {
			return err
		}
		defer d.free(dst)
		if err := d.do("cuMemsetD32Async", uintptr(src), 0x3C003C00, CopyBytes/4, st); err != nil {
			return err
		}
		for i := 0; i < 11; i++ {
			if err := d.do("cuEventRecord", uintptr(b.evStart), st); err != nil {
				return err
			}
			if err := d.do("cuMemcpyDtoDAsync_v2", uintptr(dst), uintptr(src), CopyBytes, st); err != nil {
				return err
			}
			if err := d.do("cuEventRecord", uintptr(b.evEnd), st); err != nil {
				return err
			}
			if err := d.do("cuEventSynchronize", uintptr(b.evEnd)); err != nil {
				return err
			}
			ms, err := d.elapsedMs(b.evStart, b.evEnd)
			if err != nil {
				return err
			}
			if r := 2 * CopyBytes / (float64(ms) * 1e-3) / 1e9; i > 0 && r > best {
				best = r
			}
		}
		return nil
	})
	return best, err
}

// vendorRate times cuBLAS at GemmSize³ on random fp16 data, in TFLOP/s.
func (b *Backend) vendorRate(ctx context.Context) (float64, error) {
	h, err := b.blasHandle(ctx)
	if err != nil {
		return 0, err
	}
	const n = GemmSize
	rng := rand.New(rand.NewPCG(1, 2))
	a := make([]uint16, n*n)
	for i := range a {
		a[i] = float16.Fromfloat32(rng.Float32()*2 - 1).Bits()
	}
	var best float64
	err = b.w.do(ctx, func() error {
		d, st := b.drv, b.stream
		var bufs []devptr
		defer func() {
			for _, p := range bufs {
				d.free(p)
			}
		}()
		for i := 0; i < 3; i++ {
			p, err := d.alloc(n * n * 2)
			if err != nil {
				return err
			}
			bufs = append(bufs, p)
		}
		if err := htod(d, bufs[0], a); err != nil {
			return err
		}
		// W: the same values read in another order (rows reversed).
		for r := 0; r < n/2; r++ {
			x, y := a[r*n:(r+1)*n], a[(n-1-r)*n:(n-r)*n]
			for j := range x {
				x[j], y[j] = y[j], x[j]
			}
		}
		if err := htod(d, bufs[1], a); err != nil {
			return err
		}
		if err := h.gemm(bufs[0], bufs[1], bufs[2], n, n, n, true); err != nil {
			return err
		}
		for s := 0; s < 3; s++ {
			if err := d.do("cuEventRecord", uintptr(b.evStart), st); err != nil {
				return err
			}
			for i := 0; i < 5; i++ {
				if err := h.gemm(bufs[0], bufs[1], bufs[2], n, n, n, true); err != nil {
					return err
				}
			}
			if err := d.do("cuEventRecord", uintptr(b.evEnd), st); err != nil {
				return err
			}
			if err := d.do("cuEventSynchronize", uintptr(b.evEnd)); err != nil {
				return err
			}
			ms, err := d.elapsedMs(b.evStart, b.evEnd)
			if err != nil {
				return err
			}
			if r := 5 * 2 * float64(n) * n * n / (float64(ms) * 1e-3) / 1e12; r > best {
				best = r
			}
		}
		return nil
	})
	if err == nil && best == 0 {
		err = errors.New("no sample")
	}
	return best, err
}
