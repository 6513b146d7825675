package tune

import (
	"testing"

	"github.com/tilefit/tilefit/kernel"
	"github.com/tilefit/tilefit/result"
	"github.com/tilefit/tilefit/workload"
)

func TestSameSize(t *testing.T) {
	hc := workload.Shape{Name: "hc_up", K: 320, Dims: map[string]int{"S": 2560, "K": 320}, Calls: 96}
	cell := result.Cell{Shape: "hc_up", K: 320, M: 37, Dims: kernel.Dims{"M": 37, "S": 2560, "K": 320}}
	if !SameSize(hc, cell) {
		t.Error("hc_up of its own size refused")
	}
	cell.Dims = kernel.Dims{"M": 37, "S": 1280, "K": 320}
	if SameSize(hc, cell) {
		t.Error("hc_up with S 1280 taken for S 2560")
	}
	if !SameSize(workload.Shape{N: 64, K: 8}, result.Cell{N: 64, K: 8}) || SameSize(workload.Shape{N: 64, K: 8}, result.Cell{N: 64, K: 16}) {
		t.Error("GEMM sizes by N and K")
	}
}
