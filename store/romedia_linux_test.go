package store

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// roHelperEnv, when set to a database path, makes the test binary (started
// in a mount namespace of its own) bind-mount the database's directory
// read-only over itself and read the database: read-only media.
const roHelperEnv = "TILEFIT_STORE_RO_HELPER"

func roHelper(path string) int {
	dir := filepath.Dir(path)
	if err := syscall.Mount(dir, dir, "", syscall.MS_BIND, ""); err != nil {
		fmt.Println("mount:", err)
		return 7
	}
	if err := syscall.Mount("", dir, "", syscall.MS_REMOUNT|syscall.MS_BIND|syscall.MS_RDONLY, ""); err != nil {
		fmt.Println("mount:", err)
		return 7
	}
	if f, err := os.Create(filepath.Join(dir, "probe")); err == nil || !errors.Is(err, syscall.EROFS) {
		f.Close()
		fmt.Println("the bind mount is not read-only:", err)
		return 7
	}
	return readCells(path)
}

func readCells(path string) int {
	ctx := context.Background()
	s, err := OpenReadOnly(ctx, path)
	if err != nil {
		fmt.Println(err)
		return 5
	}
	defer s.Close()
	cells, err := s.Cells(ctx, Filter{})
	if err != nil {
		fmt.Println(err)
		return 5
	}
	fmt.Printf("cells %d\n", len(cells))
	return 0
}

// TestReadOnlyMedia: a database on read-only media can be read (issue 8:
// "unable to open database file (14)"), whether it was closed cleanly (no
// -wal file; SQLite cannot create the -shm a WAL reader needs) or its
// writer was killed (the -wal file holds committed cells). Runs in a mount
// namespace with a read-only bind mount (needs CAP_SYS_ADMIN); as a
// non-root user, a read-only directory and file stand in.
//
// Issue 18 item 7: a -wal file without its -shm (copied onto the media
// without it, or the writer's -shm removed) used to be read as immutable,
// which ignores the -wal: its committed cells were silently missing. They
// are read from a private copy now.
func TestReadOnlyMedia(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, tc := range []struct{ killed, noSHM bool }{{false, false}, {true, false}, {true, true}} {
		killed := tc.killed
		dir := t.TempDir()
		path := filepath.Join(dir, "ro.db")
		want := 3
		if killed {
			want = killWriterAfter(t, exe, path, 3)
			if _, err := os.Stat(path + "-wal"); err != nil {
				t.Fatalf("the killed writer left no -wal file: %v", err)
			}
			if tc.noSHM {
				if err := os.Remove(path + "-shm"); err != nil {
					t.Fatal(err)
				}
			}
		} else {
			s, err := Open(ctx, path)
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < want; i++ {
				if _, err := s.SaveCell(ctx, testCell(cpuProv, fmt.Sprintf("S%d", i), 256, 4, time.Unix(1, 0).UTC())); err != nil {
					t.Fatal(err)
				}
			}
			s.Close()
		}
		before := dirState(t, dir)
		var out string
		if os.Geteuid() == 0 {
			cmd := exec.Command(exe, "-test.run=^$")
			cmd.Env = append(os.Environ(), roHelperEnv+"="+path)
			cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS}
			b, err := cmd.CombinedOutput()
			if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() == 7 || cmd.ProcessState.ExitCode() < 0 {
				t.Skipf("cannot make read-only media here (mount namespace): %v %s", err, b)
			}
			out = strings.TrimSpace(string(b))
		} else {
			for _, p := range []string{path, path + "-wal", path + "-shm"} {
				os.Chmod(p, 0o444)
			}
			os.Chmod(dir, 0o555)
			r, w, _ := os.Pipe()
			stdout := os.Stdout
			os.Stdout = w
			readCells(path)
			os.Stdout = stdout
			w.Close()
			b := make([]byte, 4096)
			n, _ := r.Read(b)
			out = strings.TrimSpace(string(b[:n]))
			os.Chmod(dir, 0o755)
		}
		if got := fmt.Sprintf("cells %d", want); out != got {
			t.Errorf("killed=%v no -shm=%v: reading on read-only media: %q, want %q", killed, tc.noSHM, out, got)
		}
		if after := dirState(t, dir); after != before {
			t.Errorf("killed=%v no -shm=%v: reading changed the directory:\n%s\nto\n%s", killed, tc.noSHM, before, after)
		}
	}
}

// killWriterAfter runs the kill helper (a writer saving cells until killed)
// on path, SIGKILLs it once n cells are committed, and returns how many
// cells the database holds (read without changing anything: the -wal file
// is left as the killed writer left it).
func killWriterAfter(t *testing.T, exe, path string, n int) int {
	t.Helper()
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	for lines := 0; lines < n+1 && sc.Scan(); lines++ { // "ready", then an id per commit
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	s, err := OpenReadOnly(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cells, err := s.Cells(context.Background(), Filter{})
	if err != nil || len(cells) < n {
		t.Fatalf("after the kill: %d cells, %v", len(cells), err)
	}
	return len(cells)
}
