package cpu

import (
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/x448/float16"

	"github.com/tilefit/tilefit/backend"
	"github.com/tilefit/tilefit/backend/backendtest"
	"github.com/tilefit/tilefit/builtin"
	"github.com/tilefit/tilefit/kernel"
	"github.com/tilefit/tilefit/verify"
)

// newCPU returns a backend with the default cache (so repeated test runs
// reuse compiled tiles), skipping the test when there is no C compiler.
func newCPU(t testing.TB, o Options) *CPU {
	t.Helper()
	c, err := New(o)
	if err != nil {
		if strings.Contains(err.Error(), "no C compiler") {
			t.Skipf("%v", err)
		}
		t.Fatal(err)
	}
	return c
}

func TestConformance(t *testing.T) {
	c := newCPU(t, Options{})
	backendtest.Run(t, c, builtin.CPUGemmF16(), builtin.OpenBLASGemmF16())
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

// gemmPlan is the CPU gemm_f16 family's launch list (the same for every
// tile and shape).
var gemmPlan = kernel.Plan{Launches: []kernel.Launch{{Entry: "tilefit_gemm_f16",
	Args: kernel.Args(kernel.Operands("X", "W", "Y"), kernel.DimArgs("M", "N", "K"))}}}

// newProblem allocates op on d with one input set drawn from seed.
func newProblem(t testing.TB, c *CPU, op *kernel.Operator, d kernel.Dims, seed uint64) (backend.Problem, [][]byte) {
	t.Helper()
	in := op.GenInputs(seed, d)
	p, err := c.NewProblem(context.Background(), op, d, [][][]byte{in})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p, in
}

// runY runs k and returns output Y (operand 2).
func runY(t testing.TB, p backend.Problem, k backend.Kernel) ([]byte, error) {
	out, err := p.Run(context.Background(), k, 0)
	if err != nil {
		return nil, err
	}
	return out[2], nil
}

// TestPathsAndParams checks bitwise identity beyond the default sweep: the
// AVX2 and plain C code paths, every TK, more threads than cores.
func TestPathsAndParams(t *testing.T) {
	c := newCPU(t, Options{})
	fam := builtin.CPUGemmF16()
	ref, _ := fam.ParseTile(fam.Reference)
	type variant struct {
		name  string
		p     kernel.Params
		extra []string
	}
	vs := []variant{{name: "avx2", p: ref, extra: []string{"TILEFIT_NO_AVX512=1"}}, {name: "scalar", p: ref, extra: []string{"TILEFIT_SCALAR=1"}}}
	for _, tile := range []string{"16_32_4.tk64", "128_256_8", "32_128_1.tk128", "64_64_2.tk512", "128_32_4"} {
		p, err := fam.ParseTile(tile)
		if err != nil {
			t.Fatal(err)
		}
		vs = append(vs, variant{name: tile, p: p})
	}
	vs = append(vs, variant{name: "avx2 16_256_1", p: kernel.Params{"TM": 16, "TN": 256, "THREADS": 1, "TK": 64}, extra: []string{"TILEFIT_NO_AVX512=1"}})
	for _, f16 := range []bool{false, true} {
		op := gemmOp(f16)
		y := op.Operands[2]
		refK := load(t, c, fam.Reference, backendtest.Program(fam, op, ref))
		var ks []backend.Kernel
		for _, v := range vs {
			prog := backendtest.Program(fam, op, v.p)
			prog.Defines = append(prog.Defines, v.extra...)
			ks = append(ks, load(t, c, v.name, prog))
		}
		for _, s := range []kernel.Dims{dims(37, 48, 100), dims(131, 1, 320), dims(130, 300, 1030), dims(1, 70, 7)} {
			p, in := newProblem(t, c, op, s, 42)
			want, err := runY(t, p, refK)
			if err != nil {
				t.Fatal(err)
			}
			if r := verify.Check(op, s, in, 2, want, 1, 1<<20); r.Err != nil {
				t.Errorf("%v f16=%v reference: %v", s, f16, r.Err)
			}
			for i, k := range ks {
				got, err := runY(t, p, k)
				if err != nil {
					t.Errorf("%s %v: %v", vs[i].name, s, err)
					continue
				}
				if m := verify.Bitwise(y, s, want, got); m != nil {
					t.Errorf("%s on %v f16=%v not bitwise identical to %s: %s", vs[i].name, s, f16, fam.Reference, m)
				}
			}
			p.Close()
		}
	}
}

func load(t testing.TB, c *CPU, name string, prog backend.Program) backend.Kernel {
	t.Helper()
	a, err := c.Compile(context.Background(), prog)
	if err != nil {
		t.Fatalf("compile %s: %v", name, err)
	}
	k, err := c.Load(context.Background(), name, a, gemmPlan)
	if err != nil {
		t.Fatalf("load %s: %v", name, err)
	}
	t.Cleanup(func() { k.Close() })
	return k
}

// plant returns the family source with old replaced by new exactly once.
func plant(t *testing.T, src, old, new string) string {
	t.Helper()
	if n := strings.Count(src, old); n != 1 {
		t.Fatalf("planted bug: %q occurs %d times in the source, want 1", old, n)
	}
	return strings.Replace(src, old, new, 1)
}

// TestPlantedBugs edits the kernel source to plant two bugs and checks that
// verification catches each: tail rows of Y never written when M % TM ≠ 0,
// and a K loop that stops one step early.
func TestPlantedBugs(t *testing.T) {
	c := newCPU(t, Options{CacheDir: t.TempDir()})
	fam := builtin.CPUGemmF16()
	ref, _ := fam.ParseTile(fam.Reference)
	s := dims(100, 48, 100) // 100 % 64 ≠ 0
	op := gemmOp(false)
	p, in := newProblem(t, c, op, s, 5)
	refK := load(t, c, "ref", backendtest.Program(fam, op, ref))
	want, err := runY(t, p, refK)
	if err != nil {
		t.Fatal(err)
	}

	bugs := []struct {
		name, old, new string
		check          func(t *testing.T, r verify.Numeric, m *verify.Mismatch)
	}{
		{
			name: "tail rows unwritten",
			old:  "*mc = M - *m0 < tile ? M - *m0 : tile;",
			new:  "*mc = M - *m0 < tile ? 0 : tile;",
			check: func(t *testing.T, r verify.Numeric, m *verify.Mismatch) {
				if r.Unwritten != 36*48 || r.Err == nil || r.First == nil || r.First.Row != 64 {
					t.Errorf("unwritten tail rows not reported: unwritten %d, first %v, err %v", r.Unwritten, r.First, r.Err)
				}
				if m == nil || m.Row != 64 || m.GotBits != 0xffffffff {
					t.Errorf("bitwise: %v", m)
				}
			},
		},
		{
			name: "K loop one step short",
			old:  "int first = k0 == 0, last = k0 + kc >= K;",
			new:  "int first = k0 == 0, last = k0 + kc >= K; if (last) kc--;",
			check: func(t *testing.T, r verify.Numeric, m *verify.Mismatch) {
				if r.Err == nil || r.MaxErr <= 1 || r.Unwritten != 0 {
					t.Errorf("short K loop passed the numeric check: %+v", r)
				}
				if m == nil {
					t.Errorf("short K loop bitwise identical to the reference")
				}
			},
		},
	}
	for _, bug := range bugs {
		t.Run(bug.name, func(t *testing.T) {
			prog := backendtest.Program(fam, op, ref)
			prog.Source = plant(t, prog.Source, bug.old, bug.new)
			k := load(t, c, bug.name, prog)
			got, err := runY(t, p, k)
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			r := verify.Check(op, s, in, 2, got, 1, 256)
			m := verify.Bitwise(op.Operands[2], s, want, got)
			t.Logf("caught: %v; bitwise: %v", r.Err, m)
			bug.check(t, r, m)
		})
	}
}

// TestGuards plants an out-of-bounds write and checks Run reports it.
func TestGuards(t *testing.T) {
	c := newCPU(t, Options{CacheDir: t.TempDir()})
	ctx := context.Background()
	for _, tc := range []struct {
		write  string
		offset int
	}{{"((float*)Y)[-3] = 1.0f;", -3}, {"((float*)Y)[M*N + 5] = 1.0f;", 6*7 + 5}} {
		src := "#include <stdint.h>\nint tilefit_gemm_f16(void **ptrs, const int64_t *args) {\nvoid *Y = ptrs[2]; int64_t M = args[0], N = args[1];\n" +
			"for (int64_t i = 0; i < M*N; i++) ((float*)Y)[i] = 0.0f;\n" + tc.write + "\nreturn 0; }\n"
		k := load(t, c, "oob", backend.Program{Family: "oob", Source: src})
		p, _ := newProblem(t, c, gemmOp(false), dims(6, 7, 3), 1)
		_, err := p.Run(ctx, k, 0)
		var ge *backend.GuardError
		if !errors.As(err, &ge) || ge.Offset != tc.offset || ge.Operand != "Y" {
			t.Errorf("%s: err = %v, want a GuardError at offset %d", tc.write, err, tc.offset)
		}
	}
}

func TestKernelErrors(t *testing.T) {
	c := newCPU(t, Options{CacheDir: t.TempDir()})
	ctx := context.Background()
	// A non-zero return is an error.
	src := "#include <stdint.h>\nint tilefit_gemm_f16(void **ptrs, const int64_t *args) { return 1; }\n"
	k := load(t, c, "fail", backend.Program{Family: "fail", Source: src})
	p, _ := newProblem(t, c, gemmOp(false), dims(2, 2, 2), 1)
	if _, err := p.Run(ctx, k, 0); err == nil || !strings.Contains(err.Error(), "returned 1") {
		t.Errorf("Run: %v", err)
	}
	if _, err := p.Time(ctx, k, 2, 0); err == nil {
		t.Error("Time: no error")
	}
	// A plan naming an operand or dimension the operator lacks.
	bad := kernel.Plan{Launches: []kernel.Launch{{Entry: "tilefit_gemm_f16", Args: kernel.Args(kernel.Operands("X", "Z"), kernel.DimArgs("M"))}}}
	a0, _ := c.Compile(ctx, backend.Program{Family: "fail", Source: src})
	kb, err := c.Load(ctx, "bad", a0, bad)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Run(ctx, kb, 0); err == nil || !strings.Contains(err.Error(), `no operand "Z"`) {
		t.Errorf("plan with an unknown operand: %v", err)
	}
	// Tensor maps are CUDA only; unknown vendor routines are refused.
	tm := kernel.Plan{Launches: []kernel.Launch{{Entry: "tilefit_gemm_f16", Args: []kernel.Arg{{Kind: kernel.ArgTensorMap, Map: &kernel.TensorMap{Buffer: "X"}}}}}}
	if _, err := c.Load(ctx, "tm", a0, tm); err == nil || !strings.Contains(err.Error(), "CUDA only") {
		t.Errorf("tensor map on the CPU: %v", err)
	}
	if _, err := c.Load(ctx, "v", backend.Artifact{}, kernel.Plan{Launches: []kernel.Launch{{Vendor: "fft"}}}); err == nil || !strings.Contains(err.Error(), "unknown vendor routine") {
		t.Errorf("unknown vendor routine: %v", err)
	}
	// Missing symbol.
	prog := backend.Program{Family: "nosym", Source: "int other(void) { return 0; }\n"}
	a, err := c.Compile(ctx, prog)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Load(ctx, "nosym", a, gemmPlan); err == nil || !strings.Contains(err.Error(), "does not export tilefit_gemm_f16") {
		t.Errorf("Load without symbol: %v", err)
	}
	// Bad set, bad shape.
	if _, err := p.Run(ctx, k, 3); err == nil {
		t.Error("Run on set 3 of 1: no error")
	}
	if _, err := c.NewProblem(ctx, gemmOp(false), dims(2, 2, 2), nil); err == nil {
		t.Error("NewProblem without input sets: no error")
	}
	if _, err := c.NewProblem(ctx, gemmOp(false), dims(2, 2, 2), [][][]byte{{make([]byte, 8)}}); err == nil {
		t.Error("NewProblem with one input of two: no error")
	}
}

func TestCompile(t *testing.T) {
	dir := t.TempDir()
	c := newCPU(t, Options{CacheDir: dir})
	ctx := context.Background()
	fam := builtin.CPUGemmF16()
	p, _ := fam.ParseTile("16_32_1")
	prog := backendtest.Program(fam, nil, p)

	// Parallel compiles of one key are safe and agree.
	var wg sync.WaitGroup
	arts := make([]backend.Artifact, 4)
	errs := make([]error, 4)
	for i := range arts {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			arts[i], errs[i] = c.Compile(ctx, prog)
		}(i)
	}
	wg.Wait()
	for i := range arts {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if arts[i].Path != arts[0].Path || arts[i].Key != arts[0].Key {
			t.Errorf("compile %d: %v vs %v", i, arts[i], arts[0])
		}
	}
	if filepath.Dir(arts[0].Path) != dir || !strings.HasSuffix(arts[0].Path, arts[0].Key+".so") {
		t.Errorf("artifact path %s", arts[0].Path)
	}
	a, err := c.Compile(ctx, prog)
	if err != nil || !a.Cached || a.Elapsed != 0 {
		t.Errorf("second compile: cached=%v elapsed=%v err=%v", a.Cached, a.Elapsed, err)
	}
	// Define order does not change the key; a define value does.
	rev := prog
	rev.Defines = append([]string(nil), prog.Defines...)
	for i, j := 0, len(rev.Defines)-1; i < j; i, j = i+1, j-1 {
		rev.Defines[i], rev.Defines[j] = rev.Defines[j], rev.Defines[i]
	}
	if c.Key(rev) != c.Key(prog) {
		t.Error("key depends on define order")
	}
	q := prog
	q.Defines = append(append([]string(nil), prog.Defines...), "Y_DTYPE=1")
	if c.Key(q) == c.Key(prog) {
		t.Error("key ignores a define")
	}
	// No stray temporary files.
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".so") && !strings.HasSuffix(e.Name(), ".log") {
			t.Errorf("stray file in cache: %s", e.Name())
		}
	}
	// A compiler error is a *backend.CompileError with the log.
	_, err = c.Compile(ctx, backend.Program{Family: "broken", Source: "int tilefit_gemm( { syntax error\n", Defines: []string{"TM=1"}})
	var ce *backend.CompileError
	if !errors.As(err, &ce) || !strings.Contains(ce.Log, "error") || ce.Program != "broken[TM=1]" {
		t.Errorf("broken source: %v", err)
	}
	if _, err := c.Compile(ctx, backend.Program{Family: "x", Source: "", Defines: []string{"A B=1"}}); err == nil {
		t.Error("bad define accepted")
	}
}

func TestNoCompiler(t *testing.T) {
	_, err := New(Options{CC: "tilefit-no-such-cc"})
	want := `no C compiler: "tilefit-no-such-cc" not found on PATH; install one (Debian/Ubuntu: apt-get install gcc) or set CC`
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("err = %v, want prefix %s", err, want)
	}
	t.Setenv("PATH", t.TempDir())
	t.Setenv("CC", "")
	_, err = New(Options{})
	want = `no C compiler: "cc" not found on PATH; install one (Debian/Ubuntu: apt-get install gcc) or set CC`
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("empty PATH: err = %v, want prefix %s", err, want)
	}
}

func TestDevice(t *testing.T) {
	c := newCPU(t, Options{})
	d, err := c.Device(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", d)
	if d.Backend != "cpu" || d.Name == "" || d.Arch == "" || d.Compiler == "" || d.Flags == "" || d.Props["cores"] == "" {
		t.Errorf("incomplete device: %+v", d)
	}
	if !strings.Contains(d.Flags, "-ffp-contract=off") {
		t.Errorf("flags %q lack -ffp-contract=off", d.Flags)
	}
	if !strings.HasPrefix(d.UUID, "cpu:") || d.Ordinal != 0 || d.Count != 1 {
		t.Errorf("UUID %q, ordinal %d, count %d; want cpu:HOST, 0, 1", d.UUID, d.Ordinal, d.Count)
	}
	if _, err := New(Options{Device: 1}); err == nil || !strings.Contains(err.Error(), "cpu: no device 1 (the CPU backend has one device, 0)") {
		t.Errorf("device 1: %v", err)
	}
	r, err := c.Reading(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("reading: %s", r)
}

// TestF16Rounding checks that fp16 output is the fp32 result rounded to
// nearest even (float16.Fromfloat32), element by element, for the SIMD and
// the plain C paths — including values in fp16's subnormal range.
func TestF16Rounding(t *testing.T) {
	c := newCPU(t, Options{})
	fam := builtin.CPUGemmF16()
	ctx := context.Background()
	ref, _ := fam.ParseTile(fam.Reference)
	s := dims(40, 70, 9)
	op32, op16 := gemmOp(false), gemmOp(true)
	in := op32.GenInputs(9, s)
	// Scale some inputs down so that outputs reach fp16's subnormal range.
	x := in[0]
	for i := 0; i < len(x)/4; i++ {
		h := binary.LittleEndian.Uint16(x[2*i:])
		binary.LittleEndian.PutUint16(x[2*i:], float16.Fromfloat32(float16.Frombits(h).Float32()/4096).Bits())
	}
	p32, err := c.NewProblem(ctx, op32, s, [][][]byte{in})
	if err != nil {
		t.Fatal(err)
	}
	defer p32.Close()
	p16, err := c.NewProblem(ctx, op16, s, [][][]byte{in})
	if err != nil {
		t.Fatal(err)
	}
	defer p16.Close()
	for _, extra := range [][]string{nil, {"TILEFIT_NO_AVX512=1"}, {"TILEFIT_SCALAR=1"}} {
		prog32, prog16 := backendtest.Program(fam, op32, ref), backendtest.Program(fam, op16, ref)
		prog32.Defines = append(prog32.Defines, extra...)
		prog16.Defines = append(prog16.Defines, extra...)
		y32, err := runY(t, p32, load(t, c, "f32", prog32))
		if err != nil {
			t.Fatal(err)
		}
		y16, err := runY(t, p16, load(t, c, "f16", prog16))
		if err != nil {
			t.Fatal(err)
		}
		want := make([]byte, len(y16))
		subnormals := 0
		for i, v := range verify.Decode(y32, kernel.F32) {
			h := float16.Fromfloat32(float32(v))
			binary.LittleEndian.PutUint16(want[2*i:], h.Bits())
			if h.Bits()&0x7c00 == 0 && h.Bits()&0x3ff != 0 {
				subnormals++
			}
		}
		if m := verify.Bitwise(op16.Operands[2], s, want, y16); m != nil {
			t.Errorf("%v: fp16 output is not the fp32 output rounded to nearest even: %s", extra, m)
		}
		if subnormals == 0 {
			t.Errorf("no fp16 subnormal outputs exercised")
		}
	}
}
