package gemmbias

import (
	_ "embed"
	"fmt"

	"github.com/tilefit/tilefit/builtin"
	"github.com/tilefit/tilefit/kernel"
)

//go:embed src/gemm_bias_wgmma.cu
var hopperSource string

// HopperEntry is the Hopper family's kernel symbol.
const HopperEntry = "gemm_bias_wgmma"

// hopperParams are the parameters of gemm_wgmma the Hopper family keeps:
// the tile, the consumers, the pipeline and the walk (K never split, no
// swap, no cluster).
var hopperParams = map[string]bool{"BM": true, "BN": true, "CONSUMERS": true, "PINGPONG": true, "STAGES": true,
	"RASTER": true, "GROUP": true, "GRID": true, "PDL": true}

// HopperFamily returns the CUDA family gemm_bias_wgmma (sm_90a): this
// package's operator on tilefit's Hopper mainloop, through the public API
// alone. Its stage is gemm_wgmma's (X's BM rows and W's BN rows by TMA), so
// it takes gemm_wgmma's parameters, Restrict and Plan
// (builtin.CUDAGemmWgmma) and changes only the entry and its arguments (b
// before Y); its source is builtin.WgmmaFamilySource around
// src/gemm_bias_wgmma.cu, whose epilogue adds b[n] to each fp32
// accumulator (the dot product first, then one fp32 add: the reference's
// order) and stores Y. Every tile is bitwise fp32(gemm_wgmma's Y + b[n]),
// one numerics class (the family's name). Needs K % 8 == 0.
func HopperFamily() *kernel.Family {
	g := builtin.CUDAGemmWgmma()
	var params []kernel.Param
	for _, p := range g.Params {
		if hopperParams[p.Name] {
			params = append(params, p)
		}
	}
	params = append(params, kernel.Param{Name: "BPRE", Values: []int{0, 1}, Sweep: []int{0},
		Doc: "1: the epilogue loads all of a thread's BN/4 bias values before its stores; 0: a pair per column block, between the stores (the measured default: 15.5 µs at M 256 N 2560 against gemm_wgmma's 10.9 in the same run, a cost the serial loads may explain; BPRE 1 has not run on a device yet)"})
	return &kernel.Family{
		Name:       "gemm_bias_wgmma",
		Backend:    "cuda",
		Doc:        "Y = X·Wᵀ + b on tilefit's Hopper mainloop (sm_90a): gemm_wgmma's TMA stages and wgmma k loop (k ascending in 16s), the bias added to the fp32 accumulators in the epilogue; needs K % 8 == 0",
		Source:     builtin.WgmmaFamilySource("", "gemm_bias_wgmma.cu", hopperSource),
		SourceFile: "gemm_bias_wgmma.cu",
		Params:     params,
		Positional: g.Positional,
		Reference:  g.Reference,
		Restrict: func(p kernel.Params) error {
			if b := p["BPRE"]; b != 0 && b != 1 {
				return fmt.Errorf("BPRE = %d (want 0 or 1)", b)
			}
			return g.Restrict(p)
		},
		Operator: Operator(),
		Plan:     hopperPlan(g),
	}
}

// hopperPlan is gemm_wgmma's plan with the entry HopperEntry and the
// arguments (tmX, tmW, b, Y, M, N, K).
func hopperPlan(g *kernel.Family) func(kernel.Params, kernel.Dims) (kernel.Plan, error) {
	return func(p kernel.Params, d kernel.Dims) (kernel.Plan, error) {
		pl, err := g.Plan(p, d)
		if err != nil {
			return kernel.Plan{}, err
		}
		if len(pl.Launches) != 1 || len(pl.Scratch) != 0 {
			return kernel.Plan{}, fmt.Errorf("gemm_bias_wgmma: gemm_wgmma's plan of %v has %d launches, want one", p, len(pl.Launches))
		}
		l := &pl.Launches[0]
		var args []kernel.Arg
		for _, a := range l.Args {
			if a.Kind == kernel.ArgOperand && a.Name == "Y" {
				args = append(args, kernel.Arg{Kind: kernel.ArgOperand, Name: "b"})
			}
			args = append(args, a)
		}
		l.Entry, l.Args = HopperEntry, args
		return pl, nil
	}
}

// Families returns the package's families: the CPU family and the Hopper
// one.
func Families() []*kernel.Family { return []*kernel.Family{Family(), HopperFamily()} }
