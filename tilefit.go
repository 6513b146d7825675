// Package tilefit is tilefit as a library: the command line (Main, RunWith)
// over a Registry of families, vendor baselines and backends that the
// program builds. The tilefit command is
//
//	func main() {
//		os.Exit(tilefit.Main(context.Background(), tilefit.Builtin(), os.Args[1:], os.Stdout, os.Stderr))
//	}
//
// and a program with a family (or a backend) of its own adds it to the
// registry before calling Main (docs/operators.md, examples/gemmbias):
//
//	reg := tilefit.Builtin()
//	if err := reg.Add(gemmbias.Family()); err != nil { ... }
//	os.Exit(tilefit.Main(ctx, reg, os.Args[1:], os.Stdout, os.Stderr))
//
// The values a family declares (kernel.Operator, kernel.Family, …) are in
// package kernel; the built-in operators, families and baselines (to reuse
// or wrap: builtin.GemmF16, builtin.CUDAGemmWgmma, …) in package builtin;
// the backend interface and its conformance suite in backend and
// backend/backendtest.
package tilefit

import (
	"context"
	"io"

	"github.com/tilefit/tilefit/backend"
	"github.com/tilefit/tilefit/backend/cpu"
	"github.com/tilefit/tilefit/backend/cuda"
	"github.com/tilefit/tilefit/builtin"
	"github.com/tilefit/tilefit/internal/cli"
	"github.com/tilefit/tilefit/internal/interrupt"
	"github.com/tilefit/tilefit/kernel"
)

// Exit codes of Main and RunWith.
const (
	ExitOK          = cli.ExitOK          // success
	ExitFailures    = cli.ExitFailures    // failures that --fail-on-error fails on
	ExitUsage       = cli.ExitUsage       // bad usage or input, and any other error that stops a command
	ExitInterrupted = cli.ExitInterrupted // interrupted (Ctrl-C, SIGTERM)
)

// A Registry is everything one tilefit binary knows: the families and
// vendor baselines (the embedded kernel.Registry: Add, AddBaseline,
// Lookup, Of, …) and the backends, by name (AddBackend). The program
// builds it — Builtin, then its own additions — and passes the same
// registry to every entry point; nothing is global.
type Registry struct {
	*kernel.Registry
	backends backend.Registry
}

// NewRegistry returns a registry of the families fs and no backend.
func NewRegistry(fs ...*kernel.Family) (*Registry, error) {
	k, err := kernel.NewRegistry(fs...)
	if err != nil {
		return nil, err
	}
	return &Registry{Registry: k}, nil
}

// Builtin returns a registry of the built-in families and baselines
// (builtin.New) and backends: cpu (cc and dlopen) and cuda (the driver
// API, NVRTC and cuBLAS, opened when the program runs).
func Builtin() *Registry {
	r := &Registry{Registry: builtin.New()}
	must(r.AddBackend("cpu", func(ctx context.Context, device int) (backend.Backend, error) {
		return cpu.New(cpu.Options{Device: device})
	}))
	must(r.AddBackend("cuda", func(ctx context.Context, device int) (backend.Backend, error) {
		return cuda.New(cuda.Options{Device: device})
	}))
	return r
}

func must(err error) {
	if err != nil {
		panic("tilefit: built-in registry: " + err.Error()) // a bug in this package, never input
	}
}

// AddBackend registers the backend name (the value of --backend), opened
// on a device ordinal by open. It refuses a name registered before.
func (r *Registry) AddBackend(name string, open backend.Opener) error {
	return r.backends.Add(name, open)
}

// Backends returns the names of the registered backends, in the order
// they were added.
func (r *Registry) Backends() []string { return r.backends.Names() }

// MaybeServeWorkerWith turns this process into one of a sweep's worker
// processes, when the parent started it as one (tune.WorkerEnv is set),
// and then exits; it returns at once otherwise. Main calls it first; a
// program that calls RunWith itself calls it first in main (or TestMain)
// with the same registry, since the workers are the program's own binary.
func MaybeServeWorkerWith(reg *Registry) {
	cli.MaybeServeWorker(reg.Registry, &reg.backends)
}

// RunWith runs tilefit with args (without the program name) on the
// families, baselines and backends of reg, writing to stdout and stderr,
// and returns the exit code. It leaves the process's signals alone: ctx's
// cancellation stops a command at once.
func RunWith(ctx context.Context, reg *Registry, args []string, stdout, stderr io.Writer) int {
	return cli.RunWith(ctx, reg.Registry, &reg.backends, args, stdout, stderr)
}

// Main is the tilefit command on reg: it serves as a worker process when
// started as one (MaybeServeWorkerWith), else handles Ctrl-C and SIGTERM
// (the first lets a sweep finish and save the cell in flight, the second
// stops at once, a third exits with ExitInterrupted) and runs RunWith.
// It returns the exit code for os.Exit.
func Main(ctx context.Context, reg *Registry, args []string, stdout, stderr io.Writer) int {
	MaybeServeWorkerWith(reg)
	ctx, release := interrupt.SignalContext(ctx, stderr)
	defer release()
	return RunWith(ctx, reg, args, stdout, stderr)
}
