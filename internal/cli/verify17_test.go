package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSweepHeadlineCountsStoredM (issue 17, defect 3): a sweep of M 1, 37
// into a database that holds M 130 of a batch-dependent source compares
// the new cells with M 130 and fails them; its headline must say NOT
// BATCH-INVARIANT, as the report of the same database does, not
// "BATCH-INVARIANT … none changed" from the two M it swept.
func TestSweepHeadlineCountsStoredM(t *testing.T) {
	needCC(t)
	dir := t.TempDir()
	srcPath := filepath.Join(dir, "batchdep.c")
	if err := os.WriteFile(srcPath, []byte(plantBatchDependence(t)), 0o644); err != nil {
		t.Fatal(err)
	}
	wl := filepath.Join(dir, "w.yaml")
	if err := os.WriteFile(wl, []byte("name: batchdep\nm: [1, 37, 130]\nshapes:\n  - {name: albe, n: 48, k: 64, calls: 72}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "h.db")
	var out string
	for _, m := range []string{"130", "1,37"} {
		var stdout, stderr bytes.Buffer
		Run(context.Background(), []string{"sweep", "--workload", wl, "--m", m, "--db", db, "--source", srcPath, "--tiles", "16_32_1,64_128_2",
			"--rounds", "6", "--aa=false", "--report=false", "--vendor=false"}, &stdout, &stderr)
		out = stdout.String()
	}
	failed := 0
	for _, c := range readCells(t, db) {
		for _, cand := range c.Candidates {
			if strings.HasPrefix(cand.Detail, "not batch-invariant") {
				failed++
			}
		}
	}
	if failed == 0 {
		t.Fatal("the second sweep failed no candidate as not batch-invariant; the planted source did not work")
	}
	if strings.Contains(out, "BATCH-INVARIANT:") && !strings.Contains(out, "NOT BATCH-INVARIANT:") {
		t.Errorf("the sweep stored %d not batch-invariant failures but its headline says:\n%s", failed, out)
	}
	if !strings.Contains(out, "NOT BATCH-INVARIANT:") {
		t.Errorf("headline:\n%s", out)
	}
}
