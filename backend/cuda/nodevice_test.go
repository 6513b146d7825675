package cuda

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/tilefit/tilefit/backend"
	"github.com/tilefit/tilefit/builtin"
	"github.com/tilefit/tilefit/kernel"
)

// TestSpace: the default sweep covers the seeds' space (TM 16..128, TN
// 32..256, SG 1..8) with at least 26 valid tiles, names round-trip, and the
// Go warp layout agrees with the source's rule on the restrictions.
func TestSpace(t *testing.T) {
	fam := builtin.CUDAGemmF16()
	tiles := fam.Tiles()
	if len(tiles) < 26 {
		t.Fatalf("%d tiles, want ≥ 26", len(tiles))
	}
	seen := map[string]map[int]bool{"TM": {}, "TN": {}, "WARPS": {}}
	for _, p := range fam.Space() {
		name := fam.TileName(p)
		q, err := fam.ParseTile(name)
		if err != nil || q.String() != p.String() {
			t.Errorf("tile %s: round trip gives %v, %v", name, q, err)
		}
		for k := range seen {
			seen[k][p[k]] = true
		}
		plan, err := fam.Plan(p, kernel.Dims{"M": 1983, "N": 324, "K": 320})
		if err != nil || len(plan.Launches) != 1 {
			t.Fatalf("tile %s: plan %+v, %v", name, plan, err)
		}
		l := plan.Launches[0]
		grid := ((1983 + p["TM"] - 1) / p["TM"]) * ((324 + p["TN"] - 1) / p["TN"])
		if l.Block != [3]int{p["WARPS"] * 32, 1, 1} || l.Grid != [3]int{grid, 1, 1} || l.Shared != p["STAGES"]*(p["TM"]+p["TN"])*p["TK"]*2 || l.Shared > builtin.CUDAMaxSharedBytes {
			t.Errorf("tile %s: launch %+v", name, l)
		}
	}
	for k, want := range map[string][]int{"TM": {16, 32, 64, 128}, "TN": {32, 64, 128, 256}, "WARPS": {1, 2, 4, 8}} {
		for _, v := range want {
			if !seen[k][v] {
				t.Errorf("no tile with %s=%d", k, v)
			}
		}
	}
	if _, err := fam.ParseTile(fam.Reference); err != nil {
		t.Errorf("reference: %v", err)
	}
	for _, bad := range []string{"128_256_4", "16_32_4", "128_256_8.tk64.stages5", "16_256_1"} {
		if _, err := fam.ParseTile(bad); err == nil {
			t.Errorf("tile %s accepted", bad)
		}
	}
	if _, err := fam.ParseTile("128_128_8.swz1.group4"); err != nil {
		t.Errorf("swizzled tile: %v", err)
	}
	t.Logf("%d tiles: %s", len(tiles), strings.Join(tiles, " "))
}

// TestPlanArgs: the gemm_f16 launch passes X, W, Y then M, N, K, and
// parameters resolve against the operator (backend.ResolvePlan).
func TestPlanArgs(t *testing.T) {
	fam := builtin.CUDAGemmF16()
	p, _ := fam.ParseTile("64_32_2")
	d := kernel.Dims{"M": 100, "N": 70, "K": 9}
	plan, err := fam.Plan(p, d)
	if err != nil {
		t.Fatal(err)
	}
	args, err := backend.ResolvePlan(fam.Operator, d, plan)
	if err != nil {
		t.Fatal(err)
	}
	a := args[0]
	if len(a) != 6 || a[0].Operand != 0 || a[1].Operand != 1 || a[2].Operand != 2 || a[3].Value != 100 || a[4].Value != 70 || a[5].Value != 9 {
		t.Errorf("resolved args %+v", a)
	}
	if plan.Launches[0].Entry != "tilefit_gemm_f16" || plan.Launches[0].Shared != 4*(64+32)*32*2 {
		t.Errorf("launch %+v", plan.Launches[0])
	}
}

// TestNoDriver: without libcuda.so.1, New says so plainly.
func TestNoDriver(t *testing.T) {
	if _, err := openDriver(); err == nil {
		t.Skip("a driver is installed")
	}
	_, err := New(Options{CacheDir: t.TempDir()})
	if err == nil || !strings.HasPrefix(err.Error(), "no NVIDIA driver: libcuda.so.1 not found") {
		t.Errorf("New without a driver: %v", err)
	}
}

// TestNVRTCOnly compiles the reference tile (fp32 and fp16 output) and the
// planted faults with whatever NVRTC is installed, no device needed
// (TILEFIT_NVRTC names a library; skipped when none loads).
func TestNVRTCOnly(t *testing.T) {
	n, err := openNVRTC()
	if err != nil {
		t.Skipf("no NVRTC: %v", err)
	}
	arch := os.Getenv("TILEFIT_NVRTC_ARCH")
	if arch == "" {
		arch = "sm_90"
	}
	fam := builtin.CUDAGemmF16()
	p, _ := fam.ParseTile(fam.Reference)
	for _, extra := range [][]string{nil, {"Y_DTYPE=1"}, {"FAULT=1"}, {"FAULT=2"}, {"FAULT=3", "Y_DTYPE=1"}} {
		opts := []string{"--gpu-architecture=" + arch, "-std=c++17"}
		for _, d := range append(kernel.Defines(p), extra...) {
			opts = append(opts, "-D"+d)
		}
		cubin, log, err := n.compile(fam.Source, "gemm_f16.cu", opts)
		if err != nil {
			t.Fatalf("%s %v: %v\n%s", n.Version(), extra, err, log)
		}
		if len(cubin) == 0 {
			t.Errorf("%v: empty CUBIN", extra)
		}
	}
	_, log, err := n.compile("this is not C++", "x.cu", []string{"--gpu-architecture=" + arch})
	if err == nil || !strings.Contains(log, "error") {
		t.Errorf("broken source: err %v, log %q", err, log)
	}
}

var uuidRE = regexp.MustCompile(`^GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// TestFormatUUID: a CUuuid's 16 bytes print as nvidia-smi -L prints them.
func TestFormatUUID(t *testing.T) {
	u := [16]byte{0x8f, 0x0c, 0x1a, 0x2b, 0x3c, 0x4d, 0x5e, 0x6f, 0x70, 0x81, 0x92, 0xa3, 0xb4, 0xc5, 0xd6, 0x07}
	if got, want := formatUUID(u), "GPU-8f0c1a2b-3c4d-5e6f-7081-92a3b4c5d607"; got != want {
		t.Errorf("formatUUID = %q, want %q", got, want)
	}
	if got := formatUUID([16]byte{}); !uuidRE.MatchString(got) {
		t.Errorf("formatUUID(zero) = %q", got)
	}
}
