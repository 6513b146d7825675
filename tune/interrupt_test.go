package tune

import (
	"context"
	"errors"
	"testing"

	"github.com/tilefit/tilefit/result"
	"github.com/tilefit/tilefit/store"
)

// cancelAfterCell is an executor whose RunCell finishes the cell and then
// cancels the sweep's context, as a Ctrl-C arriving just after a cell ends.
type cancelAfterCell struct {
	Executor
	cancel context.CancelFunc
}

func (c *cancelAfterCell) RunCell(ctx context.Context, job CellJob) (result.CellResult, error) {
	res, err := c.Executor.RunCell(ctx, job)
	c.cancel()
	return res, err
}

// TestSweepSavesCellFinishedBeforeInterrupt: a cell that finished before the
// interrupt is stored, and the sweep reports ErrInterrupted (not a save
// error), so the next run resumes after it.
func TestSweepSavesCellFinishedBeforeInterrupt(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fb := newFake()
	cfg := testConfig()
	st := openStore(t)
	ex := &cancelAfterCell{Executor: NewLocal(func(context.Context) (backendT, error) { return fb, nil }, nil), cancel: cancel}
	_, err := Sweep(ctx, cfg, ex, st, nil)
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("err = %v, want ErrInterrupted", err)
	}
	cells, err := st.Cells(context.Background(), store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(cells) != 1 {
		t.Fatalf("%d cells stored, want the 1 finished before the interrupt", len(cells))
	}
}
