// Command tilefit finds the fastest correct GEMM tile for every shape and
// token count of a workload; see "tilefit help".
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/tilefit/tilefit/internal/cli"
)

func main() {
	cli.MaybeServeWorker()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
