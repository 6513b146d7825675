package cuda

// The fused operators on CUDA (hc_up_f16, swiglu_f16, gemm_q8_f16) and the
// row tail of gemm_f16: class-aware conformance of every tile, planted
// faults caught, the in-kernel dequantisation bit for bit. Skipped without a
// device; run on the H200 (docs/results/h200-fused/README.md).

import (
	"strings"
	"testing"

	"github.com/tilefit/tilefit/backend/backendtest"
	"github.com/tilefit/tilefit/builtin"
	"github.com/tilefit/tilefit/kernel"
)

// cudaFusedShapes: small odd shapes and one production-like shape per
// operator with M = 1025 (a one-row tail over 64-row tiles).
var cudaFusedShapes = map[string][]kernel.Dims{
	"hc_up_f16":   {{"M": 37, "S": 40, "K": 72}, {"M": 1, "S": 17, "K": 9}, {"M": 1025, "S": 320, "K": 320}},
	"swiglu_f16":  {{"M": 37, "N": 72, "K": 88}, {"M": 3, "N": 5, "K": 7}, {"M": 1025, "N": 640, "K": 512}},
	"gemm_q8_f16": {{"M": 37, "N": 72, "K": 96}, {"M": 5, "N": 9, "K": 30, "G": 3}, {"M": 1025, "N": 384, "K": 512}},
}

// TestFusedCUDAConformance: every tile of the default sweep and the row-tail
// variants of each fused CUDA family: every present output checked against
// the float64 reference, bitwise identical within its numerics class;
// cuBLAS baselines numerically right.
func TestFusedCUDAConformance(t *testing.T) {
	b := testBackend(t)
	for _, fam := range []*kernel.Family{builtin.CUDAHcUpF16(), builtin.CUDASwigluF16(), builtin.CUDAGemmQ8F16()} {
		t.Run(fam.Name, func(t *testing.T) {
			rep := backendtest.RunClasses(t, b, fam, backendtest.ClassOptions{
				Shapes: cudaFusedShapes[fam.Operator.Name], Tiles: backendtest.WithTails(fam), MaxSamples: 2048,
				Baselines: builtin.New().Baselines("cuda", fam.Operator.Name)})
			for cl, tiles := range rep.Classes {
				t.Logf("class %q: %d tiles, base %s", cl, len(tiles), tiles[0])
			}
			for k, eq := range rep.Equal {
				t.Logf("classes %s bitwise equal: %v", k, eq)
			}
		})
	}
}

// TestFusedCUDAFaults: hc_up's stream 3 skipped (FAULT=1) and the bound
// variant's fp32 output left unwritten (FAULT=2) are caught, in the
// shared-memory and the register-only variants; gemm_q8's wrong group
// boundary (FAULT=1) too.
func TestFusedCUDAFaults(t *testing.T) {
	b := testBackend(t)
	hc := builtin.CUDAHcUpF16()
	for _, f := range []struct {
		fam   *kernel.Family
		tiles []string
		def   string
		want  []string
		shape kernel.Dims
	}{
		{hc, []string{"32_128_4.reg1", "32_128_4.reg1.bound1", "64_256_8"}, "FAULT=1", []string{"mixh", "mixed"}, kernel.Dims{"M": 37, "S": 40, "K": 72}},
		{hc, []string{"32_128_4.reg1.bound1", "64_128_4.bound1"}, "FAULT=2", []string{"mixed", "unwritten"}, kernel.Dims{"M": 37, "S": 40, "K": 72}},
		{builtin.CUDAGemmQ8F16(), []string{"32_64_2", "32_64_2.debug1"}, "FAULT=1", []string{"Y", "wdq"}, kernel.Dims{"M": 9, "N": 40, "K": 96}},
	} {
		rep := backendtest.RunClasses(t, b, f.fam, backendtest.ClassOptions{Shapes: []kernel.Dims{f.shape}, Tiles: f.tiles, Extra: []string{f.def}})
		all := strings.Join(rep.Failures, "\n")
		for _, w := range f.want {
			if !strings.Contains(all, w) {
				t.Errorf("%s %s: no failure mentions %q:\n%s", f.fam.Name, f.def, w, all)
			}
		}
		for _, tl := range append([]string{f.fam.Reference}, f.tiles...) {
			if !strings.Contains(all, "tile "+tl+":") {
				t.Errorf("%s %s: tile %s not caught:\n%s", f.fam.Name, f.def, tl, all)
			}
		}
		first, _, _ := strings.Cut(all, "\n")
		t.Logf("%s %s caught: %d failures, first: %s", f.fam.Name, f.def, len(rep.Failures), first)
	}
}

// TestFusedCUDADequant: the dequantised weights the kernel used equal
// builtin.DequantQ8 bit for bit.
func TestFusedCUDADequant(t *testing.T) {
	backendtest.DequantQ8Exact(t, testBackend(t), builtin.CUDAGemmQ8F16(), []string{"64_128_4", "16_32_1", "128_256_8"})
}

// TestGemmTailCUDA: gemm_f16's row-tail variants are bitwise identical to
// the reference tile 128_128_4 at M 1025 and 1983 (and small odd M).
func TestGemmTailCUDA(t *testing.T) {
	fam := builtin.CUDAGemmF16()
	var tiles []string
	for _, tl := range []string{"128_128_4", "64_128_4", "128_64_4", "64_64_2", "128_256_8", "32_128_2"} {
		for _, tail := range []string{".tail16", ".tail32"} {
			if _, err := fam.ParseTile(tl + tail); err == nil {
				tiles = append(tiles, tl+tail)
			}
		}
	}
	rep := backendtest.RunClasses(t, testBackend(t), fam, backendtest.ClassOptions{
		Shapes: []kernel.Dims{{"M": 1025, "N": 640, "K": 320}, {"M": 1983, "N": 256, "K": 512}, {"M": 37, "N": 48, "K": 100}}, Tiles: tiles, MaxSamples: 2048})
	t.Logf("%d row-tail tiles bitwise identical to %s: %v", len(tiles), fam.Reference, rep.Classes)
}
