package cli

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"
)

// TestInterruptBeforeFirstCellExits130: an interrupt while the sweep is
// still opening its database or compiling exits 130 like one between cells,
// not 2 (bad input).
func TestInterruptBeforeFirstCellExits130(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	db := filepath.Join(t.TempDir(), "t.db")
	var out, errb bytes.Buffer
	if code := Run(ctx, []string{"sweep", "--db", db, "--isolate=false"}, &out, &errb); code != ExitInterrupted {
		t.Fatalf("exit %d, want %d\n%s", code, ExitInterrupted, errb.String())
	}
}
