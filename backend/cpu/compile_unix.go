//go:build unix

package cpu

import (
	"context"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"syscall"
	"time"
)

// compileScript runs the compiler ("$@" after the limits) under /bin/sh in
// a process group of its own: it sets the limits every process of the
// compile inherits (address space in KiB, CPU seconds, file size in
// 512-byte blocks), starts the compiler and waits for it; when the shell is
// told to stop (SIGTERM: the process that started it died, see
// compilerAttr; or SIGHUP, SIGINT) it stops the whole group — the
// compiler driver and what it started (cc1, as, ld) — first politely (GCC
// removes its temporary files), then with SIGKILL.
const compileScript = `ulimit -v "$1" 2>/dev/null; ulimit -t "$2" 2>/dev/null; ulimit -f "$3" 2>/dev/null; shift 3
trap 'trap "" TERM HUP INT; kill -TERM 0 2>/dev/null; sleep 1; kill -KILL 0' TERM HUP INT
"$@" &
wait $!`

// compileFileLimit bounds what one compile may write to one file (the
// shared object, its log): 1 GiB.
const compileFileLimit = 1 << 30

// runCompiler runs argv (the compiler and its arguments) in dir as a
// compile: stdin is /dev/null, stdout and stderr go to logFile (a file,
// never a pipe: a source that includes /proc/self/fd/1 reads a file, not
// a pipe it holds itself), limited to o's memory and time; env is added
// to the environment (TMPDIR). The compile's process group is killed when
// ctx ends or the time limit passes, and — on Linux — when the thread
// that started it dies with its process (a killed worker or sweep).
func runCompiler(parent context.Context, o limits, argv []string, env []string, logFile *os.File) error {
	ctx, cancel := context.WithTimeout(parent, o.timeout)
	defer cancel()
	args := append([]string{"-c", compileScript, "tilefit-cc",
		strconv.FormatInt(o.memory>>10, 10), strconv.Itoa(int(o.timeout.Seconds()) + 1), strconv.FormatInt(compileFileLimit/512, 10)}, argv...)
	cmd := exec.CommandContext(ctx, "/bin/sh", args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = compilerAttr()
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	// The parent-death signal follows the thread that started the
	// process: keep it alive (and this goroutine on it) until the
	// compile ends.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	err := cmd.Run()
	if err != nil && cmd.Process != nil {
		// Whatever a failed compile left in its group (a driver killed
		// before its children; they keep the group's id in use) goes too.
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	if ctx.Err() != nil && parent.Err() == nil {
		return errCompileTimeout
	}
	return err
}
