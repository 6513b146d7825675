package tune

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tilefit/tilefit/backend"
	"github.com/tilefit/tilefit/kernel"
	"github.com/tilefit/tilefit/measure"
	"github.com/tilefit/tilefit/result"
	"github.com/tilefit/tilefit/store"
	"github.com/tilefit/tilefit/workload"
)

// Config is one sweep: a family (optionally an edited source revision), a
// workload of shapes × M, and the candidates to tune.
type Config struct {
	Family *kernel.Family
	// Source replaces Family.Source when non-empty (a user's revision).
	Source   string
	Workload workload.Workload
	// Tiles are the candidate tiles; nil means the family's default sweep.
	// The reference tile is always added.
	Tiles []string
	// Vendor adds the vendor library candidate to every cell.
	Vendor bool
	// AA adds an A/A twin of the reference tile to one cell per shape
	// class (see ShapeClass), to calibrate the noise floor.
	AA      bool
	OutF16  bool
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
func Sweep(ctx context.Context, cfg Config, ex Executor, st *store.Store, progress func(Progress)) (Summary, error) {
	start := time.Now()
	var sum Summary
	fam := cfg.Family
	src := fam.Source
	if cfg.Source != "" {
		src = cfg.Source
	}
	dev, err := ex.Device(ctx)
	if err != nil {
		return sum, fmt.Errorf("device: %w", err)
	}
	sum.Device = dev
	prov := result.Provenance{Backend: dev.Backend, Device: dev.Name, Arch: dev.Arch, Compiler: dev.Compiler,
		Flags: dev.Flags, Driver: dev.Driver, Family: fam.Name, SourceHash: result.SourceHash(src), OutF16: cfg.OutF16}
	sum.Prov = prov

	cands, err := Candidates(fam, cfg.Tiles)
	if err != nil {
		return sum, err
	}
	if cfg.Vendor {
		// The device lists its vendor library (Props "openblas", "cublas")
		// when it is installed; without it the sweep runs without one.
		if v := vendorName(dev.Backend); dev.Props[v] != "" {
			cands = append(cands, JobCandidate{Tile: v, Vendor: true})
		} else {
			sum.Warnings = append(sum.Warnings, fmt.Sprintf("no vendor baseline: %s is not installed on %s", v, dev.Name))
		}
	}
	// Compile every family candidate (in parallel, in the executor).
	var progs []backend.Program
	for i := range cands {
		if cands[i].Vendor {
			continue
		}
		p, _ := fam.ParseTile(cands[i].Tile)
		cands[i].Program = program(fam.Name, src, p, cfg.OutF16)
		progs = append(progs, cands[i].Program)
	}
	t0 := time.Now()
	comp, err := ex.Compile(ctx, progs)
	if err != nil {
		return sum, fmt.Errorf("compile: %w", err)
	}
	sum.Compile = time.Since(t0)
	j := 0
	for i := range cands {
		if cands[i].Vendor {
			continue
		}
		cr := comp[j]
		j++
		cands[i].Artifact = cr.Artifact
		cands[i].CompileSeconds = cr.Artifact.Elapsed.Seconds()
		if cr.Err != "" {
			cands[i].Status, cands[i].Detail = result.CompileFailed, cr.Err
		}
	}

	cells := Cells(cfg.Workload)
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
			todo = append(todo, JobCandidate{Tile: cands[0].Tile + AASuffix, AA: true, Params: cands[0].Params})
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
		if _, ok := done[fam.Reference]; ok {
			todo = append([]JobCandidate{cands[0]}, todo...)
		}
		for i := range todo {
			if todo[i].Status == "" && failures[todo[i].Tile] >= maxFail {
				todo[i].Status, todo[i].Detail = result.Skipped, fmt.Sprintf("failed in %d cells before; not retried", failures[todo[i].Tile])
			}
		}
		job := CellJob{Cell: cell, Reference: fam.Reference, Seed: cfg.Seed ^ cellSeed(cell), OutF16: cfg.OutF16,
			Candidates: todo, Measure: cfg.Measure, MaxSamples: cfg.MaxSamples}
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

// Candidates builds the family candidates for tiles (nil: the default
// sweep), the reference tile first, each name validated.
func Candidates(fam *kernel.Family, tiles []string) ([]JobCandidate, error) {
	if tiles == nil {
		tiles = fam.Tiles()
	}
	refP, err := fam.ParseTile(fam.Reference)
	if err != nil {
		return nil, fmt.Errorf("family %s reference: %w", fam.Name, err)
	}
	out := []JobCandidate{{Tile: fam.TileName(refP), Params: refP.String()}}
	seen := map[string]bool{out[0].Tile: true}
	for _, t := range tiles {
		p, err := fam.ParseTile(t)
		if err != nil {
			return nil, err
		}
		name := fam.TileName(p)
		if seen[name] {
			continue
		}
		seen[name] = true
		out = append(out, JobCandidate{Tile: name, Params: p.String()})
	}
	return out, nil
}

// Cells lists a workload's cells, shape-major in workload order, M ascending.
func Cells(w workload.Workload) []result.Cell {
	var out []result.Cell
	for _, s := range w.Shapes {
		for _, m := range w.Ms {
			out = append(out, result.Cell{Shape: s.Name, N: s.N, K: s.K, M: m, Calls: s.Calls})
		}
	}
	return out
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

func vendorName(b string) string {
	if b == "cuda" {
		return kernel.VendorCuBLAS
	}
	return kernel.VendorOpenBLAS
}

// cellSeed mixes a cell's sizes into a seed (FNV-1a over the name and sizes).
func cellSeed(c result.Cell) uint64 {
	h := uint64(14695981039346656037)
	for _, b := range []byte(fmt.Sprintf("%s/%d/%d/%d", c.Shape, c.N, c.K, c.M)) {
		h ^= uint64(b)
		h *= 1099511628211
	}
	return h
}

// program is the compilation unit of one tile: the family source with the
// tile's parameters and OUT_F16 (0 or 1) as defines.
func program(family, src string, p kernel.Params, outF16 bool) backend.Program {
	out := 0
	if outF16 {
		out = 1
	}
	return backend.Program{Family: family, Source: src, Defines: append(kernel.Defines(p), fmt.Sprintf("OUT_F16=%d", out))}
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
