package cli

import (
	"context"
	"io"
	"slices"

	"github.com/tilefit/tilefit/report"
	"github.com/tilefit/tilefit/store"
	"github.com/tilefit/tilefit/tune"
	"github.com/tilefit/tilefit/workload"
)

// headlineInput is the report input of a sweep's parity and invariance
// headline: the swept shapes at every M stored for them under the sweep's
// provenance, not only the M swept now — the sweep compared each new cell
// with the shape's stored cells at other M (batch invariance), and a
// headline of the swept M alone called a shape invariant that the sweep
// had just failed against another M (issue 17).
func headlineInput(ctx context.Context, st *store.Store, provKey string, w workload.Workload, stderr io.Writer) (report.Input, error) {
	all, _, err := tune.LoadReport(ctx, st, store.Filter{ProvKey: provKey}, nil, registryFrom(ctx))
	if err != nil {
		return all, err
	}
	ms := slices.Clone(w.Ms)
	for _, c := range all.Cells {
		if s, ok := w.Shape(c.Cell.Shape); ok && s.N == c.Cell.N && s.K == c.Cell.K && !slices.Contains(ms, c.Cell.M) {
			ms = append(ms, c.Cell.M)
		}
	}
	slices.Sort(ms)
	wide := w
	wide.Ms = ms
	return reportInput(ctx, st, provKey, wide, stderr)
}
