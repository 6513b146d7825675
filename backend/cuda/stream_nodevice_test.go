package cuda

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/tilefit/tilefit/builtin"
	"github.com/tilefit/tilefit/kernel"
)

// TestNVRTCStream compiles gemm_stream tiles of every shape of work (one
// or more weight-row groups and token groups per warp, TK 32/64/128, PDL;
// fp16 output for the reference) with whatever NVRTC is installed, no
// device needed (skipped when none loads; TILEFIT_NVRTC names a library,
// TILEFIT_NVRTC_ARCH the target, default sm_90; TILEFIT_NVRTC_EXTRA one
// more option, e.g. --ptxas-options=-v for the register report). A source
// that the tool compiles at run time is checked here before any GPU sees it.
func TestNVRTCStream(t *testing.T) {
	n, err := openNVRTC()
	if err != nil {
		t.Skipf("no NVRTC: %v", err)
	}
	arch := os.Getenv("TILEFIT_NVRTC_ARCH")
	if arch == "" {
		arch = "sm_90"
	}
	fam := builtin.CUDAGemmStream()
	tiles := []string{fam.Reference, "16_8_1", "64_16_4", "32_32_2", "128_8_8", "32_8_2.tk32.stages2", "16_8_1.pdl1", "32_8_2.tk128"}
	for ti, tile := range tiles {
		p, err := fam.ParseTile(tile)
		if err != nil {
			t.Fatalf("%s: %v", tile, err)
		}
		ys := []string{"Y_DTYPE=3"}
		if ti == 0 {
			ys = append(ys, "Y_DTYPE=1")
		}
		for _, y := range ys {
			opts := []string{"--gpu-architecture=" + arch, "-std=c++17", "-D" + y}
			for _, d := range kernel.Defines(p) {
				opts = append(opts, "-D"+d)
			}
			if x := os.Getenv("TILEFIT_NVRTC_EXTRA"); x != "" {
				opts = append(opts, x) // e.g. --ptxas-options=-v
			}
			cubin, log, err := n.compile(fam.Source, fam.SourceFile, opts)
			if err != nil {
				t.Fatalf("%s %s %s: %v\n%s", n.Version(), tile, y, err, log)
			}
			if len(cubin) == 0 {
				t.Errorf("%s: empty CUBIN", tile)
			}
			if log = strings.TrimSpace(log); log != "" {
				t.Logf("%s %s: %s", tile, y, log)
			}
		}
	}
}

// TestNVRTCWgmmaPDL compiles gemm_wgmma tiles with PDL 1 (the partials and
// the reduce kernel with griddepcontrol) when the installed NVRTC knows
// sm_90a (skipped otherwise).
func TestNVRTCWgmmaPDL(t *testing.T) {
	n, err := openNVRTC()
	if err != nil {
		t.Skipf("no NVRTC: %v", err)
	}
	fam := builtin.CUDAGemmWgmma()
	for _, tile := range []string{"64_48_1.pdl1", "64_48_1.ksplit10.pdl1", "128_128_2.pingpong1.pdl1"} {
		p, err := fam.ParseTile(tile)
		if err != nil {
			t.Fatalf("%s: %v", tile, err)
		}
		opts := []string{"--gpu-architecture=sm_90a", "-std=c++17"}
		for _, d := range kernel.Defines(p) {
			opts = append(opts, "-D"+d)
		}
		_, log, err := n.compile(fam.Source, fam.SourceFile, opts)
		var ne *nvrtcError
		if errors.As(err, &ne) && ne.Code == nvrtcInvalidOption {
			t.Skipf("%s does not know sm_90a", n.Version())
		}
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", n.Version(), tile, err, log)
		}
	}
}
