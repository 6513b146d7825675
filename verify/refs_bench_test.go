package verify

import (
	"testing"

	"github.com/tilefit/tilefit/builtin"
	"github.com/tilefit/tilefit/kernel"
)

// BenchmarkRefsLongK is the float64 reference of one hc_read cell of the
// strata preset (gemm_f16, M 256, N 324, K 10240, fp16 Y, 65536 sampled
// elements plus the last row and column): what the first class base's
// float64 check waits on.
func BenchmarkRefsLongK(b *testing.B) {
	op, err := builtin.GemmF16().Typed(map[string]kernel.DType{"Y": kernel.F16})
	if err != nil {
		b.Fatal(err)
	}
	benchRefs(b, op, kernel.Dims{"M": 256, "N": 324, "K": 10240})
}

// BenchmarkRefsLongKM2048 is BenchmarkRefsLongK at M 2048: X alone is
// 40 MiB, past every cache, so the order the sampled elements are
// computed in decides how often its rows come from memory.
func BenchmarkRefsLongKM2048(b *testing.B) {
	op, err := builtin.GemmF16().Typed(map[string]kernel.DType{"Y": kernel.F16})
	if err != nil {
		b.Fatal(err)
	}
	benchRefs(b, op, kernel.Dims{"M": 2048, "N": 324, "K": 10240})
}

// BenchmarkRefsSwiGLU is the float64 reference of a Wshgu cell (swiglu_f16,
// M 256, N 640, K 2560): two dot products an element.
func BenchmarkRefsSwiGLU(b *testing.B) {
	benchRefs(b, builtin.SwigluF16(), kernel.Dims{"M": 256, "N": 640, "K": 2560})
}

func benchRefs(b *testing.B, op *kernel.Operator, d kernel.Dims) {
	in := kernel.UniformInputs(op.Operands, 7, d)
	out := len(op.Operands) - 1
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r := NewRefs(op, d, in, 9, 1<<16)
		if _, err := r.Indices(out); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDotF16 is one reference dot product at K 10240 (builtin.DotF16,
// the float64 reference's inner loop); ns/op ÷ 10240 is the cost a term.
func BenchmarkDotF16(b *testing.B) {
	const k = 10240
	d := kernel.Dims{"M": 1, "N": 1, "K": k}
	in := kernel.UniformInputs(builtin.GemmF16().Operands, 3, d)
	b.ResetTimer()
	var s float64
	for i := 0; i < b.N; i++ {
		v, _ := builtin.DotF16(in[0], in[1], 0, 0, k)
		s += v
	}
	if s == 0 {
		b.Log(s)
	}
}

// BenchmarkRefsHcUp is the float64 reference of an hc_up cell of the
// strata preset at M 512 (S 2560, K 320; 65536 sampled mix elements, four
// dot products and the mix each), with and without the unfused bound's
// second reference.
func BenchmarkRefsHcUp(b *testing.B) {
	d := kernel.Dims{"M": 512, "S": 2560, "K": 320}
	b.Run("fused", func(b *testing.B) { benchRefs(b, builtin.HcUpF16(), d) })
	b.Run("unfused", func(b *testing.B) { benchRefs(b, builtin.HcUpF16().WithUnfusedBound(), d) })
}
