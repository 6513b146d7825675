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
	backendtest.Run(t, c, kernel.CPUGemmF16())
}

// TestPathsAndParams checks bitwise identity beyond the default sweep: the
// AVX2 and plain C code paths, every TK, more threads than cores.
func TestPathsAndParams(t *testing.T) {
	c := newCPU(t, Options{})
	fam := kernel.CPUGemmF16()
	ctx := context.Background()
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
		refK := load(t, c, fam.Reference, backendtest.Program(fam, ref, f16))
		var ks []backend.Kernel
		for _, v := range vs {
			prog := backendtest.Program(fam, v.p, f16)
			prog.Defines = append(prog.Defines, v.extra...)
			ks = append(ks, load(t, c, v.name, prog))
		}
		for _, s := range []backend.Shape{{M: 37, N: 48, K: 100}, {M: 131, N: 1, K: 320}, {M: 130, N: 300, K: 1030}, {M: 1, N: 70, K: 7}} {
			in := verify.RandomInputs(42, s)
			p, err := c.NewProblem(ctx, s, []backend.InputSet{in}, f16)
			if err != nil {
				t.Fatal(err)
			}
			want, err := p.Run(ctx, refK, 0)
			if err != nil {
				t.Fatal(err)
			}
			if r := verify.Check(in, s, want, f16, 1, 1<<20); r.Err != nil {
				t.Errorf("%v f16=%v reference: %v", s, f16, r.Err)
			}
			for i, k := range ks {
				got, err := p.Run(ctx, k, 0)
				if err != nil {
					t.Errorf("%s %v: %v", vs[i].name, s, err)
					continue
				}
				if m := verify.Bitwise(want, got, s, f16); m != nil {
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
	k, err := c.Load(context.Background(), name, prog, a)
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
	fam := kernel.CPUGemmF16()
	ctx := context.Background()
	ref, _ := fam.ParseTile(fam.Reference)
	s := backend.Shape{M: 100, N: 48, K: 100} // 100 % 64 ≠ 0
	in := verify.RandomInputs(5, s)
	p, err := c.NewProblem(ctx, s, []backend.InputSet{in}, false)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	refK := load(t, c, "ref", backendtest.Program(fam, ref, false))
	want, err := p.Run(ctx, refK, 0)
	if err != nil {
		t.Fatal(err)
	}

	bugs := []struct {
		name, old, new string
		check          func(t *testing.T, r verify.Numeric, m *verify.Mismatch)
	}{
		{
			name: "tail rows unwritten",
			old:  "int64_t mc = j->M - m0 < TM ? j->M - m0 : TM; /* rows of this block */\n\tint64_t nc = N - n0",
			new:  "int64_t mc = j->M - m0 < TM ? 0 : TM; /* rows of this block */\n\tint64_t nc = N - n0",
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
			prog := backendtest.Program(fam, ref, false)
			prog.Source = plant(t, prog.Source, bug.old, bug.new)
			k := load(t, c, bug.name, prog)
			got, err := p.Run(ctx, k, 0)
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			r := verify.Check(in, s, got, false, 1, 256)
			m := verify.Bitwise(want, got, s, false)
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
		src := "#include <stdint.h>\nint tilefit_gemm(const uint16_t *X, const uint16_t *W, void *Y, int64_t M, int64_t N, int64_t K) {\n" +
			"for (int64_t i = 0; i < M*N; i++) ((float*)Y)[i] = 0.0f;\n" + tc.write + "\nreturn 0; }\n"
		k := load(t, c, "oob", backend.Program{Family: "oob", Source: src})
		s := backend.Shape{M: 6, N: 7, K: 3}
		p, err := c.NewProblem(ctx, s, []backend.InputSet{verify.RandomInputs(1, s)}, false)
		if err != nil {
			t.Fatal(err)
		}
		_, err = p.Run(ctx, k, 0)
		var ge *backend.GuardError
		if !errors.As(err, &ge) || ge.Offset != tc.offset {
			t.Errorf("%s: err = %v, want a GuardError at offset %d", tc.write, err, tc.offset)
		}
		p.Close()
	}
}

func TestKernelErrors(t *testing.T) {
	c := newCPU(t, Options{CacheDir: t.TempDir()})
	ctx := context.Background()
	// A non-zero return is an error.
	src := "#include <stdint.h>\nint tilefit_gemm(const uint16_t *X, const uint16_t *W, void *Y, int64_t M, int64_t N, int64_t K) { return 1; }\n"
	k := load(t, c, "fail", backend.Program{Family: "fail", Source: src})
	s := backend.Shape{M: 2, N: 2, K: 2}
	p, err := c.NewProblem(ctx, s, []backend.InputSet{verify.RandomInputs(1, s)}, false)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if _, err := p.Run(ctx, k, 0); err == nil || !strings.Contains(err.Error(), "returned 1") {
		t.Errorf("Run: %v", err)
	}
	if _, err := p.Time(ctx, k, 2, 0); err == nil {
		t.Error("Time: no error")
	}
	// Output type mismatch.
	fam := kernel.CPUGemmF16()
	ref, _ := fam.ParseTile(fam.Reference)
	k16 := load(t, c, "f16", backendtest.Program(fam, ref, true))
	if _, err := p.Run(ctx, k16, 0); err == nil || !strings.Contains(err.Error(), "fp16 output") {
		t.Errorf("fp16 kernel on fp32 problem: %v", err)
	}
	// Missing symbol.
	prog := backend.Program{Family: "nosym", Source: "int other(void) { return 0; }\n"}
	a, err := c.Compile(ctx, prog)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Load(ctx, "nosym", prog, a); err == nil || !strings.Contains(err.Error(), "does not export tilefit_gemm") {
		t.Errorf("Load without symbol: %v", err)
	}
	// Bad set, bad shape.
	if _, err := p.Run(ctx, k, 3); err == nil {
		t.Error("Run on set 3 of 1: no error")
	}
	if _, err := c.NewProblem(ctx, backend.Shape{M: 0, N: 1, K: 1}, nil, false); err == nil {
		t.Error("NewProblem with M 0: no error")
	}
}

func TestCompile(t *testing.T) {
	dir := t.TempDir()
	c := newCPU(t, Options{CacheDir: dir})
	ctx := context.Background()
	fam := kernel.CPUGemmF16()
	p, _ := fam.ParseTile("16_32_1")
	prog := backendtest.Program(fam, p, false)

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
	q.Defines = append(append([]string(nil), prog.Defines...), "OUT_F16=1")
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
	fam := kernel.CPUGemmF16()
	ctx := context.Background()
	ref, _ := fam.ParseTile(fam.Reference)
	s := backend.Shape{M: 40, N: 70, K: 9}
	in := verify.RandomInputs(9, s)
	// Scale some inputs down so that outputs reach fp16's subnormal range.
	for i := 0; i < len(in.X)/2; i++ {
		in.X[i] = float16.Fromfloat32(float16.Frombits(in.X[i]).Float32() / 4096).Bits()
	}
	p32, err := c.NewProblem(ctx, s, []backend.InputSet{in}, false)
	if err != nil {
		t.Fatal(err)
	}
	defer p32.Close()
	p16, err := c.NewProblem(ctx, s, []backend.InputSet{in}, true)
	if err != nil {
		t.Fatal(err)
	}
	defer p16.Close()
	for _, extra := range [][]string{nil, {"TILEFIT_NO_AVX512=1"}, {"TILEFIT_SCALAR=1"}} {
		prog32, prog16 := backendtest.Program(fam, ref, false), backendtest.Program(fam, ref, true)
		prog32.Defines = append(prog32.Defines, extra...)
		prog16.Defines = append(prog16.Defines, extra...)
		y32, err := p32.Run(ctx, load(t, c, "f32", prog32), 0)
		if err != nil {
			t.Fatal(err)
		}
		y16, err := p16.Run(ctx, load(t, c, "f16", prog16), 0)
		if err != nil {
			t.Fatal(err)
		}
		want := make([]byte, len(y16))
		subnormals := 0
		for i, v := range verify.DecodeOutput(y32, false) {
			h := float16.Fromfloat32(v)
			binary.LittleEndian.PutUint16(want[2*i:], h.Bits())
			if h.Bits()&0x7c00 == 0 && h.Bits()&0x3ff != 0 {
				subnormals++
			}
		}
		if m := verify.Bitwise(want, y16, s, true); m != nil {
			t.Errorf("%v: fp16 output is not the fp32 output rounded to nearest even: %s", extra, m)
		}
		if subnormals == 0 {
			t.Errorf("no fp16 subnormal outputs exercised")
		}
	}
}
