package cli

import (
	"context"
	"fmt"

	"github.com/tilefit/tilefit/backend"
	"github.com/tilefit/tilefit/backend/cpu"
	"github.com/tilefit/tilefit/backend/cuda"
	"github.com/tilefit/tilefit/kernel"
	"github.com/tilefit/tilefit/tune"
)

// backendNames are the backends tilefit knows.
var backendNames = []string{"cpu", "cuda"}

// opener returns the constructor of backend name on its device 0, or nil.
func opener(name string) tune.NewBackend { return openerOn(name, 0) }

// openerOn returns the constructor of backend name on device ordinal
// device (the CUDA device; the CPU backend has only 0), or nil.
func openerOn(name string, device int) tune.NewBackend {
	switch name {
	case "cpu":
		return func(ctx context.Context) (backend.Backend, error) { return cpu.New(cpu.Options{Device: device}) }
	case "cuda":
		return func(ctx context.Context) (backend.Backend, error) { return cuda.New(cuda.Options{Device: device}) }
	}
	return nil
}

// openBackend opens backend name in this process.
func openBackend(ctx context.Context, name string) (backend.Backend, error) {
	o := opener(name)
	if o == nil {
		return nil, fmt.Errorf("unknown backend %q (known: cpu, cuda)", name)
	}
	return o(ctx)
}

// MaybeServeWorker turns this process into a worker when tune.WorkerEnv is
// set (the parent starts its own binary that way); it returns otherwise.
// The worker knows the built-in families; see MaybeServeWorkerWith.
func MaybeServeWorker() { tune.MaybeServeWorkerOn(openerOn, nil) }

// MaybeServeWorkerWith is MaybeServeWorker for a program that registers
// its own families: pass the registry it gives RunWith.
func MaybeServeWorkerWith(reg *kernel.Registry) { tune.MaybeServeWorkerOn(openerOn, reg) }

type registryKey struct{}

// withRegistry returns ctx carrying reg, the families and baselines the
// verbs use.
func withRegistry(ctx context.Context, reg *kernel.Registry) context.Context {
	return context.WithValue(ctx, registryKey{}, reg)
}

// registryFrom returns the registry ctx carries, or kernel.Builtin().
func registryFrom(ctx context.Context) *kernel.Registry {
	if r, ok := ctx.Value(registryKey{}).(*kernel.Registry); ok && r != nil {
		return r
	}
	return kernel.Builtin()
}
