package tune

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tilefit/tilefit/backend"
	"github.com/tilefit/tilefit/builtin"
	"github.com/tilefit/tilefit/kernel"
	"github.com/tilefit/tilefit/result"
	"github.com/tilefit/tilefit/store"
	"github.com/tilefit/tilefit/workload"
)

// TestWatchdogAllowsLargeCells (issue 18 item 2): the watchdog's first
// allowance was 5 s + FLOPs/1e9, which ignores the bytes a cell draws and
// moves: the valid lm_head cell (N 152064, K 8192) at M=1, 2.3 GiB, was
// "not run: worker made no progress within 7.49s" while its inputs take
// 88 s to draw on a loaded 2-core host. The worker now says when it draws
// inputs (phase "inputs", expected from the sets' bytes) and the first
// allowance grows with the cell's bytes.
func TestWatchdogAllowsLargeCells(t *testing.T) {
	op := builtin.GemmF16()
	d := kernel.Dims{"M": 1, "N": 152064, "K": 8192}
	c := result.NewCell("lm_head", op, d, 1)
	o := NewWorker(WorkerOptions{}).o
	const observed = 88 * time.Second
	if got := time.Duration(float64(InputsExpect(op.SetBytes(d))) * o.Scale); got < 2*observed {
		t.Errorf("drawing lm_head's inputs (%d bytes) is allowed %s, want at least %s (twice the 88 s seen)", op.SetBytes(d), got, 2*observed)
	}
	if got := firstAllowance(o.Floor, c); got < 30*time.Second {
		t.Errorf("lm_head's first step is allowed %s; its first runs move %.0f bytes", got, c.Bytes)
	}
}

// TestWorkerSlowInputsAreMeasured runs a cell whose inputs take longer to
// draw than the old first allowance (Floor + FLOPs/1e9): a host 25 times
// slower at it than the watchdog expects (6.5 s for 34 MB), with Scale 100
// (a Floor of 5 s for the other steps, which a loaded machine needs). The
// cell is measured, not "not run".
func TestWorkerSlowInputsAreMeasured(t *testing.T) {
	if testing.Short() {
		t.Skip("starts worker processes")
	}
	cfg := testConfig()
	cfg.Workload = workload.Workload{Name: "big", Shapes: []workload.Shape{{Name: "wide", N: 2048, K: 4096, Calls: 1}}, Ms: []int{1}}
	cfg.Tiles = []string{"8"}
	w := NewWorker(WorkerOptions{Backend: "fake", Floor: 5 * time.Second, Scale: 100, Env: []string{fakeSlowInputsEnv + "=25"}})
	defer w.Close()
	st := openStore(t)
	sum, err := Sweep(context.Background(), cfg, w, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Cells != 1 || sum.NotRun != 0 {
		t.Fatalf("swept %d cells, %d not run: %v", sum.Cells, sum.NotRun, sum.Warnings)
	}
	if s := statuses(t, st); s["wide/01/8"] != result.OK {
		t.Errorf("statuses %v", s)
	}
}

// TestWorkerCrashAfterReturnKeepsCell (issue 18 item 13): a candidate that
// returns normally but leaves a fault behind (a thread writing into its
// buffers later) killed the worker while it drew the next cell's inputs,
// with no candidate running: that cell was "not run". The crash is now
// put on the candidate the worker ran last; it is recorded as crashed in
// that cell, and the cell is finished with the others.
func TestWorkerCrashAfterReturnKeepsCell(t *testing.T) {
	if testing.Short() {
		t.Skip("starts worker processes")
	}
	cfg := testConfig()
	cfg.Workload.Ms = []int{9}
	cfg.Tiles = []string{"4", "16"}
	w := NewWorker(WorkerOptions{Backend: "fake", Floor: 5 * time.Second, Env: []string{"TILEFIT_FAKE_BUGS=4=late,8=late,16=late"}})
	defer w.Close()
	st := openStore(t)
	sum, err := Sweep(context.Background(), cfg, w, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Cells != 2 || sum.NotRun != 0 {
		t.Fatalf("swept %d cells, %d not run: %v", sum.Cells, sum.NotRun, sum.Warnings)
	}
	cells, err := st.Cells(context.Background(), store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	crashed := 0
	for _, c := range cells {
		for _, cand := range c.Candidates {
			switch cand.Status {
			case result.OK:
			case result.Crashed:
				crashed++
				if !strings.Contains(cand.Detail, "after the candidate returned") || !strings.Contains(cand.Detail, "SIGSEGV") {
					t.Errorf("%s %s: detail %q", c.Cell.Shape, cand.Tile, cand.Detail)
				}
			default:
				t.Errorf("%s %s: %s %s", c.Cell.Shape, cand.Tile, cand.Status, cand.Detail)
			}
		}
	}
	if crashed != 1 {
		t.Errorf("%d candidates recorded crashed, want 1 (the one that ran last before the crash)", crashed)
	}
}

// TestWorkerOrphanHoldingPipesDoesNotStall (issue 18 item 9): a candidate
// that leaves a process of its own session (fork, setsid, sleep) holding
// the worker's output, then crashes, stalled the sweep: the worker's end
// was only seen by the watchdog (or when the sleeper ended), and cmd.Wait
// waited for the sleeper's pipe. Now the crash is seen as a crash (the
// parent stops reading a dead worker's pipes after a grace), and the
// sleeper is killed with the worker.
func TestWorkerOrphanHoldingPipesDoesNotStall(t *testing.T) {
	if testing.Short() {
		t.Skip("starts worker processes")
	}
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	dir := t.TempDir()
	cfg := testConfig()
	cfg.Workload.Ms = []int{9}
	cfg.Tiles = []string{"4", "16"}
	w := NewWorker(WorkerOptions{Backend: "fake", Floor: 20 * time.Second,
		Env: []string{"TILEFIT_FAKE_BUGS=16=orphan", fakeOrphanDirEnv + "=" + dir}})
	st := openStore(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // a guard against a hang, not a speed test
	defer cancel()
	sum, err := Sweep(ctx, cfg, w, st, nil)
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	if sum.Cells != 2 {
		t.Fatalf("summary %+v", sum)
	}
	s := statuses(t, st)
	for _, sh := range []string{"a", "b"} {
		if s[sh+"/09/16"] != result.Crashed || s[sh+"/09/4"] != result.OK {
			t.Errorf("%s: %v (want 16 crashed — seen as a crash, not a watchdog timeout — and 4 OK)", sh, s)
		}
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) == 0 {
		t.Fatal("the orphan bug started no process")
	}
	for _, e := range ents {
		pid, _ := strconv.Atoi(e.Name())
		if alive(pid) {
			t.Errorf("process %d the candidate left (its own session) still runs after the sweep", pid)
		}
	}
}

// alive reports whether pid runs (a zombie waiting for its reaper does not).
func alive(pid int) bool { return running(filepath.Join("/proc", strconv.Itoa(pid))) }

// TestWorkerHugeCompileLogs (issue 18 item 4): a UTF-16 source made every
// program's compiler log 13 MB; the compile reply (each log twice) went
// over the 64 MiB frame, the worker ignored the failed send and the parent
// waited 30 minutes. Logs are capped now (the first errors kept) and the
// reply arrives.
func TestWorkerHugeCompileLogs(t *testing.T) {
	if testing.Short() {
		t.Skip("starts worker processes")
	}
	w := NewWorker(WorkerOptions{Backend: "fake", Env: []string{fakeCompileLogEnv + "=13000000"}})
	defer w.Close()
	var progs []backend.Program
	for _, tm := range []string{"2", "4", "8", "16"} {
		progs = append(progs, backend.Program{Family: "fake", Source: "good", Defines: []string{"TM=" + tm}})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute) // a hang guard
	defer cancel()
	out, err := w.Compile(ctx, progs)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != len(progs) {
		t.Fatalf("%d results for %d programs", len(out), len(progs))
	}
	for i, r := range out {
		if r.Err == "" || len(r.Err) > maxCompileLog+100 || len(r.Log) > maxCompileLog+100 {
			t.Errorf("program %d: err %d bytes, log %d bytes", i, len(r.Err), len(r.Log))
		}
		if !strings.Contains(r.Log, "x.c:1:1: error: stray") || !strings.Contains(r.Log, "more bytes not kept") {
			t.Errorf("program %d: the capped log lost its first error or does not say it was cut: %.200q", i, r.Log)
		}
	}
}

// TestWorkerCompilesManyLargeSources: 70 programs with 1 MiB sources (the
// --source limit) need more than one 64 MiB frame; the request was one
// frame, refused, and reported as a dead worker. They go in batches now.
func TestWorkerCompilesManyLargeSources(t *testing.T) {
	if testing.Short() {
		t.Skip("starts worker processes")
	}
	w := NewWorker(WorkerOptions{Backend: "fake"})
	defer w.Close()
	src := strings.Repeat("/* filler */\n", (1<<20)/13)
	var progs []backend.Program
	for i := 0; i < 70; i++ {
		progs = append(progs, backend.Program{Family: "fake", Source: src, Defines: []string{"TM=" + strconv.Itoa(i)}})
	}
	out, err := w.Compile(context.Background(), progs)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != len(progs) {
		t.Fatalf("%d results for %d programs", len(out), len(progs))
	}
	for i, r := range out {
		if r.Err != "" || r.Artifact.Key != "TM="+strconv.Itoa(i) {
			t.Errorf("program %d: %+v", i, r.Artifact.Key)
		}
	}
}

// failingWriter accepts n writes, then fails every write.
type failingWriter struct {
	n   int
	buf bytes.Buffer
}

func (f *failingWriter) Write(p []byte) (int, error) {
	if f.n <= 0 {
		return 0, errors.New("broken pipe")
	}
	f.n--
	return f.buf.Write(p)
}

// TestServeFailedSendEndsWorker (issue 18 item 4): tune.Serve ignored a
// reply it could not send and went on waiting for requests, so the parent
// waited for an answer that never came. A failed send now ends Serve with
// the error (the worker exits; the parent sees it end).
func TestServeFailedSendEndsWorker(t *testing.T) {
	var req bytes.Buffer
	WriteFrame(&req, kindDevice, nil)
	WriteFrame(&req, kindDevice, nil)
	out := &failingWriter{n: 1} // the hello goes through
	open := func(context.Context) (backend.Backend, error) { return newFake(), nil }
	err := Serve(context.Background(), &req, out, open, nil)
	if err == nil || !strings.Contains(err.Error(), "broken pipe") {
		t.Fatalf("Serve = %v, want the failed send's error", err)
	}
}

// TestServeOversizedReplyIsAnError: a reply larger than a frame is
// answered with an error message the parent can show, never dropped.
func TestServeOversizedReplyIsAnError(t *testing.T) {
	var req bytes.Buffer
	WriteFrame(&req, kindDevice, nil)
	var out bytes.Buffer
	open := func(context.Context) (backend.Backend, error) {
		fb := newFake()
		fb.name = strings.Repeat("n", MaxFrame)
		return fb, nil
	}
	if err := Serve(context.Background(), &req, &out, open, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFrame(&out); err != nil { // hello
		t.Fatal(err)
	}
	f, err := ReadFrame(&out)
	if err != nil {
		t.Fatal(err)
	}
	var msg string
	if err := f.Decode(kindError, &msg); err != nil || !strings.Contains(msg, "does not fit") {
		t.Fatalf("reply %q %q, %v; want an error saying the reply does not fit", f.Kind, msg, err)
	}
}
