package cuda

// GPU tests of the Hopper family gemm_wgmma (builtin/src/cuda/gemm_wgmma.cu),
// run outside the tool's sweep: compile a few tiles with NVRTC for sm_90a,
// encode their tensor maps, launch them through the driver, compare their
// outputs bitwise with the mma.sync family's reference tile (and count the
// elements where cuBLAS differs), check them against the float64 reference,
// compare rows across M (batch invariance), and time them against cuBLAS.
//
// Skipped without a GPU, and without sm_90 (wgmma needs sm_90a).
//
// Environment:
//   TILEFIT_WGMMA_TILES  gemm_wgmma tile names, space-separated (default: a few)
//   TILEFIT_WGMMA_F16    1: fp16 output instead of fp32
//   TILEFIT_WGMMA_WATCHDOG 1: compile with WATCHDOG=1 (a stuck barrier wait traps)
//   TILEFIT_OUT          folder for logs, CUBINs and the results table
//   TILEFIT_HOPPER_TIME  1: TestHopperTime runs (8192³ and the strata shapes)
//   TILEFIT_HOPPER_M     M values of the strata timing (default 1983,2048)
//   TILEFIT_HOPPER_CASE  NAME:N:K:M: TestHopperCheck runs this one case only

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/x448/float16"

	"github.com/tilefit/tilefit/builtin"
	"github.com/tilefit/tilefit/kernel"
	"github.com/tilefit/tilefit/verify"
)

var defaultWgmmaTiles = []string{"128_128_2", "128_256_2", "256_128_2"}

func wgmmaTiles() []string {
	if s := strings.TrimSpace(os.Getenv("TILEFIT_WGMMA_TILES")); s != "" {
		return strings.Fields(s)
	}
	return defaultWgmmaTiles
}

func hopperF16() bool { return os.Getenv("TILEFIT_WGMMA_F16") == "1" }

// hopperLog writes lines to t.Log and, when TILEFIT_OUT is set, appends
// them to TILEFIT_OUT/name (synced, so a hang or crash keeps what came
// before it).
type hopperLog struct {
	t *testing.T
	f *os.File
}

func newHopperLog(t *testing.T, name string) *hopperLog {
	l := &hopperLog{t: t}
	if dir := os.Getenv("TILEFIT_OUT"); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err == nil {
			l.f, _ = os.OpenFile(filepath.Join(dir, name), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		}
	}
	t.Cleanup(func() {
		if l.f != nil {
			l.f.Close()
		}
	})
	return l
}

func (l *hopperLog) printf(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	l.t.Log(s)
	if l.f != nil {
		fmt.Fprintln(l.f, s)
		l.f.Sync()
	}
}

func hopperBackend(t *testing.T) *Backend {
	b := testBackend(t)
	if b.ccMajor != 9 {
		t.Skipf("gemm_wgmma needs sm_90a; the device is sm_%d%d", b.ccMajor, b.ccMinor)
	}
	return b
}

// A wgmmaKernel is one compiled and loaded gemm_wgmma tile.
type wgmmaKernel struct {
	name        string
	p           kernel.Params
	f16         bool
	mod, fn     uintptr
	regs, local int
	log         string
}

// compileWgmma compiles tile (with ptxas -v where NVRTC accepts it), writes
// its CUBIN and log under TILEFIT_OUT, and loads it.
func compileWgmma(ctx context.Context, b *Backend, tile string, f16 bool) (*wgmmaKernel, error) {
	fam := builtin.CUDAGemmWgmma()
	p, err := fam.ParseTile(tile)
	if err != nil {
		return nil, err
	}
	base, err := b.baseOptions()
	if err != nil {
		return nil, err
	}
	opts := append([]string{}, base...)
	for _, d := range kernel.Defines(p) {
		opts = append(opts, "-D"+d)
	}
	ydt := kernel.F32
	if f16 {
		ydt = kernel.F16
	}
	opts = append(opts, fmt.Sprintf("-DY_DTYPE=%d", int(ydt)))
	if os.Getenv("TILEFIT_WGMMA_WATCHDOG") == "1" {
		opts = append(opts, "-DWATCHDOG=1")
	}
	cubin, log, err := b.nv.compile(fam.Source, fam.SourceFile, append(opts, "--ptxas-options=-v"))
	var ne *nvrtcError
	if errors.As(err, &ne) && ne.Code == nvrtcInvalidOption {
		cubin, log, err = b.nv.compile(fam.Source, fam.SourceFile, opts)
	}
	if dir := os.Getenv("TILEFIT_OUT"); dir != "" {
		_ = os.WriteFile(filepath.Join(dir, "ptxas-"+tile+".log"), []byte(log), 0o644)
		if err == nil {
			_ = os.WriteFile(filepath.Join(dir, tile+".cubin"), cubin, 0o644)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("compile %s: %w\n%s", tile, err, log)
	}
	k := &wgmmaKernel{name: tile, p: p, f16: f16, log: log}
	smem := builtin.WgmmaSharedBytes(p)
	err = b.w.do(ctx, func() error {
		d := b.drv
		mod := new(uintptr)
		if err := d.do("cuModuleLoadData", uintptr(unsafe.Pointer(mod)), uintptr(unsafe.Pointer(&cubin[0]))); err != nil {
			return err
		}
		k.mod = *mod
		fn := new(uintptr)
		sym := cString(builtin.WgmmaEntry)
		if err := d.do("cuModuleGetFunction", uintptr(unsafe.Pointer(fn)), k.mod, uintptr(unsafe.Pointer(&sym[0]))); err != nil {
			return err
		}
		k.fn = *fn
		if err := d.do("cuFuncSetAttribute", k.fn, funcAttrMaxDynamicSharedSize, uintptr(smem)); err != nil {
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
		return nil, fmt.Errorf("load %s: %w", tile, err)
	}
	return k, nil
}

// compileAll compiles the tiles of TILEFIT_WGMMA_TILES concurrently and
// loads them; a tile that fails is logged and left out (the test fails).
func compileAll(ctx context.Context, t *testing.T, b *Backend, lg *hopperLog, f16 bool) []*wgmmaKernel {
	tiles := wgmmaTiles()
	ks := make([]*wgmmaKernel, len(tiles))
	errs := make([]error, len(tiles))
	var wg sync.WaitGroup
	for i, tile := range tiles {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ks[i], errs[i] = compileWgmma(ctx, b, tile, f16)
		}()
	}
	wg.Wait()
	var out []*wgmmaKernel
	for i, k := range ks {
		if errs[i] != nil {
			t.Errorf("%v", errs[i])
			lg.printf("tile %s: COMPILE FAILED: %v", tiles[i], errs[i])
			continue
		}
		lg.printf("tile %s f16=%v: regs %d local %d smem %d; ptxas: %s", k.name, f16, k.regs, k.local, builtin.WgmmaSharedBytes(k.p), ptxasSummary(k.log))
		out = append(out, k)
	}
	return out
}

// ptxasSummary picks the lines of a ptxas -v log worth keeping: registers,
// spills, and warnings (setmaxnreg ignored, wgmma serialised).
func ptxasSummary(log string) string {
	var keep []string
	for _, l := range strings.Split(log, "\n") {
		l = strings.TrimSpace(l)
		if strings.Contains(l, "registers") || strings.Contains(l, "spill") || strings.Contains(strings.ToLower(l), "warning") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, " | ")
}

// wgmmaArgs is one launch's kernel parameters: two tensor maps (in a
// 64-byte-aligned buffer), Y, and M, N, K as int64.
type wgmmaArgs struct {
	buf                 []uint64
	y                   devptr
	m, n, k             int64
	ptrs                [6]uintptr
	grid, block, shared int
}

func newWgmmaArgs(d *driver, sms int, p kernel.Params, x, w, y devptr, m, n, k int) (*wgmmaArgs, error) {
	pl, err := builtin.CUDAGemmWgmma().Plan(p, kernel.Dims{"M": m, "N": n, "K": k})
	if err != nil {
		return nil, err
	}
	l := pl.Launches[0]
	if l.Args[0].Kind != kernel.ArgTensorMap || l.Args[1].Kind != kernel.ArgTensorMap {
		return nil, fmt.Errorf("plan args %+v", l.Args)
	}
	xm, wm := l.Args[0].Map, l.Args[1].Map
	tx, err := d.encodeTensorMap(xm, x)
	if err != nil {
		return nil, err
	}
	tw, err := d.encodeTensorMap(wm, w)
	if err != nil {
		return nil, err
	}
	a := &wgmmaArgs{buf: make([]uint64, 2*len(tx)+8), y: y, m: int64(m), n: int64(n), k: int64(k),
		grid: l.Grid[0], block: l.Block[0], shared: l.Shared}
	if a.grid > sms && p["GRID"] != 0 {
		a.grid = sms
	}
	off := (64 - int(uintptr(unsafe.Pointer(&a.buf[0]))%64)) % 64 / 8
	copy(a.buf[off:], tx[:])
	copy(a.buf[off+len(tx):], tw[:])
	a.ptrs = [6]uintptr{
		uintptr(unsafe.Pointer(&a.buf[off])), uintptr(unsafe.Pointer(&a.buf[off+len(tx)])),
		uintptr(unsafe.Pointer(&a.y)), uintptr(unsafe.Pointer(&a.m)), uintptr(unsafe.Pointer(&a.n)), uintptr(unsafe.Pointer(&a.k)),
	}
	return a, nil
}

// launchWgmma enqueues one launch of k (device thread).
func launchWgmma(b *Backend, k *wgmmaKernel, a *wgmmaArgs) error {
	err := b.drv.do("cuLaunchKernel", k.fn, uintptr(a.grid), 1, 1, uintptr(a.block), 1, 1, uintptr(a.shared), b.stream,
		uintptr(unsafe.Pointer(&a.ptrs[0])), 0)
	runtime.KeepAlive(a)
	return err
}

// hbuf is one problem's device buffers: X (M×K), W (N×K) and an output of
// M×N elements between guards of hopperGuard bytes.
type hbuf struct {
	x, w, y devptr
	m, n, k int
	esize   int
	in      [][]byte // X, W (fp16 bytes)
}

const hopperGuard = 4096

func (h *hbuf) outBytes() int64 { return int64(h.m) * int64(h.n) * int64(h.esize) }
func (h *hbuf) yStart() devptr  { return h.y + hopperGuard }

// hopperInputs draws X (m×k) and W (n×k) as the operator does (uniform in
// [-1, 1), rounded to fp16, never zero), in parallel chunks for big shapes.
func hopperInputs(seed uint64, m, n, k int) [][]byte {
	if int64(m)*int64(k)+int64(n)*int64(k) < 1<<22 {
		return builtin.GemmF16().GenInputs(seed, dims(m, n, k))
	}
	fill := func(v []byte, s uint64) {
		const chunk = 1 << 20
		var wg sync.WaitGroup
		for c := 0; c*chunk < len(v)/2; c++ {
			wg.Add(1)
			go func(c int) {
				defer wg.Done()
				r := rand.New(rand.NewPCG(s, uint64(c)))
				end := min((c+1)*chunk, len(v)/2)
				for i := c * chunk; i < end; i++ {
					for {
						h := float16.Fromfloat32(float32(2*r.Float64() - 1)).Bits()
						if h&0x7fff != 0 {
							binary.LittleEndian.PutUint16(v[2*i:], h)
							break
						}
					}
				}
			}(c)
		}
		wg.Wait()
	}
	x, w := make([]byte, 2*m*k), make([]byte, 2*n*k)
	fill(x, seed)
	fill(w, seed+1)
	return [][]byte{x, w}
}

func newHbuf(ctx context.Context, b *Backend, seed uint64, m, n, k int, f16 bool) (*hbuf, error) {
	h := &hbuf{m: m, n: n, k: k, esize: 4, in: hopperInputs(seed, m, n, k)}
	if f16 {
		h.esize = 2
	}
	err := b.w.do(ctx, func() error {
		d := b.drv
		var err error
		if h.x, err = d.alloc(int64(m*k) * 2); err != nil {
			return err
		}
		if h.w, err = d.alloc(int64(n*k) * 2); err != nil {
			return err
		}
		if h.y, err = d.alloc(h.outBytes() + 2*hopperGuard); err != nil {
			return err
		}
		if err := htod(d, h.x, h.in[0]); err != nil {
			return err
		}
		return htod(d, h.w, h.in[1])
	})
	return h, err
}

func (h *hbuf) free(b *Backend) {
	_ = b.w.do(context.Background(), func() error {
		return errors.Join(b.drv.free(h.x), b.drv.free(h.w), b.drv.free(h.y))
	})
}

// run poisons the output and its guards with 0xFF, runs launch for M = m
// (a prefix of the rows), waits and returns the first m rows; a guard byte
// changed is an error.
func (h *hbuf) run(ctx context.Context, b *Backend, m int, launch func() error) ([]byte, error) {
	size := h.outBytes() + 2*hopperGuard
	host := make([]byte, size)
	err := b.w.do(ctx, func() error {
		d, st := b.drv, b.stream
		if err := d.do("cuMemsetD8Async", uintptr(h.y), 0xFF, uintptr(size), st); err != nil {
			return err
		}
		if err := launch(); err != nil {
			return err
		}
		if err := d.do("cuStreamSynchronize", st); err != nil {
			return err
		}
		return d.dtoh(host, h.y)
	})
	if err != nil {
		return nil, err
	}
	used := int64(m) * int64(h.n) * int64(h.esize)
	for i := int64(0); i < hopperGuard; i++ {
		if host[i] != 0xFF {
			return nil, fmt.Errorf("wrote %d bytes before the output", hopperGuard-i)
		}
	}
	for i := hopperGuard + used; i < size; i++ {
		if host[i] != 0xFF {
			return nil, fmt.Errorf("wrote byte %d past the %d rows' end", i-hopperGuard-used, m)
		}
	}
	return host[hopperGuard : hopperGuard+used], nil
}

// refLaunch launches the gemm_f16 reference tile ref (its Plan for M = m)
// on h's buffers.
func (h *hbuf) refLaunch(b *Backend, ref *Kernel, m int) func() error {
	fam := builtin.CUDAGemmF16()
	p, _ := fam.ParseTile(fam.Reference)
	pl, err := fam.Plan(p, dims(m, h.n, h.k))
	if err != nil {
		return func() error { return err }
	}
	l := pl.Launches[0]
	args := &[6]uint64{uint64(h.x), uint64(h.w), uint64(h.yStart()), uint64(m), uint64(h.n), uint64(h.k)}
	ptrs := &[6]uintptr{}
	for i := range args {
		ptrs[i] = uintptr(unsafe.Pointer(&args[i]))
	}
	return func() error {
		err := b.drv.launch(ref.fns[0], dim3(l.Grid), dim3(l.Block), l.Shared, l.Cluster, l.PDL, b.stream, unsafe.Pointer(&ptrs[0]))
		runtime.KeepAlive(args)
		runtime.KeepAlive(ptrs)
		return err
	}
}

// loadRef compiles and loads gemm_f16's reference tile for Y of type f16
// or f32.
func loadRef(ctx context.Context, t *testing.T, b *Backend, f16 bool) *Kernel {
	fam := builtin.CUDAGemmF16()
	return load(ctx, t, b, fam, gemmOp(f16), dims(128, 128, 64), fam.Reference)
}

func (h *hbuf) blasLaunch(b *Backend, m int) func() error {
	return func() error { return b.handle.gemm(h.x, h.w, h.yStart(), m, h.n, h.k, h.esize == 2) }
}

func (h *hbuf) wgmmaLaunch(b *Backend, k *wgmmaKernel, m int) (func() error, error) {
	var a *wgmmaArgs
	err := b.w.do(context.Background(), func() error {
		var err error
		a, err = newWgmmaArgs(b.drv, b.sms, k.p, h.x, h.w, h.yStart(), m, h.n, h.k)
		return err
	})
	if err != nil {
		return nil, err
	}
	return func() error { return launchWgmma(b, k, a) }, nil
}

// diffCount counts elements whose bits differ between got and want.
func diffCount(got, want []byte, esize int) int {
	n := 0
	for i := 0; i+esize <= len(got) && i+esize <= len(want); i += esize {
		for j := 0; j < esize; j++ {
			if got[i+j] != want[i+j] {
				n++
				break
			}
		}
	}
	return n
}

// diffRows counts rows whose bits differ.
func diffRows(got, want []byte, n, esize int) int {
	rows := 0
	rb := n * esize
	for r := 0; (r+1)*rb <= len(got) && (r+1)*rb <= len(want); r++ {
		if string(got[r*rb:(r+1)*rb]) != string(want[r*rb:(r+1)*rb]) {
			rows++
		}
	}
	return rows
}

// diagnose describes up to 6 differing elements: where they are, what was
// written, and where in the same BM×BN tile of want the written bits occur
// (a layout error shows as a fixed displacement).
func diagnose(got, want []byte, m, n, esize, bm, bn int) string {
	elem := func(b []byte, i int) uint32 {
		if esize == 2 {
			return uint32(binary.LittleEndian.Uint16(b[2*i:]))
		}
		return binary.LittleEndian.Uint32(b[4*i:])
	}
	var out []string
	for i := 0; i < m*n && len(out) < 6; i++ {
		g, w := elem(got, i), elem(want, i)
		if g == w {
			continue
		}
		r, c := i/n, i%n
		where := "nowhere in the tile"
		r0, c0 := r/bm*bm, c/bn*bn
	search:
		for rr := r0; rr < min(r0+bm, m); rr++ {
			for cc := c0; cc < min(c0+bn, n); cc++ {
				if elem(want, rr*n+cc) == g {
					where = fmt.Sprintf("at (%+d, %+d)", rr-r, cc-c)
					break search
				}
			}
		}
		poison := ""
		if (esize == 4 && g == 0xFFFFFFFF) || (esize == 2 && g == 0xFFFF) {
			poison = " (unwritten)"
		}
		out = append(out, fmt.Sprintf("(%d,%d) got %#x%s want %#x; got's bits %s", r, c, g, poison, w, where))
	}
	return strings.Join(out, "; ")
}

// hopperCase is one check shape: inputs for the largest M, runs at every M.
type hopperCase struct {
	name string
	n, k int
	ms   []int
}

var hopperCases = []hopperCase{
	{"hc_read", 324, 10240, []int{2048, 1983, 256, 1}},
	{"Wshd", 2560, 640, []int{1983, 37}},
	{"Walbe", 48, 2560, []int{300, 1}},
	{"Wsg", 1, 2560, []int{130}},
	{"ktail", 200, 72, []int{130}},
	{"Wqkv", 10240, 2560, []int{512}},
}

// TestHopperCheck compiles every tile of TILEFIT_WGMMA_TILES and checks it
// on hopperCases: bitwise against the mma.sync reference tile at every M
// (which also shows the rows do not change with M: the reference's do
// not), within the float64 bound, guards intact; cuBLAS's differing count
// is reported beside it.
func TestHopperCheck(t *testing.T) {
	b := hopperBackend(t)
	ctx := context.Background()
	f16 := hopperF16()
	lg := newHopperLog(t, "check.txt")
	ref := loadRef(ctx, t, b, f16)
	defer ref.Close()
	if _, err := b.blasHandle(ctx); err != nil {
		t.Fatal(err)
	}
	ks := compileAll(ctx, t, b, lg, f16)
	cases := hopperCases
	if spec := os.Getenv("TILEFIT_HOPPER_CASE"); spec != "" {
		// NAME:N:K:M (one run, e.g. for a profiler)
		f := strings.Split(spec, ":")
		if len(f) != 4 {
			t.Fatalf("TILEFIT_HOPPER_CASE=%q: want NAME:N:K:M", spec)
		}
		n, _ := strconv.Atoi(f[1])
		k, _ := strconv.Atoi(f[2])
		m, _ := strconv.Atoi(f[3])
		cases = []hopperCase{{f[0], n, k, []int{m}}}
	}
	for ci, c := range cases {
		mmax := c.ms[0]
		h, err := newHbuf(ctx, b, uint64(100+ci), mmax, c.n, c.k, f16)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range c.ms {
			want, err := h.run(ctx, b, m, h.refLaunch(b, ref, m))
			if err != nil {
				t.Fatalf("%s M %d reference: %v", c.name, m, err)
			}
			want = append([]byte(nil), want...)
			blas, err := h.run(ctx, b, m, h.blasLaunch(b, m))
			if err != nil {
				t.Fatalf("%s M %d cuBLAS: %v", c.name, m, err)
			}
			lg.printf("case %s M %d N %d K %d: cuBLAS differs from mma.sync in %d of %d elements (%d of %d rows)", c.name, m, c.n, c.k, diffCount(blas, want, h.esize), m*c.n, diffRows(blas, want, c.n, h.esize), m)
			for _, k := range ks {
				launch, err := h.wgmmaLaunch(b, k, m)
				if err != nil {
					t.Errorf("%s %s M %d: %v", k.name, c.name, m, err)
					continue
				}
				lg.printf("  run %s ...", k.name)
				got, err := h.run(ctx, b, m, launch)
				if err != nil {
					t.Fatalf("%s %s M %d: %v", k.name, c.name, m, err)
				}
				nd := diffCount(got, want, h.esize)
				num := verify.Check(gemmOp(f16), dims(m, c.n, c.k), h.in, 2, got, 7, 4000)
				status := "BITWISE"
				if nd != 0 {
					status = "DIFFERS"
					t.Errorf("%s %s M %d: %d elements differ from mma.sync: %s", k.name, c.name, m, nd, diagnose(got, want, m, c.n, h.esize, k.p["BM"], k.p["BN"]))
				}
				lg.printf("  %s %s M %d: %s vs mma.sync (%d differ, %d rows), float64 check: max err/bound %.3g, unwritten %d, err %v", k.name, c.name, m, status, nd, diffRows(got, want, c.n, h.esize), num.MaxErr, num.Unwritten, num.Err)
				if num.Err != nil {
					t.Errorf("%s %s M %d: %v", k.name, c.name, m, num.Err)
				}
			}
		}
		h.free(b)
	}
}

func (h *hbuf) mustRun(ctx context.Context, b *Backend, m int, launch func() error) []byte {
	got, err := h.run(ctx, b, m, launch)
	if err != nil {
		return nil
	}
	return append([]byte(nil), got...)
}

// hopperShape is one timed shape with its calls per chunk.
type hopperShape struct {
	name  string
	n, k  int
	calls int
	m     int
}

var hopperStrata = []hopperShape{
	{name: "hc_read", n: 324, k: 10240, calls: 96}, {name: "Wqkv", n: 10240, k: 2560, calls: 37},
	{name: "Wz", n: 6144, k: 2560, calls: 36}, {name: "Wout", n: 2560, k: 6144, calls: 48},
	{name: "Wq", n: 12288, k: 2560, calls: 12}, {name: "Wpv", n: 2560, k: 2560, calls: 1},
	{name: "Wshgu", n: 640, k: 2560, calls: 96}, {name: "Wshd", n: 2560, k: 640, calls: 48},
	{name: "W512", n: 512, k: 2560, calls: 119}, {name: "Wik", n: 128, k: 2560, calls: 12},
	{name: "Walbe", n: 48, k: 2560, calls: 72}, {name: "Wsg", n: 1, k: 2560, calls: 48},
	{name: "hc_up", n: 10240, k: 320, calls: 96},
}

// timeLaunches returns the median µs per launch of each candidate over
// rounds rounds; in each round every candidate runs n back-to-back launches
// between two events, in a rotated order (device thread).
func timeLaunches(b *Backend, launches []func() error, rounds int) ([]float64, error) {
	d, st := b.drv, b.stream
	once := func(f func() error, n int) (float64, error) {
		if err := d.do("cuEventRecord", uintptr(b.evStart), st); err != nil {
			return 0, err
		}
		for i := 0; i < n; i++ {
			if err := f(); err != nil {
				return 0, err
			}
		}
		if err := d.do("cuEventRecord", uintptr(b.evEnd), st); err != nil {
			return 0, err
		}
		if err := d.do("cuEventSynchronize", uintptr(b.evEnd)); err != nil {
			return 0, err
		}
		ms, err := d.elapsedMs(b.evStart, b.evEnd)
		return float64(ms) * 1000 / float64(n), err
	}
	ns := make([]int, len(launches))
	for i, f := range launches {
		if _, err := once(f, 2); err != nil {
			return nil, err
		}
		us, err := once(f, 3)
		if err != nil {
			return nil, err
		}
		ns[i] = int(math.Max(3, math.Min(200, math.Ceil(1500/math.Max(us, 1)))))
	}
	samples := make([][]float64, len(launches))
	for r := 0; r < rounds; r++ {
		for j := range launches {
			i := (j + r) % len(launches)
			us, err := once(launches[i], ns[i])
			if err != nil {
				return nil, err
			}
			samples[i] = append(samples[i], us)
		}
	}
	med := make([]float64, len(launches))
	for i, s := range samples {
		sort.Float64s(s)
		med[i] = s[len(s)/2]
	}
	return med, nil
}

func hopperMs() []int {
	s := os.Getenv("TILEFIT_HOPPER_M")
	if s == "" {
		return []int{1983, 2048}
	}
	var ms []int
	for _, f := range strings.Split(s, ",") {
		if v, err := strconv.Atoi(strings.TrimSpace(f)); err == nil && v > 0 {
			ms = append(ms, v)
		}
	}
	return ms
}

// TestHopperTime times the tiles of TILEFIT_WGMMA_TILES against cuBLAS and
// the mma.sync reference tile on 8192³ and on the strata shapes at
// TILEFIT_HOPPER_M, after checking each tile's output bitwise against the
// reference on the same inputs. Only with TILEFIT_HOPPER_TIME=1.
func TestHopperTime(t *testing.T) {
	if os.Getenv("TILEFIT_HOPPER_TIME") != "1" {
		t.Skip("set TILEFIT_HOPPER_TIME=1 to time gemm_wgmma against cuBLAS")
	}
	b := hopperBackend(t)
	ctx := context.Background()
	f16 := hopperF16()
	lg := newHopperLog(t, "time.txt")
	ref := loadRef(ctx, t, b, f16)
	defer ref.Close()
	if _, err := b.blasHandle(ctx); err != nil {
		t.Fatal(err)
	}
	ks := compileAll(ctx, t, b, lg, f16)
	shapes := []hopperShape{{name: "sq8192", n: 8192, k: 8192, m: 8192, calls: 1}}
	for _, m := range hopperMs() {
		for _, s := range hopperStrata {
			s.m = m
			shapes = append(shapes, s)
		}
	}
	type best struct {
		us   float64
		tile string
	}
	chunk := map[int][2]float64{} // M → {cuBLAS, best wgmma} µs per chunk
	for si, s := range shapes {
		h, err := newHbuf(ctx, b, uint64(500+si), s.m, s.n, s.k, f16)
		if err != nil {
			t.Fatal(err)
		}
		want, err := h.run(ctx, b, s.m, h.refLaunch(b, ref, s.m))
		if err != nil {
			t.Fatalf("%s reference: %v", s.name, err)
		}
		want = append([]byte(nil), want...)
		blasOut := h.mustRun(ctx, b, s.m, h.blasLaunch(b, s.m))
		names := []string{"cublas", "mma.sync-ref"}
		launches := []func() error{h.blasLaunch(b, s.m), h.refLaunch(b, ref, s.m)}
		status := map[string]string{"cublas": fmt.Sprintf("%d differ", diffCount(blasOut, want, h.esize)), "mma.sync-ref": "ref"}
		for _, k := range ks {
			l, err := h.wgmmaLaunch(b, k, s.m)
			if err != nil {
				lg.printf("%s %s: %v", s.name, k.name, err)
				continue
			}
			got, err := h.run(ctx, b, s.m, l)
			if err != nil {
				t.Fatalf("%s %s: %v", s.name, k.name, err)
			}
			nd := diffCount(got, want, h.esize)
			status[k.name] = "BITWISE"
			if nd != 0 {
				status[k.name] = fmt.Sprintf("DIFFERS(%d)", nd)
				t.Errorf("%s %s: %d elements differ from mma.sync: %s", s.name, k.name, nd, diagnose(got, want, s.m, s.n, h.esize, k.p["BM"], k.p["BN"]))
			}
			names = append(names, k.name)
			launches = append(launches, l)
		}
		var med []float64
		err = b.w.do(ctx, func() error {
			var err error
			med, err = timeLaunches(b, launches, 7)
			return err
		})
		if err != nil {
			t.Fatalf("%s: time: %v", s.name, err)
		}
		flop := 2 * float64(s.m) * float64(s.n) * float64(s.k)
		bst := best{math.Inf(1), ""}
		for i, name := range names {
			lg.printf("%-8s M %5d N %5d K %5d  %-28s %9.2f µs  %7.1f TFLOP/s  cublas/this %.3f  %s", s.name, s.m, s.n, s.k, name, med[i], flop/med[i]/1e6, med[0]/med[i], status[name])
			if i >= 2 && med[i] < bst.us && strings.HasPrefix(status[name], "BITWISE") {
				bst = best{med[i], name}
			}
		}
		if s.name != "sq8192" {
			c := chunk[s.m]
			c[0] += float64(s.calls) * med[0]
			c[1] += float64(s.calls) * bst.us
			chunk[s.m] = c
			lg.printf("BEST %-8s M %5d: %s %.2f µs vs cublas %.2f µs (cublas/best %.3f)", s.name, s.m, bst.tile, bst.us, med[0], med[0]/bst.us)
		} else {
			lg.printf("BEST 8192³: %s %.1f TFLOP/s vs cublas %.1f (best/cublas %.3f)", bst.tile, flop/bst.us/1e6, flop/med[0]/1e6, med[0]/bst.us)
		}
		h.free(b)
	}
	ms := make([]int, 0, len(chunk))
	for m := range chunk {
		ms = append(ms, m)
	}
	sort.Ints(ms)
	for _, m := range ms {
		c := chunk[m]
		lg.printf("CHUNK M %d: cublas %.2f ms, best wgmma per shape %.2f ms (cublas/best %.3f)", m, c[0]/1000, c[1]/1000, c[0]/c[1])
	}
}

// wgmmaEpiTiles are staged-epilogue (EPI 1) tiles TestWgmmaThroughPlan
// checks: boxes of 64 (BN 256, 128), 32 (BN 160, 96), 16 (BN 48) and 8 (BN
// 40) columns, cooperative, PINGPONG, MC and KFOLD (fp32 Y and N % 8 != 0
// store directly).
var wgmmaEpiTiles = []string{"128_128_2.pingpong1.epi1", "64_160_2.pingpong1.epi1", "128_256_2.epi1", "128_96_2.epi1", "64_48_1.epi1", "64_40_1.pdl1.epi1",
	"128_128_2.pingpong1.mc1.epi1", "128_48_2.pingpong1.ksplit40.kfold1.epi1"}

// wgmmaPdl2Tiles are PDL 2 tiles (the first stages' weights copied before
// griddepcontrol.wait): the staged epilogue, PINGPONG, one consumer, SWAP
// (the weights are then the first operand) and KFOLD.
var wgmmaPdl2Tiles = []string{"128_160_2.pdl2.epi1", "128_128_2.pingpong1.pdl2", "64_96_1.pdl2", "64_8_1.pdl2.swap1", "128_48_1.ksplit40.kfold1.pdl2"}

// TestWgmmaThroughPlan runs gemm_wgmma the way the tool does (the family's
// Plan with its tensor-map arguments, loaded and run by the backend on a
// Problem) and requires every output bitwise equal to gemm_f16's reference
// tile, for fp32 and fp16 Y, on tails in M, N and K; a K that is not a
// multiple of 8 is refused by the Plan. The staged-epilogue tiles
// (wgmmaEpiTiles) are checked the same way (the KFOLD one too: K of at
// most 2560 makes it one chunk of its class, whose bits are then the
// unsplit class's).
func TestWgmmaThroughPlan(t *testing.T) {
	b := hopperBackend(t)
	ctx := context.Background()
	fam, ref := builtin.CUDAGemmWgmma(), builtin.CUDAGemmF16()
	for _, f16 := range []bool{false, true} {
		op := gemmOp(f16)
		for _, s := range [][3]int{{300, 324, 2560}, {130, 200, 72}, {37, 48, 640}, {1, 1, 2560}, {512, 1280, 256}} {
			d := dims(s[0], s[1], s[2])
			p, sets := newProblem(t, b, op, d, 11)
			rk := load(ctx, t, b, ref, op, d, ref.Reference)
			want, err := runY(p, rk)
			rk.Close()
			if err != nil {
				t.Fatal(err)
			}
			if num := verify.Check(op, d, sets[0], 2, want, 3, 2000); num.Err != nil {
				t.Fatalf("reference %v: %v", s, num.Err)
			}
			for _, tile := range append(append([]string{fam.Reference, "128_256_2", "64_256_2.pingpong1", "64_48_1"}, wgmmaEpiTiles...), wgmmaPdl2Tiles...) {
				k := load(ctx, t, b, fam, op, d, tile)
				got, err := runY(p, k)
				k.Close()
				if err != nil {
					t.Fatalf("%s %v f16=%v: %v", tile, s, f16, err)
				}
				if n := diffCount(got, want, op.Operands[2].DType.Size()); n != 0 {
					t.Errorf("%s %v f16=%v: %d elements differ from %s", tile, s, f16, n, ref.Reference)
				}
			}
			p.Close()
		}
	}
	pr, _ := fam.ParseTile(fam.Reference)
	if _, err := fam.Plan(pr, dims(37, 48, 100)); err == nil || !strings.Contains(err.Error(), "K % 8 == 0") {
		t.Errorf("K 100: %v", err)
	}
}

// TestWgmmaSplitK runs split-K tiles (KSPLIT > 0) through their Plan (the
// partials kernel and the reduce kernel, scratch P): tiles of one chunk
// size are bitwise equal to each other, every output is within the float64
// bound, and the rows computed at a smaller M (X a prefix of the larger
// X) are bitwise equal to the larger M's first rows (batch invariance).
func TestWgmmaSplitK(t *testing.T) {
	b := hopperBackend(t)
	ctx := context.Background()
	fam := builtin.CUDAGemmWgmma()
	lg := newHopperLog(t, "splitk.txt")
	classes := map[string][]string{
		"ksplit16": {"64_48_1.ksplit16", "128_128_2.ksplit16", "64_256_2.pingpong1.ksplit16", "64_48_1.ksplit16.pdl2"},
		"ksplit4":  {"64_48_1.ksplit4", "128_64_2.ksplit4", "128_64_2.ksplit4.pdl2"},
	}
	for _, f16 := range []bool{false, true} {
		op := gemmOp(f16)
		es := op.Operands[2].DType.Size()
		for _, s := range []struct {
			n, k int
			ms   []int
		}{
			{324, 10240, []int{300, 257, 64, 1}}, {48, 2560, []int{200, 1}}, {200, 1000, []int{130, 3}},
		} {
			full := op.GenInputs(21, dims(s.ms[0], s.n, s.k))
			for _, cname := range []string{"ksplit16", "ksplit4"} {
				var base [][]byte // per M: the class's first tile's output
				for ti, tile := range classes[cname] {
					for mi, m := range s.ms {
						d := dims(m, s.n, s.k)
						in := [][]byte{full[0][:2*m*s.k], full[1]}
						p, err := b.NewProblem(ctx, op, d, [][][]byte{in})
						if err != nil {
							t.Fatal(err)
						}
						k := load(ctx, t, b, fam, op, d, tile)
						got, err := runY(p, k)
						k.Close()
						p.Close()
						if err != nil {
							t.Fatalf("%s %v M %d: %v", tile, s, m, err)
						}
						num := verify.Check(op, d, in, 2, got, 5, 3000)
						if num.Err != nil {
							t.Errorf("%s N %d K %d M %d f16=%v: %v", tile, s.n, s.k, m, f16, num.Err)
						}
						if ti == 0 {
							base = append(base, got)
						} else if nd := diffCount(got, base[mi], es); nd != 0 {
							t.Errorf("%s N %d K %d M %d f16=%v: %d elements differ from %s", tile, s.n, s.k, m, f16, nd, classes[cname][0])
						}
						rows := diffRows(got, base[0][:len(got)], s.n, es)
						if rows != 0 {
							t.Errorf("%s N %d K %d M %d f16=%v: %d rows differ from the same rows at M %d", tile, s.n, s.k, m, f16, rows, s.ms[0])
						}
						lg.printf("%s N %d K %d M %d f16=%v (%s): max err/bound %.3g, rows changed vs M %d: %d", tile, s.n, s.k, m, f16, builtin.WgmmaNumerics(mustParse(t, fam, tile)), num.MaxErr, s.ms[0], rows)
					}
				}
			}
		}
	}
}

func mustParse(t *testing.T, fam *kernel.Family, tile string) kernel.Params {
	p, err := fam.ParseTile(tile)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
