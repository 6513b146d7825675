package tune

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
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

// WorkerNiceEnv, when set in a worker's environment (WorkerOptions.Nice),
// is the nice value the worker runs at; WorkerJobsEnv is how many
// programs it compiles at once (WorkerOptions.CompileJobs).
const (
	WorkerNiceEnv = "TILEFIT_WORKER_NICE"
	WorkerJobsEnv = "TILEFIT_WORKER_COMPILE_JOBS"
)

// WorkerTraceEnv, set to 1 in a worker's environment (WorkerOptions.Trace),
// makes it write "trace: " lines on its stderr: how long its backend took
// to open, and the backend's own steps (StartupSteps) where it has them.
const WorkerTraceEnv = "TILEFIT_WORKER_TRACE"

// StartupSteps is implemented by backends that time their own opening
// (the CUDA backend: the driver, the context, each library): one line,
// for a worker's trace.
type StartupSteps interface {
	StartupSteps() string
}

// WorkerDeviceEnv carries the device ordinal a worker opens
// (WorkerOptions.Device); absent means 0.
const WorkerDeviceEnv = "TILEFIT_WORKER_DEVICE"

// MaybeServeWorker serves the worker protocol on stdin/stdout and exits when
// WorkerEnv is set; it returns at once otherwise. Call it first in main (and
// in TestMain of tests that start workers). open maps a backend name to a
// constructor.
// reg resolves operators (nil: builtin.New()); a program that registers
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
	nice, jobs, err := workerLimits(os.Getenv(WorkerNiceEnv), os.Getenv(WorkerJobsEnv))
	if err != nil {
		fmt.Fprintln(os.Stderr, "tilefit worker:", err)
		os.Exit(2)
	}
	if nice > 0 {
		if err := niceSelf(nice); err != nil {
			fmt.Fprintf(os.Stderr, "tilefit worker: nice %d: %v\n", nice, err)
			os.Exit(1)
		}
	}
	nb := open(name, device)
	if nb == nil {
		fmt.Fprintf(os.Stderr, "tilefit worker: unknown backend %q\n", name)
		os.Exit(2)
	}
	var trace io.Writer
	if os.Getenv(WorkerTraceEnv) == "1" {
		trace = os.Stderr
	}
	if err := serve(context.Background(), os.Stdin, os.Stdout, nb, reg, jobs, trace); err != nil {
		fmt.Fprintln(os.Stderr, "tilefit worker:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// Serve is the worker's loop: it answers requests from r on w until r ends.
// After a candidate failure it reports the failure and returns, so that the
// parent starts a fresh worker with a clean device.
//
// A reply that cannot be sent ends the loop with the error (the parent sees
// the worker end and says so; it never waits for an answer that will not
// come). A reply too large for one frame is sent as an error message
// instead; compile logs are capped to fit (fitCompileReply).
func Serve(ctx context.Context, r io.Reader, w io.Writer, open NewBackend, reg *kernel.Registry) error {
	return serve(ctx, r, w, open, reg, 0, nil)
}

// workerLimits parses the worker's nice value and compile jobs from their
// environment variables (empty: 0, the defaults).
func workerLimits(nice, jobs string) (int, int, error) {
	var n, j int
	var err error
	if nice != "" {
		if n, err = strconv.Atoi(nice); err != nil || n < 0 || n > 19 {
			return 0, 0, fmt.Errorf("bad %s=%q (a nice value 0…19)", WorkerNiceEnv, nice)
		}
	}
	if jobs != "" {
		if j, err = strconv.Atoi(jobs); err != nil || j < 0 {
			return 0, 0, fmt.Errorf("bad %s=%q (a number of compile jobs ≥ 0)", WorkerJobsEnv, jobs)
		}
	}
	return n, j, nil
}

// serve is Serve compiling jobs programs at once (0: Local's default).
func serve(ctx context.Context, r io.Reader, w io.Writer, open NewBackend, reg *kernel.Registry, jobs int, trace io.Writer) error {
	bw := bufio.NewWriter(w)
	send := func(kind byte, v any) error {
		err := WriteFrame(bw, kind, v)
		if errors.Is(err, ErrFrame) && kind != kindError {
			// Too large: nothing was written; say why instead.
			err = WriteFrame(bw, kindError, fmt.Sprintf("the worker's reply %q does not fit in one protocol frame: %v", kind, err))
		}
		if err != nil {
			return fmt.Errorf("send %q: %w", kind, err)
		}
		if err := bw.Flush(); err != nil {
			return fmt.Errorf("send %q: %w", kind, err)
		}
		return nil
	}
	loc := NewLocal(open, reg)
	loc.Jobs = jobs
	defer loc.Close()
	if err := send(kindHello, os.Getpid()); err != nil {
		return err
	}
	br := bufio.NewReader(r)
	tracedCell, tracedDevice := false, false
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
			t0 := time.Now()
			d, err := loc.Device(ctx)
			if trace != nil && !tracedDevice {
				tracedDevice = true
				traceDevice(trace, loc, time.Since(t0), err)
			}
			if err != nil {
				err = send(kindError, err.Error())
			} else {
				err = send(kindDevRep, d)
			}
			if err != nil {
				return err
			}
		case kindCompile:
			var progs []backend.Program
			if err := f.Decode(kindCompile, &progs); err != nil {
				return err
			}
			out, err := loc.Compile(ctx, progs)
			if err != nil {
				err = send(kindError, err.Error())
			} else {
				err = send(kindCompRep, fitCompileReply(out, MaxFrame-1))
			}
			if err != nil {
				return err
			}
		case kindRun:
			var job CellJob
			if err := f.Decode(kindRun, &job); err != nil {
				return err
			}
			var sendErr error
			emit := func(e Event) {
				if sendErr == nil {
					sendErr = send(kindEvent, e)
				}
			}
			b, err := loc.backend(ctx)
			if err == nil {
				var dev backend.Device
				if dev, err = loc.Device(ctx); err == nil {
					var res result.CellResult
					var op *kernel.Operator
					if op, err = resolveOperator(loc.reg, job); err == nil {
						res, err = runCell(ctx, b, dev, op, job, emit)
					}
					if sendErr != nil {
						return sendErr
					}
					if err == nil {
						if err := send(kindResult, packRows(res)); err != nil {
							return err
						}
						if trace != nil && !tracedCell {
							// What the first cell opened (vendor handles,
							// the verification kernels) joins the steps.
							tracedCell = true
							if s, ok := b.(StartupSteps); ok {
								fmt.Fprintf(trace, "trace: worker %d: after its first cell: %s\n", os.Getpid(), s.StartupSteps())
							}
						}
						continue
					}
				}
			}
			if sendErr != nil {
				return sendErr
			}
			var cf *CandidateFailure
			if errors.As(err, &cf) {
				return send(kindFailure, failureMsg{Cand: cf.Cand, Status: string(cf.Status), Detail: backend.CapLog(cf.Detail, maxDetail)})
			}
			if err := send(kindError, backend.CapLog(err.Error(), maxDetail)); err != nil {
				return err
			}
		default:
			return fmt.Errorf("unknown request %q: %w", f.Kind, ErrFrame)
		}
	}
}

// traceDevice writes a worker's trace line for its first device request
// (which opens the backend): how long it took, and the backend's steps.
func traceDevice(w io.Writer, loc *Local, d time.Duration, err error) {
	line := fmt.Sprintf("trace: worker %d: backend open and device %.3fs", os.Getpid(), d.Seconds())
	if s, ok := loc.b.(StartupSteps); ok {
		line += ": " + s.StartupSteps()
	}
	if err != nil {
		line += " (failed: " + err.Error() + ")"
	}
	fmt.Fprintln(w, line)
}

// maxCompileLog is the most of a compiler's output (and of the error that
// quotes it) a compile reply carries per program: the first errors say
// what went wrong; a 13 MB log of a UTF-16 source says nothing more.
const maxCompileLog = 16 << 10

// maxDetail caps a failure message sent back from the worker.
const maxDetail = 64 << 10

// fitCompileReply caps every compile log and error in out to
// maxCompileLog, less when the reply would still not fit in limit bytes
// (many programs with long logs), keeping the start of each.
func fitCompileReply(out []CompileResult, limit int) []CompileResult {
	capped := make([]CompileResult, len(out))
	for n := maxCompileLog; ; n /= 2 {
		for i, r := range out {
			r.Err, r.Log = backend.CapLog(r.Err, n), backend.CapLog(r.Log, n)
			capped[i] = r
		}
		b, err := json.Marshal(capped)
		if err != nil || len(b) <= limit || n < 64 {
			return capped
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
	// Nice, when above 0, runs the worker at that nice value (a worker that
	// compiles in the background while another one times: Run.Compiler).
	Nice int
	// CompileJobs is how many programs the worker compiles at once (0: one
	// per core).
	CompileJobs int
	// Trace, when set, receives the worker's trace lines (WorkerTraceEnv):
	// the lines of its stderr that start "trace: ".
	Trace io.Writer
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
	// exited is closed once the worker process has been reaped (its
	// ProcessState is set); reading its output ends soon after, even when
	// a process it left behind still holds the pipes.
	exited chan struct{}
	// token marks the worker's environment (workerTokenEnv), by which the
	// processes it started are found and killed with it, also those that
	// left its session.
	token string
	// last is the last candidate this worker process was seen to run: a
	// death while no candidate runs (the worker was drawing the next
	// cell's inputs) is that candidate's doing, for instance a thread it
	// left writing into freed memory.
	last lastRun
}

// lastRun names the candidate a worker process ran last.
type lastRun struct {
	tile, phase, cell string
}

// workerTokenEnv carries a random token in a worker's environment; every
// process the worker starts inherits it (see killWorkerProcesses).
const workerTokenEnv = "TILEFIT_WORKER_TOKEN"

// pipeGrace is how long the worker's output is still read after the
// process ended: what it wrote before it ended is in the pipe, and a
// process it left behind may hold the pipe open forever.
const pipeGrace = time.Second

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
	tok := make([]byte, 12)
	rand.Read(tok)
	w.token = hex.EncodeToString(tok)
	cmd := exec.Command(exe)
	cmd.Env = append(append(os.Environ(), WorkerEnv+"="+w.o.Backend, WorkerDeviceEnv+"="+strconv.Itoa(w.o.Device), workerTokenEnv+"="+w.token), w.o.Env...)
	if w.o.Nice > 0 {
		cmd.Env = append(cmd.Env, WorkerNiceEnv+"="+strconv.Itoa(w.o.Nice))
	}
	if w.o.CompileJobs > 0 {
		cmd.Env = append(cmd.Env, WorkerJobsEnv+"="+strconv.Itoa(w.o.CompileJobs))
	}
	if w.o.Trace != nil {
		cmd.Env = append(cmd.Env, WorkerTraceEnv+"=1")
	}
	cmd.SysProcAttr = workerAttr()
	// The output pipes are the parent's own (not os/exec's copying
	// goroutines), so that the parent decides how long to read them after
	// the worker ended: a grandchild holding them must not stall it.
	outR, outW, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("start worker: %w", err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return fmt.Errorf("start worker: %w", err)
	}
	cmd.Stdout, cmd.Stderr = outW, errW
	in, err := cmd.StdinPipe()
	if err == nil {
		err = cmd.Start()
	}
	outW.Close()
	errW.Close()
	if err != nil {
		outR.Close()
		errR.Close()
		return fmt.Errorf("start worker %s: %w", exe, err)
	}
	w.cmd, w.stdin, w.last = cmd, in, lastRun{}
	w.stderr = &tailBuffer{max: 4 << 10}
	w.frames = make(chan frameOrErr, 64)
	w.done = make(chan struct{})
	w.exited = make(chan struct{})
	stderrDone := make(chan struct{})
	go func(tb *tailBuffer) {
		var to io.Writer = tb
		if w.o.Trace != nil {
			to = io.MultiWriter(tb, &traceLines{to: w.o.Trace})
		}
		io.Copy(to, errR)
		errR.Close()
		close(stderrDone)
	}(w.stderr)
	go func(exited chan struct{}) {
		cmd.Wait()
		// Read what the worker wrote before it ended, then stop.
		outR.SetReadDeadline(time.Now().Add(pipeGrace))
		errR.SetReadDeadline(time.Now().Add(pipeGrace))
		<-stderrDone // its last words explain its death (crashCause)
		close(exited)
	}(w.exited)
	go func(frames chan frameOrErr, done chan struct{}) {
		defer outR.Close()
		br := bufio.NewReader(outR)
		for {
			f, err := ReadFrame(br)
			if errors.Is(err, os.ErrDeadlineExceeded) {
				err = io.EOF // the worker ended; a process it left holds the pipe
			}
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

// kill ends the worker with every process it started (its process group,
// its session and whatever carries its token: see killWorkerProcesses)
// and reaps it. It returns once the worker is reaped; it never waits for
// a process the worker left behind.
func (w *Worker) kill() {
	if w.cmd == nil {
		return
	}
	tok := workerTokenEnv + "=" + w.token
	reaped := false
	select {
	case <-w.exited:
		reaped = true
	default:
	}
	if w.cmd.Process != nil && !reaped {
		// Not reaped yet, so its pid (its group's and session's id) is
		// not another process's.
		syscall.Kill(-w.cmd.Process.Pid, syscall.SIGKILL)
		killWorkerProcesses(w.cmd.Process.Pid, tok)
	}
	w.stdin.Close()
	close(w.done)
	<-w.exited
	// What it started carries its token: found by that alone once the pid
	// may have passed to another process.
	killWorkerProcesses(0, tok)
	w.cmd = nil
}

func (w *Worker) request(ctx context.Context, kind byte, v any, reply byte, out any, wait time.Duration) error {
	if err := w.start(); err != nil {
		return err
	}
	if err := WriteFrame(w.stdin, kind, v); err != nil {
		if errors.Is(err, ErrFrame) {
			return err // too large: nothing was written
		}
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

// Compile compiles progs in the worker (in parallel there), in requests
// that each fit in one protocol frame (sources of up to 1 MiB each, for
// many tiles, would not fit in one).
func (w *Worker) Compile(ctx context.Context, progs []backend.Program) ([]CompileResult, error) {
	var out []CompileResult
	for _, batch := range compileBatches(progs, MaxFrame/2) {
		var part []CompileResult
		if err := w.request(ctx, kindCompile, batch, kindCompRep, &part, 30*time.Minute); err != nil {
			return out, err
		}
		if len(part) != len(batch) {
			return out, fmt.Errorf("worker compiled %d of %d programs: %w", len(part), len(batch), ErrFrame)
		}
		out = append(out, part...)
	}
	return out, nil
}

// compileBatches splits progs into runs whose sources (and names) add up
// to at most limit bytes each; a program larger than limit is a batch of
// its own (its request fails with a clear error).
func compileBatches(progs []backend.Program, limit int) [][]backend.Program {
	var out [][]backend.Program
	start, size := 0, 0
	for i, p := range progs {
		n := len(p.Source) + len(p.Family) + 256
		for _, d := range p.Defines {
			n += len(d) + 4
		}
		if i > start && size+n > limit {
			out = append(out, progs[start:i])
			start, size = i, 0
		}
		size += n
	}
	if start < len(progs) || len(progs) == 0 {
		out = append(out, progs[start:])
	}
	return out
}

// RunCell runs job in the worker, restarting it after a crash or a hang and
// running the cell again without the candidate that failed.
func (w *Worker) RunCell(ctx context.Context, job CellJob) (result.CellResult, error) {
	return runWithRetries(ctx, job, w.attempt, func() error { w.kill(); return nil })
}

// Watchdog allowances. Before a step has an estimate it may run at
// allowFLOPs FLOP/s and move the cell's bytes at allowBytes B/s (the
// reference's first runs, the float64 check); drawing a cell's input sets
// is expected at inputRate B/s and allowed Scale times that (issue 18: the
// 2.3 GiB lm_head cell at M=1 took 88 s to draw on a loaded 2-core host).
const (
	allowFLOPs = 1e9
	allowBytes = 50e6
	inputRate  = 128e6
)

// maxWait caps the watchdog's wait for one step (a step expected to take
// longer is allowed a day).
const maxWait = 24 * time.Hour

// firstAllowance is the time a worker may take over a step of job before
// the step's time is known.
func firstAllowance(floor time.Duration, c result.Cell) time.Duration {
	return floor + time.Duration((c.FLOPs()/allowFLOPs+c.Bytes/allowBytes)*float64(time.Second))
}

// InputsExpect is the expected time to draw input sets of the given total
// size (Event.Expect of the "inputs" phase).
func InputsExpect(bytes int64) time.Duration {
	return time.Duration(float64(bytes) / inputRate * float64(time.Second))
}

func (w *Worker) attempt(ctx context.Context, job CellJob) (result.CellResult, error) {
	for again := true; ; again = false {
		res, prev, err := w.attemptOnce(ctx, job)
		var wd *workerDied
		if !errors.As(err, &wd) || prev.tile == "" {
			return res, err
		}
		// The worker died before any candidate of this cell ran, after it
		// ran one of an earlier cell: a fault that candidate left behind.
		for i, jc := range job.Candidates {
			if jc.Tile == prev.tile && !jc.AA && jc.Status == "" {
				return res, &CandidateFailure{Cand: i, Status: result.Crashed,
					Detail: fmt.Sprintf("%s after the candidate returned: it died while no candidate ran, after this one's %s phase in cell %s (a fault the candidate left behind, e.g. a thread still writing into its buffers)", wd, prev.phase, prev.cell)}
			}
		}
		if !again {
			return res, err
		}
		// That candidate is not in this cell: run the cell again in a
		// fresh worker.
	}
}

// attemptOnce runs job once in the worker. After a worker death before any
// candidate event of this job, prev is the candidate the dead worker ran
// last (in an earlier cell); otherwise it is empty.
func (w *Worker) attemptOnce(ctx context.Context, job CellJob) (res result.CellResult, prev lastRun, err error) {
	if err := w.start(); err != nil {
		return result.CellResult{}, lastRun{}, err
	}
	if err := WriteFrame(w.stdin, kindRun, job); err != nil {
		if errors.Is(err, ErrFrame) {
			return result.CellResult{}, lastRun{}, fmt.Errorf("cell %s M=%d: %w", job.Cell.Shape, job.Cell.M, err)
		}
		return result.CellResult{}, lastRun{}, w.died(err)
	}
	cellName := fmt.Sprintf("%s M=%d", job.Cell.Shape, job.Cell.M)
	before := w.last
	cur, phase := -1, ""
	// Before any estimate a step may run at 1 GFLOP/s and 50 MB/s (the
	// reference's first runs, loads); later steps get Scale × their
	// expected time.
	unknown := firstAllowance(w.o.Floor, job.Cell)
	wait := unknown
	for {
		f, err := w.next(ctx, wait)
		var wd *workerDied
		switch {
		case errors.Is(err, errWatchdog):
			w.kill()
			if cur < 0 {
				if phase != "" {
					return result.CellResult{}, lastRun{}, fmt.Errorf("worker made no progress within %s in phase %q", wait.Round(time.Millisecond), phase)
				}
				return result.CellResult{}, lastRun{}, fmt.Errorf("worker made no progress within %s", wait.Round(time.Millisecond))
			}
			return result.CellResult{}, lastRun{}, &CandidateFailure{Cand: cur, Status: result.Timeout,
				Detail: fmt.Sprintf("no progress for %s in phase %q (watchdog)", wait.Round(time.Millisecond), phase)}
		case errors.As(err, &wd) && cur >= 0:
			return result.CellResult{}, lastRun{}, &CandidateFailure{Cand: cur, Status: result.Crashed, Detail: wd.Error()}
		case errors.As(err, &wd):
			return result.CellResult{}, before, err
		case err != nil:
			return result.CellResult{}, lastRun{}, err
		}
		switch f.Kind {
		case kindEvent:
			var e Event
			if err := f.Decode(kindEvent, &e); err != nil {
				return result.CellResult{}, lastRun{}, err
			}
			cur = e.Cand
			phase = e.Phase
			if cur >= 0 && cur < len(job.Candidates) {
				w.last = lastRun{tile: job.Candidates[cur].Tile, phase: phase, cell: cellName}
			}
			wait = unknown
			if e.Expect > 0 {
				wait = max(w.o.Floor, time.Duration(min(float64(e.Expect)*w.o.Scale, float64(maxWait))))
			}
		case kindResult:
			var p packedResult
			if err := f.Decode(kindResult, &p); err != nil {
				return p.CellResult, lastRun{}, err
			}
			res, err := p.unpack()
			return res, lastRun{}, err
		case kindFailure:
			var m failureMsg
			if err := f.Decode(kindFailure, &m); err != nil {
				return result.CellResult{}, lastRun{}, err
			}
			w.kill()
			return result.CellResult{}, lastRun{}, &CandidateFailure{Cand: m.Cand, Status: result.Status(m.Status), Detail: m.Detail}
		case kindError:
			var msg string
			f.Decode(kindError, &msg)
			return result.CellResult{}, lastRun{}, errors.New(msg)
		default:
			return result.CellResult{}, lastRun{}, fmt.Errorf("unexpected worker frame %q: %w", f.Kind, ErrFrame)
		}
	}
}

// Close stops the worker.
func (w *Worker) Close() error {
	if w.cmd == nil {
		return nil
	}
	w.stdin.Close() // a worker ends when its input ends
	select {
	case <-w.exited:
	case <-time.After(5 * time.Second):
		syscall.Kill(-w.cmd.Process.Pid, syscall.SIGKILL)
		<-w.exited
	}
	killWorkerProcesses(0, workerTokenEnv+"="+w.token)
	close(w.done)
	w.cmd = nil
	return nil
}

// traceLines passes on the complete lines written to it that start
// "trace: " (a worker's trace among whatever else it writes on stderr).
type traceLines struct {
	to      io.Writer
	partial []byte
}

func (t *traceLines) Write(p []byte) (int, error) {
	t.partial = append(t.partial, p...)
	for {
		i := bytes.IndexByte(t.partial, '\n')
		if i < 0 {
			break
		}
		line := t.partial[:i+1]
		if bytes.HasPrefix(line, []byte("trace: ")) {
			t.to.Write(line)
		}
		t.partial = t.partial[i+1:]
	}
	if len(t.partial) > 64<<10 {
		t.partial = t.partial[:0] // no trace line is that long
	}
	return len(p), nil
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

// running reports whether the process of /proc/PID dir still runs: not
// gone and not a zombie (state Z or X after the command name). Without
// /proc (not Linux) it reports false.
func running(dir string) bool {
	b, err := os.ReadFile(dir + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] != 'Z' && s[i+2] != 'X'
}
