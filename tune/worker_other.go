//go:build !linux

package tune

import "syscall"

// workerAttr puts the worker in its own process group.
func workerAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
