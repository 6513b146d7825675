package store

// The two SQL dialects the store speaks (SQLite, PostgreSQL) and the one
// small place where their differences are translated: every query and every
// migration is written once, in SQLite's spelling, and
//
//   - placeholders (? and ?N) become $N on PostgreSQL, in the driver itself
//     (pgDriverConn rebinds every query text that reaches pgx), so the
//     store's queries are shared as written;
//   - Go bools become 0/1 integers on PostgreSQL (the schema stores flags as
//     integers with a CHECK, as SQLite does);
//   - migrations are translated by pgDDL: INTEGER PRIMARY KEY becomes a
//     BIGINT identity, INTEGER BIGINT, REAL DOUBLE PRECISION, BLOB BYTEA,
//     WITHOUT ROWID goes, and a table that has a rowid in SQLite (and no
//     INTEGER PRIMARY KEY aliasing it) gets an explicit identity column named
//     rowid, so "ORDER BY rowid" (insertion order) means the same on both;
//   - the few statements that differ in kind (the schema version, the
//     current time, row locks) are fields of dialect.

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5/stdlib"
)

// A dialect is what differs between the database engines.
type dialect struct {
	name string // "sqlite" or "postgres"
	// now is an SQL expression for the database's current time in
	// milliseconds since the Unix epoch (lease expiries use the database's
	// clock, so that workers on hosts with skewed clocks agree).
	now string
	// skipLocked ends a SELECT that picks a row to claim: PostgreSQL locks
	// the row and skips rows other transactions hold; SQLite's IMMEDIATE
	// transactions already serialise writers.
	skipLocked string
	// forUpdate ends a SELECT of a row the transaction will update.
	forUpdate string
}

var (
	sqliteDialect = dialect{
		name: "sqlite",
		now:  "CAST(unixepoch('subsec') * 1000 AS INTEGER)",
	}
	postgresDialect = dialect{
		name:       "postgres",
		now:        "CAST(extract(epoch FROM clock_timestamp()) * 1000 AS BIGINT)",
		skipLocked: " FOR UPDATE SKIP LOCKED",
		forUpdate:  " FOR UPDATE",
	}
)

// IsURL reports whether a --db value names a PostgreSQL server
// (postgres:// or postgresql://) rather than a SQLite file.
func IsURL(db string) bool {
	return strings.HasPrefix(db, "postgres://") || strings.HasPrefix(db, "postgresql://")
}

// rebind rewrites SQLite placeholders as PostgreSQL's: ?N becomes $N and a
// bare ? the next number after the largest used so far (SQLite's rule).
// String literals, quoted identifiers and comments are copied unchanged.
func rebind(q string) string {
	if !strings.Contains(q, "?") {
		return q
	}
	var b strings.Builder
	b.Grow(len(q) + 8)
	maxN := 0
	for i := 0; i < len(q); {
		c := q[i]
		switch {
		case c == '\'' || c == '"':
			j := skipQuoted(q, i)
			b.WriteString(q[i:j])
			i = j
		case c == '-' && i+1 < len(q) && q[i+1] == '-':
			j := strings.IndexByte(q[i:], '\n')
			if j < 0 {
				j = len(q) - i
			}
			b.WriteString(q[i : i+j])
			i += j
		case c == '/' && i+1 < len(q) && q[i+1] == '*':
			j := strings.Index(q[i+2:], "*/")
			if j < 0 {
				j = len(q) - i - 2
			} else {
				j += 2
			}
			b.WriteString(q[i : i+2+j])
			i += 2 + j
		case c == '?':
			j := i + 1
			for j < len(q) && q[j] >= '0' && q[j] <= '9' {
				j++
			}
			n := maxN + 1
			if j > i+1 {
				n, _ = strconv.Atoi(q[i+1 : j])
			}
			maxN = max(maxN, n)
			b.WriteString("$" + strconv.Itoa(n))
			i = j
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String()
}

// skipQuoted returns the index just past the quoted string or identifier
// starting at q[i] (a doubled quote stays inside).
func skipQuoted(q string, i int) int {
	quote := q[i]
	for j := i + 1; j < len(q); j++ {
		if q[j] == quote {
			if j+1 < len(q) && q[j+1] == quote {
				j++
				continue
			}
			return j + 1
		}
	}
	return len(q)
}

// statements splits a migration into its statements at top-level
// semicolons (not those in literals or comments), dropping empty ones.
func statements(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\'' || c == '"':
			i = skipQuoted(s, i)
		case c == '-' && i+1 < len(s) && s[i+1] == '-':
			j := strings.IndexByte(s[i:], '\n')
			if j < 0 {
				i = len(s)
			} else {
				i += j
			}
		case c == '/' && i+1 < len(s) && s[i+1] == '*':
			j := strings.Index(s[i+2:], "*/")
			if j < 0 {
				i = len(s)
			} else {
				i += j + 4
			}
		case c == ';':
			out = appendStmt(out, s[start:i])
			i++
			start = i
		default:
			i++
		}
	}
	return appendStmt(out, s[start:])
}

func appendStmt(out []string, st string) []string {
	if stripComments(st) == "" {
		return out
	}
	// Leading comment lines go (the statement starts with its keyword).
	st = strings.TrimSpace(st)
	for strings.HasPrefix(st, "--") {
		i := strings.IndexByte(st, '\n')
		if i < 0 {
			return out
		}
		st = strings.TrimSpace(st[i+1:])
	}
	return append(out, st)
}

// stripComments drops -- comments and surrounding space (enough to tell an
// empty statement and to match the keywords pgDDL looks for).
func stripComments(s string) string {
	var b strings.Builder
	for _, line := range strings.Split(s, "\n") {
		if i := strings.Index(line, "--"); i >= 0 && !strings.Contains(line[:i], "'") {
			line = line[:i]
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return strings.TrimSpace(b.String())
}

var (
	reIntegerPK    = regexp.MustCompile(`\bINTEGER\s+PRIMARY\s+KEY\b`)
	reInteger      = regexp.MustCompile(`\bINTEGER\b`)
	reReal         = regexp.MustCompile(`\bREAL\b`)
	reBlob         = regexp.MustCompile(`\bBLOB\b`)
	reWithoutRowid = regexp.MustCompile(`\)\s*WITHOUT\s+ROWID\s*$`)
	reCreateTable  = regexp.MustCompile(`^CREATE\s+TABLE\s+(IF\s+NOT\s+EXISTS\s+)?\w+\s*\(`)
)

// pgDDL translates one migration (written for SQLite) into PostgreSQL
// statements; see the package comment of this file for the rules.
func pgDDL(migration string) []string {
	var out []string
	for _, st := range statements(migration) {
		bare := stripComments(st)
		st = reIntegerPK.ReplaceAllString(st, "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY")
		st = reInteger.ReplaceAllString(st, "BIGINT")
		st = reReal.ReplaceAllString(st, "DOUBLE PRECISION")
		st = reBlob.ReplaceAllString(st, "BYTEA")
		if loc := reCreateTable.FindStringIndex(st); loc != nil {
			switch {
			case reWithoutRowid.MatchString(bare):
				st = strings.TrimSpace(st)
				st = reWithoutRowid.ReplaceAllString(st, ")")
			case !reIntegerPK.MatchString(bare):
				// SQLite's implicit rowid, made explicit.
				st = st[:loc[1]] + "\n\trowid BIGINT GENERATED ALWAYS AS IDENTITY," + st[loc[1]:]
			}
		}
		out = append(out, st)
	}
	return out
}

// pgConnector opens pgx connections whose queries are rebound (see
// pgDriverConn).
type pgConnector struct{ driver.Connector }

func (c pgConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return pgDriverConn{conn.(*stdlib.Conn)}, nil
}

// pgDriverConn is pgx's database/sql connection with SQLite's placeholders
// rebound and bools sent as integers: the store's queries reach PostgreSQL
// through here and nowhere else. Every other method is pgx's own.
type pgDriverConn struct{ *stdlib.Conn }

var rebound sync.Map // query text → rebound text

func rebindCached(q string) string {
	if v, ok := rebound.Load(q); ok {
		return v.(string)
	}
	r := rebind(q)
	rebound.Store(q, r)
	return r
}

func (c pgDriverConn) Prepare(q string) (driver.Stmt, error) {
	return c.Conn.Prepare(rebindCached(q))
}

func (c pgDriverConn) PrepareContext(ctx context.Context, q string) (driver.Stmt, error) {
	return c.Conn.PrepareContext(ctx, rebindCached(q))
}

func (c pgDriverConn) ExecContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Result, error) {
	return c.Conn.ExecContext(ctx, rebindCached(q), args)
}

func (c pgDriverConn) QueryContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Rows, error) {
	return c.Conn.QueryContext(ctx, rebindCached(q), args)
}

// CheckNamedValue sends bools as the integers 0 and 1, and everything else
// as pgx would.
func (c pgDriverConn) CheckNamedValue(nv *driver.NamedValue) error {
	if b, ok := nv.Value.(bool); ok {
		nv.Value = int64(0)
		if b {
			nv.Value = int64(1)
		}
		return nil
	}
	return c.Conn.CheckNamedValue(nv)
}

var _ interface {
	driver.ConnPrepareContext
	driver.ExecerContext
	driver.QueryerContext
	driver.ConnBeginTx
	driver.NamedValueChecker
	driver.SessionResetter
	driver.Pinger
} = pgDriverConn{}

// querier is what *sql.DB and *sql.Tx share.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// SameDatabase reports whether a and b name one database: the same URL,
// or names of one file.
func SameDatabase(a, b string) bool {
	if IsURL(a) || IsURL(b) {
		return a == b
	}
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	if errA == nil && errB == nil {
		return os.SameFile(fa, fb)
	}
	pa, _ := filepath.Abs(a)
	pb, _ := filepath.Abs(b)
	return pa == pb
}
