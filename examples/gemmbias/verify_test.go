package gemmbias

import (
	"github.com/tilefit/tilefit/kernel"
	"github.com/tilefit/tilefit/verify"
)

func verifyCheck(op *kernel.Operator, d kernel.Dims, in [][]byte, y []byte) error {
	return verify.Check(op, d, in, 3, y, 1, 1<<20).Err
}
