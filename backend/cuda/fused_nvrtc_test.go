package cuda

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/tilefit/tilefit/backend/backendtest"
	"github.com/tilefit/tilefit/builtin"
	"github.com/tilefit/tilefit/kernel"
)

// TestFusedNVRTC compiles tiles of the fused CUDA families (hc_up_f16,
// swiglu_f16, gemm_q8_f16: 12 spread over each default sweep, plus the
// reference's row-tail, DEBUG and FAULT variants), gemm_f16's row-tail
// variants and the fused vendor baselines' sources with whatever NVRTC is
// installed — no device needed (TILEFIT_NVRTC names a library, e.g.
// Debian's libnvrtc.so.11.2; skipped when none loads). ptxas must report no
// spills. TILEFIT_NVRTC_ALL=1 compiles every tile of the default sweeps, each
// also with TAIL 16 and 32 (about 15 minutes on 2 cores).
func TestFusedNVRTC(t *testing.T) {
	n, err := openNVRTC()
	if err != nil {
		t.Skipf("no NVRTC: %v", err)
	}
	arch := os.Getenv("TILEFIT_NVRTC_ARCH")
	if arch == "" {
		arch = "sm_90"
	}
	spill := regexp.MustCompile(`([1-9][0-9]*) bytes spill (stores|loads)`)
	compile := func(fam *kernel.Family, p kernel.Params, extra ...string) {
		t.Helper()
		opts := []string{"--gpu-architecture=" + arch, "-std=c++17", "--ptxas-options=-v"}
		for _, d := range append(kernel.Defines(p), extra...) {
			opts = append(opts, "-D"+d)
		}
		cubin, log, err := n.compile(fam.Source, fam.SourceFile, opts)
		name := fam.Name + " " + fam.TileName(p) + " " + strings.Join(extra, " ")
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, log)
		}
		if len(cubin) == 0 {
			t.Errorf("%s: empty CUBIN", name)
		}
		if m := spill.FindString(log); m != "" {
			t.Errorf("%s: %s\n%s", name, m, log)
		}
		if testing.Verbose() && os.Getenv("TILEFIT_NVRTC_LOG") != "" {
			t.Logf("%s:\n%s", name, log)
		}
	}
	all := os.Getenv("TILEFIT_NVRTC_ALL") == "1"
	if one := os.Getenv("TILEFIT_NVRTC_TILE"); one != "" { // family:tile[:DEFINE=V...], for debugging
		parts := strings.Split(one, ":")
		for _, fam := range []*kernel.Family{builtin.CUDAHcUpF16(), builtin.CUDASwigluF16(), builtin.CUDAGemmQ8F16(), builtin.CUDAGemmF16()} {
			if fam.Name == parts[0] {
				p, err := fam.ParseTile(parts[1])
				if err != nil {
					t.Fatal(err)
				}
				compile(fam, p, parts[2:]...)
			}
		}
		return
	}
	// gemm_f16's row tail: the reference and every tile with TAIL 16 and 32
	// where valid (TILEFIT_NVRTC_ALL) or a few.
	g := builtin.CUDAGemmF16()
	gtiles := []string{g.Reference, "64_128_4", "128_64_4", "32_128_2", "64_64_2"}
	if all {
		gtiles = g.Tiles()
	}
	for _, tl := range gtiles {
		p, err := g.ParseTile(tl)
		if err != nil {
			t.Fatal(err)
		}
		for _, tail := range []int{16, 32} {
			q := p.Clone()
			q["TAIL"] = tail
			if g.Validate(q) == nil {
				compile(g, q)
			}
		}
	}
	// The vendor baselines' elementwise sources.
	for _, bl := range builtin.FusedBaselines() {
		if bl.Backend != "cuda" {
			continue
		}
		opts := []string{"--gpu-architecture=" + arch, "-std=c++17", "--ptxas-options=-v"}
		if _, log, err := n.compile(bl.Source, bl.SourceFile, opts); err != nil {
			t.Fatalf("baseline %s %s: %v\n%s", bl.Name, bl.Operator, err, log)
		}
	}
	for _, fam := range []*kernel.Family{builtin.CUDAHcUpF16(), builtin.CUDASwigluF16(), builtin.CUDAGemmQ8F16()} {
		space := fam.Space()
		if len(space) == 0 {
			t.Fatalf("%s: empty space", fam.Name)
		}
		if !all { // an even spread of 12 tiles (every tile with TILEFIT_NVRTC_ALL=1)
			space = nil
			for _, tl := range backendtest.Subset(fam, 12) {
				p, err := fam.ParseTile(tl)
				if err != nil {
					t.Fatal(err)
				}
				space = append(space, p)
			}
		}
		for _, p := range space {
			compile(fam, p)
			if !all {
				continue
			}
			for _, tail := range []int{16, 32} {
				q := p.Clone()
				q["TAIL"] = tail
				if fam.Validate(q) == nil {
					compile(fam, q)
				}
			}
		}
		ref, err := fam.ParseTile(fam.Reference)
		if err != nil {
			t.Fatal(err)
		}
		tail := ref.Clone()
		tail["TAIL"] = 16
		compile(fam, tail)
		for _, f := range []string{"FAULT=1", "FAULT=2"} {
			compile(fam, ref, f)
		}
		if _, ok := fam.Param("DEBUG"); ok {
			dbg := ref.Clone()
			dbg["DEBUG"] = 1
			compile(fam, dbg)
		}
	}
}
