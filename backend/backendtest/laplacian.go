package backendtest

import (
	"context"
	"testing"

	"github.com/tilefit/tilefit/backend"
	"github.com/tilefit/tilefit/kernel"
	"github.com/tilefit/tilefit/verify"
)

// DefaultLaplacianShapes are the square shapes (N = K) of the Laplacian
// check: N = 1 and 2 (where the Laplacian's coefficients meet), an odd
// size, a tail size, and a long K where all but three products of every
// element are zero.
var DefaultLaplacianShapes = []kernel.Dims{
	{"M": 3, "N": 1, "K": 1},
	{"M": 5, "N": 2, "K": 2},
	{"M": 37, "N": 48, "K": 48},
	{"M": 65, "N": 136, "K": 136},
	{"M": 19, "N": 1000, "K": 1000},
}

// runLaplacian is the analytic known-answer check of an operator that
// declares itself a plain GEMM (kernel.Operator.Gemm): on every square
// shape (o.Laplacian, default DefaultLaplacianShapes, plus the square
// shapes of o.Shapes), with W the periodic 1-D Laplacian and X random fp16
// (verify.LaplacianInputs), every tile and every vendor baseline must give
// each row's cyclic second difference exactly (verify.CheckLaplacian). A
// tile whose Plan refuses a shape (e.g. K not a multiple of 8) is skipped
// there with a log line.
func runLaplacian(ctx context.Context, t *testing.T, b backend.Backend, fam *kernel.Family, op *kernel.Operator,
	arts map[string]backend.Artifact, tiles []string, baselines []*kernel.Baseline, o Options) {
	t.Helper()
	shapes := o.Laplacian
	if shapes == nil {
		shapes = DefaultLaplacianShapes
	}
	seen := map[string]bool{}
	var square []kernel.Dims
	for _, given := range append(append([]kernel.Dims(nil), shapes...), o.Shapes...) {
		d, err := op.Resolve(given)
		if err != nil || verify.LaplacianApplies(op, d) != nil || seen[d.String()] {
			continue
		}
		seen[d.String()] = true
		square = append(square, d)
	}
	_, yi, _ := op.Operand(op.Gemm.Y)
	t.Run("laplacian", func(t *testing.T) {
		for si, d := range square {
			t.Run(shapeName(op, d), func(t *testing.T) {
				in, err := verify.LaplacianInputs(op, o.Seed*1000+uint64(si), d)
				if err != nil {
					t.Fatal(err)
				}
				p, err := b.NewProblem(ctx, op, d, [][][]byte{in})
				if err != nil {
					t.Fatalf("NewProblem: %v", err)
				}
				defer p.Close()
				exact := 0
				check := func(name string, k backend.Kernel) {
					out, err := p.Run(ctx, k, 0)
					if err != nil {
						t.Errorf("%s: %v", name, err)
						return
					}
					m, err := verify.CheckLaplacian(op, d, in, out[yi])
					switch {
					case err != nil:
						t.Errorf("%s: %v", name, err)
					case m != nil:
						t.Errorf("%s: Y = X·Lᵀ is not each row's cyclic second difference exactly: %s", name, m)
					default:
						exact++
					}
				}
				checked := 0
				for _, tile := range append([]string{fam.Reference}, tiles...) {
					if tile == fam.Reference && checked > 0 {
						continue
					}
					params, err := fam.ParseTile(tile)
					if err != nil {
						t.Fatalf("tile %s: %v", tile, err)
					}
					plan, err := fam.Plan(params, d)
					if err != nil {
						t.Logf("tile %s: plan refuses %v: %v", tile, d, err)
						continue
					}
					k, err := b.Load(ctx, tile, arts[tile], plan)
					if err != nil {
						t.Errorf("load %s: %v", tile, err)
						continue
					}
					check("tile "+tile, k)
					k.Close()
					checked++
				}
				for _, bl := range baselines {
					plan, err := bl.Plan(op, d)
					if err != nil {
						t.Errorf("baseline %s: plan: %v", bl.Name, err)
						continue
					}
					var art backend.Artifact
					if bl.Source != "" {
						if art, err = b.Compile(ctx, backend.Program{Family: bl.Name, Source: bl.Source, Defines: op.TypeDefines()}); err != nil {
							t.Errorf("baseline %s: %v", bl.Name, err)
							continue
						}
					}
					k, err := b.Load(ctx, bl.Name, art, plan)
					if err != nil {
						t.Errorf("baseline %s: %v", bl.Name, err)
						continue
					}
					check("baseline "+bl.Name, k)
					k.Close()
				}
				t.Logf("%d of %d tiles and baselines exact", exact, checked+len(baselines))
			})
		}
	})
}
