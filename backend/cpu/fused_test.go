package cpu_test

// Tests of the fused operators (hc_up_f16, swiglu_f16, gemm_q8_f16) on the
// CPU backend: the class-aware conformance suite on small odd shapes (every
// tile and row-tail variant), planted faults in the fused epilogue caught,
// the in-kernel dequantisation equal to builtin.DequantQ8 bit for bit, and a
// sweep of all three operators through tune.Sweep ending ALL BITWISE within
// each numerics class.

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tilefit/tilefit/backend"
	"github.com/tilefit/tilefit/backend/backendtest"
	"github.com/tilefit/tilefit/backend/cpu"
	"github.com/tilefit/tilefit/builtin"
	"github.com/tilefit/tilefit/kernel"
	"github.com/tilefit/tilefit/measure"
	"github.com/tilefit/tilefit/result"
	"github.com/tilefit/tilefit/store"
	"github.com/tilefit/tilefit/tune"
	"github.com/tilefit/tilefit/workload"
)

// fusedCPU returns a CPU backend with the default cache (repeated runs reuse
// compiled tiles), skipping the test without a C compiler.
func fusedCPU(t *testing.T) *cpu.CPU {
	t.Helper()
	c, err := cpu.New(cpu.Options{})
	if err != nil {
		if strings.Contains(err.Error(), "no C compiler") {
			t.Skip(err)
		}
		t.Fatal(err)
	}
	return c
}

func baselinesOf(backend, op string) []*kernel.Baseline {
	return builtin.New().Baselines(backend, op)
}

// fusedShapes are small, odd shapes per operator: M not a multiple of any
// TM (so row tails run), widths not multiples of the tiles, K not a
// multiple of 8 where the operator allows it.
var fusedShapes = map[string][]kernel.Dims{
	"hc_up_f16":   {{"M": 37, "S": 40, "K": 72}, {"M": 1, "S": 17, "K": 9}, {"M": 70, "S": 64, "K": 100}},
	"swiglu_f16":  {{"M": 37, "N": 72, "K": 88}, {"M": 3, "N": 5, "K": 7}, {"M": 70, "N": 33, "K": 130}},
	"gemm_q8_f16": {{"M": 37, "N": 72, "K": 96}, {"M": 5, "N": 9, "K": 30, "G": 3}, {"M": 70, "N": 33, "K": 160, "G": 16}},
}

// TestFusedConformance: every tile (and row-tail variant) of each fused CPU
// family on each shape: every present output checked against the float64
// reference, bitwise identical within its numerics class, baselines right.
func TestFusedConformance(t *testing.T) {
	c := fusedCPU(t)
	for _, fam := range []*kernel.Family{builtin.CPUHcUpF16(), builtin.CPUSwigluF16(), builtin.CPUGemmQ8F16()} {
		t.Run(fam.Name, func(t *testing.T) {
			rep := backendtest.RunClasses(t, c, fam, backendtest.ClassOptions{
				Shapes: fusedShapes[fam.Operator.Name], Tiles: backendtest.WithTails(fam), MaxSamples: 1 << 20,
				Baselines: baselinesOf("cpu", fam.Operator.Name)})
			for cl, tiles := range rep.Classes {
				t.Logf("class %q: %d tiles, base %s", cl, len(tiles), tiles[0])
			}
			for k, eq := range rep.Equal {
				t.Logf("classes %s bitwise equal: %v", k, eq)
			}
			if fam.Name == "swiglu_f16" && len(rep.Classes) != 2 {
				t.Errorf("swiglu classes %v, want fused and chain", rep.Classes)
			}
		})
	}
}

// TestFusedFaults: planted faults are caught — hc_up's stream 3 skipped in
// the mix (FAULT=1) fails the float64 reference of mixh and mixed; the fp32
// output left unwritten in the bound variant (FAULT=2) is reported
// unwritten; gemm_q8's wrong group boundary (FAULT=1) fails the reference
// of Y and the exact check of wdq.
func TestFusedFaults(t *testing.T) {
	c := fusedCPU(t)
	hc := builtin.CPUHcUpF16()
	shapes := []kernel.Dims{{"M": 37, "S": 40, "K": 72}}
	for _, f := range []struct {
		fam   *kernel.Family
		tiles []string
		def   string
		want  []string // each must appear in some failure
	}{
		{hc, []string{"32_128_2", "32_128_2.bound1", "16_64_1.bound1"}, "FAULT=1", []string{"mixh", "mixed"}},
		{hc, []string{"32_128_2.bound1", "64_256_2.bound1"}, "FAULT=2", []string{"mixed", "unwritten"}},
		{builtin.CPUGemmQ8F16(), []string{"32_64_2", "32_64_2.debug1"}, "FAULT=1", []string{"Y", "wdq"}},
	} {
		sh := shapes
		if f.fam.Operator.Name == "gemm_q8_f16" {
			sh = []kernel.Dims{{"M": 9, "N": 40, "K": 96}}
		}
		rep := backendtest.RunClasses(t, c, f.fam, backendtest.ClassOptions{Shapes: sh, Tiles: f.tiles, Extra: []string{f.def}})
		all := strings.Join(rep.Failures, "\n")
		for _, w := range f.want {
			if !strings.Contains(all, w) {
				t.Errorf("%s %s: no failure mentions %q:\n%s", f.fam.Name, f.def, w, all)
			}
		}
		// Every tile (the reference included) must fail.
		for _, tl := range append([]string{f.fam.Reference}, f.tiles...) {
			if !strings.Contains(all, "tile "+tl+":") {
				t.Errorf("%s %s: tile %s not caught:\n%s", f.fam.Name, f.def, tl, all)
			}
		}
		t.Logf("%s %s caught: %d failures, first: %s", f.fam.Name, f.def, len(rep.Failures), firstLine(all))
	}
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// TestQ8DequantExact: the dequantised operand the kernel used (DEBUG=1
// writes it as wdq) equals builtin.DequantQ8 bit for bit on every element,
// with scales that put products in fp16's subnormal range; and DEBUG does
// not change Y.
func TestQ8DequantExact(t *testing.T) {
	backendtest.DequantQ8Exact(t, fusedCPU(t), builtin.CPUGemmQ8F16(), []string{"16_32_2", "64_128_1"})
}

// TestFusedSweep sweeps a workload of the three fused operators through
// tune.Sweep (compile, verify, measure, store): every family tile OK, the
// first class's tiles bitwise with the reference, the chain class verified
// among itself, every sample stored.
func TestFusedSweep(t *testing.T) {
	c := fusedCPU(t)
	reg := builtin.New()
	w, err := workload.Parse("fused.yaml", []byte(`name: fused
m: [19, 40]
shapes:
  - {name: up, op: hc_up_f16, s: 40, k: 24, calls: 96}
  - {name: shgu, op: swiglu_f16, n: 40, k: 56, calls: 48}
  - {name: q8, op: gemm_q8_f16, n: 24, k: 64, calls: 12}
`), workload.Options{Operators: reg})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "fused.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ex := tune.NewLocal(func(context.Context) (backend.Backend, error) { return c, nil }, reg)
	defer ex.Close()
	for _, opName := range []string{"hc_up_f16", "swiglu_f16", "gemm_q8_f16"} {
		cfg := tune.Config{Families: reg.Of("cpu", opName), Workload: w, Seed: 5, Baselines: reg.Baselines("cpu", opName),
			Measure: measure.Options{Rounds: 2, MinRounds: 2, Dispatches: 1}}
		sum, err := tune.Sweep(ctx, cfg, ex, st, nil)
		if err != nil {
			t.Fatalf("%s: %v", opName, err)
		}
		if sum.Cells != 2 || sum.Failures != 0 || sum.Prov.Operator != opName {
			t.Fatalf("%s: summary %+v", opName, sum)
		}
		cells, err := st.Cells(ctx, store.Filter{ProvKey: sum.Prov.Key()})
		if err != nil || len(cells) != 2 {
			t.Fatalf("%s: cells %d, %v", opName, len(cells), err)
		}
		fam := reg.Of("cpu", opName)[0]
		for _, cr := range cells {
			if cr.Cell.Op != opName || cr.Cell.Flop != fam.Operator.FLOPs(cr.Cell.Dims) {
				t.Errorf("%s: cell %+v", opName, cr.Cell)
			}
			classes, notBitwise := map[string]int{}, map[string]int{}
			for _, cand := range cr.Candidates {
				if cand.Status != result.OK || len(cand.Samples) != 2 {
					t.Errorf("%s M=%d %s: %s samples=%d %s", opName, cr.Cell.M, cand.Tile, cand.Status, len(cand.Samples), cand.Detail)
					continue
				}
				if cand.Vendor {
					continue
				}
				p, err := fam.ParseTile(cand.Tile)
				if err != nil {
					t.Fatal(err)
				}
				cl := backendtest.NumericsClass(fam, p)
				classes[cl]++
				// The reference tile's class is bitwise with the reference;
				// another class (the chain) was verified among itself and is
				// marked bitwise only if its base equals the reference.
				refP, _ := fam.ParseTile(fam.Reference)
				if cl == backendtest.NumericsClass(fam, refP) && !cand.Bitwise {
					t.Errorf("%s M=%d %s: not bitwise with the reference of its class", opName, cr.Cell.M, cand.Tile)
				}
				if !cand.Bitwise {
					notBitwise[cl]++
				}
			}
			if n := len(cr.Candidates); n < len(fam.Tiles()) {
				t.Errorf("%s M=%d: %d candidates, want ≥ %d", opName, cr.Cell.M, n, len(fam.Tiles()))
			}
			t.Logf("%s M=%d: %d candidates, classes %v, not bitwise with the reference %v", opName, cr.Cell.M, len(cr.Candidates), classes, notBitwise)
		}
	}
}

// TestGemmTailConformance: gemm_f16's row-tail variants (TAIL 16, 32) are
// bitwise identical to the reference tile at M not a multiple of TM, and
// pass the float64 reference.
func TestGemmTailConformance(t *testing.T) {
	fam := builtin.CPUGemmF16()
	tiles := []string{"64_128_2.tail16", "64_128_2.tail32", "128_64_2.tail32", "32_64_1.tail16", "128_256_2.tail16"}
	rep := backendtest.RunClasses(t, fusedCPU(t), fam, backendtest.ClassOptions{
		Shapes: []kernel.Dims{{"M": 37, "N": 48, "K": 100}, {"M": 131, "N": 33, "K": 72}, {"M": 200, "N": 65, "K": 24}}, Tiles: tiles})
	if len(rep.Classes) != 1 || len(rep.Classes["gemm_f16"]) != len(tiles)+1 {
		t.Errorf("classes %v", rep.Classes)
	}
}
