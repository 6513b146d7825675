package cli

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tilefit/tilefit/builtin"
	"github.com/tilefit/tilefit/result"
	"github.com/tilefit/tilefit/store"
)

// plantFaults returns the CPU family source with a wrapper around the real
// kernel that misbehaves for chosen tiles (all other tiles stay correct):
//
//	16_32_2  segfaults (writes through NULL)
//	16_64_2  never returns
//	16_128_2 writes NaN into Y[0]
//	16_256_2 writes one element past the end of Y
//	32_32_2  differs between two runs (a static counter perturbs Y[0])
func plantFaults(t *testing.T) string {
	return wrapCPUGemm(t, `	void *Y = ptrs[2];
	int64_t M = args[0], N = args[1];
#if TM == 16 && TN == 32
	*(volatile int *)0 = 1;
#elif TM == 16 && TN == 64
	for (volatile int spin = 0;; spin++) {}
#elif TM == 16 && TN == 128
	((float *)Y)[0] = __builtin_nanf("");
#elif TM == 16 && TN == 256
	((float *)Y)[M * N] = 1.0f;
#elif TM == 32 && TN == 32
	static int calls;
	if (calls++ % 2) ((float *)Y)[0] += 1.0f;
#endif
`)
}

// wrapCPUGemm returns the CPU gemm_f16 source with its entry point renamed
// tilefit_gemm_real and a new entry point that calls it (into int r) and
// then runs body (C statements that see ptrs, args and r) before
// returning r: how the tests plant faults in a tile without touching the
// kernel.
func wrapCPUGemm(t *testing.T, body string) string {
	t.Helper()
	src := builtin.CPUGemmF16().Source
	const sig = "int tilefit_gemm_f16(void **ptrs, const int64_t *args)"
	if strings.Count(src, sig+"\n{") != 1 {
		t.Fatalf("the family source no longer defines %q once", sig)
	}
	src = strings.Replace(src, sig+"\n{", "static "+strings.Replace(sig, "tilefit_gemm_f16", "tilefit_gemm_real", 1)+"\n{", 1)
	return src + "\n" + sig + " {\n\tint r = tilefit_gemm_real(ptrs, args);\n" + body + "\treturn r;\n}\n"
}

// TestPlantedFaultsOnCPU plants each fault of issue 5 in one CPU tile and
// checks that each is detected and recorded while every other candidate of
// the sweep completes.
func TestPlantedFaultsOnCPU(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles and runs C kernels in worker processes")
	}
	if _, err := exec.LookPath("cc"); err != nil {
		t.Skip("no C compiler")
	}
	dir := t.TempDir()
	srcPath := filepath.Join(dir, "faulty.c")
	if err := os.WriteFile(srcPath, []byte(plantFaults(t)), 0o644); err != nil {
		t.Fatal(err)
	}
	wl := filepath.Join(dir, "w.yaml")
	os.WriteFile(wl, []byte("name: faults\nm: [37, 70]\nshapes:\n  - {name: a, n: 48, k: 100, calls: 3}\n  - {name: b, n: 20, k: 64, calls: 1}\n"), 0o644)
	db := filepath.Join(dir, "f.db")
	tiles := "64_128_2,16_32_2,16_64_2,16_128_2,16_256_2,32_32_2,32_64_2,128_64_1"
	var stdout, stderr bytes.Buffer
	code := Run(context.Background(), []string{"sweep", "--workload", wl, "--db", db, "--source", srcPath, "--tiles", tiles,
		"--rounds", "6", "--aa=false", "--report=false", "--fail-on-error"}, &stdout, &stderr)
	if code != ExitFailures || !strings.Contains(stderr.String(), "--fail-on-error") {
		t.Fatalf("sweep with planted faults and --fail-on-error: exit %d, want 1\n%s", code, stderr.String())
	}
	st, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cells, err := st.Cells(context.Background(), store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(cells) != 4 {
		t.Fatalf("%d cells stored, want 4", len(cells))
	}
	want := map[string]struct {
		status result.Status
		detail string
	}{
		"16_32_2":  {result.Crashed, "SIGSEGV"},
		"16_64_2":  {result.Timeout, "watchdog"},
		"16_128_2": {result.NumericFailed, "NaN"},
		"16_256_2": {result.NumericFailed, "outside its output"},
		"32_32_2":  {result.ParityFailed, "two runs differ"},
	}
	for ci, c := range cells {
		for _, cand := range c.Candidates {
			w, bad := want[cand.Tile]
			switch {
			case !bad:
				if cand.Status != result.OK || !cand.Bitwise && !cand.Vendor || len(cand.Samples) != 6 {
					t.Errorf("%s M=%d healthy %s: %s %q (%d samples)", c.Cell.Shape, c.Cell.M, cand.Tile, cand.Status, cand.Detail, len(cand.Samples))
				}
			case (cand.Tile == "16_32_2" || cand.Tile == "16_64_2") && ci >= 2:
				// Failed in two cells: not retried.
				if cand.Status != result.Skipped {
					t.Errorf("%s M=%d %s retried after two failures: %s", c.Cell.Shape, c.Cell.M, cand.Tile, cand.Status)
				}
			default:
				if cand.Status != w.status || !strings.Contains(cand.Detail, w.detail) {
					t.Errorf("%s M=%d %s: %s %q, want %s containing %q", c.Cell.Shape, c.Cell.M, cand.Tile, cand.Status, cand.Detail, w.status, w.detail)
				}
			}
		}
	}
	// The report's failure table names them.
	var rep bytes.Buffer
	if code := Run(context.Background(), []string{"report", "--db", db}, &rep, &stderr); code != 0 {
		t.Fatalf("report exit %d: %s", code, stderr.String())
	}
	for tile := range want {
		if !strings.Contains(rep.String(), tile) {
			t.Errorf("report does not mention %s", tile)
		}
	}
	// Without --fail-on-error recorded failures are not an error; the
	// resumed sweep finds every cell stored.
	stderr.Reset()
	code = Run(context.Background(), []string{"sweep", "--workload", wl, "--db", db, "--source", srcPath, "--tiles", tiles,
		"--rounds", "6", "--aa=false", "--report=false"}, &stdout, &stderr)
	if code != ExitOK || !strings.Contains(stderr.String(), "swept 0 cells (4 already stored)") {
		t.Fatalf("resumed sweep exit %d: %s", code, stderr.String())
	}
}

// testMainEnv, when set, makes this test binary
// tilefit itself (see TestMain), so that tests can run and kill real sweeps.
const testMainEnv = "TILEFIT_TEST_MAIN"

// childSweeps skips unless sweeps can run in child processes (not -short,
// a C compiler) and returns this test binary, which is tilefit itself when
// testMainEnv is set.
func childSweeps(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("runs sweeps in child processes")
	}
	if _, err := exec.LookPath("cc"); err != nil {
		t.Skip("no C compiler")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

// childSweepArgs is a small CPU sweep (3 tiles × smoke × 4 M) into db.
func childSweepArgs(db string) []string {
	return []string{"sweep", "--db", db, "--tiles", "16_32_1,32_64_2,128_256_2", "--m", "1,37,130,257", "--rounds", "6",
		"--vendor=false", "--report=false"}
}

// cellKeys lists (shape, M, tile) of every stored candidate, sorted, and
// counts duplicates.
func cellKeys(t *testing.T, db string) (keys []string, dups int) {
	t.Helper()
	st, err := store.OpenReadOnly(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cells, err := st.Cells(context.Background(), store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, c := range cells {
		if len(c.Candidates) == 0 {
			t.Errorf("cell %s M=%d stored without candidates", c.Cell.Shape, c.Cell.M)
		}
		for _, cand := range c.Candidates {
			if cand.Status == result.OK && len(cand.Samples) != c.Rounds {
				t.Errorf("%s M=%d %s: %d samples of %d rounds", c.Cell.Shape, c.Cell.M, cand.Tile, len(cand.Samples), c.Rounds)
			}
			k := fmt.Sprintf("%s/%d/%s/%v", c.Cell.Shape, c.Cell.M, cand.Tile, cand.Status)
			if seen[k] {
				dups++
			}
			seen[k] = true
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys, dups
}

// TestSweepSurvivesSIGKILL kills a real sweep process (and its worker) with
// SIGKILL right after it reports its Nth newly measured cell (so while it
// measures the next one), for several N, resuming each time, and checks
// that the final cells equal an uninterrupted run's, with no duplicates and
// no partial cells. The kill points are cell lines of the child's output,
// not moments in time, so the test does not depend on the machine's speed.
func TestSweepSurvivesSIGKILL(t *testing.T) {
	exe := childSweeps(t)
	dir := t.TempDir()
	args := func(db string) []string { return append(childSweepArgs(db), "--seed", "3") }
	// run runs a sweep; killAfter > 0 kills it after that many "done"
	// lines. It reports whether the sweep was killed and how many cells it
	// measured.
	run := func(db string, killAfter int) (killed bool, measured int) {
		cmd := exec.Command(exe, args(db)...)
		cmd.Env = append(os.Environ(), testMainEnv+"=1")
		stderr, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var out strings.Builder
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			out.WriteString(line + "\n")
			if strings.HasPrefix(line, "[") && strings.Contains(line, " done (") {
				if measured++; measured == killAfter {
					cmd.Process.Signal(syscall.SIGKILL)
				}
			}
		}
		err = cmd.Wait()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
			return true, measured
		}
		if err != nil {
			t.Fatalf("sweep failed: %v\n%s", err, out.String())
		}
		return false, measured
	}
	run(filepath.Join(dir, "warm.db"), 0) // fills the compile cache
	clean := filepath.Join(dir, "clean.db")
	_, total := run(clean, 0)
	want, dups := cellKeys(t, clean)
	if dups != 0 || len(want) == 0 {
		t.Fatalf("uninterrupted run: %d keys, %d duplicates", len(want), dups)
	}

	killed := filepath.Join(dir, "killed.db")
	var kills []int
	done := 0
	for _, n := range []int{1, 3, 2, 4} {
		if total-done < n+3 {
			// Keep a margin of cells after the kill point (the kill
			// must land while the sweep still runs) and cells for the
			// final, uninterrupted resume.
			break
		}
		k, measured := run(killed, n)
		done += measured
		if !k {
			t.Fatalf("the sweep finished instead of being killed after cell %d", n)
		}
		kills = append(kills, done)
	}
	if len(kills) < 3 {
		t.Fatalf("only %d kills (%d cells in the sweep)", len(kills), total)
	}
	run(killed, 0) // finish whatever is left
	got, dups := cellKeys(t, killed)
	if dups != 0 {
		t.Errorf("%d duplicate results after %d kills", dups, len(kills))
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("after %d kills the cells differ from an uninterrupted run:\ngot  %v\nwant %v", len(kills), got, want)
	}
	t.Logf("killed after %v of %d cells; final cells equal an uninterrupted run, no duplicates", kills, total)
}

// TestSweepInterruptResumes sends SIGINT (Ctrl-C) to a running sweep: the
// first asks it to stop after the cell in flight, which is saved; it exits
// 130 and says how to resume; the same command then finishes the sweep
// without measuring any stored cell again. A second SIGINT stops at once.
func TestSweepInterruptResumes(t *testing.T) {
	exe := childSweeps(t)
	args := childSweepArgs
	// interrupt starts a sweep, sends n SIGINTs once the first cell is
	// stored, and returns its exit code and stderr.
	interrupt := func(db string, n int) (int, string) {
		cmd := exec.Command(exe, args(db)...)
		cmd.Env = append(os.Environ(), testMainEnv+"=1")
		var errb syncBuffer
		cmd.Stderr = &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(60 * time.Second)
		for !strings.Contains(errb.String(), "[1/") && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		for i := 0; i < n; i++ {
			cmd.Process.Signal(os.Interrupt)
			time.Sleep(50 * time.Millisecond)
		}
		cmd.Wait()
		return cmd.ProcessState.ExitCode(), errb.String()
	}

	db := filepath.Join(t.TempDir(), "i.db")
	code, stderr := interrupt(db, 1)
	if code == 0 {
		t.Skipf("the sweep finished before the interrupt arrived: %s", stderr)
	}
	if code != ExitInterrupted || !strings.Contains(stderr, "finishes and saves the cell in flight") || !strings.Contains(stderr, "run the same command again to resume") {
		t.Fatalf("interrupted sweep: exit %d\n%s", code, stderr)
	}
	// Every cell reported done is stored, and only those: the cell in
	// flight at the interrupt was finished and saved, not dropped.
	st, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	cells, err := st.Cells(context.Background(), store.Filter{})
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	if reported := strings.Count(stderr, " done ("); len(cells) != reported || reported < 1 {
		t.Fatalf("%d cells stored, %d reported done\n%s", len(cells), reported, stderr)
	}
	before, _ := cellKeys(t, db)
	var out, errb2 bytes.Buffer
	if code := Run(context.Background(), args(db), &out, &errb2); code != 0 {
		t.Fatalf("resume: exit %d\n%s", code, errb2.String())
	}
	after, dups := cellKeys(t, db)
	if dups != 0 || len(after) <= len(before) || !strings.Contains(errb2.String(), "already stored") {
		t.Fatalf("resume: %d → %d results, %d duplicates\n%s", len(before), len(after), dups, errb2.String())
	}

	// Interrupting twice stops at once: the cell in flight is not saved.
	db2 := filepath.Join(t.TempDir(), "j.db")
	code, stderr = interrupt(db2, 2)
	if code != ExitInterrupted || !strings.Contains(stderr, "sweep interrupted") {
		t.Fatalf("twice-interrupted sweep: exit %d\n%s", code, stderr)
	}
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader goroutine.
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
