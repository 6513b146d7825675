package report

import (
	"time"

	"github.com/tilefit/tilefit/result"
	"github.com/tilefit/tilefit/workload"
)

// FromCells is the Input of stored cells (in insertion order, as
// store.Cells returns them; the caller loads them, see tune.LoadReport):
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
