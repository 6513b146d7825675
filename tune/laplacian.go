package tune

import (
	"context"
	"errors"

	"github.com/tilefit/tilefit/backend"
	"github.com/tilefit/tilefit/kernel"
	"github.com/tilefit/tilefit/result"
	"github.com/tilefit/tilefit/verify"
)

// laplacianCheck is the Laplacian known-answer check of a cell
// (CellJob.Laplacian; verify.LaplacianInputs): when the cell's operator is
// a plain GEMM and the cell is square (N = K), every candidate that passed
// verification so far (the A/A twin shares the reference's kernel and is
// skipped) runs once more on inputs X random, W the periodic 1-D Laplacian,
// and must give each row's cyclic second difference exactly; one that
// does not fails as numeric with the first differing element. Cells the
// check does not apply to are left as they are.
func laplacianCheck(ctx context.Context, b backend.Backend, op *kernel.Operator, d kernel.Dims, job CellJob,
	kernels []backend.Kernel, cands []result.Candidate, emit func(Event)) error {
	if verify.LaplacianApplies(op, d) != nil {
		return nil
	}
	in, err := verify.LaplacianInputs(op, job.Seed^0x1a91ac1a, d)
	if err != nil {
		return err
	}
	p, err := b.NewProblem(ctx, op, d, [][][]byte{in})
	if err != nil {
		return err
	}
	defer p.Close()
	_, yi, _ := op.Operand(op.Gemm.Y)
	for i := range cands {
		if cands[i].Status != result.OK || job.Candidates[i].AA || kernels[i] == nil {
			continue
		}
		emit(Event{Cand: i, Phase: "verify"})
		out, err := p.Run(ctx, kernels[i], 0)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			var ge *backend.GuardError
			if errors.As(err, &ge) {
				cands[i].Status, cands[i].Detail = result.NumericFailed, "laplacian check: "+err.Error()
				continue
			}
			return &CandidateFailure{Cand: i, Status: result.Crashed, Detail: "laplacian check: " + err.Error()}
		}
		m, err := verify.CheckLaplacian(op, d, in, out[yi])
		switch {
		case err != nil:
			cands[i].Status, cands[i].Detail = result.NumericFailed, "laplacian check: "+err.Error()
		case m != nil:
			cands[i].Status, cands[i].Detail = result.NumericFailed,
				"laplacian check: Y = X·Lᵀ (L the periodic 1-D Laplacian) is not each row's cyclic second difference exactly: "+m.String()
		}
	}
	return nil
}
