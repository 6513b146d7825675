// Package verify checks GEMM outputs: fresh random inputs, the poison
// pattern, bitwise comparison between two outputs, and a numerical check
// against a float64 reference under a K-scaled error bound.
//
// Every output is Y[M,N] = X[M,K]·W[N,K]ᵀ with X (M×K) and W (N×K) row-major
// fp16 bit patterns and Y row-major, M·N elements of fp32 (4 bytes) or fp16
// (2 bytes), little-endian.
package verify

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"

	"github.com/x448/float16"

	"github.com/tilefit/tilefit/backend"
)

// PoisonByte fills every output byte before a kernel runs; an element still
// made only of PoisonByte afterwards (0xFFFFFFFF, or 0xFFFF for fp16 — a NaN
// no arithmetic produces) was never written.
const PoisonByte = 0xFF

// pcgIncrement is the fixed second PCG word; the seed varies the first.
const pcgIncrement = 0x9e3779b97f4a7c15

// RandomInputs returns one input set for s drawn from a PCG generator
// (math/rand/v2) seeded with seed: X (M×K) then W (N×K), each value an fp16
// bit pattern of a number drawn uniformly from [-1, 1) and rounded to fp16.
// Values that round to ±0 are drawn again, so no input is zero and the set is
// never all zero. The same seed and shape always give the same set.
func RandomInputs(seed uint64, s backend.Shape) backend.InputSet {
	r := rand.New(rand.NewPCG(seed, pcgIncrement))
	fill := func(n int) []uint16 {
		v := make([]uint16, n)
		for i := range v {
			for {
				h := float16.Fromfloat32(float32(2*r.Float64() - 1)).Bits()
				if h&0x7fff != 0 {
					v[i] = h
					break
				}
			}
		}
		return v
	}
	x := fill(s.M * s.K)
	w := fill(s.N * s.K)
	return backend.InputSet{X: x, W: w}
}

// Poison fills b with PoisonByte.
func Poison(b []byte) {
	for i := range b {
		b[i] = PoisonByte
	}
}

// elemSize is the output element size in bytes.
func elemSize(f16 bool) int {
	if f16 {
		return 2
	}
	return 4
}

// bitsAt returns the bit pattern of element i of b.
func bitsAt(b []byte, i int, f16 bool) uint32 {
	if f16 {
		return uint32(binary.LittleEndian.Uint16(b[2*i:]))
	}
	return binary.LittleEndian.Uint32(b[4*i:])
}

// toFloat converts an output bit pattern to float32.
func toFloat(bits uint32, f16 bool) float32 {
	if f16 {
		return float16.Frombits(uint16(bits)).Float32()
	}
	return math.Float32frombits(bits)
}

// DecodeOutput converts output bytes (fp32 or fp16, little-endian) to
// float32 values, one per element.
func DecodeOutput(b []byte, f16 bool) []float32 {
	es := elemSize(f16)
	out := make([]float32, len(b)/es)
	for i := range out {
		out[i] = toFloat(bitsAt(b, i, f16), f16)
	}
	return out
}

// A Mismatch is the first element where an output differs from what was
// expected. Index is the element index (Row·N + Col); WantBits and GotBits
// are the raw bit patterns (16 bits for fp16 outputs).
type Mismatch struct {
	Index, Row, Col int
	Want, Got       float32
	WantBits        uint32
	GotBits         uint32
	// F16 marks fp16 bit patterns (printed with 4 hex digits).
	F16 bool
}

// String formats m as
// "first difference at [row,col] (index i): want 1.25 (0x3fa00000), got NaN (0xffffffff)".
func (m *Mismatch) String() string {
	return fmt.Sprintf("first difference at [%d,%d] (index %d): want %s (%s), got %s (%s)",
		m.Row, m.Col, m.Index, fmtFloat(m.Want), m.fmtBits(m.WantBits), fmtFloat(m.Got), m.fmtBits(m.GotBits))
}

func (m *Mismatch) fmtBits(b uint32) string {
	if m.F16 {
		return fmt.Sprintf("0x%04x", b)
	}
	return fmt.Sprintf("0x%08x", b)
}

func fmtFloat(f float32) string { return strconv.FormatFloat(float64(f), 'g', -1, 32) }

// Bitwise compares two outputs of shape s byte for byte (memcmp semantics:
// +0 and −0 differ, equal NaN patterns are equal) and returns nil when they
// are equal, else the first differing element. An output shorter than M·N
// elements differs at its first missing element, reported with bits 0 and
// value NaN.
func Bitwise(want, got []byte, s backend.Shape, f16 bool) *Mismatch {
	es := elemSize(f16)
	n := s.M * s.N
	if len(want) >= n*es && len(got) >= n*es && bytes.Equal(want[:n*es], got[:n*es]) {
		return nil
	}
	wn, gn := len(want)/es, len(got)/es
	for i := 0; i < n; i++ {
		var wb, gb uint32
		wv, gv := float32(math.NaN()), float32(math.NaN())
		if i < wn {
			wb = bitsAt(want, i, f16)
			wv = toFloat(wb, f16)
		}
		if i < gn {
			gb = bitsAt(got, i, f16)
			gv = toFloat(gb, f16)
		}
		if i >= wn || i >= gn || wb != gb {
			return mismatch(s, i, wv, gv, wb, gb, f16)
		}
	}
	return nil
}

func mismatch(s backend.Shape, i int, want, got float32, wb, gb uint32, f16 bool) *Mismatch {
	row, col := 0, 0
	if s.N > 0 {
		row, col = i/s.N, i%s.N
	}
	return &Mismatch{Index: i, Row: row, Col: col, Want: want, Got: got, WantBits: wb, GotBits: gb, F16: f16}
}

// Numeric is the outcome of Check.
type Numeric struct {
	// MaxErr is max |y − ref| / bound over the checked elements (≤ 1 passes;
	// +Inf when an element differs where the bound is 0).
	MaxErr float64
	// Checked counts the elements compared with the float64 reference.
	Checked int
	// Unwritten counts elements still holding the poison pattern.
	Unwritten int
	// First is the first failing element (unwritten, NaN/Inf, or outside
	// the bound), nil when everything passed.
	First *Mismatch
	// Err describes the first failure, nil when the output passed.
	Err error
}

// The error bound's constants: an fp32 FMA chain over K terms is within
// K·u·Σ|x·w| of the exact sum (u = 2⁻²⁴, first order); Safety doubles that.
const (
	// Safety is c in γ = K·2⁻²⁴·c.
	Safety = 2.0
	// unitF32 is the fp32 unit roundoff 2⁻²⁴.
	unitF32 = 1.0 / (1 << 24)
	// unitF16 is the fp16 unit roundoff 2⁻¹¹ (output rounding).
	unitF16 = 1.0 / (1 << 11)
	// halfSubF16 is half the smallest fp16 subnormal, 2⁻²⁵: the absolute
	// rounding error of fp16 output in the subnormal range.
	halfSubF16 = 1.0 / (1 << 25)
)

// Check verifies one output of shape s computed from in:
//
//  1. On ALL elements: none may still hold the poison pattern (unwritten),
//     none may be NaN or ±Inf.
//
//  2. Against a float64 reference ref[m,n] = Σ_k x[m,k]·w[n,k] (computed in
//     Go from the exact fp16 values): on every element when M·N ≤ maxSamples,
//     else on maxSamples elements drawn with a PCG seeded by sampleSeed plus
//     the whole last row and the whole last column (where tails live).
//     Element (m,n) passes when
//
//     |y − ref| ≤ bound = γ·Σ_k |x[m,k]·w[n,k]|,  γ = K·2⁻²⁴·c,  c = Safety = 2,
//
//     plus, for fp16 output, 2⁻¹¹·|ref| + 2⁻²⁵ (rounding to fp16, subnormals
//     included).
//
// MaxErr is the largest |y − ref| / bound seen; Err describes the first
// failure (unwritten, NaN/Inf, then bound, in element order) and First holds
// its element. A reference above fp16's range (|ref| > 65504) is not
// expected here: the inputs are in [-1, 1) and such an output would fail as Inf.
func Check(in backend.InputSet, s backend.Shape, out []byte, f16 bool, sampleSeed uint64, maxSamples int) Numeric {
	var res Numeric
	es := elemSize(f16)
	n := s.M * s.N
	if len(out) < n*es {
		res.Err = fmt.Errorf("output has %d bytes, want %d (%d×%d elements of %d bytes)", len(out), n*es, s.M, s.N, es)
		return res
	}
	if len(in.X) < s.M*s.K || len(in.W) < s.N*s.K {
		res.Err = fmt.Errorf("inputs have %d and %d elements, want %d (X %d×%d) and %d (W %d×%d)",
			len(in.X), len(in.W), s.M*s.K, s.M, s.K, s.N*s.K, s.N, s.K)
		return res
	}
	r := newRef(in, s)
	poison := uint32(0xFFFFFFFF)
	if f16 {
		poison = 0xFFFF
	}
	// 1. Every element written and finite.
	for i := 0; i < n; i++ {
		b := bitsAt(out, i, f16)
		v := toFloat(b, f16)
		switch {
		case b == poison:
			res.Unwritten++
			if res.Err == nil {
				res.First = r.mismatch(i, v, b, f16)
				res.Err = fmt.Errorf("element never written (still poison): %s", res.First)
			}
		case math.IsNaN(float64(v)) || math.IsInf(float64(v), 0):
			if res.Err == nil {
				res.First = r.mismatch(i, v, b, f16)
				res.Err = fmt.Errorf("non-finite output: %s", res.First)
			}
		}
	}
	if res.Unwritten > 0 && res.Err != nil {
		res.Err = fmt.Errorf("%d of %d elements unwritten; %w", res.Unwritten, n, res.Err)
	}
	if res.Err != nil {
		return res
	}
	// 2. Against the float64 reference.
	var boundErr error
	check := func(i int) {
		b := bitsAt(out, i, f16)
		y := float64(toFloat(b, f16))
		ref, mag := r.at(i/s.N, i%s.N)
		bound := float64(s.K) * unitF32 * Safety * mag
		if f16 {
			bound += unitF16*math.Abs(ref) + halfSubF16
		}
		d := math.Abs(y - ref)
		e := 0.0
		switch {
		case d == 0:
		case bound == 0:
			e = math.Inf(1)
		default:
			e = d / bound
		}
		res.Checked++
		if e > res.MaxErr {
			res.MaxErr = e
		}
		if e > 1 && boundErr == nil {
			res.First = r.mismatch(i, float32(y), b, f16)
			boundErr = fmt.Errorf("error %.3g × the bound (|y−ref| = %.3g, bound %.3g = %d·2⁻²⁴·%g·Σ|x·w|): %s",
				e, d, bound, s.K, Safety, res.First)
		}
	}
	if n <= maxSamples {
		for i := 0; i < n; i++ {
			check(i)
		}
	} else {
		seen := make(map[int]bool, maxSamples+s.M+s.N)
		visit := func(i int) {
			if !seen[i] {
				seen[i] = true
				check(i)
			}
		}
		rg := rand.New(rand.NewPCG(sampleSeed, pcgIncrement))
		for j := 0; j < maxSamples; j++ {
			visit(rg.IntN(n))
		}
		for c := 0; c < s.N; c++ { // last row
			visit((s.M-1)*s.N + c)
		}
		for m := 0; m < s.M; m++ { // last column
			visit(m*s.N + s.N - 1)
		}
	}
	res.Err = boundErr
	return res
}

// f16Table holds the float32 value of every fp16 bit pattern.
var f16Table = func() *[1 << 16]float32 {
	var t [1 << 16]float32
	for i := range t {
		t[i] = float16.Frombits(uint16(i)).Float32()
	}
	return &t
}()

// ref computes float64 reference elements.
type ref struct {
	in backend.InputSet
	s  backend.Shape
}

func newRef(in backend.InputSet, s backend.Shape) ref { return ref{in, s} }

// at returns Σ_k x[m,k]·w[n,k] and Σ_k |x[m,k]·w[n,k]| in float64 (each
// product of two fp16 values is exact in float64).
func (r ref) at(m, n int) (sum, mag float64) {
	K := r.s.K
	x := r.in.X[m*K : m*K+K]
	w := r.in.W[n*K : n*K+K]
	for k := range x {
		p := float64(f16Table[x[k]]) * float64(f16Table[w[k]])
		sum += p
		mag += math.Abs(p)
	}
	return sum, mag
}

// Reference returns the float64 reference Σ_k x[m,k]·w[n,k] of element
// (m, n) of Y[M,N] = X[M,K]·W[N,K]ᵀ.
func Reference(in backend.InputSet, s backend.Shape, m, n int) float64 {
	v, _ := newRef(in, s).at(m, n)
	return v
}

// mismatch builds the Mismatch of element i with its reference as Want.
func (r ref) mismatch(i int, got float32, gotBits uint32, f16 bool) *Mismatch {
	v, _ := r.at(i/r.s.N, i%r.s.N)
	want := float32(v)
	wb := math.Float32bits(want)
	if f16 {
		h := float16.Fromfloat32(want)
		want, wb = h.Float32(), uint32(h.Bits())
	}
	return mismatch(r.s, i, want, got, wb, gotBits, f16)
}
