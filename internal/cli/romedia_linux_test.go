package cli

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
)

// readOnlyMediaEnv, in a child started with readOnlyMediaAttr, names a
// directory that the child bind-mounts read-only over itself before it runs
// tilefit: read-only media.
const readOnlyMediaEnv = "TILEFIT_TEST_RO_DIR"

func readOnlyMediaAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS}
}

func mountReadOnly(dir string) error {
	if err := syscall.Mount(dir, dir, "", syscall.MS_BIND, ""); err != nil {
		return err
	}
	if err := syscall.Mount("", dir, "", syscall.MS_REMOUNT|syscall.MS_BIND|syscall.MS_RDONLY, ""); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, "probe"))
	if err == nil {
		f.Close()
		return errors.New("the bind mount is writable")
	}
	if !errors.Is(err, syscall.EROFS) {
		return err
	}
	return nil
}
