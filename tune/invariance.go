package tune

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/tilefit/tilefit/result"
	"github.com/tilefit/tilefit/verify"
)

// checkInvariance is the batch-invariance check of a finished cell, run
// before it is saved: each candidate's output rows (result.Candidate.Rows)
// are compared with its rows in the stored cells of the same shape and
// provenance at other M (stored: store.ShapeRows, the latest cell per M
// wins). When res's M is larger than every stored M, every stored M is
// compared with it; otherwise res is compared with the largest stored M —
// row r at M=m must have the bits of row r at the largest M, for r < m.
//
// A family candidate whose rows changed fails parity like any other
// (status parity, samples dropped, the message names the M values and the
// first changed row); a vendor baseline is never failed (the report counts
// its changed rows). It returns a warning when a shape's inputs are not
// prefixes of one another, so that nothing could be compared.
func checkInvariance(res *result.CellResult, stored []result.CellResult) (warning string) {
	var differ []int
	m := res.Cell.M
	// sides[tile][M]: the latest stored rows of tile at M.
	sides := map[string]map[int]verify.RowSide{}
	for _, c := range stored {
		if c.Cell.M == m {
			continue
		}
		for _, cand := range c.Candidates {
			if cand.AA || len(cand.Rows) == 0 {
				continue
			}
			if sides[cand.Tile] == nil {
				sides[cand.Tile] = map[int]verify.RowSide{}
			}
			sides[cand.Tile][c.Cell.M] = verify.RowSide{M: c.Cell.M, InputKey: c.InputKey, InputRows: c.InputRows, Rows: cand.Rows}
		}
	}
	for i := range res.Candidates {
		cand := &res.Candidates[i]
		others := sides[cand.Tile]
		if cand.AA || len(cand.Rows) == 0 || cand.Status != result.OK || len(others) == 0 {
			continue
		}
		ms := make([]int, 0, len(others))
		for om := range others {
			ms = append(ms, om)
		}
		sort.Ints(ms)
		own := verify.RowSide{M: m, InputKey: res.InputKey, InputRows: res.InputRows, Rows: cand.Rows}
		compare := []verify.RowSide{own}
		if largest := ms[len(ms)-1]; m > largest {
			for _, om := range ms {
				compare = append(compare, others[om])
			}
		} else {
			compare = append(compare, others[largest])
		}
		v := verify.CheckInvariance(compare)
		if v.NA == verify.InputsDiffer && differ == nil {
			differ = ms
		}
		if v.Changed == 0 || cand.Vendor {
			continue
		}
		cand.Status, cand.Detail = result.ParityFailed, v.Message()
		cand.Samples, cand.Dispatches = nil, 0
	}
	// The A/A twin runs the reference's kernel: a reference that failed
	// here fails its twin too (it has no rows of its own to compare).
	if ref := res.Find(res.Reference); ref != nil && ref.Status != result.OK {
		for i := range res.Candidates {
			if c := &res.Candidates[i]; c.AA && c.Status == result.OK {
				c.Status, c.Detail = result.Skipped, "reference tile failed ("+string(ref.Status)+")"
				c.Samples, c.Dispatches = nil, 0
			}
		}
	}
	if differ != nil {
		var list []string
		for _, om := range differ {
			list = append(list, strconv.Itoa(om))
		}
		warning = fmt.Sprintf("batch invariance of %s not checked at M=%d: its inputs and those of M %s are not prefixes of one another (an operator's Inputs must be prefix-consistent in M)",
			res.Cell.Shape, m, strings.Join(list, ", "))
	}
	return warning
}

// packedResult is a cell result as a worker sends it: the row hashes of
// the candidates, which every tile bitwise equal to its class base shares
// with it, are sent once each (Rows) and referenced per candidate (RowsOf:
// an index into Rows, -1 for none), so that a cell of many tiles at a
// large M stays far below the frame limit.
type packedResult struct {
	result.CellResult
	Rows   [][]result.RowHashes `json:"rows_table,omitempty"`
	RowsOf []int                `json:"rows_of,omitempty"`
}

// packRows moves res's candidates' row hashes into a table of the
// distinct lists (the same hash arrays, as runCell shares them).
func packRows(res result.CellResult) packedResult {
	p := packedResult{CellResult: res}
	p.Candidates = append([]result.Candidate(nil), res.Candidates...)
	index := map[string]int{}
	for i := range p.Candidates {
		rows := p.Candidates[i].Rows
		p.Candidates[i].Rows = nil
		if len(rows) == 0 {
			p.RowsOf = append(p.RowsOf, -1)
			continue
		}
		var key strings.Builder
		for _, r := range rows {
			fmt.Fprintf(&key, "%s %d %p;", r.Operand, len(r.Hashes), unsafeFirst(r.Hashes))
		}
		j, ok := index[key.String()]
		if !ok {
			j = len(p.Rows)
			index[key.String()] = j
			p.Rows = append(p.Rows, rows)
		}
		p.RowsOf = append(p.RowsOf, j)
	}
	return p
}

// unsafeFirst is the address of h's first element (nil when empty): lists
// that share their array are the same list.
func unsafeFirst(h result.Hashes) *uint64 {
	if len(h) == 0 {
		return nil
	}
	return &h[0]
}

// unpack restores the candidates' row hashes.
func (p packedResult) unpack() (result.CellResult, error) {
	res := p.CellResult
	if len(p.RowsOf) != len(res.Candidates) {
		if len(p.RowsOf) == 0 && len(p.Rows) == 0 {
			return res, nil
		}
		return res, fmt.Errorf("worker result: %d row references for %d candidates", len(p.RowsOf), len(res.Candidates))
	}
	for i, j := range p.RowsOf {
		switch {
		case j < 0:
		case j < len(p.Rows):
			res.Candidates[i].Rows = p.Rows[j]
		default:
			return res, fmt.Errorf("worker result: candidate %d refers to row list %d of %d", i, j, len(p.Rows))
		}
	}
	return res, nil
}
