package cli

import (
	"context"
	"io"
	"os"
	"syscall"
	"time"

	"github.com/tilefit/tilefit/backend"
	"github.com/tilefit/tilefit/backend/cpu"
	"github.com/tilefit/tilefit/backend/cuda"
	"github.com/tilefit/tilefit/builtin"
	"github.com/tilefit/tilefit/kernel"
	"github.com/tilefit/tilefit/tune"
)

// testWorkerDiesEnv, set for a test, makes a worker process of this test
// binary SIGKILL itself when it allocates a cell (before any candidate
// runs): every cell of a sweep is one the sweep cannot measure.
const testWorkerDiesEnv = "TILEFIT_TEST_WORKER_DIES"

// dyingCPU is the CPU backend of testWorkerDiesEnv.
type dyingCPU struct{ *cpu.CPU }

func (d dyingCPU) NewProblem(ctx context.Context, op *kernel.Operator, dims kernel.Dims, sets [][][]byte) (backend.Problem, error) {
	syscall.Kill(os.Getpid(), syscall.SIGKILL)
	time.Sleep(time.Minute)
	return nil, nil
}

// testBackends are the built-in backends, registered the way
// tilefit.Builtin does (this package cannot import the root package).
func testBackends() *backend.Registry {
	var r backend.Registry
	dies := os.Getenv(testWorkerDiesEnv) != "" && os.Getenv(tune.WorkerEnv) != ""
	r.Add("cpu", func(ctx context.Context, device int) (backend.Backend, error) {
		c, err := cpu.New(cpu.Options{Device: device})
		if err != nil || !dies {
			return c, err
		}
		return dyingCPU{c}, nil
	})
	r.Add("cuda", func(ctx context.Context, device int) (backend.Backend, error) {
		return cuda.New(cuda.Options{Device: device})
	})
	return &r
}

// Run is tilefit with the built-in families and backends, for the tests.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return RunWith(ctx, builtin.New(), testBackends(), args, stdout, stderr)
}

// testCtx is a context carrying the built-in families and backends, for
// tests that call a verb's function directly.
func testCtx() context.Context {
	return withEnv(context.Background(), builtin.New(), testBackends())
}
