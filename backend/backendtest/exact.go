package backendtest

import (
	"context"
	"errors"
	"testing"

	"github.com/tilefit/tilefit/backend"
	"github.com/tilefit/tilefit/kernel"
	"github.com/tilefit/tilefit/verify"
)

// checkExact is the exact known-answer part of the suite on one shape: the
// operator's exact inputs (kernel.Operator.Exact, verify.ExactInputs) are
// drawn — on the device when the backend draws inputs itself — and every
// tile given (of every numerics class: on these inputs every correct
// kernel computes the same exact answer, split-K classes included) must
// give the exact answer on every element of every output it has
// (verify.ExactRefs.Check). A baseline that does not is logged, not
// failed (a vendor's arithmetic is its own). An operator without an exact
// check, or a shape beyond it, is logged.
func checkExact(ctx context.Context, t *testing.T, b backend.Backend, fam *kernel.Family, op *kernel.Operator, d kernel.Dims,
	tiles []string, arts map[string]backend.Artifact, baselines []*kernel.Baseline, seed uint64, fail func(string, ...any)) {
	t.Helper()
	ex, drawn, err := verify.ExactInputs(op, d, seed)
	if err != nil {
		if errors.Is(err, verify.ErrNoExact) {
			t.Logf("%v", err)
		} else {
			t.Logf("%v: no exact check on this shape", err)
		}
		return
	}
	set := make([]backend.Input, len(drawn))
	for i := range drawn {
		set[i] = backend.Input{Drawn: &drawn[i]}
	}
	p, err := backend.NewProblemOf(ctx, b, op, d, [][]backend.Input{set})
	if err != nil {
		t.Fatalf("exact inputs %v: NewProblem: %v", d, err)
	}
	defer p.Close()
	refs := verify.NewExactRefs(op, d, ex, verify.Materialize(drawn), seed, 1<<20)
	exact, ran := 0, 0
	check := func(name string, k backend.Kernel, pres []bool, report func(string, ...any)) {
		ran++
		out, err := p.Run(ctx, k, 0)
		if err != nil {
			report("%v %s on the exact inputs: %v", d, name, err)
			return
		}
		ok := true
		for i, o := range op.Operands {
			if o.Dir != kernel.Out || !pres[i] {
				continue
			}
			m, err := refs.Check(i, out[i])
			switch {
			case err != nil:
				ok = false
				report("%v %s: exact check: %v", d, name, err)
			case m != nil:
				ok = false
				report("%v %s: exact check (%s): %s", d, name, ex.Covers, verify.Label(op, i, m.String()))
			}
		}
		if ok {
			exact++
		}
	}
	for _, tl := range tiles {
		k := mustLoad(ctx, t, b, fam, d, tl, arts[tl])
		pp, _ := fam.ParseTile(tl)
		check("tile "+tl, k, present(op, pp), fail)
		k.Close()
	}
	for _, bl := range baselines {
		plan, err := bl.Plan(op, d)
		if err != nil {
			continue
		}
		var art backend.Artifact
		if bl.Source != "" {
			if art, err = b.Compile(ctx, backend.Program{Family: bl.Name, Source: bl.Source, Defines: op.TypeDefines()}); err != nil {
				continue
			}
		}
		k, err := b.Load(ctx, bl.Name, art, plan)
		if err != nil {
			continue
		}
		all := make([]bool, len(op.Operands))
		for i := range all {
			all[i] = true
		}
		check("baseline "+bl.Name, k, all, func(f string, a ...any) { t.Logf("(not a failure) "+f, a...) })
		k.Close()
	}
	t.Logf("exact check %v: %d of %d tiles and baselines give the exact answer on every element", d, exact, ran)
}
