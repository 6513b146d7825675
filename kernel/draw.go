package kernel

// This file is the counter-based input generator (issue 17): element e of
// an input operand is a pure function of the operand's key and e, computed
// with 64-bit integer arithmetic only, so that a device draws the same bits
// as the host (backend/cuda's tf_draw kernel is this code in CUDA C++), an
// operand is drawn in parallel pieces, and the first m rows of an operand
// led by M are the same at every M ≥ m.

import (
	"encoding/binary"
	"math"
	"runtime"
	"sync"
)

// A DrawKind is the distribution of a Draw.
type DrawKind uint8

// The distributions.
const (
	// DrawUniform: floating-point elements uniform on the grid j·2⁻²³,
	// −2²³ ≤ j < 2²³ (so in [−1, 1)), rounded to the element type to
	// nearest even, never ±0 (a value that rounds to zero is drawn again
	// from the element's next word, up to three times, then 2⁻¹⁰); i8
	// elements uniform in [−127, 127] without 0.
	DrawUniform DrawKind = iota
	// DrawInt: j·2^Lo with j uniform in [1, Max] and a random sign (none
	// when Positive): small integers, or integers on a power-of-two grid.
	DrawInt
	// DrawPow2: ±2^e with e uniform in [Lo, Hi] (no sign when Positive).
	DrawPow2
)

// A Draw is the distribution of one input operand's elements. The values
// of DrawInt and DrawPow2 must be exact in the element type (the exact
// known-answer check relies on it; TestExactDrawsRepresentable checks the
// built-in declarations).
type Draw struct {
	Kind     DrawKind `json:"kind"`
	Max      int      `json:"max,omitempty"`
	Lo       int      `json:"lo,omitempty"`
	Hi       int      `json:"hi,omitempty"`
	Positive bool     `json:"positive,omitempty"`
}

// A Drawn is one input operand drawn by the counter-based generator:
// element e (0 ≤ e < Elems) has the bits Draw gives for word(Key, e) in
// DType. The same Drawn always gives the same bytes, on any backend.
type Drawn struct {
	Draw  Draw   `json:"draw"`
	DType DType  `json:"dtype"`
	Key   uint64 `json:"key"`
	Elems int    `json:"elems"`
}

// golden is the SplitMix64 increment, 2⁶⁴/φ.
const golden = 0x9e3779b97f4a7c15

// Mix64 is SplitMix64's finaliser: a bijection of 64-bit words that mixes
// every input bit into every output bit.
func Mix64(z uint64) uint64 {
	z ^= z >> 30
	z *= 0xbf58476d1ce4e5b9
	z ^= z >> 27
	z *= 0x94d049bb133111eb
	return z ^ z>>31
}

// DrawKey is the generator key of the operand drawn with seed and stream
// word stream (InputStream of its index): Mix64(seed ^ Mix64(stream)).
func DrawKey(seed, stream uint64) uint64 { return Mix64(seed ^ Mix64(stream)) }

// DrawWord is the t-th 64-bit word (t < 4) of element e under key:
// Mix64(key + (4e + t + 1)·golden), SplitMix64 at counter 4e + t.
func DrawWord(key, e uint64, t uint64) uint64 { return Mix64(key + (4*e+t+1)*golden) }

// Bits returns the bit pattern of element e (in the low bits).
func (dr Drawn) Bits(e uint64) uint64 { return drawBits(dr.Draw, dr.DType, dr.Key, e) }

func drawBits(d Draw, dt DType, key, e uint64) uint64 {
	switch d.Kind {
	case DrawInt, DrawPow2:
		w := DrawWord(key, e, 0)
		var mag float32
		if d.Kind == DrawInt {
			mag = float32(1+(w>>32)%uint64(max(d.Max, 1))) * pow2f(d.Lo)
		} else {
			mag = pow2f(d.Lo + int((w>>32)%uint64(max(d.Hi-d.Lo+1, 1))))
		}
		if !d.Positive && w&1 == 1 {
			mag = -mag
		}
		return f32Bits(dt, mag)
	}
	for t := uint64(0); t < 4; t++ {
		w := DrawWord(key, e, t)
		if dt == I8 {
			v := int(w%254) - 127
			if v >= 0 {
				v++
			}
			return uint64(uint8(int8(v)))
		}
		v := float32(int32(w>>40)-(1<<23)) * (1.0 / (1 << 23))
		if b := f32Bits(dt, v); b&nonSignMask(dt) != 0 {
			return b
		}
	}
	return f32Bits(dt, 1.0/(1<<10))
}

// pow2f is 2^e as a float32 (normal range: −126 ≤ e ≤ 127).
func pow2f(e int) float32 { return math.Float32frombits(uint32(e+127) << 23) }

func nonSignMask(dt DType) uint64 {
	switch dt {
	case F32:
		return 0x7fffffff
	case F16, BF16:
		return 0x7fff
	}
	return 0xff
}

// f32Bits rounds v to dt (nearest even) and returns its bits; an i8 takes
// the integer value of v.
func f32Bits(dt DType, v float32) uint64 {
	switch dt {
	case F32:
		return uint64(math.Float32bits(v))
	case F16:
		return uint64(F32ToF16(math.Float32bits(v)))
	case BF16:
		b := math.Float32bits(v)
		b += 0x7fff + (b>>16)&1
		return uint64(b >> 16)
	case I8:
		return uint64(uint8(int8(v)))
	}
	return 0
}

// F32ToF16 converts the float32 with bits b to the fp16 bit pattern nearest
// to it (ties to even; subnormals kept, overflow to ±Inf, NaN to a quiet
// NaN), with integer operations only — the same code as the device
// generator's, so both round alike.
func F32ToF16(b uint32) uint16 {
	sign := uint16(b>>16) & 0x8000
	a := b & 0x7fffffff
	switch {
	case a > 0x7f800000:
		return sign | 0x7e00
	case a >= 0x47800000: // ≥ 2¹⁶: Inf
		return sign | 0x7c00
	case a >= 0x38800000: // normal in fp16 (≥ 2⁻¹⁴)
		h := (a - 0x38000000) >> 13
		rem := a & 0x1fff
		if rem > 0x1000 || rem == 0x1000 && h&1 == 1 {
			h++
		}
		return sign | uint16(h)
	case a < 0x33000000: // below 2⁻²⁵: rounds to zero
		return sign
	}
	// Subnormal in fp16: the value in units of 2⁻²⁴, rounded.
	m := a&0x7fffff | 0x800000
	shift := 126 - a>>23
	r := m >> shift
	rem := m & (1<<shift - 1)
	half := uint32(1) << (shift - 1)
	if rem > half || rem == half && r&1 == 1 {
		r++
	}
	return sign | uint16(r)
}

// Bytes returns the operand's little-endian element bytes, drawn on up to
// GOMAXPROCS goroutines (the bytes do not depend on how it is split).
func (dr Drawn) Bytes() []byte {
	b := make([]byte, dr.Elems*dr.DType.Size())
	dr.Fill(b, 0, dr.Elems)
	return b
}

// Fill writes elements [from, to) into b (which holds the whole operand's
// bytes, element e at e·size), in parallel when the range is large.
func (dr Drawn) Fill(b []byte, from, to int) {
	const piece = 1 << 15
	n := to - from
	workers := min(runtime.GOMAXPROCS(0), (n+piece-1)/piece)
	if workers <= 1 {
		dr.fill(b, from, to)
		return
	}
	var wg sync.WaitGroup
	per := (n + workers - 1) / workers
	for lo := from; lo < to; lo += per {
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			dr.fill(b, lo, hi)
		}(lo, min(lo+per, to))
	}
	wg.Wait()
}

func (dr Drawn) fill(b []byte, from, to int) {
	es := dr.DType.Size()
	for e := from; e < to; e++ {
		v := drawBits(dr.Draw, dr.DType, dr.Key, uint64(e))
		switch es {
		case 1:
			b[e] = byte(v)
		case 2:
			binary.LittleEndian.PutUint16(b[2*e:], uint16(v))
		case 4:
			binary.LittleEndian.PutUint32(b[4*e:], uint32(v))
		}
	}
}

// UniformDrawn is the Drawn of input operand op at index oi of its
// operator's operands as UniformInputs draws it from seed on d.
func UniformDrawn(op Operand, oi int, seed uint64, d Dims) Drawn {
	n, _ := d.Elems(op.Shape)
	return Drawn{Draw: Draw{Kind: DrawUniform}, DType: op.DType, Key: DrawKey(seed, InputStream(oi)), Elems: n}
}
