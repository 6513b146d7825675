package store

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"modernc.org/sqlite"

	"github.com/tilefit/tilefit/internal/input"
)

// Errors an open can wrap besides those in store.go; test with errors.Is.
var (
	// ErrOlderSchema: OpenReadOnly found a schema older than this
	// tilefit's; only a writing open (Open) upgrades it.
	ErrOlderSchema = errors.New("database schema is older than this tilefit")
	// ErrLinked: Open for writing refused a file with more than one name
	// (hard link).
	ErrLinked = errors.New("database file has more than one name")
)

// sqliteHeader starts every SQLite 3 database file.
const sqliteHeader = "SQLite format 3\x00"

// A target is a database path checked before SQLite opens it.
type target struct {
	path string      // as given, for messages
	real string      // absolute with symlinks resolved: the name SQLite opens
	fi   os.FileInfo // of real; nil when the file does not exist yet
}

// inspect resolves path and gives clear errors for paths SQLite would reject
// with vaguer ones (or accept wrongly): an empty path, a missing directory, a
// directory, a device or FIFO, a symlink to nothing. A missing file is fine
// (fi nil): a writing open creates it.
//
// Symbolic links are resolved so that SQLite opens the file by its real
// name: SQLite keeps its write-ahead log and shared-memory files beside the
// name it was given, and two names of one database must never have two logs.
func inspect(path string) (target, error) {
	if path == "" {
		return target{}, errors.New("open database: empty path")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return target{}, fmt.Errorf("open database %s: %w", path, err)
	}
	if err := sideFile(path, abs); err != nil {
		return target{}, err
	}
	lfi, err := os.Lstat(abs)
	if errors.Is(err, fs.ErrNotExist) {
		dir := filepath.Dir(abs)
		rdir, derr := filepath.EvalSymlinks(dir)
		if derr != nil {
			return target{}, fmt.Errorf("create database %s: directory %s does not exist", path, dir)
		}
		if di, derr := os.Stat(rdir); derr != nil || !di.IsDir() {
			return target{}, fmt.Errorf("create database %s: %s is not a directory", path, dir)
		}
		return target{path: path, real: filepath.Join(rdir, filepath.Base(abs))}, nil
	}
	if err != nil {
		return target{}, fmt.Errorf("open database %s: %w", path, err)
	}
	real := abs
	if lfi.Mode()&fs.ModeSymlink != 0 {
		if real, err = filepath.EvalSymlinks(abs); err != nil {
			dest, _ := os.Readlink(abs)
			if errors.Is(err, fs.ErrNotExist) {
				return target{}, fmt.Errorf("open database %s: a symbolic link to %s, which does not exist", path, dest)
			}
			return target{}, fmt.Errorf("open database %s: %w", path, err)
		}
	} else if rdir, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
		real = filepath.Join(rdir, filepath.Base(abs))
	}
	fi, err := os.Stat(real)
	if err != nil {
		return target{}, fmt.Errorf("open database %s: %w", path, err)
	}
	if fi.IsDir() {
		return target{}, fmt.Errorf("open database %s: is a directory, not a database file", path)
	}
	if !fi.Mode().IsRegular() {
		return target{}, fmt.Errorf("open database %s: is %s, not a regular file", path, input.Kind(fi.Mode()))
	}
	return target{path: path, real: real, fi: fi}, nil
}

// sideFile refuses a path that names a side file SQLite keeps beside a
// database (its -wal, -shm or -journal, also through a link) while the
// database is there: opening it as a database (and writing to it) would
// destroy the database's log (issue 18).
func sideFile(path, abs string) error {
	real := abs
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		real = r
	} else if rdir, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
		real = filepath.Join(rdir, filepath.Base(abs))
	}
	for _, suffix := range []string{"-wal", "-shm", "-journal"} {
		for _, p := range []string{abs, real} {
			db, ok := strings.CutSuffix(p, suffix)
			if !ok {
				continue
			}
			if fi, err := os.Stat(db); err == nil && fi.Mode().IsRegular() {
				return &dbError{msg: fmt.Sprintf("open database %s: it is the %s file SQLite keeps beside the database %s, not a database; pass --db %s", path, suffix, db, db), kind: ErrNotTilefit}
			}
		}
	}
	return nil
}

// The parts of a SQLite database header that tilefit checks before SQLite
// opens the file (https://sqlite.org/fileformat.html, "The Database Header").
const (
	headerSize        = 100
	userVersionOffset = 60
	appIDOffset       = 68
)

// checkHeader reads the file's first bytes and refuses, before SQLite ever
// touches the file (so a refusal creates no -wal or -shm file beside it), a
// file that is not SQLite, one of another program, and one whose schema
// version tilefit cannot read (negative, or newer than this tilefit). It
// reports whether the file is empty (a new database). The header in the
// main file can lag the write-ahead log; init checks again through SQLite.
func (t target) checkHeader() (empty bool, err error) {
	f, err := os.Open(t.real)
	if err != nil {
		return false, fmt.Errorf("open database %s: cannot read it: %w", t.path, err)
	}
	defer f.Close()
	hdr := make([]byte, headerSize)
	n, err := io.ReadFull(f, hdr)
	if n == 0 && (err == io.EOF || err == nil) {
		return true, nil
	}
	if err != nil && err != io.ErrUnexpectedEOF {
		return false, fmt.Errorf("open database %s: cannot read it: %w", t.path, err)
	}
	if n < len(sqliteHeader) || string(hdr[:len(sqliteHeader)]) != sqliteHeader {
		return false, &dbError{msg: fmt.Sprintf("open database %s: not a tilefit database (file is not a database)", t.path), kind: ErrNotTilefit}
	}
	if n < headerSize {
		return false, nil // SQLite says what is wrong
	}
	appID := int32(binary.BigEndian.Uint32(hdr[appIDOffset:]))
	version := int(int32(binary.BigEndian.Uint32(hdr[userVersionOffset:])))
	if appID == applicationID {
		s := &Store{path: t.path}
		if err := s.checkVersion(version); err != nil {
			return false, err
		}
	}
	return false, nil
}

// checkVersion refuses a schema version this tilefit cannot read: negative
// (never written by tilefit) or newer than SchemaVersion. Every stored
// version is checked before it indexes the migrations.
func (s *Store) checkVersion(version int) error {
	switch {
	case version < 0:
		return &dbError{
			msg:  fmt.Sprintf("database %s has an invalid schema version %d (tilefit writes 1 to %d; another program changed it): restore it from a copy or pass another --db", s.path, version, SchemaVersion),
			kind: ErrCorrupt,
		}
	case version > SchemaVersion:
		return s.newer(version)
	}
	return nil
}

// Open opens the tilefit database at path for reading and writing, creating
// it (and its schema) if the file does not exist or is empty, and upgrading
// an older schema. It refuses, with an error naming the file, a path that
// cannot be read or created, anything but a regular file, a file with more
// than one name (ErrLinked), a file that is not a tilefit database
// (ErrNotTilefit), a corrupt one or one with an invalid schema version
// (ErrCorrupt) and one written by a newer tilefit (ErrNewerSchema). A
// symbolic link is followed: SQLite opens the file by its real name.
//
// Open takes no lock: a sweep uses OpenLocked.
//
// A path that is a postgres:// (or postgresql://) URL opens that server's
// database instead (IsURL), in the schema its search_path names; the
// schema is created there when the schema holds no tables, and a schema of
// other tables is refused (ErrNotTilefit).
func Open(ctx context.Context, path string) (*Store, error) {
	if IsURL(path) {
		return openPostgres(ctx, path, false)
	}
	t, err := inspect(path)
	if err != nil {
		return nil, err
	}
	if t.fi != nil {
		if err := t.checkLinks(); err != nil {
			return nil, err
		}
		if _, err := t.checkHeader(); err != nil {
			return nil, err
		}
	}
	q := url.Values{}
	q.Set("_txlock", "immediate")
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeout.Milliseconds()))
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous(FULL)")
	db, err := sql.Open("sqlite", dsn(t.real, q))
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	s := &Store{db: db, path: path, d: sqliteDialect}
	// Processes that open a new file at once (sweeps sharing it with
	// --claim) meet while one switches it to WAL: SQLite then answers BUSY
	// without waiting for its busy timeout. Such an open is tried again.
	deadline := time.Now().Add(busyTimeout)
	for {
		err := s.init(ctx)
		if err == nil {
			return s, nil
		}
		if !isBusy(err) || time.Now().After(deadline) {
			db.Close()
			return nil, err
		}
		select {
		case <-ctx.Done():
			db.Close()
			return nil, err
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// isBusy reports whether err is SQLite's SQLITE_BUSY.
func isBusy(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == 5
}

// OpenLocked takes the sweep lock of the database at path (see Lock) and
// opens it for writing (see Open); Close releases the lock after closing the
// database. A refused open leaves no file that the lock created. A
// PostgreSQL URL takes no lock (sweeps there claim their cells).
func OpenLocked(ctx context.Context, path string) (*Store, error) {
	return openWithLock(ctx, path, Lock)
}

// OpenShared is OpenLocked with the shared sweep lock (LockShared): several
// sweeps that claim their cells (ClaimCell) write the file at once, and a
// sweep that does not claim is kept out while they run.
func OpenShared(ctx context.Context, path string) (*Store, error) {
	return openWithLock(ctx, path, LockShared)
}

func openWithLock(ctx context.Context, path string, lock func(string) (func() error, error)) (*Store, error) {
	if IsURL(path) {
		return openPostgres(ctx, path, false)
	}
	unlock, err := lock(path)
	if err != nil {
		return nil, err
	}
	s, err := Open(ctx, path)
	if err != nil {
		unlock()
		return nil, err
	}
	s.unlock = unlock
	return s, nil
}

// checkLinks refuses a database file with more than one name. SQLite keeps
// a database's write-ahead log beside the name it was opened by, so cells
// written through one name can sit in a log that another name never sees,
// and a checkpoint through the other name then overwrites them.
func (t target) checkLinks() error {
	n := linkCount(t.fi)
	if n <= 1 {
		return nil
	}
	return &dbError{
		msg:  fmt.Sprintf("database %s has %d names (hard links); SQLite keeps the write-ahead log beside each name, so writing through one name can lose cells written through another: keep one name (remove the others) or copy the file", t.path, n),
		kind: ErrLinked,
	}
}

// OpenReadOnly opens the tilefit database at path for reading only: SQLite
// opens it with mode=ro and nothing is ever written to it; a database on
// read-only media is read as immutable. It refuses, with an error naming the
// file, a missing file (wrapping fs.ErrNotExist), anything but a regular
// file, an empty file or an empty SQLite database (ErrNotTilefit: nothing to
// read), another program's file (ErrNotTilefit), a corrupt database or an
// invalid schema version (ErrCorrupt) and a newer schema (ErrNewerSchema).
// A database of an older schema is read through an upgraded private copy
// (the file itself is never upgraded by reading). A refused file is left as
// it was; no file is created beside it.
//
// A PostgreSQL URL is opened with every transaction read-only; its schema
// must be this tilefit's (an older one is refused with ErrOlderSchema: a
// sweep against it upgrades it).
func OpenReadOnly(ctx context.Context, path string) (*Store, error) {
	if IsURL(path) {
		return openPostgres(ctx, path, true)
	}
	t, err := inspect(path)
	if err != nil {
		return nil, err
	}
	if t.fi == nil {
		return nil, &dbError{msg: fmt.Sprintf("database %s does not exist (a sweep creates it)", path), kind: fs.ErrNotExist}
	}
	empty, err := t.checkHeader()
	if err != nil {
		return nil, err
	}
	if empty {
		return nil, &dbError{msg: fmt.Sprintf("database %s is an empty file (0 bytes), not a tilefit database", path), kind: ErrNotTilefit}
	}
	open := func(mode string) (*Store, error) {
		q := url.Values{}
		q.Set(mode, map[string]string{"mode": "ro", "immutable": "1"}[mode])
		q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeout.Milliseconds()))
		db, err := sql.Open("sqlite", dsn(t.real, q))
		if err != nil {
			return nil, fmt.Errorf("open database %s: %w", path, err)
		}
		s := &Store{db: db, path: path, d: sqliteDialect, readOnly: true}
		if err := s.init(ctx); err != nil {
			db.Close()
			return nil, err
		}
		return s, nil
	}
	s, err := open("mode")
	if err != nil && cannotOpen(err) && !dirWritable(filepath.Dir(t.real)) {
		// Read-only media: SQLite cannot create the -shm file that a
		// read-only connection to a WAL database needs. Nothing can write
		// to the database there, so it is read as immutable — unless a
		// -wal file beside it holds committed transactions, which an
		// immutable read ignores: then a private copy of both is read.
		if fi, werr := os.Stat(t.real + "-wal"); werr == nil && fi.Size() > 0 {
			return walCopy(ctx, path, t.real)
		}
		s, err = open("immutable")
	}
	if errors.Is(err, ErrOlderSchema) {
		return upgradedCopy(ctx, path, t.real)
	}
	return s, err
}

// upgradedCopy reads a database of an older schema without writing to it:
// SQLite copies it (VACUUM INTO, which reads the file read-only) into a
// private temporary file, which is upgraded and read instead; Close removes
// the copy.
func upgradedCopy(ctx context.Context, path, real string) (*Store, error) {
	dir, err := os.MkdirTemp("", "tilefit-read-")
	if err != nil {
		return nil, fmt.Errorf("read database %s: a temporary copy for the schema upgrade: %w", path, err)
	}
	cleanup := func() error { return os.RemoveAll(dir) }
	q := url.Values{}
	q.Set("mode", "ro")
	src, err := sql.Open("sqlite", dsn(real, q))
	if err == nil {
		_, err = src.ExecContext(ctx, "VACUUM INTO ?", filepath.Join(dir, "copy.db"))
		src.Close()
	}
	if err != nil {
		cleanup()
		return nil, fmt.Errorf("read database %s: copy for the schema upgrade: %w", path, err)
	}
	s, err := Open(ctx, filepath.Join(dir, "copy.db"))
	if err != nil {
		cleanup()
		return nil, fmt.Errorf("read database %s: %w", path, err)
	}
	s.path, s.readOnly, s.unlock = path, true, cleanup
	return s, nil
}

// walCopy reads a database on read-only media whose -wal file holds
// committed transactions: the file and its -wal are copied into a private
// temporary folder, where SQLite replays the log on opening; the copy is
// read (upgraded first when its schema is older) and Close removes it.
// When no copy can be made it refuses, saying what would be missing,
// rather than reading the file without its log.
func walCopy(ctx context.Context, path, real string) (*Store, error) {
	refuse := func(err error) error {
		return fmt.Errorf("read database %s: it is on read-only media and its write-ahead log %s-wal holds committed cells the file alone lacks; a private copy to read them failed: %w (copy both files to writable storage and read the copy)", path, filepath.Base(path), err)
	}
	dir, err := os.MkdirTemp("", "tilefit-read-")
	if err != nil {
		return nil, refuse(err)
	}
	cleanup := func() error { return os.RemoveAll(dir) }
	dst := filepath.Join(dir, "copy.db")
	for _, suffix := range []string{"", "-wal"} {
		if err := copyFile(dst+suffix, real+suffix); err != nil {
			cleanup()
			return nil, refuse(err)
		}
	}
	s, err := Open(ctx, dst)
	if err != nil {
		cleanup()
		return nil, fmt.Errorf("read database %s: %w", path, err)
	}
	s.path, s.readOnly, s.unlock = path, true, cleanup
	return s, nil
}

// copyFile copies the regular file src to a new file dst.
func copyFile(dst, src string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// cannotOpen reports whether err is SQLite's "unable to open" or one of its
// read-only errors, the ways a read-only directory shows.
func cannotOpen(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code() & 0xff {
	case 14, 8: // SQLITE_CANTOPEN, SQLITE_READONLY
		return true
	}
	return false
}

// dsn is the modernc.org/sqlite data source name for file path with query q.
func dsn(path string, q url.Values) string {
	return "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()
}

// init checks the file is a healthy tilefit database of a schema version
// this code knows and, unless read-only, switches it to WAL and applies
// pending migrations.
func (s *Store) init(ctx context.Context) error {
	var appID, version, tables int
	// One statement reads one snapshot: another process may be creating
	// the schema (tables first, then the mark, in one transaction).
	if err := s.db.QueryRowContext(ctx, `SELECT (SELECT application_id FROM pragma_application_id),
		(SELECT user_version FROM pragma_user_version), (SELECT count(*) FROM sqlite_schema)`).Scan(&appID, &version, &tables); err != nil {
		return s.classify("open database", err)
	}
	switch {
	case appID == applicationID:
	case appID == 0 && version == 0 && tables == 0:
		// A new or empty database.
		if s.readOnly {
			return &dbError{msg: fmt.Sprintf("database %s holds no tilefit data (an empty SQLite database)", s.path), kind: ErrNotTilefit}
		}
	case appID == 0:
		return &dbError{msg: fmt.Sprintf("open database %s: not a tilefit database (a SQLite database of another program: it has %d schema objects and no tilefit mark)", s.path, tables), kind: ErrNotTilefit}
	default:
		return &dbError{msg: fmt.Sprintf("open database %s: not a tilefit database (SQLite application id %#x)", s.path, appID), kind: ErrNotTilefit}
	}
	if err := s.checkVersion(version); err != nil {
		return err
	}
	if err := s.quickCheck(ctx); err != nil {
		return err
	}
	if s.readOnly {
		if version < SchemaVersion {
			return &dbError{
				msg:  fmt.Sprintf("database %s has schema version %d, older than this tilefit's %d; reading does not upgrade it: run a sweep on it once (it upgrades the schema), then read it", s.path, version, SchemaVersion),
				kind: ErrOlderSchema,
			}
		}
		return nil
	}
	var mode string
	if err := s.db.QueryRowContext(ctx, "PRAGMA journal_mode=WAL").Scan(&mode); err != nil {
		return s.classify("open database", err)
	}
	if version == SchemaVersion {
		return nil // up to date: no need to take the write lock
	}
	return s.migrate(ctx)
}
