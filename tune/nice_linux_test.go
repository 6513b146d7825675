package tune

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tilefit/tilefit/backend"
)

// TestWorkerRunsNiced: a worker started with Nice runs every thread at
// that nice value, also the threads it starts after compiling (the
// background compiler of Run.Compiler must not take cores from the timing
// worker).
func TestWorkerRunsNiced(t *testing.T) {
	ctx := context.Background()
	w := NewWorker(WorkerOptions{Backend: "fake", Nice: 7, CompileJobs: 2})
	defer w.Close()
	if _, err := w.Device(ctx); err != nil {
		t.Fatal(err)
	}
	var progs []backend.Program
	for _, tm := range []string{"2", "4", "8", "16", "32"} {
		progs = append(progs, backend.Program{Family: "fake", Source: "good", Defines: []string{"TM=" + tm}})
	}
	if _, err := w.Compile(ctx, progs); err != nil {
		t.Fatal(err)
	}
	tasks, err := filepath.Glob(filepath.Join("/proc", strconv.Itoa(w.cmd.Process.Pid), "task", "*", "stat"))
	if err != nil || len(tasks) == 0 {
		t.Fatalf("no threads of the worker: %v", err)
	}
	for _, p := range tasks {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // the thread ended
		}
		// Field 19 is the nice value; the fields after the command (in
		// parentheses) start at field 3.
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(f) < 17 || f[16] != "7" {
			t.Errorf("thread %s runs at nice %v, want 7", p, f[16:17])
		}
	}
}

// TestWorkerLimits: the worker's nice value and compile jobs from their
// environment; a bad one is refused.
func TestWorkerLimits(t *testing.T) {
	if n, j, err := workerLimits("10", "8"); err != nil || n != 10 || j != 8 {
		t.Errorf("workerLimits(10, 8) = %d, %d, %v", n, j, err)
	}
	if n, j, err := workerLimits("", ""); err != nil || n != 0 || j != 0 {
		t.Errorf("workerLimits of nothing = %d, %d, %v", n, j, err)
	}
	for _, bad := range [][2]string{{"-1", ""}, {"20", ""}, {"x", ""}, {"", "-2"}, {"", "many"}} {
		if _, _, err := workerLimits(bad[0], bad[1]); err == nil {
			t.Errorf("workerLimits(%q, %q) accepted", bad[0], bad[1])
		}
	}
}
