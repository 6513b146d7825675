package builtin

import (
	. "github.com/tilefit/tilefit/kernel"
	"math"
	"regexp"
	"strings"
	"testing"
)

// TestFusedWgmmaSpace: the default sweeps of hc_up_wgmma and swiglu_wgmma are
// small and valid, names round-trip, every tile fits in shared memory, and
// the restrictions refuse what the sources' static_asserts refuse.
func TestFusedWgmmaSpace(t *testing.T) {
	for _, f := range []struct {
		fam      *Family
		min, max int
		bad      []Params
	}{
		{CUDAHcUpWgmma(), 12, 40, []Params{{"BN": 48}, {"BM": 128, "BN": 256, "PINGPONG": 1}, {"BM": 256, "BN": 256}, {"BN": 128, "PINGPONG": 1, "HBUF": 2}}},
		{CUDASwigluWgmma(), 8, 48, []Params{{"BN": 40}, {"BM": 128, "BN": 160, "CONSUMERS": 1}, {"BM": 64, "CONSUMERS": 2}}},
	} {
		tiles := f.fam.Tiles()
		t.Logf("%s: %d default tiles", f.fam.Name, len(tiles))
		if len(tiles) < f.min || len(tiles) > f.max {
			t.Errorf("%s: %d default tiles, want %d..%d (the default strata sweep must stay short): %v", f.fam.Name, len(tiles), f.min, f.max, tiles)
		}
		for _, p := range f.fam.Space() {
			name := f.fam.TileName(p)
			q, err := f.fam.ParseTile(name)
			if err != nil || q.String() != p.String() {
				t.Errorf("%s %s: round trip gives %v, %v", f.fam.Name, name, q, err)
			}
		}
		ref, err := f.fam.ParseTile(f.fam.Reference)
		if err != nil {
			t.Fatalf("%s: reference: %v", f.fam.Name, err)
		}
		for _, b := range f.bad {
			p := ref.Clone()
			for k, v := range b {
				p[k] = v
			}
			if f.fam.Restrict(p) == nil {
				t.Errorf("%s: %v allowed", f.fam.Name, b)
			}
		}
	}
}

// TestFusedWgmmaClasses: hc_up_wgmma shares hc_up_f16's numerics class (the
// mma.sync family's, named after it), swiglu_wgmma the fused class of
// swiglu_f16 unless K is split (then its own, named by the chunk).
func TestFusedWgmmaClasses(t *testing.T) {
	hc, hcw := CUDAHcUpF16(), CUDAHcUpWgmma()
	for _, p := range hcw.Space() {
		if got, want := hcw.Class(p), hc.Class(Params{}); got != want {
			t.Errorf("hc_up_wgmma %s: class %q, want %q", hcw.TileName(p), got, want)
		}
	}
	sw, sww := CUDASwigluF16(), CUDASwigluWgmma()
	fused := sw.Class(Params{"CHAIN": 0})
	for _, p := range sww.Space() {
		want := fused
		if p["KSPLIT"] > 0 {
			want = "fused/splitk" + itoa(64*p["KSPLIT"])
		}
		if got := sww.Class(p); got != want {
			t.Errorf("swiglu_wgmma %s: class %q, want %q", sww.TileName(p), got, want)
		}
	}
	r := New()
	if fs := r.Of("cuda", "hc_up_f16"); len(fs) != 2 || fs[1].Name != "hc_up_wgmma" {
		t.Errorf("hc_up_f16 on cuda: families %v, want hc_up_f16 and hc_up_wgmma", fs)
	}
	if fs := r.Of("cuda", "swiglu_f16"); len(fs) != 2 || fs[1].Name != "swiglu_wgmma" {
		t.Errorf("swiglu_f16 on cuda: families %v, want swiglu_f16 and swiglu_wgmma", fs)
	}
}

// TestHcUpWgmmaPlan: the launch of hc_up_wgmma at the strata shape: a
// persistent grid of 132 CTAs over 16×40 tiles, three warpgroups, three
// stages beside the H buffer, the tensor maps of X, W (four-stream rows) and
// H (one stream's BM rows × BN/4 per box, 128-byte swizzle), then mixh (and
// mixed with BOUND=1) and M, S, K; shapes TMA cannot take are refused.
func TestHcUpWgmmaPlan(t *testing.T) {
	fam := CUDAHcUpWgmma()
	p, err := fam.ParseTile("128_256_2")
	if err != nil {
		t.Fatal(err)
	}
	pl, err := fam.Plan(p, Dims{"M": 1983, "S": 2560, "K": 320})
	if err != nil {
		t.Fatal(err)
	}
	l := pl.Launches[0]
	if l.Entry != HcUpWgmmaEntry || l.Grid[0] != 132 || l.Block[0] != 384 {
		t.Errorf("launch %s grid %v block %v", l.Entry, l.Grid, l.Block)
	}
	if want := 3*(128+256)*128 + 128*256*2 + 256 + 1024; l.Shared != want {
		t.Errorf("shared %d, want %d (3 stages + one H buffer)", l.Shared, want)
	}
	if len(l.Args) != 7 {
		t.Fatalf("%d args: %+v", len(l.Args), l.Args)
	}
	x, w, h := l.Args[0].Map, l.Args[1].Map, l.Args[2].Map
	if x == nil || w == nil || h == nil {
		t.Fatalf("args 0..2 are not tensor maps: %+v", l.Args[:3])
	}
	if x.Buffer != "X" || x.Dims[1] != 1983 || x.Box[1] != 128 {
		t.Errorf("X map %+v", x)
	}
	if w.Buffer != "W" || w.Dims[0] != 320 || w.Dims[1] != 4*2560 || w.Box[0] != 64 || w.Box[1] != 64 || w.Swizzle != 3 {
		t.Errorf("W map %+v (want rows 4S, box {64, BN/4})", w)
	}
	if h.Buffer != "H" || len(h.Dims) != 3 || h.Dims[0] != 2560 || h.Dims[1] != 4 || h.Dims[2] != 1983 ||
		h.Strides[0] != 2560*2 || h.Strides[1] != 2560*8 || h.Box[0] != 64 || h.Box[1] != 1 || h.Box[2] != 128 || h.Swizzle != 3 {
		t.Errorf("H map %+v", h)
	}
	if l.Args[3].Name != "mixh" || l.Args[4].Name != "M" || l.Args[5].Name != "S" || l.Args[6].Name != "K" {
		t.Errorf("args 3..6 %+v", l.Args[3:])
	}
	p["BOUND"] = 1
	pl, _ = fam.Plan(p, Dims{"M": 1983, "S": 2560, "K": 320})
	if a := pl.Launches[0].Args; len(a) != 8 || a[4].Name != "mixed" {
		t.Errorf("BOUND=1 args %+v", a)
	}
	for _, c := range []struct {
		bn, hsw, code int
	}{{256, 1, 3}, {128, 1, 2}, {64, 1, 1}, {256, 0, 0}, {96, 0, 0}} {
		if got := HcUpWgmmaHSwizzle(Params{"BN": c.bn, "HSW": c.hsw}); got != c.code {
			t.Errorf("BN %d HSW %d: swizzle %d, want %d", c.bn, c.hsw, got, c.code)
		}
	}
	for _, d := range []Dims{{"M": 8, "S": 40, "K": 72 + 1}, {"M": 8, "S": 17, "K": 64}, {"M": 0, "S": 64, "K": 64}} {
		if _, err := fam.Plan(p, d); err == nil {
			t.Errorf("%v: no error", d)
		}
	}
}

// TestSwigluWgmmaPlan: the fused launch (one kernel, h its output) and the
// split-K chain (partials into P, then the reduce-and-act kernel).
func TestSwigluWgmmaPlan(t *testing.T) {
	fam := CUDASwigluWgmma()
	p, _ := fam.ParseTile("128_160_2")
	pl, err := fam.Plan(p, Dims{"M": 1983, "N": 640, "K": 2560})
	if err != nil {
		t.Fatal(err)
	}
	l := pl.Launches[0]
	if len(pl.Launches) != 1 || l.Grid[0] != 128 || l.Block[0] != 384 {
		t.Errorf("launches %d, grid %v, block %v (want one launch on 16×8 tiles)", len(pl.Launches), l.Grid, l.Block)
	}
	if want := 6*(128+160)*128 + 256 + 1024; l.Shared != want {
		t.Errorf("shared %d, want %d", l.Shared, want)
	}
	if l.Args[1].Map.Buffer != "Wg" || l.Args[2].Map.Buffer != "Wu" || l.Args[1].Map.Box[1] != 80 || l.Args[3].Name != "h" {
		t.Errorf("args %+v", l.Args)
	}
	q, err := fam.ParseTile("64_128_1.ksplit10")
	if err != nil {
		t.Fatal(err)
	}
	pl, err = fam.Plan(q, Dims{"M": 256, "N": 640, "K": 2560})
	if err != nil {
		t.Fatal(err)
	}
	if len(pl.Launches) != 2 || pl.Launches[1].Entry != SwigluWgmmaActEntry {
		t.Fatalf("split plan %+v", pl.Launches)
	}
	if u := pl.Launches[0].Grid[0]; u != 132 {
		t.Errorf("grid %d, want 132 (4·10 tiles × 4 chunks)", u)
	}
	if pl.Scratch[0].Elems != 4*256*2*640 || pl.Launches[0].Args[3].Kind != ArgScratch {
		t.Errorf("scratch %+v", pl.Scratch)
	}
	if a := pl.Launches[1].Args; a[4].Value != 4 || pl.Launches[1].Grid[0] != ElementwiseGrid(256*640/4) {
		t.Errorf("act launch %+v", pl.Launches[1])
	}
	if c := fam.Class(q); c != "fused/splitk640" {
		t.Errorf("class %q", c)
	}
}

// TestWgmmaCoreGeometry: gemm_wgmma's stages and shared memory are what they
// were before the mainloop was shared (min(15, (227 KiB − 1280)/stage)),
// and the fused families' own bytes and barriers only take stages away.
func TestWgmmaCoreGeometry(t *testing.T) {
	fam := CUDAGemmWgmma()
	for _, p := range fam.Space() {
		sb := (p["BM"] + p["BN"]) * 128
		// EPI 1: the staging tiles (a consumer's rows × BN fp16) come out
		// of the ring; an fp32 program (no staging) keeps EPI 0's stages,
		// and the block has room for the larger layout.
		epi := 0
		if p["EPI"] == 1 {
			epi = wgmmaEpiBytes(p, p["BN"])
		}
		want := min(15, (CUDAMaxSharedBytes-1280-epi)/sb)
		plain := min(15, (CUDAMaxSharedBytes-1280)/sb)
		if p["STAGES"] > 0 {
			want, plain = p["STAGES"], p["STAGES"]
		}
		if got := WgmmaStages(p); got != want {
			t.Errorf("%s: %d stages, want %d", fam.TileName(p), got, want)
		}
		if got := WgmmaSharedBytes(p); got != max(want*sb+epi, plain*sb)+1280 {
			t.Errorf("%s: %d bytes", fam.TileName(p), got)
		}
	}
	g := hcWgmmaGeo(Params{"BM": 128, "BN": 128, "PINGPONG": 0, "HBUF": 1, "STAGES": 0})
	if g.maxStages() != 13 || g.stages(Params{"STAGES": 0}) != 6 {
		t.Errorf("hc_up 128×128: max %d, stages %d (want 13, 6)", g.maxStages(), g.stages(Params{"STAGES": 0}))
	}
	if g2 := hcWgmmaGeo(Params{"BM": 128, "BN": 128, "HBUF": 2}); g2.extra != 2*g.extra {
		t.Errorf("HBUF=2: %d bytes of H buffers, want %d", g2.extra, 2*g.extra)
	}
}

// tmaSwizzle is where TMA puts byte o of a box written with swizzle code sw
// (1: 32 B, 2: 64 B, 3: 128 B; CUDA's CU_TENSOR_MAP_SWIZZLE_*: the 16-byte
// chunk bits 4.. XOR the row bits 7.., as many bits as the span has chunks).
func tmaSwizzle(o, sw int) int {
	if sw == 0 {
		return o
	}
	mask := (1 << sw) - 1
	return o ^ (((o >> 7) & mask) << 4)
}

// TestHcUpWgmmaEpilogueLayout mirrors the epilogue's index arithmetic
// (hc_up_wgmma.cu) for every BN of the default sweep: the four accumulators
// mixed for (q, x) are the same mix column of streams 0..3 (wgmma's
// m64nNk16 layout: register 4j+e holds column 8j + 2·(lane%4) + (e&1)), every
// mix column of the tile is mixed exactly once per row, and the H reads of a
// warp (32-bit, one stream at a time) hit 32 distinct banks with HSW=1
// (swizzled rows of 32, 64, 128 bytes; unswizzled rows of 48, 80, 112).
func TestHcUpWgmmaEpilogueLayout(t *testing.T) {
	for _, bn := range []int{64, 128, 256, 96, 160, 224} {
		td, qf := bn/4, bn/32
		hrow := td * 2
		sw := HcUpWgmmaHSwizzle(Params{"BN": bn, "HSW": 1})
		col := func(reg, lane int) int { j, e := reg/4, reg%4; return 8*j + 2*(lane&3) + (e & 1) }
		for half := 0; half < 2; half++ {
			seen := map[int]int{}
			for lane := 0; lane < 32; lane++ {
				for q := 0; q < qf; q++ {
					for ee := 0; ee < 2; ee++ {
						x := 2*half + ee
						d := -1
						for c := 0; c < 4; c++ {
							n := col(4*(c*qf+q)+x, lane)
							if n/td != c {
								t.Fatalf("BN %d: stream %d's accumulator is column %d (stream %d)", bn, c, n, n/td)
							}
							if d >= 0 && n%td != d {
								t.Fatalf("BN %d: streams mix columns %d and %d", bn, d, n%td)
							}
							d = n % td
						}
						if want := 8*q + 2*(lane&3) + ee; d != want {
							t.Fatalf("BN %d lane %d q %d: mix column %d, the epilogue stores %d", bn, lane, q, d, want)
						}
						seen[(lane>>2)*1000+d]++
					}
				}
			}
			if len(seen) != 8*td {
				t.Errorf("BN %d: %d (row, column) pairs mixed, want %d", bn, len(seen), 8*td)
			}
		}
		// Bank conflicts of one warp's H read (rows rl = lane/4 + 8·half, same q).
		for q := 0; q < qf; q++ {
			banks := map[int]bool{}
			for lane := 0; lane < 32; lane++ {
				rl, dl := lane>>2, 8*q+2*(lane&3)
				banks[(tmaSwizzle(rl*hrow+dl*2, sw)/4)%32] = true
			}
			if len(banks) != 32 {
				t.Errorf("BN %d q %d: the warp's H words fall in %d banks, want 32", bn, q, len(banks))
			}
		}
	}
	// The source's hswz is this swizzle: o ^ (((o >> 7) & (HROW/16 - 1)) << 4).
	if !strings.Contains(cudaHcUpWgmmaSource, "return o ^ (((o >> 7) & (u32)(HROW / 16 - 1)) << 4);") {
		t.Error("hc_up_wgmma.cu: hswz is not the swizzle this test mirrors")
	}
}

// TestFusedWgmmaEpilogueArithmetic: the wgmma epilogues call the shared
// mix4 and act with the accumulators in the operators' order (streams 0..3,
// H words 0..3; g with its u), and those functions are the fixed sequences
// builtin/hcup.go and builtin/swiglu.go document.
func TestFusedWgmmaEpilogueArithmetic(t *testing.T) {
	ws := regexp.MustCompile(`\s+`)
	norm := func(s string) string { return ws.ReplaceAllString(s, " ") }
	hc := norm(cudaHcUpWgmmaSource)
	want := "mix4(acc[i][4 * (0 * QF + q) + x], acc[i][4 * (1 * QF + q) + x], acc[i][4 * (2 * QF + q) + x], acc[i][4 * (3 * QF + q) + x], " +
		"h2f(half16(h[0], ee)), h2f(half16(h[1], ee)), h2f(half16(h[2], ee)), h2f(half16(h[3], ee)))"
	if !strings.Contains(hc, want) {
		t.Errorf("hc_up_wgmma.cu does not mix streams 0..3 in order:\nwant %s", want)
	}
	if !strings.Contains(hc, "h[c] = lds32(hb + (u32)(c * HBOX) + o);") {
		t.Error("hc_up_wgmma.cu: H word c is not stream c's box")
	}
	sw := norm(cudaSwigluWgmmaSource)
	for _, w := range []string{"const float u0 = acc[i][4 * (q + QN) + x], u1 = acc[i][4 * (q + QN) + x + 1];", "f2h(act(g0, u0))", "f2h(act(g1, u1))"} {
		if !strings.Contains(sw, w) {
			t.Errorf("swiglu_wgmma.cu lacks %q", w)
		}
	}
	ep := norm(cudaEpilogueCommon)
	for _, w := range []string{
		"float s = mul_rn(y0, h0); s = fma_rn(y1, h1, s); s = fma_rn(y2, h2, s); #if FAULT != 1 s = fma_rn(y3, h3, s); #endif return mul_rn(s, 0.25f);",
		"const float e = ex2_approx(mul_rn(g, -1.4426950408889634f)); const float s = div_rn(g, add_rn(1.0f, e)); return mul_rn(s, u);",
	} {
		if !strings.Contains(ep, w) {
			t.Errorf("epilogue_common.cuh lacks the documented sequence %q", w)
		}
	}
	for _, src := range []string{CUDAHcUpF16().Source, CUDAHcUpWgmma().Source, CUDASwigluF16().Source, CUDASwigluWgmma().Source, CUDAFusedVendorSource()} {
		if strings.Count(src, "__device__ __forceinline__ float mix4(") != 1 || strings.Count(src, "__device__ __forceinline__ float act(") != 1 {
			t.Error("a fused CUDA source defines mix4 or act other than once (in epilogue_common.cuh)")
		}
	}
}

// f16Round is v rounded to fp16 (ties to even, subnormals kept).
func f16Round(v float64) float64 { return F16.Round(v) }

// TestUnfusedBound: the unfused reference (the vendor baselines', GEMM
// results in fp16) has the fused reference's value and a bound wider on
// every element; the composition it describes — each GEMM result rounded
// to fp16, then the epilogue in fp32 in the documented order (emulated here
// in float32) — lies within it on every element, and at these short K
// (where the accumulation bound is small beside an fp16 rounding) some
// elements lie outside the fused bound: the baselines need the wider bound
// (on the H200 cuBLAS + the vectorised pass reached 5.1× the fused bound at
// hc_up 37×40×72, 0.71× the unfused one), and the fused candidates, held to
// the narrower, could not hide an fp16 round trip.
func TestUnfusedBound(t *testing.T) {
	f32 := func(v float64) float64 { return float64(float32(v)) }
	fma32 := func(a, b, c float64) float64 { return f32(math.FMA(a, b, c)) }
	// Each case's compose is the fp16 composition of element i: the GEMM
	// outputs rounded to fp16 as an unfused chain stores them, then the
	// operator's epilogue in fp32.
	cases := []struct {
		name    string
		op      *Operator
		d       Dims
		seed    uint64
		elems   int // of output 3
		compose func(in [][]byte, d Dims, i int) float64
	}{
		{"hc_up", HcUpF16(), Dims{"M": 6, "S": 64, "K": 72}, 3, 6 * 64, func(in [][]byte, d Dims, i int) float64 {
			s, k := d["S"], d["K"]
			tt, dd := i/s, i%s
			var y, h [4]float64
			for c := 0; c < 4; c++ {
				v, _ := DotF16(in[0], in[1], tt*k, (c*s+dd)*k, k)
				y[c] = f16Round(f32(v))
				h[c] = f16At(in[2], (tt*4+c)*s+dd)
			}
			acc := f32(y[0] * h[0])
			acc = fma32(y[1], h[1], acc)
			acc = fma32(y[2], h[2], acc)
			acc = fma32(y[3], h[3], acc)
			return f16Round(f32(acc * 0.25))
		}},
		{"swiglu", SwigluF16(), Dims{"M": 4, "N": 64, "K": 88}, 5, 4 * 64, func(in [][]byte, d Dims, i int) float64 {
			n, k := d["N"], d["K"]
			m, c := i/n, i%n
			g, _ := DotF16(in[0], in[1], m*k, c*k, k)
			u, _ := DotF16(in[0], in[2], m*k, c*k, k)
			g, u = f16Round(f32(g)), f16Round(f32(u))
			e := f32(math.Exp2(f32(g * -1.4426950408889634)))
			sl := f32(g / f32(1+e))
			return f16Round(f32(sl * u))
		}},
	}
	for _, tc := range cases {
		in := tc.op.GenInputs(tc.seed, tc.d)
		n := tc.elems
		outside := 0
		for i := 0; i < n; i++ {
			want, b := tc.op.Ref(tc.d, in, 3, i)
			uw, ub := tc.op.WithUnfusedBound().Ref(tc.d, in, 3, i)
			if uw != want || ub <= b {
				t.Fatalf("%s element %d: unfused %g ± %g, fused %g ± %g (want the same value, a wider bound)", tc.name, i, uw, ub, want, b)
			}
			got := tc.compose(in, tc.d, i)
			if math.Abs(got-uw) > ub {
				t.Errorf("%s element %d: the fp16 composition %g is outside the unfused bound %g ± %g", tc.name, i, got, uw, ub)
			}
			if math.Abs(got-want) > b {
				outside++
			}
		}
		t.Logf("%s: %d of %d elements of the fp16 composition lie outside the fused bound", tc.name, outside, n)
		if outside == 0 {
			t.Errorf("%s: the fp16 composition stayed within the fused bound everywhere (then the wider bound shows nothing)", tc.name)
		}
	}
}

// TestFusedVendorPlans: the CUDA baselines of hc_up_f16 and swiglu_f16 keep
// the cuBLAS output in fp16 scratch, then run one vectorised pass writing
// only what the candidates write (hc_up: mixh), and say so
// (F16Intermediate, Params).
func TestFusedVendorPlans(t *testing.T) {
	r := New()
	hc := r.Baselines("cuda", "hc_up_f16")
	if len(hc) != 2 || hc[0].Name != VendorCuBLAS || hc[1].Name != VendorCuBLASLt {
		t.Fatalf("hc_up cuda baselines %+v", hc)
	}
	for _, bl := range hc {
		if !bl.F16Intermediate || bl.Params == nil {
			t.Errorf("hc_up baseline %s: F16Intermediate %v, Params %v", bl.Name, bl.F16Intermediate, bl.Params)
		}
	}
	if pl, _ := hc[1].Plan(HcUpF16(), Dims{"M": 8, "S": 64, "K": 64}); pl.Launches[0].Vendor != VendorGemmLt {
		t.Errorf("the cublaslt baseline's GEMM is %q", pl.Launches[0].Vendor)
	}
	op := HcUpF16()
	if _, i, _ := op.Operand("mixed"); op.Operands[i].Present(hc[0].Params) {
		t.Error("the hc_up baseline writes mixed")
	}
	pl, err := hc[0].Plan(op, Dims{"M": 1983, "S": 2560, "K": 320})
	if err != nil {
		t.Fatal(err)
	}
	if len(pl.Launches) != 2 || pl.Launches[0].Vendor != VendorGemm || pl.Scratch[0].DType != F16 || pl.Scratch[0].Elems != 1983*4*2560 {
		t.Fatalf("plan %+v", pl)
	}
	if l := pl.Launches[1]; l.Entry != "tilefit_hc_up_mix16" || l.Grid[0] != ElementwiseGrid(1983*2560/8) || len(l.Args) != 5 || l.Args[2].Name != "mixh" {
		t.Errorf("mix launch %+v", l)
	}
	sw := r.Baselines("cuda", "swiglu_f16")
	if len(sw) != 2 || !sw[0].F16Intermediate || !sw[1].F16Intermediate {
		t.Fatalf("swiglu cuda baselines %+v", sw)
	}
	pl, err = sw[0].Plan(SwigluF16(), Dims{"M": 256, "N": 640, "K": 2560})
	if err != nil {
		t.Fatal(err)
	}
	if len(pl.Launches) != 3 || pl.Scratch[0].DType != F16 || pl.Scratch[1].DType != F16 || pl.Launches[2].Args[3].Value != 256*640 {
		t.Errorf("plan %+v", pl)
	}
	if !strings.Contains(CUDAFusedVendorSource(), "ld.global.nc.v4.u32") || !strings.Contains(CUDAFusedVendorSource(), "st.global.v4.u32") {
		t.Error("the vendor elementwise kernels do not use 16-byte loads and stores")
	}
}
