package tune

import (
	"context"
	"fmt"

	"github.com/tilefit/tilefit/backend"
	"github.com/tilefit/tilefit/kernel"
	"github.com/tilefit/tilefit/result"
	"github.com/tilefit/tilefit/verify"
	"github.com/tilefit/tilefit/workload"
)

// CheckDevice validates the workload's buffers against half the device
// memory (a cell holds its input sets twice: generated, and in the problem).
func CheckDevice(ctx context.Context, ex Executor, w workload.Workload, reg *kernel.Registry) (backend.Device, error) {
	dev, err := ex.Device(ctx)
	if err != nil {
		return dev, err
	}
	if dev.Memory > 0 {
		if err := w.Validate(workload.Options{MaxBytes: dev.Memory / 2, Operators: reg}); err != nil {
			return dev, fmt.Errorf("workload %s on %s: %w", w.Name, dev.Name, err)
		}
	}
	return dev, nil
}

// LaplacianNote says which of cells of operator op the Laplacian check
// runs on.
func LaplacianNote(op *kernel.Operator, cells []result.Cell) string {
	n := 0
	var why error
	for _, c := range cells {
		if err := verify.LaplacianApplies(op, c.DimsOrGemm()); err != nil {
			why = err
		} else {
			n++
		}
	}
	switch {
	case n == 0:
		return fmt.Sprintf("warning: --check laplacian applies to no cell of operator %s (%v); nothing is checked", op.Name, why)
	case n < len(cells):
		return fmt.Sprintf("--check laplacian: %d of %d cells are square (N = K); every candidate of those must also give Y = X·Lᵀ exactly (L the periodic 1-D Laplacian)", n, len(cells))
	}
	return fmt.Sprintf("--check laplacian: every candidate of the %d cells must also give Y = X·Lᵀ exactly (L the periodic 1-D Laplacian)", n)
}
