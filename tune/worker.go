package tune

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tilefit/tilefit/backend"
	"github.com/tilefit/tilefit/kernel"
	"github.com/tilefit/tilefit/result"
)

// WorkerEnv is the environment variable that turns a tilefit (or test)
// binary into a worker: its value is the backend name.
const WorkerEnv = "TILEFIT_WORKER"

// WorkerDeviceEnv carries the device ordinal a worker opens
// (WorkerOptions.Device); absent means 0.
const WorkerDeviceEnv = "TILEFIT_WORKER_DEVICE"

// MaybeServeWorker serves the worker protocol on stdin/stdout and exits when
// WorkerEnv is set; it returns at once otherwise. Call it first in main (and
// in TestMain of tests that start workers). open maps a backend name to a
// constructor.
// reg resolves operators (nil: kernel.Builtin()); a program that registers
// its own families passes the same registry it sweeps with.
func MaybeServeWorker(open func(name string) NewBackend, reg *kernel.Registry) {
	MaybeServeWorkerOn(func(name string, device int) NewBackend {
		nb := open(name)
		if nb == nil || device == 0 {
			return nb
		}
		return func(context.Context) (backend.Backend, error) {
			return nil, fmt.Errorf("%s: no device %d (this program opens device 0 only)", name, device)
		}
	}, reg)
}

// MaybeServeWorkerOn is MaybeServeWorker for backends with several
// devices: open receives the backend name and the device ordinal the
// parent asked for (WorkerOptions.Device).
func MaybeServeWorkerOn(open func(name string, device int) NewBackend, reg *kernel.Registry) {
	name := os.Getenv(WorkerEnv)
	if name == "" {
		return
	}
	device := 0
	if v := os.Getenv(WorkerDeviceEnv); v != "" {
		d, err := strconv.Atoi(v)
		if err != nil || d < 0 {
			fmt.Fprintf(os.Stderr, "tilefit worker: bad %s=%q\n", WorkerDeviceEnv, v)
			os.Exit(2)
		}
		device = d
	}
	nb := open(name, device)
	if nb == nil {
		fmt.Fprintf(os.Stderr, "tilefit worker: unknown backend %q\n", name)
		os.Exit(2)
	}
	if err := Serve(context.Background(), os.Stdin, os.Stdout, nb, reg); err != nil {
		fmt.Fprintln(os.Stderr, "tilefit worker:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// Serve is the worker's loop: it answers requests from r on w until r ends.
// After a candidate failure it reports the failure and returns, so that the
// parent starts a fresh worker with a clean device.
func Serve(ctx context.Context, r io.Reader, w io.Writer, open NewBackend, reg *kernel.Registry) error {
	bw := bufio.NewWriter(w)
	send := func(kind byte, v any) error {
		if err := WriteFrame(bw, kind, v); err != nil {
			return err
		}
		return bw.Flush()
	}
	loc := NewLocal(open, reg)
	defer loc.Close()
	if err := send(kindHello, os.Getpid()); err != nil {
		return err
	}
	br := bufio.NewReader(r)
	for {
		f, err := ReadFrame(br)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		switch f.Kind {
		case kindDevice:
			d, err := loc.Device(ctx)
			if err != nil {
				send(kindError, err.Error())
				continue
			}
			send(kindDevRep, d)
		case kindCompile:
			var progs []backend.Program
			if err := f.Decode(kindCompile, &progs); err != nil {
				return err
			}
			out, err := loc.Compile(ctx, progs)
			if err != nil {
				send(kindError, err.Error())
				continue
			}
			send(kindCompRep, out)
		case kindRun:
			var job CellJob
			if err := f.Decode(kindRun, &job); err != nil {
				return err
			}
			b, err := loc.backend(ctx)
			if err == nil {
				var dev backend.Device
				if dev, err = loc.Device(ctx); err == nil {
					var res result.CellResult
					var op *kernel.Operator
					if op, err = resolveOperator(loc.reg, job); err == nil {
						res, err = runCell(ctx, b, dev, op, job, func(e Event) { send(kindEvent, e) })
					}
					if err == nil {
						send(kindResult, packRows(res))
						continue
					}
				}
			}
			var cf *CandidateFailure
			if errors.As(err, &cf) {
				send(kindFailure, failureMsg{Cand: cf.Cand, Status: string(cf.Status), Detail: cf.Detail})
				return nil
			}
			send(kindError, err.Error())
		default:
			return fmt.Errorf("unknown request %q: %w", f.Kind, ErrFrame)
		}
	}
}

// WorkerOptions configure a Worker.
type WorkerOptions struct {
	// Backend is the backend name passed to the worker.
	Backend string
	// Device is the device ordinal the worker opens (its own context on
	// its own device; WorkerDeviceEnv).
	Device int
	// Exe is the binary to start (default os.Executable()).
	Exe string
	// Floor is the least time the watchdog allows one step (default 5 s).
	Floor time.Duration
	// Scale multiplies a step's expected time for the watchdog (default 20).
	Scale float64
	// Env adds environment variables for the worker.
	Env []string
}

// Worker runs cells in a child process speaking the worker protocol. A
// child that dies or exceeds the watchdog is killed and restarted; the
// candidate that was running is recorded as crashed or timed out.
type Worker struct {
	o      WorkerOptions
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	frames chan frameOrErr
	stderr *tailBuffer
	done   chan struct{}
}

type frameOrErr struct {
	f   Frame
	err error
}

var _ Executor = (*Worker)(nil)

// NewWorker returns a Worker; the child starts on first use.
func NewWorker(o WorkerOptions) *Worker {
	if o.Floor <= 0 {
		o.Floor = 5 * time.Second
	}
	if o.Scale <= 0 {
		o.Scale = 20
	}
	return &Worker{o: o}
}

func (w *Worker) start() error {
	if w.cmd != nil {
		return nil
	}
	exe := w.o.Exe
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return fmt.Errorf("start worker: %w", err)
		}
	}
	cmd := exec.Command(exe)
	cmd.Env = append(append(os.Environ(), WorkerEnv+"="+w.o.Backend, WorkerDeviceEnv+"="+strconv.Itoa(w.o.Device)), w.o.Env...)
	cmd.SysProcAttr = workerAttr()
	w.stderr = &tailBuffer{max: 4 << 10}
	cmd.Stderr = w.stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return fmt.Errorf("start worker: %w", err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("start worker: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start worker %s: %w", exe, err)
	}
	w.cmd, w.stdin = cmd, in
	w.frames = make(chan frameOrErr, 64)
	w.done = make(chan struct{})
	go func(frames chan frameOrErr, done chan struct{}) {
		br := bufio.NewReader(out)
		for {
			f, err := ReadFrame(br)
			select {
			case frames <- frameOrErr{f, err}:
			case <-done:
				return
			}
			if err != nil {
				return
			}
		}
	}(w.frames, w.done)
	f, err := w.next(context.Background(), helloTimeout)
	if err != nil {
		w.kill() // a worker that never said hello must not linger or be reused
		return fmt.Errorf("worker did not start: %w", err)
	}
	if f.Kind != kindHello {
		w.kill()
		return fmt.Errorf("worker said %q before hello: %w", f.Kind, ErrFrame)
	}
	return nil
}

// next waits up to d for the next frame; a timeout returns errWatchdog.
func (w *Worker) next(ctx context.Context, d time.Duration) (Frame, error) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case fe := <-w.frames:
		if fe.err != nil {
			return Frame{}, w.died(fe.err)
		}
		return fe.f, nil
	case <-t.C:
		return Frame{}, errWatchdog
	case <-ctx.Done():
		w.kill()
		return Frame{}, ctx.Err()
	}
}

var errWatchdog = errors.New("watchdog expired")

// helloTimeout is how long a new worker may take to say hello.
var helloTimeout = 60 * time.Second

// died reaps a worker whose output ended and describes how it ended.
func (w *Worker) died(readErr error) error {
	cmd := w.cmd
	w.kill()
	desc := "exited"
	if cmd != nil && cmd.ProcessState != nil {
		ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
		switch {
		case ws.Signaled():
			desc = fmt.Sprintf("killed by signal %d (%s)", int(ws.Signal()), ws.Signal())
		default:
			desc = fmt.Sprintf("exited with status %d", cmd.ProcessState.ExitCode())
		}
	}
	if cause := crashCause(w.stderr.String()); cause != "" {
		desc += ": " + cause
	}
	if errors.Is(readErr, io.EOF) {
		return &workerDied{desc}
	}
	return &workerDied{desc + " (" + readErr.Error() + ")"}
}

type workerDied struct{ desc string }

func (e *workerDied) Error() string { return "worker " + e.desc }

// kill ends the worker's process group and reaps it.
func (w *Worker) kill() {
	if w.cmd == nil {
		return
	}
	if w.cmd.Process != nil {
		syscall.Kill(-w.cmd.Process.Pid, syscall.SIGKILL)
	}
	w.stdin.Close()
	close(w.done)
	w.cmd.Wait()
	w.cmd = nil
}

func (w *Worker) request(ctx context.Context, kind byte, v any, reply byte, out any, wait time.Duration) error {
	if err := w.start(); err != nil {
		return err
	}
	if err := WriteFrame(w.stdin, kind, v); err != nil {
		return w.died(err)
	}
	f, err := w.next(ctx, wait)
	if errors.Is(err, errWatchdog) {
		w.kill()
		return fmt.Errorf("worker gave no answer to %q within %s", kind, wait)
	}
	if err != nil {
		return err
	}
	if f.Kind == kindError {
		var msg string
		f.Decode(kindError, &msg)
		return errors.New(msg)
	}
	return f.Decode(reply, out)
}

// Device asks the worker for its device.
func (w *Worker) Device(ctx context.Context) (backend.Device, error) {
	var d backend.Device
	err := w.request(ctx, kindDevice, nil, kindDevRep, &d, 2*time.Minute)
	return d, err
}

// Compile compiles progs in the worker (in parallel there).
func (w *Worker) Compile(ctx context.Context, progs []backend.Program) ([]CompileResult, error) {
	var out []CompileResult
	err := w.request(ctx, kindCompile, progs, kindCompRep, &out, 30*time.Minute)
	return out, err
}

// RunCell runs job in the worker, restarting it after a crash or a hang and
// running the cell again without the candidate that failed.
func (w *Worker) RunCell(ctx context.Context, job CellJob) (result.CellResult, error) {
	return runWithRetries(ctx, job, w.attempt, func() error { w.kill(); return nil })
}

func (w *Worker) attempt(ctx context.Context, job CellJob) (result.CellResult, error) {
	if err := w.start(); err != nil {
		return result.CellResult{}, err
	}
	if err := WriteFrame(w.stdin, kindRun, job); err != nil {
		return result.CellResult{}, w.died(err)
	}
	cur, phase := -1, ""
	// Before any estimate a step may run at 1 GFLOP/s (the reference's first
	// runs, loads); later steps get Scale × their expected time.
	unknown := w.o.Floor + time.Duration(job.Cell.FLOPs()/1e9*float64(time.Second))
	wait := unknown
	for {
		f, err := w.next(ctx, wait)
		var wd *workerDied
		switch {
		case errors.Is(err, errWatchdog):
			w.kill()
			if cur < 0 {
				return result.CellResult{}, fmt.Errorf("worker made no progress within %s", wait)
			}
			return result.CellResult{}, &CandidateFailure{Cand: cur, Status: result.Timeout,
				Detail: fmt.Sprintf("no progress for %s in phase %q (watchdog)", wait.Round(time.Millisecond), phase)}
		case errors.As(err, &wd) && cur >= 0:
			return result.CellResult{}, &CandidateFailure{Cand: cur, Status: result.Crashed, Detail: wd.Error()}
		case err != nil:
			return result.CellResult{}, err
		}
		switch f.Kind {
		case kindEvent:
			var e Event
			if err := f.Decode(kindEvent, &e); err != nil {
				return result.CellResult{}, err
			}
			cur = e.Cand
			phase = e.Phase
			wait = unknown
			if e.Expect > 0 {
				wait = max(w.o.Floor, time.Duration(float64(e.Expect)*w.o.Scale))
			}
		case kindResult:
			var p packedResult
			if err := f.Decode(kindResult, &p); err != nil {
				return p.CellResult, err
			}
			return p.unpack()
		case kindFailure:
			var m failureMsg
			if err := f.Decode(kindFailure, &m); err != nil {
				return result.CellResult{}, err
			}
			w.kill()
			return result.CellResult{}, &CandidateFailure{Cand: m.Cand, Status: result.Status(m.Status), Detail: m.Detail}
		case kindError:
			var msg string
			f.Decode(kindError, &msg)
			return result.CellResult{}, errors.New(msg)
		default:
			return result.CellResult{}, fmt.Errorf("unexpected worker frame %q: %w", f.Kind, ErrFrame)
		}
	}
}

// Close stops the worker.
func (w *Worker) Close() error {
	if w.cmd == nil {
		return nil
	}
	w.stdin.Close() // a worker ends when its input ends
	exited := make(chan struct{})
	go func(cmd *exec.Cmd) { cmd.Wait(); close(exited) }(w.cmd)
	select {
	case <-exited:
	case <-time.After(5 * time.Second):
		syscall.Kill(-w.cmd.Process.Pid, syscall.SIGKILL)
		<-exited
	}
	close(w.done)
	w.cmd = nil
	return nil
}

// tailBuffer keeps the first and the last max bytes written to it: the
// cause of a crash is printed first, the goroutine dump after it can be long.
type tailBuffer struct {
	mu   sync.Mutex
	head []byte
	tail []byte
	max  int
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(p)
	if room := t.max - len(t.head); room > 0 {
		k := min(room, len(p))
		t.head = append(t.head, p[:k]...)
		p = p[k:]
	}
	t.tail = append(t.tail, p...)
	if len(t.tail) > t.max {
		t.tail = append([]byte(nil), t.tail[len(t.tail)-t.max:]...)
	}
	return n, nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.head) + string(t.tail)
}

// crashCause picks what explains a worker's death from its stderr: the Go
// runtime's signal or fatal-error line when there is one (a fault in a
// dlopened kernel is reported as "SIGSEGV: segmentation violation" with an
// exit status of 2), else the last lines.
func crashCause(stderr string) string {
	var picked []string
	for _, l := range strings.Split(stderr, "\n") {
		l = strings.TrimSpace(l)
		for _, p := range []string{"SIG", "fatal error", "panic:", "unexpected signal", "signal arrived", "CUDA", "error"} {
			if strings.HasPrefix(l, p) {
				picked = append(picked, l)
				break
			}
		}
		if len(picked) == 3 {
			break
		}
	}
	if len(picked) > 0 {
		return strings.Join(picked, " | ")
	}
	return lastLines(strings.TrimSpace(stderr), 4)
}

func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
