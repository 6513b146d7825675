package tune

import (
	"context"
	"fmt"

	"github.com/tilefit/tilefit/builtin"
	"github.com/tilefit/tilefit/kernel"
	"github.com/tilefit/tilefit/report"
	"github.com/tilefit/tilefit/result"
	"github.com/tilefit/tilefit/store"
	"github.com/tilefit/tilefit/workload"
)

// LoadReport reads the Input of a report from st, the way tilefit report,
// sweep and serve do: the cells f selects (restricted to w's shapes and M,
// in w's order and with its calls, when w is not nil) and the device
// records. The report package reads these values only; the store is read
// here.
//
// Candidates stored before the store kept numerics classes get the class
// reg's families give them (result.FillClasses; the fallback of an old
// database, where a family this binary does not know gets its name); note
// then says so, once, for the caller to show, and is "" otherwise.
func LoadReport(ctx context.Context, st *store.Store, f store.Filter, w *workload.Workload, reg *kernel.Registry) (in report.Input, note string, err error) {
	cells, err := st.Cells(ctx, f)
	if err != nil {
		return report.Input{}, "", err
	}
	return reportOf(ctx, st, cells, w, reg)
}

// LoadReportKeys is LoadReport of the provenances keys (the operators of
// one sweep), merged into one Input: one report with the whole workload's
// chunk across them.
func LoadReportKeys(ctx context.Context, st *store.Store, keys []string, w *workload.Workload, reg *kernel.Registry) (in report.Input, note string, err error) {
	var cells []result.CellResult
	for _, k := range keys {
		cs, err := st.Cells(ctx, store.Filter{ProvKey: k})
		if err != nil {
			return report.Input{}, "", err
		}
		cells = append(cells, cs...)
	}
	return reportOf(ctx, st, cells, w, reg)
}

// reportOf is the Input of cells read from st: their missing classes
// filled (the note), restricted to w, with st's device records.
func reportOf(ctx context.Context, st *store.Store, cells []result.CellResult, w *workload.Workload, reg *kernel.Registry) (in report.Input, note string, err error) {
	if reg == nil {
		reg = builtin.New()
	}
	if n := result.FillClasses(cells, reg.ClassOf); n > 0 {
		note = fmt.Sprintf("note: %s has %d candidate(s) stored without their numerics class (swept by an older tilefit): their classes come from this binary's families", st.Path(), n)
	}
	in = report.FromCells(cells, w)
	if in.Devices, err = st.Devices(ctx); err != nil {
		return report.Input{}, "", err
	}
	return in, note, nil
}
