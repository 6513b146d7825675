package cuda

// GPU measurement (no assertion on speed): the read ceiling of the decode
// shapes — how fast SM-issued read-only kernels, or cuMemcpyDtoD, move
// 32 MiB (4096²·2 B) and 30 MiB (2560·6144·2 B) per call, back to back in
// one CUDA graph with the buffers rotated over sets larger than the L2 (as
// the sweep's TimingGraph rotates its weight sets), and 256 MiB per call
// (one buffer, larger than the L2 by itself) for the steady state. Every
// kernel adds up the 32-bit words it reads; the test asserts the sums (one
// launch, then the whole timed graph), never a speed. Skipped without a GPU.

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"unsafe"

	"github.com/tilefit/tilefit/kernel"
)

// readCeilSrc holds the read kernels. Each adds the 32-bit words it reads
// (mod 2³²) and each warp adds its sum into one of 1024 counters
// (out[(block·32 + warp) % 1024]), so no counter is contended.
//
//   - tf_fill writes word i of a buffer as readFillWord(i, seed).
//   - tf_read: one ld.global.nc.v4 per thread and iteration, grid-stride
//     (decode5's kernel).
//   - tf_readb<U, H>: contiguous per-CTA chunks; each thread issues U
//     independent 16-byte loads (stride blockDim) before it uses any; H 1
//     adds the L2::256B prefetch-size hint.
//   - tf_bulk: warp 0 lane 0..P-1 streams the CTA's contiguous chunk by
//     cp.async.bulk (1-D, global → shared, mbarrier complete_tx) into a
//     ring of `stages` slots of `sb` bytes (P pieces per slot); the other
//     warps sum each slot from shared memory and release it.
//   - tf_tma2d: the same ring filled by cp.async.bulk.tensor.2d boxes of a
//     row-major N×K fp16 matrix — gemm_decode's W stream without X or mma:
//     CTA (row block rb, K part ks) of a grid of (N/BN)·KS reads BN rows ×
//     K/KS columns, `sub` boxes of boxk × BN per stage.
//
// pdl 1: griddepcontrol.launch_dependents at entry and griddepcontrol.wait
// before the first load (gemm_decode's PDL 1); pdl 2: the trigger at
// entry and the wait only before the counters are added to (the reads do
// not wait for the kernel before: valid here because nothing writes the
// buffers); pdl 3 (the rings only): the producer issues the ring's first
// fill, then waits, and the consumers wait at entry (gemm_decode's PDL 2,
// whose consumers need X). The launch sets programmatic stream
// serialisation when pdl > 0.
const readCeilSrc = `
typedef unsigned int u32;
typedef unsigned long long u64;

__device__ __forceinline__ u32 fill_word(u32 i, u32 seed) {
  u32 x = i * 0x9E3779B1u + seed;
  x ^= x >> 15; x *= 0x2C1B3C6Du; x ^= x >> 12;
  return x;
}

extern "C" __global__ void tf_fill(u32* p, u64 n, u32 seed) {
  for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x)
    p[i] = fill_word((u32)i, seed);
}

__device__ __forceinline__ u64 min64(u64 a, u64 b) { return a < b ? a : b; }
__device__ __forceinline__ u32 min32(u32 a, u32 b) { return a < b ? a : b; }

__device__ __forceinline__ void pdl_entry(int pdl) {
  if (pdl > 0) asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  if (pdl == 1) asm volatile("griddepcontrol.wait;" ::: "memory");
}

__device__ __forceinline__ void put_sum(u32 s, u32* out, int pdl) {
  for (int o = 16; o; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
  if (pdl >= 2) asm volatile("griddepcontrol.wait;" ::: "memory");
  if ((threadIdx.x & 31) == 0) atomicAdd(out + ((blockIdx.x * 32u + (threadIdx.x >> 5)) & 1023u), s);
}

__device__ __forceinline__ u32 add4(uint4 v) { return v.x + v.y + v.z + v.w; }

template <int H>
__device__ __forceinline__ uint4 ldnc(const uint4* p) {
  uint4 v;
  if (H == 1)
    asm("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  else
    asm("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  return v;
}

extern "C" __global__ void __launch_bounds__(1024) tf_read(const uint4* __restrict__ p, u64 n16, u32* out, int pdl) {
  pdl_entry(pdl);
  u32 s = 0;
  u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  const u64 st = (u64)gridDim.x * blockDim.x;
  #pragma unroll 8
  for (; i < n16; i += st) s += add4(ldnc<0>(p + i));
  put_sum(s, out, pdl);
}

template <int U, int H>
__device__ __forceinline__ void readb(const uint4* __restrict__ p, u64 n16, u32* out, int pdl) {
  pdl_entry(pdl);
  const u64 per = (n16 + gridDim.x - 1) / gridDim.x;
  const u64 beg = (u64)blockIdx.x * per, end = min64(n16, beg + per);
  const u32 bd = blockDim.x;
  u32 s = 0;
  u64 i = beg + threadIdx.x;
  for (; i + (u64)(U - 1) * bd < end; i += (u64)U * bd) {
    uint4 v[U];
    #pragma unroll
    for (int u = 0; u < U; u++) v[u] = ldnc<H>(p + i + (u64)u * bd);
    #pragma unroll
    for (int u = 0; u < U; u++) s += add4(v[u]);
  }
  for (; i < end; i += bd) s += add4(ldnc<H>(p + i));
  put_sum(s, out, pdl);
}

extern "C" __global__ void __launch_bounds__(1024) tf_readb4(const uint4* __restrict__ p, u64 n16, u32* out, int pdl) { readb<4, 0>(p, n16, out, pdl); }
extern "C" __global__ void __launch_bounds__(1024) tf_readb8(const uint4* __restrict__ p, u64 n16, u32* out, int pdl) { readb<8, 0>(p, n16, out, pdl); }
extern "C" __global__ void __launch_bounds__(1024) tf_readb4h(const uint4* __restrict__ p, u64 n16, u32* out, int pdl) { readb<4, 1>(p, n16, out, pdl); }
extern "C" __global__ void __launch_bounds__(1024) tf_readb8h(const uint4* __restrict__ p, u64 n16, u32* out, int pdl) { readb<8, 1>(p, n16, out, pdl); }
extern "C" __global__ void __launch_bounds__(512) tf_readb16(const uint4* __restrict__ p, u64 n16, u32* out, int pdl) { readb<16, 0>(p, n16, out, pdl); }

__device__ __forceinline__ u32 smem_u32(const void* p) {
  u32 r;
  asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(r) : "l"(p));
  return r;
}
__device__ __forceinline__ void bar_init(u32 bar, u32 count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void expect_tx(u32 bar, u32 bytes) {
  asm volatile("{ .reg .b64 st; mbarrier.arrive.expect_tx.shared::cta.b64 st, [%0], %1; }" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void arrive(u32 bar) {
  asm volatile("{ .reg .b64 st; mbarrier.arrive.shared::cta.b64 st, [%0]; }" ::"r"(bar) : "memory");
}
__device__ __forceinline__ void wait_parity(u32 bar, u32 par) {
  u32 done;
  do {
    asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                 : "=r"(done) : "r"(bar), "r"(par) : "memory");
  } while (!done);
}
__device__ __forceinline__ void bulk_g2s(u32 dst, const void* src, u32 bytes, u32 bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
               ::"r"(dst), "l"(src), "r"(bytes), "r"(bar) : "memory");
}
struct __align__(64) TMap { u64 v[16]; };
__device__ __forceinline__ void tma2d(u32 dst, const TMap* m, int c0, int c1, u32 bar) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
               ::"r"(dst), "l"((u64)m), "r"(c0), "r"(c1), "r"(bar) : "memory");
}

// ring_entry is pdl_entry for the ring kernels, with pdl 3: the consumers
// wait at entry and the producer (warp 0) once it has issued the ring's
// first fill (gemm_decode's PDL 2 without its X: preload, then wait).
__device__ __forceinline__ void ring_entry(int pdl) {
  if (pdl > 0) asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  if (pdl == 1 || (pdl == 3 && threadIdx.x >= 32)) asm volatile("griddepcontrol.wait;" ::: "memory");
}

// ring_init initialises the ring's barriers (full: one arrive and the
// copies' bytes; empty: one arrive per consumer warp), then enters as
// ring_entry says.
__device__ __forceinline__ void ring_init(u32 bars, int stages, int pdl) {
  if (threadIdx.x == 0) {
    for (int s = 0; s < stages; s++) { bar_init(bars + 8u * s, 1); bar_init(bars + 128u + 8u * s, (u32)(blockDim.x / 32 - 1)); }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  ring_entry(pdl);
}

// ring_slot is the producer's wait before it fills ring stage q: with pdl
// 3 the wait for the kernel before once the first fill is issued, and
// from the second round on the slot's release by the consumers.
__device__ __forceinline__ void ring_slot(u32 bars, int q, int stages, int pdl) {
  if (pdl == 3 && q == stages) asm volatile("griddepcontrol.wait;" ::: "memory");
  if (q >= stages) wait_parity(bars + 128u + 8u * (q % stages), (u32)((q / stages - 1) & 1));
}

// The ring: barriers at smem[0..255] (full[s] at 8s, empty[s] at 128 + 8s,
// stages <= 16), slots from the first 1024-byte boundary after them (the
// kernels ask for 2048 bytes more than the slots), slot stride ss.
__device__ __forceinline__ u32 ring_sum(u32 ring, u32 bars, int Q, int stages, u32 ss, u32 last) {
  const int cw = blockDim.x / 32 - 1, t = threadIdx.x - 32;
  u32 s = 0;
  for (int q = 0; q < Q; q++) {
    const int sl = q % stages;
    wait_parity(bars + 8u * sl, (u32)((q / stages) & 1));
    const u32 bytes = q == Q - 1 ? last : ss;
    const u32 base = ring + (u32)sl * ss;
    for (u32 o = (u32)t * 16u; o < bytes; o += (u32)cw * 512u) {
      uint4 v;
      asm volatile("ld.shared.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "r"(base + o));
      s += add4(v);
    }
    __syncwarp();
    if ((threadIdx.x & 31) == 0) arrive(bars + 128u + 8u * sl);
  }
  return s;
}

extern "C" __global__ void __launch_bounds__(1024) tf_bulk(const unsigned char* __restrict__ p, u64 n16, u32* out, u32 sb, int stages, int pieces, int pdl) {
  extern __shared__ __align__(1024) unsigned char smem[];
  const u32 bars = smem_u32(smem), ring = (bars + 256u + 1023u) & ~1023u;
  const u64 per = (n16 + gridDim.x - 1) / gridDim.x;
  const u64 beg = (u64)blockIdx.x * per, end = min64(n16, beg + per);
  const u64 bytes = end > beg ? (end - beg) * 16 : 0;
  const int Q = (int)((bytes + sb - 1) / sb);
  const u32 last = Q > 0 ? (u32)(bytes - (u64)(Q - 1) * sb) : 0;
  ring_init(bars, stages, pdl);
  u32 s = 0;
  if (threadIdx.x < 32) {
    const int lane = threadIdx.x;
    for (int q = 0; q < Q; q++) {
      const int sl = q % stages;
      ring_slot(bars, q, stages, pdl);
      const u32 b = q == Q - 1 ? last : sb;
      if (lane == 0) expect_tx(bars + 8u * sl, b);
      __syncwarp();
      const u32 pc = ((b / 16 + pieces - 1) / pieces) * 16; // piece bytes, 16-byte multiple
      const u32 o = (u32)lane * pc;
      if (lane < pieces && o < b)
        bulk_g2s(ring + (u32)sl * sb + o, p + beg * 16 + (u64)q * sb + o, min32(pc, b - o), bars + 8u * sl);
    }
  } else {
    s = ring_sum(ring, bars, Q, stages, sb, last);
  }
  put_sum(s, out, pdl);
}

extern "C" __global__ void __launch_bounds__(1024) tf_tma2d(const __grid_constant__ TMap tm, int K, int BN, int boxk, int KS, int sub, int stages, u32* out, int pdl) {
  extern __shared__ __align__(1024) unsigned char smem[];
  const u32 bars = smem_u32(smem), ring = (bars + 256u + 1023u) & ~1023u;
  const int rb = blockIdx.x / KS, ks = blockIdx.x % KS;
  const int n0 = rb * BN, kp = K / KS, kb = ks * kp;
  const int nb = kp / boxk, Q = (nb + sub - 1) / sub;
  const u32 box = (u32)(BN * boxk * 2), ss = (u32)sub * box;
  const u32 last = (u32)(nb - (Q - 1) * sub) * box;
  ring_init(bars, stages, pdl);
  u32 s = 0;
  if (threadIdx.x < 32) {
    const int lane = threadIdx.x;
    if (lane == 0) asm volatile("prefetch.tensormap [%0];" ::"l"((u64)&tm) : "memory");
    for (int q = 0; q < Q; q++) {
      const int sl = q % stages;
      ring_slot(bars, q, stages, pdl);
      const int nbox = sub < nb - q * sub ? sub : nb - q * sub;
      if (lane == 0) expect_tx(bars + 8u * sl, (u32)nbox * box);
      __syncwarp();
      if (lane < nbox) tma2d(ring + (u32)sl * ss + (u32)lane * box, &tm, kb + (q * sub + lane) * boxk, n0, bars + 8u * sl);
    }
  } else {
    s = ring_sum(ring, bars, Q, stages, ss, last);
  }
  put_sum(s, out, pdl);
}
`

// readFillWord is tf_fill's word i under seed.
func readFillWord(i, seed uint32) uint32 {
	x := i*0x9E3779B1 + seed
	x ^= x >> 15
	x *= 0x2C1B3C6D
	x ^= x >> 12
	return x
}

// readFillSum is the sum (mod 2³²) of the first n words tf_fill writes
// under seed.
func readFillSum(n int64, seed uint32) uint32 {
	var s uint32
	for i := int64(0); i < n; i++ {
		s += readFillWord(uint32(i), seed)
	}
	return s
}

// TestReadCeiling logs µs per call and GB/s (and % of copy_gbps) of read
// kernels that keep different amounts in flight per SM — grid-stride
// loads, batched loads into registers, 1-D bulk-copy rings and 2-D TMA
// rings in gemm_decode's W pattern — and of cuMemcpyDtoDAsync, at the
// decode weights' sizes (rotated over 8 sets) and at 256 MiB, for the
// results READMEs (docs/results/h200-decode5, h200-decode6). It asserts
// that every kernel's word sums are right, once and over the whole timed
// graph; it fails only on a wrong sum or a driver or compile error.
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
	var copyGBps float64
	fmt.Sscanf(ceil["copy_gbps"], "%g", &copyGBps)
	t.Logf("copy_gbps %s", ceil["copy_gbps"])
	cubin, log, err := b.nv.compile(readCeilSrc, "read_ceiling.cu", []string{fmt.Sprintf("--gpu-architecture=sm_%d%d", b.ccMajor, b.ccMinor)})
	if err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	sms := b.sms
	const counters = 1024
	err = b.w.do(ctx, func() error {
		d, st := b.drv, b.stream
		mod := new(uintptr)
		if err := d.do("cuModuleLoadData", uintptr(unsafe.Pointer(mod)), uintptr(unsafe.Pointer(&cubin[0]))); err != nil {
			return err
		}
		defer d.call("cuModuleUnload", *mod)
		fns := map[string]uintptr{}
		fn := func(name string) (uintptr, error) {
			if f, ok := fns[name]; ok {
				return f, nil
			}
			f := new(uintptr)
			sym := cString(name)
			if err := d.do("cuModuleGetFunction", uintptr(unsafe.Pointer(f)), *mod, uintptr(unsafe.Pointer(&sym[0]))); err != nil {
				return 0, fmt.Errorf("%s: %w", name, err)
			}
			if err := d.do("cuFuncSetAttribute", *f, funcAttrMaxDynamicSharedSize, 227*1024); err != nil {
				return 0, err
			}
			if err := d.do("cuFuncSetAttribute", *f, funcAttrPreferredCarveout, 100); err != nil {
				return 0, err
			}
			fns[name] = *f
			return *f, nil
		}
		out, err := d.alloc(counters * 4)
		if err != nil {
			return err
		}
		defer d.free(out)
		readOut := func() (uint32, error) {
			buf := make([]byte, counters*4)
			if err := d.dtoh(buf, out); err != nil {
				return 0, err
			}
			var s uint32
			for i := 0; i < counters; i++ {
				s += *(*uint32)(unsafe.Pointer(&buf[4*i]))
			}
			return s, nil
		}
		zeroOut := func() error { return d.do("cuMemsetD32Async", uintptr(out), 0, counters, st) }
		// launch launches f with the kernel arguments args: each a value
		// (a 64-bit pointer or integer, or a 32-bit int in the low half,
		// little-endian) or a tensor map passed by value.
		type arg struct {
			v    uint64
			tmap *TensorMap
		}
		launch := func(f uintptr, grid, block, smem, pdl int, args ...arg) error {
			vals := make([]uint64, len(args))
			ptrs := make([]uintptr, len(args))
			for i, a := range args {
				switch {
				case a.tmap != nil:
					ptrs[i] = uintptr(unsafe.Pointer(&a.tmap[0]))
				default:
					vals[i] = a.v
					ptrs[i] = uintptr(unsafe.Pointer(&vals[i]))
				}
			}
			err := d.launch(f, [3]int{grid, 1, 1}, [3]int{block, 1, 1}, smem, [3]int{}, pdl > 0, st, unsafe.Pointer(&ptrs[0]))
			runtime.KeepAlive(vals)
			runtime.KeepAlive(ptrs)
			runtime.KeepAlive(args)
			return err
		}
		u := func(v uint64) arg { return arg{v: v} }
		i32 := func(v int) arg { return arg{v: uint64(uint32(v))} }
		fill, err := fn("tf_fill")
		if err != nil {
			return err
		}

		type sizeCase struct {
			label      string
			rows, cols int // the buffer as an fp16 matrix (tf_tma2d)
			sets       int
			calls      int
		}
		for _, sc := range []sizeCase{
			{"sq4096_32MiB", 4096, 4096, 8, 64},
			{"Wout_30MiB", 2560, 6144, 8, 64},
			{"one_256MiB", 16384, 8192, 1, 16},
		} {
			size := int64(sc.rows) * int64(sc.cols) * 2
			n16 := size / 16
			bufs := make([]devptr, sc.sets)
			sums := make([]uint32, sc.sets)
			var all uint32
			for i := range bufs {
				if bufs[i], err = d.alloc(size); err != nil {
					return err
				}
				defer d.free(bufs[i])
				seed := uint32(0x1234567 * (i + 1))
				if err := launch(fill, 4*sms, 512, 0, 0, u(uint64(bufs[i])), u(uint64(size/4)), i32(int(seed))); err != nil {
					return err
				}
				sums[i] = readFillSum(size/4, seed)
				all += sums[i] * uint32(sc.calls/sc.sets)
			}
			if err := d.do("cuStreamSynchronize", st); err != nil {
				return err
			}
			timeGraph := func(body func(i int) error) (float64, error) {
				g, exec, err := d.captureGraph(st, sc.calls, body)
				if err != nil {
					return 0, err
				}
				defer d.call("cuGraphDestroy", g)
				defer d.call("cuGraphExecDestroy", exec)
				best := 1e30
				for r := 0; r < 12; r++ {
					if err := d.do("cuEventRecord", uintptr(b.evStart), st); err != nil {
						return 0, err
					}
					if err := d.do("cuGraphLaunch", exec, st); err != nil {
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
					if us := float64(ms) * 1e3 / float64(sc.calls); r > 0 && us < best {
						best = us
					}
				}
				return best, nil
			}
			report := func(what string, us float64) {
				gbps := float64(size) / us / 1e3
				t.Logf("%-13s %-62s %8.2f us/call %5.0f GB/s %5.1f %%copy", sc.label, what, us, gbps, 100*gbps/copyGBps)
			}
			// run checks one launch's sum on set 0, then times the graph
			// and checks the sum of all its launches (12 replays).
			run := func(what string, f uintptr, grid, block, smem, pdl int, args func(buf devptr) []arg) error {
				if err := zeroOut(); err != nil {
					return err
				}
				if err := launch(f, grid, block, smem, pdl, args(bufs[0])...); err != nil {
					return fmt.Errorf("%s: %w", what, err)
				}
				got, err := readOut()
				if err != nil {
					return fmt.Errorf("%s: %w", what, err)
				}
				if got != sums[0] {
					t.Errorf("%s %s: one launch summed %#x, want %#x", sc.label, what, got, sums[0])
				}
				if err := zeroOut(); err != nil {
					return err
				}
				us, err := timeGraph(func(i int) error { return launch(f, grid, block, smem, pdl, args(bufs[i%sc.sets])...) })
				if err != nil {
					return fmt.Errorf("%s: %w", what, err)
				}
				if got, err = readOut(); err != nil {
					return err
				}
				if want := all * 12; got != want {
					t.Errorf("%s %s: 12 graph replays summed %#x, want %#x", sc.label, what, got, want)
				}
				report(what, us)
				return nil
			}
			plain := func(buf devptr, pdl int) []arg {
				return []arg{u(uint64(buf)), u(uint64(n16)), u(uint64(out)), i32(pdl)}
			}

			// Grid-stride and batched register loads.
			type ldCase struct {
				name       string
				per, block int
			}
			lds := []ldCase{{"tf_read", 4, 256}, {"tf_read", 2, 512}}
			for _, k := range []string{"tf_readb4", "tf_readb8", "tf_readb4h", "tf_readb8h"} {
				for _, g := range [][2]int{{1, 512}, {1, 1024}, {2, 256}, {2, 512}, {4, 256}} {
					lds = append(lds, ldCase{k, g[0], g[1]})
				}
			}
			lds = append(lds, ldCase{"tf_readb16", 1, 512}, ldCase{"tf_readb16", 2, 256})
			for _, c := range lds {
				f, err := fn(c.name)
				if err != nil {
					return err
				}
				for _, pdl := range []int{0, 1, 2} {
					what := fmt.Sprintf("%s %dx%d pdl%d", c.name, c.per*sms, c.block, pdl)
					if err := run(what, f, c.per*sms, c.block, 0, pdl, func(buf devptr) []arg { return plain(buf, pdl) }); err != nil {
						return err
					}
				}
			}

			// 1-D bulk rings: (CTAs per SM, consumer warps, slot bytes,
			// stages, copies per slot).
			bulk, err := fn("tf_bulk")
			if err != nil {
				return err
			}
			for _, c := range [][5]int{
				{1, 8, 16 << 10, 8, 1}, {1, 8, 32 << 10, 4, 1}, {1, 8, 32 << 10, 6, 1}, {1, 8, 32 << 10, 6, 4},
				{1, 8, 16 << 10, 12, 1}, {1, 16, 32 << 10, 6, 1}, {2, 4, 16 << 10, 6, 1}, {2, 8, 32 << 10, 3, 1}, {2, 4, 8 << 10, 12, 1},
			} {
				for _, pdl := range []int{0, 1, 2, 3} {
					what := fmt.Sprintf("tf_bulk %dx%dw slot %dK x%d p%d pdl%d", c[0]*sms, c[1], c[2]>>10, c[3], c[4], pdl)
					smem := 2048 + c[2]*c[3]
					err := run(what, bulk, c[0]*sms, 32*(c[1]+1), smem, pdl, func(buf devptr) []arg {
						return []arg{u(uint64(buf)), u(uint64(n16)), u(uint64(out)), i32(c[2]), i32(c[3]), i32(c[4]), i32(pdl)}
					})
					if err != nil {
						return err
					}
				}
			}

			// 2-D TMA rings over the buffer as an fp16 rows × cols matrix
			// (gemm_decode's W stream): (BN, KS, boxk, swizzle, sub,
			// stages, L2 promotion, consumer warps).
			tma, err := fn("tf_tma2d")
			if err != nil {
				return err
			}
			var tcs [][8]int
			switch sc.cols {
			case 4096:
				tcs = [][8]int{
					{32, 1, 64, 3, 2, 16, 2, 8},  // gemm_decode 32_8.ksplit16.kw4.tk128.stages16's W: 128 CTAs, 8 KiB stages
					{32, 1, 64, 3, 4, 8, 2, 8},   // 16 KiB stages
					{32, 1, 256, 0, 1, 12, 2, 8}, // 512-byte box rows, unswizzled
					{32, 1, 256, 0, 2, 6, 3, 8},
					{64, 2, 64, 3, 2, 8, 2, 8},   // 128 CTAs, 64 rows
					{128, 4, 64, 3, 1, 12, 2, 8}, // 128 CTAs, 128 rows × 1024 k
					{128, 4, 256, 0, 1, 3, 2, 8}, // 64 KiB boxes of 128 rows × 512 B
					{16, 1, 64, 3, 4, 8, 2, 4},   // 256 CTAs (2 per SM), 8 KiB stages
					{16, 1, 256, 0, 1, 12, 2, 4}, // 256 CTAs, 8 KiB boxes of 512-byte rows
					{8, 1, 256, 0, 2, 6, 2, 4},   // 512 CTAs
				}
			case 6144:
				tcs = [][8]int{
					{40, 2, 64, 3, 2, 8, 2, 8},  // gemm_decode 40_10.ksplit24.kw2.kc2.tk128.stages8's W: 128 CTAs
					{40, 2, 64, 3, 2, 16, 2, 8}, // deeper
					{40, 2, 256, 0, 1, 10, 2, 8},
					{20, 1, 256, 0, 1, 12, 2, 8}, // 128 CTAs, 20 rows × all of K
					{80, 4, 64, 3, 2, 8, 2, 8},
					{10, 1, 256, 0, 2, 8, 2, 4}, // 256 CTAs
				}
			default:
				tcs = [][8]int{
					{128, 1, 64, 3, 1, 12, 2, 8},
					{128, 1, 256, 0, 1, 3, 2, 8},
					{32, 1, 64, 3, 2, 16, 2, 8},
				}
			}
			for _, c := range tcs {
				bn, ks, boxk, swz, sub, stages, lp, cw := c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]
				grid := sc.rows / bn * ks
				box := bn * boxk * 2
				smem := 2048 + sub*box*stages
				maps := make([]*TensorMap, sc.sets)
				idx := map[devptr]int{}
				for i, buf := range bufs {
					m, err := d.encodeTensorMap(&kernel.TensorMap{Buffer: "W", DType: kernel.F16, Dims: []int64{int64(sc.cols), int64(sc.rows)},
						Strides: []int64{int64(sc.cols) * 2}, Box: []int{boxk, bn}, Swizzle: swz, L2Promotion: lp}, buf)
					if err != nil {
						return err
					}
					maps[i] = &m
					idx[buf] = i
				}
				for _, pdl := range []int{0, 1, 2, 3} {
					what := fmt.Sprintf("tf_tma2d %dx%dw bn%d ks%d box%dx%d sw%d sub%d x%d lp%d pdl%d", grid, cw, bn, ks, boxk, bn, swz, sub, stages, lp, pdl)
					err := run(what, tma, grid, 32*(cw+1), smem, pdl, func(buf devptr) []arg {
						return []arg{{tmap: maps[idx[buf]]}, i32(sc.cols), i32(bn), i32(boxk), i32(ks), i32(sub), i32(stages), u(uint64(out)), i32(pdl)}
					})
					if err != nil {
						return err
					}
				}
			}

			// cuMemcpyDtoD of half the bytes (read + written = size).
			dst, err := d.alloc(size / 2)
			if err != nil {
				return err
			}
			defer d.free(dst)
			us, err := timeGraph(func(i int) error {
				return d.do("cuMemcpyDtoDAsync_v2", uintptr(dst), uintptr(bufs[i%sc.sets]), uintptr(size/2), st)
			})
			if err != nil {
				return err
			}
			report(fmt.Sprintf("cuMemcpyDtoD of %d (read + written = %d)", size/2, size), us)
		}
		return d.do("cuStreamSynchronize", st)
	})
	if err != nil {
		t.Fatal(err)
	}
}
