package tune

import (
	"bytes"
	"testing"

	"github.com/tilefit/tilefit/kernel"
)

// TestGenSetsAsSequential: the sets drawn on several goroutines are the
// bytes of drawing them one after another (set s from seed + s·φ).
func TestGenSetsAsSequential(t *testing.T) {
	op := kernel.GemmF16()
	d := kernel.Dims{"M": 33, "N": 20, "K": 48}
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

// TestGenSetsKeepsWeights: the operand without M (W) drawn for one M of a
// shape is reused for the next M — the same bytes a fresh draw gives —
// while X is drawn for each M; an operator with its own generator
// (gemm_q8_f16) is drawn as before.
func TestGenSetsKeepsWeights(t *testing.T) {
	op := kernel.GemmF16()
	d1 := kernel.Dims{"M": 33, "N": 20, "K": 48}
	d2 := kernel.Dims{"M": 64, "N": 20, "K": 48}
	a := genSets(op, 5, d1, 2)
	b := genSets(op, 5, d2, 2)
	for s := range b {
		if &a[s][1][0] != &b[s][1][0] {
			t.Errorf("set %d: W drawn again for the next M", s)
		}
		want := op.GenInputs(5+uint64(s)*0x9E3779B97F4A7C15, d2)
		for j := range want {
			if !bytes.Equal(b[s][j], want[j]) {
				t.Errorf("set %d operand %d differs from a fresh draw", s, j)
			}
		}
		if !bytes.Equal(b[s][0][:len(a[s][0])], a[s][0]) {
			t.Errorf("set %d: X of M 33 is not a prefix of X of M 64", s)
		}
	}
	q8, err := kernel.Builtin().Operator("gemm_q8_f16")
	if err != nil {
		t.Fatal(err)
	}
	dq := kernel.Dims{"M": 3, "N": 8, "K": 64, "G": 32}
	got := genSets(q8, 9, dq, 2)
	for s := range got {
		want := q8.GenInputs(9+uint64(s)*0x9E3779B97F4A7C15, dq)
		for j := range want {
			if !bytes.Equal(got[s][j], want[j]) {
				t.Errorf("gemm_q8_f16 set %d operand %d differs", s, j)
			}
		}
	}
}
