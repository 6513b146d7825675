package store

import (
	"context"
	"errors"
	"fmt"
)

// CopyStats counts what Copy did.
type CopyStats struct {
	Provenances int // provenances read from the source
	Cells       int // cells copied
	Present     int // cells the destination already had (not copied again)
	Candidates  int // candidates of the copied cells
	Samples     int // samples of the copied cells
	Devices     int // device records copied (newer than the destination's)
}

// Copy copies the runs of src into dst: every provenance (in src's order),
// every cell with its candidates and samples (in src's order, each cell in
// its own transaction, keeping its device id) and every device record. A
// cell that dst already holds — the same provenance key, shape, M,
// dimensions and start time — is not copied again (also when several
// copies run at once: the identity is unique in the schema), and a device record
// replaces dst's only when it was measured later, so copying twice, or
// copying back, changes nothing; an interrupted copy goes on where it
// stopped when run again. Claims (leases of running sweeps) are not
// copied: they belong to the server the sweeps ran against.
//
// Provenances of schema 1 keep their keys. src and dst may be of either
// dialect.
func Copy(ctx context.Context, dst, src *Store) (CopyStats, error) {
	var st CopyStats
	if dst.readOnly {
		return st, fmt.Errorf("copy into %s: opened read-only", dst.path)
	}
	provs, err := src.Provenances(ctx)
	if err != nil {
		return st, err
	}
	st.Provenances = len(provs)
	tx, err := dst.db.BeginTx(ctx, nil)
	if err != nil {
		return st, dst.classify("write to database", err)
	}
	for _, p := range provs {
		if _, err := dst.insertProvenance(ctx, tx, p); err != nil {
			tx.Rollback()
			return st, err
		}
	}
	if err := tx.Commit(); err != nil {
		return st, fmt.Errorf("database %s: commit: %w", dst.path, err)
	}

	cells, err := src.Cells(ctx, Filter{})
	if err != nil {
		return st, err
	}
	for _, c := range cells {
		if err := ctx.Err(); err != nil {
			return st, err
		}
		tx, err := dst.db.BeginTx(ctx, nil)
		if err != nil {
			return st, dst.classify("write to database", err)
		}
		var n int
		err = tx.QueryRowContext(ctx, `SELECT count(*) FROM cell WHERE prov_key = ? AND shape = ? AND m = ?
			AND (dims = ? OR (dims = '' AND n = ? AND k = ?)) AND started = ?`,
			c.Prov.Key(), c.Cell.Shape, c.Cell.M, c.Cell.DimsOrGemm().String(), c.Cell.N, c.Cell.K, formatTime(c.Started)).Scan(&n)
		if err != nil {
			tx.Rollback()
			return st, fmt.Errorf("database %s: %w", dst.path, err)
		}
		if n > 0 {
			tx.Rollback()
			st.Present++
			continue
		}
		// Another copy may insert the cell between the check and here
		// (PostgreSQL's transactions do not serialise): the unique cell
		// identity (schema 6) makes the second insert do nothing.
		if _, err := dst.insertCellOnce(ctx, tx, c); errors.Is(err, errCellPresent) {
			tx.Rollback()
			st.Present++
			continue
		} else if err != nil {
			tx.Rollback()
			return st, fmt.Errorf("copy cell %s M=%d: %w", c.Cell.Shape, c.Cell.M, err)
		}
		if err := tx.Commit(); err != nil {
			return st, fmt.Errorf("database %s: commit: %w", dst.path, err)
		}
		st.Cells++
		st.Candidates += len(c.Candidates)
		for _, cand := range c.Candidates {
			st.Samples += len(cand.Samples)
		}
	}

	devs, err := src.Devices(ctx)
	if err != nil {
		return st, err
	}
	have, err := dst.Devices(ctx)
	if err != nil {
		return st, err
	}
	type dk struct{ backend, name string }
	latest := map[dk]DeviceRecord{}
	for _, d := range have {
		latest[dk{d.Backend, d.Name}] = d
	}
	for _, d := range devs {
		if h, ok := latest[dk{d.Backend, d.Name}]; ok && !d.Measured.After(h.Measured) {
			continue
		}
		if err := dst.SaveDevice(ctx, d); err != nil {
			return st, err
		}
		st.Devices++
	}
	return st, nil
}
