package tune

import (
	"context"
	"strings"
	"testing"

	"github.com/tilefit/tilefit/result"
	"github.com/tilefit/tilefit/store"
)

// TestTwinOfFailedReference (issue 17, defect 2): the A/A twin of a
// reference tile that fails verification is not stored ok, bitwise, with
// max_err 0 and samples: it takes the reference's verdict.
func TestTwinOfFailedReference(t *testing.T) {
	ctx := context.Background()
	fb := newFake()
	fb.bugs["8"] = "tail" // 9 % 8 and 17 % 8: the last row is never written
	cfg := testConfig()
	cfg.AA = true
	cfg.Tiles = []string{"4", "16"}
	st := openStore(t)
	if _, err := Sweep(ctx, cfg, NewLocal(func(context.Context) (backendT, error) { return fb, nil }, nil), st, nil); err != nil {
		t.Fatal(err)
	}
	cells, _ := st.Cells(ctx, store.Filter{})
	twins := 0
	for _, c := range cells {
		for _, cand := range c.Candidates {
			if !cand.AA {
				continue
			}
			twins++
			if ref := c.Find("8"); ref == nil || ref.Status != result.NumericFailed {
				t.Fatalf("the reference did not fail: %+v", ref)
			}
			if cand.Status == result.OK || cand.Bitwise || len(cand.Samples) > 0 || !strings.Contains(cand.Detail, "reference tile failed") {
				t.Errorf("%s M=%d: the twin of a failed reference is %s (bitwise %v, %d samples, %q)", c.Cell.Shape, c.Cell.M, cand.Status, cand.Bitwise, len(cand.Samples), cand.Detail)
			}
		}
	}
	if twins == 0 {
		t.Fatal("no A/A twin in the sweep")
	}
}
