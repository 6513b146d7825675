package cuda

// GPU checks of gemm_q8_wgmma (gemm_q8_f16 on the Hopper mainloop) against
// the mma.sync family gemm_q8_f16 it shares a numerics class with: every
// tile bitwise equal to the mma.sync reference tile on Y (and, DEBUG=1, on
// the dequantised weights wdq), within the float64 bound, and exact on the
// operator's known-answer inputs. Skipped without an sm_90 device
// (docs/results/h200-q8h/README.md). The log goes to TILEFIT_OUT/hopper-q8.log.

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tilefit/tilefit/backend"
	"github.com/tilefit/tilefit/builtin"
	"github.com/tilefit/tilefit/kernel"
	"github.com/tilefit/tilefit/verify"
)

// q8WgmmaTestTiles are the gemm_q8_wgmma tiles the device test runs: the
// default sweep's and the variants of every parameter.
func q8WgmmaTestTiles() []string {
	return append(builtin.CUDAGemmQ8Wgmma().Tiles(), "128_128_2.cvt0", "128_256_2.cvt0", "128_128_2.pregs56", "128_256_2.pregs72", "128_128_2.pregs88", "128_160_2.pregs72.debug1", "128_256_2.pregs88.qch12", "128_128_2.pregs72.qch2", "64_128_1.qch12",
		"128_128_2.debug1", "64_128_1.debug1", "128_128_2.stages2", "128_128_2.grid0", "128_128_2.pdl1", "128_128_2.raster1",
		"256_128_2", "128_128_2.pingpong1.cvt0", "64_48_1", "128_32_2")
}

func TestHopperQ8(t *testing.T) {
	b := hopperBackend(t)
	ctx := context.Background()
	lg := newHopperLog(t, "hopper-q8.log")
	ref, fam := builtin.CUDAGemmQ8F16(), builtin.CUDAGemmQ8Wgmma()
	op := fam.Operator
	cs := []*compiled{{tile: "64_128_4", fam: ref}, {tile: "64_128_4.debug1", fam: ref}}
	for _, tl := range q8WgmmaTestTiles() {
		cs = append(cs, &compiled{tile: tl, fam: fam})
	}
	t0 := time.Now()
	compileTiles(ctx, b, cs, []string{"WATCHDOG=1"})
	lg.printf("gemm_q8: compiled %d programs in %.1f s", len(cs), time.Since(t0).Seconds())
	for _, c := range cs {
		if c.err != nil {
			t.Errorf("%s %s: %v", c.fam.Name, c.tile, c.err)
		} else if strings.Contains(c.art.Log, "warning") {
			lg.printf("%s %s: compiler: %s", c.fam.Name, c.tile, strings.TrimSpace(c.art.Log))
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	shapes := []kernel.Dims{{"M": 37, "N": 48, "K": 96, "G": 32}, {"M": 1, "N": 16, "K": 64, "G": 16}, {"M": 1025, "N": 320, "K": 320, "G": 32},
		{"M": 5, "N": 72, "K": 48, "G": 48}, {"M": 300, "N": 2560, "K": 2560, "G": 32}, {"M": 129, "N": 10240, "K": 256, "G": 128}}
	for _, d := range shapes {
		p, sets := newProblem(t, b, op, d, 1, 2)
		refs := verify.NewRefs(op, d, sets[0], 7, 4096)
		var base [][]byte // the reference tile's outputs (Y from 64_128_4, wdq from its DEBUG twin)
		for _, c := range cs {
			out, out2, label, ok := runQ8(ctx, t, lg, b, p, c, d)
			if !ok {
				continue
			}
			if base == nil {
				base = make([][]byte, len(op.Operands))
			}
			status := "ok"
			for j, o := range op.Operands {
				if o.Dir != kernel.Out || !o.Present(c.p) {
					continue
				}
				if base[j] == nil && c.fam == ref {
					base[j] = out[j]
				}
				if r := refs.Check(j, out[j]); r.Err != nil {
					t.Errorf("%s: %s", label, verify.Label(op, j, r.Err.Error()))
					status = "FLOAT64 FAIL"
				} else if r.Unwritten != 0 {
					t.Errorf("%s: %s: %d unwritten", label, o.Name, r.Unwritten)
				}
				if base[j] == nil {
					t.Errorf("%s: no reference output %s", label, o.Name)
				} else if n, msg := firstDiff(o, d, out[j], base[j]); n > 0 {
					t.Errorf("%s: %s not bitwise equal to gemm_q8_f16 64_128_4: %s", label, o.Name, msg)
					status = "DIFFERS"
				}
				if verify.Bitwise(o, d, out[j], out2[j]) == nil {
					t.Errorf("%s: sets 0 and 1 gave the same %s", label, o.Name)
				}
			}
			lg.printf("%s: %s", label, status)
		}
		p.Close()
	}
	// The known answer: exact integer inputs, power-of-two scales.
	for _, d := range []kernel.Dims{{"M": 129, "N": 272, "K": 2560, "G": 32}, {"M": 37, "N": 48, "K": 96, "G": 32}} {
		ex, drawn, err := verify.ExactInputs(op, d, 5)
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
		er := verify.NewExactRefs(op, d, ex, verify.Materialize(drawn), 1, 1<<20)
		for _, c := range cs {
			plan, err := c.fam.Plan(c.p, d)
			if err != nil {
				continue
			}
			k, err := b.Load(ctx, c.tile, c.art, plan)
			if err != nil {
				t.Fatalf("%v %s: load: %v", d, c.tile, err)
			}
			out, err := pe.Run(ctx, k, 0)
			k.Close()
			if err != nil {
				t.Fatalf("%v %s %s: %v", d, c.fam.Name, c.tile, err)
			}
			for j, o := range op.Operands {
				if o.Dir != kernel.Out || !o.Present(c.p) {
					continue
				}
				if m, err := er.Check(j, out[j]); err != nil || m != nil {
					t.Errorf("%v %s %s: exact %s: %v %v", d, c.fam.Name, c.tile, o.Name, m, err)
				}
			}
		}
		lg.printf("%v exact: %d programs checked", d, len(cs))
		pe.Close()
	}
}

// runQ8 runs compiled tile c on sets 0 and 1 of p.
func runQ8(ctx context.Context, t *testing.T, lg *hopperLog, b *Backend, p backend.Problem, c *compiled, d kernel.Dims) (out, out2 [][]byte, label string, ok bool) {
	plan, err := c.fam.Plan(c.p, d)
	if err != nil {
		lg.printf("%v %s %s: no plan (%v)", d, c.fam.Name, c.tile, err)
		return nil, nil, "", false
	}
	k, err := b.Load(ctx, c.tile, c.art, plan)
	if err != nil {
		t.Errorf("%v %s: load: %v", d, c.tile, err)
		return nil, nil, "", false
	}
	defer k.Close()
	out, err = p.Run(ctx, k, 0)
	if err == nil {
		out2, err = p.Run(ctx, k, 1)
	}
	if err != nil {
		t.Errorf("%v %s %s: %v", d, c.fam.Name, c.tile, err)
		if s := err.Error(); strings.Contains(s, "ILLEGAL") || strings.Contains(s, "LAUNCH_FAILED") || strings.Contains(s, "TRAP") {
			t.Fatalf("the context is lost after %s; stopping", c.tile)
		}
		return nil, nil, "", false
	}
	regs, local, smem := k.(*Kernel).Resources()
	return out, out2, fmt.Sprintf("%v %s %s [%s] regs %d local %d smem %d", d, c.fam.Name, c.tile, c.fam.Class(c.p), regs, local, smem), true
}
