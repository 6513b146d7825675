package tune

import (
	"context"
	"fmt"

	"github.com/tilefit/tilefit/backend"
	"github.com/tilefit/tilefit/kernel"
	"github.com/tilefit/tilefit/measure"
	"github.com/tilefit/tilefit/result"
)

// An ABSide is one side of an A/B comparison: a tile of a source revision.
type ABSide struct {
	// Label names the side in results ("A", "B").
	Label string
	// Source is the family source text ("" = the built-in source).
	Source string
	// Family is the side's family; nil means ABCell's. The two sides may be
	// tiles of two families of one operator (a policy over both).
	Family *kernel.Family
	// Params is the side's tile, parsed once by the caller
	// (kernel.Family.ParseTile).
	Params kernel.Params
}

// ABOptions configure ABCell.
type ABOptions struct {
	Seed uint64
	// Types chooses operand element types (nil: the operator's defaults).
	Types      map[string]kernel.DType
	Measure    measure.Options
	MaxSamples int
}

// ABCell compares a and b on one cell in paired rounds (the order
// alternates ABBA by round, outputs rotate): both revisions are compiled,
// given the same inputs and checked numerically; whether B's output is
// bitwise equal to A's is recorded, not required. The result's candidates
// are named "LABEL:tile" (A first); A is the reference. A side that fails to
// compile or verify comes back with its Status set.
func ABCell(ctx context.Context, ex Executor, fam *kernel.Family, cell result.Cell, a, b ABSide, o ABOptions) (result.CellResult, error) {
	op, err := fam.Operator.Typed(o.Types)
	if err != nil {
		return result.CellResult{}, err
	}
	var cands []JobCandidate
	var progs []backend.Program
	for _, side := range []ABSide{a, b} {
		f := fam
		if side.Family != nil {
			f = side.Family
		}
		if f.Operator.Name != fam.Operator.Name {
			return result.CellResult{}, fmt.Errorf("%s: family %s computes %s, not %s", side.Label, f.Name, f.Operator.Name, fam.Operator.Name)
		}
		p := side.Params
		if err := f.Validate(p); err != nil {
			return result.CellResult{}, fmt.Errorf("%s: %w", side.Label, err)
		}
		src := side.Source
		if src == "" {
			src = f.Source
		}
		prog := program(f.Name, src, p, op)
		progs = append(progs, prog)
		plan, err := f.Plan(p, cell.DimsOrGemm())
		if err != nil {
			return result.CellResult{}, fmt.Errorf("%s: plan: %w", side.Label, err)
		}
		present := make([]bool, len(op.Operands))
		for j, o := range op.Operands {
			present[j] = o.Present(p)
		}
		cands = append(cands, JobCandidate{Tile: side.Label + ":" + f.TileName(p), Family: f.Name, Params: p, Program: prog, Plan: plan, Present: present})
	}
	comp, err := ex.Compile(ctx, progs)
	if err != nil {
		return result.CellResult{}, fmt.Errorf("compile: %w", err)
	}
	for i, cr := range comp {
		cands[i].Artifact, cands[i].CompileSeconds = cr.Artifact, cr.Artifact.Elapsed.Seconds()
		if cr.Err != "" {
			cands[i].Status, cands[i].Detail = result.CompileFailed, cr.Err
		}
	}
	job := CellJob{Cell: cell, Reference: cands[0].Tile, Seed: o.Seed ^ shapeSeed(cell), Operator: op.Name, Types: op.Types(),
		Candidates: cands, Measure: o.Measure, MaxSamples: o.MaxSamples, AllowDiff: true}
	if job.MaxSamples <= 0 {
		job.MaxSamples = 1 << 16
	}
	return ex.RunCell(ctx, job)
}
