package tune

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tilefit/tilefit/internal/input"
	"github.com/tilefit/tilefit/internal/progress"
	"github.com/tilefit/tilefit/kernel"
	"github.com/tilefit/tilefit/report"
	"github.com/tilefit/tilefit/result"
	"github.com/tilefit/tilefit/store"
	"github.com/tilefit/tilefit/workload"
)

// A Run is what the sweeps of a workload's operators (one Config each)
// share: the store, the executors (one per device; Devices are their
// ordinals) and the shard, lease, owner and claims of the plan.
type Run struct {
	Store     *store.Store
	Executors []Executor
	Devices   []int
	Shard     Shard
	Lease     time.Duration
	Owner     string
	// Shared: other processes share the plan (the store's claims).
	Shared bool
	// Stop asks for a graceful stop (Config.Stop).
	Stop <-chan struct{}
	// Beat is how often a line says the sweep is still at its first cell
	// (compiling, verifying) while no cell has finished; 0: 15 s.
	Beat time.Duration
	// Compiler, when set, compiles the tiles of every operator after the
	// first in the background while the first one's cells run (SweepAll):
	// an executor of its own (a worker at a low priority, compiling on
	// part of the cores) for the first executor's device; nil: each
	// operator compiles before its first cell.
	Compiler Executor
}

// Sweep runs the plan of one operator's config and says on log what it
// compiles before the first cell, the progress and the summary. An
// interrupted sweep says so (every finished cell is saved) and returns an
// error that is ErrInterrupted.
func (r Run) Sweep(ctx context.Context, cfg Config, log io.Writer) (Summary, error) {
	cfg.Stop = r.Stop
	cfg.Shard, cfg.Lease, cfg.Owner = r.Shard, r.Lease, r.Owner
	if r.Shared {
		cfg.Claims = r.Store
	}
	op, _ := cfg.Families[0].Operator.Typed(cfg.Types)
	cells, _ := CellsOf(cfg.Workload, op)
	var mine []result.Cell
	for _, c := range cells {
		if r.Shard.Has(c) {
			mine = append(mine, c)
		}
	}
	tiles, assume := "its tiles", ""
	if cands, err := CandidatesFor(cfg.Families, cfg.Tiles, cfg.ConstWeights); err == nil {
		tiles = fmt.Sprintf("%d %s", len(cands), plural(len(cands), "tile", "tiles"))
		assume = AssumesNote(cfg.Families, cands)
	}
	// Said before the first compile, which can take a while with nothing
	// else on the screen (the heartbeat says it goes on).
	compiling := fmt.Sprintf("compiling %s (and the vendor baselines) before the first cell", tiles)
	if cfg.Precompiled != nil {
		compiling = tiles + " compiling in the background since the first operator compiled (the first cell waits for what is left; the vendor baselines with them)"
	}
	fmt.Fprintf(log, "operator %s: %d %s, families %s; %s\n",
		op.Name, len(mine), plural(len(mine), "cell", "cells"), familyNames(cfg.Families), compiling)
	if assume != "" {
		fmt.Fprintln(log, assume)
	}
	if cfg.Laplacian {
		fmt.Fprintln(log, LaplacianNote(op, cells))
	}
	show, stop := progress.Heartbeat(log, progressPrinter(log, mine, r.Devices), r.Beat)
	sum, err := SweepOn(ctx, cfg, r.Executors, r.Store, show)
	stop()
	if errors.Is(err, ErrInterrupted) {
		fmt.Fprintf(log, "\n%v.\nEvery finished cell is saved in %s; run the same command again to resume.\n", err, r.Store.Path())
		return sum, err
	}
	if err != nil {
		return sum, err
	}
	stored := fmt.Sprintf("%d already stored", sum.Skipped)
	if sum.Others > 0 {
		stored += fmt.Sprintf(", %d by other workers", sum.Others)
	}
	compiles := sum.Compile.Round(time.Millisecond).String()
	if sum.CompiledAhead > 0 {
		compiles = fmt.Sprintf("%s waited for (%d %s compiled in the background in %s)", compiles,
			sum.CompiledAhead, plural(sum.CompiledAhead, "program", "programs"), sum.AheadElapsed.Round(time.Millisecond))
	}
	fmt.Fprintf(log, "swept %d cells (%s) in %s, compiles %s; %d failed candidate results\n",
		sum.Cells, stored, sum.Elapsed.Round(time.Millisecond), compiles, sum.Failures)
	if len(r.Executors) > 1 {
		var per []string
		for i, n := range sum.PerExecutor {
			per = append(per, fmt.Sprintf("device %d: %d", r.Devices[i], n))
		}
		fmt.Fprintf(log, "cells per device: %s\n", strings.Join(per, ", "))
	}
	for _, w := range sum.Warnings {
		fmt.Fprintln(log, "warning:", w)
	}
	return sum, nil
}

// Totals are what the sweeps of a workload's operators did, together:
// failed candidate results, cells not measured (and why), and the
// provenance key of each operator's sweep, in order.
type Totals struct {
	Failures, NotRun int
	Missing          []result.Missing
	Keys             []string
}

// SweepAll sweeps each config (one per operator) in order (Sweep),
// stopping at the first error. With a Compiler, the configs after the
// first compile in the background from the start (precompile), one after
// another while the first operator's cells run, and each sweep takes its
// programs from there.
func (r Run) SweepAll(ctx context.Context, cfgs []Config, log io.Writer) (Totals, error) {
	var t Totals
	var ahead []*Precompiled
	var firstCompiled chan struct{} // closed when the first sweep has compiled
	if r.Compiler != nil && len(cfgs) > 1 && len(r.Executors) > 0 {
		// The device the programs are for: the first executor's (the
		// vendor baselines it has installed decide which are candidates).
		if dev, err := r.Executors[0].Device(ctx); err == nil {
			bctx, cancel := context.WithCancel(ctx)
			firstCompiled = make(chan struct{})
			ahead = append([]*Precompiled{nil}, precompile(bctx, cfgs[1:], r.Compiler, dev, firstCompiled)...)
			// An ended sweep stops the compiles it no longer needs and
			// returns once the compiler is no longer in use (the last
			// config's results are the background's last step).
			defer func() {
				cancel()
				<-ahead[len(ahead)-1].done
			}()
		}
	}
	for i, cfg := range cfgs {
		if ahead != nil {
			cfg.Precompiled = ahead[i]
		}
		if i == 0 && firstCompiled != nil {
			var once sync.Once
			cfg.compiled = func() { once.Do(func() { close(firstCompiled) }) }
		}
		sum, err := r.Sweep(ctx, cfg, log)
		if cfg.compiled != nil {
			cfg.compiled() // also when the sweep ended before compiling
		}
		if err != nil {
			return t, err
		}
		t.Failures += sum.Failures
		t.NotRun += sum.NotRun
		t.Missing = append(t.Missing, sum.Missing...)
		t.Keys = append(t.Keys, sum.Prov.Key())
	}
	return t, nil
}

// ParseDevices parses --devices: "all", or distinct ordinals "0,1,…".
func ParseDevices(s string) (list []int, all bool, err error) {
	if strings.TrimSpace(s) == "all" {
		return nil, true, nil
	}
	items, err := input.SplitList("--devices", s)
	if err != nil {
		return nil, false, err
	}
	seen := map[int]bool{}
	for _, it := range items {
		d, err := strconv.Atoi(strings.TrimSpace(it))
		if err != nil || d < 0 {
			return nil, false, fmt.Errorf("--devices: want all or device ordinals like 0,1; %q is not one", it)
		}
		if seen[d] {
			return nil, false, fmt.Errorf("--devices: device %d is listed twice", d)
		}
		seen[d] = true
		list = append(list, d)
	}
	return list, false, nil
}

func familyNames(fs []*kernel.Family) string {
	var n []string
	for _, f := range fs {
		n = append(n, f.Name)
	}
	return strings.Join(n, ",")
}

// progressPrinter shows the sweep's progress (see progress) over cells:
// a cell's weight is its FLOPs plus a constant for the work every cell has
// whatever its size (verifying, the float64 check). devices maps executor
// indices to device ordinals (named in the lines when there are several);
// cells claimed in a shared sweep print a "claimed" line when they start.
func progressPrinter(w io.Writer, cells []result.Cell, devices []int) func(Progress) {
	p := progress.ForCells(w, cells)
	return func(tp Progress) {
		on := ""
		if len(devices) > 1 && tp.Executor < len(devices) {
			on = fmt.Sprintf(" on device %d", devices[tp.Executor])
		}
		if tp.Started {
			if !p.Bar() {
				fmt.Fprintf(w, "claimed %s M=%d (%s%s)\n", tp.Cell.Shape, tp.Cell.M, tp.Elapsed.Round(time.Millisecond), on)
			}
			return
		}
		state := "done"
		if tp.Skipped {
			state = "already stored"
		}
		note := ""
		if tp.Phases != "" {
			note = " [" + tp.Phases + "]"
		}
		p.StepWeighted(fmt.Sprintf("%s M=%d", tp.Cell.Shape, tp.Cell.M), state+on, note, progress.CellWeight(tp.Cell), progress.CellFeatures(tp.Cell), tp.Skipped)
	}
}

// SweepReport loads what the end of a sweep of the provenances keys shows
// (report.SweepSummary): the report input of workload w over every key at
// once, and per key the headline input (HeadlineInput). note is
// LoadReport's, on the classes of an old database. Each key's cells are
// read once for both (they were read three times: 0.3 s of the report's
// load for 26 strata cells on the H200 host).
func SweepReport(ctx context.Context, st *store.Store, keys []string, w workload.Workload, reg *kernel.Registry) (in report.Input, heads []report.Input, note string, err error) {
	var all []result.CellResult
	var per [][]result.CellResult
	for _, k := range keys {
		cs, err := st.Cells(ctx, store.Filter{ProvKey: k})
		if err != nil {
			return in, nil, "", err
		}
		per = append(per, cs)
		all = append(all, cs...)
	}
	if in, note, err = reportOf(ctx, st, all, &w, reg); err != nil {
		return in, nil, note, err
	}
	for _, cs := range per {
		head, _, err := reportOf(ctx, st, cs, headlineWorkload(w, cs), reg)
		if err != nil {
			return in, nil, note, err
		}
		heads = append(heads, head)
	}
	return in, heads, note, nil
}

// HeadlineInput is the report input of a sweep's parity and invariance
// headline: the swept shapes at every M stored for them under the sweep's
// provenance, not only the M swept now — the sweep compared each new cell
// with the shape's stored cells at other M (batch invariance), and a
// headline of the swept M alone called a shape invariant that the sweep
// had just failed against another M (issue 17). A note on classes is left
// to LoadReport's other callers.
func HeadlineInput(ctx context.Context, st *store.Store, provKey string, w workload.Workload, reg *kernel.Registry) (report.Input, error) {
	cells, err := st.Cells(ctx, store.Filter{ProvKey: provKey})
	if err != nil {
		return report.Input{}, err
	}
	in, _, err := reportOf(ctx, st, cells, headlineWorkload(w, cells), reg)
	return in, err
}

// headlineWorkload is w with every M that cells hold for its shapes.
func headlineWorkload(w workload.Workload, cells []result.CellResult) *workload.Workload {
	ms := slices.Clone(w.Ms)
	for _, c := range cells {
		if s, ok := w.Shape(c.Cell.Shape); ok && s.N == c.Cell.N && s.K == c.Cell.K && !slices.Contains(ms, c.Cell.M) {
			ms = append(ms, c.Cell.M)
		}
	}
	slices.Sort(ms)
	wide := w
	wide.Ms = ms
	return &wide
}

// SourceCompiled is an error when the edited source of a sweep (read from
// path) compiled for none of its tiles: the compiler's first message, its
// line in the user's file.
func SourceCompiled(in report.Input, path string) error {
	failed, first := report.CompileFailures(in)
	if failed == 0 {
		return nil
	}
	return fmt.Errorf("--source %s does not compile (every one of its %d tile results failed): %s", path, failed, first)
}

// DeviceOrdinals are the devices a sweep runs on, from --devices (list,
// or all) and the backend's device count (at most 1: one device): every
// device for all, list when each of its ordinals exists, else device.
func DeviceOrdinals(list []int, all bool, count, device int, backend string) ([]int, error) {
	n := max(count, 1)
	if all {
		list = nil
		for i := range n {
			list = append(list, i)
		}
	}
	for _, d := range list {
		if d >= n {
			return nil, fmt.Errorf("--devices: no device %d: %s has %d device(s), 0 to %d", d, backend, n, n-1)
		}
	}
	if len(list) == 0 {
		list = []int{device}
	}
	return list, nil
}

// AssumesNote says which of cands assume constant weights (the family's
// AssumesConstWeights: they read the weights before waiting for the kernel
// before them), "" when none does.
func AssumesNote(fams []*kernel.Family, cands []JobCandidate) string {
	var names []string
	for _, c := range cands {
		for _, f := range fams {
			if f.Name == c.Family && f.Assumes(c.Params) {
				names = append(names, c.Tile)
			}
		}
	}
	if len(names) == 0 {
		return ""
	}
	return fmt.Sprintf("  %d %s the weights constant (valid only when no kernel before this operator writes them): %s",
		len(names), plural(len(names), "tile assumes", "tiles assume"), strings.Join(names, ", "))
}
