package cli

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"github.com/tilefit/tilefit/internal/serve/servetest"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tilefit/tilefit/policy"
	"github.com/tilefit/tilefit/store"
)

// TestSweepNotMeasuredExitsNonZero (issue 18 item 2): a cell the sweep
// could not run ("cell lm_head M=1 not run: worker made no progress",
// "swept 0 cells") exited 0. A requested cell not measured is a failure
// now (exit 1), and the sweep says which cells are missing and why.
func TestSweepNotMeasuredExitsNonZero(t *testing.T) {
	if testing.Short() {
		t.Skip("starts worker processes")
	}
	t.Setenv(testWorkerDiesEnv, "1")
	dir := t.TempDir()
	w := filepath.Join(dir, "w.yaml")
	os.WriteFile(w, []byte("name: w\nm: [1]\nshapes:\n  - {name: lm_head, n: 16, k: 32}\n"), 0o644)
	var stdout, stderr bytes.Buffer
	code := Run(context.Background(), []string{"sweep", "--db", filepath.Join(dir, "t.db"), "--workload", w, "--tiles", "16_32_1",
		"--rounds", "2", "--vendor=false"}, &stdout, &stderr)
	if code != ExitFailures {
		t.Fatalf("exit %d, want %d (a cell not measured)\nstdout:\n%s\nstderr:\n%s", code, ExitFailures, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), "Not measured: 1 cells") || !strings.Contains(stdout.String(), "| lm_head | 1 | worker killed by signal 9") {
		t.Errorf("the output does not say which cell is missing and why:\n%s", stdout.String())
	}
	if !strings.Contains(stderr.String(), "1 requested cells were not measured") {
		t.Errorf("stderr:\n%s", stderr.String())
	}
}

// hostileDB makes a tilefit database of a few cells in dir; with live, a
// writer keeps it open (in WAL mode, its -wal file holding a cell), as
// while a sweep runs.
func hostileDB(t *testing.T, dir string, live bool) string {
	t.Helper()
	ctx := context.Background()
	db := filepath.Join(dir, "t.db")
	st, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if _, err := st.SaveCell(ctx, servetest.Cell(fmt.Sprintf("H%d", i), 1+i)); err != nil {
			t.Fatal(err)
		}
	}
	if !live {
		st.Close()
		return db
	}
	t.Cleanup(func() { st.Close() })
	if _, err := os.Stat(db + "-wal"); err != nil {
		t.Fatalf("the open database has no -wal: %v", err)
	}
	return db
}

// dbBytes is the hash of the database and its side files, and the list of
// the folder's files.
func dbBytes(t *testing.T, db string) string {
	t.Helper()
	var b strings.Builder
	for _, p := range []string{db, db + "-wal", db + "-shm", db + "-journal"} {
		data, err := os.ReadFile(p)
		if err != nil {
			fmt.Fprintf(&b, "%s: none\n", filepath.Base(p))
			continue
		}
		fmt.Fprintf(&b, "%s: %x\n", filepath.Base(p), sha256.Sum256(data))
	}
	ents, _ := os.ReadDir(filepath.Dir(db))
	for _, e := range ents {
		b.WriteString(e.Name() + "\n")
	}
	return b.String()
}

// TestHostileOutputsLeaveTheDatabase (issue 18: `report --output t.db`,
// the same through a symbolic link, and `select --policy-out u.db`
// replaced the database they read). Seeded and bounded in time: every
// verb's output flags are aimed at the database, its -wal and -shm,
// symbolic and hard links to them and other spellings of their paths, on
// a closed database and on one a writer holds open; each command must be
// refused (exit 2, a message) and leave the database's bytes, and the
// folder, as they were. TILEFIT_HOSTILE_SEED picks another seed.
func TestHostileOutputsLeaveTheDatabase(t *testing.T) {
	seed := uint64(18)
	if s := os.Getenv("TILEFIT_HOSTILE_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		seed = v
	}
	rng := rand.New(rand.NewPCG(seed, 0x18))
	deadline := time.Now().Add(45 * time.Second)
	const maxCases = 150
	cases := 0
	for live := range []bool{false, true} {
		dir := t.TempDir()
		db := hostileDB(t, dir, live == 1)
		wd, _ := os.Getwd()
		rel, _ := filepath.Rel(wd, db)
		for _, l := range [][2]string{{"t.db", "link.md"}, {"t.db-wal", "wal.md"}, {"t.db-shm", "shm.md"}, {"link.md", "link2.md"}} {
			if err := os.Symlink(l[0], filepath.Join(dir, l[1])); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
		other := filepath.Join(dir, "sub", "hard.db")
		if err := os.Link(db, other); err != nil {
			t.Fatal(err)
		}
		targets := []string{db, db + "-wal", db + "-shm", db + "-journal", rel, filepath.Join(dir, "sub", "..", "t.db"),
			filepath.Join(dir, "link.md"), filepath.Join(dir, "wal.md"), filepath.Join(dir, "shm.md"), filepath.Join(dir, "link2.md"), other}
		exists := func(p string) bool { _, err := os.Stat(p); return err == nil }
		// Each verb's ways of writing target.
		verbs := []func(target string) []string{
			func(tg string) []string {
				f := []string{"md", "html", "json", "csv", "benchfmt"}[rng.IntN(5)]
				args := []string{"report", "--db", db, "--format", f, "--output", tg}
				if f == "csv" && rng.IntN(2) == 0 {
					args = append(args, "--append")
				}
				return args
			},
			func(tg string) []string { return []string{"report", "--db", db, "--plots", tg} },
			func(tg string) []string {
				return []string{"select", "--db", db, "--confirm=false", "--policy-out", tg}
			},
			func(tg string) []string {
				k := policy.EmitKinds[rng.IntN(len(policy.EmitKinds))]
				return []string{"select", "--db", db, "--confirm=false", "--policy-out", "", "--emit", k, "--emit-dir", tg}
			},
			func(tg string) []string {
				if !strings.HasSuffix(tg, "-wal") && !strings.HasSuffix(tg, "-shm") && !strings.HasSuffix(tg, "-journal") && tg != filepath.Join(dir, "wal.md") && tg != filepath.Join(dir, "shm.md") {
					tg = db + "-wal"
				}
				return []string{"db", "copy", "--from", db, "--to", tg}
			},
			func(tg string) []string {
				// A sweep or a report on a side file as its database.
				side := []string{db + "-wal", db + "-shm", db + "-journal", filepath.Join(dir, "wal.md"), filepath.Join(dir, "shm.md")}[rng.IntN(5)]
				if rng.IntN(2) == 0 {
					return []string{"report", "--db", side}
				}
				return []string{"sweep", "--db", side, "--m", "1", "--tiles", "16_32_1", "--vendor=false"}
			},
			func(tg string) []string {
				if !exists(tg) {
					tg = db // scan's --plots is a folder: an existing file is refused up front
				}
				return []string{"scan", "--db", filepath.Join(t.TempDir(), "scan.db"), "--sizes", "64", "--plots", tg}
			},
		}
		for n := 0; n < maxCases/2 && time.Now().Before(deadline); n++ {
			cases++
			args := verbs[rng.IntN(len(verbs))](targets[rng.IntN(len(targets))])
			before := dbBytes(t, db)
			var stdout, stderr bytes.Buffer
			code := Run(context.Background(), args, &stdout, &stderr)
			if after := dbBytes(t, db); after != before {
				t.Errorf("seed %d: tilefit %s (exit %d) changed the database or its folder:\n%s\nto\n%s\nstderr: %s", seed, strings.Join(args, " "), code, before, after, stderr.String())
			}
			if code != ExitUsage || strings.TrimSpace(stderr.String()) == "" {
				t.Errorf("seed %d: tilefit %s: exit %d, want 2 with a message; stderr: %s", seed, strings.Join(args, " "), code, stderr.String())
			}
		}
		// The database still reads whole.
		st, err := store.OpenReadOnly(context.Background(), db)
		if err != nil {
			t.Fatal(err)
		}
		cells, err := st.Cells(context.Background(), store.Filter{})
		st.Close()
		if err != nil || len(cells) != 3 {
			t.Errorf("after the hostile outputs: %d cells, %v", len(cells), err)
		}
	}
	t.Logf("seed %d: %d hostile commands", seed, cases)
}
