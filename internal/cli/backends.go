package cli

import (
	"context"

	"github.com/tilefit/tilefit/backend"
	"github.com/tilefit/tilefit/builtin"
	"github.com/tilefit/tilefit/kernel"
	"github.com/tilefit/tilefit/tune"
)

// env is what the binary registered: the families and baselines, and the
// backends. RunWith puts it in the verbs' context; nothing is global.
type env struct {
	reg      *kernel.Registry
	backends *backend.Registry
}

type envKey struct{}

// withEnv returns ctx carrying the registries the verbs use.
func withEnv(ctx context.Context, reg *kernel.Registry, bes *backend.Registry) context.Context {
	return context.WithValue(ctx, envKey{}, env{reg: reg, backends: bes})
}

// registryFrom returns the families and baselines ctx carries, or
// builtin.New().
func registryFrom(ctx context.Context) *kernel.Registry {
	if e, ok := ctx.Value(envKey{}).(env); ok && e.reg != nil {
		return e.reg
	}
	return builtin.New()
}

// backendsFrom returns the backends ctx carries (an empty registry when
// none: the CLI itself knows no backend).
func backendsFrom(ctx context.Context) *backend.Registry {
	if e, ok := ctx.Value(envKey{}).(env); ok && e.backends != nil {
		return e.backends
	}
	return &backend.Registry{}
}

// newBackendOn returns the constructor of backend name on device ordinal
// device, nil when the binary has no such backend.
func newBackendOn(bes *backend.Registry, name string, device int) tune.NewBackend {
	open := bes.Opener(name)
	if open == nil {
		return nil
	}
	return func(ctx context.Context) (backend.Backend, error) { return open(ctx, device) }
}

// MaybeServeWorker turns this process into a worker when tune.WorkerEnv is
// set (the parent starts its own binary that way) and exits; it returns
// otherwise. reg and bes must be what the binary passes to RunWith.
func MaybeServeWorker(reg *kernel.Registry, bes *backend.Registry) {
	tune.MaybeServeWorkerOn(func(name string, device int) tune.NewBackend { return newBackendOn(bes, name, device) }, reg)
}
