package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tilefit/tilefit/internal/progress"
	"github.com/tilefit/tilefit/store"
	"github.com/tilefit/tilefit/tune"
)

// TestStrayArgumentsAndTypos: "tilefit report extra" is refused like
// every other verb's stray arguments, and a mistyped verb gets the nearest
// one (issue 19: report exited 0; "tilefit swep" got no suggestion).
func TestStrayArgumentsAndTypos(t *testing.T) {
	code, _, stderr := runCLI(t, "report", "extra")
	if code != ExitUsage || !strings.Contains(stderr, `tilefit report: unexpected arguments ["extra"]`) {
		t.Errorf("report extra: exit %d: %s", code, stderr)
	}
	for _, tc := range []struct{ typo, want string }{{"swep", "sweep"}, {"reprot", "report"}, {"selct", "select"}, {"sacn", "scan"}} {
		code, _, stderr := runCLI(t, tc.typo)
		if code != ExitUsage || !strings.Contains(stderr, "; did you mean "+tc.want+"?") {
			t.Errorf("%s: exit %d: %s", tc.typo, code, stderr)
		}
		code, _, stderr = runCLI(t, "help", tc.typo)
		if code != ExitUsage || !strings.Contains(stderr, "; did you mean "+tc.want+"?") {
			t.Errorf("help %s: exit %d: %s", tc.typo, code, stderr)
		}
	}
	if _, _, stderr := runCLI(t, "frobnicate"); strings.Contains(stderr, "did you mean") {
		t.Errorf("a word far from every verb got a suggestion: %s", stderr)
	}
}

// TestSelectPolicyIntoEmitDir: with --emit-dir (and no --policy-out) the
// policy file goes into that folder beside the selector code, not into the
// working directory (issue 19: a 613 KB policy.json in the current
// directory); --policy-out still names it.
func TestSelectPolicyIntoEmitDir(t *testing.T) {
	dir := t.TempDir()
	db := selDB(t, dir)
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(dir, "work")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chdir(work); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	emit := filepath.Join(dir, "sel")
	var stderr bytes.Buffer
	if err := runSelect(testCtx(), selParse(t, "--db", db, "--confirm=false", "--emit", "go", "--emit-dir", emit), nil, &bytes.Buffer{}, &stderr); err != nil {
		t.Fatalf("select: %v\n%s", err, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(emit, "policy.json")); err != nil {
		t.Errorf("no policy.json in --emit-dir: %v\n%s", err, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(work, "policy.json")); err == nil {
		t.Errorf("policy.json written into the working directory despite --emit-dir")
	}
	// --emit-dir alone (no code) still takes the policy.
	only := filepath.Join(dir, "only")
	if err := runSelect(testCtx(), selParse(t, "--db", db, "--confirm=false", "--emit-dir", only), nil, &bytes.Buffer{}, &stderr); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(only, "policy.json")); err != nil {
		t.Errorf("--emit-dir without --emit: %v", err)
	}
	// An explicit --policy-out wins.
	named := filepath.Join(dir, "named.json")
	if err := runSelect(testCtx(), selParse(t, "--db", db, "--confirm=false", "--emit", "go", "--emit-dir", emit, "--policy-out", named), nil, &bytes.Buffer{}, &stderr); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(named); err != nil {
		t.Errorf("--policy-out: %v", err)
	}
}

// TestBrokenSourceFails: a --source with a syntax error exits 2 with the
// compiler's first error, and the report's failures show that error (not
// "exit status 1") at the line of the user's file (issue 19: exit 0,
// "exit status 1", and gemm_f16.c:372 instead of broken.c:411).
func TestBrokenSourceFails(t *testing.T) {
	needCC(t)
	dir := t.TempDir()
	code, src, stderr := runCLI(t, "families", "source", "gemm_f16")
	if code != 0 {
		t.Fatalf("families source: %s", stderr)
	}
	lines := strings.Split(src, "\n")
	at := -1
	for i, l := range lines {
		if strings.HasPrefix(l, "static void *worker(void *arg)") {
			at = i + 2 // inside the function, after its opening brace
		}
	}
	if at < 0 || lines[at-1] != "{" {
		t.Fatalf("no worker function to break in the gemm_f16 source")
	}
	broken := append(append(append([]string{}, lines[:at]...), "\tint broken = ;"), lines[at:]...)
	path := filepath.Join(dir, "broken.c")
	if err := os.WriteFile(path, []byte(strings.Join(broken, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	line := strconv.Itoa(at + 1) // the 1-based line of the inserted text
	db := filepath.Join(dir, "b.db")
	code, out, stderr := runCLI(t, "sweep", "--source", path, "--db", db, "--tiles", "16_32_1", "--m", "1", "--rounds", "6", "--isolate=false", "--vendor=false")
	if code != ExitUsage {
		t.Errorf("exit %d, want %d\n%s", code, ExitUsage, stderr)
	}
	want := path + ":" + line + ":"
	if !strings.Contains(stderr, "--source "+path+" does not compile") || !strings.Contains(stderr, want) {
		t.Errorf("stderr does not name the compiler's error at %s:\n%s", want, stderr)
	}
	failures := out[strings.Index(out, "### Failures"):]
	if !strings.Contains(failures, want) || !strings.Contains(failures, "error:") || strings.Contains(failures, "exit status 1") || strings.Contains(failures, "gemm_f16.c:") {
		t.Errorf("the failures table does not show the compiler's error at the user's line %s:\n%s", want, failures)
	}
}

// TestScanKeepsItsOwnDatabase: tilefit scan writes tilefit-scan.db by
// default, refuses a database that holds a workload sweep, and a report
// of a database that holds both never counts the square sizes in the
// chunk (issue 19: scan wrote into tilefit.db and every later report and
// select mixed its sizes into the chunk).
func TestScanKeepsItsOwnDatabase(t *testing.T) {
	needCC(t)
	dir := t.TempDir()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	code, _, stderr := runCLI(t, "scan", "--backend", "cpu", "--sizes", "32", "--tiles", "64_128_2", "--rounds", "2", "--vendor=false")
	if code != 0 {
		t.Fatalf("scan: exit %d\n%s", code, stderr)
	}
	if _, err := os.Stat("tilefit-scan.db"); err != nil {
		t.Errorf("scan did not write its own default database: %v", err)
	}
	if _, err := os.Stat("tilefit.db"); err == nil {
		t.Errorf("scan wrote the sweep's default tilefit.db")
	}
	// A sweep's database is refused.
	if code, _, stderr := runCLI(t, "sweep", "--db", "sweep.db", "--tiles", "16_32_1", "--m", "1", "--rounds", "6", "--isolate=false", "--vendor=false", "--report=false"); code != 0 {
		t.Fatalf("sweep: exit %d\n%s", code, stderr)
	}
	code, _, stderr = runCLI(t, "scan", "--backend", "cpu", "--sizes", "32", "--tiles", "64_128_2", "--rounds", "2", "--vendor=false", "--db", "sweep.db")
	if code != ExitUsage || !strings.Contains(stderr, "--db sweep.db holds the cells of a workload sweep (shapes sg, albe, oddk, wide and 1 more)") {
		t.Errorf("scan into a sweep's database: exit %d: %s", code, stderr)
	}
	// An old database holding both (scan wrote into tilefit.db before):
	// the report's chunk and select leave the square sizes out.
	mixed := mixScanIntoSweep(t, "sweep.db", "tilefit-scan.db")
	code, md, stderr := runCLI(t, "report", "--db", mixed)
	if code != 0 {
		t.Fatalf("report: exit %d\n%s", code, stderr)
	}
	if !strings.Contains(md, "over the workload's 5 shapes") || !strings.Contains(md, "1 cell of the size study (tilefit scan) left out of the chunk") {
		t.Errorf("the report's chunk counts the size study's cell:\n%s", md)
	}
	var out bytes.Buffer
	if err := runSelect(testCtx(), selParse(t, "--db", mixed, "--confirm=false", "--policy-out", ""), nil, &out, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "32x32x32") {
		t.Errorf("select took the size study's cell:\n%s", out.String())
	}
}

// mixScanIntoSweep copies the cells of the scan database into a copy of
// the sweep database under the sweep's provenance (as scan wrote into
// tilefit.db before it had a database of its own) and returns its path.
func mixScanIntoSweep(t *testing.T, sweepDB, scanDB string) string {
	t.Helper()
	ctx := testCtx()
	mixed := filepath.Join(filepath.Dir(sweepDB), "mixed.db")
	src, err := store.OpenReadOnly(ctx, sweepDB)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	cells, err := src.Cells(ctx, store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	sc, err := store.OpenReadOnly(ctx, scanDB)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	scan, err := sc.Cells(ctx, store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	dst, err := store.Open(ctx, mixed)
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	for _, c := range cells {
		if _, err := dst.SaveCell(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range scan {
		c.Prov = cells[0].Prov
		for i := range c.Candidates {
			c.Candidates[i].Family, c.Candidates[i].Class = cells[0].Candidates[0].Family, cells[0].Candidates[0].Class
		}
		if _, err := dst.SaveCell(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	return mixed
}

// TestProgressBeforeFirstCell: without a terminal a sweep says up front
// what it compiles before its first cell, before any cell's line, and a
// heartbeat line follows while no cell has finished (issue 19: nothing for
// the first ~20 s of compiling).
func TestProgressBeforeFirstCell(t *testing.T) {
	needCC(t)
	dir := t.TempDir()
	code, _, stderr := runCLI(t, "sweep", "--db", filepath.Join(dir, "p.db"), "--tiles", "16_32_1,32_64_2", "--m", "1", "--rounds", "6", "--isolate=false", "--vendor=false", "--report=false")
	if code != 0 {
		t.Fatalf("sweep: exit %d\n%s", code, stderr)
	}
	say := strings.Index(stderr, "operator gemm_f16: 5 cells, families gemm_f16; compiling 3 tiles (and the vendor baselines) before the first cell\n")
	first := strings.Index(stderr, "[1/5]")
	if say < 0 || first < 0 || say > first {
		t.Errorf("the compile line (at %d) does not come before the first cell's (at %d):\n%s", say, first, stderr)
	}

	// The heartbeat: a line while no cell finished (waited for, not timed).
	lines := make(chan string, 16)
	w := writerFunc(func(p []byte) (int, error) {
		select {
		case lines <- string(p):
		default: // never block the heartbeat (it holds its lock)
		}
		return len(p), nil
	})
	shown := 0
	wrapped, stop := progress.Heartbeat(w, func(tune.Progress) { shown++ }, time.Millisecond)
	if got := <-lines; !strings.HasPrefix(got, "… still compiling and verifying before the first cell (elapsed ") {
		t.Errorf("heartbeat line %q", got)
	}
	wrapped(tune.Progress{})
	stop()
	stop() // idempotent
	if shown != 1 {
		t.Errorf("the progress callback ran %d times, want 1", shown)
	}
}

// writerFunc is an io.Writer from a function.
type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// TestABSourcesCostUpFront: "ab --a source:X --b source:Y" without
// --tiles says before it starts how many comparisons it will run and how
// long they may take, and refuses when that is past tune.ABLongRun unless
// --all-tiles (issue 19: an A/A on smoke ran past 45 minutes unannounced).
func TestABSourcesCostUpFront(t *testing.T) {
	dir := t.TempDir()
	_, src, _ := runCLI(t, "families", "source", "gemm_f16")
	a, b := filepath.Join(dir, "a.c"), filepath.Join(dir, "b.c")
	for _, p := range []string{a, b} {
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, _, stderr := runCLI(t, "ab", "--a", "source:"+a, "--b", "source:"+b)
	if code != ExitUsage {
		t.Fatalf("exit %d, want %d:\n%s", code, ExitUsage, stderr)
	}
	for _, want := range []string{
		"ab: two source revisions over every tile of the family's sweep: 32 tiles × 15 cells = 480 paired comparisons, each up to the --budget 30s of rounds: up to 4h0m0s",
		"name the tiles to compare with --tiles (--tiles ref: the reference tile), or give --all-tiles to run them all",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
}
