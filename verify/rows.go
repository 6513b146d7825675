package verify

// This file is the batch-invariance check (issue 10 item 5): a candidate's
// output rows are hashed in every cell, and the rows of one shape's cells
// at different M are compared (the inputs of a smaller M are a prefix of
// those of a larger M, so row r must have the same bits at every M > r).

import (
	"fmt"
	"hash/fnv"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/tilefit/tilefit/kernel"
	"github.com/tilefit/tilefit/result"
)

// rowBytes returns the bytes of one row of op when its leading dimension
// is row (the operator's first dimension, M), with the row count.
func rowBytes(op kernel.Operand, d kernel.Dims, row string) (rows, bytes int, ok bool) {
	if len(op.Shape) == 0 || op.Shape[0] != row {
		return 0, 0, false
	}
	m, err := d.Size(row)
	if err != nil {
		return 0, 0, false
	}
	rest, err := d.Elems(op.Shape[1:])
	if err != nil {
		return 0, 0, false
	}
	return m, rest * op.DType.Size(), true
}

// HashedRows returns the rows of output operand j of o on d when its
// leading dimension is o's first (M) — the operands RowHashes hashes.
func HashedRows(o *kernel.Operator, d kernel.Dims, j int) (rows int, ok bool) {
	if len(o.Dims) == 0 || j < 0 || j >= len(o.Operands) || o.Operands[j].Dir != kernel.Out {
		return 0, false
	}
	rows, _, ok = rowBytes(o.Operands[j], d, o.Dims[0])
	return rows, ok
}

// HashRows hashes each of the rows of b (n bytes each; FNV-1a, 64 bits,
// as hash/fnv's New64a); rows past the end of b hash as empty. Large
// buffers are hashed by several goroutines (a 2048×10240 fp32 output is
// 84 MB). Backends that hash on the device compute the same function.
func HashRows(b []byte, rows, n int) result.Hashes {
	out := make(result.Hashes, rows)
	hash := func(lo, hi int) {
		h := fnv.New64a()
		for r := lo; r < hi; r++ {
			h.Reset()
			h.Write(b[min(r*n, len(b)):min((r+1)*n, len(b))])
			out[r] = h.Sum64()
		}
	}
	workers := min(runtime.GOMAXPROCS(0), rows, len(b)/(1<<22)+1) // one per 4 MiB at most
	if workers <= 1 {
		hash(0, rows)
		return out
	}
	var wg sync.WaitGroup
	per := (rows + workers - 1) / workers
	for lo := 0; lo < rows; lo += per {
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			hash(lo, hi)
		}(lo, min(lo+per, rows))
	}
	wg.Wait()
	return out
}

// RowHashes returns the row hashes of every output operand of o present
// for a candidate (present[j]; nil means all) whose leading dimension is
// o's first dimension (M): one FNV-1a 64-bit hash of each row's bytes, in
// operand order. Operands not led by M are not hashed.
func RowHashes(o *kernel.Operator, d kernel.Dims, present []bool, out [][]byte) []result.RowHashes {
	if len(o.Dims) == 0 {
		return nil
	}
	var res []result.RowHashes
	for j, op := range o.Operands {
		if op.Dir != kernel.Out || (present != nil && !present[j]) || j >= len(out) {
			continue
		}
		rows, n, ok := rowBytes(op, d, o.Dims[0])
		if !ok {
			continue
		}
		res = append(res, result.RowHashes{Operand: op.Name, Hashes: HashRows(out[j], rows, n)})
	}
	return res
}

// InputRows describes a cell's inputs in (the In operands of o, in order,
// as GenInputs returns them) for the batch-invariance check: key is a hash
// (16 hex digits) of every input not led by M, which must be the same at
// every M of a shape; rows holds one hash per row over the row of every
// input led by M (nil when there is none), which must agree on the common
// prefix of two cells.
func InputRows(o *kernel.Operator, d kernel.Dims, in [][]byte) (key string, rows result.Hashes) {
	if len(o.Dims) == 0 {
		return "", nil
	}
	kh := fnv.New64a()
	type led struct {
		b []byte
		n int
	}
	var leds []led
	m := 0
	for k, j := range o.InputIndices() {
		if k >= len(in) {
			break
		}
		op := o.Operands[j]
		if r, n, ok := rowBytes(op, d, o.Dims[0]); ok {
			leds, m = append(leds, led{in[k], n}), r
			continue
		}
		// Hashed in 1 MiB pieces (in parallel), the pieces' hashes into
		// the key.
		const piece = 1 << 20
		fmt.Fprintf(kh, "%s:%d:", op.Name, len(in[k]))
		kh.Write(HashRows(in[k], (len(in[k])+piece-1)/piece, piece).Bytes())
	}
	key = fmt.Sprintf("%016x", kh.Sum64())
	if len(leds) == 0 {
		return key, nil
	}
	rows = make(result.Hashes, m)
	h := fnv.New64a()
	for r := range rows {
		h.Reset()
		for _, l := range leds {
			lo, hi := min(r*l.n, len(l.b)), min((r+1)*l.n, len(l.b))
			h.Write(l.b[lo:hi])
		}
		rows[r] = h.Sum64()
	}
	return key, rows
}

// A RowSide is one candidate's rows in one cell of a shape.
type RowSide struct {
	M         int
	InputKey  string
	InputRows result.Hashes
	Rows      []result.RowHashes
}

// Why a RowDiff or an Invariance compared nothing.
const (
	NotRecorded  = "not recorded"     // no row hashes (a failed candidate, or a cell stored before schema 3)
	InputsDiffer = "inputs differ"    // the smaller M's inputs are not a prefix of the larger's
	NoCommonRows = "no common output" // no output operand hashed in both cells
	OneM         = "one M"            // rows of a single M: nothing to compare with
)

// A RowDiff is the comparison of the first min(a.M, b.M) rows of two
// sides.
type RowDiff struct {
	// Why is set (NotRecorded, InputsDiffer, NoCommonRows) when the sides
	// could not be compared.
	Why string
	// Rows is the rows compared; Changed those whose bits differ in any
	// output operand both have.
	Rows, Changed int
	// FirstRow and FirstOperand name the first changed row (-1 when none).
	FirstRow     int
	FirstOperand string
}

// CompareRows compares the rows both sides have: their inputs must agree
// (the same key, the same input rows on the common prefix), then row r of
// every output operand both have must have the same hash, for r < min(M).
func CompareRows(a, b RowSide) RowDiff {
	d := RowDiff{FirstRow: -1}
	if len(a.Rows) == 0 || len(b.Rows) == 0 || a.InputKey == "" || b.InputKey == "" {
		d.Why = NotRecorded
		return d
	}
	n := min(a.M, b.M)
	if a.InputKey != b.InputKey || !samePrefix(a.InputRows, b.InputRows, n) {
		d.Why = InputsDiffer
		return d
	}
	changed := make([]bool, n)
	common := false
	for _, ra := range a.Rows {
		for _, rb := range b.Rows {
			if ra.Operand != rb.Operand {
				continue
			}
			if len(ra.Hashes) < n || len(rb.Hashes) < n {
				continue
			}
			common = true
			for r := 0; r < n; r++ {
				if ra.Hashes[r] != rb.Hashes[r] && !changed[r] {
					changed[r] = true
					d.Changed++
					if d.FirstRow < 0 || r < d.FirstRow {
						d.FirstRow, d.FirstOperand = r, ra.Operand
					}
				}
			}
		}
	}
	if !common {
		d.Why = NoCommonRows
		return d
	}
	d.Rows = n
	return d
}

// samePrefix reports whether two cells' input rows agree on their first n
// rows (both nil: no input is led by M).
func samePrefix(a, b result.Hashes, n int) bool {
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	if len(a) < n || len(b) < n {
		return false
	}
	for r := 0; r < n; r++ {
		if a[r] != b[r] {
			return false
		}
	}
	return true
}

// A RowChange names a changed row: row Row of operand Operand at M
// differs from the same row at M Against.
type RowChange struct {
	M, Against, Row int
	Operand         string
}

// An Invariance is a candidate's batch invariance over the cells of one
// shape: the rows of every M compared with those of the largest M.
type Invariance struct {
	// Ms are the M with row hashes, ascending; Largest the largest of them.
	Ms      []int
	Largest int
	// Compared are the M whose rows were compared with Largest's; Rows
	// and Changed add up their rows compared and changed.
	Compared      []int
	Rows, Changed int
	// First is the first changed row (smallest M, then row), nil if none.
	First *RowChange
	// NA says why nothing was compared (NotRecorded, OneM, InputsDiffer,
	// NoCommonRows); "" when something was.
	NA string
}

// Invariant reports whether rows were compared and none changed.
func (v Invariance) Invariant() bool { return v.NA == "" && v.Changed == 0 }

// CheckInvariance compares the rows of every side (one per M; a later
// side of the same M replaces an earlier one) with the side of the largest
// M that has rows.
func CheckInvariance(sides []RowSide) Invariance {
	byM := map[int]RowSide{}
	for _, s := range sides {
		if len(s.Rows) > 0 && s.InputKey != "" {
			byM[s.M] = s
		}
	}
	var v Invariance
	for m := range byM {
		v.Ms = append(v.Ms, m)
	}
	sort.Ints(v.Ms)
	switch len(v.Ms) {
	case 0:
		v.NA = NotRecorded
		return v
	case 1:
		v.Largest, v.NA = v.Ms[0], OneM
		return v
	}
	v.Largest = v.Ms[len(v.Ms)-1]
	ref := byM[v.Largest]
	why := ""
	for _, m := range v.Ms[:len(v.Ms)-1] {
		d := CompareRows(byM[m], ref)
		if d.Why != "" {
			why = d.Why
			continue
		}
		v.Compared = append(v.Compared, m)
		v.Rows += d.Rows
		v.Changed += d.Changed
		if d.Changed > 0 && v.First == nil {
			v.First = &RowChange{M: m, Against: v.Largest, Row: d.FirstRow, Operand: d.FirstOperand}
		}
	}
	if len(v.Compared) == 0 {
		v.NA = why
	}
	return v
}

// String formats v for a report cell: "0 of 38 rows changed",
// "12 of 38 rows changed", "n/a: one M".
func (v Invariance) String() string {
	if v.NA != "" {
		return "n/a: " + v.NA
	}
	return strconv.Itoa(v.Changed) + " of " + strconv.Itoa(v.Rows) + " rows changed"
}

// Message is the parity failure of a candidate whose rows changed:
// "not batch-invariant: 12 of 38 rows changed between M 1, 37 and M=130
// (first: row 5 of Y at M=37)".
func (v Invariance) Message() string {
	ms := make([]string, len(v.Compared))
	for i, m := range v.Compared {
		ms[i] = strconv.Itoa(m)
	}
	s := fmt.Sprintf("not batch-invariant: %d of %d rows changed between M %s and M=%d", v.Changed, v.Rows, strings.Join(ms, ", "), v.Largest)
	if f := v.First; f != nil {
		s += fmt.Sprintf(" (first: row %d of %s at M=%d differs from M=%d)", f.Row, f.Operand, f.M, f.Against)
	}
	return s
}
