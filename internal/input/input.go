// Package input reads the files a user names on the command line (kernel
// sources, workloads, policies) so that no such read can hang or run away:
// only regular files are read (a FIFO, a directory, a device or a socket is
// refused before it is opened, so a FIFO without a writer never blocks),
// every file has a size limit that the message names, and a read gives up
// when its context is cancelled (Ctrl-C works during any read).
package input

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"syscall"
	"unicode/utf8"
)

// ErrNotRegular marks a path that names something other than a regular file
// (test with errors.Is).
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge marks a file over the size limit (test with errors.Is).
var ErrTooLarge = errors.New("file too large")

// A File describes what ReadFile reads: the kind of file (for messages, e.g.
// "source file", "workload file") and the largest size accepted. Text
// asks for UTF-8 text without NUL bytes (CheckText): a kernel source is
// read by a compiler that makes megabytes of errors of anything else.
type File struct {
	What  string
	Limit int64
	Text  bool
}

// ErrNotText marks a file that is not UTF-8 text (test with errors.Is).
var ErrNotText = errors.New("not UTF-8 text")

// ReadFile reads the regular file at path whole. It refuses, with an error
// naming path and what it is, an empty path, a missing or unreadable file,
// anything but a regular file (checked with os.Stat before opening, and
// again on the opened file, which is opened non-blocking so that a file
// swapped for a FIFO in between cannot block), and a file over f.Limit
// bytes. It returns ctx's error as soon as ctx is cancelled, even while a
// read is blocked (the read is abandoned).
func ReadFile(ctx context.Context, path string, f File) ([]byte, error) {
	what := f.What
	if what == "" {
		what = "file"
	}
	if path == "" {
		return nil, fmt.Errorf("no %s named (empty path)", what)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, statError(path, what, err)
	}
	if err := regular(path, what, st); err != nil {
		return nil, err
	}
	if f.Limit > 0 && st.Size() > f.Limit {
		return nil, tooLarge(path, what, st.Size(), f.Limit)
	}
	fh, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, statError(path, what, err)
	}
	type result struct {
		b   []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		defer fh.Close()
		st2, err := fh.Stat()
		if err != nil {
			done <- result{err: fmt.Errorf("%s %s: %w", what, path, err)}
			return
		}
		if err := regular(path, what, st2); err != nil {
			done <- result{err: err}
			return
		}
		r := io.Reader(fh)
		if f.Limit > 0 {
			r = io.LimitReader(fh, f.Limit+1)
		}
		b, err := io.ReadAll(r)
		if err != nil {
			done <- result{err: fmt.Errorf("%s %s: %w", what, path, err)}
			return
		}
		if f.Limit > 0 && int64(len(b)) > f.Limit {
			done <- result{err: tooLarge(path, what, int64(len(b)), f.Limit)}
			return
		}
		if f.Text {
			if err := CheckText(path, what, b); err != nil {
				done <- result{err: err}
				return
			}
		}
		done <- result{b: b}
	}()
	select {
	case r := <-done:
		return r.b, r.err
	case <-ctx.Done():
		return nil, fmt.Errorf("%s %s: %w", what, path, ctx.Err())
	}
}

// Check refuses, like ReadFile, a path that is not an existing regular file,
// without opening it.
func Check(path string, what string) error {
	if path == "" {
		return fmt.Errorf("no %s named (empty path)", what)
	}
	st, err := os.Stat(path)
	if err != nil {
		return statError(path, what, err)
	}
	return regular(path, what, st)
}

// statError says why path cannot be read: "source file x.c does not
// exist", "... cannot be read: permission denied"; it wraps err.
func statError(path, what string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		if errors.Is(err, fs.ErrNotExist) {
			return &wrapped{msg: fmt.Sprintf("%s %s does not exist", what, path), err: err}
		}
		return &wrapped{msg: fmt.Sprintf("%s %s cannot be read: %v", what, path, pe.Err), err: err}
	}
	return fmt.Errorf("%s %s: %w", what, path, err)
}

// wrapped is an error with its own message that wraps another.
type wrapped struct {
	msg string
	err error
}

func (e *wrapped) Error() string { return e.msg }
func (e *wrapped) Unwrap() error { return e.err }

func regular(path, what string, st fs.FileInfo) error {
	if st.Mode().IsRegular() {
		return nil
	}
	return &kindError{path: path, what: what, kind: Kind(st.Mode())}
}

type kindError struct{ path, what, kind string }

func (e *kindError) Error() string {
	return fmt.Sprintf("%s %s is %s, not a regular file", e.what, e.path, e.kind)
}

func (e *kindError) Unwrap() error { return ErrNotRegular }

// Kind says what a file mode is, with an article: "a directory", "a named
// pipe (FIFO)", "a character device", "a regular file"...
func Kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m.IsRegular():
		return "a regular file"
	}
	return "not a regular file"
}

type sizeError struct {
	path, what  string
	size, limit int64
}

func tooLarge(path, what string, size, limit int64) error {
	return &sizeError{path: path, what: what, size: size, limit: limit}
}

func (e *sizeError) Error() string {
	return fmt.Sprintf("%s %s is %s, over the %s limit for a %s", e.what, e.path, Bytes(e.size), Bytes(e.limit), e.what)
}

func (e *sizeError) Unwrap() error { return ErrTooLarge }

// Bytes formats n in binary units with one decimal ("70.0 MiB"); below
// 1 KiB in bytes.
func Bytes(n int64) string {
	if n < 1024 {
		return fmt.Sprintf("%d B", n)
	}
	units := []string{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	v := float64(n) / 1024
	u := 0
	for v >= 1023.95 && u < len(units)-1 {
		v /= 1024
		u++
	}
	return fmt.Sprintf("%.1f %s", v, units[u])
}

// CheckText refuses b (the contents of the file at path) unless it is
// UTF-8 text without NUL bytes, saying where it is not: a UTF-16 or UTF-32
// file by its byte order mark or its NUL bytes, a binary file by its first
// NUL, another encoding by its first invalid byte (line and column).
func CheckText(path, what string, b []byte) error {
	fail := func(format string, a ...any) error {
		return &wrapped{msg: fmt.Sprintf("%s %s is not UTF-8 text: ", what, path) + fmt.Sprintf(format, a...), err: ErrNotText}
	}
	for _, bom := range []struct {
		mark []byte
		name string
	}{
		{[]byte{0x00, 0x00, 0xFE, 0xFF}, "UTF-32 (big-endian)"},
		{[]byte{0xFF, 0xFE, 0x00, 0x00}, "UTF-32 (little-endian)"},
		{[]byte{0xFE, 0xFF}, "UTF-16 (big-endian)"},
		{[]byte{0xFF, 0xFE}, "UTF-16 (little-endian)"},
	} {
		if len(b) >= len(bom.mark) && string(b[:len(bom.mark)]) == string(bom.mark) {
			return fail("it starts with the byte order mark of %s; save it as UTF-8", bom.name)
		}
	}
	line, col := 1, 1
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		switch {
		case r == 0:
			if utf16ish(b) {
				return fail("it has NUL bytes between its characters (the first at line %d, column %d, byte offset %d), as UTF-16 text does; save it as UTF-8", line, col, i)
			}
			return fail("it has a NUL byte at line %d, column %d (byte offset %d): a binary file?", line, col, i)
		case r == utf8.RuneError && n == 1:
			return fail("the byte 0x%02X at line %d, column %d (byte offset %d) is not valid UTF-8; save the file as UTF-8", b[i], line, col, i)
		case r == '\n':
			line, col = line+1, 0
		}
		col++
		i += n
	}
	return nil
}

// utf16ish reports whether b looks like UTF-16 text without a byte order
// mark: about every other byte of its first kilobyte NUL.
func utf16ish(b []byte) bool {
	b = b[:min(len(b), 1024)]
	if len(b) < 4 {
		return false
	}
	var even, odd int
	for i, c := range b {
		if c == 0 {
			if i%2 == 0 {
				even++
			} else {
				odd++
			}
		}
	}
	half := len(b) / 2
	return even > half*3/4 || odd > half*3/4
}

// SplitList splits a comma-separated value of flag into trimmed items and
// refuses an empty item (",,", "a,,b", "a,"), which would otherwise vanish
// and change what the flag means.
func SplitList(flag, s string) ([]string, error) {
	parts := strings.Split(s, ",")
	out := make([]string, 0, len(parts))
	for i, p := range parts {
		p = strings.TrimSpace(p)
		if p == "" {
			return nil, fmt.Errorf("%s: item %d of %q is empty; separate the values by single commas", flag, i+1, s)
		}
		out = append(out, p)
	}
	return out, nil
}
