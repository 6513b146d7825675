package cuda

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tilefit/tilefit/backend"
	"github.com/tilefit/tilefit/builtin"
	"github.com/tilefit/tilefit/kernel"
	"github.com/tilefit/tilefit/verify"
)

// hostPrelude lets verify.cu compile as host C++: the CUDA qualifiers are
// dropped, TF_HOST selects plain atomics, and launch runs a grid's
// threads one after another.
const hostPrelude = `#include <cstdint>
#include <cstring>
#include <cstdio>
#include <cstdlib>
#include <vector>
#define TF_HOST 1
#define __global__
#define __device__
#define __forceinline__ inline
struct tf_dim3 { unsigned x, y, z; };
static tf_dim3 blockIdx, threadIdx, gridDim, blockDim;
`

// hostMain drives the kernels from stdin commands; each reads its inputs
// from files and writes its output bytes to a file.
const hostMain = `
template <typename F> static void launch(unsigned grid, unsigned block, F f) {
	gridDim.x = grid; blockDim.x = block;
	for (unsigned b = 0; b < grid; b++) for (unsigned t = 0; t < block; t++) { blockIdx.x = b; threadIdx.x = t; f(); }
}
static std::vector<unsigned char> slurp(const char *path) {
	std::vector<unsigned char> v; FILE *f = fopen(path, "rb"); if (!f) { perror(path); exit(2); }
	int c; while ((c = fgetc(f)) != EOF) v.push_back((unsigned char)c); fclose(f); return v;
}
static void spit(const char *path, const void *p, size_t n) { FILE *f = fopen(path, "wb"); fwrite(p, 1, n, f); fclose(f); }
int main() {
	char cmd[32], a[512], b[512], o[512];
	while (scanf("%31s", cmd) == 1) {
		if (!strcmp(cmd, "draw")) {
			unsigned long long n, key; long long dt, kind, mx, lo, hi, pos;
			scanf("%llu %lld %lld %llu %lld %lld %lld %lld %511s", &n, &dt, &kind, &key, &mx, &lo, &hi, &pos, o);
			std::vector<unsigned char> out(n * (dt == 3 ? 4 : dt == 4 ? 1 : 2));
			launch(3, 64, [&] { tf_draw(out.data(), n, dt, kind, key, mx, lo, hi, pos); });
			spit(o, out.data(), out.size());
		} else if (!strcmp(cmd, "diff")) {
			long long es; unsigned long long from;
			scanf("%lld %llu %511s %511s %511s", &es, &from, a, b, o);
			std::vector<unsigned char> x = slurp(a), y = slurp(b);
			unsigned long long first = ~0ULL;
			launch(5, 32, [&] { tf_diff(x.data(), y.data(), x.size() / es, es, from, &first); });
			spit(o, &first, 8);
		} else if (!strcmp(cmd, "rowhash")) {
			unsigned long long rows;
			scanf("%llu %511s %511s", &rows, a, o);
			std::vector<unsigned char> x = slurp(a);
			std::vector<unsigned long long> out(rows);
			launch((rows + 127) / 128, 128, [&] { tf_rowhash(x.data(), rows, x.size() / rows, out.data()); });
			spit(o, out.data(), 8 * rows);
		} else if (!strcmp(cmd, "specials")) {
			long long dt;
			scanf("%lld %511s %511s", &dt, a, o);
			std::vector<unsigned char> x = slurp(a);
			unsigned long long res[4] = {0, 0, ~0ULL, ~0ULL};
			launch(4, 64, [&] { tf_specials(x.data(), x.size() / (dt == 3 ? 4 : 2), dt, res); });
			spit(o, res, 32);
		} else if (!strcmp(cmd, "gather")) {
			long long es;
			scanf("%lld %511s %511s %511s", &es, a, b, o);
			std::vector<unsigned char> x = slurp(a), ix = slurp(b);
			unsigned long long n = ix.size() / 8;
			std::vector<unsigned char> out(n * es);
			launch(3, 64, [&] { tf_gather(x.data(), es, (const unsigned long long *)ix.data(), n, out.data()); });
			spit(o, out.data(), out.size());
		}
	}
	return 0;
}
`

// hostKernels compiles verify.cu as host C++ (skipping the test without a
// C++ compiler) and returns a function that runs one command and returns
// the bytes it wrote.
func hostKernels(t *testing.T) func(cmd string, args ...any) []byte {
	t.Helper()
	cxx, err := exec.LookPath("c++")
	if err != nil {
		t.Skip("no C++ compiler")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "verify_host.cc")
	if err := os.WriteFile(src, []byte(hostPrelude+verifySource+hostMain), 0o644); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "verify_host")
	if out, err := exec.Command(cxx, "-std=c++17", "-O1", "-Wall", "-Wno-unused-function", "-o", exe, src).CombinedOutput(); err != nil {
		t.Fatalf("verify.cu does not compile as host C++: %v\n%s", err, out)
	}
	n := 0
	return func(cmd string, args ...any) []byte {
		t.Helper()
		n++
		out := filepath.Join(dir, fmt.Sprintf("out%d", n))
		line := cmd
		for _, a := range args {
			line += " " + fmt.Sprint(a)
		}
		c := exec.Command(exe)
		c.Stdin = strings.NewReader(line + " " + out + "\n")
		if msg, err := c.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", line, err, msg)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
}

func writeTemp(t *testing.T, b []byte) string {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "in")
	if err != nil {
		t.Fatal(err)
	}
	f.Write(b)
	f.Close()
	return f.Name()
}

// TestVerifySourceOnHost runs verify.cu's kernels on the host (compiled as
// C++, the grid emulated thread by thread) against the Go code they must
// match bit for bit: tf_draw against kernel.Drawn for every kind and type
// (the device then draws the host's inputs), tf_diff, tf_rowhash,
// tf_specials and tf_gather against backend.HostVerifier's functions.
// It runs without a GPU, so the kernels' logic is checked in CI; the
// device tests (TestVerifierOnDevice) check them on the GPU.
func TestVerifySourceOnHost(t *testing.T) {
	run := hostKernels(t)
	for _, dr := range []kernel.Drawn{
		{Draw: kernel.Draw{Kind: kernel.DrawUniform}, DType: kernel.F16, Key: kernel.DrawKey(1, kernel.InputStream(0)), Elems: 50000},
		{Draw: kernel.Draw{Kind: kernel.DrawUniform}, DType: kernel.F32, Key: 12345, Elems: 3000},
		{Draw: kernel.Draw{Kind: kernel.DrawUniform}, DType: kernel.BF16, Key: 999, Elems: 3000},
		{Draw: kernel.Draw{Kind: kernel.DrawUniform}, DType: kernel.I8, Key: 7, Elems: 3000},
		{Draw: kernel.Draw{Kind: kernel.DrawInt, Max: 8}, DType: kernel.F16, Key: 1 << 63, Elems: 3000},
		{Draw: kernel.Draw{Kind: kernel.DrawInt, Max: 2, Lo: -19, Positive: true}, DType: kernel.F16, Key: 5, Elems: 3000},
		{Draw: kernel.Draw{Kind: kernel.DrawInt, Max: 2, Lo: 5}, DType: kernel.F16, Key: 6, Elems: 3000},
		{Draw: kernel.Draw{Kind: kernel.DrawInt, Max: 7}, DType: kernel.I8, Key: 8, Elems: 3000},
		{Draw: kernel.Draw{Kind: kernel.DrawPow2, Lo: -3, Hi: 0}, DType: kernel.F16, Key: 9, Elems: 3000},
	} {
		pos := 0
		if dr.Draw.Positive {
			pos = 1
		}
		got := run("draw", dr.Elems, dr.DType.Code(), int(dr.Draw.Kind), dr.Key, dr.Draw.Max, dr.Draw.Lo, dr.Draw.Hi, pos)
		if want := dr.Bytes(); !bytes.Equal(got, want) {
			t.Errorf("tf_draw %+v differs from kernel.Drawn (first byte %d)", dr, backend.FirstDiff(got, want, 1, 0))
		}
	}
	r := rand.New(rand.NewPCG(3, 4))
	for _, c := range []struct {
		dt         kernel.DType
		rows, cols int
	}{{kernel.F32, 37, 48}, {kernel.F16, 9, 13}, {kernel.F16, 5, 64}, {kernel.BF16, 3, 7}, {kernel.I8, 4, 9}} {
		es := c.dt.Size()
		a := make([]byte, c.rows*c.cols*es)
		for i := range a {
			a[i] = byte(r.Uint32())
		}
		if c.dt.Float() {
			a[3*es], a[3*es+es-1] = 0xff, 0xff // a poison-ish NaN: set every byte below
			for k := 0; k < es; k++ {
				a[5*es+k] = 0xff // poison
			}
			if c.dt == kernel.F32 {
				binary.LittleEndian.PutUint32(a[7*4:], math.Float32bits(float32(math.Inf(-1))))
			}
		}
		b := append([]byte(nil), a...)
		n := len(a) / es
		last := n - 2
		b[last*es] ^= 1
		pa, pb := writeTemp(t, a), writeTemp(t, b)
		for _, from := range []int64{0, int64(last), int64(last) + 1} {
			want := backend.FirstDiff(a, b, es, from)
			got := int64(binary.LittleEndian.Uint64(run("diff", es, from, pa, pb)))
			if want < 0 {
				want = int64(^uint64(0) >> 1)
				got = int64(uint64(got) >> 1)
			}
			if got != want {
				t.Errorf("%s tf_diff from %d: %d, want %d", c.dt, from, got, want)
			}
		}
		hash := run("rowhash", c.rows, pa)
		wantHash := verify.HashRows(a, c.rows, c.cols*es)
		for i := range wantHash {
			if binary.LittleEndian.Uint64(hash[8*i:]) != wantHash[i] {
				t.Fatalf("%s tf_rowhash row %d differs from FNV-1a", c.dt, i)
			}
		}
		if c.dt.Float() {
			res := run("specials", c.dt.Code(), pa)
			s := backend.ScanSpecials(c.dt, a)
			first := func(w uint64) int64 {
				if w == ^uint64(0) {
					return -1
				}
				return int64(w)
			}
			got := backend.Specials{Poison: int64(binary.LittleEndian.Uint64(res)), NonFinite: int64(binary.LittleEndian.Uint64(res[8:])),
				FirstPoison: first(binary.LittleEndian.Uint64(res[16:])), FirstNonFinite: first(binary.LittleEndian.Uint64(res[24:]))}
			if got != s || s.Poison == 0 {
				t.Errorf("%s tf_specials %+v, want %+v", c.dt, got, s)
			}
		}
		idx := []int{n - 1, 0, 3, 3, n / 2}
		words := make([]byte, 8*len(idx))
		for j, e := range idx {
			binary.LittleEndian.PutUint64(words[8*j:], uint64(e))
		}
		g := run("gather", es, pa, writeTemp(t, words))
		for j, e := range idx {
			if !bytes.Equal(g[j*es:(j+1)*es], a[e*es:(e+1)*es]) {
				t.Errorf("%s tf_gather element %d differs", c.dt, e)
			}
		}
	}
}

// stubProblem is a backend.Problem of no backend (KeepsFrom's refusals).
type stubProblem struct{ op *kernel.Operator }

func (s stubProblem) Operator() *kernel.Operator { return s.op }
func (s stubProblem) Dims() kernel.Dims          { return nil }
func (s stubProblem) Sets() int                  { return 1 }
func (s stubProblem) Run(context.Context, backend.Kernel, int) ([][]byte, error) {
	return nil, nil
}
func (s stubProblem) Time(context.Context, backend.Kernel, int, int) (time.Duration, error) {
	return 0, nil
}
func (s stubProblem) Close() error { return nil }

type stubKernel struct{}

func (stubKernel) Name() string { return "stub" }
func (stubKernel) Close() error { return nil }

// TestKeepsFromRefuses (no device): KeepPairAnd keeps a third run only of
// a CUDA problem of the same backend, operator and output sizes; any other
// problem — another backend's, another CUDA backend's, the problem itself,
// another operator's, other output sizes — is refused by KeepsFrom, and
// KeepPairAnd then fails as the pair (pairErr), running nothing.
func TestKeepsFromRefuses(t *testing.T) {
	op := builtin.GemmF16()
	b1, b2 := &Backend{}, &Backend{}
	p := &Problem{b: b1, op: op, bytes: []int64{100, 100, 400}}
	other := map[string]backend.Problem{
		"another backend's":      stubProblem{op},
		"another CUDA backend's": &Problem{b: b2, op: op, bytes: []int64{100, 100, 400}},
		"itself":                 p,
		"another operator's":     &Problem{b: b1, op: builtin.GemmF16(), bytes: []int64{100, 100, 400}},
		"other output sizes":     &Problem{b: b1, op: op, bytes: []int64{100, 100, 800}},
	}
	for what, q := range other {
		if p.KeepsFrom(q) {
			t.Errorf("KeepsFrom accepted %s problem", what)
		}
		pe, oe := p.KeepPairAnd(context.Background(), stubKernel{}, 0, 0, 1, q, 0, 2)
		if pe == nil || oe != nil {
			t.Errorf("KeepPairAnd with %s problem: %v, %v; want the pair's error", what, pe, oe)
		}
	}
}
