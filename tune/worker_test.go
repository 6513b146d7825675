package tune

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/tilefit/tilefit/backend"
	"github.com/tilefit/tilefit/internal/pgtest"
	"github.com/tilefit/tilefit/kernel"
	"github.com/tilefit/tilefit/result"
	"github.com/tilefit/tilefit/store"
)

// TestMain lets this test binary serve as a worker: the fake backend's bugs
// come from TILEFIT_FAKE_BUGS ("4=segv,16=hang"). "segv" kills the worker
// with SIGSEGV during a run, "hang" never returns.
func TestMain(m *testing.M) {
	MaybeServeWorkerOn(func(name string, device int) NewBackend {
		if name != "fake" {
			return nil
		}
		return func(context.Context) (backend.Backend, error) {
			fb := newFake()
			fb.device = device
			for _, kv := range strings.Split(os.Getenv("TILEFIT_FAKE_BUGS"), ",") {
				if k, v, ok := strings.Cut(kv, "="); ok {
					fb.bugs[k] = v
				}
			}
			d := &dyingBackend{fakeBackend: fb, orphanDir: os.Getenv(fakeOrphanDirEnv)}
			var waitDev int
			var waitDir string
			if n, _ := fmt.Sscanf(os.Getenv(fakeWaitDeadEnv), "%d:%s", &waitDev, &waitDir); n == 2 && device == waitDev {
				d.waitDead = waitDir
			}
			fmt.Sscanf(os.Getenv(fakeSlowInputsEnv), "%g", &d.slowInputs)
			if n, err := strconv.Atoi(os.Getenv(fakeCompileLogEnv)); err == nil {
				d.compileLog = n
			}
			if spec := os.Getenv(fakeDiesEnv); spec != "" {
				fmt.Sscanf(spec, "%d:%d:%s", &d.dies, &d.at, &d.dir)
				if d.dir != "" && device == d.dies {
					if _, err := os.Stat(filepath.Join(d.dir, "dead")); err == nil {
						return nil, fmt.Errorf("fake device %d: fell off the bus", device)
					}
				} else {
					d.dir = ""
				}
			}
			return d, nil
		}
	}, nil)
	os.Exit(pgtest.Main(m))
}

// fakeDiesEnv, "D:N:DIR", makes fake device D die (its worker kills itself
// with SIGKILL, mid-cell) at its Nth cell, and stay dead: from then on the
// device cannot be opened. DIR keeps the count across worker restarts.
const fakeDiesEnv = "TILEFIT_FAKE_DEVICE_DIES"

// Environment of the fake worker for the issue 18 tests: fakeSlowInputsEnv
// (a factor F) makes NewProblem take F times InputsExpect of the cell's
// input sets, a host drawing inputs F times slower than the watchdog
// expects; fakeOrphanDirEnv is where the "orphan" bug writes the pids of
// the processes it leaves; fakeCompileLogEnv (a size) makes every compile
// fail with a log of that many bytes.
const (
	fakeSlowInputsEnv = "TILEFIT_FAKE_SLOW_INPUTS"
	fakeOrphanDirEnv  = "TILEFIT_FAKE_ORPHAN_DIR"
	fakeCompileLogEnv = "TILEFIT_FAKE_COMPILE_LOG"
	// fakeWaitDeadEnv, "D:DIR", holds fake device D's first cell until the
	// device of fakeDiesEnv (the same DIR) has died, so that the dying
	// device surely reaches the cell it dies at, however the machine's
	// load spreads the cells.
	fakeWaitDeadEnv = "TILEFIT_FAKE_WAIT_DEAD"
)

// dyingBackend turns the "segv" and "hang" bugs into a real signal and a
// real hang inside the worker process; "orphan" leaves a process of its
// own session holding the worker's output pipes, then crashes; "late"
// returns normally but leaves a fault behind that kills the worker when
// it next allocates a cell (a thread writing into freed buffers).
type dyingBackend struct {
	*fakeBackend
	dies, at   int    // device dies at its at'th cell (fakeDiesEnv)
	dir        string // "" unless this is the dying device
	slowInputs float64
	orphanDir  string
	compileLog int
	armed      atomic.Bool // a "late" kernel ran
	waitDead   string      // fakeWaitDeadEnv's folder, until the first cell
}

func (d *dyingBackend) Compile(ctx context.Context, p backend.Program) (backend.Artifact, error) {
	if d.compileLog > 0 {
		return backend.Artifact{}, &backend.CompileError{Program: programKey(p), Log: strings.Repeat("x.c:1:1: error: stray '\\377' in program\n", d.compileLog/40+1)[:d.compileLog], Err: errors.New("exit status 1")}
	}
	return d.fakeBackend.Compile(ctx, p)
}

func programKey(p backend.Program) string { return strings.Join(p.Defines, ",") }

func (d *dyingBackend) NewProblem(ctx context.Context, op *kernel.Operator, dims kernel.Dims, sets [][][]byte) (backend.Problem, error) {
	// A cell's first problem holds its rotating sets (16 for these small
	// cells); the exact check's one-set problem is not another cell.
	if d.dir != "" && len(sets) > 1 {
		f, err := os.OpenFile(filepath.Join(d.dir, "cells"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err == nil {
			f.Write([]byte("x"))
			f.Close()
		}
		if b, _ := os.ReadFile(filepath.Join(d.dir, "cells")); len(b) >= d.at {
			os.WriteFile(filepath.Join(d.dir, "dead"), nil, 0o644)
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
			time.Sleep(time.Minute)
		}
	}
	if d.armed.Load() {
		syscall.Kill(os.Getpid(), syscall.SIGSEGV)
		time.Sleep(time.Minute)
	}
	if d.waitDead != "" {
		for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if _, err := os.Stat(filepath.Join(d.waitDead, "dead")); err == nil {
				break
			}
		}
		d.waitDead = ""
	}
	if d.slowInputs > 0 {
		time.Sleep(time.Duration(d.slowInputs * float64(InputsExpect(int64(len(sets))*op.SetBytes(dims)))))
	}
	p, err := d.fakeBackend.NewProblem(ctx, op, dims, sets)
	return &dyingProblem{p.(*fakeProblem), d}, err
}

type dyingProblem struct {
	*fakeProblem
	d *dyingBackend
}

func (p *dyingProblem) Run(ctx context.Context, k backend.Kernel, set int) ([][]byte, error) {
	switch k.(*fakeKernel).bug {
	case "segv":
		syscall.Kill(os.Getpid(), syscall.SIGSEGV)
		time.Sleep(time.Minute)
	case "hang":
		time.Sleep(time.Hour) // (select{} would trip the deadlock detector)
	case "orphan":
		// fork, setsid, sleep; then crash: the sleeper holds the pipes.
		c := exec.Command("sleep", "30")
		c.Stdout, c.Stderr = os.Stdout, os.Stderr
		c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := c.Start(); err == nil {
			os.WriteFile(filepath.Join(p.d.orphanDir, strconv.Itoa(c.Process.Pid)), nil, 0o644)
		}
		syscall.Kill(os.Getpid(), syscall.SIGSEGV)
		time.Sleep(time.Minute)
	case "late":
		p.d.armed.Store(true)
	}
	return p.fakeProblem.Run(ctx, k, set)
}

func (p *dyingProblem) Time(ctx context.Context, k backend.Kernel, n, first int) (time.Duration, error) {
	if k.(*fakeKernel).bug == "late" {
		p.d.armed.Store(true)
	}
	return p.fakeProblem.Time(ctx, k, n, first)
}

func TestWorkerIsolatesCrashAndHang(t *testing.T) {
	if testing.Short() {
		t.Skip("starts worker processes")
	}
	ctx := context.Background()
	cfg := testConfig()
	cfg.Workload.Ms = []int{9}
	cfg.Tiles = []string{"4", "16", "32"}
	w := NewWorker(WorkerOptions{Backend: "fake", Floor: 2 * time.Second, Env: []string{"TILEFIT_FAKE_BUGS=4=segv,16=hang"}})
	defer w.Close()
	st := openStore(t)
	t0 := time.Now()
	sum, err := Sweep(ctx, cfg, w, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Cells != 2 {
		t.Fatalf("summary %+v", sum)
	}
	s := statuses(t, st)
	for _, sh := range []string{"a", "b"} {
		if s[sh+"/09/8"] != result.OK || s[sh+"/09/32"] != result.OK {
			t.Errorf("%s: healthy tiles did not finish: %v", sh, s)
		}
	}
	if s["a/09/4"] != result.Crashed || s["a/09/16"] != result.Timeout {
		t.Errorf("crash/hang not recorded: %v", s)
	}
	cells, _ := st.Cells(ctx, store.Filter{})
	for _, c := range cells[0].Candidates {
		if c.Tile == "4" && !strings.Contains(c.Detail, "SIGSEGV") {
			t.Errorf("crash detail %q does not name the signal", c.Detail)
		}
		if c.Tile == "16" && !strings.Contains(c.Detail, "watchdog") {
			t.Errorf("timeout detail %q", c.Detail)
		}
		// Row hashes come back over the pipe (packed, see packRows).
		if (c.Status == result.OK) != (len(c.Rows) == 1 && len(c.Rows[0].Hashes) == 9) {
			t.Errorf("%s (%s): rows %v after the worker", c.Tile, c.Status, c.Rows)
		}
	}
	if el := time.Since(t0); el > 40*time.Second {
		t.Errorf("took %s", el)
	}
}

func TestFrameRoundTripAndErrors(t *testing.T) {
	var buf bytes.Buffer
	ev := Event{Cand: 3, Phase: "time", Expect: time.Second}
	if err := WriteFrame(&buf, kindEvent, ev); err != nil {
		t.Fatal(err)
	}
	f, err := ReadFrame(&buf)
	if err != nil {
		t.Fatal(err)
	}
	var got Event
	if err := f.Decode(kindEvent, &got); err != nil || got != ev {
		t.Fatalf("%+v %v", got, err)
	}
	if _, err := ReadFrame(&buf); !errors.Is(err, io.EOF) {
		t.Fatalf("clean end: %v", err)
	}
	for name, in := range map[string][]byte{
		"zero length": {0, 0, 0, 0},
		"huge length": {0xff, 0xff, 0xff, 0xff, 'e'},
		"truncated":   {0, 0, 0, 9, 'e', '{'},
		"short hdr":   {0, 0},
	} {
		if _, err := ReadFrame(bytes.NewReader(in)); !errors.Is(err, ErrFrame) {
			t.Errorf("%s: err = %v, want ErrFrame", name, err)
		}
	}
	if err := (Frame{Kind: kindEvent, Payload: []byte("{")}).Decode(kindEvent, &got); !errors.Is(err, ErrFrame) {
		t.Errorf("bad JSON: %v", err)
	}
	if err := (Frame{Kind: kindResult}).Decode(kindEvent, &got); !errors.Is(err, ErrFrame) {
		t.Errorf("wrong kind: %v", err)
	}
}

// FuzzReadFrame feeds arbitrary bytes to the frame decoder: it must never
// panic, never accept a frame longer than MaxFrame, and decoding a frame's
// payload into any message type must not panic.
func FuzzReadFrame(f *testing.F) {
	var buf bytes.Buffer
	WriteFrame(&buf, kindEvent, Event{Cand: 1, Phase: "verify"})
	WriteFrame(&buf, kindFailure, failureMsg{Cand: 2, Status: "crashed", Detail: "signal 11"})
	f.Add(buf.Bytes())
	f.Add([]byte{0, 0, 0, 1, 'h'})
	f.Add([]byte{0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := bytes.NewReader(data)
		for {
			fr, err := ReadFrame(r)
			if err != nil {
				return
			}
			if len(fr.Payload)+1 > MaxFrame {
				t.Fatalf("accepted a %d-byte frame", len(fr.Payload))
			}
			var e Event
			var m failureMsg
			var res result.CellResult
			var job CellJob
			fr.Decode(fr.Kind, &e)
			fr.Decode(fr.Kind, &m)
			fr.Decode(fr.Kind, &res)
			fr.Decode(fr.Kind, &job)
		}
	})
}

// TestWorkerSilentAtStartIsKilled: a worker that never says hello is killed
// and forgotten, so it does not linger and the next request starts afresh
// instead of talking to it.
func TestWorkerSilentAtStartIsKilled(t *testing.T) {
	cat, err := exec.LookPath("cat")
	if err != nil {
		t.Skip("no cat")
	}
	defer func(d time.Duration) { helloTimeout = d }(helloTimeout)
	helloTimeout = 200 * time.Millisecond
	w := NewWorker(WorkerOptions{Backend: "fake", Exe: cat}) // cat waits on stdin and says nothing
	defer w.Close()
	if _, err := w.Device(context.Background()); err == nil || !strings.Contains(err.Error(), "did not start") {
		t.Fatalf("Device: %v, want a start failure", err)
	}
	if w.cmd != nil {
		t.Fatalf("silent worker pid %d left running", w.cmd.Process.Pid)
	}
}
