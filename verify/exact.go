package verify

// This file is the exact known-answer check (issue 17): inputs an operator
// declares (kernel.Operator.Exact) on which every correct kernel computes
// one known number per output element, compared value for value.

import (
	"errors"
	"fmt"
	"sync"

	"github.com/tilefit/tilefit/kernel"
)

// exactSalt separates the exact inputs' keys from the random inputs' of
// the same seed.
const exactSalt = 0xe8ac7c4ec4ec4e11

// ErrNoExact is wrapped by ExactInputs when the operator declares no exact
// check (kernel.Operator.Exact is nil).
var ErrNoExact = errors.New("declares no exact known-answer inputs (kernel.Operator.Exact)")

// ExactInputs returns the exact check of o on d and its input operands as
// counter-based draws from seed (the In operands in order; kernel.Drawn,
// the same bits on the host and on a device that draws them itself). The
// error says why the cell has none: the operator declares none
// (ErrNoExact), or its declaration does not reach d.
func ExactInputs(o *kernel.Operator, d kernel.Dims, seed uint64) (*kernel.Exact, []kernel.Drawn, error) {
	if o.Exact == nil {
		return nil, nil, fmt.Errorf("operator %s %w", o.Name, ErrNoExact)
	}
	ex, err := o.Exact(o, d)
	if err != nil {
		return nil, nil, fmt.Errorf("operator %s: no exact check on %s: %w", o.Name, d, err)
	}
	ins := o.InputIndices()
	if ex == nil || len(ex.Draws) != len(ins) || ex.Want == nil {
		return nil, nil, fmt.Errorf("operator %s: its exact check has %d draws for %d inputs (or no Want)", o.Name, lenDraws(ex), len(ins))
	}
	out := make([]kernel.Drawn, len(ins))
	for j, i := range ins {
		n, err := d.Elems(o.Operands[i].Shape)
		if err != nil {
			return nil, nil, err
		}
		out[j] = kernel.Drawn{Draw: ex.Draws[j], DType: o.Operands[i].DType, Key: kernel.DrawKey(seed^exactSalt, kernel.InputStream(i)), Elems: n}
	}
	return ex, out, nil
}

func lenDraws(ex *kernel.Exact) int {
	if ex == nil {
		return 0
	}
	return len(ex.Draws)
}

// Materialize returns the bytes of every draw (kernel.Drawn.Bytes).
func Materialize(drawn []kernel.Drawn) [][]byte {
	out := make([][]byte, len(drawn))
	for i, dr := range drawn {
		out[i] = dr.Bytes()
	}
	return out
}

// ExactRefs holds the exact answer of one cell's exact inputs: the
// elements of each output operand a check compares (every element up to
// maxSamples, else a seeded sample plus the last row and column, as Check
// chooses) with the value each must hold, computed once on every core, and
// single elements on demand (to settle which of two differing outputs is
// wrong). Safe for concurrent use.
type ExactRefs struct {
	o          *kernel.Operator
	d          kernel.Dims
	ex         *kernel.Exact
	in         [][]byte
	seed       uint64
	maxSamples int
	mu         sync.Mutex
	per        map[int]*exactValues
	whole      map[int][]float64 // every element's answer (Check), computed once
	// Workers bounds the cores the sampled answers are computed on (0:
	// every core): a sweep computes them while the device times and keeps
	// cores free for the thread that launches the timed kernels.
	Workers int
}

type exactValues struct {
	idx  []int
	want []float64 // rounded to the operand's type
}

// NewExactRefs returns the exact answer of ex on inputs in (the bytes of
// ExactInputs' draws) on dims d, sampled from sampleSeed and maxSamples.
// Nothing is computed until it is asked for.
func NewExactRefs(o *kernel.Operator, d kernel.Dims, ex *kernel.Exact, in [][]byte, sampleSeed uint64, maxSamples int) *ExactRefs {
	return &ExactRefs{o: o, d: d, ex: ex, in: in, seed: sampleSeed, maxSamples: maxSamples, per: map[int]*exactValues{}, whole: map[int][]float64{}}
}

// Want returns the value element i of output out must hold: the exact
// value rounded once to the operand's type.
func (r *ExactRefs) Want(out, i int) float64 {
	return r.o.Operands[out].DType.Round(r.ex.Want(r.in, out, i))
}

// Indices returns the elements of output out that CheckSampled compares,
// in order, computing their exact values the first time.
func (r *ExactRefs) Indices(out int) ([]int, error) {
	ev, err := r.values(out)
	if err != nil {
		return nil, err
	}
	return ev.idx, nil
}

func (r *ExactRefs) values(out int) (*exactValues, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if ev := r.per[out]; ev != nil {
		return ev, nil
	}
	op := r.o.Operands[out]
	n, err := r.d.Elems(op.Shape)
	if err != nil {
		return nil, err
	}
	ev := &exactValues{idx: sampleIndices(op, r.d, n, r.seed, r.maxSamples)}
	ev.want = make([]float64, len(ev.idx))
	ord := inOrder(ev.idx) // in cache-friendly order (as Refs computes)
	parallelForN(r.Workers, len(ord), func(p int) { j := ord[p]; ev.want[j] = r.Want(out, ev.idx[j]) })
	r.per[out] = ev
	return ev, nil
}

// SameValue reports whether element bits a and b of type dt hold the same
// value for the exact check: equal bits, or both zeros (+0 = −0: the sign
// of an exact zero sum may depend on the order of its terms).
func SameValue(dt kernel.DType, a, b uint64) bool {
	if a == b {
		return true
	}
	if !dt.Float() {
		return false
	}
	m := uint64(1)<<(8*dt.Size()-1) - 1
	return a&m == 0 && b&m == 0
}

// CheckSampled compares the elements of Indices(out) — vals holds their
// little-endian bytes in that order — with the exact answer and returns
// the first that differs (nil when all agree).
func (r *ExactRefs) CheckSampled(out int, vals []byte) (*Mismatch, error) {
	ev, err := r.values(out)
	if err != nil {
		return nil, err
	}
	op := r.o.Operands[out]
	dt := op.DType
	if len(vals) < len(ev.idx)*dt.Size() {
		return nil, fmt.Errorf("output %s: %d sampled bytes, want %d", op.Name, len(vals), len(ev.idx)*dt.Size())
	}
	for j, i := range ev.idx {
		wb := roundBits(dt, ev.want[j])
		if gb := dt.Bits(vals, j); !SameValue(dt, wb, gb) {
			return mismatch(op, r.d, i, ev.want[j], dt.Decode(vals, j), wb, gb), nil
		}
	}
	return nil, nil
}

// Check compares a whole output out (got: its bytes) with the exact answer
// on every element and returns the first that differs (nil when all agree).
// The answer of every element is computed once, on every core, the first
// time an output is checked, and kept: for tests and small outputs, where
// many candidates are checked on the same inputs.
func (r *ExactRefs) Check(out int, got []byte) (*Mismatch, error) {
	op := r.o.Operands[out]
	dt := op.DType
	n, err := r.d.Elems(op.Shape)
	if err != nil {
		return nil, err
	}
	if len(got) < n*dt.Size() {
		return nil, fmt.Errorf("output %s has %d bytes, want %d", op.Name, len(got), n*dt.Size())
	}
	for i, want := range r.wholeAnswer(out, n) {
		wb := roundBits(dt, want)
		if gb := dt.Bits(got, i); !SameValue(dt, wb, gb) {
			return mismatch(op, r.d, i, want, dt.Decode(got, i), wb, gb), nil
		}
	}
	return nil, nil
}

// wholeAnswer is Want of every element of output out (n elements),
// computed the first time it is asked for.
func (r *ExactRefs) wholeAnswer(out, n int) []float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	if w, ok := r.whole[out]; ok {
		return w
	}
	w := make([]float64, n)
	parallelFor(n, func(i int) { w[i] = r.Want(out, i) })
	r.whole[out] = w
	return w
}

// ExactMismatch is the Mismatch of element i of output out holding bits
// got where the exact answer is wanted.
func (r *ExactRefs) ExactMismatch(out, i int, got uint64) *Mismatch {
	op := r.o.Operands[out]
	want := r.Want(out, i)
	return mismatch(op, r.d, i, want, decodeBits(op.DType, got), roundBits(op.DType, want), got)
}

// Correct reports whether bits got are the exact answer of element i of
// output out.
func (r *ExactRefs) Correct(out, i int, got uint64) bool {
	dt := r.o.Operands[out].DType
	return SameValue(dt, roundBits(dt, r.Want(out, i)), got)
}

// decodeBits is the value of one element's bits.
func decodeBits(dt kernel.DType, b uint64) float64 {
	var buf [8]byte
	for k := 0; k < dt.Size(); k++ {
		buf[k] = byte(b >> (8 * k))
	}
	return dt.Decode(buf[:], 0)
}
