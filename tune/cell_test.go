package tune

import (
	"bytes"
	"testing"

	"github.com/tilefit/tilefit/builtin"
	"github.com/tilefit/tilefit/kernel"
)

// TestGenSetsAsSequential: an operator's own generator draws its sets on
// several goroutines with the bytes of drawing them one after another (set
// s from seed + s·φ).
func TestGenSetsAsSequential(t *testing.T) {
	op, err := builtin.New().Operator("gemm_q8_f16")
	if err != nil {
		t.Fatal(err)
	}
	d := kernel.Dims{"M": 3, "N": 8, "K": 64, "G": 32}
	got := genSets(op, 99, d, 7)
	if len(got) != 7 {
		t.Fatalf("%d sets, want 7", len(got))
	}
	for s := range got {
		want := op.GenInputs(99+uint64(s)*0x9E3779B97F4A7C15, d)
		for j := range want {
			if !bytes.Equal(got[s][j], want[j]) {
				t.Errorf("set %d operand %d differs from the sequential draw", s, j)
			}
		}
	}
	if bytes.Equal(got[0][0], got[1][0]) {
		t.Error("sets 0 and 1 are equal")
	}
}

// TestCellSetsKeepsWeights: the operand without M (W) drawn for one M of a
// shape is reused for the next M — the same bytes a fresh draw gives — and
// X is extended, not drawn again: a smaller M's X is the prefix of the
// larger's (drawn once up to the largest M). A backend that draws inputs
// itself gets sets 1… as draws without bytes; every draw's bytes are the
// host's (kernel.UniformInputs).
func TestCellSetsKeepsWeights(t *testing.T) {
	op := builtin.GemmF16()
	d1 := kernel.Dims{"M": 64, "N": 20, "K": 48}
	d2 := kernel.Dims{"M": 33, "N": 20, "K": 48}
	used := map[drawID]bool{}
	a, _ := cellSets(op, 5, d1, 2, false, used)
	b, host := cellSets(op, 5, d2, 2, false, used)
	for s := range b {
		if &a[s][1].Bytes[0] != &b[s][1].Bytes[0] {
			t.Errorf("set %d: W drawn again for the next M", s)
		}
		if &a[s][0].Bytes[0] != &b[s][0].Bytes[0] {
			t.Errorf("set %d: X of M 33 drawn again instead of M 64's prefix", s)
		}
		want := op.GenInputs(5+uint64(s)*0x9E3779B97F4A7C15, d2)
		for j := range want {
			if !bytes.Equal(b[s][j].Bytes, want[j]) || !bytes.Equal(b[s][j].Drawn.Bytes(), want[j]) {
				t.Errorf("set %d operand %d differs from a fresh draw", s, j)
			}
		}
	}
	if !bytes.Equal(host[0], b[0][0].Bytes) {
		t.Error("set 0's host bytes are not set 0")
	}
	c, _ := cellSets(op, 5, d1, 3, true, used)
	if c[0][0].Bytes == nil || c[1][0].Bytes != nil || c[2][1].Drawn == nil {
		t.Errorf("a drawing backend gets set 0 with its bytes and sets 1… as draws only")
	}
	q8, err := builtin.New().Operator("gemm_q8_f16")
	if err != nil {
		t.Fatal(err)
	}
	dq := kernel.Dims{"M": 3, "N": 8, "K": 64, "G": 32}
	got, _ := cellSets(q8, 9, dq, 2, true, used)
	for s := range got {
		want := q8.GenInputs(9+uint64(s)*0x9E3779B97F4A7C15, dq)
		for j := range want {
			if !bytes.Equal(got[s][j].Bytes, want[j]) || got[s][j].Drawn != nil {
				t.Errorf("gemm_q8_f16 set %d operand %d: not its own generator's bytes", s, j)
			}
		}
	}
}
