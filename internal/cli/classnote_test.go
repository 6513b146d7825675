package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReportOldDatabaseNote: tilefit report of a database swept before the
// store kept numerics classes (the recorded H200 sweep) still reports,
// with the classes derived from the binary's families, and says so once.
func TestReportOldDatabaseNote(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "docs", "results", "h200-final", "final.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), "final.sqlite")
	if err := os.WriteFile(db, src, 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := Run(context.Background(), []string{"report", "--db", db, "--format", "json"}, &stdout, &stderr); code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if n := strings.Count(stderr.String(), "stored without their numerics class"); n != 1 {
		t.Errorf("the note is said %d times, want once:\n%s", n, stderr.String())
	}
	if !strings.Contains(stdout.String(), `"class": "gemm_f16"`) || strings.Contains(stdout.String(), `"class": "gemm_wgmma"`) {
		t.Error("the wgmma tiles' class is not derived from the family (gemm_f16)")
	}
}
