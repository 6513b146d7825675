package tune

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// workerAttr starts the worker in a session of its own (so that it, and
// every process it starts that does not leave the session — compilers in
// their own process groups included — can be found and killed with it)
// and has the kernel kill it when the parent dies, so a SIGKILLed sweep
// leaves no worker behind.
func workerAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
}

// killWorkerProcesses SIGKILLs every process of the worker's session
// (session id = the worker's pid; 0: none) and every process whose
// environment holds token (the worker's TILEFIT_WORKER_TOKEN=…, inherited by what it
// starts), which finds those that left the session with setsid(2). It
// reads /proc; processes of other users are not readable and not touched.
// It returns once every process it signalled has ended (or is a zombie
// waiting for its reaper), or after killWait: SIGKILL is delivered
// asynchronously, and a caller that reads /proc right after (a sweep that
// promises nothing the worker started outlives it) must not find one
// still running.
func killWorkerProcesses(worker int, token string) {
	var killed []string
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return
	}
	self := os.Getpid()
	tok := []byte(token)
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self || pid <= 1 {
			continue
		}
		dir := "/proc/" + e.Name()
		if sid, ok := sessionOf(dir); ok && worker > 0 && sid == worker {
			if syscall.Kill(pid, syscall.SIGKILL) == nil {
				killed = append(killed, dir)
			}
			continue
		}
		env, err := os.ReadFile(dir + "/environ")
		if err != nil {
			continue
		}
		for _, kv := range bytes.Split(env, []byte{0}) {
			if bytes.Equal(kv, tok) {
				if syscall.Kill(pid, syscall.SIGKILL) == nil {
					killed = append(killed, dir)
				}
				break
			}
		}
	}
	for end := time.Now().Add(killWait); len(killed) > 0 && time.Now().Before(end); {
		if running(killed[0]) {
			time.Sleep(time.Millisecond)
			continue
		}
		killed = killed[1:]
	}
}

// killWait bounds how long killWorkerProcesses waits for the processes it
// signalled to end (a process in uninterruptible sleep ends only when
// its I/O does).
const killWait = 5 * time.Second

// sessionOf reads the session id from /proc/PID/stat (the field after
// ppid and pgrp, which follow the command name in parentheses).
func sessionOf(dir string) (int, bool) {
	b, err := os.ReadFile(dir + "/stat")
	if err != nil {
		return 0, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 4 {
		return 0, false
	}
	sid, err := strconv.Atoi(f[3])
	return sid, err == nil
}

// niceSelf lowers the priority of every thread of this process to nice n
// (Linux's setpriority acts on one thread; a thread started later inherits
// the nice value of the thread that starts it, and every thread is niced:
// twice over, for one started while the first pass ran).
func niceSelf(n int) error {
	for pass := 0; pass < 2; pass++ {
		tasks, err := os.ReadDir("/proc/self/task")
		if err != nil {
			return err
		}
		for _, t := range tasks {
			tid, err := strconv.Atoi(t.Name())
			if err != nil {
				continue
			}
			if err := syscall.Setpriority(syscall.PRIO_PROCESS, tid, n); err != nil && err != syscall.ESRCH {
				return err
			}
		}
	}
	return nil
}
