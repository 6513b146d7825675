//go:build unix && !linux

package cpu

import "syscall"

// compilerAttr starts a compile in a process group of its own.
func compilerAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
