package tune

import "syscall"

// workerAttr puts the worker in its own process group (so that it can be
// killed with everything it started) and has the kernel kill it when the
// parent dies, so a SIGKILLed sweep leaves no worker behind.
func workerAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
