// Package interrupt is how a tilefit command stops: the first Ctrl-C (or
// SIGTERM) asks for a graceful stop (a sweep finishes and saves the cell in
// flight), the second cancels at once, the third exits the process.
package interrupt

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// ExitCode is the exit status of an interrupted command (and of a
// process the third interrupt ends).
const ExitCode = 130

// stopKey carries the graceful-stop channel in a context.
type stopKey struct{}

// WithStop returns ctx carrying stop: when stop is closed, a sweep finishes
// the cell in flight, saves it and stops (ctx's cancellation stops at once).
func WithStop(ctx context.Context, stop <-chan struct{}) context.Context {
	return context.WithValue(ctx, stopKey{}, stop)
}

// Stop returns the graceful-stop channel of ctx (nil: none).
func Stop(ctx context.Context) <-chan struct{} {
	ch, _ := ctx.Value(stopKey{}).(<-chan struct{})
	return ch
}

// SignalContext handles Ctrl-C (SIGINT) and SIGTERM for a command: the
// first asks a sweep to stop after the cell in flight (and says so on
// stderr), the second cancels the returned context at once, and a third
// exits the process with code 130 whatever it is doing (a last resort for a
// step that does not watch its context). release restores the default
// handling. The returned context is derived from parent.
func SignalContext(parent context.Context, stderr io.Writer) (ctx context.Context, release func()) {
	sig := make(chan os.Signal, 3)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	ctx, done := handleFrom(parent, sig, stderr, os.Exit)
	return ctx, func() {
		signal.Stop(sig)
		done()
	}
}

// handle is SignalContext over a channel of signals, with exit for the
// third.
func handle(sig <-chan os.Signal, stderr io.Writer, exit func(int)) (context.Context, func()) {
	return handleFrom(context.Background(), sig, stderr, exit)
}

// handleFrom is handle with a parent context.
func handleFrom(parent context.Context, sig <-chan os.Signal, stderr io.Writer, exit func(int)) (context.Context, func()) {
	ctx, cancel := context.WithCancel(parent)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		select {
		case <-sig:
		case <-done:
			return
		}
		close(stop)
		fmt.Fprintln(stderr, "\ninterrupt: stopping; a sweep first finishes and saves the cell in flight (interrupt again to stop now)")
		select {
		case <-sig:
			cancel()
		case <-done:
			return
		}
		select {
		case <-sig:
			fmt.Fprintln(stderr, "\ninterrupt: exiting now")
			exit(ExitCode)
		case <-done:
		}
	}()
	return WithStop(ctx, stop), func() {
		close(done)
		cancel()
	}
}

// Now returns a context that is also cancelled when ctx's graceful stop
// is asked for: verbs with no cell boundary to stop at stop at once.
func Now(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	if stop := Stop(ctx); stop != nil {
		go func() {
			select {
			case <-stop:
				cancel()
			case <-ctx.Done():
			}
		}()
	}
	return ctx, cancel
}
