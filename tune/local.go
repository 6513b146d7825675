package tune

import (
	"context"
	"runtime"
	"sync"

	"github.com/tilefit/tilefit/backend"
	"github.com/tilefit/tilefit/builtin"
	"github.com/tilefit/tilefit/kernel"
	"github.com/tilefit/tilefit/result"
)

// NewBackend opens a backend by name; the CLI supplies it (cpu, cuda).
type NewBackend func(ctx context.Context) (backend.Backend, error)

// Local runs everything in this process: no isolation, a crash in a kernel
// takes the process with it. Used with --isolate=false and inside a worker.
type Local struct {
	open NewBackend
	reg  *kernel.Registry
	b    backend.Backend
	dev  *backend.Device
	// Jobs is the number of parallel compiles (default runtime.NumCPU()).
	Jobs int
}

var _ Executor = (*Local)(nil)

// NewLocal returns a Local executor that opens its backend on first use and
// resolves operators in reg (nil: builtin.New()).
func NewLocal(open NewBackend, reg *kernel.Registry) *Local {
	if reg == nil {
		reg = builtin.New()
	}
	return &Local{open: open, reg: reg}
}

func (l *Local) backend(ctx context.Context) (backend.Backend, error) {
	if l.b == nil {
		b, err := l.open(ctx)
		if err != nil {
			return nil, err
		}
		l.b = b
	}
	return l.b, nil
}

// Device describes the backend's device.
func (l *Local) Device(ctx context.Context) (backend.Device, error) {
	if l.dev != nil {
		return *l.dev, nil
	}
	b, err := l.backend(ctx)
	if err != nil {
		return backend.Device{}, err
	}
	d, err := b.Device(ctx)
	if err != nil {
		return d, err
	}
	l.dev = &d
	return d, nil
}

// Compile compiles progs in parallel (Jobs at a time); a failed compile is a
// CompileResult with Err set, never an error of the call.
func (l *Local) Compile(ctx context.Context, progs []backend.Program) ([]CompileResult, error) {
	b, err := l.backend(ctx)
	if err != nil {
		return nil, err
	}
	jobs := l.Jobs
	if jobs <= 0 {
		jobs = runtime.NumCPU()
	}
	out := make([]CompileResult, len(progs))
	sem := make(chan struct{}, jobs)
	var wg sync.WaitGroup
	for i, p := range progs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			a, err := b.Compile(ctx, p)
			out[i].Artifact = a
			if err != nil {
				out[i].Err = err.Error()
				if ce, ok := err.(*backend.CompileError); ok {
					out[i].Log = ce.Log
				}
			}
		}()
	}
	wg.Wait()
	return out, ctx.Err()
}

// RunCell runs job in this process. After a CandidateFailure the backend is
// closed and reopened (a device error may poison its context) and the cell
// runs again without the candidate.
func (l *Local) RunCell(ctx context.Context, job CellJob) (result.CellResult, error) {
	return runWithRetries(ctx, job, l.attempt, l.reopen)
}

func (l *Local) attempt(ctx context.Context, job CellJob) (result.CellResult, error) {
	b, err := l.backend(ctx)
	if err != nil {
		return result.CellResult{}, err
	}
	dev, err := l.Device(ctx)
	if err != nil {
		return result.CellResult{}, err
	}
	op, err := resolveOperator(l.reg, job)
	if err != nil {
		return result.CellResult{}, err
	}
	return runCell(ctx, b, dev, op, job, func(Event) {})
}

func (l *Local) reopen() error {
	if l.b != nil {
		l.b.Close()
		l.b = nil
	}
	return nil
}

// Close closes the backend.
func (l *Local) Close() error {
	if l.b == nil {
		return nil
	}
	err := l.b.Close()
	l.b = nil
	return err
}
