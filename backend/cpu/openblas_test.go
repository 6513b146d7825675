package cpu

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// flagSet is a /proc/cpuinfo flag set.
func flagSet(names ...string) map[string]bool {
	m := map[string]bool{}
	for _, n := range names {
		m[n] = true
	}
	return m
}

// TestOpenBLASWarning: OpenBLAS on pre-AVX2 kernels (the core type in its
// config) on a CPU with avx2 or avx512f is warned about, naming the core,
// the CPU's best flag and the core type to set; a fitting core type, a
// config without one, or a CPU without avx2 gives no warning.
func TestOpenBLASWarning(t *testing.T) {
	const h200 = "OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH NO_AFFINITY Prescott MAX_THREADS=64"
	avx512 := flagSet("sse4_2", "avx", "avx2", "fma", "avx512f", "avx512_fp16", "amx_tile")
	avx2 := flagSet("sse4_2", "avx", "avx2", "fma")
	for _, tc := range []struct {
		name, config, coretype string
		flags                  map[string]bool
		want                   []string // substrings; nil: no warning
	}{
		{"Prescott on avx512f", h200, "", avx512, []string{
			"OpenBLAS 0.3.21 chose its Prescott kernels on a CPU with avx512f (it does not know this CPU model)",
			"the openblas column and vendor_tflops understate the vendor", "set OPENBLAS_CORETYPE=SkylakeX (AVX-512) or Haswell (AVX2)", "or install a newer OpenBLAS"}},
		{"Prescott on avx2", h200, "", avx2, []string{
			"chose its Prescott kernels on a CPU with avx2 (", "set OPENBLAS_CORETYPE=Haswell (AVX2) before"}},
		{"SkylakeX on avx512f", "OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH NO_AFFINITY SkylakeX MAX_THREADS=64", "", avx512, nil},
		{"Cooperlake on avx512f", "OpenBLAS 0.3.26 NO_LAPACKE DYNAMIC_ARCH NO_AFFINITY Cooperlake MAX_THREADS=64", "", avx512, nil},
		{"Haswell on avx2", "OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY Haswell MAX_THREADS=64", "", avx2, nil},
		{"Zen on avx2", "OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH NO_AFFINITY Zen MAX_THREADS=64", "", avx2, nil},
		{"Sandybridge on avx2", "OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY Sandybridge MAX_THREADS=64", "", avx2, []string{
			"chose its Sandybridge kernels on a CPU with avx2", "OPENBLAS_CORETYPE=Haswell (AVX2)"}},
		{"Sandybridge on avx only", "OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY Sandybridge MAX_THREADS=64", "", flagSet("sse4_2", "avx"), nil},
		{"Core2 on avx512f", "OpenBLAS 0.3.20 DYNAMIC_ARCH NO_AFFINITY Core2 MAX_THREADS=128", "", avx512, []string{"chose its Core2 kernels on a CPU with avx512f"}},
		{"no core word", "OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH NO_AFFINITY MAX_THREADS=64", "", avx512, nil},
		{"no config", "", "", avx512, nil},
		{"Prescott without avx2", h200, "", flagSet("sse4_2", "avx"), nil},
		{"Prescott on arm", h200, "", flagSet("neon", "asimd"), nil},
		{"asked for", h200, "Prescott", avx512, []string{"(OPENBLAS_CORETYPE=Prescott asked for them)", "set OPENBLAS_CORETYPE=SkylakeX"}},
		{"one-core build", "OpenBLAS 0.3.21 NO_AFFINITY PRESCOTT MAX_THREADS=64", "", avx2, []string{
			"chose its PRESCOTT kernels on a CPU with avx2 (a build for that core only)", "install an OpenBLAS built for this CPU",
			"takes OPENBLAS_CORETYPE=Haswell (AVX2)"}},
	} {
		got := openBLASWarning(tc.config, tc.flags, tc.coretype)
		if tc.want == nil {
			if got != "" {
				t.Errorf("%s: warning %q, want none", tc.name, got)
			}
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: warning %q lacks %q", tc.name, got, w)
			}
		}
	}
}

// TestOpenBLASWarningHere: this machine's OpenBLAS (when installed) is
// named in the device's Props, and the device warns exactly when
// openBLASWarning says so for its config and this CPU's flags: a CI
// machine whose OpenBLAS fits its CPU gets no warning.
func TestOpenBLASWarningHere(t *testing.T) {
	c, err := New(Options{CacheDir: t.TempDir()})
	if err != nil {
		t.Skipf("no CPU backend: %v", err)
	}
	defer c.Close()
	d, err := c.Device(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	cfg := d.Props["openblas"]
	if cfg == "" {
		if w, ok := d.Props["openblas_warning"]; ok {
			t.Errorf("openblas_warning %q without OpenBLAS", w)
		}
		t.Skip("OpenBLAS not installed")
	}
	want := openBLASWarning(cfg, readCPUInfo().flags, os.Getenv("OPENBLAS_CORETYPE"))
	t.Logf("OpenBLAS here: %q on %s; warning: %q", cfg, d.Arch, want)
	if got := d.Props["openblas_warning"]; got != want {
		t.Errorf("Props openblas_warning %q, want %q", got, want)
	}
}

// forcedEnv, set in a child of TestOpenBLASWarningForced, makes the test
// check the device (OpenBLAS reads OPENBLAS_CORETYPE once, when loaded).
const forcedEnv = "TILEFIT_TEST_OPENBLAS_FORCED"

// TestOpenBLASWarningForced: with OPENBLAS_CORETYPE=Prescott (a
// DYNAMIC_ARCH OpenBLAS then runs its Prescott kernels, as one that does
// not know the CPU does) on a CPU with avx2, the device's Props carry
// openblas_warning naming Prescott. Skips without such an OpenBLAS or CPU.
func TestOpenBLASWarningForced(t *testing.T) {
	if os.Getenv(forcedEnv) != "" {
		c, err := New(Options{CacheDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		d, err := c.Device(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		w := d.Props["openblas_warning"]
		if !strings.Contains(d.Props["openblas"], " Prescott ") || !strings.Contains(w, "chose its Prescott kernels on a CPU with avx") ||
			!strings.Contains(w, "(OPENBLAS_CORETYPE=Prescott asked for them)") || !strings.Contains(w, "set OPENBLAS_CORETYPE=") {
			t.Errorf("openblas %q: openblas_warning %q", d.Props["openblas"], w)
		}
		return
	}
	c, err := New(Options{CacheDir: t.TempDir()})
	if err != nil {
		t.Skipf("no CPU backend: %v", err)
	}
	d, err := c.Device(context.Background())
	c.Close()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(d.Props["openblas"], "DYNAMIC_ARCH") {
		t.Skipf("no DYNAMIC_ARCH OpenBLAS here (openblas %q)", d.Props["openblas"])
	}
	if fl := readCPUInfo().flags; !fl["avx2"] {
		t.Skip("the CPU has no avx2")
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestOpenBLASWarningForced$", "-test.v")
	cmd.Env = append(os.Environ(), forcedEnv+"=1", "OPENBLAS_CORETYPE=Prescott")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestOpenBLASWarningForced") {
		t.Errorf("child with OPENBLAS_CORETYPE=Prescott: %v\n%s", err, out)
	}
}
