package tune

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tilefit/tilefit/backend"
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
	// family only).
	Source   string
	Workload workload.Workload
	// Tiles are the candidate tiles; nil means every family's default
	// sweep. A tile of another family than the first is written
	// "family/tile". The reference tile is always added.
	Tiles []string
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
	// Stop, when closed, ends the sweep between cells (the cell in flight
	// finishes and is saved); cancelling ctx ends it at once.
	Stop <-chan struct{}
	// Laplacian adds the Laplacian known-answer check to every square
	// cell of a plain GEMM operator (verify.LaplacianInputs).
	Laplacian bool
}

// Progress reports a finished (or skipped) cell.
type Progress struct {
	Done, Total int
	Cell        result.Cell
	Skipped     bool
	Elapsed     time.Duration
}

// Summary is a sweep's outcome.
type Summary struct {
	Prov     result.Provenance
	Device   backend.Device
	Cells    int // cells run now
	Skipped  int // cells already in the store
	Failures int // failed candidate results stored now
	NotRun   int // cells that could not run (see Warnings)
	Compile  time.Duration
	Elapsed  time.Duration
	// Warnings are problems that did not stop the sweep.
	Warnings []string
}

// ErrInterrupted is returned when Config.Stop or ctx ends a sweep.
var ErrInterrupted = errors.New("sweep interrupted")

// Sweep runs cfg: it compiles every candidate, then runs each cell not yet
// in st (resume: candidates already stored for a cell are not measured
// again), committing each cell in its own transaction.
func Sweep(ctx context.Context, cfg Config, ex Executor, st Results, progress func(Progress)) (Summary, error) {
	start := time.Now()
	var sum Summary
	if len(cfg.Families) == 0 {
		return sum, errors.New("sweep: no family")
	}
	fams := cfg.Families
	op, err := fams[0].Operator.Typed(cfg.Types)
	if err != nil {
		return sum, err
	}
	srcs := make([]string, len(fams))
	var names []string
	for i, f := range fams {
		if f.Operator.Name != op.Name {
			return sum, fmt.Errorf("family %s computes %s, not %s: one cell holds one operator", f.Name, f.Operator.Name, op.Name)
		}
		srcs[i] = f.Source
		names = append(names, f.Name)
	}
	if cfg.Source != "" {
		if len(fams) > 1 {
			return sum, errors.New("sweep: an edited source applies to one family")
		}
		srcs[0] = cfg.Source
	}
	dev, err := ex.Device(ctx)
	if err != nil {
		return sum, fmt.Errorf("device: %w", err)
	}
	sum.Device = dev
	prov := provenance(dev, names, srcs, op)
	sum.Prov = prov

	cands, err := CandidatesOf(fams, cfg.Tiles)
	if err != nil {
		return sum, err
	}
	var baselines []*kernel.Baseline
	for _, bl := range cfg.Baselines {
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
		baselines = append(baselines, bl)
		cands = append(cands, JobCandidate{Tile: bl.Name, Vendor: true})
	}
	// Compile every candidate with a source (in parallel, in the executor).
	famOf := map[string]int{}
	for i, f := range fams {
		famOf[f.Name] = i
	}
	var progs []backend.Program
	var progOf []int
	bi := 0
	for i := range cands {
		if cands[i].Vendor {
			bl := baselines[bi]
			bi++
			if bl.Source == "" {
				continue
			}
			cands[i].Program = backend.Program{Family: bl.Name, Source: bl.Source, Defines: op.TypeDefines()}
		} else {
			fi := famOf[cands[i].Family]
			p, _ := fams[fi].ParseTile(bareTile(cands[i].Tile))
			cands[i].Program = program(fams[fi].Name, srcs[fi], p, op)
		}
		progs = append(progs, cands[i].Program)
		progOf = append(progOf, i)
	}
	t0 := time.Now()
	comp, err := ex.Compile(ctx, progs)
	if err != nil {
		return sum, fmt.Errorf("compile: %w", err)
	}
	sum.Compile = time.Since(t0)
	for j, i := range progOf {
		cr := comp[j]
		cands[i].Artifact = cr.Artifact
		cands[i].CompileSeconds = cr.Artifact.Elapsed.Seconds()
		if cr.Err != "" {
			cands[i].Status, cands[i].Detail = result.CompileFailed, cr.Err
		}
	}
	// plan gives a candidate its launch list on a cell's dims.
	plan := func(c JobCandidate, d kernel.Dims) (out JobCandidate) {
		if c.AA {
			return c // the twin runs the reference's kernel
		}
		// A family's Plan is user code: a panic fails the candidate, not
		// the sweep.
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
			for _, bl := range baselines {
				if bl.Name == c.Tile {
					pl, err := bl.Plan(op, d)
					if err != nil {
						return fail(err)
					}
					c.Plan = pl
				}
			}
			return c
		}
		f := fams[famOf[c.Family]]
		p, err := f.ParseTile(bareTile(c.Tile))
		if err != nil {
			return fail(err)
		}
		pl, err := f.Plan(p, d)
		if err != nil {
			return fail(err)
		}
		c.Plan = pl
		c.Class = NumericsClass(f, p)
		c.Present = make([]bool, len(op.Operands))
		for j, o := range op.Operands {
			c.Present[j] = o.Present(p)
		}
		return c
	}

	cells, err := CellsOf(cfg.Workload, op)
	if err != nil {
		return sum, err
	}
	aaCells := map[int]bool{}
	if cfg.AA {
		seen := map[string]bool{}
		for i, c := range cells {
			if cl := ShapeClass(c.N, c.K); !seen[cl] {
				seen[cl], aaCells[i] = true, true
			}
		}
	}
	maxFail := cfg.MaxFailures
	if maxFail <= 0 {
		maxFail = 2
	}
	failures := map[string]int{}
	warned := map[string]bool{}
	for ci, cell := range cells {
		if ctx.Err() != nil || closed(cfg.Stop) {
			sum.Elapsed = time.Since(start)
			return sum, fmt.Errorf("%w after %d of %d cells", ErrInterrupted, ci, len(cells))
		}
		done, err := st.Measured(ctx, prov.Key(), cell)
		if err != nil {
			return sum, err
		}
		var todo []JobCandidate
		for _, c := range cands {
			if _, ok := done[c.Tile]; !ok {
				todo = append(todo, c)
			}
		}
		if aaCells[ci] && len(done) == 0 {
			// The A/A twin joins a cell's first session only.
			twin := cands[0]
			twin.Tile, twin.AA = cands[0].Tile+AASuffix, true
			todo = append(todo, twin)
		}
		if len(todo) == 0 {
			sum.Skipped++
			if progress != nil {
				progress(Progress{Done: ci + 1, Total: len(cells), Cell: cell, Skipped: true, Elapsed: time.Since(start)})
			}
			continue
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
			todo[i] = plan(todo[i], d)
		}
		job := CellJob{Cell: cell, Reference: cands[0].Tile, Seed: cfg.Seed ^ shapeSeed(cell), Operator: op.Name, Types: op.Types(),
			Candidates: todo, Measure: cfg.Measure, MaxSamples: cfg.MaxSamples, Laplacian: cfg.Laplacian}
		if job.MaxSamples <= 0 {
			job.MaxSamples = 1 << 16
		}
		res, err := ex.RunCell(ctx, job)
		if err != nil {
			if ctx.Err() != nil {
				sum.Elapsed = time.Since(start)
				return sum, fmt.Errorf("%w during cell %s M=%d (not saved) after %d of %d cells", ErrInterrupted, cell.Shape, cell.M, ci, len(cells))
			}
			sum.NotRun++
			sum.Warnings = append(sum.Warnings, fmt.Sprintf("cell %s M=%d not run: %v", cell.Shape, cell.M, err))
			continue
		}
		res.Prov = prov
		// Batch invariance: compare the rows with the shape's stored cells
		// at other M (earlier in this sweep, or in an earlier process).
		stored, err := st.ShapeRows(context.WithoutCancel(ctx), prov.Key(), cell)
		if err != nil {
			return sum, fmt.Errorf("cell %s M=%d: batch invariance: %w", cell.Shape, cell.M, err)
		}
		if w := checkInvariance(&res, stored); w != "" && !warned[cell.Shape] {
			warned[cell.Shape] = true // once per shape
			sum.Warnings = append(sum.Warnings, w)
		}
		for _, c := range res.Candidates {
			switch c.Status {
			case result.OK, result.Skipped:
			case result.Crashed, result.Timeout:
				failures[c.Tile]++
				sum.Failures++
			default:
				sum.Failures++
			}
		}
		// A finished cell is saved even when an interrupt came after it:
		// losing it would only mean measuring it again on resume.
		if _, err := st.SaveCell(context.WithoutCancel(ctx), res); err != nil {
			return sum, fmt.Errorf("save cell %s M=%d: %w", cell.Shape, cell.M, err)
		}
		sum.Cells++
		if progress != nil {
			progress(Progress{Done: ci + 1, Total: len(cells), Cell: cell, Elapsed: time.Since(start)})
		}
	}
	sum.Elapsed = time.Since(start)
	return sum, nil
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
	ref := fams[0]
	refP, err := ref.ParseTile(ref.Reference)
	if err != nil {
		return nil, fmt.Errorf("family %s reference: %w", ref.Name, err)
	}
	out := []JobCandidate{{Tile: ref.TileName(refP), Family: ref.Name, Params: refP.String()}}
	seen := map[string]bool{out[0].Tile: true}
	add := func(fi int, t string) error {
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
			out = append(out, JobCandidate{Tile: name, Family: f.Name, Params: p.String()})
		}
		return nil
	}
	if tiles == nil {
		for fi, f := range fams {
			for _, t := range f.Tiles() {
				if err := add(fi, t); err != nil {
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
		if err := add(fi, t); err != nil {
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
	c, _ := CellsOf(w, kernel.GemmF16())
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
