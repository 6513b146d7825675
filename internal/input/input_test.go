package input

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
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

// TestCheckText (issue 18 item 4): a UTF-16 --source stalled a sweep (a
// 13 MB compiler log per program); such files, and binary ones, are refused
// up front with a message saying what they are.
func TestCheckText(t *testing.T) {
	utf16 := []byte{}
	for _, c := range "int x;\n" {
		utf16 = append(utf16, byte(c), 0)
	}
	for _, tc := range []struct {
		name string
		b    []byte
		want string
	}{
		{"utf-16 with a byte order mark", append([]byte{0xFF, 0xFE}, utf16...), "byte order mark of UTF-16 (little-endian)"},
		{"utf-16 without one", utf16, "NUL bytes between its characters"},
		{"binary", []byte("int x;\n\x7fELF\x00\x01\x02"), "NUL byte at line 2, column 5"},
		{"latin-1", []byte("// caf\xe9\nint x;\n"), "the byte 0xE9 at line 1, column 7 (byte offset 6) is not valid UTF-8"},
	} {
		err := CheckText("k.c", "source file", tc.b)
		if err == nil || !errors.Is(err, ErrNotText) || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "source file k.c is not UTF-8 text: ") {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	for _, ok := range []string{"", "int x; // café ✓\n", "\ufeffint x;\n"} {
		if err := CheckText("k.c", "source file", []byte(ok)); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	path := filepath.Join(t.TempDir(), "u16.c")
	os.WriteFile(path, append([]byte{0xFF, 0xFE}, utf16...), 0o644)
	if _, err := ReadFile(context.Background(), path, File{What: "source file", Limit: 1 << 20, Text: true}); !errors.Is(err, ErrNotText) {
		t.Errorf("ReadFile with Text: %v", err)
	}
	if _, err := ReadFile(context.Background(), path, File{What: "workload file", Limit: 1 << 20}); err != nil {
		t.Errorf("ReadFile without Text: %v", err)
	}
}
