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
	"github.com/tilefit/tilefit/kernel"
)

// goBackend is a pure-Go backend for testing the suite itself: every "tile"
// computes the same fp32 chain over k, so all tiles agree bitwise.
type goBackend struct{}

type goKernel struct {
	name   string
	f16    bool
	params map[string]string
}

func (k *goKernel) Name() string { return k.name }
func (k *goKernel) Close() error { return nil }

type goProblem struct {
	s    backend.Shape
	f16  bool
	sets []backend.InputSet
}

func (goBackend) Name() string { return "go" }
func (goBackend) Device(context.Context) (backend.Device, error) {
	return backend.Device{Backend: "go", Name: "Go", Arch: "any", Compiler: "none"}, nil
}
func (goBackend) Compile(_ context.Context, p backend.Program) (backend.Artifact, error) {
	return backend.Artifact{Key: strings.Join(p.Defines, ","), Path: strings.Join(p.Defines, ",")}, nil
}
func (goBackend) Load(_ context.Context, name string, p backend.Program, _ backend.Artifact) (backend.Kernel, error) {
	k := &goKernel{name: name, params: map[string]string{}}
	for _, d := range p.Defines {
		n, v, _ := strings.Cut(d, "=")
		k.params[n] = v
	}
	k.f16 = k.params["OUT_F16"] == "1"
	return k, nil
}
func (goBackend) NewProblem(_ context.Context, s backend.Shape, sets []backend.InputSet, f16 bool) (backend.Problem, error) {
	return &goProblem{s: s, f16: f16, sets: sets}, nil
}
func (goBackend) Close() error { return nil }

func (p *goProblem) Shape() backend.Shape { return p.s }
func (p *goProblem) Sets() int            { return len(p.sets) }
func (p *goProblem) Close() error         { return nil }
func (p *goProblem) Time(ctx context.Context, k backend.Kernel, n, first int) (time.Duration, error) {
	start := time.Now()
	for i := 0; i < n; i++ {
		if _, err := p.Run(ctx, k, (first+i)%len(p.sets)); err != nil {
			return 0, err
		}
	}
	return time.Since(start)/time.Duration(n) + 1, nil
}
func (p *goProblem) Run(_ context.Context, bk backend.Kernel, set int) ([]byte, error) {
	k := bk.(*goKernel)
	if k.f16 != p.f16 {
		return nil, fmt.Errorf("output type mismatch")
	}
	s, in := p.s, p.sets[set]
	es := 4
	if p.f16 {
		es = 2
	}
	out := make([]byte, s.M*s.N*es)
	for i := range out {
		out[i] = 0xFF
	}
	for m := 0; m < s.M; m++ {
		for n := 0; n < s.N; n++ {
			var acc float32
			for kk := 0; kk < s.K; kk++ {
				x := float64(float16.Frombits(in.X[m*s.K+kk]).Float32())
				w := float64(float16.Frombits(in.W[n*s.K+kk]).Float32())
				acc = float32(math.FMA(x, w, float64(acc)))
			}
			// The planted fault: tile 16_64_1 forgets the last column.
			if k.name == "16_64_1" && n == s.N-1 && s.N > 1 {
				continue
			}
			i := m*s.N + n
			if p.f16 {
				binary.LittleEndian.PutUint16(out[2*i:], float16.Fromfloat32(acc).Bits())
			} else {
				binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(acc))
			}
		}
	}
	return out, nil
}

var small = []backend.Shape{{M: 1, N: 1, K: 1}, {M: 37, N: 48, K: 100}, {M: 131, N: 1, K: 320}, {M: 20, N: 7, K: 3}}

// TestSuiteOnGoBackend runs the suite on a fake backend whose tiles all
// agree except 16_64_1 (left out of the subset here), so the suite passes.
func TestSuiteOnGoBackend(t *testing.T) {
	fam := kernel.CPUGemmF16()
	tiles := Subset(fam, 6)
	if len(tiles) > 6 || tiles[0] != fam.Reference {
		t.Fatalf("Subset: %v", tiles)
	}
	for _, name := range tiles {
		if name == "16_64_1" {
			t.Fatalf("subset includes the faulty tile: %v", tiles)
		}
	}
	RunWith(t, goBackend{}, fam, Options{Shapes: small, MaxTiles: 6})
}

// TestSuiteCatchesFault runs the suite, in a child test process, on a space
// that holds the faulty tile, and checks that the suite fails and says why.
func TestSuiteCatchesFault(t *testing.T) {
	if os.Getenv("BACKENDTEST_FAULTY") == "1" {
		fam := kernel.CPUGemmF16()
		fam.Params[0].Sweep = []int{16} // TM 16 only: 16_64_1 is in the space
		fam.Params[1].Sweep = []int{32, 64}
		RunWith(t, goBackend{}, fam, Options{Shapes: small[1:2], SkipF16: true})
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
