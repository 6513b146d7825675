// Command tilefit finds the fastest correct GEMM tile for every shape and
// token count of a workload; see "tilefit help".
package main

import (
	"context"
	"os"

	"github.com/tilefit/tilefit"
)

func main() {
	os.Exit(tilefit.Main(context.Background(), tilefit.Builtin(), os.Args[1:], os.Stdout, os.Stderr))
}
