package report

import (
	"context"
	"time"

	"github.com/tilefit/tilefit/result"
	"github.com/tilefit/tilefit/store"
	"github.com/tilefit/tilefit/workload"
)

// Load reads the Input of a report from st the way `tilefit report` does:
// the cells f selects (restricted to w's shapes and M, in w's order and with
// its calls, when w is not nil) and the device records. Registry is left
// nil (kernel.Builtin()); a caller with its own registry sets it.
func Load(ctx context.Context, st *store.Store, f store.Filter, w *workload.Workload) (Input, error) {
	cells, err := st.Cells(ctx, f)
	if err != nil {
		return Input{}, err
	}
	in := FromCells(cells, w)
	if in.Devices, err = st.Devices(ctx); err != nil {
		return Input{}, err
	}
	return in, nil
}

// FromCells is the Input of the stored cells (as store.Cells returns them):
// all of them when w is nil, else the cells of w's shapes and M, with the
// shape order and calls taken from w.
func FromCells(cells []result.CellResult, w *workload.Workload) Input {
	in := Input{Title: "tilefit report", Generated: time.Now().UTC()}
	if w == nil {
		in.Cells = cells
		return in
	}
	in.Title = "tilefit report: " + w.Name
	ms := map[int]bool{}
	for _, m := range w.Ms {
		ms[m] = true
	}
	for _, s := range w.Shapes {
		in.Shapes = append(in.Shapes, Shape{Name: s.Name, N: s.N, K: s.K, Calls: s.Calls})
	}
	for _, c := range cells {
		if s, ok := w.Shape(c.Cell.Shape); ok && s.N == c.Cell.N && s.K == c.Cell.K && ms[c.Cell.M] {
			c.Cell.Calls = s.Calls
			in.Cells = append(in.Cells, c)
		}
	}
	return in
}
