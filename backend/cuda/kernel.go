package cuda

import (
	"context"
	"fmt"
	"os"
	"unsafe"

	"github.com/tilefit/tilefit/backend"
	"github.com/tilefit/tilefit/kernel"
)

// A Kernel is a loaded gemm_f16 tile (a CUDA module and its tilefit_gemm
// function) or, when vendor is set, the cuBLAS candidate.
type Kernel struct {
	name   string
	b      *Backend
	vendor bool
	mod    uintptr
	fn     uintptr
	geo    geometry
	regs   int
	local  int
	closed bool
}

var _ backend.Kernel = (*Kernel)(nil)

// Name is the tile name, or kernel.VendorCuBLAS.
func (k *Kernel) Name() string { return k.name }

// Resources reports registers per thread, local (spill) bytes per thread and
// dynamic shared memory bytes per block of a tile (zeros for cuBLAS).
func (k *Kernel) Resources() (regs, localBytes, sharedBytes int) {
	return k.regs, k.local, k.geo.smem
}

// OutF16 reports whether the kernel writes fp16 (from the OUT_F16 define).
func (k *Kernel) OutF16() bool { return k.geo.outF16 }

// Close unloads the module (nothing for cuBLAS).
func (k *Kernel) Close() error {
	if k.vendor || k.closed {
		return nil
	}
	k.closed = true
	return k.b.w.do(context.Background(), func() error {
		return k.b.drv.do("cuModuleUnload", k.mod)
	})
}

// grid is the number of blocks for M×N: ceil(M/TM)·ceil(N/TN).
func (k *Kernel) grid(m, n int) int {
	return ((m + k.geo.tm - 1) / k.geo.tm) * ((n + k.geo.tn - 1) / k.geo.tn)
}

// Load loads the CUBIN a into the device's context and finds tilefit_gemm;
// the launch geometry comes from p's defines (block WARPS·32 threads,
// STAGES·(TM+TN)·TK·2 bytes of dynamic shared memory, fp16 output when
// OUT_F16=1).
func (b *Backend) Load(ctx context.Context, name string, p backend.Program, a backend.Artifact) (backend.Kernel, error) {
	geo, err := geometryOf(p)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", name, err)
	}
	if geo.smem > b.smemOptin {
		return nil, fmt.Errorf("load %s: %d bytes of shared memory exceed the device's %d per block", name, geo.smem, b.smemOptin)
	}
	image, err := os.ReadFile(a.Path)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", name, err)
	}
	k := &Kernel{name: name, b: b, geo: geo}
	err = b.w.do(ctx, func() error {
		d := b.drv
		mod := new(uintptr)
		if err := d.do("cuModuleLoadData", uintptr(unsafe.Pointer(mod)), uintptr(unsafe.Pointer(&image[0]))); err != nil {
			return err
		}
		k.mod = *mod
		fn := new(uintptr)
		sym := cString("tilefit_gemm")
		if err := d.do("cuModuleGetFunction", uintptr(unsafe.Pointer(fn)), k.mod, uintptr(unsafe.Pointer(&sym[0]))); err != nil {
			d.call("cuModuleUnload", k.mod)
			return err
		}
		k.fn = *fn
		if err := d.do("cuFuncSetAttribute", k.fn, funcAttrMaxDynamicSharedSize, uintptr(geo.smem)); err != nil {
			d.call("cuModuleUnload", k.mod)
			return err
		}
		// Prefer the largest shared-memory carveout so that several
		// blocks of big tiles fit on one SM.
		if err := d.do("cuFuncSetAttribute", k.fn, funcAttrPreferredCarveout, 100); err != nil {
			d.call("cuModuleUnload", k.mod)
			return err
		}
		v := new(int32)
		if err := d.do("cuFuncGetAttribute", uintptr(unsafe.Pointer(v)), funcAttrNumRegs, k.fn); err == nil {
			k.regs = int(*v)
		}
		if err := d.do("cuFuncGetAttribute", uintptr(unsafe.Pointer(v)), funcAttrLocalSizeBytes, k.fn); err == nil {
			k.local = int(*v)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", name, err)
	}
	return k, nil
}

// Vendor returns the cuBLAS candidate (kernel.VendorCuBLAS): cublasGemmEx
// with fp16 inputs, fp32 compute, and fp16 or fp32 output as the problem
// asks. ok is false when cuBLAS is not installed.
func (b *Backend) Vendor(ctx context.Context) (backend.Kernel, bool, error) {
	if b.blas == nil {
		return nil, false, nil
	}
	if _, err := b.blasHandle(ctx); err != nil {
		return nil, false, err
	}
	return &Kernel{name: kernel.VendorCuBLAS, b: b, vendor: true}, true, nil
}

// blasHandle creates the backend's one cuBLAS handle on first use.
func (b *Backend) blasHandle(ctx context.Context) (*blasHandle, error) {
	if b.blas == nil {
		return nil, fmt.Errorf("cuda: %w", b.blErr)
	}
	b.handleOnce.Do(func() {
		b.handleErr = b.w.do(ctx, func() error {
			h, err := b.blas.newHandle(b.drv, b.stream)
			b.handle = h
			return err
		})
		if b.handleErr != nil {
			b.handleErr = fmt.Errorf("cuda: cuBLAS: %w", b.handleErr)
		}
	})
	return b.handle, b.handleErr
}
