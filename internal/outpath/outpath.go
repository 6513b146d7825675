// Package outpath guards the files a verb writes (report --output, select
// --policy-out, …) against destroying what it reads: a path that names a
// database the verb has open — the file itself, through a symbolic or a
// hard link, or one of SQLite's side files (-wal, -shm, -journal) — or
// another protected input is refused before anything is written, and an
// output is written to a temporary file beside it and renamed into place,
// so that a failed or interrupted write leaves the old file whole.
package outpath

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// A Protected is a file a verb must not write over: What names it in
// messages ("the database"), Path is as the user gave it; Sides protects
// SQLite's side files of Path too. A PostgreSQL URL (or any path with
// "://") protects nothing.
type Protected struct {
	What  string
	Path  string
	Sides bool
}

// Database protects the database at path and its side files.
func Database(path string) Protected { return Protected{What: "the database", Path: path, Sides: true} }

// Input protects an input file (a workload, a source, a policy) when it is
// one: a value that names no regular file (a preset) protects nothing.
func Input(what, path string) Protected { return Protected{What: what, Path: path} }

// ErrProtected marks a refused output path (test with errors.Is).
var ErrProtected = errors.New("output would overwrite an input")

// sideFiles are the files SQLite keeps beside a database.
var sideFiles = []string{"-wal", "-shm", "-journal"}

// Check refuses out (the value of flag) when it names one of protected:
// the same file (os.SameFile: symbolic links followed, hard links found by
// identity) or, for a file that does not exist yet, the same resolved
// path. An empty out (standard output) passes.
func Check(flag, out string, protected ...Protected) error {
	if out == "" {
		return nil
	}
	outFI, outErr := os.Stat(out)
	outRes := resolve(out)
	for _, p := range protected {
		if p.Path == "" || strings.Contains(p.Path, "://") {
			continue
		}
		if !p.Sides {
			if fi, err := os.Stat(p.Path); err != nil || !fi.Mode().IsRegular() {
				continue // not a file (a preset's name, a missing file)
			}
		}
		names := []string{p.Path}
		if p.Sides {
			for _, s := range sideFiles {
				names = append(names, p.Path+s)
			}
		}
		for i, n := range names {
			same := false
			if outErr == nil {
				if fi, err := os.Stat(n); err == nil && os.SameFile(outFI, fi) {
					same = true
				}
			}
			if !same && outRes != "" && outRes == resolveSide(p.Path, names[i][len(p.Path):]) {
				same = true
			}
			if !same {
				continue
			}
			what := p.What
			if i > 0 {
				what = fmt.Sprintf("the %s file of %s", names[i][len(p.Path):], p.What)
			}
			return &refused{msg: fmt.Sprintf("%s: %s is %s (%s) this command reads; writing there would destroy it: name another file", flag, out, what, p.Path)}
		}
	}
	return nil
}

type refused struct{ msg string }

func (e *refused) Error() string { return e.msg }
func (e *refused) Unwrap() error { return ErrProtected }

// resolveSide is the resolved path of db's side file suffix ("" for db).
func resolveSide(db, suffix string) string {
	r := resolve(db)
	if r == "" {
		return ""
	}
	return r + suffix
}

// resolve returns path made absolute with every symbolic link followed
// (also a dangling final link, whose target may be created), or "" when
// that fails.
func resolve(path string) string {
	for hops := 0; hops < 40; hops++ {
		fi, err := os.Lstat(path)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			break
		}
		t, err := os.Readlink(path)
		if err != nil {
			return ""
		}
		if !filepath.IsAbs(t) {
			t = filepath.Join(filepath.Dir(path), t)
		}
		path = t
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return ""
	}
	dir, err := filepath.EvalSymlinks(filepath.Dir(abs))
	if err != nil {
		return filepath.Clean(abs)
	}
	return filepath.Join(dir, filepath.Base(abs))
}

// A File is an output being written: a temporary file beside its target
// until Commit renames it into place. A target that exists and is not a
// regular file (/dev/stdout, a FIFO) is written directly.
type File struct {
	*os.File
	target string
	direct bool
	done   bool
}

// Create starts writing the output at path (perm for a new file; an
// existing file keeps its mode).
func Create(path string, perm os.FileMode) (*File, error) {
	if fi, err := os.Stat(path); err == nil {
		if !fi.Mode().IsRegular() {
			f, err := os.OpenFile(path, os.O_WRONLY, 0)
			if err != nil {
				return nil, err
			}
			return &File{File: f, target: path, direct: true}, nil
		}
		perm = fi.Mode().Perm()
	}
	target := path
	if r := resolve(path); r != "" {
		target = r // through a link: the link's target is replaced
	}
	dir, base := filepath.Split(target)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return nil, err
	}
	if err := f.Chmod(perm); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	return &File{File: f, target: target}, nil
}

// Commit flushes the file and renames it into place (through a symbolic
// link at the target, the link's target is replaced).
func (f *File) Commit() error {
	if f.done {
		return nil
	}
	f.done = true
	if f.direct {
		return f.File.Close()
	}
	if err := f.File.Sync(); err != nil {
		f.File.Close()
		os.Remove(f.Name())
		return err
	}
	if err := f.File.Close(); err != nil {
		os.Remove(f.Name())
		return err
	}
	if err := os.Rename(f.Name(), f.target); err != nil {
		os.Remove(f.Name())
		return err
	}
	return nil
}

// Abort drops the file: the target is left as it was. After Commit it
// does nothing.
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	f.File.Close()
	if !f.direct {
		os.Remove(f.Name())
	}
}

// WriteFile writes data to path as Create, Write and Commit do.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	f, err := Create(path, perm)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Abort()
		return err
	}
	return f.Commit()
}

// A Lazy output is a File created at the first write (or at Commit), so
// that an output refused before it writes anything leaves the folder as it
// was. Prefix is written first (the old text of a file being appended to);
// Label names the output in the errors of creating it ("--output").
type Lazy struct {
	Path   string
	Prefix []byte
	Label  string
	f      *File
}

// Write creates the file at the first call, then writes p.
func (l *Lazy) Write(p []byte) (int, error) {
	if l.f == nil {
		if err := l.open(); err != nil {
			return 0, err
		}
	}
	return l.f.Write(p)
}

func (l *Lazy) open() error {
	f, err := Create(l.Path, 0o644)
	if err != nil {
		return fmt.Errorf("%s: %w", l.Label, err)
	}
	if _, err := f.Write(l.Prefix); err != nil {
		f.Abort()
		return fmt.Errorf("%s: %w", l.Label, err)
	}
	l.f = f
	return nil
}

// Commit puts the file in place (an empty one too).
func (l *Lazy) Commit() error {
	if l.f == nil {
		if err := l.open(); err != nil {
			return err
		}
	}
	return l.f.Commit()
}

// Abort drops what was written; the old file stays.
func (l *Lazy) Abort() {
	if l.f != nil {
		l.f.Abort()
	}
}
