package cli

import (
	"context"
	"fmt"

	"github.com/tilefit/tilefit/backend"
	"github.com/tilefit/tilefit/backend/cpu"
	"github.com/tilefit/tilefit/backend/cuda"
	"github.com/tilefit/tilefit/tune"
)

// backendNames are the backends tilefit knows.
var backendNames = []string{"cpu", "cuda"}

// opener returns the constructor of backend name, or nil.
func opener(name string) tune.NewBackend {
	switch name {
	case "cpu":
		return func(ctx context.Context) (backend.Backend, error) { return cpu.New(cpu.Options{}) }
	case "cuda":
		return func(ctx context.Context) (backend.Backend, error) { return cuda.New(cuda.Options{}) }
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
func MaybeServeWorker() { tune.MaybeServeWorker(opener) }
