// Package store keeps tilefit's results in a database: a SQLite file
// (through the pure-Go modernc.org/sqlite; the default) or a PostgreSQL
// server (through pgx's database/sql driver; a postgres:// URL), with one
// schema and the same queries for both (dialect.go translates). It holds
// the provenance of every result, each measured cell with its candidates,
// every raw timing sample, measured device ceilings, and the leases by
// which several sweep processes share a plan (claims.go).
//
// Durability: SQLite runs in WAL mode with synchronous=FULL, and
// SaveCell writes a cell, its candidates and all their samples in one
// transaction, so a process killed at any moment (SIGKILL included) loses no
// committed cell and leaves no partial one. Cells are never updated or
// deleted once written: a resumed sweep adds new cell rows, and readers (the
// report) take the latest result per tile.
//
// Concurrency: a Store is safe for use by several goroutines; writes are
// serialised by SQLite (transactions begin IMMEDIATE, with a busy timeout).
// Several processes may read while one writes; a sweep takes Lock to be the
// only writer, or LockShared to share the file with other sweeps that
// claim cells (see ClaimCell). On PostgreSQL any number of processes write
// at once; sweeps there always claim cells.
//
// The schema is versioned (SQLite: PRAGMA user_version, with PRAGMA
// application_id marking the file as tilefit's; PostgreSQL: the table
// tilefit_schema) and upgraded by ordered migrations when a database is
// opened for writing.
package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/tilefit/tilefit/kernel"
	"github.com/tilefit/tilefit/result"
	"modernc.org/sqlite"
)

// Errors an Open can wrap; test with errors.Is.
var (
	// ErrNewerSchema: the database was written by a newer tilefit.
	ErrNewerSchema = errors.New("database schema is newer than this tilefit")
	// ErrNotTilefit: the file is not a SQLite database, or a SQLite
	// database of another application.
	ErrNotTilefit = errors.New("not a tilefit database")
	// ErrCorrupt: the file is a tilefit database that fails SQLite's
	// integrity check.
	ErrCorrupt = errors.New("database is corrupt")
	// ErrLocked: another process holds the sweep lock (see Lock).
	ErrLocked = errors.New("database is in use")
)

// busyTimeout is how long a connection waits for another writer's lock
// before giving up with SQLITE_BUSY.
const busyTimeout = 30 * time.Second

// A Store is an open tilefit database.
type Store struct {
	db *sql.DB
	// path is the file's path as given, or the server's URL without its
	// password; messages name it.
	path string
	d    dialect
	// readOnly: opened by OpenReadOnly; nothing is ever written.
	readOnly bool
	// unlock releases the sweep lock of a Store from OpenLocked (nil
	// otherwise); Close calls it after closing the database.
	unlock func() error
}

// A DeviceRecord holds measured facts about a device (result.DeviceRecord).
type DeviceRecord = result.DeviceRecord

// A Filter selects cells; an empty field matches anything.
type Filter struct {
	ProvKey string // result.Provenance.Key()
	Backend string
	Family  string
}

// dbError is an error with a fixed message that wraps a sentinel and,
// optionally, the underlying error.
type dbError struct {
	msg  string
	kind error
	err  error
}

func (e *dbError) Error() string { return e.msg }

func (e *dbError) Unwrap() []error {
	if e.err == nil {
		return []error{e.kind}
	}
	return []error{e.kind, e.err}
}

// classify turns SQLite's "not a database" and "corrupt" errors into clear
// errors naming the file; other errors are wrapped with op.
func (s *Store) classify(op string, err error) error {
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case 26: // SQLITE_NOTADB
			return &dbError{msg: fmt.Sprintf("open database %s: not a tilefit database (file is not a database)", s.path), kind: ErrNotTilefit, err: err}
		case 11: // SQLITE_CORRUPT
			return &dbError{msg: fmt.Sprintf("database %s is corrupt (%v); restore it from a copy or pass another --db", s.path, err), kind: ErrCorrupt, err: err}
		}
	}
	return fmt.Errorf("%s %s: %w", op, s.path, err)
}

func (s *Store) newer(version int) error {
	return &dbError{
		msg:  fmt.Sprintf("database %s has schema version %d; this tilefit knows up to %d: upgrade tilefit", s.path, version, SchemaVersion),
		kind: ErrNewerSchema,
	}
}

// quickCheck runs PRAGMA quick_check and reports its first complaint.
func (s *Store) quickCheck(ctx context.Context) error {
	rows, err := s.db.QueryContext(ctx, "PRAGMA quick_check")
	if err != nil {
		return s.classify("check database", err)
	}
	defer rows.Close()
	var msgs []string
	for rows.Next() {
		var m string
		if err := rows.Scan(&m); err != nil {
			return s.classify("check database", err)
		}
		if m != "ok" {
			msgs = append(msgs, m)
		}
	}
	if err := rows.Err(); err != nil {
		return s.classify("check database", err)
	}
	if len(msgs) > 0 {
		return &dbError{
			msg:  fmt.Sprintf("database %s is corrupt (%s); restore it from a copy or pass another --db", s.path, msgs[0]),
			kind: ErrCorrupt,
		}
	}
	return nil
}

// migrate applies the pending migrations, each in its own IMMEDIATE
// transaction that re-reads user_version, so that two processes opening the
// same new database cannot both apply a step.
func (s *Store) migrate(ctx context.Context) error {
	for {
		done, err := s.migrateStep(ctx)
		if err != nil {
			return err
		}
		if done {
			return nil
		}
	}
}

func (s *Store) migrateStep(ctx context.Context) (done bool, err error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return false, s.classify("migrate database", err)
	}
	defer tx.Rollback()
	var version int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return false, s.classify("migrate database", err)
	}
	if err := s.checkVersion(version); err != nil {
		return false, err
	}
	if version == SchemaVersion {
		return true, nil
	}
	if _, err := tx.ExecContext(ctx, migrations[version]); err != nil {
		return false, fmt.Errorf("migrate database %s to schema version %d: %w", s.path, version+1, err)
	}
	// PRAGMA values cannot be bound parameters.
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA application_id = %d", applicationID)); err != nil {
		return false, fmt.Errorf("migrate database %s: %w", s.path, err)
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", version+1)); err != nil {
		return false, fmt.Errorf("migrate database %s: %w", s.path, err)
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("migrate database %s to schema version %d: %w", s.path, version+1, err)
	}
	return false, nil
}

// Path is the path the store was opened with.
func (s *Store) Path() string { return s.path }

// Close closes the database and, for a Store from OpenLocked, then releases
// the sweep lock.
func (s *Store) Close() error {
	s.leaveWAL()
	err := s.db.Close()
	if s.unlock != nil {
		if uerr := s.unlock(); err == nil {
			err = uerr
		}
		s.unlock = nil
	}
	if err != nil {
		return fmt.Errorf("close database %s: %w", s.path, err)
	}
	return nil
}

// leaveWAL, on closing a SQLite database this process wrote to, folds the
// write-ahead log into the file and switches it back to a rollback
// journal, so that the file alone holds every cell (copy it, commit it)
// and later read-only opens create no -wal and -shm files beside it (a
// read-only connection to a WAL database must create them and cannot
// remove them). The next writer switches to WAL again. While another
// connection has the file open the switch is refused and the database
// stays in WAL mode, which is harmless: best effort, errors ignored.
func (s *Store) leaveWAL() {
	if s.readOnly || s.d.name != sqliteDialect.name {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s.db.SetMaxIdleConns(1) // close the pool's other idle connections
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return
	}
	defer conn.Close()
	var mode string
	_ = conn.QueryRowContext(ctx, "PRAGMA journal_mode=DELETE").Scan(&mode)
}

// SaveCell stores c — its provenance (once per key), the cell, its
// candidates in order and every raw sample — in one transaction, and returns
// the new cell's id. A candidate may appear once per cell (its tile and AA
// flag together are unique). Times are stored in UTC. Errors name the
// database and the step, not the cell: the caller names the cell (tune's
// "save cell Wz M=256: database x.db: commit: …").
func (s *Store) SaveCell(ctx context.Context, c result.CellResult) (int64, error) {
	if err := s.checkCell(c); err != nil {
		return 0, err
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, s.classify("write to database", err)
	}
	defer tx.Rollback()
	id, err := s.insertCell(ctx, tx, c)
	if err != nil {
		return 0, err
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("database %s: commit: %w", s.path, err)
	}
	return id, nil
}

// checkCell refuses what SaveCell never stores: a candidate twice, a
// provenance without an operator.
func (s *Store) checkCell(c result.CellResult) error {
	type tk struct {
		tile string
		aa   bool
	}
	seen := map[tk]bool{}
	for _, cand := range c.Candidates {
		k := tk{cand.Tile, cand.AA}
		if seen[k] {
			return fmt.Errorf("candidate %s appears twice", candName(cand))
		}
		seen[k] = true
	}
	if c.Prov.Operator == "" || c.Prov.Legacy {
		return fmt.Errorf("database %s: provenance names no operator", s.path)
	}
	return nil
}

// insertProvenance stores p under its key unless a provenance of that key
// is stored. A legacy provenance (schema 1) keeps its old key and is stored
// as schema 1 stored it (no operator or types), so that it reads back the
// same (db copy moves such rows).
func (s *Store) insertProvenance(ctx context.Context, tx *sql.Tx, p result.Provenance) (string, error) {
	key := p.Key()
	op, types := p.Operator, p.Types
	if p.Legacy {
		op, types = "", ""
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO provenance
		(key, backend, device, arch, compiler, flags, driver, family, source_hash, out_f16, operator, types)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (key) DO NOTHING`,
		key, p.Backend, p.Device, p.Arch, p.Compiler, p.Flags, p.Driver, p.Family, p.SourceHash, p.OutF16(), op, types); err != nil {
		return "", fmt.Errorf("database %s: provenance: %w", s.path, err)
	}
	return key, nil
}

// errCellPresent: insertCellOnce found the cell's identity stored.
var errCellPresent = errors.New("cell already stored")

// insertCell writes c (its provenance, the cell, candidates and samples) in
// tx and returns the cell's id.
func (s *Store) insertCell(ctx context.Context, tx *sql.Tx, c result.CellResult) (int64, error) {
	return s.insertCellWith(ctx, tx, c, "")
}

// insertCellOnce is insertCell that does nothing, and returns
// errCellPresent, when a cell of c's identity (the unique index
// cell_identity) is stored, also by a transaction that committed while
// this one ran.
func (s *Store) insertCellOnce(ctx context.Context, tx *sql.Tx, c result.CellResult) (int64, error) {
	return s.insertCellWith(ctx, tx, c, " ON CONFLICT (prov_key, shape, m, n, k, dims, started) DO NOTHING")
}

func (s *Store) insertCellWith(ctx context.Context, tx *sql.Tx, c result.CellResult, onConflict string) (int64, error) {
	clocks, err := encodeStrings(c.Clocks)
	if err != nil {
		return 0, fmt.Errorf("clocks: %w", err)
	}
	key, err := s.insertProvenance(ctx, tx, c.Prov)
	if err != nil {
		return 0, err
	}
	var cellID int64
	err = tx.QueryRowContext(ctx, `INSERT INTO cell
		(prov_key, shape, n, k, m, calls, reference, seed, rounds, sets, started, finished, clocks, op, dims, flop, bytes, device_id)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`+onConflict+` RETURNING id`,
		key, c.Cell.Shape, c.Cell.N, c.Cell.K, c.Cell.M, c.Cell.Calls, c.Reference, int64(c.Seed),
		c.Rounds, c.Sets, formatTime(c.Started), formatTime(c.Finished), clocks,
		c.Cell.Op, c.Cell.DimsOrGemm().String(), nullFloat(c.Cell.Flop), nullFloat(c.Cell.Bytes), c.DeviceID).Scan(&cellID)
	if onConflict != "" && errors.Is(err, sql.ErrNoRows) {
		return 0, errCellPresent
	}
	if err != nil {
		return 0, fmt.Errorf("database %s: %w", s.path, err)
	}
	candStmt, err := tx.PrepareContext(ctx, `INSERT INTO candidate
		(cell_id, pos, tile, params, vendor, aa, status, detail, bitwise, max_err, compile_seconds, dispatches, family, resources, class, left_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`)
	if err != nil {
		return 0, fmt.Errorf("database %s: %w", s.path, err)
	}
	defer candStmt.Close()
	sampleStmt, err := tx.PrepareContext(ctx, `INSERT INTO sample (candidate_id, round, us) VALUES (?, ?, ?)`)
	if err != nil {
		return 0, fmt.Errorf("database %s: %w", s.path, err)
	}
	defer sampleStmt.Close()
	candIDs := make([]int64, len(c.Candidates))
	for i, cand := range c.Candidates {
		resources, err := encodeResources(cand.Resources)
		if err != nil {
			return 0, fmt.Errorf("database %s: candidate %s: %w", s.path, candName(cand), err)
		}
		var candID int64
		err = candStmt.QueryRowContext(ctx, cellID, i, cand.Tile, cand.Params, cand.Vendor, cand.AA,
			string(cand.Status), cand.Detail, cand.Bitwise, nullFloat(cand.MaxErr), nullFloat(cand.CompileSeconds), cand.Dispatches, cand.Family, resources, cand.Class, cand.LeftAt).Scan(&candID)
		if err != nil {
			return 0, fmt.Errorf("database %s: candidate %s: %w", s.path, candName(cand), err)
		}
		candIDs[i] = candID
		for r, us := range cand.Samples {
			if _, err := sampleStmt.ExecContext(ctx, candID, r, nullFloat(us)); err != nil {
				return 0, fmt.Errorf("database %s: candidate %s: sample %d: %w", s.path, candName(cand), r, err)
			}
		}
	}
	if err := saveRows(ctx, tx, cellID, c, candIDs); err != nil {
		return 0, fmt.Errorf("database %s: %w", s.path, err)
	}
	return cellID, nil
}

func candName(c result.Candidate) string {
	if c.AA {
		return c.Tile + " (A/A twin)"
	}
	return c.Tile
}

// Measured returns the outcome of every tile already stored for cell (its
// shape name, N, K and M) under the provenance key provKey; where a tile was
// stored more than once, the latest outcome wins. A/A twins are left out:
// they belong to the reference tile's timing. Resume skips the tiles found
// here (or only those whose status is final).
func (s *Store) Measured(ctx context.Context, provKey string, cell result.Cell) (map[string]result.Status, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT c.tile, c.status
		FROM candidate c JOIN cell ON cell.id = c.cell_id
		WHERE cell.prov_key = ? AND cell.shape = ? AND cell.m = ? AND (cell.dims = ? OR (cell.dims = '' AND cell.n = ? AND cell.k = ?)) AND c.aa = 0
		ORDER BY cell.id, c.pos`,
		provKey, cell.Shape, cell.M, cell.DimsOrGemm().String(), cell.N, cell.K)
	if err != nil {
		return nil, s.classify("read", err)
	}
	defer rows.Close()
	out := map[string]result.Status{}
	for rows.Next() {
		var tile, status string
		if err := rows.Scan(&tile, &status); err != nil {
			return nil, s.classify("read", err)
		}
		out[tile] = result.Status(status)
	}
	if err := rows.Err(); err != nil {
		return nil, s.classify("read", err)
	}
	return out, nil
}

// Cells returns the stored cells that match f, in insertion order, each
// with its candidates in their stored order and every sample. Times come
// back in UTC. A candidate without samples has nil Samples.
func (s *Store) Cells(ctx context.Context, f Filter) ([]result.CellResult, error) {
	r := cellsRead{where: `WHERE (?1 = '' OR p.key = ?1) AND (?2 = '' OR p.backend = ?2) AND (?3 = '' OR p.family = ?3)`,
		args: []any{f.ProvKey, f.Backend, f.Family}, index: map[int64]int{}, cands: map[int64]candRef{}}
	// Cells are written whole in one transaction and never changed, so
	// reading candidates and samples of cells with id ≤ the last cell seen
	// is consistent without holding a read transaction.
	if err := r.readCells(ctx, s.db); err != nil {
		return nil, s.classify("read cells from", err)
	}
	if len(r.cells) == 0 {
		return nil, nil
	}
	if err := r.readCandidates(ctx, s.db); err != nil {
		return nil, s.classify("read candidates from", err)
	}
	if err := r.readSamples(ctx, s.db); err != nil {
		return nil, s.classify("read samples from", err)
	}
	rr := rowReader{
		cell: func(id int64) *result.CellResult {
			if i, ok := r.index[id]; ok {
				return &r.cells[i]
			}
			return nil
		},
		cand: func(id int64) *result.Candidate {
			if c, ok := r.cands[id]; ok {
				return &r.cells[c.cell].Candidates[c.cand]
			}
			return nil
		},
	}
	cq, rq := cellRowsQueries(r.where)
	if err := rr.read(ctx, s.db, cq, rq, r.upTo()...); err != nil {
		return nil, s.classify("read rows from", err)
	}
	return r.cells, nil
}

// cellsRead is one Cells call's state, in its phases: the cells of the
// filter (where, args), then their candidates and samples (of cells with id
// at most maxID).
type cellsRead struct {
	where string
	args  []any
	cells []result.CellResult
	index map[int64]int     // cell id → index in cells
	cands map[int64]candRef // candidate id → where it is
	maxID int64
}

// candRef is where a candidate is: cells[cell].Candidates[cand].
type candRef struct{ cell, cand int }

// upTo is the query arguments with the last cell's id (?4).
func (r *cellsRead) upTo() []any { return append(slices.Clone(r.args), r.maxID) }

// readCells reads the cells and their provenances.
func (r *cellsRead) readCells(ctx context.Context, db *sql.DB) error {
	rows, err := db.QueryContext(ctx, `SELECT cell.id, p.backend, p.device, p.arch, p.compiler, p.flags, p.driver,
		p.family, p.source_hash, p.out_f16, p.operator, p.types, cell.shape, cell.n, cell.k, cell.m, cell.calls, cell.reference,
		cell.seed, cell.rounds, cell.sets, cell.started, cell.finished, cell.clocks, cell.op, cell.dims, cell.flop, cell.bytes, cell.device_id
		FROM cell JOIN provenance p ON p.key = cell.prov_key `+r.where+` ORDER BY cell.id`, r.args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			c                 result.CellResult
			id, seed          int64
			started, finished string
			clocks            sql.NullString
			outF16            bool
			dims              string
			flop, bytes       sql.NullFloat64
		)
		p := &c.Prov
		if err := rows.Scan(&id, &p.Backend, &p.Device, &p.Arch, &p.Compiler, &p.Flags, &p.Driver,
			&p.Family, &p.SourceHash, &outF16, &p.Operator, &p.Types, &c.Cell.Shape, &c.Cell.N, &c.Cell.K, &c.Cell.M, &c.Cell.Calls,
			&c.Reference, &seed, &c.Rounds, &c.Sets, &started, &finished, &clocks, &c.Cell.Op, &dims, &flop, &bytes, &c.DeviceID); err != nil {
			return err
		}
		legacyProv(p, outF16)
		if err := readCell(&c.Cell, dims, flop, bytes, outF16); err != nil {
			return fmt.Errorf("cell %d: %w", id, err)
		}
		c.Seed = uint64(seed)
		var err error
		if c.Started, err = parseTime(started); err != nil {
			return fmt.Errorf("cell %d: started: %w", id, err)
		}
		if c.Finished, err = parseTime(finished); err != nil {
			return fmt.Errorf("cell %d: finished: %w", id, err)
		}
		if clocks.Valid {
			if err := json.Unmarshal([]byte(clocks.String), &c.Clocks); err != nil {
				return fmt.Errorf("cell %d: clocks: %w", id, err)
			}
		}
		r.index[id] = len(r.cells)
		r.cells = append(r.cells, c)
		r.maxID = id
	}
	return rows.Err()
}

// readCandidates reads the cells' candidates, in order.
func (r *cellsRead) readCandidates(ctx context.Context, db *sql.DB) error {
	rows, err := db.QueryContext(ctx, `SELECT c.id, c.cell_id, c.tile, c.params, c.vendor, c.aa, c.status,
		c.detail, c.bitwise, c.max_err, c.compile_seconds, c.dispatches, c.family, c.resources, c.class, c.left_at
		FROM candidate c JOIN cell ON cell.id = c.cell_id JOIN provenance p ON p.key = cell.prov_key `+r.where+
		` AND cell.id <= ?4 ORDER BY c.cell_id, c.pos`, r.upTo()...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			cand                result.Candidate
			id, cellID          int64
			status              string
			maxErr, compileSecs sql.NullFloat64
			resources           sql.NullString
		)
		if err := rows.Scan(&id, &cellID, &cand.Tile, &cand.Params, &cand.Vendor, &cand.AA, &status,
			&cand.Detail, &cand.Bitwise, &maxErr, &compileSecs, &cand.Dispatches, &cand.Family, &resources, &cand.Class, &cand.LeftAt); err != nil {
			return err
		}
		if resources.Valid {
			if err := json.Unmarshal([]byte(resources.String), &cand.Resources); err != nil {
				return fmt.Errorf("candidate %d: resources: %w", id, err)
			}
		}
		cand.Status = result.Status(status)
		cand.MaxErr = fromNull(maxErr)
		cand.CompileSeconds = fromNull(compileSecs)
		ci, ok := r.index[cellID]
		if !ok {
			return fmt.Errorf("candidate %d of unknown cell %d", id, cellID)
		}
		r.cands[id] = candRef{ci, len(r.cells[ci].Candidates)}
		r.cells[ci].Candidates = append(r.cells[ci].Candidates, cand)
	}
	return rows.Err()
}

// readSamples reads the candidates' samples, round by round.
func (r *cellsRead) readSamples(ctx context.Context, db *sql.DB) error {
	rows, err := db.QueryContext(ctx, `SELECT s.candidate_id, s.round, s.us
		FROM sample s JOIN candidate c ON c.id = s.candidate_id JOIN cell ON cell.id = c.cell_id
		JOIN provenance p ON p.key = cell.prov_key `+r.where+` AND cell.id <= ?4
		ORDER BY s.candidate_id, s.round`, r.upTo()...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			candID int64
			round  int
			us     sql.NullFloat64
		)
		if err := rows.Scan(&candID, &round, &us); err != nil {
			return err
		}
		ref, ok := r.cands[candID]
		if !ok {
			return fmt.Errorf("sample of unknown candidate %d", candID)
		}
		cand := &r.cells[ref.cell].Candidates[ref.cand]
		if round != len(cand.Samples) {
			return fmt.Errorf("candidate %d: sample of round %d follows %d samples", candID, round, len(cand.Samples))
		}
		cand.Samples = append(cand.Samples, fromNull(us))
	}
	return rows.Err()
}

// Provenances returns the distinct provenances of the stored cells, in the
// order they were first stored.
func (s *Store) Provenances(ctx context.Context) ([]result.Provenance, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT backend, device, arch, compiler, flags, driver, family, source_hash, out_f16, operator, types
		FROM provenance ORDER BY rowid`)
	if err != nil {
		return nil, s.classify("read provenances from", err)
	}
	defer rows.Close()
	var out []result.Provenance
	for rows.Next() {
		var p result.Provenance
		var outF16 bool
		if err := rows.Scan(&p.Backend, &p.Device, &p.Arch, &p.Compiler, &p.Flags, &p.Driver, &p.Family, &p.SourceHash, &outF16, &p.Operator, &p.Types); err != nil {
			return nil, s.classify("read provenances from", err)
		}
		legacyProv(&p, outF16)
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, s.classify("read provenances from", err)
	}
	return out, nil
}

// SaveDevice stores d, replacing an earlier record of the same backend and
// device name (which keeps its place in the order Devices returns).
func (s *Store) SaveDevice(ctx context.Context, d DeviceRecord) error {
	props, err := json.Marshal(d.Props)
	if err != nil {
		return fmt.Errorf("save device %s: %w", d.Name, err)
	}
	_, err = s.db.ExecContext(ctx, `INSERT INTO device (backend, name, props, measured) VALUES (?, ?, ?, ?)
		ON CONFLICT (backend, name) DO UPDATE SET props = excluded.props, measured = excluded.measured`,
		d.Backend, d.Name, string(props), formatTime(d.Measured))
	if err != nil {
		return s.classify("save device "+d.Name+" in", err)
	}
	return nil
}

// Version identifies what the database holds for a report: it changes when
// a cell is stored (cells are never updated; a migration may drop
// duplicates) or a device record is stored or replaced, and is the same
// otherwise, so a view rendered at one version can be shown again while
// the version stands (serve caches pages by it).
func (s *Store) Version(ctx context.Context) (string, error) {
	var cells, maxID, devices int64
	var measured string
	err := s.db.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM cell), (SELECT coalesce(max(id), 0) FROM cell),
		(SELECT count(*) FROM device), (SELECT coalesce(max(measured), '') FROM device)`).Scan(&cells, &maxID, &devices, &measured)
	if err != nil {
		return "", s.classify("read database", err)
	}
	return fmt.Sprintf("%d/%d/%d/%s", cells, maxID, devices, measured), nil
}

// Devices returns the stored device records in the order they were first
// stored. Times come back in UTC.
func (s *Store) Devices(ctx context.Context) ([]DeviceRecord, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT backend, name, props, measured FROM device ORDER BY rowid`)
	if err != nil {
		return nil, s.classify("read devices from", err)
	}
	defer rows.Close()
	var out []DeviceRecord
	for rows.Next() {
		var d DeviceRecord
		var props, measured string
		if err := rows.Scan(&d.Backend, &d.Name, &props, &measured); err != nil {
			return nil, s.classify("read devices from", err)
		}
		if err := json.Unmarshal([]byte(props), &d.Props); err != nil {
			return nil, fmt.Errorf("read devices from %s: device %s: props: %w", s.path, d.Name, err)
		}
		if d.Measured, err = parseTime(measured); err != nil {
			return nil, fmt.Errorf("read devices from %s: device %s: %w", s.path, d.Name, err)
		}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, s.classify("read devices from", err)
	}
	return out, nil
}

// formatTime formats t in UTC, RFC 3339 with nanoseconds.
func formatTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func parseTime(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, err
	}
	return t.UTC(), nil
}

// nullFloat stores NaN as NULL (SQLite has no NaN); ±Inf are stored as is.
func nullFloat(x float64) sql.NullFloat64 {
	if math.IsNaN(x) {
		return sql.NullFloat64{}
	}
	return sql.NullFloat64{Float64: x, Valid: true}
}

func fromNull(x sql.NullFloat64) float64 {
	if !x.Valid {
		return math.NaN()
	}
	return x.Float64
}

// encodeStrings encodes a string list as JSON; nil is NULL.
func encodeStrings(ss []string) (sql.NullString, error) {
	if ss == nil {
		return sql.NullString{}, nil
	}
	b, err := json.Marshal(ss)
	if err != nil {
		return sql.NullString{}, err
	}
	return sql.NullString{String: string(b), Valid: true}, nil
}

// encodeResources encodes a candidate's resources as a JSON object; nil
// (unknown) is NULL.
func encodeResources(r map[string]int) (sql.NullString, error) {
	if r == nil {
		return sql.NullString{}, nil
	}
	b, err := json.Marshal(r)
	if err != nil {
		return sql.NullString{}, err
	}
	return sql.NullString{String: string(b), Valid: true}, nil
}

// legacyProv completes a provenance stored by schema 1 (no operator): it
// computed gemm_f16 with fp32 or fp16 output, and keeps its old key.
func legacyProv(p *result.Provenance, outF16 bool) {
	if p.Operator != "" {
		return
	}
	p.Legacy, p.Operator, p.Types = true, "gemm_f16", "X=f16,W=f16,Y=f32"
	if outF16 {
		p.Types = "X=f16,W=f16,Y=f16"
	}
}

// readCell fills a cell's dimensions and counts from their columns; a cell
// of schema 1 (no dims) is a gemm_f16 cell: dims M, N, K, 2·M·N·K FLOPs,
// 2MK + 2NK + (4 or 2)·MN bytes.
func readCell(c *result.Cell, dims string, flop, bytes sql.NullFloat64, outF16 bool) error {
	if dims == "" {
		c.Op = "gemm_f16"
		c.Dims = kernel.Dims{"M": c.M, "N": c.N, "K": c.K}
		es := 4.0
		if outF16 {
			es = 2
		}
		m, n, k := float64(c.M), float64(c.N), float64(c.K)
		c.Flop, c.Bytes = 2*m*n*k, 2*m*k+2*n*k+es*m*n
		return nil
	}
	d, err := kernel.ParseDims(dims)
	if err != nil {
		return err
	}
	c.Dims = d
	c.Flop, c.Bytes = fromNull(flop), fromNull(bytes)
	return nil
}
