package cli

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestOpenBLASWarningSurfaces: OpenBLAS on kernels far weaker than the CPU
// (forced here with OPENBLAS_CORETYPE=Prescott on a CPU with avx2, as a
// DYNAMIC_ARCH OpenBLAS that does not know the CPU model chooses itself)
// is warned about by `tilefit devices` (the property and a stderr line)
// and by `tilefit scan` (once on stderr over two sizes, and as a note of
// the report); without the variable this machine's OpenBLAS gives no
// warning. Child processes: OpenBLAS reads the variable when loaded.
func TestOpenBLASWarningSurfaces(t *testing.T) {
	exe := childSweeps(t)
	dev := cpuDevice(t)
	if !strings.Contains(dev.Props["openblas"], "DYNAMIC_ARCH") || !strings.Contains(" "+dev.Arch+" ", " avx2 ") {
		t.Skipf("needs a DYNAMIC_ARCH OpenBLAS on a CPU with avx2 (openblas %q, arch %q)", dev.Props["openblas"], dev.Arch)
	}
	run := func(coretype string, args ...string) (string, string) {
		t.Helper()
		cmd := exec.Command(exe, args...)
		cmd.Env = append(os.Environ(), testMainEnv+"=1", "OPENBLAS_CORETYPE="+coretype)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("tilefit %s (OPENBLAS_CORETYPE=%q): %v\n%s", strings.Join(args, " "), coretype, err, stderr.String())
		}
		return stdout.String(), stderr.String()
	}
	devices := []string{"devices", "--backend", "cpu", "--measure=false"}

	if os.Getenv("OPENBLAS_CORETYPE") == "" && dev.Props["openblas_warning"] == "" {
		out, errs := run("", devices...)
		if !strings.Contains(out, "openblas = ") || strings.Contains(out, "openblas_warning") || strings.Contains(errs, "warning") {
			t.Errorf("devices without OPENBLAS_CORETYPE warns:\n%s\n%s", out, errs)
		}
	}

	out, errs := run("Prescott", devices...)
	for _, want := range []string{" Prescott MAX_THREADS", "openblas_warning = OpenBLAS "} {
		if !strings.Contains(out, want) {
			t.Errorf("devices stdout lacks %q:\n%s", want, out)
		}
	}
	if !strings.HasPrefix(errs, "warning: cpu: OpenBLAS ") || !strings.Contains(errs, "chose its Prescott kernels on a CPU with avx") ||
		!strings.Contains(errs, "set OPENBLAS_CORETYPE=") || strings.Count(errs, "warning:") != 1 {
		t.Errorf("devices stderr: want one warning about Prescott, got:\n%s", errs)
	}

	db := scanDB(t, "10", "1")
	scan := []string{"scan", "--backend", "cpu", "--sizes", "16,24", "--tiles", "16_32_1", "--rounds", "2", "--db", db}
	out, errs = run("Prescott", scan...)
	const prefix = "cpu: warning: vendor baseline openblas: OpenBLAS "
	if n := strings.Count(errs, prefix); n != 1 || !strings.Contains(errs, "chose its Prescott kernels") {
		t.Errorf("scan stderr: %d warnings starting %q, want 1 about Prescott:\n%s", n, prefix, errs)
	}
	if !strings.Contains(out, "- cpu: vendor baseline openblas: OpenBLAS ") {
		t.Errorf("scan report lacks the note:\n%s", out)
	}
	// Stored already: the warning still says what the vendor column is.
	out, errs = run("Prescott", append(scan, "--format", "json")...)
	if strings.Count(errs, prefix) != 1 || !strings.Contains(out, `"vendor_warning": "vendor baseline openblas: OpenBLAS `) {
		t.Errorf("second scan (stored): stderr\n%s\nstdout\n%s", errs, out)
	}
	if cells, _ := scanCounts(t, db); cells != 2 {
		t.Errorf("%d cells stored, want 2", cells)
	}
}
