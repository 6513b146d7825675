package store

// Row hashes for the batch-invariance check (schema 3): a cell's input key
// and input row hashes, and each verified candidate's output row hashes,
// stored once per distinct list (row_hashes, keyed by sha256).

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/tilefit/tilefit/kernel"
	"github.com/tilefit/tilefit/result"
)

// saveRows stores, in tx, the input key and rows of cell cellID and the
// row hashes of its candidates (candIDs[i] is the id of c.Candidates[i]).
func saveRows(ctx context.Context, tx *sql.Tx, cellID int64, c result.CellResult, candIDs []int64) error {
	if c.InputKey != "" || c.InputRows != nil {
		var rows []byte
		if c.InputRows != nil {
			rows = c.InputRows.Bytes()
		}
		if _, err := tx.ExecContext(ctx, `UPDATE cell SET input_key = ?, input_rows = ? WHERE id = ?`, c.InputKey, rows, cellID); err != nil {
			return fmt.Errorf("input rows: %w", err)
		}
	}
	ids := map[string]int64{} // digest → row_hashes.id, within this cell
	for i, cand := range c.Candidates {
		for pos, r := range cand.Rows {
			blob := r.Hashes.Bytes()
			sum := sha256.Sum256(blob)
			digest := hex.EncodeToString(sum[:])
			id, ok := ids[digest]
			if !ok {
				if _, err := tx.ExecContext(ctx, `INSERT INTO row_hashes (digest, hashes) VALUES (?, ?) ON CONFLICT (digest) DO NOTHING`, digest, blob); err != nil {
					return fmt.Errorf("candidate %s: row hashes of %s: %w", candName(cand), r.Operand, err)
				}
				if err := tx.QueryRowContext(ctx, `SELECT id FROM row_hashes WHERE digest = ?`, digest).Scan(&id); err != nil {
					return fmt.Errorf("candidate %s: row hashes of %s: %w", candName(cand), r.Operand, err)
				}
				ids[digest] = id
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO candidate_rows (candidate_id, pos, operand, rows_id) VALUES (?, ?, ?, ?)`,
				candIDs[i], pos, r.Operand, id); err != nil {
				return fmt.Errorf("candidate %s: row hashes of %s: %w", candName(cand), r.Operand, err)
			}
		}
	}
	return nil
}

// rowReader attaches stored rows to cells and candidates read by Cells or
// ShapeRows.
type rowReader struct {
	cell func(id int64) *result.CellResult // nil when not among the cells read
	cand func(id int64) *result.Candidate
}

// read reads input keys and rows of the cells (query selects cell.id,
// input_key, input_rows) and the candidates' row hashes (rowsQuery selects
// candidate_id, operand, hashes in candidate and position order).
func (r rowReader) read(ctx context.Context, db *sql.DB, query, rowsQuery string, args ...any) error {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	err = func() error {
		defer rows.Close()
		for rows.Next() {
			var (
				id   int64
				key  string
				blob []byte
			)
			if err := rows.Scan(&id, &key, &blob); err != nil {
				return err
			}
			c := r.cell(id)
			if c == nil {
				continue
			}
			c.InputKey = key
			if blob != nil {
				if c.InputRows, err = result.HashesFromBytes(blob); err != nil {
					return fmt.Errorf("cell %d: input rows: %w", id, err)
				}
			}
		}
		return rows.Err()
	}()
	if err != nil {
		return err
	}
	rows, err = db.QueryContext(ctx, rowsQuery, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			id      int64
			operand string
			blob    []byte
		)
		if err := rows.Scan(&id, &operand, &blob); err != nil {
			return err
		}
		cand := r.cand(id)
		if cand == nil {
			continue
		}
		h, err := result.HashesFromBytes(blob)
		if err != nil {
			return fmt.Errorf("candidate %d: rows of %s: %w", id, operand, err)
		}
		cand.Rows = append(cand.Rows, result.RowHashes{Operand: operand, Hashes: h})
	}
	return rows.Err()
}

// cellRowsQueries are rowReader.read's queries over the cells Cells reads
// (where and its arguments, cell ids ≤ ?4).
func cellRowsQueries(where string) (cells, cands string) {
	return `SELECT cell.id, cell.input_key, cell.input_rows FROM cell JOIN provenance p ON p.key = cell.prov_key ` + where + ` AND cell.id <= ?4`,
		`SELECT cr.candidate_id, cr.operand, rh.hashes FROM candidate_rows cr JOIN row_hashes rh ON rh.id = cr.rows_id
		JOIN candidate c ON c.id = cr.candidate_id JOIN cell ON cell.id = c.cell_id JOIN provenance p ON p.key = cell.prov_key ` + where +
			` AND cell.id <= ?4 ORDER BY cr.candidate_id, cr.pos`
}

// ShapeRows returns what the batch-invariance check needs of the stored
// cells of cell's shape under provKey — the cells with its name and every
// dimension but M equal to its own, at any M (its own included) — in the
// order stored: each with its cell, input key and input rows, and its
// candidates' tile, family, vendor and A/A flags, status and row hashes (no
// samples).
func (s *Store) ShapeRows(ctx context.Context, provKey string, cell result.Cell) ([]result.CellResult, error) {
	want := withoutM(cell.DimsOrGemm())
	rows, err := s.db.QueryContext(ctx, `SELECT id, n, k, m, dims, op FROM cell WHERE prov_key = ? AND shape = ? ORDER BY id`, provKey, cell.Shape)
	if err != nil {
		return nil, s.classify("read", err)
	}
	var out []result.CellResult
	index := map[int64]int{}
	var ids []string
	err = func() error {
		defer rows.Close()
		for rows.Next() {
			var (
				id       int64
				c        result.Cell
				dims, op string
			)
			if err := rows.Scan(&id, &c.N, &c.K, &c.M, &dims, &op); err != nil {
				return err
			}
			c.Shape, c.Op = cell.Shape, op
			if dims != "" {
				d, err := kernel.ParseDims(dims)
				if err != nil {
					return fmt.Errorf("cell %d: %w", id, err)
				}
				c.Dims = d
			}
			if withoutM(c.DimsOrGemm()) != want {
				continue
			}
			index[id] = len(out)
			ids = append(ids, fmt.Sprint(id))
			out = append(out, result.CellResult{Cell: c})
		}
		return rows.Err()
	}()
	if err != nil {
		return nil, s.classify("read", err)
	}
	if len(out) == 0 {
		return nil, nil
	}
	in := "(" + strings.Join(ids, ",") + ")" // integer ids read above
	rows, err = s.db.QueryContext(ctx, `SELECT id, cell_id, tile, family, vendor, aa, status FROM candidate WHERE cell_id IN `+in+` ORDER BY cell_id, pos`)
	if err != nil {
		return nil, s.classify("read", err)
	}
	type ref struct{ cell, cand int }
	cands := map[int64]ref{}
	err = func() error {
		defer rows.Close()
		for rows.Next() {
			var (
				id, cellID int64
				cand       result.Candidate
				status     string
			)
			if err := rows.Scan(&id, &cellID, &cand.Tile, &cand.Family, &cand.Vendor, &cand.AA, &status); err != nil {
				return err
			}
			cand.Status = result.Status(status)
			ci := index[cellID]
			cands[id] = ref{ci, len(out[ci].Candidates)}
			out[ci].Candidates = append(out[ci].Candidates, cand)
		}
		return rows.Err()
	}()
	if err != nil {
		return nil, s.classify("read", err)
	}
	rr := rowReader{
		cell: func(id int64) *result.CellResult {
			if i, ok := index[id]; ok {
				return &out[i]
			}
			return nil
		},
		cand: func(id int64) *result.Candidate {
			if r, ok := cands[id]; ok {
				return &out[r.cell].Candidates[r.cand]
			}
			return nil
		},
	}
	if err := rr.read(ctx, s.db, `SELECT id, input_key, input_rows FROM cell WHERE id IN `+in,
		`SELECT cr.candidate_id, cr.operand, rh.hashes FROM candidate_rows cr JOIN row_hashes rh ON rh.id = cr.rows_id
		JOIN candidate c ON c.id = cr.candidate_id WHERE c.cell_id IN `+in+` ORDER BY cr.candidate_id, cr.pos`); err != nil {
		return nil, s.classify("read rows from", err)
	}
	return out, nil
}

// withoutM formats d without its M: the dimensions that make a shape.
func withoutM(d kernel.Dims) string {
	e := kernel.Dims{}
	for k, v := range d {
		if k != "M" {
			e[k] = v
		}
	}
	return e.String()
}
