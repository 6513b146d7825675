package tune

import (
	"context"
	"errors"
	"time"

	"github.com/tilefit/tilefit/backend"
	"github.com/tilefit/tilefit/kernel"
	"github.com/tilefit/tilefit/result"
	"github.com/tilefit/tilefit/verify"
)

// classBase is a numerics class's bitwise base in a cell: the first
// candidate of the class that passed verification, its outputs kept in a
// slot of the cell's verifier.
type classBase struct {
	slot    int
	present []bool
	tile    string
	maxErr  float64
	rows    []result.RowHashes
	bitwise bool // equal to the cell's reference on every output both have
}

// verifyAll verifies every runnable candidate on set 0, the reference
// first: two runs bitwise equal; bitwise equal to its numerics class's
// base (the first verified candidate of the class), or else — the base of
// a new class, or a vendor — written, finite and within the float64
// reference's bounds; then its row hashes; then, when it passed, the
// exact check on its run of the exact inputs (exactCand; kept in the same
// wait as its two runs where the verifier can).
func (r *cellRun) verifyAll() error {
	bases := map[string]*classBase{}
	var first *classBase // the first class's base: the cell's reference
	for _, i := range r.order() {
		if r.kernels[i] == nil || r.cands[i].Status != "" || r.job.Candidates[i].AA {
			continue
		}
		nb, err := r.verifyOne(i, bases, first)
		if err != nil {
			return err
		}
		if r.ex != nil {
			t0 := time.Now()
			err := r.exactCand(i)
			r.ex.ran, r.ex.pending = false, nil
			r.tick("exact", t0)
			if err != nil {
				return err
			}
		}
		if nb != nil {
			bases[r.job.Candidates[i].Class] = nb
			if first == nil {
				first = nb
				if i != r.ref {
					r.res.Reference = r.job.Candidates[i].Tile
				}
			}
		}
	}
	return nil
}

// verifyOne verifies candidate i and returns the new class base it became
// (nil when it joined a class, is a vendor, or failed).
func (r *cellRun) verifyOne(i int, bases map[string]*classBase, first *classBase) (*classBase, error) {
	jc := r.job.Candidates[i]
	runs := time.Duration(2)
	if r.ex != nil {
		runs = 3 // the exact check's run, batched or right after
	}
	r.emit(Event{Cand: i, Phase: "verify", Expect: runs * r.expect})
	t0 := time.Now()
	pres := r.present(i)
	if err := r.keepTwice(i); err != nil {
		return nil, r.runErr(i, err, "")
	}
	tp := r.tick("keep", t0)
	msg, differs, err := r.sameOutputs(r.run1, pres, r.run2, pres)
	tp = r.tick("diff", tp)
	if err != nil {
		return nil, r.runErr(i, err, "")
	}
	if differs {
		r.cands[i].Status, r.cands[i].Detail = result.ParityFailed, "two runs differ: "+msg
		return nil, nil
	}
	if r.expect == 0 {
		r.expect = time.Since(t0) / 2
		if r.ex != nil && r.ex.ran {
			r.expect = time.Since(t0) / 3
		}
	}
	// Bitwise equal (on every output both have) to a base that passed the
	// float64 check and has no output this one lacks: the same numbers,
	// so the float64 check is not repeated.
	base := bases[jc.Class]
	var diffMsg string
	var diff bool
	if base != nil {
		diffMsg, diff, err = r.sameOutputs(base.slot, base.present, r.run1, pres)
		tp = r.tick("diff", tp)
		if err != nil {
			return nil, r.runErr(i, err, "")
		}
		if !diff && covers(base.present, pres) {
			// Bitwise means equal to the cell's reference, whose class came
			// first; another class's members are what their base is.
			r.cands[i].Status, r.cands[i].Bitwise, r.cands[i].MaxErr = result.OK, base.bitwise, base.maxErr
			r.cands[i].Rows = presentRows(r.op, base.rows, pres) // the same bits, the same row hashes
			return nil, nil
		}
	}
	maxErr, numErr, err := r.numeric(r.run1, pres, r.refsFor(i))
	tp = r.tick("numeric", tp)
	if err != nil {
		return nil, r.runErr(i, err, "")
	}
	r.cands[i].MaxErr = maxErr
	if numErr != nil {
		r.cands[i].Status, r.cands[i].Detail = result.NumericFailed, numErr.Error()
		return nil, nil
	}
	rows, err := r.rowHashes(r.run1, pres)
	r.tick("hash", tp)
	if err != nil {
		return nil, r.runErr(i, err, "")
	}
	var nb *classBase
	switch {
	case jc.Vendor:
	case base == nil:
		nb = &classBase{slot: r.run1, present: pres, tile: jc.Tile, maxErr: maxErr, rows: rows, bitwise: first == nil}
		r.run1 = r.slot() // the outputs stay: the class's base
		if first != nil {
			// Another class need not equal the reference; record whether
			// it does (the report says which are bitwise).
			_, d, err := r.sameOutputs(first.slot, first.present, nb.slot, pres)
			if err != nil {
				return nil, r.runErr(i, err, "")
			}
			nb.bitwise = !d
		}
		r.cands[i].Bitwise = nb.bitwise
	case diff && !r.job.AllowDiff:
		r.cands[i].Status, r.cands[i].Detail = result.ParityFailed, "differs from "+base.tile+": "+diffMsg
		return nil, nil
	case !diff:
		// Equal to its base on the outputs both have (it has more).
		r.cands[i].Bitwise = base.bitwise
	}
	r.cands[i].Status, r.cands[i].Rows = result.OK, rows
	return nb, nil
}

// pairKeeper is a Verifier that runs a candidate's two verification runs
// with one wait for the device (the CUDA problem's KeepPair): Keep into
// a, then Keep into b, each run's guards checked, the first run's first.
type pairKeeper interface {
	KeepPair(ctx context.Context, k backend.Kernel, set, a, b int) error
}

// keepTwice runs candidate i twice on set 0, into r.run1 then r.run2,
// each on freshly poisoned outputs with its guards checked; where the
// exact check's runs share the cell's verifier (exactCheck.shared), its
// run on the exact inputs comes in the same wait, into the exact check's
// scratch slot, its guard error kept for exactCand.
func (r *cellRun) keepTwice(i int) error {
	if x := r.ex; x != nil && x.shared {
		pairErr, otherErr := r.ver.(tripleKeeper).KeepPairAnd(r.ctx, r.kernels[i], 0, r.run1, r.run2, x.prob, 0, x.scratch)
		if pairErr == nil {
			x.ran, x.pending = true, otherErr
		}
		return pairErr
	}
	if pk, ok := r.ver.(pairKeeper); ok {
		return pk.KeepPair(r.ctx, r.kernels[i], 0, r.run1, r.run2)
	}
	for _, slot := range []int{r.run1, r.run2} {
		if err := r.ver.Keep(r.ctx, r.kernels[i], 0, slot); err != nil {
			return err
		}
	}
	return nil
}

// sameOutputs compares slots a and b on every output both have (pa, pb)
// and describes the first difference (the operand named when the operator
// has several outputs).
func (r *cellRun) sameOutputs(a int, pa []bool, b int, pb []bool) (msg string, differs bool, err error) {
	return compareSlots(r, r.ver, a, pa, b, pb)
}

// compareSlots is sameOutputs on verifier v.
func compareSlots(r *cellRun, v backend.Verifier, a int, pa []bool, b int, pb []bool) (string, bool, error) {
	for j, o := range r.op.Operands {
		if o.Dir != kernel.Out || !pa[j] || !pb[j] {
			continue
		}
		e, err := v.Diff(r.ctx, a, b, j, 0)
		if err != nil {
			return "", false, err
		}
		if e < 0 {
			continue
		}
		wb, gb, err := elementPair(r, v, a, b, j, e)
		if err != nil {
			return "", false, err
		}
		return verify.Label(r.op, j, verify.BitsMismatch(o, r.d, int(e), wb, gb).String()), true, nil
	}
	return "", false, nil
}

// elementPair returns the bits of element e of operand j in slots a and b.
func elementPair(r *cellRun, v backend.Verifier, a, b, j int, e int64) (uint64, uint64, error) {
	dt := r.op.Operands[j].DType
	x, err := v.Gather(r.ctx, a, j, []int{int(e)})
	if err != nil {
		return 0, 0, err
	}
	y, err := v.Gather(r.ctx, b, j, []int{int(e)})
	if err != nil {
		return 0, 0, err
	}
	return dt.Bits(x, 0), dt.Bits(y, 0), nil
}

// refsFor is the float64 reference candidate i is checked against: the
// cell's, or for a vendor baseline with fp16 intermediates
// (JobCandidate.F16Intermediate) the operator's unfused one — the same
// values, a bound widened by the fp16 roundings (kernel.Operator.Unfused).
func (r *cellRun) refsFor(i int) *verify.Refs {
	if !r.job.Candidates[i].F16Intermediate || r.op.Unfused == nil {
		return r.refs
	}
	if r.unfused == nil {
		r.unfused = verify.NewRefs(r.op.WithUnfusedBound(), r.d, r.host0, r.job.Seed^0x5eed, r.job.MaxSamples)
	}
	return r.unfused
}

// needsUnfused reports whether a runnable candidate of the cell is checked
// against the unfused reference (refsFor), which prepare then computes in
// the background with the cell's own.
func (r *cellRun) needsUnfused() bool {
	if r.op.Unfused == nil {
		return false
	}
	for _, jc := range r.job.Candidates {
		if jc.F16Intermediate && jc.Status == "" {
			return true
		}
	}
	return false
}

// numeric checks every present output of slot against the float64
// reference where the outputs are: the written-and-finite scan, then the
// sampled elements gathered and compared with both bounds. numErr is the
// first failure; err a device error.
func (r *cellRun) numeric(slot int, pres []bool, refs *verify.Refs) (maxErr float64, numErr, err error) {
	for j, o := range r.op.Operands {
		if o.Dir != kernel.Out || !pres[j] {
			continue
		}
		n, _ := r.d.Elems(o.Shape)
		sp, err := r.ver.Specials(r.ctx, slot, j)
		if err != nil {
			return 0, nil, err
		}
		if sp.Poison > 0 || sp.NonFinite > 0 {
			e, poison := sp.FirstNonFinite, false
			if sp.FirstPoison >= 0 && (e < 0 || sp.FirstPoison < e) {
				e, poison = sp.FirstPoison, true
			}
			v, err := r.ver.Gather(r.ctx, slot, j, []int{int(e)})
			if err != nil {
				return 0, nil, err
			}
			m := refs.At(j, int(e), o.DType.Bits(v, 0))
			if numErr == nil {
				numErr = errors.New(verify.Label(r.op, j, verify.SpecialsError(int(sp.Poison), n, m, poison).Error()))
			}
			continue
		}
		t0 := time.Now()
		idx, err := refs.Indices(j) // waits while the background computes it
		r.refWait += time.Since(t0)
		if err != nil {
			return 0, nil, err
		}
		vals, err := r.ver.Gather(r.ctx, slot, j, idx)
		if err != nil {
			return 0, nil, err
		}
		num := refs.CheckSampled(j, vals)
		maxErr = max(maxErr, num.MaxErr)
		if num.Err != nil && numErr == nil {
			numErr = errors.New(verify.Label(r.op, j, num.Err.Error()))
		}
	}
	return maxErr, numErr, nil
}

// rowHashes hashes the rows of every present output of slot led by M.
func (r *cellRun) rowHashes(slot int, pres []bool) ([]result.RowHashes, error) {
	var out []result.RowHashes
	for j, o := range r.op.Operands {
		if o.Dir != kernel.Out || !pres[j] {
			continue
		}
		rows, ok := verify.HashedRows(r.op, r.d, j)
		if !ok {
			continue
		}
		h, err := r.ver.RowHashes(r.ctx, slot, j, rows)
		if err != nil {
			return nil, err
		}
		out = append(out, result.RowHashes{Operand: o.Name, Hashes: h})
	}
	return out, nil
}
