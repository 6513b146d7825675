package cli

import (
	"fmt"

	"github.com/tilefit/tilefit/kernel"
	"github.com/tilefit/tilefit/result"
	"github.com/tilefit/tilefit/verify"
)

// checkLaplacian is --check laplacian: the Laplacian known-answer check
// (verify.LaplacianInputs) added to every square cell of a plain GEMM.
const checkLaplacian = "laplacian"

// laplacianNote says which of cells of operator op the Laplacian check
// runs on.
func laplacianNote(op *kernel.Operator, cells []result.Cell) string {
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
