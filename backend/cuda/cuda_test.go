package cuda

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tilefit/tilefit/backend"
	"github.com/tilefit/tilefit/backend/backendtest"
	"github.com/tilefit/tilefit/builtin"
	"github.com/tilefit/tilefit/kernel"
	"github.com/tilefit/tilefit/verify"
)

var (
	shared     *Backend
	sharedErr  error
	sharedOnce sync.Once
)

// testBackend returns one backend shared by the package's tests, or skips
// the test when there is no driver or no device. The CUBIN cache is
// $TILEFIT_CUDA_CACHE, else a folder under the system temp dir.
func testBackend(t testing.TB) *Backend {
	t.Helper()
	sharedOnce.Do(func() {
		dir := os.Getenv("TILEFIT_CUDA_CACHE")
		if dir == "" {
			dir = filepath.Join(os.TempDir(), "tilefit-cuda-test-cache")
		}
		shared, sharedErr = New(Options{CacheDir: dir})
	})
	if sharedErr != nil {
		t.Skipf("no CUDA device: %v", sharedErr)
	}
	return shared
}

// gemmOp is gemm_f16 with fp16 or fp32 output.
func gemmOp(f16 bool) *kernel.Operator {
	op := builtin.GemmF16()
	if f16 {
		op, _ = op.Typed(map[string]kernel.DType{"Y": kernel.F16})
	}
	return op
}

func dims(m, n, k int) kernel.Dims { return kernel.Dims{"M": m, "N": n, "K": k} }

// newProblem allocates op on d with the input sets drawn from seeds.
func newProblem(t testing.TB, b *Backend, op *kernel.Operator, d kernel.Dims, seeds ...uint64) (backend.Problem, [][][]byte) {
	t.Helper()
	var sets [][][]byte
	for _, s := range seeds {
		sets = append(sets, op.GenInputs(s, d))
	}
	p, err := b.NewProblem(context.Background(), op, d, sets)
	if err != nil {
		t.Fatal(err)
	}
	return p, sets
}

// runY runs k on set 0 and returns output Y.
func runY(p backend.Problem, k backend.Kernel) ([]byte, error) {
	out, err := p.Run(context.Background(), k, 0)
	if err != nil {
		return nil, err
	}
	return out[2], nil
}

// loadCuBLAS loads the cuBLAS baseline of gemm_f16 on d.
func loadCuBLAS(t testing.TB, b *Backend, op *kernel.Operator, d kernel.Dims) backend.Kernel {
	t.Helper()
	bl := builtin.CuBLASGemmF16()
	plan, _ := bl.Plan(op, d)
	k, err := b.Load(context.Background(), bl.Name, backend.Artifact{}, plan)
	if err != nil {
		t.Fatalf("cuBLAS: %v", err)
	}
	return k
}

// load compiles and loads tile of fam for op on dims d with extra defines
// (e.g. "FAULT=1").
func load(ctx context.Context, t testing.TB, b *Backend, fam *kernel.Family, op *kernel.Operator, d kernel.Dims, tile string, extra ...string) *Kernel {
	t.Helper()
	p, err := fam.ParseTile(tile)
	if err != nil {
		t.Fatal(err)
	}
	prog := backendtest.Program(fam, op, p)
	prog.Defines = append(prog.Defines, extra...)
	a, err := b.Compile(ctx, prog)
	if err != nil {
		t.Fatalf("compile %s %v: %v", tile, extra, err)
	}
	plan, err := fam.Plan(p, d)
	if err != nil {
		t.Fatal(err)
	}
	k, err := b.Load(ctx, tile, a, plan)
	if err != nil {
		t.Fatalf("load %s: %v", tile, err)
	}
	return k.(*Kernel)
}

func TestDevice(t *testing.T) {
	b := testBackend(t)
	ctx := context.Background()
	d, err := b.Device(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("device %+v", d)
	if d.Backend != "cuda" || d.Name == "" || d.Arch == "" || d.Memory <= 0 || d.Props["sms"] == "" || d.Props["l2_bytes"] == "" {
		t.Errorf("incomplete device description: %+v", d)
	}
	if !strings.HasPrefix(d.Compiler, "nvrtc ") {
		t.Errorf("Compiler = %q, want nvrtc MAJOR.MINOR", d.Compiler)
	}
	if !uuidRE.MatchString(d.UUID) || d.Ordinal != 0 || d.Count < 1 {
		t.Errorf("UUID %q, ordinal %d, count %d: want GPU-8-4-4-4-12 hex digits, 0, at least 1", d.UUID, d.Ordinal, d.Count)
	}
	r, err := b.Reading(ctx)
	if err != nil {
		t.Errorf("Reading: %v", err)
	} else if !strings.HasPrefix(r, "sm_mhz=") || !strings.Contains(r, " temp_c=") {
		t.Errorf("Reading = %q", r)
	}
	t.Logf("reading %s", r)
}

// TestConformance runs the shared suite over the whole default space, for
// fp32 and fp16 output, with cuBLAS as the vendor.
func TestConformance(t *testing.T) {
	b := testBackend(t)
	backendtest.RunWith(t, b, builtin.CUDAGemmF16(), backendtest.Options{MaxTiles: 1000, Baselines: []*kernel.Baseline{builtin.CuBLASGemmF16()}})
}

func TestCompileError(t *testing.T) {
	b := testBackend(t)
	_, err := b.Compile(context.Background(), backend.Program{Family: "broken", Source: "extern \"C\" __global__ void tilefit_gemm_f16() { this is not C++; }"})
	var ce *backend.CompileError
	if !errors.As(err, &ce) {
		t.Fatalf("Compile = %v, want a *backend.CompileError", err)
	}
	if !strings.Contains(ce.Log, "error") {
		t.Errorf("log lacks the compiler's error: %q", ce.Log)
	}
}

// TestCache: a second Compile of the same program is served from the cache
// with the same key; another define gives another key.
func TestCache(t *testing.T) {
	b := testBackend(t)
	ctx := context.Background()
	fam := builtin.CUDAGemmF16()
	p, _ := fam.ParseTile(fam.Reference)
	prog := backendtest.Program(fam, nil, p)
	a1, err := b.Compile(ctx, prog)
	if err != nil {
		t.Fatal(err)
	}
	a2, err := b.Compile(ctx, prog)
	if err != nil {
		t.Fatal(err)
	}
	if !a2.Cached || a1.Key != a2.Key || a1.Path != a2.Path {
		t.Errorf("second compile: cached %v, keys %s / %s", a2.Cached, a1.Key, a2.Key)
	}
	prog.Defines = append(prog.Defines, "FAULT=0")
	a3, err := b.Compile(ctx, prog)
	if err != nil {
		t.Fatal(err)
	}
	if a3.Key == a1.Key {
		t.Errorf("another define kept the key %s", a1.Key)
	}
}

// TestPlantedFaults: a tile that leaves the M tail unwritten and a tile
// that reads shared memory before its copies landed and the barrier fail
// parity; a tile writing past the end of Y trips the guards.
func TestPlantedFaults(t *testing.T) {
	b := testBackend(t)
	ctx := context.Background()
	fam := builtin.CUDAGemmF16()
	s := dims(1983, 324, 320)
	op := gemmOp(false)
	y := op.Operands[2]
	p, sets := newProblem(t, b, op, s, 7)
	defer p.Close()
	good := load(ctx, t, b, fam, op, s, fam.Reference)
	defer good.Close()
	want, err := runY(p, good)
	if err != nil {
		t.Fatal(err)
	}
	if r := verify.Check(op, s, sets[0], 2, want, 1, 4096); r.Err != nil {
		t.Fatalf("reference: %v", r.Err)
	}
	for _, fault := range []struct {
		define, what string
	}{
		{"FAULT=1", "M tail unwritten"},
		{"FAULT=2", "reads a stage being refilled, no cp.async wait or barrier"},
	} {
		k := load(ctx, t, b, fam, op, s, fam.Reference, fault.define)
		got, err := runY(p, k)
		k.Close()
		if err != nil {
			t.Errorf("%s (%s): Run: %v", fault.define, fault.what, err)
			continue
		}
		m := verify.Bitwise(y, s, want, got)
		if m == nil {
			t.Errorf("%s (%s): bitwise identical to the reference: the fault went unseen", fault.define, fault.what)
			continue
		}
		r := verify.Check(op, s, sets[0], 2, got, 1, 4096)
		t.Logf("%s (%s): caught: %s; numeric check: %v (unwritten %d)", fault.define, fault.what, m, r.Err, r.Unwritten)
	}
	k := load(ctx, t, b, fam, op, s, fam.Reference, "FAULT=3")
	defer k.Close()
	_, err = p.Run(ctx, k, 0)
	var ge *backend.GuardError
	if !errors.As(err, &ge) || ge.Operand != "Y" {
		t.Fatalf("FAULT=3 (write past the end): Run = %v, want a *backend.GuardError", err)
	}
	t.Logf("FAULT=3 (write past the end): caught: %v", err)
	// The guards are restored by the next Run: the good kernel passes again.
	if _, err := p.Run(ctx, good, 0); err != nil {
		t.Errorf("after the fault: %v", err)
	}
}

// TestTimingModes: a kernel of a few µs is timed as a graph, a large one
// with events; both give positive, consistent times.
func TestTimingModes(t *testing.T) {
	b := testBackend(t)
	ctx := context.Background()
	fam := builtin.CUDAGemmF16()
	op := gemmOp(false)
	for _, c := range []struct {
		s    kernel.Dims
		want string
	}{
		{dims(64, 48, 256), TimingGraph},
		{dims(2048, 10240, 2560), TimingEvents},
	} {
		k := load(ctx, t, b, fam, op, c.s, "16_64_2")
		defer k.Close()
		p, _ := newProblem(t, b, op, c.s, 1, 2)
		var ts []time.Duration
		for _, n := range []int{1, 8, 8, 3} {
			d, err := p.Time(ctx, k, n, len(ts))
			if err != nil {
				t.Fatalf("%v: Time: %v", c.s, err)
			}
			ts = append(ts, d)
		}
		mode := p.(*Problem).Mode(k)
		t.Logf("%v: mode %s, times %v", c.s, mode, ts)
		if mode != c.want {
			t.Errorf("%v: mode %s, want %s", c.s, mode, c.want)
		}
		for _, d := range ts {
			if d <= 0 {
				t.Errorf("%v: non-positive time %v", c.s, d)
			}
		}
		p.Close()
	}
}

// strataShapes are the 13 (N, K) shapes of the strata workload.
var strataShapes = []struct {
	name string
	n, k int
}{
	{"hc_read", 324, 10240}, {"Wqkv", 10240, 2560}, {"Wz", 6144, 2560}, {"Wout", 2560, 6144},
	{"Wq", 12288, 2560}, {"Wpv", 2560, 2560}, {"Wshgu", 640, 2560}, {"Wshd", 2560, 640},
	{"W512", 512, 2560}, {"Wik", 128, 2560}, {"Walbe", 48, 2560}, {"Wsg", 1, 2560}, {"hc_up", 10240, 320},
}

// TestStrataBitwise runs every tile of the default space on every strata
// shape at M 256 and 1983 (all of 256, 512, 1024, 1983, 2048 when
// TILEFIT_CUDA_FULL=1), fp32 output, and requires every output to be bitwise
// identical to the reference tile's, which must pass the numeric check;
// cuBLAS is checked numerically and its bitwise status is logged.
func TestStrataBitwise(t *testing.T) {
	b := testBackend(t)
	ctx := context.Background()
	fam := builtin.CUDAGemmF16()
	ms := []int{256, 1983}
	if os.Getenv("TILEFIT_CUDA_FULL") != "" {
		ms = []int{256, 512, 1024, 1983, 2048}
	}
	tiles := fam.Tiles()
	start := time.Now()
	op := gemmOp(false)
	arts := backendtest.CompileAll(ctx, t, b, fam, op, tiles)
	t.Logf("compiled %d tiles in %v", len(arts), time.Since(start).Round(time.Millisecond))
	loadTile := func(tile string, d kernel.Dims) backend.Kernel {
		p, _ := fam.ParseTile(tile)
		plan, _ := fam.Plan(p, d)
		k, err := b.Load(ctx, tile, arts[tile], plan)
		if err != nil {
			t.Fatalf("load %s: %v", tile, err)
		}
		return k
	}
	cells, bitwise, vendorBitwise := 0, 0, 0
	for _, sh := range strataShapes {
		for _, m := range ms {
			s := dims(m, sh.n, sh.k)
			p, sets := newProblem(t, b, op, s, uint64(m*100000+sh.n))
			in := sets[0]
			refK := loadTile(fam.Reference, s)
			want, err := runY(p, refK)
			refK.Close()
			if err != nil {
				t.Fatalf("%s M=%d reference: %v", sh.name, m, err)
			}
			if r := verify.Check(op, s, in, 2, want, 1, 2048); r.Err != nil {
				t.Errorf("%s M=%d reference: %v", sh.name, m, r.Err)
			}
			cells++
			for _, tile := range tiles {
				if tile == fam.Reference {
					continue
				}
				k := loadTile(tile, s)
				got, err := runY(p, k)
				k.Close()
				if err != nil {
					t.Errorf("%s M=%d %s: %v", sh.name, m, tile, err)
					continue
				}
				if !bytes.Equal(want, got) {
					t.Errorf("%s M=%d %s not bitwise identical to %s: %s", sh.name, m, tile, fam.Reference, verify.Bitwise(op.Operands[2], s, want, got))
					continue
				}
				bitwise++
			}
			vendor := loadCuBLAS(t, b, op, s)
			got, err := runY(p, vendor)
			if err != nil {
				t.Errorf("%s M=%d cublas: %v", sh.name, m, err)
			} else {
				if r := verify.Check(op, s, in, 2, got, 1, 2048); r.Err != nil {
					t.Errorf("%s M=%d cublas: %v", sh.name, m, r.Err)
				}
				if bytes.Equal(want, got) {
					vendorBitwise++
				}
			}
			p.Close()
		}
	}
	t.Logf("%d cells × %d tiles: %d of %d tile outputs bitwise identical to %s; cublas bitwise in %d of %d cells; %v",
		cells, len(tiles), bitwise, cells*(len(tiles)-1), fam.Reference, vendorBitwise, cells, time.Since(start).Round(time.Millisecond))
}

// TestBench8192 (TILEFIT_CUDA_BENCH=1) times candidate tiles at
// 8192×8192×8192, fp16 in and out, beside cuBLAS, and logs the device's
// ceilings.
func TestBench8192(t *testing.T) {
	if os.Getenv("TILEFIT_CUDA_BENCH") == "" {
		t.Skip("set TILEFIT_CUDA_BENCH=1 to run the 8192³ benchmark")
	}
	b := testBackend(t)
	ctx := context.Background()
	ceil, err := b.Ceilings(ctx)
	if err != nil {
		t.Errorf("Ceilings: %v", err)
	}
	t.Logf("ceilings: %v", ceil)
	fam := builtin.CUDAGemmF16()
	var tiles []string
	for _, base := range []string{"128_128_4", "128_128_8", "128_256_8", "64_256_8"} {
		for _, suf := range []string{"", ".stages3", ".tk64.stages3", ".tk64", ".stages5", ".swz1", ".tk64.swz1", ".swz1.group16"} {
			name := base + suf
			if p, err := fam.ParseTile(name); err == nil && fam.Validate(p) == nil {
				tiles = append(tiles, name)
			}
		}
	}
	if s := os.Getenv("TILEFIT_CUDA_BENCH_TILES"); s != "" {
		tiles = strings.Split(s, ",")
	}
	start := time.Now()
	const n = 8192
	s := dims(n, n, n)
	op := gemmOp(true)
	var ks []backend.Kernel
	for _, tile := range tiles {
		ks = append(ks, load(ctx, t, b, fam, op, s, tile))
	}
	t.Logf("compiled and loaded %d tiles in %v", len(ks), time.Since(start).Round(time.Millisecond))
	p, sets := newProblem(t, b, op, s, 42)
	in := sets[0]
	defer p.Close()
	v := loadCuBLAS(t, b, op, s)
	all := append([]backend.Kernel{v}, ks...)
	flop := 2.0 * n * n * n
	type row struct {
		name      string
		us        float64
		tflops    float64
		regs, smm int
	}
	var rows []row
	for _, k := range all {
		best := time.Duration(1 << 62)
		if _, err := p.Time(ctx, k, 2, 0); err != nil { // warm-up
			t.Fatalf("%s: %v", k.Name(), err)
		}
		for i := 0; i < 3; i++ {
			d, err := p.Time(ctx, k, 5, 0)
			if err != nil {
				t.Fatalf("%s: %v", k.Name(), err)
			}
			best = min(best, d)
		}
		kk := k.(*Kernel)
		regs, _, smem := kk.Resources()
		rows = append(rows, row{k.Name(), float64(best) / 1e3, flop / best.Seconds() / 1e12, regs, smem})
	}
	vendorRow := rows[0]
	sort.Slice(rows[1:], func(i, j int) bool { return rows[1+i].tflops > rows[1+j].tflops })
	var sb strings.Builder
	fmt.Fprintf(&sb, "\n| candidate | µs/call | TFLOP/s | × cuBLAS | regs | smem B |\n|---|---|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&sb, "| %s | %.0f | %.1f | %.2f | %d | %d |\n", r.name, r.us, r.tflops, r.tflops/vendorRow.tflops, r.regs, r.smm)
	}
	t.Log(sb.String())
	best := rows[1]
	t.Logf("best tile %s: %.1f TFLOP/s = %.2f× cuBLAS (%.1f TFLOP/s)", best.name, best.tflops, best.tflops/vendorRow.tflops, vendorRow.tflops)
	// Parity at this size too: the best tile against the reference tile.
	if len(ks) > 0 {
		refK := load(ctx, t, b, fam, op, s, fam.Reference)
		defer refK.Close()
		want, err := runY(p, refK)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range ks {
			got, err := runY(p, k)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(want, got) {
				t.Errorf("8192³: %s not bitwise identical to %s", k.Name(), fam.Reference)
			}
		}
		if r := verify.Check(op, s, in, 2, want, 1, 1024); r.Err != nil {
			t.Errorf("8192³ reference: %v", r.Err)
		}
	}
	for _, k := range ks {
		k.Close()
	}
}

//go:embed testdata/mma_peak.cu
var mmaPeakSource string

// TestMMAPeak (TILEFIT_CUDA_BENCH=1) measures the mma.sync issue ceiling of
// a few warp layouts at 8192³ with no memory traffic (testdata/mma_peak.cu).
func TestMMAPeak(t *testing.T) {
	if os.Getenv("TILEFIT_CUDA_BENCH") == "" {
		t.Skip("set TILEFIT_CUDA_BENCH=1 to run the mma.sync ceiling benchmark")
	}
	b := testBackend(t)
	ctx := context.Background()
	const n = 8192
	s := dims(n, n, n)
	p, err := b.NewProblem(ctx, gemmOp(false), s, [][][]byte{{make([]byte, 2*n*n), make([]byte, 2*n*n)}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for _, c := range []struct{ tm, tn, warps, wm int }{
		{128, 256, 8, 2}, {128, 128, 4, 2}, {128, 128, 8, 4}, {64, 64, 4, 2}, {128, 64, 4, 4},
	} {
		prog := backend.Program{Family: "mma_peak", Source: mmaPeakSource, Defines: []string{
			fmt.Sprintf("TM=%d", c.tm), fmt.Sprintf("TN=%d", c.tn), fmt.Sprintf("WARPS=%d", c.warps), fmt.Sprintf("WM=%d", c.wm), "STAGES=2"}}
		a, err := b.Compile(ctx, prog)
		if err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("mma_peak %d_%d_%d wm%d", c.tm, c.tn, c.warps, c.wm)
		plan := kernel.Plan{Launches: []kernel.Launch{{Entry: "tilefit_gemm_f16",
			Grid: [3]int{(n / c.tm) * (n / c.tn), 1, 1}, Block: [3]int{c.warps * 32, 1, 1},
			Shared: 2 * (c.tm + c.tn) * 32 * 2,
			Args:   kernel.Args(kernel.Operands("X", "W", "Y"), kernel.DimArgs("M", "N", "K"))}}}
		k, err := b.Load(ctx, name, a, plan)
		if err != nil {
			t.Fatal(err)
		}
		best := time.Duration(1 << 62)
		for i := 0; i < 3; i++ {
			d, err := p.Time(ctx, k, 3, 0)
			if err != nil {
				t.Fatal(err)
			}
			best = min(best, d)
		}
		regs, _, _ := k.(*Kernel).Resources()
		t.Logf("%s: %.1f TFLOP/s (%v per call, %d regs)", name, 2.0*n*n*n/best.Seconds()/1e12, best, regs)
		k.Close()
	}
}

// TestDeviceOrdinals opens every CUDA device of the host by its ordinal
// (--device N): each names itself with a distinct UUID and its ordinal, and
// the ordinal past the last is refused with a message that counts them.
func TestDeviceOrdinals(t *testing.T) {
	b := testBackend(t)
	ctx := context.Background()
	d0, err := b.Device(ctx)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{d0.UUID: 0}
	for i := 1; i < d0.Count; i++ {
		bi, err := New(Options{CacheDir: t.TempDir(), Device: i})
		if err != nil {
			t.Fatalf("device %d of %d: %v", i, d0.Count, err)
		}
		di, err := bi.Device(ctx)
		bi.Close()
		if err != nil {
			t.Fatal(err)
		}
		if j, dup := seen[di.UUID]; dup || di.Ordinal != i || di.Count != d0.Count {
			t.Errorf("device %d: %+v (UUID seen as device %d: %v)", i, di, j, dup)
		}
		seen[di.UUID] = i
		t.Logf("device %d: %s %s", i, di.Name, di.UUID)
	}
	_, err = New(Options{CacheDir: t.TempDir(), Device: d0.Count})
	if want := fmt.Sprintf("no CUDA device: ordinal %d of %d devices", d0.Count, d0.Count); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("device %d: %v, want %q", d0.Count, err, want)
	}
}
