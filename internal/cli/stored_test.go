package cli

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

// runSafe runs tilefit in-process and turns a panic into a test error.
func runSafe(t *testing.T, what string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("%s: tilefit %s panicked: %v\n%s", what, strings.Join(args, " "), r, debug.Stack())
			code = -1
		}
	}()
	code = Run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

// storedMutations are changes another program (or a broken disk) could
// make to a tilefit database's values; none may make a reader panic.
var storedMutations = []string{
	"UPDATE cell SET n = 0", "UPDATE cell SET n = -5", "UPDATE cell SET k = 0", "UPDATE cell SET k = -1",
	"UPDATE cell SET m = 0", "UPDATE cell SET m = -3", "UPDATE cell SET m = 9223372036854775807",
	"UPDATE cell SET n = 9223372036854775807, k = 9223372036854775807",
	"UPDATE cell SET calls = 0", "UPDATE cell SET calls = -7", "UPDATE cell SET calls = 9223372036854775807",
	"UPDATE cell SET rounds = 0", "UPDATE cell SET rounds = -1", "UPDATE cell SET rounds = 1000000000",
	"UPDATE cell SET sets = -1", "UPDATE cell SET reference = ''", "UPDATE cell SET reference = 'nosuch'",
	"UPDATE cell SET reference = '999_999_9'", "UPDATE cell SET seed = -1",
	"UPDATE cell SET clocks = 'not json'", "UPDATE cell SET clocks = '[1,2]'", "UPDATE cell SET started = 'yesterday ' || id",
	"UPDATE cell SET shape = ''", "UPDATE cell SET shape = 'a|b' || char(10) || '<x>'", "UPDATE cell SET shape = printf('%.300c', 'w')",
	"UPDATE cell SET n = 'abc'", "UPDATE cell SET n = 1.5", "UPDATE cell SET m = 1", "UPDATE cell SET rounds = 3",
	"UPDATE cell SET n = 1, k = 1 WHERE m = 512",
	"UPDATE candidate SET status = 'bogus'", "UPDATE candidate SET status = ''",
	"UPDATE candidate SET tile = '' WHERE pos = 1", "UPDATE candidate SET tile = '../../etc/passwd' WHERE pos = 1", "UPDATE candidate SET tile = 'x' || id",
	"UPDATE candidate SET dispatches = -1", "UPDATE candidate SET dispatches = 0",
	"UPDATE candidate SET max_err = -1", "UPDATE candidate SET compile_seconds = -5", "UPDATE candidate SET max_err = 'x'",
	"UPDATE candidate SET aa = 1", "UPDATE candidate SET vendor = 1", "UPDATE candidate SET bitwise = 0",
	"UPDATE candidate SET aa = 1 WHERE pos = 0", "UPDATE candidate SET vendor = 1 WHERE pos = 0",
	"DELETE FROM candidate WHERE pos = 0", "DELETE FROM candidate", "UPDATE candidate SET pos = pos + 10",
	"DELETE FROM sample WHERE round = 3", "DELETE FROM sample", "DELETE FROM sample WHERE candidate_id % 2 = 0",
	"UPDATE sample SET us = NULL", "UPDATE sample SET us = -1", "UPDATE sample SET us = 0", "UPDATE sample SET us = 1e308",
	"UPDATE sample SET us = -1e308", "UPDATE sample SET us = 'abc'", "UPDATE sample SET us = NULL WHERE round % 2 = 0",
	"UPDATE sample SET us = 9e999", "UPDATE sample SET us = -9e999", "UPDATE sample SET round = round + 100",
	"DELETE FROM sample WHERE round > 1",
	"DELETE FROM sample WHERE candidate_id IN (SELECT id FROM candidate WHERE pos = 0)",
	"DELETE FROM sample WHERE candidate_id IN (SELECT id FROM candidate WHERE pos = 0) AND round > 4",
	"UPDATE candidate SET status = 'ok' WHERE status != 'ok'",
	"UPDATE provenance SET backend = 'tpu'", "UPDATE provenance SET family = 'nosuch'", "UPDATE provenance SET device = ''",
	"UPDATE provenance SET out_f16 = 1", "UPDATE provenance SET source_hash = ''",
	"INSERT INTO device VALUES ('cpu', 'x', 'not json', '2025-01-01T00:00:00Z')",
	"INSERT INTO device VALUES ('cpu', 'y', '{}', 'not a time')",
	"INSERT INTO device VALUES ('cpu', 'z', '{\"copy_gbps\": \"-1\", \"vendor_tflops\": \"NaN\"}', '2025-01-01T00:00:00Z')",
	"DELETE FROM provenance", "DELETE FROM cell",
}

// TestStoredValuesNeverPanic changes each kind of stored value to what
// tilefit never writes (zero, negative, huge, wrong type, missing rows,
// broken references) and runs every reading verb on the result: a clear
// message (exit 2) or a report, never a panic (issue 8).
func TestStoredValuesNeverPanic(t *testing.T) {
	dir := t.TempDir()
	fixture := selDB(t, dir)
	orig, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	for i, mut := range storedMutations {
		db := filepath.Join(dir, fmt.Sprintf("m%d.db", i))
		if err := os.WriteFile(db, orig, 0o644); err != nil {
			t.Fatal(err)
		}
		conn, err := sql.Open("sqlite", db)
		if err != nil {
			t.Fatal(err)
		}
		_, err = conn.Exec("PRAGMA foreign_keys = OFF; " + mut)
		conn.Close()
		if err != nil {
			t.Errorf("%s: %v", mut, err)
			continue
		}
		emit := filepath.Join(dir, fmt.Sprintf("emit%d", i))
		for _, args := range [][]string{
			{"report", "--db", db},
			{"report", "--db", db, "--format", "json"},
			{"report", "--db", db, "--format", "csv", "--workload", "strata"},
			{"select", "--db", db, "--confirm=false", "--policy-out", "", "--emit", "go,c,json", "--emit-dir", emit},
			{"select", "--db", db, "--confirm=false", "--policy-out", "", "--format", "json", "--workload", "strata", "--max-rules", "1"},
		} {
			code, _, stderr := runSafe(t, mut, args...)
			if code != ExitOK && code != ExitUsage && code != -1 {
				t.Errorf("%s: tilefit %s: exit %d\n%s", mut, strings.Join(args, " "), code, stderr)
			}
			if code == ExitUsage && strings.TrimSpace(stderr) == "" {
				t.Errorf("%s: tilefit %s: exit 2 without a message", mut, strings.Join(args, " "))
			}
		}
	}
}
