package tune

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// A Trace writes where a sweep's time goes outside its cells (sweep
// --trace): one line per step, "trace: NAME 1.234s", and lines of its own
// for what a worker process reports of its start. A nil *Trace writes
// nothing, so callers need not check.
type Trace struct {
	mu sync.Mutex
	w  io.Writer
}

// NewTrace returns a Trace writing to w (nil w: a nil Trace).
func NewTrace(w io.Writer) *Trace {
	if w == nil {
		return nil
	}
	return &Trace{w: w}
}

// Step writes that step name took d.
func (t *Trace) Step(name string, d time.Duration) {
	t.Printf("%s %.3fs", name, d.Seconds())
}

// Since is Step with the time since start, and returns now (the start of
// the next step).
func (t *Trace) Since(name string, start time.Time) time.Time {
	now := time.Now()
	t.Step(name, now.Sub(start))
	return now
}

// Printf writes one trace line.
func (t *Trace) Printf(format string, args ...any) {
	if t == nil {
		return
	}
	line := strings.TrimRight(fmt.Sprintf(format, args...), "\n")
	t.mu.Lock()
	defer t.mu.Unlock()
	fmt.Fprintf(t.w, "trace: %s\n", line)
}

// Writer is where lines already prefixed go (a worker's own trace lines):
// nil for a nil Trace.
func (t *Trace) Writer() io.Writer {
	if t == nil {
		return nil
	}
	return lockedWriter{t}
}

type lockedWriter struct{ t *Trace }

func (l lockedWriter) Write(p []byte) (int, error) {
	l.t.mu.Lock()
	defer l.t.mu.Unlock()
	return l.t.w.Write(p)
}
