//go:build unix

package cpu

import (
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

	"github.com/tilefit/tilefit/backend"
)

// compileHelperEnv, when set to a cache directory, makes the test binary
// compile one program there with the fake compiler of $FAKECC (which hangs
// once it has started writing its output) — a compile to be killed.
const compileHelperEnv = "TILEFIT_CPU_COMPILE_HELPER"

func TestMain(m *testing.M) {
	if spec := os.Getenv(hostileHelperEnv); spec != "" {
		os.Exit(hostileHelper(spec))
	}
	if dir := os.Getenv(compileHelperEnv); dir != "" {
		c, err := New(Options{CC: os.Getenv("FAKECC"), CacheDir: dir})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(3)
		}
		_, err = c.Compile(context.Background(), backend.Program{Family: "f", Source: "int hang;\n", Defines: []string{"A=1"}})
		fmt.Fprintln(os.Stderr, "compile returned:", err)
		os.Exit(4)
	}
	os.Exit(m.Run())
}

// fakeCC writes a compiler that prints a version, writes "partial" to its
// -o file and then, when $FAKECC_HANG names a file, creates that file and
// hangs.
func fakeCC(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "fakecc")
	script := `#!/bin/sh
if [ "$1" = "--version" ]; then echo "fakecc 1.0"; exit 0; fi
out=""; prev=""
for a in "$@"; do [ "$prev" = "-o" ] && out="$a"; prev="$a"; done
echo partial > "$out"
if [ -n "$FAKECC_HANG" ]; then : > "$FAKECC_HANG"; exec sleep 600; fi
`
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func cacheTemps(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		if n := e.Name(); strings.HasSuffix(n, ".c") || strings.HasSuffix(n, ".tmp") {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// A hungCompile is a compile running in a child process, its compiler hung.
type hungCompile struct {
	pid  int
	done chan struct{}
	once *sync.Once
}

// kill SIGKILLs the child and its compiler (one process group) and waits.
func (h hungCompile) kill() {
	h.once.Do(func() {
		syscall.Kill(-h.pid, syscall.SIGKILL)
		<-h.done
	})
}

// startHungCompile starts a compile in a child process and returns once
// the compiler is running (its output file written): killing the child
// then is a kill during compile.
func startHungCompile(t *testing.T, cc, cache string) hungCompile {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(t.TempDir(), "started")
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), compileHelperEnv+"="+cache, "FAKECC="+cc, "FAKECC_HANG="+marker)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	h := hungCompile{pid: cmd.Process.Pid, done: make(chan struct{}), once: new(sync.Once)}
	go func() { cmd.Wait(); close(h.done) }()
	t.Cleanup(h.kill)
	for {
		if _, err := os.Stat(marker); err == nil {
			return h
		}
		select {
		case <-h.done:
			t.Fatal("the compile helper exited before its compiler started")
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// TestKilledCompileLeavesNoTemps: SIGKILL during a compile (the process and
// its compiler) leaves its temporary source and output in the cache; the
// next compile removes them (issue 8: *.c and *.so.tmp piled up), while the
// temporary files of a compile still running in another process stay.
func TestKilledCompileLeavesNoTemps(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	cc := fakeCC(t)
	cache := t.TempDir()

	killed := startHungCompile(t, cc, cache)
	if got := cacheTemps(t, cache); len(got) != 2 {
		t.Fatalf("a running compile has temporary files %v, want a source and an output", got)
	}
	killed.kill()
	left := cacheTemps(t, cache)
	if len(left) == 0 {
		t.Fatal("the killed compile left nothing to clean (the test would prove nothing)")
	}

	live := startHungCompile(t, cc, cache)
	liveTemps := cacheTemps(t, cache)

	c, err := New(Options{CC: cc, CacheDir: cache})
	if err != nil {
		t.Fatal(err)
	}
	a, err := c.Compile(context.Background(), backend.Program{Family: "f", Source: "int ok;\n", Defines: []string{"A=2"}})
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(a.Path); err != nil || string(b) != "partial\n" {
		t.Fatalf("artifact %s: %q, %v", a.Path, b, err)
	}
	got := cacheTemps(t, cache)
	var liveLeft []string
	for _, n := range liveTemps {
		if !contains(left, n) {
			liveLeft = append(liveLeft, n)
		}
	}
	if strings.Join(got, " ") != strings.Join(liveLeft, " ") {
		t.Errorf("after the next compile the cache holds temporary files %v; want only the live compile's %v (the killed one left %v)", got, liveLeft, left)
	}
	live.kill()
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
