package input

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	ok := filepath.Join(dir, "ok.c")
	os.WriteFile(ok, []byte("int x;\n"), 0o644)
	b, err := ReadFile(context.Background(), ok, File{What: "source file", Limit: 100})
	if err != nil || string(b) != "int x;\n" {
		t.Fatalf("ReadFile = %q, %v", b, err)
	}
	big := filepath.Join(dir, "big.c")
	os.WriteFile(big, make([]byte, 3000), 0o644)
	_, err = ReadFile(context.Background(), big, File{What: "source file", Limit: 2048})
	if !errors.Is(err, ErrTooLarge) || err.Error() != "source file "+big+" is 2.9 KiB, over the 2.0 KiB limit for a source file" {
		t.Errorf("too large: %v", err)
	}
	fifo := filepath.Join(dir, "p")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	for path, kind := range map[string]string{fifo: "a named pipe (FIFO)", dir: "a directory", "/dev/null": "a character device"} {
		done := make(chan error, 1)
		go func() {
			_, err := ReadFile(context.Background(), path, File{What: "source file"})
			done <- err
		}()
		select {
		case err := <-done:
			if !errors.Is(err, ErrNotRegular) || err.Error() != "source file "+path+" is "+kind+", not a regular file" {
				t.Errorf("%s: %v", path, err)
			}
			if err := Check(path, "source file"); !errors.Is(err, ErrNotRegular) {
				t.Errorf("Check(%s) = %v", path, err)
			}
		case <-time.After(time.Minute):
			if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				f.Close()
			}
			t.Fatalf("%s: ReadFile blocked", path)
		}
	}
	if _, err := ReadFile(context.Background(), filepath.Join(dir, "none"), File{What: "policy file"}); !errors.Is(err, os.ErrNotExist) || err.Error() != "policy file "+filepath.Join(dir, "none")+" does not exist" {
		t.Errorf("missing: %v", err)
	}
	if _, err := ReadFile(context.Background(), "", File{What: "policy file"}); err == nil || err.Error() != "no policy file named (empty path)" {
		t.Errorf("empty path: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ReadFile(ctx, ok, File{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}
