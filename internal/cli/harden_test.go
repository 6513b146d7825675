package cli

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tilefit/tilefit/store"
)

// TestSecondNameOfDatabase is issue 8's scenario: while a sweep runs on
// h.db, a sweep through a hard link (h2.db), a symbolic link, a relative or
// an absolute path of the same file is refused; a report through the hard
// link changes nothing in the database; the first sweep then finishes with
// every cell intact; and a later sweep through either name of the twice-
// named file is refused (SQLite's write-ahead log is per name).
func TestSecondNameOfDatabase(t *testing.T) {
	exe := childSweeps(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "h.db")
	cmd := exec.Command(exe, childSweepArgs(db)...)
	cmd.Env = append(os.Environ(), testMainEnv+"=1")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	finished := make(chan error, 1)
	var out strings.Builder
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		out.WriteString(sc.Text() + "\n")
		if strings.Contains(sc.Text(), " done (") {
			// Pause the sweep after its first cell, its lock held and
			// the cell in its write-ahead log.
			syscall.Kill(cmd.Process.Pid, syscall.SIGSTOP)
			break
		}
	}
	go func() {
		for sc.Scan() {
			out.WriteString(sc.Text() + "\n")
		}
		finished <- cmd.Wait()
	}()
	t.Cleanup(func() {
		syscall.Kill(cmd.Process.Pid, syscall.SIGCONT)
		cmd.Process.Kill()
	})
	if _, err := store.Lock(db); !errors.Is(err, store.ErrLocked) {
		t.Fatalf("the paused sweep does not hold the lock (%v); its output:\n%s", err, out.String())
	}

	hard := filepath.Join(dir, "h2.db")
	if err := os.Link(db, hard); err != nil {
		t.Fatal(err)
	}
	sym := filepath.Join(t.TempDir(), "s.db")
	if err := os.Symlink(db, sym); err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	for _, name := range []string{hard, "h2.db", sym, "h.db", "./h.db", db} {
		code, _, msg := abRun(t, childSweepArgs(name)...)
		if code != ExitUsage || !strings.Contains(msg, "is in use by another tilefit process (pid "+strconv.Itoa(cmd.Process.Pid)+")") {
			t.Errorf("second sweep through %s: exit %d, want 2 and the first sweep's pid\n%s", name, code, msg)
		}
	}

	read := func(p string) []byte {
		b, err := os.ReadFile(p)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		return b
	}
	mainBefore, walBefore := read(db), read(db+"-wal")
	code, _, msg := abRun(t, "report", "--db", hard)
	if code != ExitOK && code != ExitUsage || strings.Contains(msg, "panic") {
		t.Errorf("report through the hard link: exit %d\n%s", code, msg)
	}
	if !bytes.Equal(read(db), mainBefore) || !bytes.Equal(read(db+"-wal"), walBefore) {
		t.Error("a report through the second name changed the database")
	}
	// Through the symbolic link the report reads the sweep's log: it sees
	// the stored cell.
	code, rep, msg := abRun(t, "report", "--db", sym)
	if code != ExitOK || !strings.Contains(rep, "1 stored cell run") {
		t.Errorf("report through the symbolic link: exit %d\n%s%s", code, rep, msg)
	}

	syscall.Kill(cmd.Process.Pid, syscall.SIGCONT)
	if err := <-finished; err != nil {
		t.Fatalf("the first sweep failed after the refused ones: %v\n%s", err, out.String())
	}
	keys, dups := cellKeys(t, db)
	if n := strings.Count(out.String(), " done ("); dups != 0 || n != 20 || countCells(t, db) != 20 {
		t.Errorf("after the sweep: %d cells stored (want 20), %d duplicates, %d cells reported done\n%s", countCells(t, db), dups, n, out.String())
	}
	// The file has two names now: no sweep writes through either.
	for _, name := range []string{db, hard} {
		code, _, msg := abRun(t, childSweepArgs(name)...)
		if code != ExitUsage || !strings.Contains(msg, "has 2 names (hard links)") {
			t.Errorf("sweep through %s of a twice-named file: exit %d\n%s", name, code, msg)
		}
	}
	if k2, _ := cellKeys(t, hard); len(k2) != len(keys) {
		t.Errorf("read through the hard link after the sweep: %d results, want %d", len(k2), len(keys))
	}
}

// TestFIFOInputsDoNotHang: every input file flag naming a FIFO without a
// writer is refused at once with exit 2 (issue 8: tilefit blocked forever
// and ignored Ctrl-C and SIGTERM). Each runs as a child process with a
// watchdog, so that a hang fails the test instead of blocking it.
func TestFIFOInputsDoNotHang(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	fifo := filepath.Join(dir, "in.fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	for _, args := range [][]string{
		{"sweep", "--source", fifo, "--db", filepath.Join(dir, "a.db")},
		{"sweep", "--workload", fifo, "--db", filepath.Join(dir, "a.db")},
		{"report", "--policy", fifo, "--db", filepath.Join(dir, "a.db")},
		{"select", "--baseline", fifo, "--db", filepath.Join(dir, "a.db")},
		{"ab", "--a", "source:" + fifo, "--b", "tile:64_128_2"},
		{"ab", "--a", "policy:" + fifo, "--b", "tile:64_128_2"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		cmd := exec.CommandContext(ctx, exe, args...)
		cmd.Env = append(os.Environ(), testMainEnv+"=1")
		b, _ := cmd.CombinedOutput()
		timedOut := ctx.Err() != nil
		cancel()
		if timedOut {
			t.Errorf("tilefit %s: still blocked after a minute", strings.Join(args, " "))
			continue
		}
		if code := cmd.ProcessState.ExitCode(); code != ExitUsage || !strings.Contains(string(b), "is a named pipe (FIFO), not a regular file") {
			t.Errorf("tilefit %s: exit %d\n%s", strings.Join(args, " "), code, b)
		}
	}
}

// TestReportOnReadOnlyMedia: a database on read-only media is reported
// (issue 8: "unable to open database file (14)"). The report runs in a
// child process with a mount namespace of its own, the database's directory
// bind-mounted read-only (needs CAP_SYS_ADMIN); as a non-root user a
// read-only directory stands in.
func TestReportOnReadOnlyMedia(t *testing.T) {
	exe := childSweeps(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "ro.db")
	args := []string{"sweep", "--db", db, "--tiles", "16_32_1", "--m", "37", "--rounds", "6", "--vendor=false", "--aa=false", "--report=false"}
	if code, _, msg := abRun(t, args...); code != ExitOK {
		t.Fatalf("sweep: exit %d\n%s", code, msg)
	}
	before := listDir(t, dir)
	var out []byte
	code := 0
	if os.Geteuid() == 0 {
		cmd := exec.Command(exe, "report", "--db", db)
		cmd.Env = append(os.Environ(), testMainEnv+"=1", readOnlyMediaEnv+"="+dir)
		cmd.SysProcAttr = readOnlyMediaAttr()
		out, _ = cmd.CombinedOutput()
		if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() == 7 {
			t.Skipf("cannot make read-only media here: %s", out)
		}
		code = cmd.ProcessState.ExitCode()
	} else {
		os.Chmod(db, 0o444)
		os.Chmod(dir, 0o555)
		defer os.Chmod(dir, 0o755)
		var stdout, stderr bytes.Buffer
		code = Run(context.Background(), []string{"report", "--db", db}, &stdout, &stderr)
		out = append(stdout.Bytes(), stderr.Bytes()...)
	}
	if code != ExitOK || !strings.Contains(string(out), "16_32_1") {
		t.Errorf("report on read-only media: exit %d\n%s", code, out)
	}
	if after := listDir(t, dir); after != before {
		t.Errorf("the report changed files:\n%s\nto\n%s", before, after)
	}
}

func countCells(t *testing.T, db string) int {
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
	return len(cells)
}

// TestRefusedWithTheRealRule: issue 8's bad inputs are refused (exit 2)
// before any work, each with a message naming the real rule or limit and
// the same message in every verb; nothing else (the database path points
// into a missing directory, so a run that got past them would fail there
// with another message).
func TestRefusedWithTheRealRule(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "missing", "t.db")
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	empty, blank := write("empty.c", ""), write("blank.c", "  \n\t\n")
	big := filepath.Join(dir, "big.c")
	if err := sparseFile("big.c", 70<<20)(dir); err != nil {
		t.Fatal(err)
	}
	wl := write("w.yaml", "name: w\nm: [5]\nshapes:\n  - {name: a, n: 8, k: 8}\n")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"sweep", "--tiles", ",,"}, `--tiles: item 1 of ",," is empty`},
		{[]string{"sweep", "--m", "5,5"}, "--m: m[1]: duplicate value 5 (also m[0])"},
		{[]string{"sweep", "--m", "99999999999999999999"}, "--m: m[0]: 99999999999999999999 is out of range: M must be in 1..1048576"},
		{[]string{"sweep", "--max-samples", "0"}, "--max-samples: want at least 1 element"},
		{[]string{"sweep", "--source", empty}, "--source: source file " + empty + " is empty"},
		{[]string{"sweep", "--source", blank}, "--source: source file " + blank + " is empty"},
		{[]string{"ab", "--a", "source:" + blank, "--b", "tile:64_128_2"}, "--a: source file " + blank + " is empty"},
		{[]string{"sweep", "--source", "/dev/null"}, "--source: source file /dev/null is a character device, not a regular file"},
		{[]string{"ab", "--a", "source:/dev/null", "--b", "tile:64_128_2"}, "--a: source file /dev/null is a character device, not a regular file"},
		{[]string{"sweep", "--source", big}, "--source: source file " + big + " is 70.0 MiB, over the 1.0 MiB limit for a source file"},
	} {
		args := append(c.args, "--workload", wl)
		if args[0] == "sweep" {
			args = append(args, "--db", db, "--isolate=false")
		}
		code, _, stderr := runSafe(t, c.want, args...)
		if code != ExitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("tilefit %s: exit %d\n%s\nwant exit 2 and %q", strings.Join(args, " "), code, stderr, c.want)
		}
	}
}
