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
