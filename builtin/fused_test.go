package builtin

import (
	"encoding/binary"
	. "github.com/tilefit/tilefit/kernel"
	"math"
	"strings"
	"testing"

	"github.com/x448/float16"
)

// f16s returns fp16 little-endian bytes of vs (each exactly representable).
func f16s(t *testing.T, vs ...float64) []byte {
	t.Helper()
	b := make([]byte, 2*len(vs))
	for i, v := range vs {
		h := float16.Fromfloat32(float32(v))
		if float64(h.Float32()) != v {
			t.Fatalf("%g is not an fp16 value", v)
		}
		binary.LittleEndian.PutUint16(b[2*i:], h.Bits())
	}
	return b
}

// TestHcUpReferenceByHand: M=1, S=1, K=2.
// X = [1, 0.5]; W rows (c = 0..3) = [1,1], [2,0], [0,4], [-1,1]
// → y = 1.5, 2, 2, -0.5; H = [1, 0.5, -1, 2]
// → mix = ¼·(1.5·1 + 2·0.5 + 2·(−1) + (−0.5)·2) = ¼·(−0.5) = −0.125.
func TestHcUpReferenceByHand(t *testing.T) {
	op := HcUpF16()
	d := Dims{"M": 1, "S": 1, "K": 2}
	in := [][]byte{f16s(t, 1, 0.5), f16s(t, 1, 1, 2, 0, 0, 4, -1, 1), f16s(t, 1, 0.5, -1, 2)}
	_, mixh, _ := op.Operand("mixh")
	_, mixed, _ := op.Operand("mixed")
	want, b32 := op.Ref(d, in, mixed, 0)
	if want != -0.125 {
		t.Errorf("mix = %g, want -0.125", want)
	}
	// ¼·Σ|h_c|·K·2⁻²⁴·2·Σ|x·w| + ¼·8·2⁻²⁴·Σ|y·h| (+2⁻¹²⁶):
	// Σ|x·w| per stream = 1.5, 2, 2, 1.5; Σ|h·mag| = 1.5 + 1 + 2 + 3 = 7.5;
	// Σ|y·h| = 1.5 + 1 + 2 + 1 = 5.5.
	wantB := 0.25*7.5*2*2*UnitF32 + 0.25*8*UnitF32*5.5 + tinyF32
	if math.Abs(b32-wantB) > 1e-20 {
		t.Errorf("bound %g, want %g", b32, wantB)
	}
	w16, b16 := op.Ref(d, in, mixh, 0)
	if w16 != -0.125 || b16 <= b32 || b16 > b32+0.125*UnitF16*1.01+HalfSubF16+1e-12 {
		t.Errorf("mixh reference %g ± %g", w16, b16)
	}
	if got := op.FLOPs(d); got != 2*1*4*1*2+8 {
		t.Errorf("FLOPs %g", got)
	}
}

// TestSwigluReferenceByHand: M=N=K=1, X=2, Wg=1, Wu=0.5 → g=2, u=1,
// h = 2/(1+e^−2) = 1.7615941559557649.
func TestSwigluReferenceByHand(t *testing.T) {
	op := SwigluF16()
	d := Dims{"M": 1, "N": 1, "K": 1}
	in := [][]byte{f16s(t, 2), f16s(t, 1), f16s(t, 0.5)}
	want, bound := op.Ref(d, in, 3, 0)
	if math.Abs(want-1.7615941559557649) > 1e-15 {
		t.Errorf("h = %.17g", want)
	}
	// The fp16 rounding dominates: 2⁻¹¹·1.76 ≈ 8.6e-4; the fp32 part is tiny.
	if bound < UnitF16*1.76 || bound > UnitF16*1.77+1e-5 {
		t.Errorf("bound %g", bound)
	}
	// A second element: row 0 of X times row 1 of the weights.
	d = Dims{"M": 1, "N": 2, "K": 2}
	in = [][]byte{f16s(t, 1, -1), f16s(t, 0, 0, 1, 2), f16s(t, 0, 0, 3, 1)}
	// g = 1 − 2 = −1, u = 3 − 1 = 2 → h = −1/(1+e)·2.
	want, _ = op.Ref(d, in, 3, 1)
	if math.Abs(want-(-2/(1+math.E))) > 1e-15 {
		t.Errorf("h[0,1] = %.17g", want)
	}
}

// TestDequantQ8ByHand: values worked out by hand.
func TestDequantQ8ByHand(t *testing.T) {
	for _, c := range []struct {
		q    int8
		s    uint16
		want uint16
		why  string
	}{
		{3, 0x3800, 0x3e00, "3·0.5 = 1.5"},
		{-127, 0x0001, 0x807f, "−127·2⁻²⁴ is the subnormal −127·2⁻²⁴"},
		{1, 0x7bff, 0x7bff, "1·65504"},
		{2, 0x7bff, 0x7c00, "2·65504 overflows to +Inf"},
		{3, 0x3c01, 0x4202, "3·(1+2⁻¹⁰) = 3 + 1.5 ulp: a tie, to the even 3 + 2 ulp"},
		{1, 0x8000, 0x8000, "1·(−0) = −0"},
		{-1, 0x0001, 0x8001, "−1·2⁻²⁴"},
		{-128, 0x3c00, 0xd800, "−128"},
	} {
		if got := DequantQ8(c.q, c.s); got != c.want {
			t.Errorf("DequantQ8(%d, %#04x) = %#04x, want %#04x (%s)", c.q, c.s, got, c.want, c.why)
		}
	}
}

// TestDequantQ8RoundsToNearestEven checks DequantQ8 against an independent
// rounding of the exact product for every q and every finite scale.
func TestDequantQ8RoundsToNearestEven(t *testing.T) {
	for s := 0; s < 1<<16; s++ {
		if s&0x7c00 == 0x7c00 {
			continue // Inf, NaN
		}
		sv := float64(float16.Frombits(uint16(s)).Float32())
		for q := -128; q < 128; q++ {
			p := float64(q) * sv // exact
			want := roundF16(p)
			got := DequantQ8(int8(q), uint16(s))
			gv := float64(float16.Frombits(got).Float32())
			if gv != want || math.Signbit(gv) != math.Signbit(want) {
				t.Fatalf("DequantQ8(%d, %#04x) = %g (%#04x), want %g", q, s, gv, got, want)
			}
		}
	}
}

// roundF16 rounds v to the nearest fp16 value, ties to even, by scaling: the
// spacing of fp16 values around v is 2^(e−10) with e = max(⌊log2|v|⌋, −14).
func roundF16(v float64) float64 {
	if v == 0 {
		return v
	}
	a := math.Abs(v)
	if a >= 65520 {
		return math.Copysign(math.Inf(1), v)
	}
	e := math.Max(math.Floor(math.Log2(a)), -14)
	ulp := math.Ldexp(1, int(e)-10)
	r := math.RoundToEven(v/ulp) * ulp
	if r == 0 {
		return math.Copysign(0, v)
	}
	return r
}

// TestGemmQ8ReferenceByHand: X = [1, 2], Wq = [3, −1], one group (G=2) of
// scale 0.5 → W = [1.5, −0.5], Y = 1.5 − 1 = 0.5; wdq exact with bound 0.
func TestGemmQ8ReferenceByHand(t *testing.T) {
	op := GemmQ8F16()
	d := Dims{"M": 1, "N": 1, "K": 2, "G": 2}
	in := [][]byte{f16s(t, 1, 2), {3, 0xff}, f16s(t, 0.5)}
	if y, b := op.Ref(d, in, 3, 0); y != 0.5 || b != 2*UnitF32*2*2.5 {
		t.Errorf("Y = %g ± %g", y, b)
	}
	if w, b := op.Ref(d, in, 4, 1); w != -0.5 || b != 0 {
		t.Errorf("wdq[1] = %g ± %g", w, b)
	}
	if n, err := d.Elems(op.Operands[2].Shape); err != nil || n != 1 {
		t.Errorf("scales elements %d, %v", n, err)
	}
}

func TestDimsQuotient(t *testing.T) {
	d := Dims{"K": 96, "G": 32}
	if v, err := d.Size("K/G"); err != nil || v != 3 {
		t.Errorf("K/G = %d, %v", v, err)
	}
	d["G"] = 40
	if _, err := d.Size("K/G"); err == nil || !strings.Contains(err.Error(), "not a multiple") {
		t.Errorf("96/40: %v", err)
	}
	if _, err := d.Size("K/Q"); err == nil {
		t.Error("K/Q: want an error")
	}
}

func TestRowBlocks(t *testing.T) {
	for _, c := range []struct{ m, tm, tail, want int }{
		{128, 64, 16, 2},   // no tail: M a multiple of TM
		{100, 64, 0, 2},    // TAIL=0: one 64-row tile for the 36 rows
		{100, 64, 16, 4},   // 1 full + ceil(36/16) = 3
		{100, 64, 32, 3},   // 1 full + ceil(36/32) = 2
		{1983, 64, 16, 34}, // 1983 = 30·64 + 63: 30 full + ceil(63/16) = 4
		{1025, 64, 16, 17}, // 16 full + 1
		{10, 64, 16, 1},    // M < TM: one 16-row block
		{10, 16, 32, 1},    // TAIL ≥ TM is off
	} {
		if got := RowBlocks(c.m, c.tm, c.tail); got != c.want {
			t.Errorf("RowBlocks(%d, %d, %d) = %d, want %d", c.m, c.tm, c.tail, got, c.want)
		}
	}
}

func TestFusedWarpLayout(t *testing.T) {
	for _, c := range []struct{ bm, tn, w, nq, wm, wn int }{
		{32, 128, 4, 32, 1, 4}, // 32×32 warp tiles (hc_up's seed winner 32_128_4)
		{64, 64, 4, 16, 2, 2},
		{16, 256, 8, 32, 1, 8},
	} {
		wm, wn, ok := FusedWarpLayout(c.bm, c.tn, c.w, c.nq)
		if !ok || wm != c.wm || wn != c.wn {
			t.Errorf("FusedWarpLayout(%d, %d, %d, %d) = %d×%d %v, want %d×%d", c.bm, c.tn, c.w, c.nq, wm, wn, ok, c.wm, c.wn)
		}
	}
	if _, _, ok := FusedWarpLayout(16, 64, 8, 32); ok {
		t.Error("16×64 over 8 warps with 32-column warp tiles: want no layout")
	}
}

// TestFusedFamilies: every fused family's tiles round-trip their names,
// reference tiles are valid, plans have the operator's present operands in
// order with the dims last, and the row-tail grid follows RowBlocks.
func TestFusedFamilies(t *testing.T) {
	dims := map[string]Dims{
		"hc_up_f16":   {"M": 1983, "S": 2560, "K": 320},
		"swiglu_f16":  {"M": 1983, "N": 640, "K": 2560},
		"gemm_q8_f16": {"M": 1983, "N": 640, "K": 2560, "G": 32},
	}
	for _, f := range []*Family{CPUHcUpF16(), CUDAHcUpF16(), CPUSwigluF16(), CUDASwigluF16(), CPUGemmQ8F16(), CUDAGemmQ8F16()} {
		sp := f.Space()
		if len(sp) < 8 {
			t.Errorf("%s/%s: %d tiles", f.Backend, f.Name, len(sp))
		}
		if _, err := f.ParseTile(f.Reference); err != nil {
			t.Errorf("%s/%s: reference %s: %v", f.Backend, f.Name, f.Reference, err)
		}
		d := dims[f.Operator.Name]
		for _, p := range sp {
			name := f.TileName(p)
			if q, err := f.ParseTile(name); err != nil || q.String() != p.String() {
				t.Errorf("%s: %s round trip: %v %v", f.Name, name, q, err)
			}
			plan, err := f.Plan(p, d)
			if err != nil || len(plan.Launches) == 0 {
				t.Fatalf("%s %s: plan %v", f.Name, name, err)
			}
			for _, l := range plan.Launches {
				for _, a := range l.Args {
					if a.Kind == ArgOperand {
						op, _, ok := f.Operator.Operand(a.Name)
						if !ok || !op.Present(p) {
							t.Errorf("%s %s: %s passes operand %s", f.Name, name, l.Entry, a.Name)
						}
					}
				}
				if f.Backend == "cuda" && (l.Grid[0] < 1 || l.Block[0] < 32 || l.Shared > CUDAMaxSharedBytes) {
					t.Errorf("%s %s: launch %+v", f.Name, name, l)
				}
			}
			// Every present output is passed to some launch.
			for _, op := range f.Operator.Operands {
				if op.Dir != Out || !op.Present(p) {
					continue
				}
				found := false
				for _, l := range plan.Launches {
					for _, a := range l.Args {
						found = found || (a.Kind == ArgOperand && a.Name == op.Name)
					}
				}
				if !found {
					t.Errorf("%s %s: output %s is never passed", f.Name, name, op.Name)
				}
			}
		}
	}
	// The row tail changes the grid: hc_up 64-row tiles at M 1983 (30 full
	// rows + 63) over S/(TN/4) = 2560/32 = 80 column blocks.
	f := CUDAHcUpF16()
	p, _ := f.ParseTile("64_128_4")
	d := dims["hc_up_f16"]
	for tail, rows := range map[int]int{0: 31, 16: 34, 32: 32} {
		p["TAIL"] = tail
		if err := f.Validate(p); err != nil {
			t.Fatalf("TAIL %d: %v", tail, err)
		}
		plan, _ := f.Plan(p, d)
		if got := plan.Launches[0].Grid[0]; got != rows*80 {
			t.Errorf("TAIL %d: grid %d, want %d", tail, got, rows*80)
		}
	}
	// The chain: three launches, two fp32 scratch buffers of M·N.
	s := CUDASwigluF16()
	q, _ := s.ParseTile("64_64_4.chain1")
	plan, _ := s.Plan(q, dims["swiglu_f16"])
	if len(plan.Launches) != 3 || len(plan.Scratch) != 2 || plan.Scratch[0].Elems != 1983*640 || plan.Launches[2].Entry != "tilefit_swiglu_act" {
		t.Errorf("chain plan %+v", plan)
	}
	if s.Numerics(q) == s.Numerics(Params{"CHAIN": 0}) {
		t.Error("fused and chain share a numerics class")
	}
	if _, err := CPUGemmQ8F16().Plan(Params{"DEBUG": 0}, Dims{"M": 1, "N": 1, "K": 30, "G": 32}); err == nil {
		t.Error("gemm_q8 plan with K % G ≠ 0: want an error")
	}
}

// TestFusedInputs: seeded, reproducible, never zero.
func TestFusedInputs(t *testing.T) {
	for _, c := range []struct {
		op *Operator
		d  Dims
	}{
		{HcUpF16(), Dims{"M": 5, "S": 8, "K": 16}},
		{SwigluF16(), Dims{"M": 5, "N": 8, "K": 16}},
		{GemmQ8F16(), Dims{"M": 5, "N": 8, "K": 64, "G": 32}},
	} {
		a, b := c.op.GenInputs(1, c.d), c.op.GenInputs(1, c.d)
		other := c.op.GenInputs(2, c.d)
		ins := 0
		for _, o := range c.op.Operands {
			if o.Dir == In {
				ins++
			}
		}
		if len(a) != ins {
			t.Fatalf("%s: %d inputs, want %d", c.op.Name, len(a), ins)
		}
		for i := range a {
			n, _ := c.d.Elems(c.op.Operands[i].Shape)
			if len(a[i]) != n*c.op.Operands[i].DType.Size() {
				t.Errorf("%s input %d: %d bytes, want %d", c.op.Name, i, len(a[i]), n*c.op.Operands[i].DType.Size())
			}
			if string(a[i]) != string(b[i]) || string(a[i]) == string(other[i]) {
				t.Errorf("%s input %d: not seeded", c.op.Name, i)
			}
			size := c.op.Operands[i].DType.Size()
			for e := 0; e < n; e++ {
				if size == 2 && binary.LittleEndian.Uint16(a[i][2*e:])&0x7fff == 0 || size == 1 && a[i][e] == 0 {
					t.Fatalf("%s input %d element %d is zero", c.op.Name, i, e)
				}
			}
		}
	}
}
