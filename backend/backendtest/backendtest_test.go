package backendtest

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/x448/float16"

	"github.com/tilefit/tilefit/backend"
	"github.com/tilefit/tilefit/builtin"
	"github.com/tilefit/tilefit/kernel"
)

// goBackend is a pure-Go backend for testing the suite itself: it runs a
// plan's entries as Go functions (goEntries) over the operand buffers it
// allocates from the operator, like a real backend, knowing no family. Every
// gemm "tile" computes the same fp32 chain over k, so all tiles agree
// bitwise, except the planted fault.
type goBackend struct{}

// goEntry is one Go "kernel": buffers in Args order, integers in Args order.
type goEntry func(k *goKernel, bufs [][]byte, dts []kernel.DType, ints []int64)

var goEntries = map[string]goEntry{
	"tilefit_gemm_f16": func(k *goKernel, b [][]byte, dts []kernel.DType, ints []int64) {
		x, w, y := b[0], b[1], b[2]
		M, N, K := int(ints[0]), int(ints[1]), int(ints[2])
		for m := 0; m < M; m++ {
			for n := 0; n < N; n++ {
				var acc float32
				for kk := 0; kk < K; kk++ {
					xv := float64(float16.Frombits(binary.LittleEndian.Uint16(x[2*(m*K+kk):])).Float32())
					wv := float64(float16.Frombits(binary.LittleEndian.Uint16(w[2*(n*K+kk):])).Float32())
					acc = float32(math.FMA(xv, wv, float64(acc)))
				}
				// The planted fault: tile 16_64_1 forgets the last column.
				if k.name == "16_64_1" && n == N-1 && N > 1 {
					continue
				}
				i := m*N + n
				if dts[2] == kernel.F16 {
					binary.LittleEndian.PutUint16(y[2*i:], float16.Fromfloat32(acc).Bits())
				} else {
					binary.LittleEndian.PutUint32(y[4*i:], math.Float32bits(acc))
				}
			}
		}
	},
}

// gemmTrunc is a GEMM that keeps 22 significant bits of its accumulator
// after every step: the same in every tile (so every tile is bitwise equal)
// and well within the float64 bound on random inputs, but not exact.
func gemmTrunc(k *goKernel, b [][]byte, dts []kernel.DType, ints []int64) {
	x, w, y := b[0], b[1], b[2]
	M, N, K := int(ints[0]), int(ints[1]), int(ints[2])
	for m := 0; m < M; m++ {
		for n := 0; n < N; n++ {
			var acc float32
			for kk := 0; kk < K; kk++ {
				xv := float64(float16.Frombits(binary.LittleEndian.Uint16(x[2*(m*K+kk):])).Float32())
				wv := float64(float16.Frombits(binary.LittleEndian.Uint16(w[2*(n*K+kk):])).Float32())
				acc = math.Float32frombits(math.Float32bits(float32(math.FMA(xv, wv, float64(acc)))) &^ 3)
			}
			binary.LittleEndian.PutUint32(y[4*(m*N+n):], math.Float32bits(acc))
		}
	}
}

func init() { goEntries["tilefit_gemm_trunc"] = gemmTrunc }

type goKernel struct {
	name string
	plan kernel.Plan
}

func (k *goKernel) Name() string { return k.name }
func (k *goKernel) Close() error { return nil }

type goProblem struct {
	op   *kernel.Operator
	d    kernel.Dims
	sets [][][]byte // [set][operand]
}

func (goBackend) Name() string { return "go" }
func (goBackend) Device(context.Context) (backend.Device, error) {
	return backend.Device{Backend: "go", Name: "Go", Arch: "any", Compiler: "none"}, nil
}
func (goBackend) Compile(_ context.Context, p backend.Program) (backend.Artifact, error) {
	return backend.Artifact{Key: strings.Join(p.Defines, ","), Path: strings.Join(p.Defines, ",")}, nil
}
func (goBackend) Load(_ context.Context, name string, _ backend.Artifact, plan kernel.Plan) (backend.Kernel, error) {
	for _, l := range plan.Launches {
		if goEntries[l.Entry] == nil {
			return nil, fmt.Errorf("no Go entry %s", l.Entry)
		}
	}
	return &goKernel{name: name, plan: plan}, nil
}
func (goBackend) NewProblem(_ context.Context, op *kernel.Operator, d kernel.Dims, sets [][][]byte) (backend.Problem, error) {
	p := &goProblem{op: op, d: d}
	for _, in := range sets {
		var row [][]byte
		j := 0
		for i, o := range op.Operands {
			n, _ := op.OperandBytes(i, d)
			b := make([]byte, n)
			if o.Dir == kernel.In {
				copy(b, in[j])
				j++
			}
			row = append(row, b)
		}
		p.sets = append(p.sets, row)
	}
	return p, nil
}
func (goBackend) Close() error { return nil }

func (p *goProblem) Operator() *kernel.Operator { return p.op }
func (p *goProblem) Dims() kernel.Dims          { return p.d }
func (p *goProblem) Sets() int                  { return len(p.sets) }
func (p *goProblem) Close() error               { return nil }
func (p *goProblem) Time(ctx context.Context, k backend.Kernel, n, first int) (time.Duration, error) {
	start := time.Now()
	for i := 0; i < n; i++ {
		if _, err := p.Run(ctx, k, (first+i)%len(p.sets)); err != nil {
			return 0, err
		}
	}
	return time.Since(start)/time.Duration(n) + 1, nil
}
func (p *goProblem) Run(_ context.Context, bk backend.Kernel, set int) ([][]byte, error) {
	k := bk.(*goKernel)
	args, err := backend.ResolvePlan(p.op, p.d, k.plan)
	if err != nil {
		return nil, err
	}
	row := p.sets[set]
	for i, o := range p.op.Operands {
		if o.Dir == kernel.Out {
			for j := range row[i] {
				row[i][j] = 0xFF
			}
		}
	}
	for li, l := range k.plan.Launches {
		var bufs [][]byte
		var dts []kernel.DType
		var ints []int64
		for _, a := range args[li] {
			if a.Kind == kernel.ArgOperand {
				bufs = append(bufs, row[a.Operand])
				dts = append(dts, p.op.Operands[a.Operand].DType)
			} else {
				ints = append(ints, a.Value)
			}
		}
		goEntries[l.Entry](k, bufs, dts, ints)
	}
	out := make([][]byte, len(row))
	for i, o := range p.op.Operands {
		if o.Dir == kernel.Out {
			out[i] = append([]byte(nil), row[i]...)
		}
	}
	return out, nil
}

var small = []kernel.Dims{{"M": 1, "N": 1, "K": 1}, {"M": 37, "N": 48, "K": 100}, {"M": 131, "N": 1, "K": 320}, {"M": 20, "N": 7, "K": 3}}

// TestSuiteOnGoBackend runs the suite on a fake backend whose tiles all
// agree except 16_64_1 (left out of the subset here), so the suite passes.
func TestSuiteOnGoBackend(t *testing.T) {
	fam := builtin.CPUGemmF16()
	tiles := Subset(fam, 6)
	if len(tiles) > 6 || tiles[0] != fam.Reference {
		t.Fatalf("Subset: %v", tiles)
	}
	for _, name := range tiles {
		if name == "16_64_1" {
			t.Fatalf("subset includes the faulty tile: %v", tiles)
		}
	}
	RunWith(t, goBackend{}, fam, Options{Shapes: small, MaxTiles: 6, Laplacian: []kernel.Dims{{"M": 5, "N": 2, "K": 2}, {"M": 9, "N": 48, "K": 48}}})
}

// TestSuiteCatchesFault runs the suite, in a child test process, on a space
// that holds the faulty tile, and checks that the suite fails and says why.
func TestSuiteCatchesFault(t *testing.T) {
	if os.Getenv("BACKENDTEST_FAULTY") == "1" {
		fam := builtin.CPUGemmF16()
		fam.Params[0].Sweep = []int{16} // TM 16 only: 16_64_1 is in the space
		fam.Params[1].Sweep = []int{32, 64}
		RunWith(t, goBackend{}, fam, Options{Shapes: small[1:2], Types: []map[string]kernel.DType{{}}})
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestSuiteCatchesFault$", "-test.v")
	cmd.Env = append(os.Environ(), "BACKENDTEST_FAULTY=1")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("the suite passed a tile that leaves the last column unwritten:\n%s", out)
	}
	want := "tile 16_64_1 not bitwise identical to 64_128_2: first difference at [0,47] (index 47)"
	if !strings.Contains(string(out), want) {
		t.Errorf("suite output lacks %q:\n%s", want, out)
	}
}

// TestLaplacianCatchesInexactFamily runs the suite, in a child test
// process, on a family whose every tile truncates its accumulator to 22
// bits: bitwise equal across tiles and within the float64 bound, so only
// the Laplacian check can fail it — and must.
func TestLaplacianCatchesInexactFamily(t *testing.T) {
	if os.Getenv("BACKENDTEST_TRUNC") == "1" {
		fam := builtin.CPUGemmF16()
		fam.Params[0].Sweep = []int{16, 64}
		fam.Params[1].Sweep = []int{128}
		fam.Plan = func(p kernel.Params, d kernel.Dims) (kernel.Plan, error) {
			return kernel.Plan{Launches: []kernel.Launch{{Entry: "tilefit_gemm_trunc",
				Args: kernel.Args(kernel.Operands("X", "W", "Y"), kernel.DimArgs("M", "N", "K"))}}}, nil
		}
		RunWith(t, goBackend{}, fam, Options{Shapes: small[1:2], Types: []map[string]kernel.DType{{}},
			Laplacian: []kernel.Dims{{"M": 64, "N": 256, "K": 256}}})
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestLaplacianCatchesInexactFamily$", "-test.v")
	cmd.Env = append(os.Environ(), "BACKENDTEST_TRUNC=1")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("the suite passed a family that truncates its accumulator:\n%s", out)
	}
	if want := "tile 64_128_2: Y = X·Lᵀ is not each row's cyclic second difference exactly: first difference at"; !strings.Contains(string(out), want) {
		t.Errorf("suite output lacks %q:\n%s", want, out)
	}
	if strings.Contains(string(out), "the bound") || strings.Contains(string(out), "not bitwise identical") {
		t.Errorf("the float64 or bitwise check failed too; the test no longer isolates the Laplacian check:\n%s", out)
	}
}

// gemmDropLast is a GEMM whose every tile skips the last k term.
func gemmDropLast(k *goKernel, b [][]byte, dts []kernel.DType, ints []int64) {
	x, w := b[0], b[1]
	M, N, K := int(ints[0]), int(ints[1]), int(ints[2])
	for m := 0; m < M; m++ {
		for n := 0; n < N; n++ {
			var acc float32
			for j := 0; j < K-1; j++ {
				xv := float64(float16.Frombits(binary.LittleEndian.Uint16(x[2*(m*K+j):])).Float32())
				wv := float64(float16.Frombits(binary.LittleEndian.Uint16(w[2*(n*K+j):])).Float32())
				acc = float32(math.FMA(xv, wv, float64(acc)))
			}
			binary.LittleEndian.PutUint32(b[2][4*(m*N+n):], math.Float32bits(acc))
		}
	}
}

func init() { goEntries["tilefit_gemm_droplast"] = gemmDropLast }

// TestExactCatchesDroppedTerm runs the suite, in a child test process, on
// a family whose every tile drops its last k term (bitwise equal across
// tiles): the exact check must fail every tile.
func TestExactCatchesDroppedTerm(t *testing.T) {
	if os.Getenv("BACKENDTEST_DROPLAST") == "1" {
		fam := builtin.CPUGemmF16()
		fam.Params[0].Sweep = []int{16, 64}
		fam.Params[1].Sweep = []int{128}
		fam.Plan = func(p kernel.Params, d kernel.Dims) (kernel.Plan, error) {
			return kernel.Plan{Launches: []kernel.Launch{{Entry: "tilefit_gemm_droplast",
				Args: kernel.Args(kernel.Operands("X", "W", "Y"), kernel.DimArgs("M", "N", "K"))}}}, nil
		}
		RunWith(t, goBackend{}, fam, Options{Shapes: []kernel.Dims{{"M": 5, "N": 7, "K": 10240}}, Types: []map[string]kernel.DType{{}},
			Laplacian: []kernel.Dims{}})
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestExactCatchesDroppedTerm$", "-test.v")
	cmd.Env = append(os.Environ(), "BACKENDTEST_DROPLAST=1")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("the suite passed a family that drops its last k term:\n%s", out)
	}
	for _, tile := range []string{"64_128_2", "16_128_2"} {
		if want := "tile " + tile + ": exact check (every element of Y exactly (any tile, k order or split-K)): first difference at [0,0]"; !strings.Contains(string(out), want) {
			t.Errorf("suite output lacks %q:\n%s", want, out)
		}
	}
}
