package store

// Claims: several sweep processes (on one host or many) share a plan of
// cells through leases in the database (table claim, schema 3).
//
// The protocol, the same SQL on both dialects:
//
//   - Every worker enqueues the plan's cells (EnqueueCells: INSERT … ON
//     CONFLICT DO NOTHING), so whoever comes first creates them.
//   - ClaimCell picks the first cell that is free (todo) or whose lease has
//     expired, and takes it for lease: on PostgreSQL with SELECT … FOR UPDATE
//     SKIP LOCKED (workers never wait on each other's claim), on SQLite
//     inside an IMMEDIATE transaction (one writer at a time).
//   - While it measures, the worker renews the lease (RenewClaim); a renewal
//     that finds the lease gone returns result.ErrLeaseLost.
//   - SaveClaimed stores the cell's result and marks the claim done in one
//     transaction that first locks the claim row and checks that the
//     worker still holds it: a result is saved only under a held lease, so
//     no cell is stored twice. A lease that expired but was not taken yet
//     is still held (nobody else can be measuring the cell).
//   - A worker with nothing to measure for its cell (every candidate
//     stored) marks it done (FinishClaim); one whose device failed gives the
//     cell back (ReleaseClaim).
//   - A worker that dies stops renewing; when its lease expires another
//     worker takes the cell. Expiry uses the database's clock.
//
// Claims coordinate; the results decide: a worker that takes a cell still
// measures only the candidates not yet stored for it (Measured).

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/tilefit/tilefit/result"
)

// EnqueueCells records the cells of plan (names[i] is cell i's name, for
// people reading the table) as to do, leaving cells already recorded as
// they are.
func (s *Store) EnqueueCells(ctx context.Context, plan string, names []string) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.classify("enqueue cells in", err)
	}
	defer tx.Rollback()
	st, err := tx.PrepareContext(ctx, `INSERT INTO claim (plan, cell, name, state, owner, expires, tries)
		VALUES (?, ?, ?, 'todo', '', 0, 0) ON CONFLICT (plan, cell) DO NOTHING`)
	if err != nil {
		return s.classify("enqueue cells in", err)
	}
	defer st.Close()
	for i, name := range names {
		if _, err := st.ExecContext(ctx, plan, i, name); err != nil {
			return s.classify("enqueue cells in", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return s.classify("enqueue cells in", err)
	}
	return nil
}

// ClaimCell takes the first cell of plan that is to do or whose lease has
// expired, not counting the cells in skip, for owner until lease from now,
// and returns its index. When there is none it returns cell -1 and the
// number of cells of plan not yet done (outside skip): 0 means the plan is
// finished, more means other workers hold them (wait, and try again: a
// lease may expire).
func (s *Store) ClaimCell(ctx context.Context, plan, owner string, lease time.Duration, skip []int) (cell, pending int, err error) {
	notIn := ""
	if len(skip) > 0 {
		ids := make([]string, len(skip))
		for i, c := range skip {
			ids[i] = strconv.Itoa(c)
		}
		notIn = " AND cell NOT IN (" + strings.Join(ids, ",") + ")"
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return -1, 0, s.classify("claim a cell in", err)
	}
	defer tx.Rollback()
	err = tx.QueryRowContext(ctx, `SELECT cell FROM claim WHERE plan = ? AND (state = 'todo' OR (state = 'running' AND expires < `+s.d.now+`))`+
		notIn+` ORDER BY cell LIMIT 1`+s.d.skipLocked, plan).Scan(&cell)
	if errors.Is(err, sql.ErrNoRows) {
		err = tx.QueryRowContext(ctx, `SELECT count(*) FROM claim WHERE plan = ? AND state <> 'done'`+notIn, plan).Scan(&pending)
		if err != nil {
			return -1, 0, s.classify("claim a cell in", err)
		}
		return -1, pending, nil
	}
	if err != nil {
		return -1, 0, s.classify("claim a cell in", err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE claim SET state = 'running', owner = ?, expires = `+s.d.now+` + ?, tries = tries + 1
		WHERE plan = ? AND cell = ?`, owner, lease.Milliseconds(), plan, cell); err != nil {
		return -1, 0, s.classify("claim a cell in", err)
	}
	if err := tx.Commit(); err != nil {
		return -1, 0, s.classify("claim a cell in", err)
	}
	return cell, 1, nil
}

// RenewClaim extends owner's lease on cell of plan to lease from now; it
// returns result.ErrLeaseLost when owner no longer holds it.
func (s *Store) RenewClaim(ctx context.Context, plan string, cell int, owner string, lease time.Duration) error {
	return s.updateClaim(ctx, "renew the lease in", `UPDATE claim SET expires = `+s.d.now+` + ?
		WHERE plan = ? AND cell = ? AND owner = ? AND state = 'running'`, lease.Milliseconds(), plan, cell, owner)
}

// ReleaseClaim gives owner's cell of plan back (to do) for another worker;
// result.ErrLeaseLost when owner no longer holds it.
func (s *Store) ReleaseClaim(ctx context.Context, plan string, cell int, owner string) error {
	return s.updateClaim(ctx, "release a cell in", `UPDATE claim SET state = 'todo', owner = '', expires = 0
		WHERE plan = ? AND cell = ? AND owner = ? AND state = 'running'`, plan, cell, owner)
}

// FinishClaim marks owner's cell of plan done without a result to save
// (every candidate was stored already); result.ErrLeaseLost when owner no
// longer holds it.
func (s *Store) FinishClaim(ctx context.Context, plan string, cell int, owner string) error {
	return s.updateClaim(ctx, "finish a cell in", `UPDATE claim SET state = 'done'
		WHERE plan = ? AND cell = ? AND owner = ? AND state = 'running'`, plan, cell, owner)
}

func (s *Store) updateClaim(ctx context.Context, op, q string, args ...any) error {
	res, err := s.db.ExecContext(ctx, q, args...)
	if err != nil {
		return s.classify(op, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return s.classify(op, err)
	}
	if n == 0 {
		return result.ErrLeaseLost
	}
	return nil
}

// SaveClaimed stores c as SaveCell does, and marks owner's claim on cell of
// plan done, in one transaction — only while owner holds the claim: else
// nothing is stored and the error is result.ErrLeaseLost.
func (s *Store) SaveClaimed(ctx context.Context, plan string, cell int, owner string, c result.CellResult) (int64, error) {
	if err := s.checkCell(c); err != nil {
		return 0, err
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, s.classify("write to database", err)
	}
	defer tx.Rollback()
	var holder, state string
	err = tx.QueryRowContext(ctx, `SELECT owner, state FROM claim WHERE plan = ? AND cell = ?`+s.d.forUpdate, plan, cell).Scan(&holder, &state)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("database %s: cell %d of plan %s was never claimed", s.path, cell, plan)
	}
	if err != nil {
		return 0, fmt.Errorf("database %s: claim: %w", s.path, err)
	}
	if holder != owner || state != "running" {
		return 0, result.ErrLeaseLost
	}
	id, err := s.insertCell(ctx, tx, c)
	if err != nil {
		return 0, err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE claim SET state = 'done' WHERE plan = ? AND cell = ?`, plan, cell); err != nil {
		return 0, fmt.Errorf("database %s: claim: %w", s.path, err)
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("database %s: commit: %w", s.path, err)
	}
	return id, nil
}

// A Claim is one row of the claim table (for tests and inspection).
type Claim struct {
	Plan    string
	Cell    int
	Name    string
	State   string // "todo", "running", "done"
	Owner   string
	Expires time.Time
	Tries   int
}

// Claims returns the claims of plan ("" for every plan), by plan and cell.
func (s *Store) Claims(ctx context.Context, plan string) ([]Claim, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT plan, cell, name, state, owner, expires, tries FROM claim
		WHERE ?1 = '' OR plan = ?1 ORDER BY plan, cell`, plan)
	if err != nil {
		return nil, s.classify("read claims from", err)
	}
	defer rows.Close()
	var out []Claim
	for rows.Next() {
		var c Claim
		var ms int64
		if err := rows.Scan(&c.Plan, &c.Cell, &c.Name, &c.State, &c.Owner, &ms, &c.Tries); err != nil {
			return nil, s.classify("read claims from", err)
		}
		c.Expires = time.UnixMilli(ms).UTC()
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, s.classify("read claims from", err)
	}
	return out, nil
}
