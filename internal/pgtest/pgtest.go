// Package pgtest gives tests a real PostgreSQL server: the one named by
// TILEFIT_TEST_POSTGRES (a postgres:// URL; .ci/run starts one and sets
// it), else a throwaway cluster this package starts from the OS packages'
// initdb and pg_ctl (/usr/lib/postgresql/*/bin, as the postgres user when
// running as root), listening on 127.0.0.1 only, in a temporary folder,
// and stopped by Main after the package's tests. When neither is possible
// the tests that need a server are skipped with a message saying why and
// how to get one — they never pass silently. A set TILEFIT_TEST_POSTGRES
// that cannot be reached fails them.
package pgtest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
)

// Env names the server tests use when set.
const Env = "TILEFIT_TEST_POSTGRES"

var (
	once    sync.Once
	baseURL string
	skipMsg string // why there is no server (skip)
	failMsg string // why the named server cannot be used (fail)
	stopFn  func()
)

// Main runs the tests and then stops a server the tests started; call it
// from TestMain: os.Exit(pgtest.Main(m)).
func Main(m *testing.M) int {
	code := m.Run()
	if stopFn != nil {
		stopFn()
	}
	return code
}

// URL returns the server's URL, or skips t (no server can be had) or fails
// it (TILEFIT_TEST_POSTGRES is set but unusable).
func URL(t testing.TB) string {
	t.Helper()
	once.Do(setup)
	switch {
	case failMsg != "":
		t.Fatal(failMsg)
	case skipMsg != "":
		t.Skip(skipMsg)
	}
	return baseURL
}

// Schema returns the URL of a new, empty schema on the server (its
// search_path), dropped with everything in it when t ends.
func Schema(t testing.TB) string {
	t.Helper()
	base := URL(t)
	db, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	b := make([]byte, 6)
	rand.Read(b)
	name := "t_" + hex.EncodeToString(b)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := db.ExecContext(ctx, "CREATE SCHEMA "+name); err != nil {
		t.Fatalf("create schema on %s: %v", redact(base), err)
	}
	t.Cleanup(func() {
		db, err := sql.Open("pgx", base)
		if err != nil {
			return
		}
		defer db.Close()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		db.ExecContext(ctx, "DROP SCHEMA "+name+" CASCADE")
	})
	return WithParam(base, "search_path", name)
}

// WithParam returns u with query parameter k set to v.
func WithParam(u, k, v string) string {
	p, err := url.Parse(u)
	if err != nil {
		return u
	}
	q := p.Query()
	q.Set(k, v)
	p.RawQuery = q.Encode()
	return p.String()
}

func redact(u string) string {
	if p, err := url.Parse(u); err == nil {
		return p.Redacted()
	}
	return "the server"
}

func setup() {
	if u := os.Getenv(Env); u != "" {
		if err := ping(u); err != nil {
			failMsg = fmt.Sprintf("%s=%s is set but the server cannot be used: %v", Env, redact(u), err)
			return
		}
		baseURL = u
		return
	}
	u, stop, err := start()
	if err != nil {
		skipMsg = fmt.Sprintf("no PostgreSQL server for this test: %s is unset and no local server could be started (%v); "+
			"install the OS package (apt-get install postgresql) or set %s=postgres://…", Env, err, Env)
		return
	}
	baseURL, stopFn = u, stop
}

func ping(u string) error {
	db, err := sql.Open("pgx", u)
	if err != nil {
		return err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return db.PingContext(ctx)
}

// start starts a throwaway cluster and returns its URL and a stop function.
func start() (string, func(), error) {
	initdb, err := findInitdb()
	if err != nil {
		return "", nil, err
	}
	bin := filepath.Dir(initdb)
	dir, err := os.MkdirTemp("", "tilefit-pg-")
	if err != nil {
		return "", nil, err
	}
	fail := func(err error) (string, func(), error) {
		os.RemoveAll(dir)
		return "", nil, err
	}
	var wrap []string // how to run the server's programs
	if os.Geteuid() == 0 {
		// initdb and postgres refuse to run as root.
		u, err := user.Lookup("postgres")
		if err != nil {
			return fail(fmt.Errorf("running as root, and there is no postgres user to run the server as: %w", err))
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			return fail(err)
		}
		wrap = []string{"runuser", "-u", "postgres", "--"}
	}
	run := func(name string, args ...string) error {
		argv := append(append(append([]string(nil), wrap...), filepath.Join(bin, name)), args...)
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("%s: %v: %s", name, err, lastLines(string(out), 5))
		}
		return nil
	}
	data := filepath.Join(dir, "data")
	if err := run("initdb", "-D", data, "-A", "trust", "-U", "postgres", "-E", "UTF8", "--locale=C", "--no-sync"); err != nil {
		return fail(err)
	}
	var port int
	for try := 0; ; try++ {
		if port, err = freePort(); err != nil {
			return fail(err)
		}
		opts := fmt.Sprintf("-c listen_addresses=127.0.0.1 -p %d -k %s -c fsync=off -c synchronous_commit=off -c full_page_writes=off", port, dir)
		err = run("pg_ctl", "-D", data, "-l", filepath.Join(dir, "log"), "-w", "-t", "60", "-o", opts, "start")
		if err == nil {
			break
		}
		if try == 3 {
			log, _ := os.ReadFile(filepath.Join(dir, "log"))
			return fail(fmt.Errorf("%v; server log: %s", err, lastLines(string(log), 5)))
		}
	}
	stop := func() {
		run("pg_ctl", "-D", data, "-m", "immediate", "-w", "stop")
		os.RemoveAll(dir)
	}
	u := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)
	if err := ping(u); err != nil {
		stop()
		return "", nil, err
	}
	return u, stop, nil
}

// findInitdb returns the initdb of the newest PostgreSQL installed.
func findInitdb() (string, error) {
	found, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(found) == 0 {
		if p, err := exec.LookPath("initdb"); err == nil {
			return p, nil
		}
		return "", fmt.Errorf("no initdb in /usr/lib/postgresql/*/bin or on the PATH")
	}
	version := func(p string) int {
		v, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(p))))
		return v
	}
	sort.Slice(found, func(i, j int) bool { return version(found[i]) > version(found[j]) })
	return found[0], nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
