package cli

import (
	"context"
	"os"
	"testing"
)

// TestMain lets the test binary serve as a tilefit worker process (the
// sweep's default isolation starts the running binary as its worker), and
// as tilefit itself when TILEFIT_TEST_MAIN is set (tests that kill sweeps).
func TestMain(m *testing.M) {
	MaybeServeWorker()
	if os.Getenv(testMainEnv) != "" {
		os.Exit(Run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}
