package gemmbias

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

func newCPU(t *testing.T) *cpu.CPU {
	t.Helper()
	c, err := newCPUErr(t)
	if err != nil {
		if strings.Contains(err.Error(), "no C compiler") {
			t.Skip(err)
		}
		t.Fatal(err)
	}
	return c
}

// newCPUErr opens the CPU backend with a cache of the test's own.
func newCPUErr(t *testing.T) (*cpu.CPU, error) {
	return cpu.New(cpu.Options{CacheDir: t.TempDir()})
}

// TestConformance runs the shared suite on the user's family: every tile
// bitwise equal to 8_16, the float64 reference (with the bias) checked on
// every element, guards intact.
func TestConformance(t *testing.T) {
	backendtest.RunWith(t, newCPU(t), Family(), backendtest.Options{Shapes: []kernel.Dims{
		{"M": 1, "N": 1, "K": 1}, {"M": 37, "N": 48, "K": 100}, {"M": 70, "N": 33, "K": 9},
	}})
}

// TestSweep registers the family beside the built-ins and sweeps a workload
// whose shape names the new operator: every cell ALL BITWISE, the reference
// checked, every sample stored.
func TestSweep(t *testing.T) {
	c := newCPU(t)
	reg := builtin.New()
	if err := reg.Add(Family()); err != nil {
		t.Fatal(err)
	}
	w, err := workload.Parse("bias.yaml", []byte("name: bias\nm: [5, 33]\nshapes:\n  - {name: proj, op: gemm_bias_f16, n: 40, k: 24, calls: 2}\n  - {name: plain, n: 8, k: 8}\n"), workload.Options{Operators: reg})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "bias.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ex := tune.NewLocal(func(context.Context) (backend.Backend, error) { return c, nil }, reg)
	defer ex.Close()
	cfg := tune.Config{Families: reg.Of("cpu", "gemm_bias_f16"), Workload: w, Seed: 3,
		Measure: measure.Options{Rounds: 4, MinRounds: 4, Dispatches: 1}}
	sum, err := tune.Sweep(ctx, cfg, ex, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Cells != 2 || sum.Failures != 0 || sum.Prov.Operator != "gemm_bias_f16" || sum.Prov.Types != "X=f16,W=f16,b=f32,Y=f32" {
		t.Fatalf("summary %+v", sum)
	}
	cells, err := st.Cells(ctx, store.Filter{ProvKey: sum.Prov.Key()})
	if err != nil || len(cells) != 2 {
		t.Fatalf("cells %d, %v", len(cells), err)
	}
	for _, cr := range cells {
		if cr.Cell.Op != "gemm_bias_f16" || cr.Cell.Dims["N"] != 40 || cr.Cell.Flop != Operator().FLOPs(cr.Cell.Dims) {
			t.Errorf("cell %+v", cr.Cell)
		}
		if len(cr.Candidates) != len(Family().Tiles()) {
			t.Errorf("M=%d: %d candidates, want %d", cr.Cell.M, len(cr.Candidates), len(Family().Tiles()))
		}
		for _, cand := range cr.Candidates {
			if cand.Status != result.OK || !cand.Bitwise || cand.MaxErr > 1 || len(cand.Samples) != 4 || cand.Family != "gemm_bias_f16" {
				t.Errorf("M=%d %s: %s bitwise=%v maxErr=%v samples=%d %s", cr.Cell.M, cand.Tile, cand.Status, cand.Bitwise, cand.MaxErr, len(cand.Samples), cand.Detail)
			}
		}
	}
}

// TestPlantedBiasBug: a source that forgets the bias passes nothing.
func TestPlantedBiasBug(t *testing.T) {
	c := newCPU(t)
	ctx := context.Background()
	op := Operator()
	d := kernel.Dims{"M": 9, "N": 20, "K": 16}
	p, err := c.NewProblem(ctx, op, d, [][][]byte{op.GenInputs(1, d)})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	fam := Family()
	prog := backend.Program{Family: fam.Name, Source: strings.Replace(fam.Source, "acc + bias[n]", "acc", 1), Defines: []string{"TM=8", "TN=16"}}
	a, err := c.Compile(ctx, prog)
	if err != nil {
		t.Fatal(err)
	}
	plan, _ := fam.Plan(kernel.Params{"TM": 8, "TN": 16}, d)
	k, err := c.Load(ctx, "nobias", a, plan)
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	out, err := p.Run(ctx, k, 0)
	if err != nil {
		t.Fatal(err)
	}
	in := op.GenInputs(1, d)
	if r := verifyCheck(op, d, in, out[3]); r == nil {
		t.Error("a GEMM without its bias passed the float64 reference")
	}
}
