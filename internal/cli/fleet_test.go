package cli

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/tilefit/tilefit/internal/pgtest"
	"github.com/tilefit/tilefit/store"
)

// fleetArgs is the plan the fleet tests share: 3 CPU tiles × the smoke
// workload × 4 M = 20 cells.
func fleetArgs(db string, extra ...string) []string {
	return append(append(childSweepArgs(db), "--seed", "5"), extra...)
}

// sweepChild runs a sweep process; onLine sees each stderr line (and may
// kill the process). It returns whether SIGKILL ended it, and its stderr.
func sweepChild(t *testing.T, exe string, args []string, onLine func(line string, p *os.Process)) (killed bool, out string) {
	t.Helper()
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), testMainEnv+"=1")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		b.WriteString(sc.Text() + "\n")
		if onLine != nil {
			onLine(sc.Text(), cmd.Process)
		}
	}
	err = cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
		return true, b.String()
	}
	if err != nil {
		t.Errorf("sweep %v failed: %v\n%s", args, err, b.String())
	}
	return false, b.String()
}

// reportOf runs tilefit report on db, with the time it was generated
// taken out.
func reportOf(t *testing.T, db string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := Run(context.Background(), []string{"report", "--db", db}, &stdout, &stderr); code != ExitOK {
		t.Fatalf("report --db %s: exit %d: %s", db, code, stderr.String())
	}
	return generatedAt.ReplaceAllString(stdout.String(), "(generated)")
}

var generatedAt = regexp.MustCompile(`(?m)^(Generated|\| generated \|) [0-9-]+ [0-9:]+ UTC`)

// TestFleetSIGKILL is issue 12's acceptance test against a real PostgreSQL
// server: four sweep processes work on one plan through claims; the first
// to report its second claimed cell is killed with SIGKILL while it
// measures it (a cell-line count, not a time). The others take its cell
// once its lease (2 s) ends, and the database ends with exactly the cells
// of one uninterrupted run, no duplicates. A SQLite copy of the server's
// data (tilefit db copy) gives the same report as the server.
func TestFleetSIGKILL(t *testing.T) {
	exe := childSweeps(t)
	pg := pgtest.Schema(t)
	dir := t.TempDir()
	clean := filepath.Join(dir, "clean.db")
	sweepChild(t, exe, fleetArgs(clean), nil) // also warms the compile cache
	want, dups := cellKeys(t, clean)
	if dups != 0 || len(want) < 80 {
		t.Fatalf("uninterrupted run: %d results, %d duplicates; want 20 cells × 4 tiles and A/A twins", len(want), dups)
	}

	var mu sync.Mutex
	victim, lastClaim := -1, ""
	claims := make([]int, 4)
	killed := make([]bool, 4)
	outs := make([]string, 4)
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			killed[i], outs[i] = sweepChild(t, exe, fleetArgs(pg, "--lease", "2s"), func(line string, p *os.Process) {
				if !strings.HasPrefix(line, "claimed ") {
					return
				}
				mu.Lock()
				defer mu.Unlock()
				claims[i]++
				if victim < 0 && claims[i] == 2 {
					victim, lastClaim = i, strings.TrimPrefix(line, "claimed ")
					p.Signal(syscall.SIGKILL)
				}
			})
		}()
	}
	wg.Wait()
	if victim < 0 {
		t.Fatalf("no process claimed two cells (claims %v)", claims)
	}
	for i := range 4 {
		if killed[i] != (i == victim) {
			t.Errorf("process %d: killed %v, victim %d\n%s", i, killed[i], victim, outs[i])
		}
	}
	got, dups := cellKeys(t, pg)
	if dups != 0 {
		t.Errorf("%d duplicate results", dups)
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("after the kill the server holds other cells than an uninterrupted run:\ngot  %v\nwant %v", got, want)
	}
	st, err := store.OpenReadOnly(context.Background(), pg)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := st.Claims(context.Background(), "")
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	retaken := ""
	for _, c := range cl {
		if c.State != "done" {
			t.Errorf("claim %s is %s after every process ended", c.Name, c.State)
		}
		if c.Tries > 1 {
			retaken += c.Name + " "
		}
	}
	if len(cl) != 20 {
		t.Errorf("%d claims, want 20", len(cl))
	}
	// The victim was killed right after claiming a cell: that cell was
	// normally in flight and is taken again after its lease; should the
	// cell have been saved in the moment before the signal landed, no
	// cell is taken twice — both end with the same cells, checked above.
	t.Logf("process %d killed after claiming %s; cells taken again after their lease ended: %q", victim, lastClaim, retaken)

	copyDB := filepath.Join(dir, "copy.db")
	var stdout, stderr bytes.Buffer
	if code := Run(context.Background(), []string{"db", "copy", "--from", pg, "--to", copyDB}, &stdout, &stderr); code != ExitOK {
		t.Fatalf("db copy: exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), fmt.Sprintf("copied 20 cells (%d candidates", len(want))) {
		t.Errorf("db copy said %q", stdout.String())
	}
	if fromCopy, fromServer := reportOf(t, copyDB), reportOf(t, pg); fromCopy != fromServer {
		t.Errorf("the SQLite copy's report differs from the server's:\n%s\n----\n%s", fromCopy, fromServer)
	}
	if got, _ := cellKeys(t, copyDB); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the copy holds other cells: %v", got)
	}
	stdout.Reset()
	Run(context.Background(), []string{"db", "copy", "--from", pg, "--to", copyDB}, &stdout, &stderr)
	if !strings.Contains(stdout.String(), "copied 0 cells") || !strings.Contains(stdout.String(), "20 cells were there already") {
		t.Errorf("copying again: %q", stdout.String())
	}
}

// TestSharedSQLiteSweeps: two sweeps with --claim share one SQLite file
// (IMMEDIATE transactions stand in for SKIP LOCKED) and store one run's
// cells between them, no duplicates. (That a sweep without --claim is kept
// out meanwhile is store.TestLockShared's.)
func TestSharedSQLiteSweeps(t *testing.T) {
	exe := childSweeps(t)
	dir := t.TempDir()
	clean := filepath.Join(dir, "clean.db")
	sweepChild(t, exe, fleetArgs(clean), nil)
	want, _ := cellKeys(t, clean)
	shared := filepath.Join(dir, "shared.db")
	var wg sync.WaitGroup
	outs := make([]string, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, outs[i] = sweepChild(t, exe, fleetArgs(shared, "--claim"), nil)
		}()
	}
	wg.Wait()
	got, dups := cellKeys(t, shared)
	if dups != 0 || strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("two shared sweeps stored (%d duplicates)\n%v\nwant\n%v\n%s\n%s", dups, got, want, outs[0], outs[1])
	}
	for i, out := range outs {
		if !strings.Contains(out, "by other workers") && !strings.Contains(out, "swept 20 cells") {
			t.Errorf("sweep %d does not account for the cells: %s", i, out)
		}
	}
}
