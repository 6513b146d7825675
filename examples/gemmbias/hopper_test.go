package gemmbias

import (
	"context"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tilefit/tilefit/backend/backendtest"
	"github.com/tilefit/tilefit/backend/cuda"
	"github.com/tilefit/tilefit/builtin"
	"github.com/tilefit/tilefit/kernel"
)

// TestHopperPlan checks the Hopper family's plan without a GPU: gemm_wgmma's
// launch geometry and tensor maps, the entry gemm_bias_wgmma, and b passed
// before Y; the source is the core then this package's file.
func TestHopperPlan(t *testing.T) {
	f, g := HopperFamily(), builtin.CUDAGemmWgmma()
	d := kernel.Dims{"M": 300, "N": 640, "K": 2560}
	for _, tile := range []string{"128_128_2", "64_96_1", "64_256_2.pingpong1", "128_160_2.grid0.pdl1"} {
		p, err := f.ParseTile(tile)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Restrict(p); err != nil {
			t.Fatalf("%s: %v", tile, err)
		}
		pl, err := f.Plan(p, d)
		if err != nil {
			t.Fatal(err)
		}
		gp, _ := g.Plan(p, d)
		l, gl := pl.Launches[0], gp.Launches[0]
		if len(pl.Launches) != 1 || l.Entry != HopperEntry || l.Grid != gl.Grid || l.Block != gl.Block || l.Shared != gl.Shared || l.PDL != (p["PDL"] == 1) {
			t.Errorf("%s: launch %+v, want gemm_wgmma's geometry %+v", tile, l, gl)
		}
		var names []string
		for _, a := range l.Args {
			names = append(names, a.Name)
		}
		if got := strings.Join(names, ","); got != "X,W,b,Y,M,N,K" {
			t.Errorf("%s: args %s, want X,W,b,Y,M,N,K", tile, got)
		}
		if l.Args[0].Map == nil || l.Args[0].Map.Box[1] != p["BM"] || l.Args[1].Map.Box[1] != p["BN"] {
			t.Errorf("%s: tensor maps %+v %+v", tile, l.Args[0].Map, l.Args[1].Map)
		}
	}
	for _, bad := range []string{"128_250_2", "64_128_2", "128_128_2.bpre2"} {
		if p, err := f.ParseTile(bad); err == nil && f.Restrict(p) == nil {
			t.Errorf("%s: allowed", bad)
		}
	}
	p, _ := f.ParseTile("128_128_2")
	if _, err := f.Plan(p, kernel.Dims{"M": 4, "N": 8, "K": 12}); err == nil {
		t.Error("K = 12 planned (TMA needs K % 8 == 0)")
	}
	if !strings.Contains(f.Source, "#line 1 \"wgmma_core.cuh\"") || !strings.HasSuffix(f.Source, hopperSource) {
		t.Error("the source is not the core followed by gemm_bias_wgmma.cu")
	}
	if len(Families()) != 2 || Families()[1].Name != "gemm_bias_wgmma" {
		t.Error("Families does not list the Hopper family")
	}
}

// hopperCUDA opens the CUDA backend, skipping without an sm_90 device.
func hopperCUDA(t *testing.T) *cuda.Backend {
	dir := os.Getenv("TILEFIT_CUDA_CACHE")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "tilefit-cuda-test-cache")
	}
	b, err := cuda.New(cuda.Options{CacheDir: dir})
	if err != nil {
		t.Skipf("no CUDA device: %v", err)
	}
	if arch, err := b.Arch(); err != nil || !strings.HasPrefix(arch, "sm_90") {
		t.Skipf("gemm_bias_wgmma needs sm_90a; the device is %s (%v)", arch, err)
	}
	return b
}

// TestHopperConformance runs the shared suite on the Hopper family on the
// GPU: tiles bitwise equal to the reference tile, the float64 reference
// with the bias, guards intact.
func TestHopperConformance(t *testing.T) {
	backendtest.RunWith(t, hopperCUDA(t), HopperFamily(), backendtest.Options{MaxTiles: 10, Shapes: []kernel.Dims{
		{"M": 1, "N": 8, "K": 8}, {"M": 37, "N": 48, "K": 104}, {"M": 300, "N": 640, "K": 2560},
	}})
}

// TestHopperKnownAnswer: every Hopper tile's Y is bitwise fp32(Y' + b[n]),
// Y' gemm_wgmma's fp32 output on the same X and W — the bias added once,
// after the whole dot product, as the reference defines.
func TestHopperKnownAnswer(t *testing.T) {
	b := hopperCUDA(t)
	ctx := context.Background()
	f, g := HopperFamily(), builtin.CUDAGemmWgmma()
	run := func(fam *kernel.Family, tile string, d kernel.Dims, in [][]byte, out int) []byte {
		t.Helper()
		p, err := fam.ParseTile(tile)
		if err != nil {
			t.Fatal(err)
		}
		art, err := b.Compile(ctx, backendtest.Program(fam, fam.Operator, p))
		if err != nil {
			t.Fatalf("%s %s: %v", fam.Name, tile, err)
		}
		plan, err := fam.Plan(p, d)
		if err != nil {
			t.Fatal(err)
		}
		k, err := b.Load(ctx, tile, art, plan)
		if err != nil {
			t.Fatal(err)
		}
		defer k.Close()
		pr, err := b.NewProblem(ctx, fam.Operator, d, [][][]byte{in})
		if err != nil {
			t.Fatal(err)
		}
		defer pr.Close()
		o, err := pr.Run(ctx, k, 0)
		if err != nil {
			t.Fatalf("%s %s: %v", fam.Name, tile, err)
		}
		return o[out]
	}
	for _, d := range []kernel.Dims{{"M": 37, "N": 48, "K": 104}, {"M": 300, "N": 640, "K": 2560}} {
		in := Operator().GenInputs(3, d)
		plain := run(g, "128_128_2", d, in[:2], 2)
		for _, tile := range []string{"128_128_2", "64_96_1", "64_256_2.pingpong1", "128_64_2.stages2", "64_128_1.bpre1", "128_256_2.bpre1"} {
			y := run(f, tile, d, in, 3)
			n, bad := d["N"], 0
			for i := 0; i < d["M"]*n; i++ {
				want := math.Float32frombits(binary.LittleEndian.Uint32(plain[4*i:])) + math.Float32frombits(binary.LittleEndian.Uint32(in[2][4*(i%n):]))
				if got := binary.LittleEndian.Uint32(y[4*i:]); got != math.Float32bits(want) {
					if bad++; bad <= 3 {
						t.Errorf("%v %s: Y[%d,%d] = %#08x, want fp32(gemm_wgmma + b) %#08x", d, tile, i/n, i%n, got, math.Float32bits(want))
					}
				}
			}
			t.Logf("%v %s: %d of %d elements differ from fp32(gemm_wgmma + b)", d, tile, bad, d["M"]*n)
		}
	}
}
