package cuda

import (
	"context"
	"fmt"
	"runtime"
	"sync"
)

// A worker is one goroutine locked to its OS thread that owns the device's
// context: every driver and cuBLAS call runs on it, in the order submitted.
type worker struct {
	jobs chan func()
	once sync.Once
	quit chan struct{}
}

func newWorker() *worker {
	w := &worker{jobs: make(chan func()), quit: make(chan struct{})}
	go func() {
		runtime.LockOSThread()
		// The thread stays locked: it carries the current CUDA context, and
		// exiting with it locked lets the runtime drop the thread.
		for {
			select {
			case f := <-w.jobs:
				f()
			case <-w.quit:
				return
			}
		}
	}()
	return w
}

// do runs f on the worker thread and returns its error; a panic in f comes
// back as an error. ctx bounds the wait for the thread, not f itself.
func (w *worker) do(ctx context.Context, f func() error) error {
	errc := make(chan error, 1)
	job := func() {
		defer func() {
			if r := recover(); r != nil {
				errc <- fmt.Errorf("cuda: panic on the device thread: %v", r)
			}
		}()
		errc <- f()
	}
	select {
	case w.jobs <- job:
	case <-ctx.Done():
		return ctx.Err()
	case <-w.quit:
		return errClosed
	}
	return <-errc
}

// stop ends the worker after the job in progress.
func (w *worker) stop() { w.once.Do(func() { close(w.quit) }) }

var errClosed = fmt.Errorf("cuda: backend closed")
