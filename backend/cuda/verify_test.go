package cuda

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/tilefit/tilefit/backend"
	"github.com/tilefit/tilefit/builtin"
	"github.com/tilefit/tilefit/kernel"
	"github.com/tilefit/tilefit/measure"
	"github.com/tilefit/tilefit/result"
	"github.com/tilefit/tilefit/tune"
	"github.com/tilefit/tilefit/verify"
	"github.com/tilefit/tilefit/workload"
)

// deviceBytes copies n bytes at ptr back (through the device thread).
func deviceBytes(t *testing.T, b *Backend, ptr devptr, n int64) []byte {
	t.Helper()
	out := make([]byte, n)
	if err := b.w.do(context.Background(), func() error { return b.drv.dtoh(out, ptr) }); err != nil {
		t.Fatal(err)
	}
	return out
}

// poke writes bytes at ptr + off on the device.
func poke(t *testing.T, b *Backend, ptr devptr, off int64, v []byte) {
	t.Helper()
	if err := b.w.do(context.Background(), func() error { return htod(b.drv, ptr+devptr(off), v) }); err != nil {
		t.Fatal(err)
	}
}

// TestVerifierOnDevice checks the device's verification against the host
// implementation (backend.HostVerifier over Run) on real outputs: inputs
// drawn on the device hold the host's bits (kernel.Drawn), and Keep, Diff,
// RowHashes, Specials and Gather agree with the host's on every output,
// before and after planted differences (a NaN, a poison element); a write
// past the output fails Keep with a *backend.GuardError.
func TestVerifierOnDevice(t *testing.T) {
	b := testBackend(t)
	ctx := context.Background()
	if err := b.ensureVerify(ctx); err != nil {
		t.Fatalf("verification kernels: %v", err)
	}
	fam := builtin.CUDAGemmF16()
	for _, c := range []struct {
		f16     bool
		m, n, k int
	}{{false, 1983, 324, 320}, {true, 130, 77, 64}, {false, 1, 1, 8}} {
		op := gemmOp(c.f16)
		d := dims(c.m, c.n, c.k)
		var sets [][]backend.Input
		for s := 0; s < 2; s++ {
			var set []backend.Input
			for oi, o := range op.Operands {
				if o.Dir == kernel.In {
					dr := kernel.UniformDrawn(o, oi, uint64(11+s), d)
					set = append(set, backend.Input{Drawn: &dr})
				}
			}
			sets = append(sets, set)
		}
		pp, err := b.NewDrawnProblem(ctx, op, d, sets)
		if err != nil {
			t.Fatal(err)
		}
		p := pp.(*Problem)
		for s, set := range sets {
			for j, i := range op.InputIndices() {
				if got := deviceBytes(t, b, p.bufs[s][i], p.bytes[i]); !bytes.Equal(got, set[j].Drawn.Bytes()) {
					t.Fatalf("%v set %d operand %s: the device drew other bits than the host (first byte %d)", d, s, op.Operands[i].Name,
						backend.FirstDiff(got, set[j].Drawn.Bytes(), 1, 0))
				}
			}
		}
		k := load(ctx, t, b, fam, op, d, fam.Reference)
		host := backend.NewHostVerifier(p)
		vs := []backend.Verifier{p, host}
		for _, v := range vs {
			for slot := 0; slot < 2; slot++ {
				if err := v.Keep(ctx, k, 0, slot); err != nil {
					t.Fatal(err)
				}
			}
		}
		const y = 2
		es := op.Operands[y].DType.Size()
		n := p.bytes[y] / int64(es)
		if got := deviceBytes(t, b, p.vs.slots[0][y], p.bytes[y]); !bytes.Equal(got, host.Outputs(0)[y]) {
			t.Fatalf("%v: the kept output differs from Run's", d)
		}
		idx := []int{int(n - 1), 0, int(n / 2), int(n / 3), int(n - 1)}
		compare := func(when string) {
			t.Helper()
			for _, pair := range [][2]int{{0, 1}, {1, 0}, {0, 0}} {
				for _, from := range []int64{0, n / 3, n/3 + 1, n/2 + 1, n} {
					a, err1 := p.Diff(ctx, pair[0], pair[1], y, from)
					h, err2 := host.Diff(ctx, pair[0], pair[1], y, from)
					if err1 != nil || err2 != nil || a != h {
						t.Errorf("%v %s: Diff(%v, from %d) = %d (%v) on the device, %d (%v) on the host", d, when, pair, from, a, err1, h, err2)
					}
				}
			}
			for slot := 0; slot < 2; slot++ {
				a, err1 := p.RowHashes(ctx, slot, y, c.m)
				h, err2 := host.RowHashes(ctx, slot, y, c.m)
				if err1 != nil || err2 != nil || fmt.Sprint(a) != fmt.Sprint(h) {
					t.Errorf("%v %s: RowHashes(%d) differ (%v, %v)", d, when, slot, err1, err2)
				}
				sa, err1 := p.Specials(ctx, slot, y)
				sh, err2 := host.Specials(ctx, slot, y)
				if err1 != nil || err2 != nil || sa != sh {
					t.Errorf("%v %s: Specials(%d) = %+v on the device, %+v on the host (%v, %v)", d, when, slot, sa, sh, err1, err2)
				}
				ga, err1 := p.Gather(ctx, slot, y, idx)
				gh, err2 := host.Gather(ctx, slot, y, idx)
				if err1 != nil || err2 != nil || !bytes.Equal(ga, gh) {
					t.Errorf("%v %s: Gather(%d) differs (%v, %v)", d, when, slot, err1, err2)
				}
			}
		}
		compare("as run")
		if n >= 3 {
			// A NaN at n/3 and a poison element at n/2 in slot 1, on both.
			nan, poison := make([]byte, es), bytes.Repeat([]byte{0xff}, es)
			if es == 4 {
				u := math.Float32bits(float32(math.NaN())) | 1
				nan = []byte{byte(u), byte(u >> 8), byte(u >> 16), byte(u >> 24)}
			} else {
				nan = []byte{0x01, 0x7e}
			}
			for _, pl := range []struct {
				e int64
				v []byte
			}{{n / 3, nan}, {n / 2, poison}} {
				poke(t, b, p.vs.slots[1][y], pl.e*int64(es), pl.v)
				copy(host.Outputs(1)[y][pl.e*int64(es):], pl.v)
			}
			compare("with a NaN and a poison element")
			if s, _ := p.Specials(ctx, 1, y); s.Poison < 1 || s.NonFinite < 1 || (n/2 != n/3 && s.FirstPoison != n/2) {
				t.Errorf("%v: planted specials not found: %+v", d, s)
			}
		}
		k.Close()
		// A write past the output fails Keep; the next Keep passes again.
		if c.k%8 == 0 && !c.f16 && c.m > 64 {
			bad := load(ctx, t, b, fam, op, d, fam.Reference, "FAULT=3")
			err := p.Keep(ctx, bad, 0, 2)
			var ge *backend.GuardError
			if !errors.As(err, &ge) || ge.Operand != "Y" {
				t.Errorf("FAULT=3: Keep = %v, want a *backend.GuardError", err)
			}
			bad.Close()
			good := load(ctx, t, b, fam, op, d, fam.Reference)
			if err := p.Keep(ctx, good, 0, 2); err != nil {
				t.Errorf("after the fault: %v", err)
			}
			good.Close()
		}
		p.Close()
	}
}

// naiveSource is a plain GEMM for the device tests, one thread per element
// of Y (fp32, k ascending); DROP=1 skips the last k term — issue 17's bug,
// the same in every "tile".
const naiveSource = `
#ifndef DROP
#define DROP 0
#endif
__device__ float tf_h2f(unsigned short h)
{
	unsigned s = (h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
	if (e == 0) {
		float v = (float)m * 0x1p-24f;
		return s ? -v : v;
	}
	union {
		unsigned u;
		float f;
	} x;
	x.u = s | ((e + 112u) << 23) | (m << 13);
	return x.f;
}
__device__ float tf_fma(float a, float b, float c)
{
	float d;
	asm("fma.rn.f32 %0, %1, %2, %3;" : "=f"(d) : "f"(a), "f"(b), "f"(c));
	return d;
}
extern "C" __global__ void tf_naive(const unsigned short *X, const unsigned short *W, float *Y, long long M, long long N, long long K)
{
	long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= M * N)
		return;
	long long m = i / N, n = i % N;
	float acc = 0.0f;
	for (long long k = 0; k < K - DROP; k++)
		acc = tf_fma(tf_h2f(X[m * K + k]), tf_h2f(W[n * K + k]), acc);
	Y[i] = acc;
}
`

// TestDroppedLastKOnDevice (issue 17): on the GPU, a kernel that drops its
// last k term fails the exact check (inputs drawn on the device) and the
// probabilistic bound at every K of the strata preset and at K 10240;
// the same kernel without the bug passes both.
func TestDroppedLastKOnDevice(t *testing.T) {
	b := testBackend(t)
	ctx := context.Background()
	op := gemmOp(false)
	for _, drop := range []int{0, 1} {
		art, err := b.Compile(ctx, backend.Program{Family: "naive", Source: naiveSource, Defines: []string{fmt.Sprintf("DROP=%d", drop)}})
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range []int{320, 640, 2560, 6144, 10240} {
			d := dims(16, 24, k)
			plan := kernel.Plan{Launches: []kernel.Launch{{Entry: "tf_naive", Grid: [3]int{3, 1, 1}, Block: [3]int{128, 1, 1},
				Args: kernel.Args(kernel.Operands("X", "W", "Y"), kernel.DimArgs("M", "N", "K"))}}}
			kk, err := b.Load(ctx, "naive", art, plan)
			if err != nil {
				t.Fatal(err)
			}
			in := op.GenInputs(uint64(k), d)
			p, err := b.NewProblem(ctx, op, d, [][][]byte{in})
			if err != nil {
				t.Fatal(err)
			}
			got, err := runY(p, kk)
			if err != nil {
				t.Fatal(err)
			}
			r := verify.Check(op, d, in, 2, got, 1, 1<<20)
			ex, drawn, err := verify.ExactInputs(op, d, uint64(k))
			if err != nil {
				t.Fatal(err)
			}
			set := make([]backend.Input, len(drawn))
			for i := range drawn {
				set[i] = backend.Input{Drawn: &drawn[i]}
			}
			pe, err := b.NewDrawnProblem(ctx, op, d, [][]backend.Input{set})
			if err != nil {
				t.Fatal(err)
			}
			gotEx, err := runY(pe, kk)
			if err != nil {
				t.Fatal(err)
			}
			m, err := verify.NewExactRefs(op, d, ex, verify.Materialize(drawn), 1, 1<<20).Check(2, gotEx)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case drop == 0 && (r.Err != nil || m != nil):
				t.Errorf("K=%d: the correct kernel failed: %v; exact: %v", k, r.Err, m)
			case drop == 1 && (m == nil || r.MaxLikely <= 1):
				t.Errorf("K=%d: the dropped-last-k kernel passed: exact %v, %.3g of the probabilistic bound", k, m, r.MaxLikely)
			}
			if drop == 1 {
				t.Logf("K=%d dropped-last-k on the device: %.3g of the worst-case bound, %.3g of the probabilistic one; exact: %v", k, r.MaxErr, r.MaxLikely, m)
			}
			kk.Close()
			p.Close()
			pe.Close()
		}
	}
}

// keepOpen is the shared test backend without Close (a tune executor
// closes its backend).
type keepOpen struct{ *Backend }

func (keepOpen) Close() error { return nil }

// memResults is a tune.Results in memory.
type memResults struct {
	mu    sync.Mutex
	cells []result.CellResult
}

func (m *memResults) Measured(context.Context, string, result.Cell) (map[string]result.Status, error) {
	return nil, nil
}

func (m *memResults) SaveCell(_ context.Context, c result.CellResult) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.cells = append(m.cells, c)
	return int64(len(m.cells)), nil
}

func (m *memResults) ShapeRows(_ context.Context, _ string, c result.Cell) ([]result.CellResult, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []result.CellResult
	for _, s := range m.cells {
		if s.Cell.Shape == c.Shape && s.Cell.N == c.N && s.Cell.K == c.K {
			out = append(out, s)
		}
	}
	return out, nil
}

// TestExactSweepCUDA sweeps every CUDA family of every operator (their
// default tiles: the mma.sync, wgmma — its fixed split-K classes included
// — and stream families of gemm_f16 with fp32 and fp16 Y, and the fused
// families) with cuBLAS on shapes of the strata preset at M 1, 130 and
// 1983, through tune with verification on the device: no correct tile
// fails the exact check (or any other), every cell had one, and what
// cuBLAS does on the exact inputs is logged.
func TestExactSweepCUDA(t *testing.T) {
	b := testBackend(t)
	ctx := context.Background()
	reg := builtin.New()
	w := workload.Workload{Name: "exact", Ms: []int{1, 130, 1983}, Shapes: []workload.Shape{
		{Name: "hc_read", N: 324, K: 10240, Calls: 1}, {Name: "Wout", N: 2560, K: 6144, Calls: 1},
		{Name: "Wshd", N: 2560, K: 640, Calls: 1}, {Name: "Walbe", N: 48, K: 2560, Calls: 1},
		{Name: "Wshgu", Op: "swiglu_f16", N: 640, K: 2560, Calls: 1},
		{Name: "hc_up", Op: "hc_up_f16", K: 320, Dims: map[string]int{"S": 2560}, Calls: 1},
		{Name: "q8", Op: "gemm_q8_f16", N: 640, K: 2560, Calls: 1},
	}}
	runs := []struct {
		op    string
		types map[string]kernel.DType
	}{{"gemm_f16", nil}, {"gemm_f16", map[string]kernel.DType{"Y": kernel.F16}}, {"swiglu_f16", nil}, {"hc_up_f16", nil}, {"gemm_q8_f16", nil}}
	for _, run := range runs {
		fams := reg.Of("cuda", run.op)
		if len(fams) == 0 {
			t.Fatalf("no CUDA family of %s", run.op)
		}
		var names []string
		for _, f := range fams {
			names = append(names, f.Name)
		}
		cfg := tune.Config{Families: fams, Types: run.types, Workload: w, Baselines: reg.Baselines("cuda", run.op), Seed: 3,
			Measure: measure.Options{Rounds: 6, MinRounds: 6}}
		st := &memResults{}
		ex := tune.NewLocal(func(context.Context) (backend.Backend, error) { return keepOpen{b}, nil }, reg)
		sum, err := tune.Sweep(ctx, cfg, ex, st, nil)
		if err != nil {
			t.Fatalf("%s %v: %v", run.op, run.types, err)
		}
		for _, wn := range sum.Warnings {
			t.Logf("%s %v: warning: %s", run.op, run.types, wn)
			if strings.Contains(wn, "no exact check") || strings.Contains(wn, "declares no exact") {
				t.Errorf("%s: a cell without the exact check: %s", run.op, wn)
			}
		}
		for _, c := range st.cells {
			ok, left := 0, 0
			for _, cand := range c.Candidates {
				switch cand.Status {
				case result.OK:
					ok++
				case result.NumericFailed, result.ParityFailed, result.Crashed, result.Timeout:
					t.Errorf("%s %v %s M=%d %s: %s %s", run.op, run.types, c.Cell.Shape, c.Cell.M, cand.Tile, cand.Status, firstLine(cand.Detail))
				}
				if cand.LeftAt > 0 {
					left++
				}
			}
			t.Logf("%s %v (%s) %s M=%d: %d of %d candidates verified, %d left the race; %s", run.op, run.types, strings.Join(names, ","), c.Cell.Shape, c.Cell.M, ok, len(c.Candidates), left, c.Phases)
		}
	}
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// TestKeepPairAndOnDevice (device): KeepPairAnd's third run, of another
// problem of the same operator and dims (the exact check's), lands in the
// slot it names with the outputs that problem's Run gives, beside the
// pair's two (the cell's Run outputs), in one wait; a guard fault in the
// kernel is the pair's error (its runs come first), and rows left
// unwritten show in the third slot's poison count; KeepsFrom refuses the
// problem itself and one of other dims.
func TestKeepPairAndOnDevice(t *testing.T) {
	b := testBackend(t)
	ctx := context.Background()
	fam := builtin.CUDAGemmF16()
	s := dims(1983, 324, 320)
	op := gemmOp(false)
	pp, _ := newProblem(t, b, op, s, 7)
	defer pp.Close()
	qq, _ := newProblem(t, b, op, s, 11)
	defer qq.Close()
	other, _ := newProblem(t, b, op, dims(64, 324, 320), 11)
	defer other.Close()
	p := pp.(*Problem)
	if err := p.VerifyOnDevice(ctx); err != nil {
		t.Fatalf("verification kernels: %v", err)
	}
	if !p.KeepsFrom(qq) || p.KeepsFrom(pp) || p.KeepsFrom(other) {
		t.Fatalf("KeepsFrom: same dims %v, itself %v, other dims %v; want true, false, false", p.KeepsFrom(qq), p.KeepsFrom(pp), p.KeepsFrom(other))
	}
	good := load(ctx, t, b, fam, op, s, fam.Reference)
	defer good.Close()
	wantP, err := runY(pp, good)
	if err != nil {
		t.Fatal(err)
	}
	wantQ, err := runY(qq, good)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(wantP, wantQ) {
		t.Fatal("the two problems' inputs give the same outputs: the test cannot tell them apart")
	}
	if pe, oe := p.KeepPairAnd(ctx, good, 0, 0, 1, qq, 0, 2); pe != nil || oe != nil {
		t.Fatalf("good kernel: %v, %v", pe, oe)
	}
	for slot, want := range map[int][]byte{0: wantP, 1: wantP, 2: wantQ} {
		g, err := p.Gather(ctx, slot, 2, allIndices(len(want)/4))
		if err != nil || !bytes.Equal(g, want) {
			t.Errorf("slot %d differs from its problem's Run (err %v)", slot, err)
		}
	}
	guard := load(ctx, t, b, fam, op, s, fam.Reference, "FAULT=3")
	defer guard.Close()
	pe, oe := p.KeepPairAnd(ctx, guard, 0, 3, 4, qq, 0, 5)
	var ge *backend.GuardError
	if !errors.As(pe, &ge) || oe != nil {
		t.Fatalf("FAULT=3 (write past the end): %v, %v; want the pair's *backend.GuardError", pe, oe)
	}
	tail := load(ctx, t, b, fam, op, s, fam.Reference, "FAULT=1")
	defer tail.Close()
	if pe, oe := p.KeepPairAnd(ctx, tail, 0, 3, 4, qq, 0, 5); pe != nil || oe != nil {
		t.Fatalf("FAULT=1: %v, %v", pe, oe)
	}
	if sp, err := p.Specials(ctx, 5, 2); err != nil || sp.Poison == 0 {
		t.Errorf("FAULT=1 (rows unwritten), third slot: %d poisoned elements (err %v), want some", sp.Poison, err)
	}
	if pe, oe := p.KeepPairAnd(ctx, good, 0, 0, 1, qq, 0, 2); pe != nil || oe != nil {
		t.Fatalf("the good kernel after the faults: %v, %v", pe, oe)
	}
	if e, err := p.Diff(ctx, 2, 5, 2, 0); err != nil || e < 0 {
		t.Errorf("the faulty kernel's third slot does not differ from the good one's (%d, %v)", e, err)
	}
}
