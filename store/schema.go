package store

// applicationID marks a SQLite file as a tilefit database (PRAGMA
// application_id): the bytes "tfit".
const applicationID = 0x74666974

// migrations are the schema steps, in order: migrations[i] takes a database
// from schema version i to i+1. Each step runs in one transaction together
// with the version update. Append new steps; never edit a released one.
//
// Each step is written once, in SQLite's spelling, and serves both
// dialects: on PostgreSQL pgDDL translates it (INTEGER → BIGINT, REAL →
// DOUBLE PRECISION, BLOB → BYTEA, INTEGER PRIMARY KEY → an identity, an
// explicit rowid column for tables that have SQLite's implicit one; see
// dialect.go). A new step is one more entry here for both. The version is
// PRAGMA user_version in SQLite and the table tilefit_schema on PostgreSQL.
var migrations = []string{
	// 1: provenance, cells, candidates, raw samples, device records.
	`
CREATE TABLE provenance (
	key         TEXT PRIMARY KEY NOT NULL,
	backend     TEXT NOT NULL,
	device      TEXT NOT NULL,
	arch        TEXT NOT NULL,
	compiler    TEXT NOT NULL,
	flags       TEXT NOT NULL,
	driver      TEXT NOT NULL,
	family      TEXT NOT NULL,
	source_hash TEXT NOT NULL,
	out_f16     INTEGER NOT NULL CHECK (out_f16 IN (0, 1))
);

CREATE TABLE cell (
	id        INTEGER PRIMARY KEY,
	prov_key  TEXT NOT NULL REFERENCES provenance(key),
	shape     TEXT NOT NULL,
	n         INTEGER NOT NULL,
	k         INTEGER NOT NULL,
	m         INTEGER NOT NULL,
	calls     INTEGER NOT NULL,
	reference TEXT NOT NULL,
	seed      INTEGER NOT NULL, -- the uint64 seed's bits as int64
	rounds    INTEGER NOT NULL,
	sets      INTEGER NOT NULL,
	started   TEXT NOT NULL,    -- UTC, RFC 3339 with nanoseconds
	finished  TEXT NOT NULL,
	clocks    TEXT              -- JSON array of strings; NULL when none
);
CREATE INDEX cell_by_key ON cell (prov_key, shape, n, k, m);

CREATE TABLE candidate (
	id              INTEGER PRIMARY KEY,
	cell_id         INTEGER NOT NULL REFERENCES cell(id) ON DELETE CASCADE,
	pos             INTEGER NOT NULL, -- index in CellResult.Candidates
	tile            TEXT NOT NULL,
	params          TEXT NOT NULL,
	vendor          INTEGER NOT NULL CHECK (vendor IN (0, 1)),
	aa              INTEGER NOT NULL CHECK (aa IN (0, 1)),
	status          TEXT NOT NULL,
	detail          TEXT NOT NULL,
	bitwise         INTEGER NOT NULL CHECK (bitwise IN (0, 1)),
	max_err         REAL,             -- NULL stands for NaN
	compile_seconds REAL,
	dispatches      INTEGER NOT NULL,
	UNIQUE (cell_id, tile, aa),
	UNIQUE (cell_id, pos)
);

CREATE TABLE sample (
	candidate_id INTEGER NOT NULL REFERENCES candidate(id) ON DELETE CASCADE,
	round        INTEGER NOT NULL CHECK (round >= 0),
	us           REAL,                -- µs per call; NULL stands for NaN
	PRIMARY KEY (candidate_id, round)
) WITHOUT ROWID;

CREATE TABLE device (
	backend  TEXT NOT NULL,
	name     TEXT NOT NULL,
	props    TEXT NOT NULL,           -- JSON object of strings
	measured TEXT NOT NULL,
	PRIMARY KEY (backend, name)
);
`,
	// 2: operators (issue 9). A provenance names its operator and operand
	// types; a cell its operator, every dimension ("K=2560,M=256,N=640") and
	// the operator's FLOP and byte counts; a candidate its family. Rows of
	// schema 1 keep '' / NULL and are read as gemm_f16 cells (see legacy).
	`
ALTER TABLE provenance ADD COLUMN operator TEXT NOT NULL DEFAULT '';
ALTER TABLE provenance ADD COLUMN types TEXT NOT NULL DEFAULT '';
ALTER TABLE cell ADD COLUMN op TEXT NOT NULL DEFAULT '';
ALTER TABLE cell ADD COLUMN dims TEXT NOT NULL DEFAULT '';
ALTER TABLE cell ADD COLUMN flop REAL;
ALTER TABLE cell ADD COLUMN bytes REAL;
ALTER TABLE candidate ADD COLUMN family TEXT NOT NULL DEFAULT '';
CREATE INDEX cell_by_dims ON cell (prov_key, shape, m, dims);
`,
	// 3: what the backend reports of a candidate's kernel (registers per
	// thread, local bytes, shared memory): a JSON object of integers, NULL
	// when unknown (issue 11).
	`
ALTER TABLE candidate ADD COLUMN resources TEXT;
`,
	// 4: batch invariance (issue 10 item 5). A cell records its inputs for
	// the row comparison across M (input_key: a hash of the inputs not led
	// by M; input_rows: one little-endian uint64 hash per row over those
	// led by M); a candidate that passed verification its output rows, one
	// 64-bit hash per row of each output operand led by M. Row hash lists
	// are stored once (row_hashes, by the sha256 of their bytes): every
	// tile bitwise equal to another shares its list. Cells of schema ≤ 3
	// keep '' / NULL / no rows: "not recorded".
	`
ALTER TABLE cell ADD COLUMN input_key TEXT NOT NULL DEFAULT '';
ALTER TABLE cell ADD COLUMN input_rows BLOB;
CREATE TABLE row_hashes (
	id     INTEGER PRIMARY KEY,
	digest TEXT NOT NULL UNIQUE, -- hex sha256 of hashes
	hashes BLOB NOT NULL         -- one little-endian uint64 per row
);
CREATE TABLE candidate_rows (
	candidate_id INTEGER NOT NULL REFERENCES candidate(id) ON DELETE CASCADE,
	pos          INTEGER NOT NULL, -- index in Candidate.Rows
	operand      TEXT NOT NULL,
	rows_id      INTEGER NOT NULL REFERENCES row_hashes(id),
	PRIMARY KEY (candidate_id, pos)
) WITHOUT ROWID;
CREATE INDEX cell_by_shape ON cell (prov_key, shape);
`,
	// 5: fleets (issue 12). claim holds the leases by which several sweep
	// processes (on one host or many) share one plan: a worker claims a
	// cell, renews the lease while it measures, and saves the cell's result
	// only while it holds the lease (the save marks the claim done); a
	// lease that expires lets another worker take the cell. A cell records
	// the physical device that measured it (device_id: a CUDA device's
	// UUID), outside its provenance.
	`
CREATE TABLE claim (
	plan    TEXT NOT NULL,    -- the plan's key (its provenance, candidates and cells)
	cell    INTEGER NOT NULL, -- the cell's index in the plan
	name    TEXT NOT NULL,    -- "shape M=256", for people reading the table
	state   TEXT NOT NULL CHECK (state IN ('todo', 'running', 'done')),
	owner   TEXT NOT NULL,    -- the worker holding the lease ('' when none)
	expires INTEGER NOT NULL, -- the end of the lease, ms since the epoch by the database's clock
	tries   INTEGER NOT NULL, -- leases taken on the cell so far
	PRIMARY KEY (plan, cell)
) WITHOUT ROWID;
ALTER TABLE cell ADD COLUMN device_id TEXT NOT NULL DEFAULT '';
`,
	// 6: a candidate's numerics class (result.Candidate.Class), as the
	// sweep knew it, so that reports and serve need not re-derive it
	// through the families of the binary that reads. Candidates of schema
	// ≤ 5 keep '': readers derive those (tune.LoadReport).
	`
ALTER TABLE candidate ADD COLUMN class TEXT NOT NULL DEFAULT '';
`,
	// 7: the race (issue 17). left_at is, for a candidate the race took
	// out of the timing rounds (confirmed slower than the cell's best tile
	// by the race's margin), the pairs after which it left; 0 for one timed
	// to the end (every candidate of schema ≤ 5).
	`
ALTER TABLE candidate ADD COLUMN left_at INTEGER NOT NULL DEFAULT 0;
`,
	// 8: a cell's identity is unique (issue 18 item 5): its provenance,
	// shape, M, N, K, dimensions and start time (to the nanosecond; a
	// resumed sweep's new row starts later). Concurrent `db copy` runs into
	// one PostgreSQL schema each checked before inserting and stored some
	// cells twice or three times; such copies are the same measurement, so
	// the first row of each is kept and the others go (their candidates,
	// samples and row-hash links with them, ON DELETE CASCADE). Copy
	// inserts with ON CONFLICT on this index.
	`
DELETE FROM cell WHERE id NOT IN (SELECT min(id) FROM cell GROUP BY prov_key, shape, m, n, k, dims, started);
CREATE UNIQUE INDEX IF NOT EXISTS cell_identity ON cell (prov_key, shape, m, n, k, dims, started);
`,
}

// SchemaVersion is the schema version this package writes and the newest it
// can read; it equals len(migrations) (a test checks).
const SchemaVersion = 8
