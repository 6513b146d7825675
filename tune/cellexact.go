package tune

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tilefit/tilefit/backend"
	"github.com/tilefit/tilefit/kernel"
	"github.com/tilefit/tilefit/result"
	"github.com/tilefit/tilefit/verify"
)

// exactCheck is a cell's exact known-answer check (kernel.Operator.Exact):
// a one-set problem on the exact inputs, their exact answer on the host,
// and per output operand the base every other candidate is compared with
// where the outputs are.
type exactCheck struct {
	prob backend.Problem
	// ver holds the exact runs' outputs: the cell's verifier when its
	// KeepPairAnd keeps them with the verify phase's two runs (shared),
	// else the exact problem's own.
	ver      backend.Verifier
	shared   bool
	refs     *verify.ExactRefs
	base     []*exactBase // per operand; nil until a candidate passed
	nextSlot int          // the exact problem's next slot (not shared)
	scratch  int          // the slot the next candidate's exact run goes to
	// pending is candidate i's exact run error from the batch (KeepPairAnd),
	// applied once its verification passed; ran says the run was made.
	pending error
	ran     bool
}

// exactBase is the first candidate of an output operand not found off
// the exact answer, and those found bitwise equal to it; its sampled
// elements are compared with the exact answer once, after every
// candidate (exactFinish), so that the verify phase never waits for the
// exact answer, computed in the background meanwhile.
type exactBase struct {
	slot    int
	cand    int
	members []int
}

// maxZeroSigns bounds the differences in the sign of a zero the check
// steps over before it calls the outputs different.
const maxZeroSigns = 1000

// prepareExact sets up the exact check: none (with a warning in the cell)
// when the operator declares none or its declaration does not reach the
// cell.
func (r *cellRun) prepareExact(used map[drawID]bool) error {
	ex, drawn, err := verify.ExactInputs(r.op, r.d, r.job.Seed)
	if err != nil {
		w := "no exact check: " + err.Error() + ": the cell is verified against the float64 reference and by bitwise parity only"
		if errors.Is(err, verify.ErrNoExact) {
			w = err.Error() + ": its cells are verified against the float64 reference and by bitwise parity only"
		}
		r.res.Warnings = append(r.res.Warnings, w)
		return nil
	}
	set, host := drawnInputs(drawn, used)
	p, err := backend.NewProblemOf(r.ctx, r.b, r.op, r.d, [][]backend.Input{set})
	if err != nil {
		return fmt.Errorf("cell %s M=%d: allocate the exact check's inputs: %w", r.job.Cell.Shape, r.job.Cell.M, err)
	}
	r.closers = append(r.closers, func() { p.Close() })
	x := &exactCheck{prob: p, ver: backend.VerifierOf(p), base: make([]*exactBase, len(r.op.Operands)),
		refs: verify.NewExactRefs(r.op, r.d, ex, host, r.job.Seed^0xe8ac7, r.job.MaxSamples)}
	if tk, ok := r.ver.(tripleKeeper); ok && tk.KeepsFrom(p) {
		x.ver, x.shared = r.ver, true
	}
	x.scratch = x.newSlot(r)
	r.ex = x
	return nil
}

// tripleKeeper is a Verifier that keeps a third run, of another problem
// of the same operator and dims (the exact check's), in one of its own
// slots with KeepPair's two runs and one wait for the device (the CUDA
// problem's KeepPairAnd): pairErr is KeepPair's error, otherErr the
// third run's guard violation.
type tripleKeeper interface {
	pairKeeper
	KeepPairAnd(ctx context.Context, k backend.Kernel, set, a, b int, other backend.Problem, oset, c int) (pairErr, otherErr error)
	KeepsFrom(other backend.Problem) bool
}

// newSlot returns an unused slot of x.ver.
func (x *exactCheck) newSlot(r *cellRun) int {
	if x.shared {
		return r.slot()
	}
	x.nextSlot++
	return x.nextSlot - 1
}

// exactCand checks verified candidate i (vendors too) on the exact
// inputs, in the verify phase right after its own verification, in the
// verification order (the reference first): its run comes from the
// verify phase's batch (KeepPairAnd) or, without one, is made here; each
// present output is then compared with the exact answer: the first
// candidate of an operand becomes its base, every later one is compared
// bitwise with that base where the outputs are. When a candidate differs
// from the base, the exact value of the first differing element says
// which of the two is wrong; a base found wrong fails with every
// candidate that matched it, and the candidate takes its place. The
// base's own sampled elements (a sample, the last row and the last
// column; every element of a small output) are compared with the exact
// answer after the last candidate (exactFinish): a base off the answer
// there fails with its members. A family tile that fails is numeric
// ("exact check: …"); a vendor's mismatch is a warning of the cell (its
// arithmetic is its own; the float64 check bounds it).
func (r *cellRun) exactCand(i int) error {
	x := r.ex
	if r.kernels[i] == nil || r.cands[i].Status != result.OK || r.job.Candidates[i].AA {
		return nil
	}
	slot := x.scratch
	if x.shared && !x.ran {
		return fmt.Errorf("cell %s M=%d: %s: the exact run was not kept with its verification runs", r.job.Cell.Shape, r.job.Cell.M, r.job.Candidates[i].Tile)
	}
	if x.ran {
		if err := x.pending; err != nil {
			x.pending = nil
			return r.runErr(i, err, "exact check: ")
		}
	} else if err := x.ver.Keep(r.ctx, r.kernels[i], 0, slot); err != nil {
		return r.runErr(i, err, "exact check: ")
	}
	pres := r.present(i)
	for j, o := range r.op.Operands {
		if o.Dir != kernel.Out || !pres[j] || r.cands[i].Status != result.OK {
			continue
		}
		if err := r.exactOperand(i, j, slot); err != nil {
			return r.runErr(i, err, "exact check: ")
		}
	}
	if x.holds(slot) {
		x.scratch = x.newSlot(r) // the outputs stay: a base
	}
	return nil
}

// exactFinish compares each operand's base with the exact answer on its
// sampled elements (waiting, if need be, for the answer computed in the
// background) and fails the base and its members where it is off; then
// frees the exact slots.
func (r *cellRun) exactFinish() error {
	x := r.ex
	for j, b := range x.base {
		if b == nil {
			continue
		}
		if r.job.Trace {
			t0 := time.Now()
			_, _ = x.refs.Indices(j)
			r.exactWait += time.Since(t0)
		}
		r.emit(Event{Cand: b.cand, Phase: "exact", Expect: r.expect})
		m, err := r.exactSamples(j, b.slot)
		if err != nil {
			return r.runErr(b.cand, err, "exact check: ")
		}
		if m == nil {
			continue
		}
		r.exactFail(b.cand, j, m, "")
		for _, c := range b.members {
			r.exactFail(c, j, m, " (bitwise equal to "+r.job.Candidates[b.cand].Tile+" on the exact inputs)")
		}
	}
	freed := map[int]bool{}
	for _, b := range x.base {
		if b != nil && !freed[b.slot] {
			freed[b.slot] = true
			x.ver.Free(b.slot)
		}
	}
	if !freed[x.scratch] {
		x.ver.Free(x.scratch)
	}
	return nil
}

// holds reports whether slot is some operand's base.
func (x *exactCheck) holds(slot int) bool {
	for _, b := range x.base {
		if b != nil && b.slot == slot {
			return true
		}
	}
	return false
}

// exactOperand checks output operand j of candidate i (its outputs in
// slot); err is a device error.
func (r *cellRun) exactOperand(i, j, slot int) error {
	x := r.ex
	vendor := r.job.Candidates[i].Vendor
	base := x.base[j]
	if base == nil {
		if !vendor {
			// Its samples are compared after the last candidate.
			x.base[j] = &exactBase{slot: slot, cand: i}
			return nil
		}
		m, err := r.exactSamples(j, slot)
		if err == nil && m != nil {
			r.exactFail(i, j, m, "")
		}
		return err
	}
	dt := r.op.Operands[j].DType
	zeros := 0
	for from := int64(0); ; {
		e, err := x.ver.Diff(r.ctx, base.slot, slot, j, from)
		if err != nil || e < 0 {
			if err == nil {
				base.members = append(base.members, i)
			}
			return err
		}
		bb, cb, err := elementPair(r, x.ver, base.slot, slot, j, e)
		if err != nil {
			return err
		}
		if verify.SameValue(dt, bb, cb) && zeros < maxZeroSigns {
			zeros++
			from = e + 1
			continue
		}
		switch {
		case !x.refs.Correct(j, int(e), cb):
			r.exactFail(i, j, x.refs.ExactMismatch(j, int(e), cb), "")
		case !x.refs.Correct(j, int(e), bb):
			// The base is wrong where this candidate is right: the base and
			// every candidate that matched it fail; this one replaces it if
			// its samples pass.
			m := x.refs.ExactMismatch(j, int(e), bb)
			for _, b := range append([]int{base.cand}, base.members...) {
				r.exactFail(b, j, m, " (found against "+r.job.Candidates[i].Tile+")")
			}
			x.base[j] = nil
			if !x.holds(base.slot) && base.slot != slot {
				x.ver.Free(base.slot)
			}
			return r.exactOperand(i, j, slot)
		default:
			r.exactFail(i, j, x.refs.ExactMismatch(j, int(e), cb), " (too many zeros of another sign)")
		}
		return nil
	}
}

// exactSamples compares the sampled elements of operand j in slot with
// the exact answer.
func (r *cellRun) exactSamples(j, slot int) (*verify.Mismatch, error) {
	idx, err := r.ex.refs.Indices(j)
	if err != nil {
		return nil, err
	}
	vals, err := r.ex.ver.Gather(r.ctx, slot, j, idx)
	if err != nil {
		return nil, err
	}
	return r.ex.refs.CheckSampled(j, vals)
}

// exactFail records candidate i's exact-check failure on operand j: a
// family tile fails (numeric), a vendor's is a warning of the cell.
func (r *cellRun) exactFail(i, j int, m *verify.Mismatch, note string) {
	msg := "exact check: " + verify.Label(r.op, j, "on integer inputs every correct kernel gives the exact answer; "+m.String()) + note
	if r.job.Candidates[i].Vendor {
		r.res.Warnings = append(r.res.Warnings, "vendor "+r.job.Candidates[i].Tile+" is off the exact answer (its own arithmetic; the float64 check bounds it): "+
			verify.Label(r.op, j, m.String()))
		return
	}
	if r.cands[i].Status == result.OK {
		r.cands[i].Status, r.cands[i].Detail, r.cands[i].Rows = result.NumericFailed, msg, nil
	}
}
