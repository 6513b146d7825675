//go:build unix

package store

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// Lock takes the exclusive sweep lock of the database at path: an advisory
// flock(2) on the database file itself (created empty when it does not
// exist), so that every name of the file — relative or absolute paths,
// symbolic links, hard links — meets the same lock. It fails at once
// (wrapping ErrLocked, with the holder's pid where /proc/locks tells it) when
// another process, or another Lock in this process, holds it, and refuses
// what Open would refuse as a path (empty, a missing directory, a directory,
// a device or FIFO) without creating anything.
//
// The lock is released by unlock or when the process exits, however it
// exits. unlock closes the file, and closing any descriptor of a file drops
// the POSIX locks SQLite holds on it in this process: call unlock only after
// every Store on the file is closed (OpenLocked's Close does). A file that
// Lock created and that is still empty at unlock is removed, so a refused
// sweep leaves nothing behind.
//
// flock and SQLite's fcntl locks do not interact on local file systems. On
// NFS, Linux emulates flock with fcntl locks; there a sweep's lock also
// blocks readers of the same database (SQLite on NFS is unreliable anyway).
func Lock(path string) (unlock func() error, err error) {
	return lock(path, syscall.LOCK_EX)
}

// LockShared is Lock's shared form, for sweeps that claim their cells in
// the database (several share one file): any number of shared holders at
// once, none while an exclusive Lock is held and no Lock while one is.
func LockShared(path string) (unlock func() error, err error) {
	return lock(path, syscall.LOCK_SH)
}

func lock(path string, how int) (unlock func() error, err error) {
	t, err := inspect(path)
	if err != nil {
		return nil, err
	}
	var f *os.File
	created := false
	if t.fi == nil {
		f, err = os.OpenFile(t.real, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
		switch {
		case err == nil:
			created = true
		case errors.Is(err, fs.ErrExist):
			// Created by someone else since inspect: lock theirs.
		default:
			return nil, fmt.Errorf("create database %s: %w", path, err)
		}
	}
	if f == nil {
		if f, err = os.Open(t.real); err != nil {
			return nil, fmt.Errorf("lock database %s: %w", path, err)
		}
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		f.Close()
		if err == nil {
			err = fmt.Errorf("is %s, not a regular file", describeMode(fi.Mode()))
		}
		return nil, fmt.Errorf("lock database %s: %w", path, err)
	}
	discard := func() {
		f.Close()
		if created {
			os.Remove(t.real)
		}
	}
	if err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB); err != nil {
		discard()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			pid := "unknown"
			if p, ok := lockHolder(fi); ok {
				pid = strconv.Itoa(p)
			}
			if how == syscall.LOCK_SH {
				return nil, &dbError{
					msg:  fmt.Sprintf("database %s is in use by a tilefit sweep that does not share it (pid %s); wait for it to finish, or run every sweep on the file with --claim", path, pid),
					kind: ErrLocked,
				}
			}
			return nil, &dbError{
				msg:  fmt.Sprintf("database %s is in use by another tilefit process (pid %s); wait for it to finish or pass another --db", path, pid),
				kind: ErrLocked,
			}
		}
		return nil, fmt.Errorf("lock database %s: %w", path, err)
	}
	// The name must still lead to the locked file (not replaced meanwhile).
	if now, err := os.Stat(t.real); err != nil || !os.SameFile(now, fi) {
		discard()
		return nil, fmt.Errorf("lock database %s: the file was replaced while it was being locked; try again", path)
	}
	released := false
	return func() error {
		if released {
			return nil
		}
		released = true
		if created {
			if st, err := f.Stat(); err == nil && st.Size() == 0 {
				if _, err := os.Lstat(t.real + "-wal"); errors.Is(err, fs.ErrNotExist) {
					if now, err := os.Stat(t.real); err == nil && os.SameFile(now, st) {
						os.Remove(t.real)
					}
				}
			}
		}
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

func describeMode(m fs.FileMode) string {
	if m.IsDir() {
		return "a directory"
	}
	return "a " + m.Type().String()
}

// lockHolder finds the pid holding a flock on the file fi describes, from
// Linux's /proc/locks ("1: FLOCK ADVISORY WRITE 1234 08:01:56789 0 EOF").
// Elsewhere, or when the file cannot be matched, it reports false.
func lockHolder(fi fs.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	f, err := os.Open("/proc/locks")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	dev := uint64(st.Dev)
	major := (dev>>8)&0xfff | (dev>>32)&^0xfff
	minor := dev&0xff | (dev>>12)&^0xff
	exact := fmt.Sprintf("%02x:%02x:%d", major, minor, uint64(st.Ino))
	ino := ":" + strconv.FormatUint(uint64(st.Ino), 10)
	var byInode []int
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		// Waiters are listed as "1: -> FLOCK ..."; skip them.
		if len(fields) < 6 || fields[1] != "FLOCK" || (fields[3] != "WRITE" && fields[3] != "READ") {
			continue
		}
		pid, err := strconv.Atoi(fields[4])
		if err != nil || pid <= 0 {
			continue
		}
		if fields[5] == exact {
			return pid, true
		}
		if strings.HasSuffix(fields[5], ino) {
			byInode = append(byInode, pid)
		}
	}
	// Some file systems (overlays) report another device number: accept
	// an inode match when it is the only one.
	if len(byInode) == 1 {
		return byInode[0], true
	}
	return 0, false
}

// linkCount is the number of names (hard links) of the file fi describes.
func linkCount(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}

// dirWritable reports whether files can be created in dir (false on
// read-only media).
func dirWritable(dir string) bool {
	return syscall.Access(dir, 2 /* W_OK */) == nil
}
