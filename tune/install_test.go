package tune

import (
	"context"
	"strings"
	"testing"

	"github.com/tilefit/tilefit/builtin"
)

// TestMissingVendorNamesThePackage: a sweep on a device without the vendor
// library warns and says how to install it (OpenBLAS: the Debian package).
func TestMissingVendorNamesThePackage(t *testing.T) {
	fb := newFake() // no vendor library
	cfg := testConfig()
	bl := fakeBaseline()
	bl.Install = builtin.OpenBLASGemmF16().Install
	cfg.Baselines = append(cfg.Baselines, bl)
	cfg.Tiles = []string{"4"}
	sum, err := Sweep(context.Background(), cfg, NewLocal(func(context.Context) (backendT, error) { return fb, nil }, nil), openStore(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := "no vendor baseline openblas: openblas is not installed on fake device; install it with: apt-get install libopenblas0-pthread"
	if len(sum.Warnings) != 1 || !strings.HasPrefix(sum.Warnings[0], want) {
		t.Errorf("warnings %q, want one starting %q", sum.Warnings, want)
	}
}

// TestVendorWarningReachesTheSweep: a device that flags its vendor library
// (Props "openblas_warning": OpenBLAS on kernels far below the CPU) gives a
// sweep warning naming the baseline, and the vendor still runs; without
// the flag there is no warning.
func TestVendorWarningReachesTheSweep(t *testing.T) {
	const flag = "OpenBLAS 0.3.21 chose its Prescott kernels on a CPU with avx512f"
	for _, warn := range []string{flag, ""} {
		fb := newFake()
		fb.vendor = true
		fb.vendorWarn = warn
		cfg := testConfig()
		cfg.Baselines = append(cfg.Baselines, fakeBaseline())
		cfg.Tiles = []string{"4"}
		sum, err := Sweep(context.Background(), cfg, NewLocal(func(context.Context) (backendT, error) { return fb, nil }, nil), openStore(t), nil)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, w := range sum.Warnings {
			if strings.Contains(w, "vendor baseline") {
				got = append(got, w)
			}
		}
		if warn == "" {
			if len(got) != 0 {
				t.Errorf("no openblas_warning: vendor warnings %q, want none", got)
			}
		} else if want := "vendor baseline openblas: " + flag; len(got) != 1 || got[0] != want {
			t.Errorf("vendor warnings %q, want [%q]", got, want)
		}
		if fb.runs["openblas"] == 0 {
			t.Errorf("warning %q: the vendor did not run (runs %v)", warn, fb.runs)
		}
	}
}
