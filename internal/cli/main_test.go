package cli

import (
	"os"
	"testing"
)

// TestMain lets the test binary serve as a tilefit worker process (the
// sweep's default isolation starts the running binary as its worker).
func TestMain(m *testing.M) {
	MaybeServeWorker()
	os.Exit(m.Run())
}
