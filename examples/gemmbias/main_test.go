package gemmbias

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tilefit/tilefit"
)

// registry is the built-ins plus this package's families, as a user's
// main builds it.
func registry(t testing.TB) *tilefit.Registry {
	reg := tilefit.Builtin()
	for _, f := range Families() {
		if err := reg.Add(f); err != nil {
			t.Fatal(err)
		}
	}
	return reg
}

// TestCLI runs tilefit's command line on registry through this test binary
// when TILEFIT_CLI holds its arguments (space-separated), so that a device
// run carries one binary for the device tests and the sweeps of both
// families (the sweep's workers are this binary too: TestMain); skipped
// otherwise.
func TestCLI(t *testing.T) {
	args := os.Getenv("TILEFIT_CLI")
	if args == "" {
		t.Skip("TILEFIT_CLI not set")
	}
	if code := tilefit.RunWith(context.Background(), registry(t), strings.Fields(args), os.Stdout, os.Stderr); code != tilefit.ExitOK {
		t.Fatalf("tilefit %s: exit %d", args, code)
	}
}

// TestMain lets the test binary serve as the sweep's worker process, as a
// user's main does first.
func TestMain(m *testing.M) {
	tilefit.MaybeServeWorkerWith(registry(nil))
	os.Exit(m.Run())
}

// TestPublicSweep runs `sweep` and `report` through the public package on
// a workload whose shape names the new operator, in worker processes (the
// default isolation), as a user's own binary would: the family is listed,
// swept with every tile bitwise equal to the reference, and reported.
func TestPublicSweep(t *testing.T) {
	if _, err := newCPUErr(t); err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	wl := filepath.Join(dir, "bias.yaml")
	if err := os.WriteFile(wl, []byte("name: bias\nm: [5]\nshapes:\n  - {name: proj, op: gemm_bias_f16, n: 40, k: 24, calls: 2}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "bias.db")
	ctx := context.Background()
	run := func(args ...string) string {
		t.Helper()
		var stdout, stderr bytes.Buffer
		if code := tilefit.RunWith(ctx, registry(t), args, &stdout, &stderr); code != tilefit.ExitOK {
			t.Fatalf("%s: exit %d\n%s%s", strings.Join(args, " "), code, stdout.String(), stderr.String())
		}
		return stdout.String()
	}
	if out := run("families", "--backend", "cpu"); !strings.Contains(out, "gemm_bias_f16") {
		t.Fatalf("families does not list gemm_bias_f16:\n%s", out)
	}
	out := run("sweep", "--workload", wl, "--family", "gemm_bias_f16", "--db", db, "--rounds", "4", "--vendor=false", "--aa=false", "--fail-on-error", "--report=false")
	_ = out
	md := run("report", "--db", db)
	for _, want := range []string{"gemm_bias_f16", "proj", "ALL BITWISE"} {
		if !strings.Contains(md, want) {
			t.Errorf("the report lacks %q:\n%s", want, md)
		}
	}
}
