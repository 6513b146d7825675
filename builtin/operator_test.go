package builtin

import (
	. "github.com/tilefit/tilefit/kernel"
	"strings"
	"testing"
)

func TestGemmOperator(t *testing.T) {
	op := GemmF16()
	if got := op.Signature(); got != "gemm_f16(M,N,K): X[M,K] f16 in, W[N,K] f16 in, Y[M,N] f32|f16 out" {
		t.Errorf("Signature = %q", got)
	}
	d := Dims{"M": 3, "N": 5, "K": 7}
	if op.SetBytes(d) != 2*3*7+2*5*7+4*3*5 || op.FLOPs(d) != 2*3*5*7 || op.Types() != "X=f16,W=f16,Y=f32" || len(op.TypeDefines()) != 1 || op.TypeDefines()[0] != "Y_DTYPE=3" {
		t.Errorf("counts %d %v, types %s %v", op.SetBytes(d), op.FLOPs(d), op.Types(), op.TypeDefines())
	}
	h, err := op.Typed(map[string]DType{"Y": F16})
	if err != nil || h.Types() != "X=f16,W=f16,Y=f16" || h.TypeDefines()[0] != "Y_DTYPE=1" || op.Operands[2].DType != F32 {
		t.Errorf("Typed: %v %v (original %v)", h, err, op.Operands[2].DType)
	}
	if _, err := op.Typed(map[string]DType{"X": F32}); err == nil {
		t.Error("X typed f32 accepted")
	}
	// The typed operator's reference has the fp16 output's wider bound.
	in := op.GenInputs(1, d)
	_, b32 := op.Ref(d, in, 2, 4)
	_, b16 := h.Ref(d, in, 2, 4)
	if !(b16 > b32) {
		t.Errorf("fp16 bound %v not above fp32 bound %v", b16, b32)
	}
	if _, err := op.Resolve(Dims{"M": 1, "N": 2}); err == nil || !strings.Contains(err.Error(), "needs dimension K") {
		t.Errorf("Resolve without K: %v", err)
	}
	if _, err := op.Resolve(Dims{"M": 1, "N": 2, "K": 3, "S": 4}); err == nil {
		t.Error("Resolve with an unknown dimension accepted")
	}
	if p, err := ParseDims(d.String()); err != nil || p.String() != d.String() {
		t.Errorf("ParseDims round trip: %v %v", p, err)
	}
}

func TestRegistry(t *testing.T) {
	r := New()
	// cuda: the mma.sync, wgmma, small-M streaming and decode families.
	if len(r.Of("cpu", "gemm_f16")) != 1 || len(r.Of("cuda", "gemm_f16")) != 4 || len(r.Baselines("cpu", "gemm_f16")) != 1 {
		t.Fatalf("builtin registry: %d %d families", len(r.Of("cpu", "gemm_f16")), len(r.Of("cuda", "gemm_f16")))
	}
	if err := r.Add(CPUGemmF16()); err == nil {
		t.Error("a family registered twice")
	}
	other := CPUGemmF16()
	other.Name = "gemm_other"
	other.Operator = GemmF16()
	other.Operator.Operands = other.Operator.Operands[:2]
	other.Operator.Operands = append(other.Operator.Operands, Operand{Name: "Z", Dir: Out, DType: F32, Shape: []string{"M", "N"}})
	if err := r.Add(other); err == nil || !strings.Contains(err.Error(), "declared as") {
		t.Errorf("a second signature for gemm_f16: %v", err)
	}
	bad := CPUGemmF16()
	bad.Name, bad.Operator = "nop", &Operator{Name: "nop", Dims: []string{"N"}}
	if err := r.Add(bad); err == nil {
		t.Error("an incomplete operator accepted")
	}
	if _, err := r.Operator("nope"); err == nil || !strings.Contains(err.Error(), "known: gemm_f16") {
		t.Errorf("unknown operator: %v", err)
	}
}

func TestUniformInputs(t *testing.T) {
	ops := []Operand{{Name: "a", Dir: In, DType: F16, Shape: []string{"N"}}, {Name: "q", Dir: In, DType: I8, Shape: []string{"N"}},
		{Name: "f", Dir: In, DType: F32, Shape: []string{"N"}}, {Name: "h", Dir: In, DType: BF16, Shape: []string{"N"}}, {Name: "y", Dir: Out, DType: F32, Shape: []string{"N"}}}
	d := Dims{"N": 500}
	a, b := UniformInputs(ops, 9, d), UniformInputs(ops, 9, d)
	if len(a) != 4 {
		t.Fatalf("%d input buffers, want 4", len(a))
	}
	for j, dt := range []DType{F16, I8, F32, BF16} {
		if string(a[j]) != string(b[j]) {
			t.Errorf("%s: same seed, different inputs", dt)
		}
		for i := 0; i < 500; i++ {
			if v := dt.Decode(a[j], i); v == 0 || v != v || v < -127 || v > 127 {
				t.Fatalf("%s element %d = %v", dt, i, v)
			}
		}
	}
}

// TestUniformInputsPrefix: the inputs of a smaller M are prefixes of those
// of a larger M (rows of operands led by M), the other operands identical,
// whatever the order of the operands and their types.
func TestUniformInputsPrefix(t *testing.T) {
	ops := []Operand{
		{Name: "X", Dir: In, DType: F16, Shape: []string{"M", "K"}},
		{Name: "W", Dir: In, DType: F16, Shape: []string{"N", "K"}},
		{Name: "H", Dir: In, DType: BF16, Shape: []string{"M", "4", "N"}},
		{Name: "q", Dir: In, DType: I8, Shape: []string{"N"}},
		{Name: "Y", Dir: Out, DType: F32, Shape: []string{"M", "N"}},
	}
	big := UniformInputs(ops, 5, Dims{"M": 130, "N": 7, "K": 33})
	for _, m := range []int{1, 37, 129} {
		small := UniformInputs(ops, 5, Dims{"M": m, "N": 7, "K": 33})
		for j, rowBytes := range []int{2 * 33, 0, 2 * 4 * 7, 0} {
			want := big[j]
			if rowBytes > 0 {
				want = big[j][:m*rowBytes]
			}
			if string(small[j]) != string(want) {
				t.Errorf("M=%d: operand %s is not a prefix of (or equal to) M=130's", m, ops[j].Name)
			}
		}
	}
	// The streams differ: X and W of one seed are not the same numbers.
	d := Dims{"M": 7, "N": 7, "K": 33}
	in := UniformInputs(ops[:2], 5, d)
	if string(in[0]) == string(in[1]) {
		t.Error("X and W drawn from the same stream")
	}
	seen := map[uint64]bool{}
	for i := 0; i < 64; i++ {
		s := InputStream(i)
		if seen[s] {
			t.Fatalf("InputStream(%d) repeats", i)
		}
		seen[s] = true
	}
}
