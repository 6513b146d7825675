package interrupt

import (
	"bytes"
	"context"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// These tests moved from internal/cli with the code.

// TestStopNowCancelsOtherVerbs: a verb without cell boundaries (here a
// stand-in run through Now) is cancelled by the first interrupt.
func TestStopNowCancelsOtherVerbs(t *testing.T) {
	stop := make(chan struct{})
	ctx, cancel := Now(WithStop(context.Background(), stop))
	defer cancel()
	close(stop)
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the first interrupt did not cancel a non-graceful verb")
	}
	// Without a stop channel nothing is cancelled.
	ctx2, cancel2 := Now(context.Background())
	defer cancel2()
	if ctx2.Err() != nil {
		t.Fatal("cancelled without an interrupt")
	}
}

// TestThirdInterruptExits: the third Ctrl-C or SIGTERM ends the process
// with 130 whatever it is doing (a last resort against a step that does not
// watch its context); the first two stop gracefully, then at once.
func TestThirdInterruptExits(t *testing.T) {
	sig := make(chan os.Signal, 3)
	exited := make(chan int, 1)
	var stderr syncBuffer
	ctx, release := handle(sig, &stderr, func(code int) { exited <- code })
	defer release()
	stop := Stop(ctx)
	sig <- os.Interrupt
	<-stop
	if ctx.Err() != nil {
		t.Fatal("the first interrupt cancelled the context")
	}
	sig <- syscall.SIGTERM
	<-ctx.Done()
	select {
	case code := <-exited:
		t.Fatalf("exited (%d) after two interrupts", code)
	default:
	}
	sig <- os.Interrupt
	select {
	case code := <-exited:
		if code != ExitCode {
			t.Errorf("third interrupt: exit %d, want %d", code, ExitCode)
		}
	case <-time.After(time.Minute):
		t.Fatal("the third interrupt did not exit")
	}
	if !strings.Contains(stderr.String(), "exiting now") {
		t.Errorf("stderr: %q", stderr.String())
	}
}

// syncBuffer is a bytes.Buffer safe for concurrent use.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
