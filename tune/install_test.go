package tune

import (
	"context"
	"strings"
	"testing"

	"github.com/tilefit/tilefit/kernel"
)

// TestMissingVendorNamesThePackage: a sweep on a device without the vendor
// library warns and says how to install it (OpenBLAS: the Debian package).
func TestMissingVendorNamesThePackage(t *testing.T) {
	fb := newFake() // no vendor library
	cfg := testConfig()
	bl := fakeBaseline()
	bl.Install = kernel.OpenBLASGemmF16().Install
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
