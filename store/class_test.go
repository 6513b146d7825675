package store

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"
)

// TestClassRoundTrip: a candidate's numerics class is stored and read back
// (SQLite and PostgreSQL); a vendor keeps none.
func TestClassRoundTrip(t *testing.T) {
	forEachDB(t, func(t *testing.T, s *Store, _ string) {
		ctx := context.Background()
		c := testCell(cpuProv, "Wshgu", 256, 6, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
		for i := range c.Candidates {
			if !c.Candidates[i].Vendor {
				c.Candidates[i].Class = "gemm_f16/order" + c.Candidates[i].Tile
			}
		}
		if _, err := s.SaveCell(ctx, c); err != nil {
			t.Fatal(err)
		}
		got, err := s.Cells(ctx, Filter{})
		if err != nil || len(got) != 1 {
			t.Fatalf("%d cells, %v", len(got), err)
		}
		for i, cand := range got[0].Candidates {
			if want := c.Candidates[i].Class; cand.Class != want {
				t.Errorf("%s: class %q read back, want %q", cand.Tile, cand.Class, want)
			}
		}
	})
}

// classStep is the schema version whose migration adds candidate.class
// (renumber it with the step).
const classStep = 6

// TestClassMigration: a database of the schema before the class column
// (made here by dropping it and setting the version back) is upgraded on
// open; its candidates read back with no class, for readers to derive,
// and a new cell stores its classes beside them.
func TestClassMigration(t *testing.T) {
	ctx := context.Background()
	s, path := openTemp(t)
	old := testCell(cpuProv, "Wshgu", 256, 6, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	if _, err := s.SaveCell(ctx, old); err != nil {
		t.Fatal(err)
	}
	s.Close()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	// The steps after classStep run again on open: undo what they added
	// too (candidate.left_at, step 7).
	for _, q := range []string{"ALTER TABLE candidate DROP COLUMN class", "ALTER TABLE candidate DROP COLUMN left_at", fmt.Sprintf("PRAGMA user_version = %d", classStep-1)} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	s, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if v := pragmaInt(t, path, "user_version"); v != SchemaVersion {
		t.Fatalf("user_version %d after opening, want %d", v, SchemaVersion)
	}
	fresh := testCell(cpuProv, "Wshgu", 512, 6, time.Date(2026, 1, 2, 4, 0, 0, 0, time.UTC))
	fresh.Candidates[0].Class = "gemm_f16"
	if _, err := s.SaveCell(ctx, fresh); err != nil {
		t.Fatal(err)
	}
	cells, err := s.Cells(ctx, Filter{})
	if err != nil || len(cells) != 2 {
		t.Fatalf("%d cells, %v", len(cells), err)
	}
	for _, cand := range cells[0].Candidates {
		if cand.Class != "" {
			t.Errorf("old candidate %s read with class %q", cand.Tile, cand.Class)
		}
	}
	if got := cells[1].Candidates[0].Class; got != "gemm_f16" {
		t.Errorf("new candidate's class %q, want gemm_f16", got)
	}
}
