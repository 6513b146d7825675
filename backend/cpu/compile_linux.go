package cpu

import "syscall"

// compilerAttr starts a compile in a process group of its own, told to
// stop (SIGTERM) when the thread that started it dies.
func compilerAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
