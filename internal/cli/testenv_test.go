package cli

import (
	"context"
	"io"

	"github.com/tilefit/tilefit/backend"
	"github.com/tilefit/tilefit/backend/cpu"
	"github.com/tilefit/tilefit/backend/cuda"
	"github.com/tilefit/tilefit/kernel"
)

// testBackends are the built-in backends, registered the way
// tilefit.Builtin does (this package cannot import the root package).
func testBackends() *backend.Registry {
	var r backend.Registry
	r.Add("cpu", func(ctx context.Context, device int) (backend.Backend, error) {
		return cpu.New(cpu.Options{Device: device})
	})
	r.Add("cuda", func(ctx context.Context, device int) (backend.Backend, error) {
		return cuda.New(cuda.Options{Device: device})
	})
	return &r
}

// Run is tilefit with the built-in families and backends, for the tests.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return RunWith(ctx, kernel.Builtin(), testBackends(), args, stdout, stderr)
}

// testCtx is a context carrying the built-in families and backends, for
// tests that call a verb's function directly.
func testCtx() context.Context {
	return withEnv(context.Background(), kernel.Builtin(), testBackends())
}
