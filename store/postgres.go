package store

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// pgConnectTimeout bounds connecting to a server when the URL sets no
// connect_timeout.
const pgConnectTimeout = 15 * time.Second

// pgMigrationLock is the advisory lock key that serialises schema
// migrations on a server (the bytes "tfit").
const pgMigrationLock = 0x74666974

// redactURL returns u with its password replaced by "xxxxx" (for messages).
func redactURL(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "postgres://…"
	}
	return p.Redacted()
}

// CheckURL reports whether u is a PostgreSQL URL pgx can connect with
// (its syntax and parameters; nothing is contacted), for refusing a bad
// --db before any work starts.
func CheckURL(u string) error {
	if _, err := pgx.ParseConfig(u); err != nil {
		// pgx's message repeats the URL, its password masked.
		return fmt.Errorf("open database: not a valid PostgreSQL URL: %v", err)
	}
	return nil
}

// openPostgres opens the database at the PostgreSQL URL u: for reading and
// writing, creating the schema in the URL's schema (search_path) when it
// holds no tables and upgrading an older one; or, readOnly, for reading
// only (every transaction read-only; the schema must be this tilefit's).
func openPostgres(ctx context.Context, u string, readOnly bool) (*Store, error) {
	shown := redactURL(u)
	if err := CheckURL(u); err != nil {
		return nil, err
	}
	cfg, _ := pgx.ParseConfig(u)
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = pgConnectTimeout
	}
	if _, ok := cfg.RuntimeParams["application_name"]; !ok {
		cfg.RuntimeParams["application_name"] = "tilefit"
	}
	if readOnly {
		cfg.RuntimeParams["default_transaction_read_only"] = "on"
	}
	db := sql.OpenDB(pgConnector{stdlib.GetConnector(*cfg)})
	db.SetMaxOpenConns(16)
	db.SetMaxIdleConns(8)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open database %s: %w", shown, &connectError{err})
	}
	s := &Store{db: db, path: shown, d: postgresDialect, readOnly: readOnly}
	if err := s.pgInit(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// pgInit checks the server's schema and, unless read-only, applies the
// pending migrations.
func (s *Store) pgInit(ctx context.Context) error {
	if s.readOnly {
		version, ok, err := s.pgVersion(ctx, s.db)
		if err != nil {
			return err
		}
		if !ok {
			return &dbError{msg: fmt.Sprintf("database %s holds no tilefit data (no tilefit_schema table in its schema %s)", s.path, s.pgSchema(ctx)), kind: ErrNotTilefit}
		}
		if err := s.checkVersion(version); err != nil {
			return err
		}
		if version < SchemaVersion {
			return &dbError{
				msg:  fmt.Sprintf("database %s has schema version %d, older than this tilefit's %d; reading does not upgrade it: run a sweep against it once (it upgrades the schema), then read it", s.path, version, SchemaVersion),
				kind: ErrOlderSchema,
			}
		}
		return nil
	}
	for {
		done, err := s.pgMigrateStep(ctx)
		if err != nil {
			return err
		}
		if done {
			return nil
		}
	}
}

// pgSchema names the schema that unqualified tables go to (for messages).
func (s *Store) pgSchema(ctx context.Context) string {
	var name sql.NullString
	if err := s.db.QueryRowContext(ctx, `SELECT current_schema()`).Scan(&name); err != nil || !name.Valid {
		return "(none: the search_path names no existing schema)"
	}
	return name.String
}

// pgVersion reads the schema version; ok is false when the schema holds no
// tilefit_schema table.
func (s *Store) pgVersion(ctx context.Context, q querier) (version int, ok bool, err error) {
	var exists bool
	if err := q.QueryRowContext(ctx, `SELECT to_regclass('tilefit_schema') IS NOT NULL`).Scan(&exists); err != nil {
		return 0, false, fmt.Errorf("open database %s: %w", s.path, err)
	}
	if !exists {
		return 0, false, nil
	}
	var app string
	if err := q.QueryRowContext(ctx, `SELECT application, version FROM tilefit_schema`).Scan(&app, &version); err != nil {
		return 0, false, fmt.Errorf("open database %s: schema version: %w", s.path, err)
	}
	if app != "tilefit" {
		return 0, false, &dbError{msg: fmt.Sprintf("open database %s: not a tilefit database (tilefit_schema names %q)", s.path, app), kind: ErrNotTilefit}
	}
	return version, true, nil
}

// pgMigrateStep applies one pending migration in a transaction that holds
// the server's migration lock, so that processes opening a new database
// at once apply each step once.
func (s *Store) pgMigrateStep(ctx context.Context) (done bool, err error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("migrate database %s: %w", s.path, err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(?)`, int64(pgMigrationLock)); err != nil {
		return false, fmt.Errorf("migrate database %s: %w", s.path, err)
	}
	version, ok, err := s.pgVersion(ctx, tx)
	if err != nil {
		return false, err
	}
	if !ok {
		var schema sql.NullString
		var tables int
		if err := tx.QueryRowContext(ctx, `SELECT current_schema(), (SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema())`).Scan(&schema, &tables); err != nil {
			return false, fmt.Errorf("open database %s: %w", s.path, err)
		}
		if !schema.Valid {
			return false, fmt.Errorf("open database %s: its search_path names no existing schema; create the schema first (CREATE SCHEMA …) or name another", s.path)
		}
		if tables > 0 {
			return false, &dbError{msg: fmt.Sprintf("open database %s: not a tilefit database (schema %s has %d tables of another program and no tilefit_schema); name an empty schema with ?search_path=NAME", s.path, schema.String, tables), kind: ErrNotTilefit}
		}
		if _, err := tx.ExecContext(ctx, `CREATE TABLE tilefit_schema (application TEXT NOT NULL, version BIGINT NOT NULL)`); err != nil {
			return false, fmt.Errorf("create database %s: %w", s.path, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO tilefit_schema (application, version) VALUES ('tilefit', 0)`); err != nil {
			return false, fmt.Errorf("create database %s: %w", s.path, err)
		}
	}
	if err := s.checkVersion(version); err != nil {
		return false, err
	}
	if version == SchemaVersion {
		return true, tx.Commit()
	}
	for _, st := range pgDDL(migrations[version]) {
		if _, err := tx.ExecContext(ctx, st); err != nil {
			return false, fmt.Errorf("migrate database %s to schema version %d: %w", s.path, version+1, err)
		}
	}
	if _, err := tx.ExecContext(ctx, `UPDATE tilefit_schema SET version = ?`, version+1); err != nil {
		return false, fmt.Errorf("migrate database %s: %w", s.path, err)
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("migrate database %s to schema version %d: %w", s.path, version+1, err)
	}
	return false, nil
}

// connectError is a failed connection: pgx lists each attempt on a line of
// its own (often the same line twice, with and without TLS); this says
// each once, on one line.
type connectError struct{ err error }

func (e *connectError) Unwrap() error { return e.err }

func (e *connectError) Error() string {
	var out []string
	seen := map[string]bool{}
	for _, l := range strings.Split(e.err.Error(), "\n") {
		l = strings.TrimSpace(l)
		if l != "" && !seen[l] {
			seen[l] = true
			out = append(out, l)
		}
	}
	return strings.Join(out, " ")
}
