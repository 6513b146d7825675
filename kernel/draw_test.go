package kernel

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/x448/float16"
)

// TestF32ToF16 compares the integer conversion with x448/float16 on every
// value of the uniform generator's grid (j·2⁻²³, |j| < 2²³) and on random
// float32 bit patterns (normals, subnormals, overflow, NaN).
func TestF32ToF16(t *testing.T) {
	check := func(b uint32) {
		f := math.Float32frombits(b)
		want := float16.Fromfloat32(f).Bits()
		got := F32ToF16(b)
		if f != f {
			if got&0x7c00 != 0x7c00 || got&0x3ff == 0 {
				t.Fatalf("NaN %#08x → %#04x, not a NaN", b, got)
			}
			return
		}
		if got != want {
			t.Fatalf("F32ToF16(%g = %#08x) = %#04x, float16 says %#04x", f, b, got, want)
		}
	}
	for j := int32(-1 << 23); j < 1<<23; j += 1 {
		check(math.Float32bits(float32(j) * (1.0 / (1 << 23))))
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 1<<20; i++ {
		check(r.Uint32())
	}
	for _, b := range []uint32{0, 0x80000000, 0x33000000, 0x33000001, 0x337fffff, 0x38800000, 0x387fffff, 0x477fefff, 0x477ff000, 0x47800000, 0x7f800000, 0xff800000} {
		check(b)
	}
}

// TestDrawnPieces: the bytes of a Drawn do not depend on how the range is
// split (Fill in pieces equals Bytes), the first elements of a longer draw
// are those of a shorter one, and every kind gives values of its range.
func TestDrawnPieces(t *testing.T) {
	for _, dr := range []Drawn{
		{Draw: Draw{Kind: DrawUniform}, DType: F16, Key: 7, Elems: 100003},
		{Draw: Draw{Kind: DrawUniform}, DType: BF16, Key: 8, Elems: 5000},
		{Draw: Draw{Kind: DrawUniform}, DType: F32, Key: 9, Elems: 5000},
		{Draw: Draw{Kind: DrawUniform}, DType: I8, Key: 10, Elems: 5000},
		{Draw: Draw{Kind: DrawInt, Max: 8}, DType: F16, Key: 11, Elems: 5000},
		{Draw: Draw{Kind: DrawInt, Max: 2, Lo: -6, Positive: true}, DType: F16, Key: 12, Elems: 5000},
		{Draw: Draw{Kind: DrawInt, Max: 5}, DType: I8, Key: 13, Elems: 5000},
		{Draw: Draw{Kind: DrawPow2, Lo: -3, Hi: 0}, DType: F16, Key: 14, Elems: 5000},
	} {
		all := dr.Bytes()
		parts := make([]byte, len(all))
		for lo := 0; lo < dr.Elems; lo += 977 {
			dr.Fill(parts, lo, min(lo+977, dr.Elems))
		}
		if string(parts) != string(all) {
			t.Errorf("%+v: pieces differ from the whole", dr)
		}
		short := dr
		short.Elems = dr.Elems / 3
		if b := short.Bytes(); string(b) != string(all[:len(b)]) {
			t.Errorf("%+v: a shorter draw is not a prefix", dr)
		}
		seen := map[float64]bool{}
		for i := 0; i < dr.Elems; i++ {
			v := dr.DType.Decode(all, i)
			seen[v] = true
			ok := v != 0 && v == v
			switch dr.Draw.Kind {
			case DrawUniform:
				ok = ok && v >= -127 && v <= 127 && (dr.DType == I8 || v >= -1 && v <= 1)
			case DrawInt:
				j := v / math.Ldexp(1, dr.Draw.Lo)
				ok = ok && j == math.Trunc(j) && math.Abs(j) <= float64(dr.Draw.Max) && (!dr.Draw.Positive || v > 0)
			case DrawPow2:
				fr, e := math.Frexp(math.Abs(v))
				ok = ok && fr == 0.5 && e-1 >= dr.Draw.Lo && e-1 <= dr.Draw.Hi
			}
			if !ok {
				t.Fatalf("%+v: element %d = %v out of its range", dr, i, v)
			}
		}
		want := 2 * dr.Draw.Max
		switch {
		case dr.Draw.Kind == DrawInt && dr.Draw.Positive:
			want = dr.Draw.Max
		case dr.Draw.Kind == DrawPow2:
			want = 2 * (dr.Draw.Hi - dr.Draw.Lo + 1)
		case dr.Draw.Kind == DrawUniform:
			want = 200
		}
		if len(seen) < want {
			t.Errorf("%+v: %d distinct values, want at least %d", dr, len(seen), want)
		}
	}
}

// TestDrawWordGolden pins the generator's first words: the CUDA kernel and
// stored cells depend on these exact bits (a change here is a change of
// every cell's inputs and must be recorded as one).
func TestDrawWordGolden(t *testing.T) {
	dr := Drawn{Draw: Draw{Kind: DrawUniform}, DType: F16, Key: DrawKey(1, InputStream(0)), Elems: 4}
	got := []uint64{DrawWord(dr.Key, 0, 0), dr.Bits(0), dr.Bits(1), dr.Bits(2), dr.Bits(3)}
	want := drawGolden
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("golden words changed: got %#x, want %#x", got, want)
		}
	}
}

// drawGolden: DrawWord(key, 0, 0) (also computed independently in Python)
// and the fp16 bits of elements 0..3 of gemm_f16's X for seed 1.
var drawGolden = []uint64{0x85c61a300ec70fa1, 0x29c6, 0xb43d, 0x3b59, 0x3b11}
