//go:build !unix

package store

import (
	"io/fs"
	"os"
)

// Lock is a no-op where flock(2) is not available: there, run one sweep per
// database at a time. It refuses what Open would refuse as a path.
func Lock(path string) (unlock func() error, err error) {
	if _, err := inspect(path); err != nil {
		return nil, err
	}
	return func() error { return nil }, nil
}

// LockShared is Lock's shared form; a no-op here as Lock is.
func LockShared(path string) (unlock func() error, err error) { return Lock(path) }

func linkCount(fs.FileInfo) uint64 { return 1 }

func dirWritable(dir string) bool {
	f, err := os.CreateTemp(dir, ".tilefit-probe-*")
	if err != nil {
		return false
	}
	f.Close()
	os.Remove(f.Name())
	return true
}
