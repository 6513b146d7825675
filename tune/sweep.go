package tune

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tilefit/tilefit/backend"
	"github.com/tilefit/tilefit/builtin"
	"github.com/tilefit/tilefit/kernel"
	"github.com/tilefit/tilefit/measure"
	"github.com/tilefit/tilefit/result"
	"github.com/tilefit/tilefit/workload"
)

// Results is what a sweep needs of a results store: which candidates a
// cell already has, and saving a finished cell (store.Store implements it).
type Results interface {
	Measured(ctx context.Context, provKey string, cell result.Cell) (map[string]result.Status, error)
	SaveCell(ctx context.Context, c result.CellResult) (int64, error)
	// ShapeRows returns the stored cells of cell's shape at every M, with
	// their input and candidates' row hashes (the batch-invariance check).
	ShapeRows(ctx context.Context, provKey string, cell result.Cell) ([]result.CellResult, error)
}

// Claims is what a sweep needs of a store to share its plan with other
// sweep processes: leases on cells (store.Store implements it; see its
// claims.go for the protocol). A cell is the index in the plan.
type Claims interface {
	EnqueueCells(ctx context.Context, plan string, names []string) error
	// ClaimCell returns a claimed cell, or -1 and how many cells (not in
	// skip) are not done yet: 0 when the plan is finished.
	ClaimCell(ctx context.Context, plan, owner string, lease time.Duration, skip []int) (cell, pending int, err error)
	RenewClaim(ctx context.Context, plan string, cell int, owner string, lease time.Duration) error
	ReleaseClaim(ctx context.Context, plan string, cell int, owner string) error
	FinishClaim(ctx context.Context, plan string, cell int, owner string) error
	SaveClaimed(ctx context.Context, plan string, cell int, owner string, c result.CellResult) (int64, error)
}

// Config is one sweep: the families of one operator (the first one's
// reference tile anchors every cell; optionally an edited source revision of
// a single family), a workload of shapes × M, and the candidates to tune.
type Config struct {
	// Families are the families whose tiles are tuned together in every
	// cell; they must compute the same operator.
	Families []*kernel.Family
	// Types chooses operand element types (kernel.Operator.Typed), e.g.
	// {"Y": kernel.F16}; nil means the operator's defaults.
	Types map[string]kernel.DType
	// Source replaces the source when non-empty (a user's revision; one
	// family only); SourceName is the file it was read from, which its
	// compile errors point into (MapSourceLines).
	Source     string
	SourceName string
	Workload   workload.Workload
	// Tiles are the candidate tiles; nil means every family's default
	// sweep. A tile of another family than the first is written
	// "family/tile". The reference tile is always added.
	Tiles []string
	// ConstWeights adds every family's ConstWeights tiles to its default
	// sweep (Tiles nil): the caller declares that no kernel before the
	// operator writes its weights (sweep --const-weights).
	ConstWeights bool
	// Baselines are the vendor baselines added to every cell (each only
	// when its library is installed on the device).
	Baselines []*kernel.Baseline
	// AA adds an A/A twin of the reference tile to one cell per shape
	// class (see ShapeClass), to calibrate the noise floor.
	AA      bool
	Seed    uint64
	Measure measure.Options
	// MaxSamples bounds the float64 reference check per cell (default 1<<16).
	MaxSamples int
	// MaxFailures is how many cells a candidate may crash or hang in before
	// it is skipped for the rest of the sweep (default 2).
	MaxFailures int
	// Stop, when closed, ends the sweep between cells (the cells in flight
	// finish and are saved); cancelling ctx ends it at once.
	Stop <-chan struct{}
	// Laplacian adds the Laplacian known-answer check to every square
	// cell of a plain GEMM operator (verify.LaplacianInputs).
	Laplacian bool
	// NoRace times every verified candidate to the end. By default a
	// candidate confirmed slower than the cell's best tile by the race's
	// margin leaves the rounds early (measure.Options.Race); the reference,
	// the A/A twin and the vendors never do.
	NoRace bool
	// Trace adds the parts of each cell's verify and time phases to its
	// progress line (CellJob.Trace).
	Trace bool

	// Shard, when its N is above 1, keeps only the cells of shard I of N
	// (Shard.Has: a stable hash of each cell), for static sharding of a
	// plan over machines.
	Shard Shard
	// Claims, when set, shares the plan with other sweep processes through
	// leases in the store: each executor claims a cell, renews its lease
	// while it runs and saves the result only while it holds the lease; a
	// process that dies loses its leases and others take the cells once
	// they expire. Nil: this process runs every cell of the plan.
	Claims Claims
	// Lease is how long a claim lasts without renewal (default 60 s); it
	// is renewed every third of it while the cell runs.
	Lease time.Duration
	// Poll is how often an executor with nothing to claim looks again
	// while other workers hold the remaining cells (default a quarter of
	// the lease, at most 2 s).
	Poll time.Duration
	// Owner names this process in claims (default host/pid/random); each
	// executor's owner is it with "/e<index>" appended.
	Owner string
	// Precompiled, when set, holds this sweep's programs compiled ahead
	// (Run.SweepAll compiles a later operator's tiles while an earlier
	// operator's cells run): the sweep waits for them instead of compiling
	// them again, and compiles only what is not there.
	Precompiled *Precompiled
	// compiled, when set, is called once this sweep's programs are
	// compiled (SweepAll starts the later operators' compiles then).
	compiled func()
}

// Progress reports a finished (or skipped) cell, or with Started a cell
// that an executor begins to run.
type Progress struct {
	Done, Total int
	Cell        result.Cell
	Skipped     bool
	// Started: the cell was claimed and starts now (Done has not counted
	// it); reported only when several executors or processes share the
	// plan (Config.Claims or more than one executor).
	Started bool
	// Executor is the index of the executor that ran the cell (SweepOn's
	// executors), DeviceID its device's UUID.
	Executor int
	DeviceID string
	Elapsed  time.Duration
	// Phases is where a finished cell's time went (result.CellResult.Phases).
	Phases string
}

// Summary is a sweep's outcome.
type Summary struct {
	Prov     result.Provenance
	Device   backend.Device
	Total    int // cells of the plan (of this shard)
	Cells    int // cells run now
	Skipped  int // cells already in the store
	Failures int // failed candidate results stored now
	NotRun   int // cells that could not run (see Missing)
	// Missing lists the cells that could not run, each with why.
	Missing []Missing
	// Others counts the plan's cells that other sweep processes ran
	// (Config.Claims); LeasesLost the cells this process ran but could not
	// save because their lease had passed to another worker.
	Others     int
	LeasesLost int
	// PerExecutor counts the cells each executor ran.
	PerExecutor []int
	// Compile is how long the sweep spent compiling (or waiting for the
	// compiles done ahead, Config.Precompiled) before its first cell;
	// CompiledAhead counts the programs compiled ahead, in AheadElapsed
	// of background compiling.
	Compile       time.Duration
	CompiledAhead int
	AheadElapsed  time.Duration
	Elapsed       time.Duration
	// Warnings are problems that did not stop the sweep.
	Warnings []string
}

// A Missing is a cell of the plan a sweep could not measure, and why (the
// last failure of its executor or worker).
type Missing = result.Missing

// ErrInterrupted is returned when Config.Stop or ctx ends a sweep.
var ErrInterrupted = errors.New("sweep interrupted")

// VendorWarning is the warning a device gives about vendor baseline bl's
// library (Props "<library>_warning", e.g. "openblas_warning" when OpenBLAS
// chose kernels far weaker than the CPU), prefixed "vendor baseline NAME: ";
// "" when there is none. Sweep adds it to its warnings; scan prints it once.
func VendorWarning(bl *kernel.Baseline, dev backend.Device) string {
	if bl.Library == "" || dev.Props[bl.Library] == "" {
		return ""
	}
	w := dev.Props[bl.Library+"_warning"]
	if w == "" {
		return ""
	}
	return "vendor baseline " + bl.Name + ": " + w
}

// Sweep runs cfg on one executor: it compiles every candidate, then runs
// each cell not yet in st (resume: candidates already stored for a cell are
// not measured again), committing each cell in its own transaction.
func Sweep(ctx context.Context, cfg Config, ex Executor, st Results, progress func(Progress)) (Summary, error) {
	return SweepOn(ctx, cfg, []Executor{ex}, st, progress)
}

// SweepOn runs cfg on several executors at once (one per device: each
// worker process opens its own device and context), as Sweep does on one.
// Each cell runs whole on one executor, so the candidates of a cell — the
// paired comparison — never mix devices; every cell records its device's
// UUID. The devices must share one provenance (the same model, driver and
// compiler): their cells merge into one report.
//
// An executor whose RunCell fails (the device or its worker failed, not a
// candidate: those are recorded as values) costs only the cell in flight,
// which goes back to the queue for another executor; an executor that
// fails two cells in a row while others still work is retired, and a cell
// that failed on every live executor is not run (a warning; a later sweep
// tries it again). With Config.Claims the queue is the store's claims
// table, shared with other processes; otherwise it is in this process.
func SweepOn(ctx context.Context, cfg Config, exs []Executor, st Results, progress func(Progress)) (Summary, error) {
	start := time.Now()
	var sum Summary
	if len(exs) == 0 {
		return sum, errors.New("sweep: no executor")
	}
	w, err := newSweepSetup(cfg)
	if err != nil {
		return sum, err
	}
	devs, live, warnings, err := devicesOf(ctx, exs)
	sum.Warnings = append(sum.Warnings, warnings...)
	if err != nil {
		return sum, err
	}
	first := slices.Index(live, true)
	dev := devs[first]
	sum.Device = dev
	prov := provenance(dev, w.names, w.srcs, w.op)
	sum.Prov = prov
	for i := range exs {
		if live[i] && provenance(devs[i], w.names, w.srcs, w.op).Key() != prov.Key() {
			return sum, fmt.Errorf("devices differ: executor %d is %s (%s, %s, %s), executor %d is %s (%s, %s, %s); one sweep needs devices of one provenance: sweep each with --device N",
				first, dev.Name, dev.Arch, dev.Driver, dev.Compiler, i, devs[i].Name, devs[i].Arch, devs[i].Driver, devs[i].Compiler)
		}
	}
	if err := w.candidates(dev, &sum); err != nil {
		return sum, err
	}
	// Compile in the first executor: every device of the sweep has its
	// provenance, so its artifacts load on all of them.
	if err := w.compile(ctx, exs[first], &sum); err != nil {
		return sum, err
	}
	if cfg.compiled != nil {
		cfg.compiled()
	}
	cells, aaCell, err := w.cells(&sum)
	if err != nil || len(cells) == 0 {
		sum.Elapsed = time.Since(start)
		return sum, err
	}
	failures := map[string]int{} // guarded by the scheduler's mutex
	s := &scheduler{cfg: cfg, exs: exs, devs: devs, live: live, st: st, prov: prov, cells: cells, job: w.jobs(cells, aaCell, failures),
		failures: failures, progress: progress, start: start, sum: &sum}
	if cfg.Claims != nil {
		q, err := newClaimQueue(ctx, cfg, prov.Key(), w.cands, cells)
		if err != nil {
			return sum, err
		}
		s.q = q
	} else {
		s.q = newMemQueue(cells, len(exs), st)
	}
	err = s.run(ctx)
	sum.Elapsed = time.Since(start)
	return sum, err
}

// sweepSetup is what SweepOn works out before the cells run: the typed
// operator, the families and their sources, the candidates (vendors
// included) with their compiled artifacts.
type sweepSetup struct {
	cfg       Config
	op        *kernel.Operator
	fams      []*kernel.Family
	famOf     map[string]int
	names     []string
	srcs      []string
	cands     []JobCandidate
	baselines []*kernel.Baseline
}

// newSweepSetup checks cfg's families (one operator; an edited source for
// one family only) and types the operator.
func newSweepSetup(cfg Config) (*sweepSetup, error) {
	if len(cfg.Families) == 0 {
		return nil, errors.New("sweep: no family")
	}
	w := &sweepSetup{cfg: cfg, fams: cfg.Families, famOf: map[string]int{}}
	op, err := w.fams[0].Operator.Typed(cfg.Types)
	if err != nil {
		return nil, err
	}
	w.op = op
	for i, f := range w.fams {
		if f.Operator.Name != op.Name {
			return nil, fmt.Errorf("family %s computes %s, not %s: one cell holds one operator", f.Name, f.Operator.Name, op.Name)
		}
		w.srcs = append(w.srcs, f.Source)
		w.names = append(w.names, f.Name)
		w.famOf[f.Name] = i
	}
	if cfg.Source != "" {
		if len(w.fams) > 1 {
			return nil, errors.New("sweep: an edited source applies to one family")
		}
		w.srcs[0] = cfg.Source
	}
	return w, nil
}

// candidates lists the tiles of every family and the vendor baselines
// installed on dev (a missing one is a warning).
func (w *sweepSetup) candidates(dev backend.Device, sum *Summary) error {
	cands, err := CandidatesFor(w.fams, w.cfg.Tiles, w.cfg.ConstWeights)
	if err != nil {
		return err
	}
	for _, bl := range w.cfg.Baselines {
		// The device lists its vendor library (Props "openblas", "cublas")
		// when it is installed; without it the sweep runs without one.
		if bl.Library != "" && dev.Props[bl.Library] == "" {
			msg := fmt.Sprintf("no vendor baseline %s: %s is not installed on %s", bl.Name, bl.Library, dev.Name)
			if bl.Install != "" {
				msg += "; install it with: " + bl.Install
			}
			sum.Warnings = append(sum.Warnings, msg)
			continue
		}
		if wn := VendorWarning(bl, dev); wn != "" {
			sum.Warnings = append(sum.Warnings, wn)
		}
		w.baselines = append(w.baselines, bl)
		cands = append(cands, JobCandidate{Tile: bl.Name, Vendor: true})
	}
	w.cands = cands
	return nil
}

// compile compiles every candidate with a source on ex (in parallel
// there); a compile error is the candidate's status. The programs compiled
// ahead (Config.Precompiled) are waited for and taken from there; the rest
// compile on ex.
func (w *sweepSetup) compile(ctx context.Context, ex Executor, sum *Summary) error {
	progs, progOf := w.programs()
	t0 := time.Now()
	comp := make([]CompileResult, len(progs))
	need := make([]int, 0, len(progs))
	var ahead map[string]CompileResult
	if w.cfg.Precompiled != nil {
		// A failed background compile only means compiling here.
		ahead, _ = w.cfg.Precompiled.wait(ctx)
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("compile: %w", err)
		}
	}
	for j, p := range progs {
		if cr, ok := ahead[programID(p)]; ok {
			comp[j] = cr
			sum.CompiledAhead++
			continue
		}
		need = append(need, j)
	}
	if len(need) > 0 {
		here := make([]backend.Program, len(need))
		for k, j := range need {
			here[k] = progs[j]
		}
		out, err := ex.Compile(ctx, here)
		if err != nil {
			return fmt.Errorf("compile: %w", err)
		}
		for k, j := range need {
			comp[j] = out[k]
		}
	}
	sum.Compile = time.Since(t0)
	if w.cfg.Precompiled != nil && sum.CompiledAhead > 0 {
		sum.AheadElapsed = w.cfg.Precompiled.Elapsed
	}
	for j, i := range progOf {
		cr := comp[j]
		w.cands[i].Artifact = cr.Artifact
		w.cands[i].CompileSeconds = cr.Artifact.Elapsed.Seconds()
		if cr.Err != "" {
			w.cands[i].Status, w.cands[i].Detail = result.CompileFailed, cr.Err
			if w.cfg.Source != "" && w.cfg.SourceName != "" && !w.cands[i].Vendor {
				w.cands[i].Detail = MapSourceLines(cr.Err, w.cfg.Source, w.cfg.SourceName)
			}
		}
	}
	return nil
}

// programs sets the program of every candidate with a source (a family's
// tile, or a vendor baseline's own kernel) and returns them with the
// candidate each belongs to.
func (w *sweepSetup) programs() (progs []backend.Program, progOf []int) {
	bi := 0
	for i := range w.cands {
		if w.cands[i].Vendor {
			bl := w.baselines[bi]
			bi++
			if bl.Source == "" {
				continue
			}
			w.cands[i].Program = backend.Program{Family: bl.Name, Source: bl.Source, Defines: w.op.TypeDefines()}
		} else {
			fi := w.famOf[w.cands[i].Family]
			w.cands[i].Program = program(w.fams[fi].Name, w.srcs[fi], w.cands[i].Params, w.op)
		}
		progs = append(progs, w.cands[i].Program)
		progOf = append(progOf, i)
	}
	return progs, progOf
}

// plan gives a candidate its launch list on a cell's dims; a failing or
// panicking Plan (user code) fails the candidate, not the sweep.
func (w *sweepSetup) plan(c JobCandidate, d kernel.Dims) (out JobCandidate) {
	if c.AA {
		return c // the twin runs the reference's kernel
	}
	defer func() {
		if r := recover(); r != nil {
			out = c
			if out.Status == "" {
				out.Status, out.Detail = result.CompileFailed, fmt.Sprintf("plan panicked: %v", r)
			}
		}
	}()
	fail := func(err error) JobCandidate {
		if c.Status == "" {
			c.Status, c.Detail = result.CompileFailed, "plan: "+err.Error()
		}
		return c
	}
	if c.Vendor {
		for _, bl := range w.baselines {
			if bl.Name == c.Tile {
				pl, err := bl.Plan(w.op, d)
				if err != nil {
					return fail(err)
				}
				c.Plan = pl
				c.F16Intermediate = bl.F16Intermediate
				if bl.Params != nil {
					c.Present = make([]bool, len(w.op.Operands))
					for j, o := range w.op.Operands {
						c.Present[j] = o.Present(bl.Params)
					}
				}
			}
		}
		return c
	}
	f := w.fams[w.famOf[c.Family]]
	pl, err := f.Plan(c.Params, d)
	if err != nil {
		return fail(err)
	}
	c.Plan = pl
	c.Class = NumericsClass(f, c.Params)
	c.Present = make([]bool, len(w.op.Operands))
	for j, o := range w.op.Operands {
		c.Present[j] = o.Present(c.Params)
	}
	return c
}

// fits reports whether family candidate c is worth timing on dims d
// (kernel.Family.FitsShape); a panicking Fits (user code) counts as a fit,
// so that the candidate runs and its Plan decides.
func (w *sweepSetup) fits(c JobCandidate, d kernel.Dims) (ok bool) {
	if c.Vendor || c.AA {
		return true
	}
	defer func() {
		if recover() != nil {
			ok = true
		}
	}()
	return w.fams[w.famOf[c.Family]].FitsShape(c.Params, d)
}

// cells lists the plan's cells of this shard and the cells that get the
// A/A twin (chosen on the whole plan, so that every shard and every
// process agrees on them).
func (w *sweepSetup) cells(sum *Summary) (cells []result.Cell, aaCell map[string]bool, err error) {
	all, err := CellsOf(w.cfg.Workload, w.op)
	if err != nil {
		return nil, nil, err
	}
	aaCell = map[string]bool{}
	if w.cfg.AA {
		seen := map[string]bool{}
		for _, c := range all {
			if cl := ShapeClass(c.N, c.K); !seen[cl] {
				seen[cl], aaCell[CellKey(c)] = true, true
			}
		}
	}
	for _, c := range all {
		if w.cfg.Shard.Has(c) {
			cells = append(cells, c)
		}
	}
	sum.Total = len(cells)
	if len(cells) == 0 {
		sum.Warnings = append(sum.Warnings, fmt.Sprintf("shard %s holds none of the plan's %d cells", w.cfg.Shard, len(all)))
	}
	return cells, aaCell, nil
}

// jobs returns the job builder of the scheduler: the job of cell ci holds
// the candidates not yet stored (false when there are none), planned for
// the cell; a candidate that failed in MaxFailures cells is skipped.
func (w *sweepSetup) jobs(cells []result.Cell, aaCell map[string]bool, failures map[string]int) func(ci int, done map[string]result.Status) (CellJob, bool) {
	cfg, cands := w.cfg, w.cands
	maxFail := cfg.MaxFailures
	if maxFail <= 0 {
		maxFail = 2
	}
	return func(ci int, done map[string]result.Status) (CellJob, bool) {
		cell := cells[ci]
		var todo []JobCandidate
		for _, c := range cands {
			if c.FromSpace && !w.fits(c, cell.DimsOrGemm()) {
				continue // a default tile its family leaves out of this shape
			}
			if _, ok := done[c.Tile]; !ok {
				todo = append(todo, c)
			}
		}
		if aaCell[CellKey(cell)] && len(done) == 0 {
			// The A/A twin joins a cell's first session only.
			twin := cands[0]
			twin.Tile, twin.AA = cands[0].Tile+AASuffix, true
			todo = append(todo, twin)
		}
		if len(todo) == 0 {
			return CellJob{}, false
		}
		// The reference tile anchors every session of a cell: when new
		// candidates join a measured cell it is measured again beside them.
		if _, ok := done[cands[0].Tile]; ok {
			todo = append([]JobCandidate{cands[0]}, todo...)
		}
		d := cell.DimsOrGemm()
		for i := range todo {
			if todo[i].Status == "" && failures[todo[i].Tile] >= maxFail {
				todo[i].Status, todo[i].Detail = result.Skipped, fmt.Sprintf("failed in %d cells before; not retried", failures[todo[i].Tile])
			}
			todo[i] = w.plan(todo[i], d)
			// The executor loads the compiled artifact and never compiles:
			// the source (a family's whole text, 15–60 KB, for each of up
			// to ~130 candidates: a 4–6 MB frame to encode and decode for
			// every cell) stays here.
			todo[i].Program.Source = ""
		}
		mo := cfg.Measure
		mo.Race = !cfg.NoRace
		j := CellJob{Cell: cell, Reference: cands[0].Tile, Seed: cfg.Seed ^ shapeSeed(cell), Operator: w.op.Name, Types: w.op.Types(),
			Candidates: todo, Measure: mo, MaxSamples: cfg.MaxSamples, Laplacian: cfg.Laplacian, Trace: cfg.Trace}
		if j.MaxSamples <= 0 {
			j.MaxSamples = 1 << 16
		}
		return j, true
	}
}

// Candidates builds the candidates of one family for tiles (nil: the
// default sweep), the reference tile first, each name validated.
func Candidates(fam *kernel.Family, tiles []string) ([]JobCandidate, error) {
	return CandidatesOf([]*kernel.Family{fam}, tiles)
}

// CandidatesOf builds the candidates of several families of one operator:
// the first family's reference tile first, then for tiles nil every
// family's default sweep, else the tiles named. A candidate of a family
// other than the first is named "family/tile" (its display name); tiles
// name them so too.
func CandidatesOf(fams []*kernel.Family, tiles []string) ([]JobCandidate, error) {
	return CandidatesFor(fams, tiles, false)
}

// CandidatesFor is CandidatesOf with the default sweep (tiles nil) also
// holding every family's ConstWeights tiles when constWeights is set.
func CandidatesFor(fams []*kernel.Family, tiles []string, constWeights bool) ([]JobCandidate, error) {
	ref := fams[0]
	refP, err := ref.ParseTile(ref.Reference)
	if err != nil {
		return nil, fmt.Errorf("family %s reference: %w", ref.Name, err)
	}
	out := []JobCandidate{{Tile: ref.TileName(refP), Family: ref.Name, Params: refP}}
	seen := map[string]bool{out[0].Tile: true}
	add := func(fi int, t string, space bool) error {
		f := fams[fi]
		p, err := f.ParseTile(t)
		if err != nil {
			return err
		}
		name := f.TileName(p)
		if fi > 0 {
			name = f.Name + "/" + name
		}
		if !seen[name] {
			seen[name] = true
			out = append(out, JobCandidate{Tile: name, Family: f.Name, Params: p, FromSpace: space})
		}
		return nil
	}
	if tiles == nil {
		for fi, f := range fams {
			for _, t := range f.Tiles() {
				if err := add(fi, t, true); err != nil {
					return nil, err
				}
			}
			if !constWeights {
				continue
			}
			for _, p := range f.ConstSpace() {
				if err := add(fi, f.TileName(p), true); err != nil {
					return nil, err
				}
			}
		}
		return out, nil
	}
	for _, t := range tiles {
		fi := 0
		if fam, rest, ok := strings.Cut(t, "/"); ok {
			fi = -1
			for i, f := range fams {
				if f.Name == fam {
					fi = i
				}
			}
			if fi < 0 {
				return nil, fmt.Errorf("tile %q: no family %s in this sweep", t, fam)
			}
			t = rest
		}
		if err := add(fi, t, false); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// NumericsClass is the numerics class of tile p of f: f.Numerics(p), or
// the family's name when it declares none. Candidates of one class must be
// bitwise equal; a family shares another's class by returning the same
// string (e.g. a wgmma family whose k order matches mma.sync's).
func NumericsClass(f *kernel.Family, p kernel.Params) string {
	if f.Numerics == nil {
		return f.Name
	}
	return f.Numerics(p)
}

// bareTile strips a "family/" prefix from a display name.
func bareTile(name string) string {
	if _, rest, ok := strings.Cut(name, "/"); ok {
		return rest
	}
	return name
}

// CellsOf lists a workload's cells of operator op (the shapes whose
// operator it is), shape-major in workload order, M ascending, with the
// operator's dimensions (Defaults filled in) and counts.
func CellsOf(w workload.Workload, op *kernel.Operator) ([]result.Cell, error) {
	var out []result.Cell
	for _, s := range w.Shapes {
		if s.Operator() != op.Name {
			continue
		}
		for _, m := range w.Ms {
			d, err := op.Resolve(s.At(m))
			if err != nil {
				return nil, fmt.Errorf("shape %s: %w", s.Name, err)
			}
			out = append(out, result.NewCell(s.Name, op, d, s.Calls))
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("workload %s has no shape of operator %s", w.Name, op.Name)
	}
	return out, nil
}

// Cells lists a workload's gemm_f16 cells (see CellsOf).
func Cells(w workload.Workload) []result.Cell {
	c, _ := CellsOf(w, builtin.GemmF16())
	return c
}

// ShapeClass groups shapes for A/A calibration by output width:
// "skinny" (N ≤ 128), "narrow" (N ≤ 1024) and "wide".
func ShapeClass(n, k int) string {
	switch {
	case n <= 128:
		return "skinny"
	case n <= 1024:
		return "narrow"
	default:
		return "wide"
	}
}

// shapeSeed mixes a cell's shape into a seed (FNV-1a over the name and
// every dimension but M). It does not depend on M, so that the inputs of a
// shape's cells are prefixes of one another (kernel.UniformInputs) and the
// rows of different M can be compared (batch invariance). Before that
// check existed the seed also mixed in M: inputs are different bits since.
func shapeSeed(c result.Cell) uint64 {
	h := uint64(14695981039346656037)
	key := fmt.Sprintf("%s/%d/%d", c.Shape, c.N, c.K)
	if c.Op != "" && c.Op != "gemm_f16" {
		d := kernel.Dims{}
		for k, v := range c.Dims {
			if k != "M" {
				d[k] = v
			}
		}
		key += "/" + c.Op + "/" + d.String()
	}
	for _, b := range []byte(key) {
		h ^= uint64(b)
		h *= 1099511628211
	}
	return h
}

// program is the compilation unit of one tile: the family source with the
// tile's parameters and the operator's operand-type defines.
func program(family, src string, p kernel.Params, op *kernel.Operator) backend.Program {
	return backend.Program{Family: family, Source: src, Defines: append(kernel.Defines(p), op.TypeDefines()...)}
}

// closed reports whether ch is closed (a nil channel never is).
func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
