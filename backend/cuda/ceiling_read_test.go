package cuda

// GPU measurement (no assertion on speed): the read ceiling of the decode
// shapes — how fast a read-only streaming kernel, or cuMemcpyDtoD, moves
// 32 MiB (4096²·2 B) and 30 MiB (2560·6144·2 B) per call, back to back in
// one CUDA graph with the buffers rotated over sets larger than the L2 (as
// the sweep's TimingGraph rotates its weight sets). Skipped without a GPU.

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"unsafe"
)

const readCeilSrc = `
extern "C" __global__ void __launch_bounds__(512) tf_read(const uint4* __restrict__ p, unsigned long long n16, unsigned* out) {
  unsigned s = 0;
  unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
  unsigned long long st = (unsigned long long)gridDim.x * blockDim.x;
  #pragma unroll 8
  for (; i < n16; i += st) {
    uint4 v;
    asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p + i));
    s ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  for (int o = 16; o; o >>= 1) s ^= __shfl_xor_sync(0xffffffffu, s, o);
  if ((threadIdx.x & 31) == 0) atomicXor(out + blockIdx.x, s);
}
`

// TestReadCeiling logs GB/s and µs per call of tf_read (grids of 1, 2, 4
// CTAs per SM, 256 and 512 threads) and of cuMemcpyDtoDAsync at the decode
// weights' sizes, and copy_gbps, for the results README. It fails only on a
// driver or compile error.
func TestReadCeiling(t *testing.T) {
	b := testBackend(t)
	if b.nv == nil {
		t.Skip("no NVRTC")
	}
	ctx := context.Background()
	ceil, err := b.Ceilings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("copy_gbps %s", ceil["copy_gbps"])
	cubin, log, err := b.nv.compile(readCeilSrc, "read_ceiling.cu", []string{fmt.Sprintf("--gpu-architecture=sm_%d%d", b.ccMajor, b.ccMinor)})
	if err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	const sets, calls = 8, 64
	err = b.w.do(ctx, func() error {
		d, st := b.drv, b.stream
		mod := new(uintptr)
		if err := d.do("cuModuleLoadData", uintptr(unsafe.Pointer(mod)), uintptr(unsafe.Pointer(&cubin[0]))); err != nil {
			return err
		}
		defer d.call("cuModuleUnload", *mod)
		fn := new(uintptr)
		sym := cString("tf_read")
		if err := d.do("cuModuleGetFunction", uintptr(unsafe.Pointer(fn)), *mod, uintptr(unsafe.Pointer(&sym[0]))); err != nil {
			return err
		}
		out, err := d.alloc(4096 * 4)
		if err != nil {
			return err
		}
		defer d.free(out)
		for _, size := range []int64{4096 * 4096 * 2, 2560 * 6144 * 2} {
			var bufs [sets]devptr
			for i := range bufs {
				if bufs[i], err = d.alloc(size); err != nil {
					return err
				}
				defer d.free(bufs[i])
				if err := d.do("cuMemsetD32Async", uintptr(bufs[i]), 0x3C003C00, uintptr(size/4), st); err != nil {
					return err
				}
			}
			dst, err := d.alloc(size / 2)
			if err != nil {
				return err
			}
			defer d.free(dst)
			timeGraph := func(body func(i int) error) (float64, error) {
				if err := d.do("cuStreamBeginCapture_v2", st, captureModeRelaxed); err != nil {
					return 0, err
				}
				var berr error
				for i := 0; i < calls && berr == nil; i++ {
					berr = body(i)
				}
				gp := new(uintptr)
				eerr := d.do("cuStreamEndCapture", st, uintptr(unsafe.Pointer(gp)))
				if berr != nil || eerr != nil {
					return 0, fmt.Errorf("capture: %v %v", berr, eerr)
				}
				defer d.call("cuGraphDestroy", *gp)
				ep := new(uintptr)
				if err := d.do("cuGraphInstantiateWithFlags", uintptr(unsafe.Pointer(ep)), *gp, 0); err != nil {
					return 0, err
				}
				defer d.call("cuGraphExecDestroy", *ep)
				best := 1e30
				for r := 0; r < 12; r++ {
					if err := d.do("cuEventRecord", uintptr(b.evStart), st); err != nil {
						return 0, err
					}
					if err := d.do("cuGraphLaunch", *ep, st); err != nil {
						return 0, err
					}
					if err := d.do("cuEventRecord", uintptr(b.evEnd), st); err != nil {
						return 0, err
					}
					if err := d.do("cuEventSynchronize", uintptr(b.evEnd)); err != nil {
						return 0, err
					}
					ms, err := d.elapsedMs(b.evStart, b.evEnd)
					if err != nil {
						return 0, err
					}
					if us := float64(ms) * 1e3 / calls; r > 0 && us < best {
						best = us
					}
				}
				return best, nil
			}
			for _, block := range []int{256, 512} {
				for _, per := range []int{1, 2, 4} {
					grid := b.sms * per
					if block == 512 && per == 4 {
						continue
					}
					us, err := timeGraph(func(i int) error {
						words := []uint64{uint64(bufs[i%sets]), uint64(size / 16), uint64(out)}
						ptrs := []uintptr{uintptr(unsafe.Pointer(&words[0])), uintptr(unsafe.Pointer(&words[1])), uintptr(unsafe.Pointer(&words[2]))}
						err := d.launch(*fn, [3]int{grid, 1, 1}, [3]int{block, 1, 1}, 0, [3]int{}, false, st, unsafe.Pointer(&ptrs[0]))
						runtime.KeepAlive(words)
						runtime.KeepAlive(ptrs)
						return err
					})
					if err != nil {
						return err
					}
					t.Logf("READ bytes %d grid %d (%d/SM) block %d: %.2f us/call, %.0f GB/s", size, grid, per, block, us, float64(size)/us/1e3)
				}
			}
			us, err := timeGraph(func(i int) error {
				return d.do("cuMemcpyDtoDAsync_v2", uintptr(dst), uintptr(bufs[i%sets]), uintptr(size/2), st)
			})
			if err != nil {
				return err
			}
			t.Logf("COPY bytes moved %d (DtoD of %d): %.2f us/call, %.0f GB/s", size, size/2, us, float64(size)/us/1e3)
		}
		return d.do("cuStreamSynchronize", st)
	})
	if err != nil {
		t.Fatal(err)
	}
}
