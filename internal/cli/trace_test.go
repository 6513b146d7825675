package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestSweepTrace: sweep --trace says on stderr how long its own steps took
// (the start-up, the worker's backend open, the report, the close) and
// adds the parts of the verify and time phases to each progress line;
// without it none of that is printed.
func TestSweepTrace(t *testing.T) {
	needCC(t)
	dir := t.TempDir()
	wl := filepath.Join(dir, "w.yaml")
	if err := os.WriteFile(wl, []byte("name: tr\nm: [5]\nshapes:\n  - {name: albe, n: 48, k: 64, calls: 72}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"sweep", "--workload", wl, "--tiles", "16_32_1,64_128_2", "--rounds", "6", "--aa=false", "--vendor=false"}
	code, _, stderr := runCLI(t, append(args, "--db", filepath.Join(dir, "a.db"), "--trace")...)
	if code != 0 {
		t.Fatalf("sweep --trace: exit %d: %s", code, stderr)
	}
	for _, step := range []string{"flags and workload", "worker start and device", "store open", "sweeps", "report load", "report", "close", "total"} {
		if !regexp.MustCompile(`(?m)^trace: ` + regexp.QuoteMeta(step) + ` \d+\.\d{3}s$`).MatchString(stderr) {
			t.Errorf("no trace line for %q in:\n%s", step, stderr)
		}
	}
	if !regexp.MustCompile(`(?m)^trace: worker \d+: backend open and device \d+\.\d{3}s`).MatchString(stderr) {
		t.Errorf("no trace line from the worker process in:\n%s", stderr)
	}
	progress := regexp.MustCompile(`(?m)^\[1/1\] albe M=5 done .*$`).FindString(stderr)
	for _, part := range []string{"verify/keep", "verify/diff", "verify/numeric", "verify/hash", "time/warmup", "time/gpu"} {
		if !regexp.MustCompile(regexp.QuoteMeta(part) + ` \d+\.\d\ds`).MatchString(progress) {
			t.Errorf("progress line without %s: %q", part, progress)
		}
	}

	code, _, stderr = runCLI(t, append(args, "--db", filepath.Join(dir, "b.db"))...)
	if code != 0 {
		t.Fatalf("sweep: exit %d: %s", code, stderr)
	}
	if strings.Contains(stderr, "trace:") || strings.Contains(stderr, "verify/keep") || strings.Contains(stderr, "time/gpu") {
		t.Errorf("a sweep without --trace traces:\n%s", stderr)
	}
}
