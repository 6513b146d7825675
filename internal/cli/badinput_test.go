package cli

import (
	"bytes"
	"context"
	"database/sql"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/tilefit/tilefit/store"
)

var update = flag.Bool("update", false, "rewrite golden files")

// badInput is one row of docs/bad-input.md: what a user did wrong, the
// command, and the message tilefit answers with (exit code 2).
type badInput struct {
	what  string
	args  []string
	env   map[string]string
	setup func(dir string) error
}

func writeFile(name, text string) func(dir string) error {
	return func(dir string) error { return os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644) }
}

func badInputs() []badInput {
	return []badInput{
		{what: "unknown verb", args: []string{"swep"}},
		{what: "stray argument to report", args: []string{"report", "extra"}},
		{what: "unknown flag", args: []string{"sweep", "--rouns", "3"}},
		{what: "workload file missing", args: []string{"sweep", "--workload", "missing.yaml"}},
		{what: "workload syntax error", args: []string{"sweep", "--workload", "w.yaml"}, setup: writeFile("w.yaml", "name: x\nm: [1, 2\nshapes:\n")},
		{what: "workload unknown key", args: []string{"sweep", "--workload", "w.yaml"}, setup: writeFile("w.yaml", "name: x\nm: [16]\nshapes:\n  - {name: a, n: 8, k: 8, colls: 2}\n")},
		{what: "workload wrong type", args: []string{"sweep", "--workload", "w.yaml"}, setup: writeFile("w.yaml", "name: x\nm: [16]\nshapes:\n  - {name: a, n: eight, k: 8}\n")},
		{what: "workload zero and negative sizes", args: []string{"sweep", "--workload", "w.yaml"}, setup: writeFile("w.yaml", "name: x\nm: [0]\nshapes:\n  - {name: a, n: -4, k: 8}\n")},
		{what: "workload duplicate names", args: []string{"sweep", "--workload", "w.yaml"}, setup: writeFile("w.yaml", "name: x\nm: [16]\nshapes:\n  - {name: a, n: 8, k: 8}\n  - {name: a, n: 16, k: 8}\n")},
		{what: "workload beyond device memory", args: []string{"sweep", "--workload", "w.yaml"}, setup: writeFile("w.yaml", "name: huge\nm: [1048576]\nshapes:\n  - {name: a, n: 16777216, k: 16777216}\n")},
		{what: "bad --m", args: []string{"sweep", "--m", "256,abc"}},
		{what: "unknown family", args: []string{"sweep", "--family", "gemm_f64"}},
		{what: "unknown backend", args: []string{"sweep", "--backend", "tpu"}},
		{what: "tile with a wrong shape of name", args: []string{"sweep", "--tiles", "64_128"}},
		{what: "tile with a disallowed value", args: []string{"sweep", "--tiles", "64_96_2"}},
		{what: "tile with an unknown parameter", args: []string{"sweep", "--tiles", "64_128_2.zz4"}},
		{what: "tile breaking a restriction", args: []string{"sweep", "--tiles", "128_256_2.tk512"}},
		{what: "unreadable --source", args: []string{"sweep", "--source", "nope.c"}},
		{what: "bad --out-type", args: []string{"sweep", "--out-type", "bf16"}},
		{what: "bad --rounds", args: []string{"sweep", "--rounds", "many"}},
		{what: "database path in a missing folder", args: []string{"sweep", "--db", "no/such/dir/t.db"}},
		{what: "corrupt database", args: []string{"report", "--db", "bad.db"}, setup: writeFile("bad.db", strings.Repeat("garbage!", 1024))},
		{what: "database from a newer schema", args: []string{"report", "--db", "new.db"}, setup: func(dir string) error {
			db, err := sql.Open("sqlite", filepath.Join(dir, "new.db"))
			if err != nil {
				return err
			}
			defer db.Close()
			_, err = db.Exec("CREATE TABLE t(x); PRAGMA application_id = 1952868724; PRAGMA user_version = 99") // "tfit"
			return err
		}},
		{what: "database in use by a running sweep", args: []string{"sweep", "--db", "busy.db"}, setup: func(dir string) error {
			// Held until the test binary exits, as a running sweep would hold it.
			unlock, err := store.Lock(filepath.Join(dir, "busy.db"))
			holdLock(unlock)
			return err
		}},
		{what: "report of a missing database", args: []string{"report", "--db", "none.db"}},
		{what: "unwritable report path", args: []string{"report", "--db", "ok.db", "--output", "no/such/dir/r.md"}, setup: tilefitDB("ok.db")},
		{what: "bad report format", args: []string{"report", "--format", "xml"}},
		{what: "CSV tags for another format", args: []string{"report", "--format", "md", "--tags", "run=a"}},
		{what: "CSV tag without a name", args: []string{"report", "--format", "csv", "--tags", "=a"}},
		{what: "CSV tag named like a column", args: []string{"report", "--db", "ok.db", "--format", "csv", "--tags", "Runtime=1"}, setup: func(dir string) error {
			return emptyTilefitDB(filepath.Join(dir, "ok.db"))
		}},
		{what: "CSV --append without --output", args: []string{"report", "--format", "csv", "--append"}},
		{what: "CSV --append to a file of other columns", args: []string{"report", "--db", "ok.db", "--format", "csv", "--append", "--output", "r.csv"}, setup: func(dir string) error {
			if err := emptyTilefitDB(filepath.Join(dir, "ok.db")); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(dir, "r.csv"), []byte("Problem,Provider,Operation,Runtime\n0,tilefit,64_64_2,1.5\n"), 0o644)
		}},
		{what: "serve on an address other than 127.0.0.1", args: []string{"serve", "--addr", "0.0.0.0:8080"}},
		{what: "serve on a name", args: []string{"serve", "--addr", "localhost:8080"}},
		{what: "serve address without a port", args: []string{"serve", "--addr", "127.0.0.1"}},
		{what: "missing C compiler", args: []string{"sweep", "--isolate=false"}, env: map[string]string{"CC": "no-such-cc"}},
		{what: "missing CUDA driver (on a machine without one)", args: []string{"sweep", "--backend", "cuda", "--isolate=false"}},

		// Issue 8: files that are not regular files are refused before
		// they are opened (a FIFO without a writer never blocks).
		{what: "--source is a named pipe (FIFO)", args: []string{"sweep", "--source", "k.fifo"}, setup: mkfifo("k.fifo")},
		{what: "--workload is a named pipe (FIFO)", args: []string{"sweep", "--workload", "w.fifo"}, setup: mkfifo("w.fifo")},
		{what: "--policy is a named pipe (FIFO)", args: []string{"report", "--policy", "p.fifo"}, setup: mkfifo("p.fifo")},
		{what: "--baseline is a named pipe (FIFO)", args: []string{"select", "--baseline", "p.fifo"}, setup: mkfifo("p.fifo")},
		{what: "policy: side of ab is a named pipe (FIFO)", args: []string{"ab", "--a", "policy:p.fifo", "--b", "tile:64_128_2"}, setup: mkfifo("p.fifo")},
		{what: "source: side of ab is a named pipe (FIFO)", args: []string{"ab", "--a", "source:k.fifo", "--b", "tile:64_128_2"}, setup: mkfifo("k.fifo")},
		{what: "--source is a directory", args: []string{"sweep", "--source", "."}},
		{what: "--source is /dev/null", args: []string{"sweep", "--source", "/dev/null"}},
		// Empty sources are refused everywhere with one message.
		{what: "empty --source", args: []string{"sweep", "--source", "empty.c"}, setup: writeFile("empty.c", "")},
		{what: "white-space-only --source", args: []string{"sweep", "--source", "blank.c"}, setup: writeFile("blank.c", " \n\t\n")},
		{what: "white-space-only source: side of ab", args: []string{"ab", "--a", "source:blank.c", "--b", "tile:64_128_2"}, setup: writeFile("blank.c", " \n\t\n")},
		// Messages that name the real limit or rule.
		{what: "70 MiB --source", args: []string{"sweep", "--source", "big.c"}, setup: sparseFile("big.c", 70<<20)},
		{what: "workload of 60,000 shapes", args: []string{"sweep", "--workload", "w.yaml"}, setup: manyShapes("w.yaml", 60000)},
		{what: "--m out of range", args: []string{"sweep", "--m", "99999999999999999999"}},
		{what: "--m with a value twice (like m: [5, 5] in a file)", args: []string{"sweep", "--m", "5,5"}},
		{what: "--m with an empty item", args: []string{"sweep", "--m", "256,,512"}},
		{what: "select --m of zero", args: []string{"select", "--m", "0"}},
		{what: "--tiles with empty names", args: []string{"sweep", "--tiles", ",,"}},
		{what: "--tiles naming an unknown family", args: []string{"sweep", "--tiles", "nosuch/64_128_2"}},
		{what: "--tiles naming a family of an operator the workload lacks", args: []string{"sweep", "--tiles", "hc_up_f16/16_64_1"}},
		{what: "--max-samples 0", args: []string{"sweep", "--max-samples", "0"}},
		{what: "--rounds 1", args: []string{"sweep", "--rounds", "1"}},
		{what: "--dispatches -1", args: []string{"ab", "--a", "tile:64_128_2", "--b", "tile:64_128_2", "--dispatches", "-1"}},
		// Databases: refusals create no files and write nothing.
		{what: "--db is a device", args: []string{"sweep", "--db", "/dev/null"}},
		{what: "empty --db", args: []string{"sweep", "--db", ""}},
		{what: "report of an empty file", args: []string{"report", "--db", "zero.db"}, setup: writeFile("zero.db", "")},
		{what: "select on a text file", args: []string{"select", "--db", "notes.txt"}, setup: writeFile("notes.txt", "my notes\n")},
		{what: "report of a database with a negative schema version", args: []string{"report", "--db", "neg.db"}, setup: schemaVersion("neg.db", -1)},
		{what: "sweep into a database with a negative schema version", args: []string{"sweep", "--db", "neg.db"}, setup: schemaVersion("neg.db", -1)},
		{what: "sweep through a second name (hard link) of a database", args: []string{"sweep", "--db", "h2.db"}, setup: hardLinked("h.db", "h2.db")},
		{what: "database in use, through a symbolic link", args: []string{"sweep", "--db", "link.db"}, setup: lockedVia("busy2.db", "link.db", os.Symlink)},
		{what: "database in use, through a hard link", args: []string{"sweep", "--db", "h3.db"}, setup: lockedVia("busy3.db", "h3.db", os.Link)},
		// Issue 12: devices, shards, leases, PostgreSQL, db copy.
		{what: "--shard out of range", args: []string{"sweep", "--shard", "4/4"}},
		{what: "--shard not I/N", args: []string{"sweep", "--shard", "2"}},
		{what: "--devices with a device twice", args: []string{"sweep", "--devices", "0,0"}},
		{what: "--devices not ordinals", args: []string{"sweep", "--devices", "gpu0"}},
		{what: "--device and --devices together", args: []string{"sweep", "--device", "0", "--devices", "all"}},
		{what: "--device 1 on the cpu backend", args: []string{"sweep", "--device", "1"}},
		{what: "--devices past the host's devices", args: []string{"sweep", "--devices", "0,1"}},
		{what: "--lease under a second", args: []string{"sweep", "--lease", "100ms"}},
		{what: "--db not a valid PostgreSQL URL", args: []string{"sweep", "--db", "postgres://tilefit:s3cret@127.0.0.1/db?sslmode=bogus"}},
		{what: "--db server unreachable (the password is never shown)", args: []string{"report", "--db", "postgres://tilefit:s3cret@127.0.0.1:1/db?connect_timeout=5"}},
		{what: "sharing a database an unshared sweep holds", args: []string{"sweep", "--claim", "--db", "busy4.db"}, setup: func(dir string) error {
			// Held until the test binary exits (holdLock: a dropped lock is
			// released by its file's finalizer at the next GC, and then this
			// row ran a whole sweep — seen once in 2 runs).
			unlock, err := store.Lock(filepath.Join(dir, "busy4.db"))
			holdLock(unlock)
			return err
		}},
		{what: "db without an action", args: []string{"db"}},
		{what: "db with an unknown action", args: []string{"db", "move", "--from", "a.db", "--to", "b.db"}},
		{what: "db copy without --to", args: []string{"db", "copy", "--from", "a.db"}},
		{what: "db copy onto itself", args: []string{"db", "copy", "--from", "ok.db", "--to", "./ok.db"}, setup: tilefitDB("ok.db")},
		{what: "db copy from a missing database", args: []string{"db", "copy", "--from", "none.db", "--to", "new.db"}},
		// Issue 11.
		{what: "unknown --check", args: []string{"sweep", "--check", "exact"}},
		{what: "mistyped flag", args: []string{"sweep", "--workolad", "strata"}},
		{what: "scan: a size that is not a number", args: []string{"scan", "--sizes", "64,abc"}},
		{what: "scan: a size of zero", args: []string{"scan", "--sizes", "0"}},
		{what: "scan: a shape without K", args: []string{"scan", "--shapes", "64x64"}},
		{what: "scan: a size given twice", args: []string{"scan", "--sizes", "64,128,64"}},
		{what: "scan: both --sizes and --shapes", args: []string{"scan", "--sizes", "64", "--shapes", "64x64x64"}},
		{what: "scan: unknown backend", args: []string{"scan", "--backend", "tpu"}},
		{what: "scan: a tile for an unknown backend", args: []string{"scan", "--tiles", "tpu:64_128_2"}},
		{what: "scan: a tile the CPU does not have", args: []string{"scan", "--backend", "cpu", "--tiles", "64_96_2"}},
		{what: "scan: --size-budget 0", args: []string{"scan", "--size-budget", "0s"}},
		{what: "missing CUDA driver (on a machine without one): scan", args: []string{"scan", "--backend", "cuda", "--sizes", "64"}},
		// Issue 18: what a hostile campaign found.
		{what: "report --output onto the database it reads", args: []string{"report", "--db", "ok.db", "--output", "ok.db"}, setup: tilefitDB("ok.db")},
		{what: "report --output through a symbolic link to its database", args: []string{"report", "--db", "ok.db", "--output", "link.md"}, setup: withLink(tilefitDB("ok.db"), "ok.db", "link.md")},
		{what: "report --output onto the database's -wal", args: []string{"report", "--db", "ok.db", "--output", "ok.db-wal"}, setup: tilefitDB("ok.db")},
		{what: "report --plots onto the database", args: []string{"report", "--db", "ok.db", "--plots", "ok.db"}, setup: tilefitDB("ok.db")},
		{what: "select --policy-out onto the database it reads", args: []string{"select", "--db", "u.db", "--confirm=false", "--policy-out", "u.db"}, setup: tilefitDB("u.db")},
		{what: "select's policy.json in --emit-dir onto the database it reads", args: []string{"select", "--db", "sel/policy.json", "--confirm=false", "--emit-dir", "sel"}, setup: func(dir string) error {
			if err := os.MkdirAll(filepath.Join(dir, "sel"), 0o755); err != nil {
				return err
			}
			return tilefitDB("sel/policy.json")(dir)
		}},
		{what: "select --emit-dir holding the database under an emitted name", args: []string{"select", "--db", "e/tileselect.json", "--confirm=false", "--emit", "json", "--emit-dir", "e"}, setup: func(dir string) error {
			if err := os.Mkdir(filepath.Join(dir, "e"), 0o755); err != nil {
				return err
			}
			return tilefitDB("e/tileselect.json")(dir)
		}},
		{what: "select --source that does not exist (without confirmations)", args: []string{"select", "--db", "ok.db", "--confirm=false", "--source", "nope.c"}, setup: tilefitDB("ok.db")},
		{what: "db copy --to the -wal of --from", args: []string{"db", "copy", "--from", "ok.db", "--to", "ok.db-wal"}, setup: tilefitDB("ok.db")},
		{what: "--dispatches past the bound", args: []string{"sweep", "--dispatches", "1099511627776"}},
		{what: "--dispatches past the bound: ab", args: []string{"ab", "--a", "tile:64_128_2", "--b", "tile:64_128_2", "--dispatches", "1099511627776"}},
		{what: "--rounds past the bound", args: []string{"sweep", "--rounds", "1000000"}},
		{what: "--max-samples past the bound", args: []string{"sweep", "--max-samples", "1099511627776"}},
		{what: "--max-rules past the bound", args: []string{"select", "--max-rules", "1099511627776"}},
		{what: "UTF-16 --source", args: []string{"sweep", "--source", "u16.c"}, setup: func(dir string) error {
			b := []byte{0xFF, 0xFE}
			for _, c := range "int x;\n" {
				b = append(b, byte(c), 0)
			}
			return os.WriteFile(filepath.Join(dir, "u16.c"), b, 0o644)
		}},
		{what: "binary --source", args: []string{"sweep", "--source", "k.o"}, setup: writeFile("k.o", "\x7fELF\x02\x01\x01\x00\x00")},
		{what: "Latin-1 --source", args: []string{"ab", "--a", "source:k.c", "--b", "tile:64_128_2"}, setup: writeFile("k.c", "// caf\xe9\nint x;\n")},
		{what: "workload gemm_q8_f16 with K not a multiple of G", args: []string{"sweep", "--workload", "w.yaml"}, setup: writeFile("w.yaml", "name: q\nm: [1]\nshapes:\n  - {name: q, op: gemm_q8_f16, n: 8, k: 64, g: 24}\n")},
		{what: "families of an unknown backend", args: []string{"families", "--backend", "tpu"}},
	}
}

// withLink runs setup, then makes a symbolic link name to target.
func withLink(setup func(dir string) error, target, name string) func(dir string) error {
	return func(dir string) error {
		if err := setup(dir); err != nil {
			return err
		}
		return os.Symlink(target, filepath.Join(dir, name))
	}
}

func mkfifo(name string) func(dir string) error {
	return func(dir string) error { return syscall.Mkfifo(filepath.Join(dir, name), 0o644) }
}

// sparseFile makes a file of size bytes that takes no disk space.
func sparseFile(name string, size int64) func(dir string) error {
	return func(dir string) error {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		defer f.Close()
		return f.Truncate(size)
	}
}

func manyShapes(name string, n int) func(dir string) error {
	return func(dir string) error {
		var b strings.Builder
		b.WriteString("name: big\nm: [16]\nshapes:\n")
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, "  - {name: s%d, n: 8, k: 8, calls: 1}\n", i)
		}
		return os.WriteFile(filepath.Join(dir, name), []byte(b.String()), 0o644)
	}
}

// tilefitDB creates a tilefit database without cells.
func tilefitDB(name string) func(dir string) error {
	return func(dir string) error {
		st, err := store.Open(context.Background(), filepath.Join(dir, name))
		if err != nil {
			return err
		}
		return st.Close()
	}
}

// schemaVersion creates a tilefit database and sets its user_version.
func schemaVersion(name string, v int) func(dir string) error {
	return func(dir string) error {
		if err := tilefitDB(name)(dir); err != nil {
			return err
		}
		db, err := sql.Open("sqlite", filepath.Join(dir, name))
		if err != nil {
			return err
		}
		defer db.Close()
		_, err = db.Exec(fmt.Sprintf("PRAGMA user_version = %d", v))
		return err
	}
}

func hardLinked(name, second string) func(dir string) error {
	return func(dir string) error {
		if err := tilefitDB(name)(dir); err != nil {
			return err
		}
		return os.Link(filepath.Join(dir, name), filepath.Join(dir, second))
	}
}

// lockedVia creates a database, takes its sweep lock (held until the test
// binary exits, as a running sweep would hold it) and gives it a second
// name with link (os.Symlink or os.Link).
func lockedVia(name, second string, link func(string, string) error) func(dir string) error {
	return func(dir string) error {
		if err := tilefitDB(name)(dir); err != nil {
			return err
		}
		unlock, err := store.Lock(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		holdLock(unlock)
		return link(filepath.Join(dir, name), filepath.Join(dir, second))
	}
}

// heldLocks keeps the bad-input table's database locks reachable until the
// test binary exits: a lock whose unlock function (and so its file) became
// garbage was released by the file's finalizer at the next GC, and the
// "database in use" rows then ran a whole sweep.
var heldLocks struct {
	sync.Mutex
	unlock []func() error
}

func holdLock(unlock func() error) {
	if unlock == nil {
		return
	}
	heldLocks.Lock()
	heldLocks.unlock = append(heldLocks.unlock, unlock)
	heldLocks.Unlock()
}

// listDir names a directory's entries with their sizes and modification
// times: what a refusal must leave as it was.
func listDir(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(path)
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %d %s\n", path, fi.Size(), fi.ModTime().Format(time.RFC3339Nano))
		return nil
	})
	return b.String()
}

// tmpPath hides the per-test temporary folder in messages, memAvail the
// machine's free memory (the device budget of the CPU backend), pid the
// lock holder's process id.
var (
	tmpPath  = regexp.MustCompile(`/tmp/[^ :"']*/`)
	memAvail = regexp.MustCompile(`over the [0-9.]+ [KMGT]iB budget`)
	pid      = regexp.MustCompile(`\(pid [0-9]+\)`)
	// cpuName is the CPU's model in "workload W on MODEL (N cores):".
	cpuName = regexp.MustCompile(`( on )[^:]* \([0-9]+ cores\):`)
)

// TestBadInput runs every row of the bad-input table: each must exit 2 with
// a one-line-or-more message and no panic; the messages are golden in
// docs/bad-input.md (go test ./internal/cli -run TestBadInput -update).
func TestBadInput(t *testing.T) {
	var doc bytes.Buffer
	doc.WriteString("# Bad input and what tilefit says\n\nGenerated by `go test ./internal/cli -run TestBadInput -update`; every row is a test case. Each exits with code 2.\n\n| bad input | command | message |\n|---|---|---|\n")
	for _, bi := range badInputs() {
		if strings.HasPrefix(bi.what, "missing CUDA driver (on a machine without one)") {
			if _, err := os.Stat("/dev/nvidia0"); err == nil {
				t.Logf("skipping %q: this machine has a GPU", bi.what)
				continue
			}
		}
		dir := t.TempDir()
		if bi.setup != nil {
			if err := bi.setup(dir); err != nil {
				t.Fatal(err)
			}
		}
		for k, v := range bi.env {
			t.Setenv(k, v)
		}
		wd, _ := os.Getwd()
		if err := os.Chdir(dir); err != nil {
			t.Fatal(err)
		}
		before := listDir(t, dir)
		var stdout, stderr bytes.Buffer
		code := Run(context.Background(), bi.args, &stdout, &stderr)
		if after := listDir(t, dir); after != before {
			t.Errorf("%s: the refusal changed files:\n%s\nto\n%s", bi.what, before, after)
		}
		if _, err := os.Lstat("/dev/null.lock"); err == nil {
			t.Errorf("%s: /dev/null.lock exists", bi.what)
		}
		os.Chdir(wd)
		for k := range bi.env {
			os.Unsetenv(k)
		}
		msg := strings.TrimSpace(tmpPath.ReplaceAllString(stderr.String(), "/tmp/…/"))
		msg = memAvail.ReplaceAllString(msg, "over the (available memory) budget")
		msg = pid.ReplaceAllString(msg, "(pid N)")
		msg = cpuName.ReplaceAllString(msg, "${1}(this CPU):")
		if code != ExitUsage {
			t.Errorf("%s: exit %d, want 2; stderr:\n%s", bi.what, code, msg)
		}
		if msg == "" || strings.Contains(msg, "goroutine ") || strings.Contains(msg, "panic") {
			t.Errorf("%s: unclear message:\n%s", bi.what, msg)
		}
		fmt.Fprintf(&doc, "| %s | `tilefit %s` | %s |\n", bi.what, strings.Join(bi.args, " "), mdCell(msg))
	}
	golden := filepath.Join("..", "..", "docs", "bad-input.md")
	if *update {
		if err := os.WriteFile(golden, doc.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if !bytes.Equal(want, doc.Bytes()) {
		t.Errorf("docs/bad-input.md is out of date (run go test ./internal/cli -run TestBadInput -update); got:\n%s", doc.String())
	}
}

func mdCell(s string) string {
	s = strings.ReplaceAll(s, "|", "\\|")
	return strings.ReplaceAll(s, "\n", "<br>")
}

// emptyTilefitDB creates a tilefit database with the schema and no cells,
// switched back from WAL to a rollback journal: a reader of a WAL database
// touches SQLite's -shm file, and these rows check that a refusal changes no
// file at all.
func emptyTilefitDB(path string) error {
	st, err := store.Open(context.Background(), path)
	if err != nil {
		return err
	}
	if err := st.Close(); err != nil {
		return err
	}
	db, err := sql.Open("sqlite", path) // the driver the store registers
	if err != nil {
		return err
	}
	defer db.Close()
	_, err = db.Exec("PRAGMA journal_mode=DELETE")
	return err
}
