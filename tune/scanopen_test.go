package tune

import (
	"context"
	"slices"
	"testing"

	"github.com/tilefit/tilefit/backend"
)

// scanBackends registers backends named cpu and cuda that never open.
func scanBackends() *backend.Registry {
	var r backend.Registry
	for _, name := range []string{"cpu", "cuda"} {
		r.Add(name, func(context.Context, int) (backend.Backend, error) { return nil, context.Canceled })
	}
	return &r
}

// TestScanSizesParsing (moved from internal/cli): --sizes and --shapes,
// the default sizes and each backend's share of --tiles and --family.
func TestScanSizesParsing(t *testing.T) {
	got, err := ParseScanSizes("--shapes", "256x4096x1024,1X2X3", true)
	if err != nil || len(got) != 2 || got[0] != (ScanSize{M: 256, N: 4096, K: 1024}) || got[1] != (ScanSize{M: 1, N: 2, K: 3}) {
		t.Errorf("--shapes: %v, %v", got, err)
	}
	if got[0].Name() != "256x4096x1024" || got[0].Label() != "256×4096×1024" || (ScanSize{M: 8, N: 8, K: 8}).Label() != "8³" {
		t.Errorf("names %q %q", got[0].Name(), got[0].Label())
	}
	if d := DefaultScanSizes(); len(d) != 8 || d[0] != (ScanSize{M: 64, N: 64, K: 64}) || d[7] != (ScanSize{M: 8192, N: 8192, K: 8192}) {
		t.Errorf("default sizes %v", d)
	}
	for _, tc := range []struct{ list, be, want string }{
		{"64_128_2,cpu:32_64_2,cuda:128_128_4", "cpu", "64_128_2,32_64_2"},
		{"64_128_2,cpu:32_64_2,cuda:128_128_4", "cuda", "64_128_2,128_128_4"},
		{"cpu:32_64_2", "cuda", ""},
		{"", "cpu", ""},
	} {
		if got, err := ScanItems(scanBackends(), "--tiles", tc.list, tc.be); err != nil || got != tc.want {
			t.Errorf("ScanItems(%q, %s) = %q, %v; want %q", tc.list, tc.be, got, err, tc.want)
		}
	}
	if got, err := ScanItems(scanBackends(), "--family", "cpu:gemm_f16,cuda:gemm_f16,cuda:gemm_wgmma", "cuda"); err != nil || got != "gemm_f16,gemm_wgmma" {
		t.Errorf("ScanItems --family: %q, %v", got, err)
	}
	if _, err := ScanItems(scanBackends(), "--tiles", "tpu:1_2_3", "cpu"); err == nil {
		t.Error("unknown backend prefix accepted")
	}
}

func TestSortScanSizes(t *testing.T) {
	sizes := []ScanSize{{M: 64, N: 64, K: 64}, {M: 1, N: 2, K: 3}, {M: 8, N: 8, K: 8}, {M: 3, N: 2, K: 1}}
	SortScanSizes(sizes)
	if want := []ScanSize{{M: 1, N: 2, K: 3}, {M: 3, N: 2, K: 1}, {M: 8, N: 8, K: 8}, {M: 64, N: 64, K: 64}}; !slices.Equal(sizes, want) {
		t.Errorf("sorted %v, want %v", sizes, want)
	}
}
