//go:build unix

package cpu

import (
	"errors"
	"os"
	"syscall"
)

// lockTemp takes a shared flock on a temporary source file for as long as it
// is open: a cleaner that can take an exclusive lock knows no compile is
// using it.
func lockTemp(f *os.File) {
	syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
}

// tempUnlocked reports whether no process holds the lock of the temporary
// file at path.
func tempUnlocked(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil
}

// processAlive reports whether a process with this pid exists (one of
// another user counts as alive).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
