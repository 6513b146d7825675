// Package gemmbias is the worked example of docs/operators.md: a user's own
// family with a new operator signature, a GEMM with a bias operand,
//
//	Y[M,N] = X[M,K]·W[N,K]ᵀ + b[N]
//
// It takes one source file (src/gemm_bias.c; in a folder of its own, because
// a .c file beside Go files makes the go tool expect cgo) and this Go declaration. A program
// tunes it by adding it to a registry and handing that to tilefit's public
// package (cmd/biastune is that program):
//
//	reg := tilefit.Builtin()
//	if err := reg.Add(gemmbias.Family()); err != nil { ... }
//	os.Exit(tilefit.Main(ctx, reg, os.Args[1:], os.Stdout, os.Stderr))
//
// and a workload shape names the operator: {name: proj, op: gemm_bias_f16, n: 640, k: 2560}.
package gemmbias

import (
	_ "embed"
	"math"

	"github.com/tilefit/tilefit/builtin"
	"github.com/tilefit/tilefit/kernel"
)

//go:embed src/gemm_bias.c
var source string

// Operator returns gemm_bias_f16: X[M,K] f16, W[N,K] f16, b[N] f32 in;
// Y[M,N] f32 out. Reference: the exact float64 Σ_k x·w plus b[n]; bound
// K·2⁻²⁴·2·Σ|x·w| (the fp32 FMA chain) + 2⁻²⁴·(|Σ| + |b|)·2 (the add).
func Operator() *kernel.Operator {
	return &kernel.Operator{
		Name: "gemm_bias_f16",
		Doc:  "Y[M,N] = X[M,K]·W[N,K]ᵀ + b[N], fp16 X and W, fp32 bias and output",
		Dims: []string{"M", "N", "K"},
		Operands: []kernel.Operand{
			{Name: "X", Dir: kernel.In, DType: kernel.F16, Shape: []string{"M", "K"}},
			{Name: "W", Dir: kernel.In, DType: kernel.F16, Shape: []string{"N", "K"}},
			{Name: "b", Dir: kernel.In, DType: kernel.F32, Shape: []string{"N"}},
			{Name: "Y", Dir: kernel.Out, DType: kernel.F32, Shape: []string{"M", "N"}},
		},
		FLOPs: func(d kernel.Dims) float64 {
			return 2*float64(d["M"])*float64(d["N"])*float64(d["K"]) + float64(d["M"])*float64(d["N"])
		},
		// Bytes and Inputs are left nil: every operand moved once, and
		// kernel.UniformInputs (seeded, never zero).
		Reference: func(o *kernel.Operator, d kernel.Dims, in [][]byte, out, i int) (float64, float64) {
			n, k := d["N"], d["K"]
			sum, mag := builtin.DotF16(in[0], in[1], (i/n)*k, (i%n)*k, k)
			b := kernel.F32.Decode(in[2], i%n)
			bound := float64(k)*kernel.UnitF32*kernel.GemmSafety*mag + 2*kernel.UnitF32*(math.Abs(sum)+math.Abs(b))
			return sum + b, bound
		},
	}
}

// Family returns the CPU family gemm_bias_f16 (source gemm_bias.c).
func Family() *kernel.Family {
	return &kernel.Family{
		Name:       "gemm_bias_f16",
		Backend:    "cpu",
		Doc:        "Y = X·Wᵀ + b, one fmaf chain per element then one add, TM×TN blocks",
		Source:     source,
		SourceFile: "gemm_bias.c",
		Params: []kernel.Param{
			{Name: "TM", Values: []int{4, 8, 16, 32}, Sweep: []int{8, 4, 16, 32}, Doc: "rows of Y per block"},
			{Name: "TN", Values: []int{16, 64}, Sweep: []int{16, 64}, Doc: "columns of Y per block"},
		},
		Positional: []string{"TM", "TN"},
		Reference:  "8_16",
		Operator:   Operator(),
		Plan: func(p kernel.Params, d kernel.Dims) (kernel.Plan, error) {
			return kernel.Plan{Launches: []kernel.Launch{{Entry: "gemm_bias_f16",
				Args: kernel.Args(kernel.Operands("X", "W", "b", "Y"), kernel.DimArgs("M", "N", "K"))}}}, nil
		},
	}
}
