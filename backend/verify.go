package backend

// This file is the interface of verification where the outputs are
// (issue 17): a backend that keeps a candidate's outputs on its device and
// compares, hashes and scans them there (Verifier), and draws inputs there
// with the counter-based generator (Drawer). HostVerifier is the same
// interface over Problem.Run, for any backend (and the CPU's own).

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"sync"

	"github.com/tilefit/tilefit/kernel"
	"github.com/tilefit/tilefit/verify"
)

// A Verifier is a Problem that keeps outputs where they are and checks
// them there (an optional capability, found by type assertion; VerifierOf
// gives every Problem one). Outputs are kept in numbered slots (any
// non-negative number; a slot's buffers are allocated on first use and
// hold every Out operand of one run). Only what the caller asks for is
// copied back: an index, a list of row hashes, a few elements.
type Verifier interface {
	// Keep runs k once on input set `set` exactly as Run does (every output
	// poisoned with 0xFF first, the guards checked: a changed guard is a
	// *GuardError) and keeps the outputs in slot, replacing what it held.
	Keep(ctx context.Context, k Kernel, set, slot int) error
	// Diff returns the index of the first element at or after from where
	// output operand i of slots a and b differ bitwise, or −1 when none
	// does.
	Diff(ctx context.Context, a, b, i int, from int64) (int64, error)
	// RowHashes returns the FNV-1a 64-bit hash (hash/fnv's New64a) of each
	// of the rows of output operand i in slot: the operand's bytes split
	// into rows equal parts, as verify.HashRows computes them.
	RowHashes(ctx context.Context, slot, i, rows int) ([]uint64, error)
	// Specials scans output operand i of slot for elements whose exponent
	// bits are all ones (none for a type that is not floating point): the
	// poison pattern (every bit one: never written) and other NaNs and
	// infinities.
	Specials(ctx context.Context, slot, i int) (Specials, error)
	// Gather returns the bytes of elements idx of output operand i of
	// slot, in that order.
	Gather(ctx context.Context, slot, i int, idx []int) ([]byte, error)
	// Free releases slot's buffers (a later Keep allocates them again).
	Free(slot int)
}

// A VerifyPlace is a Verifier that may have to verify on the host after
// all (an optional capability): VerifyOnDevice returns nil when its checks
// run where the outputs are, else why they fell back to the host (a sweep
// warns; results are the same, only slower).
type VerifyPlace interface {
	VerifyOnDevice(ctx context.Context) error
}

// Specials is what Verifier.Specials found: how many elements still hold
// the poison pattern and how many are otherwise not finite, with the first
// index of each (−1 when there is none).
type Specials struct {
	Poison, NonFinite           int64
	FirstPoison, FirstNonFinite int64
}

// VerifierOf returns p's own Verifier, or a HostVerifier over p.
func VerifierOf(p Problem) Verifier {
	if v, ok := p.(Verifier); ok {
		return v
	}
	return NewHostVerifier(p)
}

// HostVerifier implements Verifier over a Problem's Run: Keep holds Run's
// host copies (given back to the problem when replaced or freed), and the
// checks run on the host — the CPU backend's verifier, and the one a
// backend without its own gets.
type HostVerifier struct {
	p     Problem
	mu    sync.Mutex
	slots map[int][][]byte
}

// NewHostVerifier returns a HostVerifier over p.
func NewHostVerifier(p Problem) *HostVerifier {
	return &HostVerifier{p: p, slots: map[int][][]byte{}}
}

var _ Verifier = (*HostVerifier)(nil)

// Keep runs k on set (Run) and holds the outputs in slot.
func (h *HostVerifier) Keep(ctx context.Context, k Kernel, set, slot int) error {
	out, err := h.p.Run(ctx, k, set)
	if err != nil {
		return err
	}
	h.mu.Lock()
	old := h.slots[slot]
	h.slots[slot] = out
	h.mu.Unlock()
	if old != nil {
		Recycle(h.p, old)
	}
	return nil
}

// Free gives slot's outputs back to the problem.
func (h *HostVerifier) Free(slot int) {
	h.mu.Lock()
	old := h.slots[slot]
	delete(h.slots, slot)
	h.mu.Unlock()
	if old != nil {
		Recycle(h.p, old)
	}
}

// Outputs returns the outputs held in slot (nil when it is empty), for a
// host that needs them whole; they stay owned by h.
func (h *HostVerifier) Outputs(slot int) [][]byte {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.slots[slot]
}

func (h *HostVerifier) operand(slot, i int) (kernel.Operand, []byte, error) {
	op := h.p.Operator()
	if i < 0 || i >= len(op.Operands) || op.Operands[i].Dir != kernel.Out {
		return kernel.Operand{}, nil, fmt.Errorf("operand %d is not an output of %s", i, op.Name)
	}
	h.mu.Lock()
	out, ok := h.slots[slot]
	h.mu.Unlock()
	if !ok {
		return kernel.Operand{}, nil, fmt.Errorf("slot %d holds no outputs", slot)
	}
	return op.Operands[i], out[i], nil
}

// Diff compares operand i of slots a and b on the host.
func (h *HostVerifier) Diff(_ context.Context, a, b, i int, from int64) (int64, error) {
	op, x, err := h.operand(a, i)
	if err != nil {
		return 0, err
	}
	_, y, err := h.operand(b, i)
	if err != nil {
		return 0, err
	}
	return FirstDiff(x, y, op.DType.Size(), from), nil
}

// FirstDiff returns the index of the first element (of es bytes) at or
// after from where a and b differ, or −1; a shorter buffer differs at its
// first missing element.
func FirstDiff(a, b []byte, es int, from int64) int64 {
	n := int64(max(len(a), len(b)) / es)
	for lo := from; lo < n; lo += 1 << 16 {
		hi := min(n, lo+1<<16)
		if int(hi)*es <= len(a) && int(hi)*es <= len(b) && bytes.Equal(a[lo*int64(es):hi*int64(es)], b[lo*int64(es):hi*int64(es)]) {
			continue
		}
		for e := lo; e < hi; e++ {
			s, t := e*int64(es), (e+1)*int64(es)
			if t > int64(len(a)) || t > int64(len(b)) || !bytes.Equal(a[s:t], b[s:t]) {
				return e
			}
		}
	}
	return -1
}

// RowHashes hashes the rows of operand i of slot on the host.
func (h *HostVerifier) RowHashes(_ context.Context, slot, i, rows int) ([]uint64, error) {
	_, b, err := h.operand(slot, i)
	if err != nil {
		return nil, err
	}
	if rows <= 0 {
		return nil, nil
	}
	return verify.HashRows(b, rows, len(b)/rows), nil
}

// Specials scans operand i of slot on the host.
func (h *HostVerifier) Specials(_ context.Context, slot, i int) (Specials, error) {
	op, b, err := h.operand(slot, i)
	if err != nil {
		return Specials{}, err
	}
	return ScanSpecials(op.DType, b), nil
}

// ScanSpecials is Verifier.Specials of the little-endian elements of b of
// type dt.
func ScanSpecials(dt kernel.DType, b []byte) Specials {
	s := Specials{FirstPoison: -1, FirstNonFinite: -1}
	var exp, all uint32
	switch dt {
	case kernel.F32:
		exp, all = 0x7f800000, 0xffffffff
	case kernel.F16:
		exp, all = 0x7c00, 0xffff
	case kernel.BF16:
		exp, all = 0x7f80, 0xffff
	default:
		return s
	}
	es := dt.Size()
	n := len(b) / es
	for e := 0; e < n; e++ {
		var w uint32
		if es == 4 {
			w = binary.LittleEndian.Uint32(b[4*e:])
		} else {
			w = uint32(binary.LittleEndian.Uint16(b[2*e:]))
		}
		if w&exp != exp {
			continue
		}
		if w == all {
			if s.Poison == 0 {
				s.FirstPoison = int64(e)
			}
			s.Poison++
		} else {
			if s.NonFinite == 0 {
				s.FirstNonFinite = int64(e)
			}
			s.NonFinite++
		}
	}
	return s
}

// Gather copies elements idx of operand i of slot.
func (h *HostVerifier) Gather(_ context.Context, slot, i int, idx []int) ([]byte, error) {
	op, b, err := h.operand(slot, i)
	if err != nil {
		return nil, err
	}
	es := op.DType.Size()
	out := make([]byte, len(idx)*es)
	for j, e := range idx {
		if e < 0 || (e+1)*es > len(b) {
			return nil, fmt.Errorf("gather: element %d of %s out of range (%d elements)", e, op.Name, len(b)/es)
		}
		copy(out[j*es:], b[e*es:(e+1)*es])
	}
	return out, nil
}

// An Input is the contents of one input operand of one set: Bytes, or
// (Bytes nil) Drawn, drawn by the backend where the buffer lives when it
// is a Drawer (the host draws it otherwise). Either way the bytes are
// Drawn.Bytes().
type Input struct {
	Bytes []byte
	Drawn *kernel.Drawn
}

// A Drawer is a Backend that draws counter-based inputs where they live
// (an optional capability): NewDrawnProblem is NewProblem with each
// operand given as an Input.
type Drawer interface {
	NewDrawnProblem(ctx context.Context, op *kernel.Operator, d kernel.Dims, sets [][]Input) (Problem, error)
}

// NewProblemOf makes a Problem of sets on b: through b's NewDrawnProblem
// when b is a Drawer, else NewProblem with every drawn operand drawn on the
// host.
func NewProblemOf(ctx context.Context, b Backend, op *kernel.Operator, d kernel.Dims, sets [][]Input) (Problem, error) {
	if dr, ok := b.(Drawer); ok {
		return dr.NewDrawnProblem(ctx, op, d, sets)
	}
	return b.NewProblem(ctx, op, d, Materialize(sets))
}

// Materialize returns the bytes of every input: Bytes, or Drawn drawn on
// the host.
func Materialize(sets [][]Input) [][][]byte {
	out := make([][][]byte, len(sets))
	for s, set := range sets {
		out[s] = make([][]byte, len(set))
		for j, in := range set {
			if in.Bytes != nil || in.Drawn == nil {
				out[s][j] = in.Bytes
			} else {
				out[s][j] = in.Drawn.Bytes()
			}
		}
	}
	return out
}
