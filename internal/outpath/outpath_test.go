package outpath

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "t.db")
	os.WriteFile(db, []byte("SQLite format 3\x00"), 0o644)
	os.WriteFile(db+"-wal", []byte("wal"), 0o644)
	other := filepath.Join(dir, "other.db")
	os.WriteFile(other, []byte("x"), 0o644)
	src := filepath.Join(dir, "k.c")
	os.WriteFile(src, []byte("int x;"), 0o644)
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Symlink(db, filepath.Join(dir, "link.md")))
	must(os.Symlink("t.db-wal", filepath.Join(dir, "wal.md")))
	must(os.Symlink("t.db-shm", filepath.Join(dir, "shm.md"))) // dangling: -shm does not exist yet
	must(os.Link(db, filepath.Join(dir, "hard.md")))
	must(os.Mkdir(filepath.Join(dir, "sub"), 0o755))
	must(os.Symlink(dir, filepath.Join(dir, "up")))
	prot := []Protected{Database(db), Database(other), Input("the source file", src), Database("postgres://u@h/db")}
	wd, _ := os.Getwd()
	rel, _ := filepath.Rel(wd, db)
	for _, bad := range []string{db, rel, filepath.Join(dir, "sub", "..", "t.db"), db + "-wal", db + "-shm", db + "-journal",
		filepath.Join(dir, "link.md"), filepath.Join(dir, "wal.md"), filepath.Join(dir, "shm.md"), filepath.Join(dir, "hard.md"),
		filepath.Join(dir, "up", "t.db"), other + "-wal", src} {
		err := Check("--output", bad, prot...)
		if !errors.Is(err, ErrProtected) || !strings.HasPrefix(err.Error(), "--output: "+bad+" is ") {
			t.Errorf("%s: %v", bad, err)
		}
	}
	for _, ok := range []string{"", filepath.Join(dir, "r.md"), filepath.Join(dir, "t.db.md"), filepath.Join(dir, "sub", "t.db")} {
		if err := Check("--output", ok, prot...); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	if err := Check("--output", db+"-wal", Protected{What: "x", Path: db}); err != nil {
		t.Errorf("side files of a path without Sides: %v", err)
	}
}

func TestCreateCommitAbort(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "r.md")
	os.WriteFile(out, []byte("old"), 0o600)
	f, err := Create(out, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("half")
	f.Abort()
	if b, _ := os.ReadFile(out); string(b) != "old" {
		t.Errorf("after Abort: %q", b)
	}
	if err := WriteFile(out, []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(out); string(b) != "new" {
		t.Errorf("after WriteFile: %q", b)
	}
	if fi, _ := os.Stat(out); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want the old file's 0600", fi.Mode().Perm())
	}
	// Through a link, the link's target is replaced and the link stays.
	real := filepath.Join(dir, "real.md")
	os.WriteFile(real, []byte("r"), 0o644)
	link := filepath.Join(dir, "l.md")
	os.Symlink("real.md", link)
	if err := WriteFile(link, []byte("via link"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(real); string(b) != "via link" {
		t.Errorf("link target: %q", b)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v %v", fi, err)
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file left: %s", e.Name())
		}
	}
	// A character device is written directly (no rename onto /dev).
	if err := WriteFile(os.DevNull, []byte("x"), 0o644); err != nil {
		t.Errorf("/dev/null: %v", err)
	}
}
