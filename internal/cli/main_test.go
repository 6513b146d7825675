package cli

import (
	"context"
	"os"
	"testing"

	"github.com/tilefit/tilefit/builtin"
	"github.com/tilefit/tilefit/internal/interrupt"
	"github.com/tilefit/tilefit/internal/pgtest"
)

// TestMain lets the test binary serve as a tilefit worker process (the
// sweep's default isolation starts the running binary as its worker), and
// as tilefit itself when TILEFIT_TEST_MAIN is set (tests that kill sweeps).
func TestMain(m *testing.M) {
	MaybeServeWorker(builtin.New(), testBackends())
	if os.Getenv(testMainEnv) != "" {
		if dir := os.Getenv(readOnlyMediaEnv); dir != "" {
			if err := mountReadOnly(dir); err != nil {
				os.Stderr.WriteString("read-only bind mount: " + err.Error() + "\n")
				os.Exit(7)
			}
		}
		ctx, release := interrupt.SignalContext(context.Background(), os.Stderr)
		code := Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
		release()
		os.Exit(code)
	}
	os.Exit(pgtest.Main(m))
}
