package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
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
