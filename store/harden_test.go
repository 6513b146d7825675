package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// dirState is a directory's file names and each file's hash, to show that
// an operation changed nothing.
func dirState(t *testing.T, dir string) string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, e := range es {
		fmt.Fprintf(&b, "%s", e.Name())
		if e.Type().IsRegular() {
			data, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, " %x", sha256.Sum256(data))
		}
		b.WriteString("\n")
	}
	return b.String()
}

func setVersion(t *testing.T, path string, v int) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(fmt.Sprintf("PRAGMA user_version = %d", v)); err != nil {
		t.Fatal(err)
	}
}

// TestInvalidSchemaVersionRefused: a negative user_version (issue 8: it
// indexed the migrations and panicked) is refused with a clear error by
// every open, and the file is left as it was.
func TestInvalidSchemaVersionRefused(t *testing.T) {
	ctx := context.Background()
	for _, v := range []int{-1, -2, -2147483648} {
		s, path := openTemp(t)
		if _, err := s.SaveCell(ctx, testCell(cpuProv, "Wz", 256, 2, time.Unix(1, 0).UTC())); err != nil {
			t.Fatal(err)
		}
		s.Close()
		setVersion(t, path, v)
		before := dirState(t, filepath.Dir(path))
		for name, open := range map[string]func(context.Context, string) (*Store, error){"Open": Open, "OpenReadOnly": OpenReadOnly, "OpenLocked": OpenLocked} {
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Errorf("%s with user_version %d panicked: %v", name, v, r)
					}
				}()
				s, err := open(ctx, path)
				if err == nil {
					s.Close()
					t.Errorf("%s with user_version %d: no error", name, v)
					return
				}
				want := fmt.Sprintf("database %s has an invalid schema version %d (tilefit writes 1 to %d; another program changed it)", path, v, SchemaVersion)
				if !errors.Is(err, ErrCorrupt) || !strings.HasPrefix(err.Error(), want) {
					t.Errorf("%s with user_version %d: %v\nwant prefix %q", name, v, err, want)
				}
			}()
		}
		if after := dirState(t, filepath.Dir(path)); after != before {
			t.Errorf("refusing user_version %d changed the directory:\n%s\nto\n%s", v, before, after)
		}
	}
	// migrateStep checks the version it reads too (a concurrent writer
	// could have changed it after init).
	s, path := openTemp(t)
	if _, err := s.db.Exec("PRAGMA user_version = -7"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.migrateStep(ctx); !errors.Is(err, ErrCorrupt) {
		t.Errorf("migrateStep at version -7: %v", err)
	}
	_ = path
}

// TestNewerSchemaRefusedWithoutTouching: a newer schema is refused by the
// read-only open before SQLite opens the file: no -wal or -shm appears.
func TestNewerSchemaRefusedWithoutTouching(t *testing.T) {
	ctx := context.Background()
	s, path := openTemp(t)
	s.Close()
	setVersion(t, path, SchemaVersion+1)
	before := dirState(t, filepath.Dir(path))
	if _, err := OpenReadOnly(ctx, path); !errors.Is(err, ErrNewerSchema) {
		t.Fatalf("OpenReadOnly of a newer schema: %v", err)
	}
	if after := dirState(t, filepath.Dir(path)); after != before {
		t.Errorf("the refusal changed the directory:\n%s\nto\n%s", before, after)
	}
}

// TestOpenReadOnlyWritesNothing: a read-only open reads a database without
// changing its file, and refuses an empty file, a non-database and an empty
// SQLite database without writing a schema into them or creating a file.
func TestOpenReadOnlyWritesNothing(t *testing.T) {
	ctx := context.Background()
	s, path := openTemp(t)
	for i := 0; i < 3; i++ {
		if _, err := s.SaveCell(ctx, testCell(cpuProv, fmt.Sprintf("S%d", i), 256, 4, time.Unix(1, 0).UTC())); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	main, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := OpenReadOnly(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	cells, err := r.Cells(ctx, Filter{})
	if err != nil || len(cells) != 3 {
		t.Fatalf("read-only Cells: %d cells, %v", len(cells), err)
	}
	if _, err := r.SaveCell(ctx, testCell(cpuProv, "X", 1, 2, time.Unix(1, 0).UTC())); err == nil {
		t.Error("a read-only store saved a cell")
	}
	if err := r.SaveDevice(ctx, DeviceRecord{Backend: "cpu", Name: "x", Measured: time.Unix(1, 0)}); err == nil {
		t.Error("a read-only store saved a device")
	}
	r.Close()
	if after, _ := os.ReadFile(path); !bytes.Equal(after, main) {
		t.Error("a read-only open changed the database file")
	}

	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.db")
	os.WriteFile(empty, nil, 0o644)
	text := filepath.Join(dir, "notes.db")
	os.WriteFile(text, []byte("these are my notes, not a database\n"), 0o644)
	bare := filepath.Join(dir, "bare.db")
	db, _ := sql.Open("sqlite", bare)
	if _, err := db.Exec("VACUUM"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	before := dirState(t, dir)
	for path, want := range map[string]string{
		empty: "database " + empty + " is an empty file (0 bytes), not a tilefit database",
		text:  "open database " + text + ": not a tilefit database (file is not a database)",
		bare:  "database " + bare + " holds no tilefit data (an empty SQLite database)",
	} {
		_, err := OpenReadOnly(ctx, path)
		if !errors.Is(err, ErrNotTilefit) || err == nil || err.Error() != want {
			t.Errorf("OpenReadOnly(%s) = %v, want %q", filepath.Base(path), err, want)
		}
	}
	if _, err := OpenReadOnly(ctx, filepath.Join(dir, "none.db")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("OpenReadOnly of a missing file: %v", err)
	}
	if after := dirState(t, dir); after != before {
		t.Errorf("refused read-only opens changed the directory:\n%s\nto\n%s", before, after)
	}
}

// TestRefusalsCreateNoFiles: refused paths leave nothing behind — no lock
// file beside /dev/null, nothing for an empty path, and a Lock that created
// the database removes it again when nothing was written.
func TestRefusalsCreateNoFiles(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	wd, _ := os.Getwd()
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	fifo := filepath.Join(dir, "fifo.db")
	mkfifo(t, fifo)
	for _, path := range []string{"", "/dev/null", dir, fifo, filepath.Join(dir, "no", "such", "x.db")} {
		if _, err := Lock(path); err == nil {
			t.Errorf("Lock(%q) succeeded", path)
		}
		if s, err := OpenLocked(ctx, path); err == nil {
			s.Close()
			t.Errorf("OpenLocked(%q) succeeded", path)
		}
		if s, err := OpenReadOnly(ctx, path); err == nil {
			s.Close()
			t.Errorf("OpenReadOnly(%q) succeeded", path)
		}
	}
	if _, err := os.Lstat("/dev/null.lock"); err == nil {
		t.Error("/dev/null.lock exists")
	}
	names := func() []string {
		es, _ := os.ReadDir(dir)
		var out []string
		for _, e := range es {
			out = append(out, e.Name())
		}
		return out
	}
	if got := names(); !slices.Equal(got, []string{"fifo.db"}) {
		t.Errorf("refusals left %v in the directory", got)
	}
	unlock, err := Lock(filepath.Join(dir, "new.db"))
	if err != nil {
		t.Fatal(err)
	}
	unlock()
	if got := names(); !slices.Equal(got, []string{"fifo.db"}) {
		t.Errorf("an unused lock left %v in the directory", got)
	}
}

// TestLockIsTheFilesNotThePaths: the sweep lock is met through every name
// of the database: the same path, a relative path, a symbolic link and a
// hard link (issue 8: the lock was a file named after the path).
func TestLockIsTheFilesNotThePaths(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "h.db")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	unlock, err := Lock(path)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	hard := filepath.Join(dir, "h2.db")
	if err := os.Link(path, hard); err != nil {
		t.Fatal(err)
	}
	sym := filepath.Join(t.TempDir(), "link.db")
	if err := os.Symlink(path, sym); err != nil {
		t.Fatal(err)
	}
	symDir := filepath.Join(t.TempDir(), "dirlink")
	if err := os.Symlink(dir, symDir); err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	for _, p := range []string{path, "h.db", "./h.db", "../" + filepath.Base(dir) + "/h.db", hard, "h2.db", sym, filepath.Join(symDir, "h.db")} {
		_, err := Lock(p)
		if !errors.Is(err, ErrLocked) {
			t.Errorf("Lock(%s) while %s is locked: %v, want ErrLocked", p, path, err)
			continue
		}
		want := fmt.Sprintf("database %s is in use by another tilefit process (pid %d)", p, os.Getpid())
		if !strings.HasPrefix(err.Error(), want) {
			t.Errorf("Lock(%s): %q, want prefix %q", p, err, want)
		}
	}
}

// TestWriteRefusedThroughHardLinkedFile: a database file with two names is
// not opened for writing (each name would get its own write-ahead log),
// while reading through either name works and writes nothing.
func TestWriteRefusedThroughHardLinkedFile(t *testing.T) {
	ctx := context.Background()
	s, path := openTemp(t)
	if _, err := s.SaveCell(ctx, testCell(cpuProv, "Wz", 256, 2, time.Unix(1, 0).UTC())); err != nil {
		t.Fatal(err)
	}
	s.Close()
	other := filepath.Join(filepath.Dir(path), "other.db")
	if err := os.Link(path, other); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, other} {
		_, err := Open(ctx, p)
		if !errors.Is(err, ErrLinked) || !strings.Contains(err.Error(), "has 2 names (hard links)") {
			t.Errorf("Open(%s) of a file with two names: %v", p, err)
		}
		r, err := OpenReadOnly(ctx, p)
		if err != nil {
			t.Fatalf("OpenReadOnly(%s): %v", p, err)
		}
		if cells, err := r.Cells(ctx, Filter{}); err != nil || len(cells) != 1 {
			t.Errorf("OpenReadOnly(%s): %d cells, %v", p, len(cells), err)
		}
		r.Close()
	}
	os.Remove(other)
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatalf("Open after removing the second name: %v", err)
	}
	s.Close()
}

// TestSaveCellErrorNamesNoCell: a full disk fails SaveCell with a message
// that names the database and the step but not the cell, which the caller
// (tune) prefixes: issue 8 saw "save cell s1 M=1: save cell s1 M=1: commit".
func TestSaveCellErrorNamesNoCell(t *testing.T) {
	ctx := context.Background()
	s, path := openTemp(t)
	s.db.SetMaxOpenConns(1)
	var pages int
	if err := s.db.QueryRow("PRAGMA page_count").Scan(&pages); err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.Exec(fmt.Sprintf("PRAGMA max_page_count = %d", pages+2)); err != nil {
		t.Fatal(err)
	}
	var err error
	for i := 0; i < 1000 && err == nil; i++ {
		_, err = s.SaveCell(ctx, testCell(cpuProv, "s1", i+1, 64, time.Unix(1, 0).UTC()))
	}
	if err == nil {
		t.Fatal("the database never filled up")
	}
	msg := err.Error()
	if strings.Contains(msg, "save cell") || strings.Contains(msg, "s1 M=") || !strings.HasPrefix(msg, "database "+path+": ") || !strings.Contains(msg, "full") {
		t.Errorf("disk-full message %q: want it to start with the database and say full, without the cell", msg)
	}
}

// TestClosedDatabaseReadsWithoutSideFiles: a database a sweep wrote and
// closed is one self-contained file, and a read-only open (report, select
// --confirm=false) creates no -wal or -shm file beside it.
func TestClosedDatabaseReadsWithoutSideFiles(t *testing.T) {
	ctx := context.Background()
	s, path := openTemp(t)
	if _, err := s.SaveCell(ctx, testCell(cpuProv, "S", 256, 4, time.Unix(1, 0).UTC())); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + "-wal"); err != nil {
		t.Fatalf("an open writer keeps a write-ahead log: %v", err)
	}
	noSideFiles := func(when string) {
		t.Helper()
		for _, side := range []string{"-wal", "-shm"} {
			if _, err := os.Stat(path + side); err == nil {
				t.Errorf("%s beside the database %s", side, when)
			}
		}
	}
	s.Close()
	noSideFiles("after the writer closed it")
	r, err := OpenReadOnly(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if cells, err := r.Cells(ctx, Filter{}); err != nil || len(cells) != 1 {
		t.Fatalf("read-only Cells: %d cells, %v", len(cells), err)
	}
	r.Close()
	noSideFiles("after a read-only open")
	// The next writer works in WAL mode again.
	w, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.SaveCell(ctx, testCell(cpuProv, "T", 256, 4, time.Unix(2, 0).UTC())); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + "-wal"); err != nil {
		t.Errorf("the next writer is not in WAL mode: %v", err)
	}
}
