package store

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/tilefit/tilefit/builtin"
	"github.com/tilefit/tilefit/kernel"
	"github.com/tilefit/tilefit/result"
)

// rowCell is testCell with inputs and row hashes: the reference and 32_64_2
// share one list (bitwise equal), openblas has its own; failed candidates
// have none.
func rowCell(shape string, m int, t0 time.Time) result.CellResult {
	c := testCell(cpuProv, shape, m, 6, t0)
	rows := func(salt uint64) []result.RowHashes {
		h := make(result.Hashes, m)
		for r := range h {
			h[r] = uint64(r)*0x9e3779b97f4a7c15 ^ salt
		}
		return []result.RowHashes{{Operand: "Y", Hashes: h}}
	}
	c.InputKey = "00112233aabbccdd"
	c.InputRows = make(result.Hashes, m)
	for r := range c.InputRows {
		c.InputRows[r] = uint64(r) + 1
	}
	shared := rows(1)
	c.Candidates[0].Rows = shared
	c.Candidates[2].Rows = shared
	c.Candidates[5].Rows = rows(uint64(m) + 1000) // the vendor changes with M
	return c
}

func TestRowHashesRoundTrip(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	t0 := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	var saved []result.CellResult
	for i, m := range []int{1, 37, 130} {
		c := rowCell("Wshgu", m, t0.Add(time.Duration(i)*time.Minute))
		saved = append(saved, c)
		if _, err := s.SaveCell(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	// Another shape, and the same name with another N: not the shape's rows.
	other := rowCell("W512", 37, t0)
	if _, err := s.SaveCell(ctx, other); err != nil {
		t.Fatal(err)
	}
	wider := rowCell("Wshgu", 64, t0)
	wider.Cell = result.NewCell("Wshgu", builtin.GemmF16(), kernel.Dims{"M": 64, "N": 1280, "K": 2560}, 96)
	if _, err := s.SaveCell(ctx, wider); err != nil {
		t.Fatal(err)
	}

	cells, err := s.Cells(ctx, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(nanFree(cells[:3]), nanFree(saved)) {
		t.Fatalf("row hashes do not round-trip:\n got %+v\nwant %+v", cells[0].Candidates[0], saved[0].Candidates[0])
	}
	// One list per distinct content: per cell the shared list and the
	// vendor's (the shared lists of M=37 differ from M=130's in length).
	var lists int
	if err := s.db.QueryRow("SELECT count(*) FROM row_hashes").Scan(&lists); err != nil {
		t.Fatal(err)
	}
	// Two lists per cell (the shared one, the vendor's); W512 M=37 has the
	// same lists as Wshgu M=37 and adds none.
	if want := 3*2 + 2; lists != want {
		t.Errorf("%d row hash lists stored, want %d (deduplicated)", lists, want)
	}

	got, err := s.ShapeRows(ctx, cpuProv.Key(), saved[1].Cell)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("ShapeRows: %d cells, want the 3 Wshgu N=640 cells", len(got))
	}
	for i, c := range got {
		if c.Cell.M != saved[i].Cell.M || c.InputKey != saved[i].InputKey || !reflect.DeepEqual(c.InputRows, saved[i].InputRows) {
			t.Errorf("ShapeRows cell %d: %+v", i, c.Cell)
		}
		for j, cand := range c.Candidates {
			w := saved[i].Candidates[j]
			if cand.Tile != w.Tile || cand.AA != w.AA || cand.Vendor != w.Vendor || cand.Status != w.Status || !reflect.DeepEqual(cand.Rows, w.Rows) || cand.Samples != nil {
				t.Errorf("ShapeRows cell %d candidate %d: %+v", i, j, cand)
			}
		}
	}
	if got, err := s.ShapeRows(ctx, "0000000000000000", saved[1].Cell); err != nil || got != nil {
		t.Errorf("ShapeRows of another provenance: %v %v", got, err)
	}
}

// TestSchema2Fixture opens a database written by tilefit's schema 2 (before
// the batch-invariance check; testdata/schema2.db was written by commit
// fe1b504's store with this package's testCell: Wshgu M=37 and M=130),
// migrates it to schema 3 and reads its cells without rows ("not
// recorded"); a new cell with rows is stored beside them and ShapeRows
// returns all three.
func TestSchema2Fixture(t *testing.T) {
	ctx := context.Background()
	path := fixtureCopy(t, "schema2.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if v := pragmaInt(t, path, "user_version"); v != SchemaVersion {
		t.Errorf("user_version = %d after opening, want %d", v, SchemaVersion)
	}
	cells, err := s.Cells(ctx, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(cells) != 2 {
		t.Fatalf("%d cells, want 2", len(cells))
	}
	for _, c := range cells {
		if c.Prov.Legacy || c.Prov.Key() != cpuProv.Key() || c.InputKey != "" || c.InputRows != nil || len(c.Candidates) != 6 || len(c.Candidates[0].Samples) != 6 {
			t.Errorf("schema-2 cell M=%d read as %+v", c.Cell.M, c)
		}
		for _, cand := range c.Candidates {
			if cand.Rows != nil {
				t.Errorf("schema-2 candidate %s has rows", cand.Tile)
			}
		}
	}
	nc := rowCell("Wshgu", 256, time.Now().UTC())
	if _, err := s.SaveCell(ctx, nc); err != nil {
		t.Fatal(err)
	}
	got, err := s.ShapeRows(ctx, cpuProv.Key(), nc.Cell)
	if err != nil || len(got) != 3 {
		t.Fatalf("ShapeRows: %d cells, %v", len(got), err)
	}
	if got[0].Candidates[0].Rows != nil || got[2].InputKey != nc.InputKey || !reflect.DeepEqual(got[2].Candidates[0].Rows, nc.Candidates[0].Rows) {
		t.Errorf("ShapeRows after migration: %+v", got)
	}
}
