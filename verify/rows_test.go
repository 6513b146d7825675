package verify

import (
	"encoding/binary"
	"hash/fnv"
	"math"
	"testing"

	"github.com/tilefit/tilefit/builtin"
	"github.com/tilefit/tilefit/kernel"
	"github.com/tilefit/tilefit/result"
)

// gemmOut returns gemm_f16's Y (fp32, M×N) with Y[m,n] = m + n/100, and
// row r changed at the rows in change.
func gemmOut(m, n int, change ...int) []byte {
	b := make([]byte, 4*m*n)
	for r := 0; r < m; r++ {
		for c := 0; c < n; c++ {
			binary.LittleEndian.PutUint32(b[4*(r*n+c):], math.Float32bits(float32(r)+float32(c)/100))
		}
	}
	for _, r := range change {
		b[4*(r*n+n-1)] ^= 1 // the last element's lowest bit
	}
	return b
}

func side(t *testing.T, m int, in [][]byte, out []byte) RowSide {
	t.Helper()
	op := builtin.GemmF16()
	d := kernel.Dims{"M": m, "N": 5, "K": 7}
	key, rows := InputRows(op, d, in)
	return RowSide{M: m, InputKey: key, InputRows: rows, Rows: RowHashes(op, d, nil, [][]byte{nil, nil, out})}
}

func TestRowHashesAndInputRows(t *testing.T) {
	op := builtin.GemmF16()
	big := op.GenInputs(3, kernel.Dims{"M": 40, "N": 5, "K": 7})
	small := op.GenInputs(3, kernel.Dims{"M": 9, "N": 5, "K": 7})
	a, b := side(t, 9, small, gemmOut(9, 5)), side(t, 40, big, gemmOut(40, 5))
	if len(a.Rows) != 1 || a.Rows[0].Operand != "Y" || len(a.Rows[0].Hashes) != 9 || len(b.InputRows) != 40 {
		t.Fatalf("rows %+v, input rows %d", a.Rows, len(b.InputRows))
	}
	if a.InputKey != b.InputKey {
		t.Error("W is not the same at M 9 and 40: input keys differ")
	}
	if d := CompareRows(a, b); d.Why != "" || d.Rows != 9 || d.Changed != 0 || d.FirstRow != -1 {
		t.Errorf("prefix rows: %+v", d)
	}
	// Row 4 and 7 changed at M=40.
	c := side(t, 40, big, gemmOut(40, 5, 7, 4, 20))
	if d := CompareRows(a, c); d.Rows != 9 || d.Changed != 2 || d.FirstRow != 4 || d.FirstOperand != "Y" {
		t.Errorf("changed rows: %+v", d)
	}
	// Other inputs (another seed): not comparable.
	other := side(t, 40, op.GenInputs(4, kernel.Dims{"M": 40, "N": 5, "K": 7}), gemmOut(40, 5))
	if d := CompareRows(a, other); d.Why != InputsDiffer {
		t.Errorf("inputs of another seed: %+v", d)
	}
	// Same W, X rows not a prefix.
	shuffled := [][]byte{append([]byte(nil), big[0]...), big[1]}
	shuffled[0][0] ^= 1
	if d := CompareRows(a, side(t, 40, shuffled, gemmOut(40, 5))); d.Why != InputsDiffer {
		t.Errorf("X not a prefix: %+v", d)
	}
	if d := CompareRows(RowSide{M: 9}, b); d.Why != NotRecorded {
		t.Errorf("no rows: %+v", d)
	}
	// An operand absent for a candidate is not hashed; one not led by M
	// neither.
	if r := RowHashes(op, kernel.Dims{"M": 2, "N": 5, "K": 7}, []bool{true, true, false}, [][]byte{nil, nil, gemmOut(2, 5)}); r != nil {
		t.Errorf("absent Y hashed: %+v", r)
	}
	wide := *op
	wide.Operands = append(append([]kernel.Operand(nil), op.Operands...), kernel.Operand{Name: "Z", Dir: kernel.Out, DType: kernel.F32, Shape: []string{"N", "M"}})
	if r := RowHashes(&wide, kernel.Dims{"M": 2, "N": 5, "K": 7}, nil, [][]byte{nil, nil, gemmOut(2, 5), gemmOut(5, 2)}); len(r) != 1 || r[0].Operand != "Y" {
		t.Errorf("Z[N,M] hashed by rows: %+v", r)
	}
}

func TestCheckInvariance(t *testing.T) {
	op := builtin.GemmF16()
	in := func(m int) [][]byte { return op.GenInputs(3, kernel.Dims{"M": m, "N": 5, "K": 7}) }
	s1, s37 := side(t, 1, in(1), gemmOut(1, 5)), side(t, 37, in(37), gemmOut(37, 5))
	s130 := side(t, 130, in(130), gemmOut(130, 5))
	v := CheckInvariance([]RowSide{s37, s130, s1})
	if !v.Invariant() || v.Largest != 130 || v.Rows != 38 || len(v.Compared) != 2 || v.String() != "0 of 38 rows changed" {
		t.Errorf("invariant: %+v %q", v, v.String())
	}
	// Rows 0 and 5 change at M=130 (against which 1 and 37 are compared).
	bad := side(t, 130, in(130), gemmOut(130, 5, 0, 5, 100))
	v = CheckInvariance([]RowSide{s1, s37, bad})
	want := "not batch-invariant: 3 of 38 rows changed between M 1, 37 and M=130 (first: row 0 of Y at M=1 differs from M=130)"
	if v.Invariant() || v.Changed != 3 || v.Message() != want || v.String() != "3 of 38 rows changed" {
		t.Errorf("changed: %+v\n%q\nwant %q", v, v.Message(), want)
	}
	// A later side of the same M replaces an earlier one.
	if v := CheckInvariance([]RowSide{s1, bad, s130}); !v.Invariant() {
		t.Errorf("the later M=130 side did not replace the earlier: %+v", v)
	}
	for _, tc := range []struct {
		sides []RowSide
		na    string
	}{
		{nil, NotRecorded},
		{[]RowSide{{M: 4}, {M: 8}}, NotRecorded},
		{[]RowSide{s37}, OneM},
		{[]RowSide{s37, side(t, 130, op.GenInputs(9, kernel.Dims{"M": 130, "N": 5, "K": 7}), gemmOut(130, 5))}, InputsDiffer},
	} {
		if v := CheckInvariance(tc.sides); v.NA != tc.na || v.Invariant() || v.String() != "n/a: "+tc.na {
			t.Errorf("%d sides: %+v, want n/a %q", len(tc.sides), v, tc.na)
		}
	}
}

func TestHashesJSONAndBytes(t *testing.T) {
	h := result.Hashes{1, 1 << 63, 0xdeadbeef}
	b, err := h.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	var back result.Hashes
	if err := back.UnmarshalJSON(b); err != nil || len(back) != 3 || back[1] != 1<<63 || back[2] != 0xdeadbeef {
		t.Errorf("JSON round trip: %v %v (%s)", back, err, b)
	}
	if _, err := result.HashesFromBytes(make([]byte, 7)); err == nil {
		t.Error("7 bytes decoded as hashes")
	}
}

// TestHashRowsParallel: the parallel split gives the hashes of the plain
// loop, row for row.
func TestHashRowsParallel(t *testing.T) {
	b := make([]byte, 9<<20+13)
	for i := range b {
		b[i] = byte(i * 7 >> 3)
	}
	const n = 4099
	rows := (len(b) + n - 1) / n
	got := HashRows(b, rows, n)
	for r := 0; r < rows; r++ {
		h := fnv.New64a()
		h.Write(b[min(r*n, len(b)):min((r+1)*n, len(b))])
		if got[r] != h.Sum64() {
			t.Fatalf("row %d of %d: %x, want %x", r, rows, got[r], h.Sum64())
		}
	}
}
