package cuda

import (
	"context"
	"fmt"
	"os"
	"time"
	"unsafe"

	"github.com/tilefit/tilefit/backend"
	"github.com/tilefit/tilefit/kernel"
)

// A Kernel is a loaded candidate: a CUDA module with the function of every
// compiled launch of its Plan, and cuBLAS for its vendor launches.
//
// The one parameter convention of every CUDA family: a launch's parameters
// are its Args in order — operand and scratch buffers as device pointers,
// dimensions and constants as 64-bit integers (long long), tensor maps as a
// `const __grid_constant__` 128-byte, 64-byte-aligned struct (CUtensorMap).
type Kernel struct {
	name   string
	b      *Backend
	plan   kernel.Plan
	m      *module   // nil when every launch is a vendor routine
	fns    []uintptr // per launch; 0 for vendor launches
	regs   int
	local  int
	smem   int
	closed bool
}

var _ backend.Kernel = (*Kernel)(nil)

// Name is the tile or vendor name.
func (k *Kernel) Name() string { return k.name }

// Plan is the launch list the kernel runs.
func (k *Kernel) Plan() kernel.Plan { return k.plan }

// Resources reports registers per thread and local (spill) bytes per thread
// of the first compiled launch, and the largest dynamic shared memory of any
// launch (zeros for a cuBLAS-only plan).
func (k *Kernel) Resources() (regs, localBytes, sharedBytes int) {
	return k.regs, k.local, k.smem
}

// Close releases the kernel's module: it stays loaded for the next Kernel
// of the same artifact (modules).
func (k *Kernel) Close() error {
	if k.closed || k.m == nil {
		k.closed = true
		return nil
	}
	k.closed = true
	return k.b.w.do(context.Background(), func() error {
		return k.b.release(k.m)
	})
}

// Load loads the CUBIN a into the device's context and finds the function
// of every compiled launch of plan (setting its dynamic shared memory limit
// to the launch's Shared); vendor launches (kernel.VendorGemm) need cuBLAS,
// kernel.VendorGemmLt cuBLASLt.
func (b *Backend) Load(ctx context.Context, name string, a backend.Artifact, plan kernel.Plan) (backend.Kernel, error) {
	if len(plan.Launches) == 0 {
		return nil, fmt.Errorf("load %s: plan has no launches", name)
	}
	k := &Kernel{name: name, b: b, plan: plan, fns: make([]uintptr, len(plan.Launches))}
	compiled := false
	for li, l := range plan.Launches {
		switch l.Vendor {
		case "":
			compiled = true
			if l.Shared > b.smemOptin {
				return nil, fmt.Errorf("load %s: launch %d (%s): %d bytes of shared memory exceed the device's %d per block", name, li, l.Entry, l.Shared, b.smemOptin)
			}
			if l.Shared > k.smem {
				k.smem = l.Shared
			}
		case kernel.VendorGemm:
			if _, err := b.blasHandle(ctx); err != nil {
				return nil, fmt.Errorf("load %s: vendor routine %s: %w", name, l.Vendor, err)
			}
		case kernel.VendorGemmLt:
			if _, err := b.ltHandleOf(ctx); err != nil {
				return nil, fmt.Errorf("load %s: vendor routine %s: %w", name, l.Vendor, err)
			}
		default:
			return nil, fmt.Errorf("load %s: launch %d: unknown vendor routine %q on CUDA", name, li, l.Vendor)
		}
	}
	if !compiled {
		return k, nil
	}
	image, err := os.ReadFile(a.Path)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", name, err)
	}
	err = b.w.do(ctx, func() error {
		d := b.drv
		m, err := b.acquire(a.Path, image)
		if err != nil {
			return err
		}
		k.m = m
		setup := func() error {
			want := map[uintptr]int{}
			for li, l := range plan.Launches {
				if l.Vendor != "" {
					continue
				}
				fn, ok := m.fns[l.Entry]
				if !ok {
					p := new(uintptr)
					sym := cString(l.Entry)
					if err := d.do("cuModuleGetFunction", uintptr(unsafe.Pointer(p)), m.mod, uintptr(unsafe.Pointer(&sym[0]))); err != nil {
						return fmt.Errorf("entry %s: %w", l.Entry, err)
					}
					fn = *p
					m.fns[l.Entry] = fn
					// Under the driver's lazy loading (CUDA_MODULE_LOADING
					// defaults to LAZY) a function is loaded at its first
					// launch: in the cell's first verification run, inside
					// the verify phase. Load it here, in the load phase.
					if d.has("cuFuncLoad") {
						if err := d.do("cuFuncLoad", fn); err != nil {
							return fmt.Errorf("entry %s: %w", l.Entry, err)
						}
					}
					v := new(int32)
					var at [2]int
					if err := d.do("cuFuncGetAttribute", uintptr(unsafe.Pointer(v)), funcAttrNumRegs, fn); err == nil {
						at[0] = int(*v)
					}
					if err := d.do("cuFuncGetAttribute", uintptr(unsafe.Pointer(v)), funcAttrLocalSizeBytes, fn); err == nil {
						at[1] = int(*v)
					}
					m.attrs[fn] = at
					// Prefer the largest shared-memory carveout so that
					// several blocks of big tiles fit on one SM.
					if err := d.do("cuFuncSetAttribute", fn, funcAttrPreferredCarveout, 100); err != nil {
						return err
					}
				}
				k.fns[li] = fn
				if k.regs == 0 {
					k.regs, k.local = m.attrs[fn][0], m.attrs[fn][1]
				}
				want[fn] = max(want[fn], l.Shared)
			}
			// The dynamic shared memory limit only grows: another plan of
			// the same module may still be open with a larger one.
			for fn, s := range want {
				if s > m.smem[fn] {
					if err := d.do("cuFuncSetAttribute", fn, funcAttrMaxDynamicSharedSize, uintptr(s)); err != nil {
						return err
					}
					m.smem[fn] = s
				}
			}
			return nil
		}
		if err := setup(); err != nil {
			if m.refs <= 1 {
				b.discard(m)
			} else {
				_ = b.release(m)
			}
			k.m = nil
			return err
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", name, err)
	}
	return k, nil
}

// blasHandle creates the backend's one cuBLAS handle on first use.
func (b *Backend) blasHandle(ctx context.Context) (*blasHandle, error) {
	if b.blas == nil {
		return nil, fmt.Errorf("cuBLAS is not installed: %w", b.blErr)
	}
	b.handleOnce.Do(func() {
		t0 := time.Now()
		defer func() { b.steps.add("cublas handle", time.Since(t0)) }()
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
