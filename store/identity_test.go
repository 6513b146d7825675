package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tilefit/tilefit/result"
)

// identitySource is a SQLite store holding n cells, for the copy tests.
func identitySource(t *testing.T, n int) *Store {
	t.Helper()
	ctx := context.Background()
	src, err := Open(ctx, filepath.Join(t.TempDir(), "src.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	t0 := time.Date(2026, 3, 4, 5, 6, 7, 8, time.UTC)
	for i := 0; i < n; i++ {
		if _, err := src.SaveCell(ctx, testCell(cpuProv, fmt.Sprintf("S%d", i%7), 1+i, 3, t0.Add(time.Duration(i)*time.Second))); err != nil {
			t.Fatal(err)
		}
	}
	return src
}

// countCells counts the cell rows of s.
func countCells(t *testing.T, s *Store) int {
	t.Helper()
	var n int
	if err := s.db.QueryRowContext(context.Background(), `SELECT count(*) FROM cell`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestConcurrentCopyStoresEachCellOnce (issue 18 item 5): three `db copy`
// runs of one source into one database at once used to duplicate cells on
// PostgreSQL (check, then insert, with no unique constraint: 1970 cell rows
// for 900 cells). The cell's identity is unique in the schema now and the
// copy inserts with conflict handling: every cell is stored once, and the
// copies' counts add up.
func TestConcurrentCopyStoresEachCellOnce(t *testing.T) {
	const cells, copies = 60, 3
	src := identitySource(t, cells)
	forEachDB(t, func(t *testing.T, dst *Store, target string) {
		ctx := context.Background()
		stores := []*Store{dst}
		for len(stores) < copies {
			s, err := Open(ctx, target)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			stores = append(stores, s)
		}
		var wg sync.WaitGroup
		stats := make([]CopyStats, copies)
		errs := make([]error, copies)
		for i, s := range stores {
			wg.Add(1)
			go func() {
				defer wg.Done()
				stats[i], errs[i] = Copy(ctx, s, src)
			}()
		}
		wg.Wait()
		copied, present := 0, 0
		for i := range stores {
			if errs[i] != nil {
				t.Fatalf("copy %d: %v", i, errs[i])
			}
			copied += stats[i].Cells
			present += stats[i].Present
		}
		if n := countCells(t, dst); n != cells {
			t.Errorf("%d cell rows after %d concurrent copies of %d cells", n, copies, cells)
		}
		if copied != cells || present != (copies-1)*cells {
			t.Errorf("copies say %d copied, %d present; want %d and %d", copied, present, cells, (copies-1)*cells)
		}
	})
}

// TestMigrationMergesDuplicateCells (issue 18 item 5): a database holding
// the duplicates an earlier concurrent copy made (the schema before the
// unique cell identity) is upgraded by keeping the first row of each cell
// and dropping the copies, candidates and samples with them; then the
// identity is unique.
func TestMigrationMergesDuplicateCells(t *testing.T) {
	forEachDB(t, func(t *testing.T, s *Store, target string) {
		ctx := context.Background()
		t0 := time.Date(2026, 3, 4, 5, 6, 7, 8, time.UTC)
		// Back to the schema before the unique identity (this step is the
		// last migration), as such a database was.
		exec := func(q string) {
			t.Helper()
			if _, err := s.db.ExecContext(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		exec(`DROP INDEX cell_identity`)
		for i := 0; i < 3; i++ {
			for _, c := range []result.CellResult{testCell(cpuProv, "A", 256, 3, t0), testCell(cpuProv, "B", 256, 3, t0)} {
				if i > 0 && c.Cell.Shape == "B" {
					continue // B is stored once, A three times
				}
				if _, err := s.SaveCell(ctx, c); err != nil {
					t.Fatal(err)
				}
			}
		}
		if s.d.name == "postgres" {
			exec(fmt.Sprintf(`UPDATE tilefit_schema SET version = %d`, SchemaVersion-1))
		} else {
			exec(fmt.Sprintf(`PRAGMA user_version = %d`, SchemaVersion-1))
		}
		s.Close()
		s2, err := Open(ctx, target)
		if err != nil {
			t.Fatal(err)
		}
		defer s2.Close()
		if n := countCells(t, s2); n != 2 {
			t.Errorf("after the migration: %d cell rows, want 2 (A once, B once)", n)
		}
		var cands, samples int
		if err := s2.db.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM candidate), (SELECT count(*) FROM sample)`).Scan(&cands, &samples); err != nil {
			t.Fatal(err)
		}
		one := testCell(cpuProv, "A", 256, 3, t0)
		wantSamples := 0
		for _, c := range one.Candidates {
			wantSamples += len(c.Samples)
		}
		if cands != 2*len(one.Candidates) || samples != 2*wantSamples {
			t.Errorf("after the migration: %d candidates, %d samples; want %d, %d", cands, samples, 2*len(one.Candidates), 2*wantSamples)
		}
		cs, err := s2.Cells(ctx, Filter{})
		if err != nil || len(cs) != 2 {
			t.Fatalf("cells %d, %v", len(cs), err)
		}
		if _, err := s2.SaveCell(ctx, one); err == nil {
			t.Errorf("a second row of the same cell (same provenance, shape, dims and start) was stored")
		}
	})
}

// TestVersion: the version changes when a cell or a device record is
// stored, and only then (serve caches rendered pages by it).
func TestVersion(t *testing.T) {
	forEachDB(t, func(t *testing.T, s *Store, _ string) {
		ctx := context.Background()
		v0, err := s.Version(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if v, _ := s.Version(ctx); v != v0 {
			t.Errorf("the version changed without a write: %s, %s", v0, v)
		}
		if _, err := s.SaveCell(ctx, testCell(cpuProv, "V", 1, 3, time.Unix(5, 0).UTC())); err != nil {
			t.Fatal(err)
		}
		v1, _ := s.Version(ctx)
		if v1 == v0 {
			t.Errorf("a stored cell left the version %s", v1)
		}
		if err := s.SaveDevice(ctx, DeviceRecord{Backend: "cpu", Name: "x", Props: map[string]string{}, Measured: time.Unix(9, 0).UTC()}); err != nil {
			t.Fatal(err)
		}
		if v2, _ := s.Version(ctx); v2 == v1 {
			t.Errorf("a stored device record left the version %s", v2)
		}
	})
}

// TestSideFileIsNotADatabase (issue 18): `--db t.db-wal` opened SQLite's
// write-ahead log of t.db as a database of its own (a sweep would write
// there, destroying the log's committed cells). A side file of an existing
// database is refused, also through a link, by reading and writing opens.
func TestSideFileIsNotADatabase(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := filepath.Join(dir, "t.db")
	s, err := Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.SaveCell(ctx, testCell(cpuProv, "W", 1, 3, time.Unix(3, 0).UTC())); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("t.db-wal", filepath.Join(dir, "w.db")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{db + "-wal", db + "-shm", db + "-journal", filepath.Join(dir, "w.db")} {
		for name, open := range map[string]func(context.Context, string) (*Store, error){"Open": Open, "OpenReadOnly": OpenReadOnly, "OpenLocked": OpenLocked} {
			if x, err := open(ctx, p); err == nil || !errors.Is(err, ErrNotTilefit) || !strings.Contains(err.Error(), "not a database; pass --db "+db) {
				if x != nil {
					x.Close()
				}
				t.Errorf("%s(%s): %v", name, p, err)
			}
		}
	}
	if _, err := os.Stat(db + "-journal"); err == nil {
		t.Error("a refused open created a file")
	}
}
