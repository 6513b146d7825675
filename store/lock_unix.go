//go:build unix

package store

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// Lock takes the exclusive sweep lock of the database at path: an advisory
// flock(2) on path+".lock", which also records the holder's pid. It fails at
// once (wrapping ErrLocked) when another process — or another Lock in this
// process — holds it. The lock is released by unlock or when the process
// exits, however it exits; the lock file itself is left in place.
func Lock(path string) (unlock func() error, err error) {
	name := path + ".lock"
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock database %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			pid := "unknown"
			if b, rerr := io.ReadAll(io.LimitReader(f, 32)); rerr == nil {
				if p := strings.TrimSpace(string(b)); p != "" {
					if _, aerr := strconv.Atoi(p); aerr == nil {
						pid = p
					}
				}
			}
			return nil, &dbError{
				msg:  fmt.Sprintf("database %s is in use by another tilefit process (pid %s); wait for it to finish or pass another --db", path, pid),
				kind: ErrLocked,
			}
		}
		return nil, fmt.Errorf("lock database %s: %w", path, err)
	}
	// Record our pid for the message another process gets.
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	released := false
	return func() error {
		if released {
			return nil
		}
		released = true
		f.Truncate(0)
		uerr := syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		cerr := f.Close()
		if uerr != nil {
			return fmt.Errorf("unlock database %s: %w", path, uerr)
		}
		if cerr != nil {
			return fmt.Errorf("unlock database %s: %w", path, cerr)
		}
		return nil
	}, nil
}
