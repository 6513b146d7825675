package cli

import (
	"bytes"
	"context"
	"database/sql"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

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
		{what: "bad --out type", args: []string{"sweep", "--out", "bf16"}},
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
			_, err := store.Lock(filepath.Join(dir, "busy.db"))
			return err
		}},
		{what: "report of a missing database", args: []string{"report", "--db", "none.db"}},
		{what: "unwritable report path", args: []string{"report", "--db", "ok.db", "--out", "no/such/dir/r.md"}, setup: func(dir string) error {
			return os.WriteFile(filepath.Join(dir, "ok.db"), nil, 0o644)
		}},
		{what: "bad report format", args: []string{"report", "--format", "xml"}},
		{what: "missing C compiler", args: []string{"sweep", "--isolate=false"}, env: map[string]string{"CC": "no-such-cc"}},
		{what: "missing CUDA driver (on a machine without one)", args: []string{"sweep", "--backend", "cuda", "--isolate=false"}},
	}
}

// tmpPath hides the per-test temporary folder in messages, memAvail the
// machine's free memory (the device budget of the CPU backend), pid the
// lock holder's process id.
var (
	tmpPath  = regexp.MustCompile(`/tmp/[^ :"']*/`)
	memAvail = regexp.MustCompile(`over the [0-9.]+ [KMGT]iB budget`)
	pid      = regexp.MustCompile(`\(pid [0-9]+\)`)
)

// TestBadInput runs every row of the bad-input table: each must exit 2 with
// a one-line-or-more message and no panic; the messages are golden in
// docs/bad-input.md (go test ./internal/cli -run TestBadInput -update).
func TestBadInput(t *testing.T) {
	var doc bytes.Buffer
	doc.WriteString("# Bad input and what tilefit says\n\nGenerated by `go test ./internal/cli -run TestBadInput -update`; every row is a test case. Each exits with code 2.\n\n| bad input | command | message |\n|---|---|---|\n")
	for _, bi := range badInputs() {
		if bi.what == "missing CUDA driver (on a machine without one)" {
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
		var stdout, stderr bytes.Buffer
		code := Run(context.Background(), bi.args, &stdout, &stderr)
		os.Chdir(wd)
		for k := range bi.env {
			os.Unsetenv(k)
		}
		msg := strings.TrimSpace(tmpPath.ReplaceAllString(stderr.String(), "/tmp/…/"))
		msg = memAvail.ReplaceAllString(msg, "over the (available memory) budget")
		msg = pid.ReplaceAllString(msg, "(pid N)")
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
