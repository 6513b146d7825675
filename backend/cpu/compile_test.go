//go:build linux

package cpu

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tilefit/tilefit/backend"
)

// hostileHelperEnv, when set to "CACHE|SOURCE", makes the test binary
// compile SOURCE with the system compiler in CACHE and print "compiling"
// first: a compile to be killed with its process.
const hostileHelperEnv = "TILEFIT_CPU_HOSTILE_HELPER"

func hostileHelper(spec string) int {
	cache, src, _ := strings.Cut(spec, "|")
	c, err := New(Options{CacheDir: cache})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	fmt.Println("compiling")
	_, err = c.Compile(context.Background(), backend.Program{Family: "f", Source: src, Defines: []string{"A=1"}})
	fmt.Fprintln(os.Stderr, "compile returned:", err)
	return 4
}

// compileProcs lists the live processes whose command line names dir
// (the compile of a test's own cache: the shell, the driver, cc1, as, ld).
func compileProcs(dir string) []string {
	ents, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cmd, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !bytes.Contains(cmd, []byte(dir)) {
			continue
		}
		st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if i := bytes.LastIndexByte(st, ')'); err != nil || i < 0 || i+2 >= len(st) || st[i+2] == 'Z' {
			continue // gone, or a zombie waiting to be reaped
		}
		out = append(out, fmt.Sprintf("%d %s", pid, bytes.ReplaceAll(cmd, []byte{0}, []byte{' '})))
	}
	return out
}

// procsGone waits for the processes of dir's compile to end (a killed
// process leaves the table a moment after its signal; the bound is on a
// wait, not a speed target) and returns those still running after a
// minute.
func procsGone(dir string) []string {
	var left []string
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if left = compileProcs(dir); len(left) == 0 {
			break
		}
	}
	return left
}

// compileWithGuard runs c.Compile with a guard against a hang: a compile
// that has not returned after guard fails the test (a stuck compile is the
// defect these tests are about; the guard is not a speed target).
func compileWithGuard(t *testing.T, c *CPU, src string, guard time.Duration) error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := c.Compile(context.Background(), backend.Program{Family: "f", Source: src, Defines: []string{"A=1"}})
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(guard):
		t.Fatalf("the compile did not end within %s (processes: %v)", guard, compileProcs(c.cacheDir))
		return nil
	}
}

// TestCompileIncludingItsOwnOutputEnds (issue 18 item 8): a source that
// includes /proc/self/fd/1 blocked the compiler for good: its stdout was a
// pipe it held itself. Its output goes to a file now, so the compile ends
// (with an error).
func TestCompileIncludingItsOwnOutputEnds(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns compilers")
	}
	c := newCPU(t, Options{CacheDir: t.TempDir()})
	for _, f := range []string{"/proc/self/fd/1", "/proc/self/fd/2", "/proc/self/fd/0"} {
		err := compileWithGuard(t, c, "#include \""+f+"\"\nint x;\n", 3*time.Minute)
		var ce *backend.CompileError
		if err != nil && !errors.As(err, &ce) {
			t.Errorf("%s: %v, want a compile error or success", f, err)
		}
	}
	if left := procsGone(c.cacheDir); len(left) > 0 {
		t.Errorf("processes left: %v", left)
	}
}

// TestCompileTimeLimit (issue 18 item 8): a source that includes a FIFO
// nobody writes blocked the compiler with no limit (the wait was the
// worker's 30 minutes). The compile has a time limit now; past it the
// compile's process group is killed.
func TestCompileTimeLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns compilers")
	}
	fifo := filepath.Join(t.TempDir(), "k.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	c := newCPU(t, Options{CacheDir: t.TempDir(), CompileTimeout: 2 * time.Second})
	err := compileWithGuard(t, c, "#include \""+fifo+"\"\n", 3*time.Minute)
	var ce *backend.CompileError
	if !errors.As(err, &ce) || !errors.Is(err, errCompileTimeout) || !strings.Contains(err.Error(), "time limit") {
		t.Fatalf("compile: %v, want a compile error for the time limit", err)
	}
	if left := procsGone(c.cacheDir); len(left) > 0 {
		t.Errorf("the timed-out compile left processes: %v", left)
	}
}

// TestCompileMemoryLimit (issue 18 item 8): a source that includes
// /dev/zero made the compiler grow until something else killed it. The
// compile's address space is limited now.
func TestCompileMemoryLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns compilers")
	}
	c := newCPU(t, Options{CacheDir: t.TempDir(), CompileMemory: 512 << 20})
	err := compileWithGuard(t, c, "#include \"/dev/zero\"\n", 3*time.Minute)
	var ce *backend.CompileError
	if !errors.As(err, &ce) {
		t.Fatalf("compile: %v, want a compile error", err)
	}
	if left := procsGone(c.cacheDir); len(left) > 0 {
		t.Errorf("processes left: %v", left)
	}
}

// TestCompileDiesWithItsProcess (issue 18 item 8): after SIGKILL of the
// process compiling (a sweep, a worker), cc and cc1 kept running and left
// their temporary files in the kernel cache. The compile now stops when
// its process dies, and the next compile in that cache removes what it
// left.
func TestCompileDiesWithItsProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns compilers")
	}
	newCPU(t, Options{}) // skips without a compiler
	fifo := filepath.Join(t.TempDir(), "k.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), hostileHelperEnv+"="+cache+"|#include \""+fifo+"\"\n")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	buf := make([]byte, 9)
	if _, err := out.Read(buf); err != nil || string(buf) != "compiling" {
		t.Fatalf("helper: %q %v", buf, err)
	}
	// Wait until the compiler itself is blocked on the FIFO.
	for deadline := time.Now().Add(2 * time.Minute); ; {
		if procs := compileProcs(cache); strings.Contains(strings.Join(procs, "\n"), "cc1") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the compiler did not start: %v", compileProcs(cache))
		}
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	// The compile stops within a second or two; allow far more on a
	// loaded machine (a bound on a wait, not a speed target).
	if left := procsGone(cache); len(left) > 0 {
		for _, l := range left {
			if pid, err := strconv.Atoi(strings.Fields(l)[0]); err == nil {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		t.Fatalf("the compile outlived its killed process: %v", left)
	}
	c := newCPU(t, Options{CacheDir: cache})
	if _, err := c.Compile(context.Background(), backend.Program{Family: "f", Source: "int ok;\n", Defines: []string{"A=2"}}); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(cache)
	for _, e := range ents {
		if n := e.Name(); !strings.HasSuffix(n, ".so") && !strings.HasSuffix(n, ".log") {
			t.Errorf("left in the cache after the next compile: %s", n)
		}
	}
}

// TestCompilerDiagnosticsShowNoOtherFile (issue 18 item 12): a source with
// #include "/etc/passwd" stored the file's lines in candidate rows (the
// compiler quotes what it fails on). Diagnostics about files other than
// the source and the compiler's headers are shown by name only.
func TestCompilerDiagnosticsShowNoOtherFile(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns compilers")
	}
	secret := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(secret, []byte("root:TOPSECRET-7731:0:0 is here\nsecond line TOPSECRET-7732\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := newCPU(t, Options{CacheDir: t.TempDir()})
	err := compileWithGuard(t, c, "#include <stdint.h>\n#include \""+secret+"\"\n;\nint after = ;\n", 3*time.Minute)
	var ce *backend.CompileError
	if !errors.As(err, &ce) {
		t.Fatalf("compile: %v, want a compile error", err)
	}
	if strings.Contains(ce.Log, "TOPSECRET") || strings.Contains(err.Error(), "TOPSECRET") {
		t.Errorf("the included file's contents reached the log:\n%s", ce.Log)
	}
	if !strings.Contains(ce.Log, secret+": ") || !strings.Contains(ce.Log, "not shown") {
		t.Errorf("the log does not name the file it hides:\n%s", ce.Log)
	}
	// The source's own error stays: "int after = ;" lacks a value.
	if !strings.Contains(ce.Log, ".c:4:") || !strings.Contains(ce.Log, "int after = ;") {
		t.Errorf("the source's own diagnostics are gone:\n%s", ce.Log)
	}
}
