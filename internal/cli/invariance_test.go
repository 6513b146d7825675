package cli

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tilefit/tilefit/result"
	"github.com/tilefit/tilefit/store"
)

// plantBatchDependence returns the CPU family source with a wrapper that
// recomputes Y summing k backwards when M > 64: every tile still gives the
// same bits as every other in each cell (ALL BITWISE), and the float64
// check passes, but the rows change with M — what only the batch-invariance
// check can catch (cuBLAS's split-K that changes with M looks like this).
func plantBatchDependence(t *testing.T) string {
	return wrapCPUGemm(t, `	const uint16_t *X = ptrs[0], *W = ptrs[1];
	float *Y = ptrs[2];
	int64_t M = args[0], N = args[1], K = args[2];
	if (r == 0 && M > 64) {
		for (int64_t m = 0; m < M; m++)
			for (int64_t n = 0; n < N; n++) {
				float acc = 0.0f;
				for (int64_t k = K - 1; k >= 0; k--)
					acc = fmaf(h2f(X[m * K + k]), h2f(W[n * K + k]), acc);
				Y[m * N + n] = acc;
			}
	}
`)
}

func readCells(t *testing.T, db string) []result.CellResult {
	t.Helper()
	st, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cells, err := st.Cells(context.Background(), store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	return cells
}

// TestSmokeSweepIsBatchInvariant sweeps the smoke workload (M 1, 37, 130)
// on the CPU: every tile keeps its rows across M, every verified candidate
// stored its row hashes, and the report says BATCH-INVARIANT with the
// table and a column for the vendor when OpenBLAS is installed.
func TestSmokeSweepIsBatchInvariant(t *testing.T) {
	needCC(t)
	db := filepath.Join(t.TempDir(), "smoke.db")
	var stdout, stderr bytes.Buffer
	if code := Run(context.Background(), []string{"sweep", "--workload", "smoke", "--db", db, "--tiles", "16_32_1,32_64_2,64_128_2,128_256_2",
		"--rounds", "6", "--aa=false", "--fail-on-error"}, &stdout, &stderr); code != ExitOK {
		t.Fatalf("smoke sweep exit %d\n%s", code, stderr.String())
	}
	out := squashSpaces(stdout.String()) // Markdown tables are padded
	// 4 tiles (the reference 64_128_2 among them) × 5 shapes, 38 rows each.
	if !strings.Contains(out, "\nBATCH-INVARIANT: 4 tiles × 5 shapes (760 tile rows compared across M, none changed)") {
		t.Errorf("sweep output lacks the invariance line:\n%s", out)
	}
	if !strings.Contains(out, "### Batch invariance") || !strings.Contains(out, "| longk | 1, 37, 130 | 4 of 4 invariant (38 rows each) |") {
		t.Errorf("report lacks the batch-invariance table:\n%s", out)
	}
	if i := strings.Index(out, "### Batch invariance"); i >= 0 {
		t.Log(out[i:])
	}
	cells := readCells(t, db)
	if len(cells) != 15 {
		t.Fatalf("%d cells, want 15", len(cells))
	}
	for _, c := range cells {
		if len(c.InputRows) != c.Cell.M || c.InputKey == "" {
			t.Errorf("%s M=%d: input rows %d, key %q", c.Cell.Shape, c.Cell.M, len(c.InputRows), c.InputKey)
		}
		for _, cand := range c.Candidates {
			if cand.Status != result.OK || len(cand.Rows) != 1 || len(cand.Rows[0].Hashes) != c.Cell.M {
				t.Errorf("%s M=%d %s: %s, %d row lists", c.Cell.Shape, c.Cell.M, cand.Tile, cand.Status, len(cand.Rows))
			}
		}
		if c.Find("openblas") != nil && !strings.Contains(out, "| tiles | openblas |") {
			t.Error("no openblas column in the batch-invariance table")
		}
	}
}

// TestPlantedBatchDependenceOnCPU: a source whose sum order changes when M
// > 64 is ALL BITWISE within every cell, yet every tile fails parity at
// M=130 with a message naming the M values and the first changed row — in
// one sweep, and when M=130 is swept by a later process than M=37 (the
// rows of M=37 come from the store).
func TestPlantedBatchDependenceOnCPU(t *testing.T) {
	exe := childSweeps(t)
	dir := t.TempDir()
	srcPath := filepath.Join(dir, "batchdep.c")
	if err := os.WriteFile(srcPath, []byte(plantBatchDependence(t)), 0o644); err != nil {
		t.Fatal(err)
	}
	wl := filepath.Join(dir, "w.yaml")
	if err := os.WriteFile(wl, []byte("name: batchdep\nm: [37, 130]\nshapes:\n  - {name: albe, n: 48, k: 520, calls: 72}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	detail := regexp.MustCompile(`^not batch-invariant: (\d+) of 37 rows changed between M 37 and M=130 \(first: row (\d+) of Y at M=37 differs from M=130\)$`)
	check := func(db string) {
		t.Helper()
		cells := readCells(t, db)
		if len(cells) != 2 {
			t.Fatalf("%d cells, want 2", len(cells))
		}
		for _, c := range cells {
			for _, cand := range c.Candidates {
				switch {
				case c.Cell.M == 37 || cand.Vendor:
					if cand.Status != result.OK {
						t.Errorf("M=%d %s: %s %q", c.Cell.M, cand.Tile, cand.Status, cand.Detail)
					}
				default:
					m := detail.FindStringSubmatch(cand.Detail)
					if cand.Status != result.ParityFailed || m == nil || m[1] == "0" || cand.Samples != nil {
						t.Errorf("M=130 %s: %s %q, want a batch-invariance parity failure", cand.Tile, cand.Status, cand.Detail)
					}
				}
			}
		}
	}
	tiles := "16_32_1,32_64_2,64_128_2"

	// One sweep of both M, in this process (candidates in worker processes).
	db := filepath.Join(dir, "one.db")
	var stdout, stderr bytes.Buffer
	code := Run(context.Background(), []string{"sweep", "--workload", wl, "--db", db, "--source", srcPath, "--tiles", tiles,
		"--rounds", "6", "--aa=false", "--fail-on-error"}, &stdout, &stderr)
	if code != ExitFailures {
		t.Fatalf("sweep of a batch-dependent source: exit %d, want 1\n%s", code, stderr.String())
	}
	check(db)
	out := squashSpaces(stdout.String()) // Markdown tables are padded
	if !strings.Contains(out, "NOT BATCH-INVARIANT: 3 of 3 tiles changed rows across M") || !strings.Contains(out, "| albe | 37, 130 | 0 of 3 invariant (37 rows each); changed: `64_128_2`, `16_32_1`, `32_64_2` 37 of 37 rows changed (first: row ") {
		t.Errorf("report:\n%s", out)
	}

	// M=37 in one process, M=130 in a later one: the check still runs.
	db = filepath.Join(dir, "resumed.db")
	for i, m := range []string{"37", "37,130"} {
		cmd := exec.Command(exe, "sweep", "--workload", wl, "--m", m, "--db", db, "--source", srcPath, "--tiles", tiles,
			"--rounds", "6", "--aa=false", "--report=false", "--fail-on-error")
		cmd.Env = append(os.Environ(), testMainEnv+"=1")
		var errb bytes.Buffer
		cmd.Stderr = &errb
		err := cmd.Run()
		if want := i == 1; (err != nil) != want {
			t.Fatalf("sweep --m %s: %v (want failure: %v)\n%s", m, err, want, errb.String())
		}
	}
	check(db)
}

// squashSpaces collapses runs of spaces, so that checks of Markdown table
// rows do not depend on the padding that aligns the columns.
func squashSpaces(s string) string {
	for strings.Contains(s, "  ") {
		s = strings.ReplaceAll(s, "  ", " ")
	}
	return s
}
