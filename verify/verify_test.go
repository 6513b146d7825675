package verify

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/x448/float16"

	"github.com/tilefit/tilefit/builtin"
	"github.com/tilefit/tilefit/kernel"
)

// The helpers below keep these tests in gemm_f16's terms: a shape M×N×K,
// inputs X and W as fp16 bit patterns, output Y fp32 or fp16.
type shape struct{ M, N, K int }

func dimsOf(s shape) kernel.Dims { return kernel.Dims{"M": s.M, "N": s.N, "K": s.K} }

func gemmOp(f16 bool) *kernel.Operator {
	op := builtin.GemmF16()
	if f16 {
		op, _ = op.Typed(map[string]kernel.DType{"Y": kernel.F16})
	}
	return op
}

type inputSet struct{ X, W []uint16 }

func (in inputSet) bytes() [][]byte {
	enc := func(v []uint16) []byte {
		b := make([]byte, 2*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint16(b[2*i:], x)
		}
		return b
	}
	return [][]byte{enc(in.X), enc(in.W)}
}

func randomInputs(seed uint64, s shape) inputSet {
	raw := builtin.GemmF16().GenInputs(seed, dimsOf(s))
	dec := func(b []byte) []uint16 {
		v := make([]uint16, len(b)/2)
		for i := range v {
			v[i] = binary.LittleEndian.Uint16(b[2*i:])
		}
		return v
	}
	return inputSet{X: dec(raw[0]), W: dec(raw[1])}
}

func bitwise(want, got []byte, s shape, f16 bool) *Mismatch {
	return Bitwise(gemmOp(f16).Operands[2], dimsOf(s), want, got)
}

func check(in inputSet, s shape, out []byte, f16 bool, seed uint64, max int) Numeric {
	return Check(gemmOp(f16), dimsOf(s), in.bytes(), 2, out, seed, max)
}

func decodeOutput(b []byte, f16 bool) []float64 {
	if f16 {
		return Decode(b, kernel.F16)
	}
	return Decode(b, kernel.F32)
}

// gemm computes Y = X·Wᵀ in Go as an fp32 chain over k (through float64
// FMA, close enough for numeric tests), kStop terms only, and encodes it.
func gemm(in inputSet, s shape, f16 bool, kStop int) []byte {
	es := 4
	if f16 {
		es = 2
	}
	out := make([]byte, s.M*s.N*es)
	for m := 0; m < s.M; m++ {
		for n := 0; n < s.N; n++ {
			var acc float32
			for k := 0; k < kStop; k++ {
				x := float64(float16.Frombits(in.X[m*s.K+k]).Float32())
				w := float64(float16.Frombits(in.W[n*s.K+k]).Float32())
				acc = float32(math.FMA(x, w, float64(acc)))
			}
			i := m*s.N + n
			if f16 {
				binary.LittleEndian.PutUint16(out[2*i:], float16.Fromfloat32(acc).Bits())
			} else {
				binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(acc))
			}
		}
	}
	return out
}

func TestRandomInputs(t *testing.T) {
	s := shape{M: 3, N: 5, K: 7}
	a, b := randomInputs(1, s), randomInputs(1, s)
	c := randomInputs(2, s)
	if len(a.X) != 21 || len(a.W) != 35 {
		t.Fatalf("sizes %d %d", len(a.X), len(a.W))
	}
	same := true
	for i := range a.X {
		if a.X[i] != b.X[i] {
			t.Fatal("same seed gave different inputs")
		}
		if a.X[i] != c.X[i] {
			same = false
		}
	}
	if same {
		t.Error("different seeds gave the same X")
	}
	big := randomInputs(3, shape{M: 64, N: 64, K: 256})
	for _, v := range append(big.X, big.W...) {
		f := float16.Frombits(v).Float32()
		if f == 0 || f < -1 || f > 1 || math.IsNaN(float64(f)) {
			t.Fatalf("value %v out of [-1,1) or zero", f)
		}
	}
}

func TestBitwise(t *testing.T) {
	s := shape{M: 2, N: 3, K: 1}
	a := make([]byte, 24)
	binary.LittleEndian.PutUint32(a[4*4:], math.Float32bits(1.25))
	if m := bitwise(a, append([]byte(nil), a...), s, false); m != nil {
		t.Fatalf("equal outputs: %v", m)
	}
	b := append([]byte(nil), a...)
	Poison(b[16:20])
	m := bitwise(a, b, s, false)
	if m == nil {
		t.Fatal("no mismatch found")
	}
	want := "first difference at [1,1] (index 4): want 1.25 (0x3fa00000), got NaN (0xffffffff)"
	if m.String() != want {
		t.Errorf("String:\n got %s\nwant %s", m, want)
	}
	// −0 and +0 differ bitwise.
	c := append([]byte(nil), a...)
	binary.LittleEndian.PutUint32(c, 0x80000000)
	if m := bitwise(a, c, s, false); m == nil || m.Index != 0 {
		t.Errorf("-0 vs +0: %v", m)
	}
	// fp16 formatting and short outputs.
	h := []byte{0x00, 0x3d, 0x00, 0x00}
	g := []byte{0x00, 0x3d, 0xff, 0xff}
	m = bitwise(h, g, shape{M: 1, N: 2, K: 1}, true)
	if m == nil || m.String() != "first difference at [0,1] (index 1): want 0 (0x0000), got NaN (0xffff)" {
		t.Errorf("fp16: %v", m)
	}
	if m := bitwise(h, h[:2], shape{M: 1, N: 2, K: 1}, true); m == nil || m.Index != 1 {
		t.Errorf("short output: %v", m)
	}
}

func TestCheck(t *testing.T) {
	for _, f16 := range []bool{false, true} {
		for _, s := range []shape{{M: 1, N: 1, K: 1}, {M: 37, N: 48, K: 100}, {M: 20, N: 1, K: 320}, {M: 9, N: 70, K: 1000}} {
			in := randomInputs(7, s)
			out := gemm(in, s, f16, s.K)
			r := check(in, s, out, f16, 1, 1<<20)
			if r.Err != nil || r.Checked != s.M*s.N || r.MaxErr > 1 {
				t.Errorf("f16=%v %v: correct output rejected: %+v", f16, s, r)
			}
			// Sampled: maxSamples + last row + last column at most.
			r = check(in, s, out, f16, 1, 5)
			if s.M*s.N > 5 && (r.Checked > 5+s.M+s.N || r.Checked < s.M+s.N-1) {
				t.Errorf("f16=%v %v: sampled %d elements", f16, s, r.Checked)
			}
			if r.Err != nil {
				t.Errorf("f16=%v %v: sampled check failed: %v", f16, s, r.Err)
			}
		}
	}
}

func TestCheckCatches(t *testing.T) {
	s := shape{M: 37, N: 48, K: 100}
	in := randomInputs(11, s)
	good := gemm(in, s, false, s.K)

	// A K loop that stops one step early.
	short := gemm(in, s, false, s.K-1)
	if r := check(in, s, short, false, 1, 1<<20); r.Err == nil || r.First == nil || r.MaxErr <= 1 {
		t.Errorf("short K loop passed: %+v", r)
	}
	// The same, seen only by sampling (the last row and column are always checked).
	if r := check(in, s, short, false, 1, 3); r.Err == nil {
		t.Errorf("short K loop passed the sampled check: %+v", r)
	}

	// A tail row left unwritten.
	un := append([]byte(nil), good...)
	Poison(un[36*48*4:])
	r := check(in, s, un, false, 1, 16)
	if r.Unwritten != 48 || r.Err == nil || r.First == nil || r.First.Row != 36 || r.First.Col != 0 {
		t.Errorf("unwritten row: %+v", r)
	}
	if !strings.Contains(r.Err.Error(), "48 of 1776 elements unwritten") {
		t.Errorf("unwritten row error: %v", r.Err)
	}

	// A NaN, and an Inf.
	for _, bits := range []uint32{0x7fc00000, 0x7f800000} {
		bad := append([]byte(nil), good...)
		binary.LittleEndian.PutUint32(bad[4*100:], bits)
		if r := check(in, s, bad, false, 1, 16); r.Err == nil || r.First.Index != 100 {
			t.Errorf("bits %#x passed: %+v", bits, r)
		}
	}

	// One element off by a lot, fp16.
	s16 := shape{M: 5, N: 6, K: 40}
	in16 := randomInputs(12, s16)
	o16 := gemm(in16, s16, true, s16.K)
	v := float16.Frombits(binary.LittleEndian.Uint16(o16[2*7:])).Float32()
	binary.LittleEndian.PutUint16(o16[2*7:], float16.Fromfloat32(v+0.5).Bits())
	if r := check(in16, s16, o16, true, 1, 1<<20); r.Err == nil || r.First.Index != 7 {
		t.Errorf("fp16 error passed: %+v", r)
	}

	// A short buffer.
	if r := check(in, s, good[:10], false, 1, 16); r.Err == nil {
		t.Error("short output passed")
	}
}

func TestDecode(t *testing.T) {
	b := make([]byte, 8)
	binary.LittleEndian.PutUint32(b, math.Float32bits(-2.5))
	binary.LittleEndian.PutUint32(b[4:], math.Float32bits(3))
	if v := decodeOutput(b, false); len(v) != 2 || v[0] != -2.5 || v[1] != 3 {
		t.Errorf("fp32: %v", v)
	}
	if v := decodeOutput([]byte{0x00, 0x3c, 0x00, 0xc0}, true); len(v) != 2 || v[0] != 1 || v[1] != -2 {
		t.Errorf("fp16: %v", v)
	}
}

func TestReference(t *testing.T) {
	s := shape{M: 1, N: 1, K: 3}
	h := func(f float32) uint16 { return float16.Fromfloat32(f).Bits() }
	in := inputSet{X: []uint16{h(1), h(2), h(-0.5)}, W: []uint16{h(0.25), h(1), h(4)}}
	want, bound := builtin.GemmF16().Ref(dimsOf(s), in.bytes(), 2, 0)
	if want != 0.25 || bound != 3*kernel.UnitF32*kernel.GemmSafety*(0.25+2+2) {
		t.Errorf("Reference = %v ± %v, want 0.25 ± 3·2⁻²⁴·2·4.25", want, bound)
	}
}

// TestRefsComputesOnce: one Refs checks several outputs against one
// reference, computed once per output operand (on several goroutines),
// and reports what a fresh Check reports, first failure included.
func TestRefsComputesOnce(t *testing.T) {
	s := shape{M: 70, N: 90, K: 64}
	in := randomInputs(5, s)
	op := gemmOp(false)
	var calls atomic.Int64
	base := op.ReferenceBounds
	counted := *op
	counted.ReferenceBounds = func(o *kernel.Operator, d kernel.Dims, in [][]byte, out, i int) kernel.RefValue {
		calls.Add(1)
		return base(o, d, in, out, i)
	}
	good := gemm(in, s, false, s.K)
	bad := append([]byte(nil), good...)
	// Two elements off, one in the last row (always checked): the first in
	// visiting order is reported.
	for _, i := range []int{6215, 4000} {
		v := math.Float32frombits(binary.LittleEndian.Uint32(bad[4*i:]))
		binary.LittleEndian.PutUint32(bad[4*i:], math.Float32bits(v+1))
	}
	for _, max := range []int{1 << 20, 500} {
		calls.Store(0)
		r := NewRefs(&counted, dimsOf(s), in.bytes(), 3, max)
		g := r.Check(2, good)
		first := calls.Load()
		b := r.Check(2, bad)
		if calls.Load() != first {
			t.Errorf("max %d: the reference was computed again (%d calls, then %d)", max, first, calls.Load())
		}
		if first != int64(g.Checked) {
			t.Errorf("max %d: %d reference calls for %d checked elements", max, first, g.Checked)
		}
		if g.Err != nil {
			t.Errorf("max %d: good output failed: %v", max, g.Err)
		}
		want := check(in, s, bad, false, 3, max)
		if b.Err == nil || want.Err == nil || b.Err.Error() != want.Err.Error() || b.MaxErr != want.MaxErr || b.Checked != want.Checked {
			t.Errorf("max %d: shared reference says %v (max %g, %d checked), a fresh Check %v (max %g, %d checked)",
				max, b.Err, b.MaxErr, b.Checked, want.Err, want.MaxErr, want.Checked)
		}
		if max > s.M*s.N && (b.First == nil || b.First.Index != 4000) {
			t.Errorf("max %d: first failure %+v, want element 4000", max, b.First)
		}
	}
}

// TestSpecialsFindsEveryNonFinite: the raw-word scan of Check finds
// exactly the elements that decode to NaN or ±Inf (the poison included),
// for every floating-point type, on random bit patterns with such values
// planted; none for an integer type.
func TestSpecialsFindsEveryNonFinite(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, dt := range []kernel.DType{kernel.F32, kernel.F16, kernel.BF16, kernel.I8} {
		es := dt.Size()
		n := 5000
		b := make([]byte, n*es)
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		for k := 0; k < 50; k++ { // plant poison (all ones) and exponent-all-ones patterns
			i := r.IntN(n)
			for j := 0; j < es; j++ {
				b[i*es+j] = 0xFF
			}
		}
		var want []int
		for i := 0; i < n; i++ {
			if v := dt.Decode(b, i); dt.Float() && (math.IsNaN(v) || math.IsInf(v, 0)) {
				want = append(want, i)
			}
		}
		got := specials(dt, b, n)
		if len(got) != len(want) {
			t.Fatalf("%s: %d specials, want %d", dt, len(got), len(want))
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("%s: special %d is element %d, want %d", dt, i, got[i], want[i])
			}
		}
		if dt.Float() && len(want) < 50 {
			t.Errorf("%s: only %d non-finite elements planted", dt, len(want))
		}
	}
}
