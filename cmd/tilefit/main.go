// Command tilefit finds the fastest correct GEMM tile for every shape and
// token count of a workload; see "tilefit help".
package main

import (
	"os"

	"github.com/tilefit/tilefit/internal/cli"
)

func main() {
	cli.MaybeServeWorker()
	ctx, release := cli.SignalContext(os.Stderr)
	code := cli.Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	release()
	os.Exit(code)
}
