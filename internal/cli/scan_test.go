package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tilefit/tilefit/backend"
	"github.com/tilefit/tilefit/backend/cpu"
	"github.com/tilefit/tilefit/report"
	"github.com/tilefit/tilefit/store"
)

// scanDB creates a database holding the CPU's ceilings as given (so that
// the size budget's estimates do not depend on this machine's speed).
func scanDB(t *testing.T, copyGBps, tflops string) string {
	t.Helper()
	dev := cpuDevice(t)
	db := filepath.Join(t.TempDir(), "scan.db")
	st, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	err = st.SaveDevice(context.Background(), store.DeviceRecord{Backend: "cpu", Name: dev.Name,
		Props: map[string]string{"copy_gbps": copyGBps, "vendor_tflops": tflops}, Measured: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// cpuDevice is this machine's CPU device (the test skips without a CPU
// backend).
func cpuDevice(t *testing.T) backend.Device {
	t.Helper()
	c, err := cpu.New(cpu.Options{})
	if err != nil {
		t.Skipf("no CPU backend: %v", err)
	}
	dev, err := c.Device(context.Background())
	c.Close()
	if err != nil {
		t.Fatal(err)
	}
	return dev
}

func scanCounts(t *testing.T, db string) (cells, candidates int) {
	t.Helper()
	st, err := store.OpenReadOnly(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rows, err := st.Cells(context.Background(), store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		candidates += len(r.Candidates)
	}
	return len(rows), candidates
}

// TestScanCPU is the size study on the CPU at small sizes: one row per
// size with the best tile (and OpenBLAS when installed), the ceilings and
// the roof; the cells stored like a sweep's; a second run measures nothing;
// a size over --size-budget at the stored vendor rate is skipped with a
// line saying so.
func TestScanCPU(t *testing.T) {
	// 1 GFLOP/s: 256³ (33.6 MFLOP, 34 ms a call) cannot fit 300 ms with
	// two or three candidates; 64³ and 96³ (0.5 and 1.8 ms) can.
	db := scanDB(t, "10", "0.001")
	plots := filepath.Join(t.TempDir(), "plots")
	args := []string{"scan", "--backend", "cpu", "--sizes", "96,64,256", "--tiles", "64_128_2,cpu:32_64_2,cuda:128_128_4",
		"--rounds", "2", "--db", db, "--size-budget", "300ms", "--plots", plots, "--check", "laplacian"}
	var stdout, stderr bytes.Buffer
	if code := Run(context.Background(), args, &stdout, &stderr); code != ExitOK {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	// Tables are padded for a terminal: compare with runs of spaces as one.
	spaces := regexp.MustCompile(` +`)
	out, errs := spaces.ReplaceAllString(stdout.String(), " "), stderr.String()
	for _, want := range []string{
		"# tilefit scan: GFLOP/s by problem size",
		"| cpu | ", " | gemm_f16 | 10.0 | 1.00",
		"| 64³ | ", "| 96³ | ", "| 256³ | skipped | — | — | 1.00 |", // roof: AI 2·256³/(8·256²) = 64 FLOP/byte → 640 GFLOP/s; the peak, 1, is lower
		"- cpu 256³: skipped estimated ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	if strings.Index(out, "| 64³") > strings.Index(out, "| 96³") {
		t.Errorf("sizes not smallest first:\n%s", out)
	}
	// The best tile is one of the two asked for, with a rate.
	row := regexp.MustCompile("\\| 64³ \\| [^|]+ \\| ([0-9.]+) \\| `(64_128_2|32_64_2)` \\|").FindStringSubmatch(out)
	if row == nil {
		t.Errorf("64³ row lacks the best tile's rate and name:\n%s", out)
	}
	// The rate is the stored peak (1 GFLOP/s: 34 ms a call), or on a machine
	// slower than that at 96³ the slowest rate measured there.
	if !regexp.MustCompile(`cpu 256³: skipped: estimated [0-9.]+m?s \(\d candidates at (the vendor's measured peak, 1 GFLOP/s: 34ms|the slowest rate measured at the size before, [0-9.]+ GFLOP/s: [0-9.]+m?s) per call\) exceeds --size-budget 300ms`).MatchString(errs) {
		t.Errorf("stderr lacks the skip line:\n%s", errs)
	}
	for _, want := range []string{"cpu: --check laplacian: every candidate of the 3 cells must also give Y = X·Lᵀ exactly",
		"[1/3] cpu 64³ done (elapsed ", "[3/3] cpu 256³ skipped (size budget) ("} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
	svg, err := os.ReadFile(filepath.Join(plots, "scan-gflops.svg"))
	if err != nil || !bytes.Contains(svg, []byte("<svg")) || !bytes.Contains(svg, []byte("cpu best tile")) {
		t.Errorf("scan-gflops.svg: %v, %d bytes", err, len(svg))
	}
	if png, err := os.ReadFile(filepath.Join(plots, "scan-gflops.png")); err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Errorf("scan-gflops.png: %v", err)
	}
	if want := "![GFLOP/s by problem size: gemm_f16](" + filepath.ToSlash(filepath.Join(plots, "scan-gflops.svg")) + ")"; !strings.Contains(out, want) {
		t.Errorf("stdout does not link the plot %q:\n%s", want, out)
	}
	cells, cands := scanCounts(t, db)
	if cells != 2 {
		t.Fatalf("%d cells stored, want 2 (64³ and 96³)", cells)
	}

	// Again: nothing measured, the same table from the database.
	var stdout2, stderr2 bytes.Buffer
	if code := Run(context.Background(), args, &stdout2, &stderr2); code != ExitOK {
		t.Fatalf("second run: exit %d\n%s", code, stderr2.String())
	}
	if c2, k2 := scanCounts(t, db); c2 != cells || k2 != cands {
		t.Errorf("second run stored more: %d cells / %d candidates, was %d / %d", c2, k2, cells, cands)
	}
	if spaces.ReplaceAllString(stdout2.String(), " ") != out {
		t.Errorf("second run's table differs:\n%s\nfirst:\n%s", stdout2.String(), out)
	}
	if !strings.Contains(stderr2.String(), "[1/3] cpu 64³ already stored") || !strings.Contains(stderr2.String(), "[2/3] cpu 96³ already stored") {
		t.Errorf("second run did not skip the stored sizes:\n%s", stderr2.String())
	}

	// JSON: the same numbers, missing rates null.
	var js bytes.Buffer
	if code := Run(context.Background(), append(args, "--format", "json"), &js, &stderr2); code != ExitOK {
		t.Fatalf("json: exit %d\n%s", code, stderr2.String())
	}
	var doc report.Scan
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatalf("json: %v\n%s", err, js.String())
	}
	if doc.Schema != report.ScanSchemaID || len(doc.Backends) != 1 || len(doc.Sizes) != 3 || doc.Sizes[2].Results[0].Status != report.ScanSkipped {
		t.Errorf("json document: %+v", doc)
	}
	if r := doc.Sizes[0].Results[0]; r.Status != report.ScanOK || r.Candidates < 2 || !r.BestGFLOPs.Valid() || r.Failed != 0 {
		t.Errorf("64³: %+v", r)
	}
	if !strings.Contains(js.String(), `"best_us": null`) {
		t.Errorf("a missing rate is not null in JSON:\n%s", js.String())
	}
}
