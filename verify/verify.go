// Package verify checks a candidate's outputs: the poison pattern, bitwise
// comparison between two outputs of an operand, and a numerical check of an
// output operand against its operator's float64 Reference within the
// reference's bound. It knows no operator: shapes, element types, inputs
// and references come from the kernel.Operator.
package verify

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/tilefit/tilefit/kernel"
)

// PoisonByte fills every output byte before a kernel runs; an element still
// made only of PoisonByte afterwards (0xFFFFFFFF, or 0xFFFF for fp16 — a NaN
// no arithmetic produces) was never written.
const PoisonByte = 0xFF

// pcgIncrement is the fixed second PCG word; the seed varies the first.
const pcgIncrement = 0x9e3779b97f4a7c15

// Poison fills b with PoisonByte.
func Poison(b []byte) {
	for i := range b {
		b[i] = PoisonByte
	}
}

// Decode converts an operand's bytes (little-endian elements of dt) to
// float64 values, one per element.
func Decode(b []byte, dt kernel.DType) []float64 {
	out := make([]float64, len(b)/dt.Size())
	for i := range out {
		out[i] = dt.Decode(b, i)
	}
	return out
}

// A Mismatch is the first element where an output differs from what was
// expected. Index is the element index in the operand; Row and Col its
// position in the operand seen as a matrix (all dimensions but the last
// are rows); WantBits and GotBits the raw bit patterns.
type Mismatch struct {
	Operand         string
	Index, Row, Col int
	Want, Got       float64
	WantBits        uint64
	GotBits         uint64
	DType           kernel.DType
}

// String formats m as
// "first difference at [row,col] (index i): want 1.25 (0x3fa00000), got NaN (0xffffffff)".
func (m *Mismatch) String() string {
	return fmt.Sprintf("first difference at [%d,%d] (index %d): want %s (%s), got %s (%s)",
		m.Row, m.Col, m.Index, fmtFloat(m.Want), m.fmtBits(m.WantBits), fmtFloat(m.Got), m.fmtBits(m.GotBits))
}

func (m *Mismatch) fmtBits(b uint64) string {
	return fmt.Sprintf("0x%0*x", 2*m.DType.Size(), b)
}

func fmtFloat(f float64) string {
	if math.IsNaN(f) {
		return "NaN"
	}
	return strconv.FormatFloat(f, 'g', -1, 32)
}

// cols is the operand's last dimension (its row length).
func cols(op kernel.Operand, d kernel.Dims) int {
	if len(op.Shape) == 0 {
		return 1
	}
	c, err := d.Size(op.Shape[len(op.Shape)-1])
	if err != nil || c <= 0 {
		return 1
	}
	return c
}

func mismatch(op kernel.Operand, d kernel.Dims, i int, want, got float64, wb, gb uint64) *Mismatch {
	c := cols(op, d)
	return &Mismatch{Operand: op.Name, Index: i, Row: i / c, Col: i % c, Want: want, Got: got, WantBits: wb, GotBits: gb, DType: op.DType}
}

// Bitwise compares two outputs of operand op on dims d byte for byte
// (memcmp semantics: +0 and −0 differ, equal NaN patterns are equal) and
// returns nil when they are equal, else the first differing element. An
// output shorter than the operand differs at its first missing element,
// reported with bits 0 and value NaN.
func Bitwise(op kernel.Operand, d kernel.Dims, want, got []byte) *Mismatch {
	es := op.DType.Size()
	n, _ := d.Elems(op.Shape)
	if len(want) >= n*es && len(got) >= n*es && bytes.Equal(want[:n*es], got[:n*es]) {
		return nil
	}
	wn, gn := len(want)/es, len(got)/es
	for i := 0; i < n; i++ {
		var wb, gb uint64
		wv, gv := math.NaN(), math.NaN()
		if i < wn {
			wb, wv = op.DType.Bits(want, i), op.DType.Decode(want, i)
		}
		if i < gn {
			gb, gv = op.DType.Bits(got, i), op.DType.Decode(got, i)
		}
		if i >= wn || i >= gn || wb != gb {
			return mismatch(op, d, i, wv, gv, wb, gb)
		}
	}
	return nil
}

// BitwiseAll compares every output operand present for a candidate
// (present[i]) of two runs and returns the first difference, naming the
// operand when the operator has several outputs.
func BitwiseAll(o *kernel.Operator, d kernel.Dims, present []bool, want, got [][]byte) (string, *Mismatch) {
	for i, op := range o.Operands {
		if op.Dir != kernel.Out || !present[i] {
			continue
		}
		var w, g []byte
		if i < len(want) {
			w = want[i]
		}
		if i < len(got) {
			g = got[i]
		}
		if m := Bitwise(op, d, w, g); m != nil {
			return Label(o, i, m.String()), m
		}
	}
	return "", nil
}

// Label prefixes msg with the operand's name when o has more than one
// output operand ("mixh: first difference at ..."), and returns msg as is
// otherwise (single-output operators keep their familiar messages).
func Label(o *kernel.Operator, i int, msg string) string {
	outs := 0
	for _, op := range o.Operands {
		if op.Dir == kernel.Out {
			outs++
		}
	}
	if outs > 1 {
		return o.Operands[i].Name + ": " + msg
	}
	return msg
}

// Numeric is the outcome of Check.
type Numeric struct {
	// MaxErr is max |y − ref| / bound over the checked elements (≤ 1 passes;
	// +Inf when an element differs where the bound is 0).
	MaxErr float64
	// MaxLikely is max |y − ref| / likely over the checked elements, the
	// probabilistic bound (kernel.RefValue.Likely; ≤ 1 passes); 0 when the
	// operator declares none.
	MaxLikely float64
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

// Check verifies output operand out (an index into o.Operands) computed
// from inputs in (the In operands, in order) on dims d:
//
//  1. On ALL elements: none may still hold the poison pattern (unwritten),
//     none may be NaN or ±Inf (floating-point types).
//
//  2. Against o.Reference (float64, with its bound): on every element when
//     the operand has ≤ maxSamples elements, else on maxSamples elements
//     drawn with a PCG seeded by sampleSeed plus the whole last row and the
//     whole last column of the operand seen as a matrix (where tails live).
//     Element i passes when |y − ref| ≤ bound (the worst case) and, when the
//     operator declares one (kernel.RefValue.Likely), |y − ref| ≤ likely,
//     the probabilistic bound that grows like √K: a term lost at large K
//     fits the worst case but not this one.
//
// MaxErr is the largest |y − ref| / bound seen (MaxLikely the same against
// the probabilistic bound); Err describes the first failure (unwritten,
// NaN/Inf, then either bound, in element order) and First holds its
// element.
func Check(o *kernel.Operator, d kernel.Dims, in [][]byte, out int, got []byte, sampleSeed uint64, maxSamples int) Numeric {
	return NewRefs(o, d, in, sampleSeed, maxSamples).Check(out, got)
}

// Refs holds the float64 reference of one input set for Check: the
// elements to compare and their reference values and bounds, computed once
// per output operand (on every core) and reused by every output checked
// against it. A cell's candidates share one Refs: the base of each numerics
// class and the vendor are checked against the same values, which for a
// long K (hc_read's 10240) cost seconds a check when each was computed
// again on one core. A Refs is safe for concurrent use (a sweep computes
// its values in the background while the device runs).
type Refs struct {
	mu         sync.Mutex
	o          *kernel.Operator
	d          kernel.Dims
	in         [][]byte
	seed       uint64
	maxSamples int
	per        map[int]*refValues
}

// refValues are the elements of one output operand that Check compares
// (in the order it visits them) with their reference and bound.
type refValues struct {
	idx                 []int
	want, bound, likely []float64
}

// NewRefs returns the reference of inputs in on dims d, the elements chosen
// as Check describes from sampleSeed and maxSamples. Nothing is computed
// until an output is checked.
func NewRefs(o *kernel.Operator, d kernel.Dims, in [][]byte, sampleSeed uint64, maxSamples int) *Refs {
	return &Refs{o: o, d: d, in: in, seed: sampleSeed, maxSamples: maxSamples, per: map[int]*refValues{}}
}

// Check is Check of the package on r's inputs.
func (r *Refs) Check(out int, got []byte) Numeric {
	o, d, in := r.o, r.d, r.in
	var res Numeric
	op := o.Operands[out]
	dt := op.DType
	es := dt.Size()
	n, err := d.Elems(op.Shape)
	if err != nil {
		res.Err = err
		return res
	}
	if len(got) < n*es {
		res.Err = fmt.Errorf("output %s has %d bytes, want %d (%s elements of %d bytes)", op.Name, len(got), n*es, shapeString(op, d), es)
		return res
	}
	ins := o.InputIndices()
	if len(in) != len(ins) {
		res.Err = fmt.Errorf("%d input buffers, operator %s has %d inputs", len(in), o.Name, len(ins))
		return res
	}
	for j, i := range ins {
		m, _ := d.Elems(o.Operands[i].Shape)
		if len(in[j]) < m*o.Operands[i].DType.Size() {
			res.Err = fmt.Errorf("input %s has %d bytes, want %d (%s)", o.Operands[i].Name, len(in[j]), m*o.Operands[i].DType.Size(), shapeString(o.Operands[i], d))
			return res
		}
	}
	refMismatch := func(i int, got float64, gb uint64) *Mismatch {
		want, _ := o.Ref(d, in, out, i)
		want = dt.Round(want)
		return mismatch(op, d, i, want, got, roundBits(dt, want), gb)
	}
	poison := uint64(1)<<(8*es) - 1
	// 1. Every element written and finite. The poison pattern (all ones) is
	// a NaN, so only elements whose exponent bits are all ones need a look:
	// a scan of the raw words finds them (25M fp32 elements: ~60 ms where
	// decoding each took ~700 ms, once per class base and vendor).
	for _, i := range specials(dt, got, n) {
		b := dt.Bits(got, i)
		v := dt.Decode(got, i)
		switch {
		case b == poison && dt.Float():
			res.Unwritten++
			if res.Err == nil {
				res.First = refMismatch(i, v, b)
				res.Err = errSpecial
			}
		case math.IsNaN(v) || math.IsInf(v, 0):
			if res.Err == nil {
				res.First = refMismatch(i, v, b)
				res.Err = errSpecial
			}
		}
	}
	if res.Err != nil {
		res.Err = SpecialsError(res.Unwritten, n, res.First, dt.Bits(got, res.First.Index) == poison)
	}
	if res.Err != nil {
		return res
	}
	// 2. Against the float64 reference, in the order the elements were chosen.
	rv := r.values(out, n)
	r.checkValues(&res, out, rv, func(j int) (uint64, float64) {
		i := rv.idx[j]
		return dt.Bits(got, i), dt.Decode(got, i)
	})
	return res
}

// Indices returns the elements of output out that Check compares with the
// float64 reference, in order (computing the reference values the first
// time): a device gathers these for CheckSampled.
func (r *Refs) Indices(out int) ([]int, error) {
	n, err := r.d.Elems(r.o.Operands[out].Shape)
	if err != nil {
		return nil, err
	}
	return r.values(out, n).idx, nil
}

// CheckSampled is step 2 of Check on the elements of Indices(out) only:
// vals holds their little-endian bytes in that order (gathered where the
// output is, after a written-and-finite scan there). Unwritten is not set.
func (r *Refs) CheckSampled(out int, vals []byte) Numeric {
	var res Numeric
	op := r.o.Operands[out]
	dt := op.DType
	n, err := r.d.Elems(op.Shape)
	if err != nil {
		res.Err = err
		return res
	}
	rv := r.values(out, n)
	if len(vals) < len(rv.idx)*dt.Size() {
		res.Err = fmt.Errorf("output %s: %d sampled bytes, want %d", op.Name, len(vals), len(rv.idx)*dt.Size())
		return res
	}
	r.checkValues(&res, out, rv, func(j int) (uint64, float64) { return dt.Bits(vals, j), dt.Decode(vals, j) })
	return res
}

// checkValues compares the j-th chosen element (got(j): bits and value)
// with its reference, worst-case bound and probabilistic bound, in order,
// and records the largest errors and the first failure in res.
func (r *Refs) checkValues(res *Numeric, out int, rv *refValues, got func(j int) (uint64, float64)) {
	op := r.o.Operands[out]
	dt := op.DType
	ratio := func(dd, bound float64) float64 {
		switch {
		case dd == 0:
			return 0
		case bound == 0 || math.IsNaN(dd):
			return math.Inf(1)
		}
		return dd / bound
	}
	var boundErr error
	for j, i := range rv.idx {
		b, y := got(j)
		ref, bound, likely := rv.want[j], rv.bound[j], rv.likely[j]
		dd := math.Abs(y - ref)
		e := ratio(dd, bound)
		res.Checked++
		res.MaxErr = max(res.MaxErr, e)
		el := 0.0
		if likely > 0 {
			el = ratio(dd, likely)
			res.MaxLikely = max(res.MaxLikely, el)
		}
		if boundErr != nil || e <= 1 && el <= 1 {
			continue
		}
		res.First = mismatch(op, r.d, i, dt.Round(ref), y, roundBits(dt, dt.Round(ref)), b)
		if e > 1 {
			boundErr = fmt.Errorf("error %.3g × the bound (|y−ref| = %.3g, bound %.3g): %s", e, dd, bound, res.First)
		} else {
			boundErr = fmt.Errorf("error %.3g × the probabilistic bound (|y−ref| = %.3g, bound %.3g, %.3g of the worst-case bound; %s): %s",
				el, dd, likely, e, likelyModel, res.First)
		}
	}
	res.Err = boundErr
}

// likelyModel is the assumption of the probabilistic bounds, quoted in
// their failures.
const likelyModel = "assuming independent mean-zero rounding errors, error ≤ λ√K·2⁻²⁴·Σ|x·w| with λ = 10"

// errSpecial marks a written-and-finite failure until SpecialsError words
// it.
var errSpecial = errors.New("special element")

// SpecialsError is the failure of a written-and-finite scan that found
// unwritten elements (still the poison pattern; unwritten of n) or other
// non-finite ones: first is the earliest of them (poison says which kind
// it is), with its reference value as the wanted one (Refs.At).
func SpecialsError(unwritten, n int, first *Mismatch, poison bool) error {
	var err error
	if poison {
		err = fmt.Errorf("element never written (still poison): %s", first)
	} else {
		err = fmt.Errorf("non-finite output: %s", first)
	}
	if unwritten > 0 {
		err = fmt.Errorf("%d of %d elements unwritten; %w", unwritten, n, err)
	}
	return err
}

// At returns the Mismatch of element i of output out holding bits got,
// its reference value rounded to the operand's type as the wanted one.
func (r *Refs) At(out, i int, got uint64) *Mismatch {
	op := r.o.Operands[out]
	want, _ := r.o.Ref(r.d, r.in, out, i)
	want = op.DType.Round(want)
	return mismatch(op, r.d, i, want, decodeBits(op.DType, got), roundBits(op.DType, want), got)
}

// BitsMismatch is the Mismatch of element i of operand op between two
// outputs holding bits want and got.
func BitsMismatch(op kernel.Operand, d kernel.Dims, i int, want, got uint64) *Mismatch {
	return mismatch(op, d, i, decodeBits(op.DType, want), decodeBits(op.DType, got), want, got)
}

// specials returns the indices of the first n elements of got (type dt)
// whose exponent bits are all ones — NaN, ±Inf, and the all-ones poison —
// in order; none for a type that is not floating point.
func specials(dt kernel.DType, got []byte, n int) []int {
	var out []int
	switch dt {
	case kernel.F32:
		for i := 0; i < n; i++ {
			if binary.LittleEndian.Uint32(got[4*i:])&0x7f800000 == 0x7f800000 {
				out = append(out, i)
			}
		}
	case kernel.F16:
		for i := 0; i < n; i++ {
			if binary.LittleEndian.Uint16(got[2*i:])&0x7c00 == 0x7c00 {
				out = append(out, i)
			}
		}
	case kernel.BF16:
		for i := 0; i < n; i++ {
			if binary.LittleEndian.Uint16(got[2*i:])&0x7f80 == 0x7f80 {
				out = append(out, i)
			}
		}
	}
	return out
}

// values returns (computing them the first time) the elements of output
// out (n of them) that Check compares, with their reference and bound:
// every element when n ≤ maxSamples, else maxSamples drawn with a PCG
// seeded by the sample seed, then the last row and the last column, each
// element once, in that order.
func (r *Refs) values(out, n int) *refValues {
	r.mu.Lock()
	defer r.mu.Unlock()
	if rv := r.per[out]; rv != nil {
		return rv
	}
	rv := &refValues{idx: sampleIndices(r.o.Operands[out], r.d, n, r.seed, r.maxSamples)}
	rv.want = make([]float64, len(rv.idx))
	rv.bound = make([]float64, len(rv.idx))
	rv.likely = make([]float64, len(rv.idx))
	// The reference is a pure function of the inputs (Operator.Reference),
	// so the order the elements are computed in does not change a value:
	// in index order (ascending), neighbouring elements share their rows
	// of the inputs, which stay in cache (inOrder).
	ord := inOrder(rv.idx)
	parallelFor(len(ord), func(p int) {
		j := ord[p]
		v := r.o.RefBounds(r.d, r.in, out, rv.idx[j])
		rv.want[j], rv.bound[j], rv.likely[j] = v.Want, v.Bound, v.Likely
	})
	r.per[out] = rv
	return rv
}

// inOrder returns the positions of idx ordered by their element, smallest
// first: the order a reference computes its sampled elements in, so that
// consecutive elements (which share an input row: a row of X for the
// elements of one output row) reuse what the last one brought into cache,
// where the sample order (random) streamed two fresh rows of K inputs
// from memory for every element.
func inOrder(idx []int) []int {
	ord := make([]int, len(idx))
	for p := range ord {
		ord[p] = p
	}
	if !slices.IsSorted(idx) {
		slices.SortFunc(ord, func(a, b int) int { return cmp.Compare(idx[a], idx[b]) })
	}
	return ord
}

// parallelFor calls f(j) for every j < n, the indices shared out over the
// cores in contiguous blocks of at least 256 (f must be safe to run
// concurrently on distinct j).
func parallelFor(n int, f func(j int)) { parallelForN(0, n, f) }

// parallelForN is parallelFor on at most limit cores (0: every core).
func parallelForN(limit, n int, f func(j int)) {
	workers := min(runtime.GOMAXPROCS(0), max(n/256, 1))
	if limit > 0 {
		workers = min(workers, limit)
	}
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		lo, hi := w*n/workers, (w+1)*n/workers
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := lo; j < hi; j++ {
				f(j)
			}
		}()
	}
	wg.Wait()
}

// sampleIndices returns the elements of an output operand op of n
// elements that a check compares: every element when n ≤ maxSamples, else
// maxSamples drawn with a PCG seeded by seed, then the last row and the
// last column (where tails live), each element once, in that order.
func sampleIndices(op kernel.Operand, d kernel.Dims, n int, seed uint64, maxSamples int) []int {
	if n <= maxSamples {
		idx := make([]int, n)
		for i := range idx {
			idx[i] = i
		}
		return idx
	}
	c := cols(op, d)
	rows := n / c
	seen := make(map[int]bool, maxSamples+rows+c)
	var idx []int
	visit := func(i int) {
		if !seen[i] {
			seen[i] = true
			idx = append(idx, i)
		}
	}
	rg := rand.New(rand.NewPCG(seed, pcgIncrement))
	for j := 0; j < maxSamples; j++ {
		visit(rg.IntN(n))
	}
	for k := 0; k < c; k++ { // last row
		visit((rows-1)*c + k)
	}
	for m := 0; m < rows; m++ { // last column
		visit(m*c + c - 1)
	}
	return idx
}

// roundBits is the bit pattern of v (already rounded to dt) as dt.
func roundBits(dt kernel.DType, v float64) uint64 {
	switch dt {
	case kernel.F16:
		return uint64(f16bits(float32(v)))
	case kernel.BF16:
		return uint64(math.Float32bits(float32(v)) >> 16)
	case kernel.F32:
		return uint64(math.Float32bits(float32(v)))
	case kernel.I8:
		return uint64(uint8(int8(v)))
	}
	return 0
}

func shapeString(op kernel.Operand, d kernel.Dims) string {
	parts := make([]string, len(op.Shape))
	for i, s := range op.Shape {
		v, err := d.Size(s)
		if err != nil {
			parts[i] = s
		} else {
			parts[i] = strconv.Itoa(v)
		}
	}
	return strings.Join(parts, "×")
}
