//go:build !linux

package tune

import "syscall"

// workerAttr puts the worker in a session (and process group) of its own.
func workerAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }

// killWorkerProcesses kills the worker's process group (there is no /proc
// to find the rest of its session by).
func killWorkerProcesses(worker int, token string) {
	if worker > 0 {
		syscall.Kill(-worker, syscall.SIGKILL)
	}
}

// niceSelf lowers this process's priority to nice n.
func niceSelf(n int) error { return syscall.Setpriority(syscall.PRIO_PROCESS, 0, n) }
