package builtin

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	. "github.com/tilefit/tilefit/kernel"
)

// TestDecodeSpace: the default sweep is valid and round-trips its names,
// every tile fits the shared-memory budget, and the restrictions refuse
// what the source's static_asserts refuse.
func TestDecodeSpace(t *testing.T) {
	fam := CUDAGemmDecode()
	if _, err := fam.ParseTile(fam.Reference); err != nil {
		t.Fatalf("reference %s: %v", fam.Reference, err)
	}
	tiles := fam.Tiles()
	if len(tiles) == 0 || len(tiles) > 6 {
		t.Fatalf("%d default tiles: %v", len(tiles), tiles)
	}
	for _, p := range fam.Space() {
		name := fam.TileName(p)
		q, err := fam.ParseTile(name)
		if err != nil || q.String() != p.String() {
			t.Errorf("tile %s: round trip gives %v, %v", name, q, err)
		}
		if b := DecodeSharedBytes(p); b > CUDAMaxSharedBytes {
			t.Errorf("tile %s: %d bytes of shared memory", name, b)
		}
	}
	for tile, why := range map[string]string{
		"16_4":              "multiple of 8·WARPS",
		"24_2":              "multiple of 8·WARPS",
		"64_1":              "more than 6",
		"128_4.tk512":       "shared memory",
		"32_4.tk256.stages": "",
	} {
		if why == "" {
			continue
		}
		_, err := fam.ParseTile(tile)
		if err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("tile %s: error %v, want one mentioning %q", tile, err, why)
		}
	}
	for _, ok := range []string{"8_1", "16_2", "32_4", "32_1", "64_4", "128_4.tk128", "64_8", "32_4.tk64.stages16", "16_2.tk512.stages6", "32_4.pdl1", "32_4.pdl2", "64_4.tk128.stages8"} {
		if _, err := fam.ParseTile(ok); err != nil {
			t.Errorf("tile %s: %v", ok, err)
		}
	}
	p, _ := fam.ParseTile("32_4.stages6")
	if got, want := DecodeSharedBytes(p), 1280+6*4*(32+16)*128; got != want {
		t.Errorf("shared bytes %d, want %d", got, want)
	}
	p, _ = fam.ParseTile("16_2.stages16.tk64")
	if got, want := DecodeSharedBytes(p), 1280+16*(16+16)*128; got != want {
		t.Errorf("shared bytes %d, want %d", got, want)
	}
	// Every box of a stage starts 1024-byte aligned (the 128-byte swizzle's
	// period): W boxes are BN·128 bytes, X boxes 16·128.
	for _, p := range fam.Space() {
		if p["BN"]*128%1024 != 0 || DecodeStageBytes(p)%1024 != 0 {
			t.Errorf("tile %s: boxes not 1024-byte aligned", fam.TileName(p))
		}
	}
}

// TestDecodePlan: the grid covers every output with blocks of BN weight
// rows × 16 tokens, the block is the consumer warps plus one producer warp,
// PDL 1 and 2 reach the launch, and K not a multiple of 8 or an M beyond
// grid.y are refused, not launched.
func TestDecodePlan(t *testing.T) {
	fam := CUDAGemmDecode()
	for _, c := range []struct {
		tile    string
		m, n, k int
		grid    [3]int
	}{
		{"32_4", 1, 4096, 4096, [3]int{128, 1, 1}},
		{"16_2", 7, 2560, 6144, [3]int{160, 1, 1}},
		{"64_4", 16, 8192, 8192, [3]int{128, 1, 1}},
		{"32_4", 17, 4096, 4096, [3]int{128, 2, 1}},
		{"8_1", 1983, 2560, 6144, [3]int{320, 124, 1}},
		{"32_2", 1, 1, 520, [3]int{1, 1, 1}},
	} {
		p, l := oneLaunch(t, fam, c.tile, c.m, c.n, c.k)
		if l.Entry != DecodeEntry || l.Grid != c.grid || l.Block != [3]int{32 * (p["WARPS"] + 1), 1, 1} || l.Shared != DecodeSharedBytes(p) || l.PDL {
			t.Errorf("%s M %d N %d: launch %+v, want grid %v", c.tile, c.m, c.n, l, c.grid)
		}
		tilesTightly(t, c.tile, l.Grid, p["BN"], DecodeRows, c.m, c.n)
		names := argNames(l.Args)
		if strings.Join(names, ",") != "X,W,Y,M,N,K" || l.Args[0].Kind != ArgTensorMap || l.Args[1].Kind != ArgTensorMap || l.Args[2].Kind != ArgOperand || l.Args[3].Kind != ArgDim {
			t.Errorf("%s: args %+v", c.tile, l.Args)
		}
		// X: dims {K, M}, box {64, 16}; W: dims {K, N}, box {64, BN}; rows
		// 2K bytes apart, 128-byte swizzle.
		x, w := l.Args[0].Map, l.Args[1].Map
		if x == nil || w == nil || x.Buffer != "X" || w.Buffer != "W" ||
			fmt.Sprint(x.Dims, x.Strides, x.Box, x.Swizzle) != fmt.Sprint([]int64{int64(c.k), int64(c.m)}, []int64{2 * int64(c.k)}, []int{64, 16}, 3) ||
			fmt.Sprint(w.Dims, w.Strides, w.Box, w.Swizzle) != fmt.Sprint([]int64{int64(c.k), int64(c.n)}, []int64{2 * int64(c.k)}, []int{64, p["BN"]}, 3) {
			t.Errorf("%s: maps %+v %+v", c.tile, x, w)
		}
	}
	for _, tile := range []string{"32_4.pdl1", "32_4.pdl2"} {
		p, _ := fam.ParseTile(tile)
		pl, err := fam.Plan(p, Dims{"M": 1, "N": 64, "K": 64})
		if err != nil || !pl.Launches[0].PDL {
			t.Errorf("%s: %+v, %v", tile, pl, err)
		}
	}
	p, _ := fam.ParseTile("32_4")
	if _, err := fam.Plan(p, Dims{"M": 1, "N": 64, "K": 100}); err == nil || !strings.Contains(err.Error(), "multiple of 8") {
		t.Errorf("K 100: %v", err)
	}
	if _, err := fam.Plan(p, Dims{"M": 16*65535 + 1, "N": 64, "K": 64}); err == nil || !strings.Contains(err.Error(), "65535") {
		t.Errorf("huge M: %v", err)
	}
}

// TestDecodeClassAndFits: every tile without KSPLIT is in gemm_f16's class
// (so the sweep requires it bitwise equal to gemm_f16's reference), every
// split tile in gemm_f16/splitkC; the registry holds the family for
// operator gemm_f16; Fits keeps the default tiles on the large weight
// matrices only — the same answer at every M — and each default split tile
// on the shapes whose K its chunks tile.
func TestDecodeClassAndFits(t *testing.T) {
	fam := CUDAGemmDecode()
	for _, tile := range append(fam.Tiles(), "32_4.pdl1", "32_4.pdl2", "8_1.tk64") {
		p, err := fam.ParseTile(tile)
		if err != nil {
			t.Fatal(err)
		}
		want := "gemm_f16"
		if ks := p["KSPLIT"]; ks > 0 {
			want = fmt.Sprintf("gemm_f16/splitk%d", 64*ks)
		} else if CUDAGemmStream().Class(p) != want {
			t.Errorf("gemm_stream's class is %q", CUDAGemmStream().Class(p))
		}
		if c := fam.Class(p); c != want {
			t.Errorf("tile %s: class %q, want %q", tile, c, want)
		}
	}
	f, err := New().Lookup("cuda", "gemm_decode")
	if err != nil || f.Operator.Name != "gemm_f16" {
		t.Fatalf("registry: %v, %v", f, err)
	}
	fits := map[string][]string{} // shape → default tiles that fit
	for _, sh := range [][2]int{{4096, 4096}, {2560, 6144}, {8192, 8192}, {10240, 2560}, {12288, 2560}, {2560, 2560}, {324, 10240}} {
		key := fmt.Sprintf("%dx%d", sh[0], sh[1])
		for _, p := range fam.Space() {
			if fam.FitsShape(p, Dims{"M": 1, "N": sh[0], "K": sh[1]}) {
				fits[key] = append(fits[key], fam.TileName(p))
			}
		}
	}
	for key, want := range map[string]string{
		"4096x4096":  "64_4 64_4.tk128.stages8.pdl1.lp2 32_8.tk128.stages16.pdl1.ksplit16.kw4.lp2",
		"2560x6144":  "64_4 64_4.tk128.stages8.pdl1.lp2 40_10.tk128.stages8.pdl1.ksplit24.kw2.kc2.lp2",
		"8192x8192":  "64_4 64_4.tk128.stages8.pdl1.lp2 32_8.tk128.stages16.pdl1.ksplit16.kw4.lp2",
		"10240x2560": "",
		"12288x2560": "",
		"2560x2560":  "",
		"324x10240":  "",
	} {
		if got := strings.Join(fits[key], " "); got != want {
			t.Errorf("default tiles on %s: %q, want %q", key, got, want)
		}
	}
	p, _ := fam.ParseTile(fam.Reference)
	for _, c := range []struct {
		n, k int
		fits bool
	}{
		{4096, 4096, true}, {2560, 6144, true}, {8192, 8192, true}, {4096, 6144, true}, {16384, 4096, true},
		{10240, 2560, false}, {6144, 2560, false}, {2560, 2560, false}, {324, 10240, false}, {512, 2560, false}, {1, 2560, false}, {4096, 4104, true}, {4096, 4100, false},
	} {
		for _, m := range []int{1, 7, 16, 256, 1983} {
			if got := fam.FitsShape(p, Dims{"M": m, "N": c.n, "K": c.k}); got != c.fits {
				t.Errorf("N %d K %d M %d: fits %v, want %v", c.n, c.k, m, got, c.fits)
			}
		}
	}
	// A cluster tile whose partials at M 16 fit K 4096 but not K 8192
	// (rank 0 holds every chunk's): kept off K 8192 at every M, so that
	// no M of the shape fails to plan.
	cl, err := fam.ParseTile("64_8.tk128.stages10.pdl2.ksplit16.kw2.kc2.lp2.xa1.er1")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		k    int
		fits bool
	}{{4096, true}, {8192, false}} {
		for _, m := range []int{1, 16} {
			d := Dims{"M": m, "N": 8192, "K": c.k}
			if got := fam.FitsShape(cl, d); got != c.fits {
				t.Errorf("cluster tile on K %d M %d: fits %v, want %v", c.k, m, got, c.fits)
			}
			if _, err := fam.Plan(cl, Dims{"M": 16, "N": 8192, "K": c.k}); (err == nil) != c.fits {
				t.Errorf("cluster tile on K %d: plan at M 16 %v, fits %v", c.k, err, c.fits)
			}
		}
	}
}

// TestDecodeSourceOrder: the source's documented reduction — acc from zero,
// one mma per k16 step in ascending k (only steps that hold part of K or
// of the chunk), X as the A operand and W as B; with KSPLIT each chunk from
// zero at k = chunk·64·KSPLIT and the partials added in chunk order (tot =
// P0, tot = tot + Pj: gemm_wgmma's reduce) — is what its loops do (the GPU
// test checks the bits).
func TestDecodeSourceOrder(t *testing.T) {
	src := cudaGemmDecodeSource
	for _, re := range []string{
		`acc\[j\]\[e\] = 0\.0f;`,
		`const int k0 = kbase \+ u \* TF \+ kk \* 16;`,
		`if \(k0 < kend\) \{`,
		`c\.kbase = ch \* CH;`,
		`acc\[j\]\[e\] = P\[\(\(size_t\)rg \* 32 \+ lane\) \* \(4 \* NB\) \+ j \* 4 \+ e\];`,
		`for \(int ch = 1; ch < sq\.S; ch\+\+\)`,
		`acc\[j\]\[e\] = acc\[j\]\[e\] \+ pc\[j \* 4 \+ e\];`,
		`dec_mma\(acc\[j\], f\.a\[kk\], f\.b\[j\]\[kk\]\[0\], f\.b\[j\]\[kk\]\[1\]\);`,
		`c\.aRow = \(u32\)\(\(lane & 15\) \* 128\);`,
		`const u32 xb = xslot\(q\) \+ \(u32\)\(i \* XBOX\) \+ aRow`,
		`for \(int u = 0; u < U; u \+= 2\)`,
	} {
		if !regexp.MustCompile(re).MatchString(src) {
			t.Errorf("decode.cu lacks %s", re)
		}
	}
	if strings.Count(src, "dec_mma(acc") != 1 {
		t.Errorf("decode.cu has %d mma calls, want the one of compute", strings.Count(src, "dec_mma(acc"))
	}
}

// TestDecodeSplit: KSPLIT tiles are gemm_wgmma's split class of the same
// chunk (the class string is the same), KW streams chunks side by side, the
// Plan refuses K that the chunks do not tile (and Fits leaves those shapes
// out, at every M), and the partials' shared memory is counted.
func TestDecodeSplit(t *testing.T) {
	fam, wg := CUDAGemmDecode(), CUDAGemmWgmma()
	for _, c := range []struct{ tile, wtile string }{
		{"32_4.ksplit16.kw4.stages8", "64_8_1.swap1.ksplit16"},
		{"16_4.ksplit24.kw2", "64_8_1.swap1.ksplit24"},
		{"32_8.ksplit16.kw4.stages8", "128_64_2.ksplit16.kfold1"},
	} {
		p, err := fam.ParseTile(c.tile)
		if err != nil {
			t.Fatalf("%s: %v", c.tile, err)
		}
		q, err := wg.ParseTile(c.wtile)
		if err != nil {
			t.Fatalf("%s: %v", c.wtile, err)
		}
		if fam.Class(p) != wg.Class(q) || fam.Class(p) != fmt.Sprintf("gemm_f16/splitk%d", 64*p["KSPLIT"]) {
			t.Errorf("%s: class %q, gemm_wgmma %s: %q", c.tile, fam.Class(p), c.wtile, wg.Class(q))
		}
	}
	for tile, why := range map[string]string{
		"32_4.kw2":                  "needs KSPLIT",
		"32_4.ksplit4.tk512":        "does not divide the chunk",
		"32_4.ksplit16.kw4.stages4": "not a multiple of KW",
		"32_4.ksplit16.kw4.stages6": "not a multiple of KW",
		"32_4.ksplit16.kw2.stages3": "not a multiple of KW",
		"32_4.ksplit16.kw3":         "not allowed",
		"64_4.ksplit16.kw4":         "more than 6",
	} {
		if _, err := fam.ParseTile(tile); err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("tile %s: error %v, want one mentioning %q", tile, err, why)
		}
	}
	p, _ := fam.ParseTile("32_4.ksplit16.kw4.stages8")
	for _, c := range []struct {
		k  int
		ok bool
	}{{4096, true}, {8192, true}, {6144, false}, {2048, false}, {1024, false}, {10240, false}, {12288, true}} {
		pl, err := fam.Plan(p, Dims{"M": 1, "N": 4096, "K": c.k})
		if (err == nil) != c.ok {
			t.Errorf("K %d: plan error %v, want ok %v", c.k, err, c.ok)
		}
		for _, m := range []int{1, 16, 1983} {
			if fits := fam.FitsShape(p, Dims{"M": m, "N": 4096, "K": c.k}); fits != c.ok {
				t.Errorf("K %d M %d: fits %v", c.k, m, fits)
			}
		}
		if err == nil {
			if got, want := pl.Launches[0].Shared, DecodeSharedBytes(p)+c.k/1024*16*32*4; got != want || DecodePartialBytes(p, 1, c.k) != want-DecodeSharedBytes(p) {
				t.Errorf("K %d: shared %d, want %d", c.k, got, want)
			}
			if pl.Launches[0].Block != [3]int{5 * 32, 1, 1} {
				t.Errorf("K %d: block %v", c.k, pl.Launches[0].Block)
			}
		}
	}
	if q, _ := fam.ParseTile("32_4"); DecodePartialBytes(q, 1, 4096) != 0 || DecodeChunks(q, 4096) != 1 {
		t.Error("a plain tile has partials")
	}
}

// TestDecodeCluster: KC > 1 spreads a row block's chunks over a cluster of
// KC CTAs along x — grid x is ceil(N/BN)·KC, the cluster (KC, 1, 1), rank
// 0's shared memory holds every chunk's partial for the token rows that
// exist (min(M, 16)) — in the class of the same chunk; the chunks must be
// a multiple of KC·KW (Plan and Fits, at every M), and KC needs KSPLIT.
func TestDecodeCluster(t *testing.T) {
	fam, wg := CUDAGemmDecode(), CUDAGemmWgmma()
	for _, c := range []struct {
		tile    string
		m, n, k int
		grid    [3]int
		chunks  int
	}{
		{"40_2.ksplit8.kw2.kc2.tk128.stages4", 1, 2560, 6144, [3]int{128, 1, 1}, 12},
		{"40_2.ksplit8.kw2.kc2.tk128.stages4", 16, 2560, 6144, [3]int{128, 1, 1}, 12},
		{"40_2.ksplit24.kw2.kc2.tk128.stages4.pdl2", 7, 2560, 6144, [3]int{128, 1, 1}, 4},
		{"64_8.ksplit8.kw4.kc3.tk64.stages8", 37, 2560, 6144, [3]int{120, 3, 1}, 12},
		{"32_2.ksplit8.kc4.tk128.stages4", 3, 100, 4096, [3]int{16, 1, 1}, 8},
	} {
		p, err := fam.ParseTile(c.tile)
		if err != nil {
			t.Fatalf("%s: %v", c.tile, err)
		}
		q, _ := wg.ParseTile(fmt.Sprintf("128_64_2.ksplit%d", p["KSPLIT"]))
		if fam.Class(p) != wg.Class(q) {
			t.Errorf("%s: class %s, gemm_wgmma's %s", c.tile, fam.Class(p), wg.Class(q))
		}
		d := Dims{"M": c.m, "N": c.n, "K": c.k}
		pl, err := fam.Plan(p, d)
		if err != nil {
			t.Fatalf("%s %v: %v", c.tile, d, err)
		}
		l := pl.Launches[0]
		want := DecodeSharedBytes(p) + c.chunks*min(c.m, 16)*p["BN"]*4
		if l.Grid != c.grid || l.Cluster != [3]int{p["KC"], 1, 1} || l.Shared != want || DecodeSharedBytes(p) != 512+1024+p["STAGES"]*DecodeStageBytes(p) {
			t.Errorf("%s %v: grid %v cluster %v shared %d, want %v, (%d,1,1), %d", c.tile, d, l.Grid, l.Cluster, l.Shared, c.grid, p["KC"], want)
		}
		if l.Grid[0]%p["KC"] != 0 || (l.Grid[0]/p["KC"])*p["BN"] < c.n || (l.Grid[0]/p["KC"]-1)*p["BN"] >= c.n {
			t.Errorf("%s: grid %v does not tile N %d with clusters of %d", c.tile, l.Grid, c.n, p["KC"])
		}
		if !fam.FitsShape(p, Dims{"M": 1, "N": 2560, "K": 6144}) && c.k == 6144 {
			t.Errorf("%s does not fit Wout", c.tile)
		}
	}
	// Chunks not a multiple of KC·KW: refused by the Plan, left out by Fits.
	p, _ := fam.ParseTile("40_2.ksplit8.kw2.kc2.tk128.stages4") // KC·KW = 4
	for _, c := range []struct {
		k  int
		ok bool
	}{{6144, true}, {4096, true}, {2048, true}, {1536, false}, {2560, false}, {5120, false}} {
		_, err := fam.Plan(p, Dims{"M": 1, "N": 2560, "K": c.k})
		if (err == nil) != c.ok || (err != nil && !strings.Contains(err.Error(), "KC·KW")) {
			t.Errorf("K %d: plan error %v, want ok %v", c.k, err, c.ok)
		}
		for _, m := range []int{1, 7, 16, 1983} {
			if fam.FitsShape(p, Dims{"M": m, "N": 2560, "K": c.k}) != (c.ok && c.k >= DecodeMinK && 2560*c.k >= DecodeMinWeights) {
				t.Errorf("K %d M %d: fits %v", c.k, m, !c.ok)
			}
		}
	}
	// The plain kernel has no cluster; KC needs KSPLIT and at most 8 CTAs.
	q, _ := fam.ParseTile("32_4.ksplit16.kw4.stages8")
	if pl, _ := fam.Plan(q, Dims{"M": 1, "N": 4096, "K": 4096}); pl.Launches[0].Cluster != [3]int{} || pl.Launches[0].Grid != [3]int{128, 1, 1} {
		t.Errorf("KC 1: %+v", pl.Launches[0])
	}
	for tile, why := range map[string]string{
		"32_4.kc2":         "needs KSPLIT",
		"32_4.ksplit8.kc5": "not allowed",
		"40_4.ksplit8":     "multiple of 8·WARPS/KW",
		"56_1":             "not allowed",
		"64_1.ksplit8":     "more than 6",
	} {
		if _, err := fam.ParseTile(tile); err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("tile %s: error %v, want one mentioning %q", tile, err, why)
		}
	}
	// The cluster's reduction: each chunk's partial into rank 0's
	// P[global chunk][row][n], every consumer thread arrives on rank 0's
	// barrier, rank 0 adds the chunks in ascending order from chunk 0 —
	// an order that depends on K and KSPLIT only, never on which CTA
	// finishes first.
	src := cudaGemmDecodeSource
	for _, re := range []string{
		`sq\.S = K / CH / KC;`,
		`sq\.B = rank \* sq\.S \* CH;`,
		`c\.kbase = sq\.B \+ ch \* CH;`,
		`const int gch = rank \* sq\.S \+ ch;`,
		`dec_st_cluster\(Pt \+ 4u \* \(u32\)\(\(gch \* MR \+ row\) \* BN \+ col\), acc\[j\]\[e\]\);`,
		`dec_arrive_cluster\(dec_mapa\(red, 0u\)\);`,
		`dec_bar_init\(bars \+ 16u \* STAGES, \(u32\)\(KC \* WARPS \* 32\)\);`,
		`v = P\[row \* BN \+ col\];\s+for \(int ch = 1; ch < KC \* sq\.S; ch\+\+\)\s+v = v \+ P\[\(ch \* MR \+ row\) \* BN \+ col\];`,
	} {
		if !regexp.MustCompile(re).MatchString(src) {
			t.Errorf("decode.cu lacks %s", re)
		}
	}
}

// TestDecodePrefetchAndXRows: PF (W prefetched into the L2 ahead of the
// ring by the tensor unit; PG, by prefetch.global.L2, with W's address
// as a seventh argument), XM (X boxes of min(M, 16) rows), LD (the
// dependents' trigger after the last load) and LP (W's L2 promotion)
// change neither the class, the grid, the block nor the shared memory,
// and Fits gives the same answer as without them at every M; XM's X box has min(M, 16) rows (16 above M 16, where blocks in
// y need the full box), W's box is unchanged; LD needs PDL; and the
// source's producer asks for stages 0 … PF-1 before it waits for the
// kernel before (and, with PF > STAGES, for stage q + PF as it loads q),
// arms every stage with the X rows of the box it loads, and triggers the
// dependents at entry only without LD; LP is W's L2 promotion.
func TestDecodePrefetchAndXRows(t *testing.T) {
	fam := CUDAGemmDecode()
	for _, c := range []struct{ tile, base string }{
		{"32_8.ksplit16.kw4.tk128.stages16.pdl1.pf64.xm1", "32_8.ksplit16.kw4.tk128.stages16.pdl1"},
		{"32_8.ksplit16.kw4.tk128.stages8.pdl1.pf64.xm1.ld1", "32_8.ksplit16.kw4.tk128.stages8.pdl1"},
		{"40_2.ksplit24.kw2.kc2.tk128.stages6.pdl1.pf32.ld1", "40_2.ksplit24.kw2.kc2.tk128.stages6.pdl1"},
		{"40_4.ksplit8.kw4.kc3.tk64.stages8.pdl1.pf64.xm1", "40_4.ksplit8.kw4.kc3.tk64.stages8.pdl1"},
		{"64_4.tk128.stages8.pdl1.pf16.xm1", "64_4.tk128.stages8.pdl1"},
		{"32_4.pf8", "32_4"},
		{"32_4.xm1", "32_4"},
		{"32_4.pdl2.pf4.xm1.ld1", "32_4.pdl2"},
		{"32_8.ksplit16.kw4.tk128.stages16.pdl1.lp2", "32_8.ksplit16.kw4.tk128.stages16.pdl1"},
		{"40_2.ksplit24.kw2.kc2.tk128.stages8.pdl1.lp0.xm1", "40_2.ksplit24.kw2.kc2.tk128.stages8.pdl1"},
		{"32_8.ksplit16.kw4.tk128.stages16.pdl1.pg24", "32_8.ksplit16.kw4.tk128.stages16.pdl1"},
		{"40_10.ksplit24.kw2.kc2.tk128.stages8.pdl2.pg16.xm1", "40_10.ksplit24.kw2.kc2.tk128.stages8.pdl2"},
		{"64_4.tk128.stages8.pdl1.pg16", "64_4.tk128.stages8.pdl1"},
	} {
		p, err := fam.ParseTile(c.tile)
		if err != nil {
			t.Fatalf("%s: %v", c.tile, err)
		}
		q, err := fam.ParseTile(c.base)
		if err != nil {
			t.Fatalf("%s: %v", c.base, err)
		}
		if fam.Class(p) != fam.Class(q) {
			t.Errorf("%s: class %s, %s's %s", c.tile, fam.Class(p), c.base, fam.Class(q))
		}
		if DecodeSharedBytes(p) != DecodeSharedBytes(q) {
			t.Errorf("%s: shared %d, %s's %d", c.tile, DecodeSharedBytes(p), c.base, DecodeSharedBytes(q))
		}
		for _, sh := range [][2]int{{4096, 4096}, {2560, 6144}, {8192, 8192}, {10240, 2560}} {
			for _, m := range []int{1, 3, 7, 8, 16, 17, 37, 1983} {
				d := Dims{"M": m, "N": sh[0], "K": sh[1]}
				if fam.FitsShape(p, d) != fam.FitsShape(q, d) {
					t.Errorf("%s %v: fits %v, %s %v", c.tile, d, fam.FitsShape(p, d), c.base, fam.FitsShape(q, d))
				}
				if !fam.FitsShape(q, d) {
					continue
				}
				pp, err1 := fam.Plan(p, d)
				pq, err2 := fam.Plan(q, d)
				if err1 != nil || err2 != nil {
					t.Fatalf("%s %v: %v, %v", c.tile, d, err1, err2)
				}
				lp, lq := pp.Launches[0], pq.Launches[0]
				if lp.Grid != lq.Grid || lp.Block != lq.Block || lp.Shared != lq.Shared || lp.Cluster != lq.Cluster || lp.PDL != lq.PDL {
					t.Errorf("%s %v: launch %+v, %s's %+v", c.tile, d, lp, c.base, lq)
				}
				xrows := 16
				if p["XM"] == 1 {
					xrows = min(m, 16)
				}
				if x, w := lp.Args[0].Map, lp.Args[1].Map; x.Box[1] != xrows || DecodeXRows(p, m) != xrows || fmt.Sprint(w.Box) != fmt.Sprint(lq.Args[1].Map.Box) || x.Box[0] != 64 {
					t.Errorf("%s M %d: X box %v (want %d rows), W box %v", c.tile, m, x.Box, xrows, w.Box)
				}
				// PG > 0 passes W's address as a seventh argument.
				names := argNames(lp.Args)
				want := "X,W,Y,M,N,K"
				if p["PG"] > 0 {
					want += ",W"
				}
				if got := strings.Join(names, ","); got != want || len(lq.Args) != 6 || lp.Args[len(lp.Args)-1].Kind != ArgOperand && p["PG"] > 0 {
					t.Errorf("%s: args %s, want %s", c.tile, got, want)
				}
				// LP is W's L2 promotion (3, 256 bytes, unless the tile says); X keeps 256 bytes.
				if x, w := lp.Args[0].Map, lp.Args[1].Map; w.L2Promotion != p["LP"] || x.L2Promotion != 3 || lq.Args[1].Map.L2Promotion != 3 {
					t.Errorf("%s: L2 promotion X %d W %d, want 3 and %d", c.tile, x.L2Promotion, w.L2Promotion, p["LP"])
				}
			}
		}
	}
	for tile, why := range map[string]string{
		"32_4.ld1":   "needs PDL",
		"32_4.pf3":   "not allowed",
		"32_4.xm2":   "not allowed",
		"32_4.ld2":   "not allowed",
		"32_4.pf256": "not allowed",
		"32_4.lp4":   "not allowed",
		"32_4.pg3":   "not allowed",
	} {
		if _, err := fam.ParseTile(tile); err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("tile %s: error %v, want one mentioning %q", tile, err, why)
		}
	}
	src := cudaGemmDecodeSource
	for _, re := range []string{
		// the prefetch of stages 0 … PF-1 comes before the barriers and the producer's wait
		`(?s)const int pre = min\(PF, Q\);.*dec_prefetch\(&tmW, k0 \+ b \* TF, n0\);.*dec_bar_init.*griddepcontrol\.wait`,
		// then stage q + PF as stage q is issued
		`(?s)issue\(q, true, true, !XS\);\s+#if PF > STAGES\s+if \(q \+ PF < Q\)\s+pf\(q \+ PF\);`,
		// PG: W's address as the seventh argument, stages 0 … PG-1 asked
		// for by prefetch.global.L2 before the barriers and the wait, then
		// stage q + PG as q is issued
		`#if PG\s+, const unsigned short \*__restrict__ Wp\s+#endif`,
		`(?s)dec_prefetch_line\(Wp \+ \(size_t\)\(n0 \+ i / nbox\) \* K \+ k0 \+ \(i % nbox\) \* TF\);.*for \(int q = 0; q < min\(PG, Q\); q\+\+\)\s+pg\(q\);.*dec_bar_init.*griddepcontrol\.wait`,
		`(?s)issue\(q, true, true, !XS\);.*#if PG\s+if \(q \+ PG < Q\)\s+pg\(q \+ PG\);`,
		`prefetch\.global\.L2 \[%0\];`,
		// the full barrier counts the X rows the map's box has
		`dec_expect_tx\(full, \(u32\)\(\(WR \? SUB : nbox\) \* WBOX \+ nbox \* \(XG \|\| XS \|\| \(XA && !x\) \? 0 : xr \* 128\)\)\);`,
		`const int xr = XM \? min\(M, XR\) : XR;`,
		// the rows past xr zeroed by the consumers before they read
		`(?s)#if XM\s+// The consumers zero.*xr \* 128 \+ r \* 16.*bar\.sync 2`,
		// the trigger at entry only without LD, after the last issue with it
		`#if PDL && !LD\s+asm volatile\("griddepcontrol\.launch_dependents;`,
		`(?s)#if PDL && LD.*if \(lane == 0\)\s+asm volatile\("griddepcontrol\.launch_dependents;`,
	} {
		if !regexp.MustCompile(re).MatchString(src) {
			t.Errorf("decode.cu lacks %s", re)
		}
	}
}

// TestDecodeFiveWarps: WARPS 5 and 10 give BN 40 as five n8 groups of one
// warp each (with KW 2, two chunks side by side, five warps each): the
// block is the consumer warps plus the producer, the grid and the shared
// memory as for any tile; WARPS 3 and KW not dividing WARPS are refused.
func TestDecodeFiveWarps(t *testing.T) {
	fam := CUDAGemmDecode()
	for _, c := range []struct {
		tile  string
		block int
		grid  [3]int
	}{
		{"40_10.ksplit24.kw2.kc2.tk128.stages8.pdl1", 11 * 32, [3]int{128, 1, 1}},
		{"40_5.ksplit24.kc2.tk128.stages8.pdl1", 6 * 32, [3]int{128, 1, 1}},
		{"40_5.tk128", 6 * 32, [3]int{64, 1, 1}},
	} {
		p, l := oneLaunch(t, fam, c.tile, 7, 2560, 6144)
		if l.Block != [3]int{c.block, 1, 1} || l.Grid != c.grid || p["BN"]*p["KW"]/p["WARPS"] != 8 {
			t.Errorf("%s: block %v grid %v, want %d threads, grid %v", c.tile, l.Block, l.Grid, c.block, c.grid)
		}
		if l.Shared != DecodeSharedBytes(p)+DecodePartialBytes(p, 7, 6144) {
			t.Errorf("%s: shared %d", c.tile, l.Shared)
		}
		tilesTightly(t, c.tile, [3]int{l.Grid[0] / max(p["KC"], 1), l.Grid[1], 1}, p["BN"], DecodeRows, 7, 2560)
	}
	for tile, why := range map[string]string{
		"40_3":               "not allowed",
		"40_10.ksplit24.kw4": "does not divide",
		"48_10.ksplit24.kw2": "multiple of 8·WARPS/KW",
		"40_10":              "multiple of 8·WARPS/KW",
	} {
		if _, err := fam.ParseTile(tile); err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("tile %s: error %v, want one mentioning %q", tile, err, why)
		}
	}
}

// TestDecodeSixteenWarps: WARPS 16 (544 threads) is valid with KW 4 (RG 4:
// BN a multiple of 32) and its block is 17 warps; BN 32 without KW, or
// WARPS 12, is rejected.
func TestDecodeSixteenWarps(t *testing.T) {
	fam := CUDAGemmDecode()
	p, err := fam.ParseTile("32_16.ksplit16.kw4.tk128.stages16.pdl1.lp2")
	if err != nil {
		t.Fatal(err)
	}
	pl, err := fam.Plan(p, Dims{"M": 1, "N": 4096, "K": 4096})
	if err != nil {
		t.Fatal(err)
	}
	if pl.Launches[0].Block != [3]int{17 * 32, 1, 1} {
		t.Errorf("block %v, want 544 threads", pl.Launches[0].Block)
	}
	for _, bad := range []string{"32_16", "32_12.ksplit16.kw4"} {
		if _, err := fam.ParseTile(bad); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
}

// TestDecodeXG: XG 1 and 2 (the consumers load X's A fragments from
// global memory) give a ring of W alone, X's address as the last kernel
// argument (after PG's W), the same class, and are refused with XM; the
// source loads the fragments before the stage wait, copies no X box and,
// under PDL 2, issues no X after the wait.
func TestDecodeXG(t *testing.T) {
	fam := CUDAGemmDecode()
	for _, c := range []struct {
		tile, base string
		args       []string
	}{
		{"32_8.ksplit16.kw4.tk128.stages16.pdl2.xg1", "32_8.ksplit16.kw4.tk128.stages16.pdl2", []string{"X", "W", "Y", "M", "N", "K", "X"}},
		{"40_10.ksplit24.kw2.kc2.tk128.stages8.pdl1.xg2", "40_10.ksplit24.kw2.kc2.tk128.stages8.pdl1", []string{"X", "W", "Y", "M", "N", "K", "X"}},
		{"32_4.pg8.xg1", "32_4.pg8", []string{"X", "W", "Y", "M", "N", "K", "W", "X"}},
	} {
		p, err := fam.ParseTile(c.tile)
		if err != nil {
			t.Fatal(err)
		}
		q, err := fam.ParseTile(c.base)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := DecodeStageBytes(p), p["TK"]/64*p["BN"]*128; got != want {
			t.Errorf("%s: stage %d bytes, want %d (W alone)", c.tile, got, want)
		}
		if DecodeStageBytes(q) != p["TK"]/64*(p["BN"]+DecodeRows)*128 {
			t.Errorf("%s: stage %d bytes", c.base, DecodeStageBytes(q))
		}
		if fam.Class(p) != fam.Class(q) {
			t.Errorf("%s: class %s, %s's %s", c.tile, fam.Class(p), c.base, fam.Class(q))
		}
		dims := Dims{"M": 7, "N": 2560, "K": 6144}
		if p["KSPLIT"] == 16 {
			dims = Dims{"M": 7, "N": 4096, "K": 4096}
		}
		pl, err := fam.Plan(p, dims)
		if err != nil {
			t.Fatal(err)
		}
		names := argNames(pl.Launches[0].Args)
		if strings.Join(names, ",") != strings.Join(c.args, ",") {
			t.Errorf("%s: arguments %v, want %v", c.tile, names, c.args)
		}
		if last := pl.Launches[0].Args[len(names)-1]; last.Kind != ArgOperand {
			t.Errorf("%s: last argument %+v, want X's address", c.tile, last)
		}
	}
	for tile, why := range map[string]string{"32_4.xg1.xm1": "XM", "32_4.xg3": "not allowed"} {
		if _, err := fam.ParseTile(tile); err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("tile %s: error %v, want one mentioning %q", tile, err, why)
		}
	}
	src := cudaGemmDecodeSource
	for _, re := range []string{
		`constexpr int STAGE_BYTES = SUB \* \(WBOX \+ \(XG \|\| XS \|\| MB \? 0 : XBOX\)\);`,
		`#if XG \|\| XA \|\| XS\s+, const unsigned short \*Xp\s+#endif\s+\) \{`,
		// the A fragments from global memory come before the stage wait
		`(?s)#if XG\s+// A fragment of m16n8k16.*f\.a\[kk\]\[3\] = x1 && k \+ 8 < K \? dec_ldx\(x1 \+ k \+ 8\) : 0u;\s+\}\s+#endif\s+if \(i == 0\)\s+dec_wait`,
		`if \(x && !XG\)`,
		`for \(int k = 0; k < pre && !XG; k\+\+\)`,
		`asm volatile\("ld\.global\.u32 %0, \[%1\];\\n"`,
	} {
		if !regexp.MustCompile(re).MatchString(src) {
			t.Errorf("decode.cu lacks %s", re)
		}
	}
}

// TestDecodeXA: XA 1 (PDL 2's preloaded stages get their X boxes by
// cp.async after the wait) keeps the ring, the stage bytes and the class
// of its twin, appends X's address to the arguments (after PG's W), and
// is refused without PDL 2, with XG or XM, and for values other than 0 and
// 1. In the source every full barrier counts 32 arrivals more; the
// producer arms a preloaded stage with its W bytes alone and issues no X
// for it, and makes the 32 arrivals itself for the other stages; the
// copier (a warp of the group that reads the stage) copies X after its
// wait by cp.async in TMA's swizzle, zeros past M and K, one noinc arrive
// per lane, and fences the proxies before it releases the slot.
func TestDecodeXA(t *testing.T) {
	fam := CUDAGemmDecode()
	for _, c := range []struct {
		tile, base string
		dims       Dims
		args       []string
	}{
		{"32_8.tk128.stages16.pdl2.ksplit16.kw4.lp2.xa1", "32_8.tk128.stages16.pdl2.ksplit16.kw4.lp2", Dims{"M": 7, "N": 4096, "K": 4096}, []string{"X", "W", "Y", "M", "N", "K", "X"}},
		{"40_10.tk128.stages8.pdl2.ksplit24.kw2.kc2.xa1.pre4", "40_10.tk128.stages8.pdl2.ksplit24.kw2.kc2.pre4", Dims{"M": 1, "N": 2560, "K": 6144}, []string{"X", "W", "Y", "M", "N", "K", "X"}},
		{"64_4.tk128.stages8.pdl2.pg8.xa1", "64_4.tk128.stages8.pdl2.pg8", Dims{"M": 16, "N": 8192, "K": 8192}, []string{"X", "W", "Y", "M", "N", "K", "W", "X"}},
	} {
		p := namedTile(t, fam, c.tile)
		q, err := fam.ParseTile(c.base)
		if err != nil {
			t.Fatal(err)
		}
		if DecodeStageBytes(p) != DecodeStageBytes(q) || DecodeSharedBytes(p) != DecodeSharedBytes(q) {
			t.Errorf("%s: %d/%d bytes, %s's %d/%d", c.tile, DecodeStageBytes(p), DecodeSharedBytes(p), c.base, DecodeStageBytes(q), DecodeSharedBytes(q))
		}
		if fam.Class(p) != fam.Class(q) {
			t.Errorf("%s: class %s, %s's %s", c.tile, fam.Class(p), c.base, fam.Class(q))
		}
		pl, err := fam.Plan(p, c.dims)
		if err != nil {
			t.Fatal(err)
		}
		names := argNames(pl.Launches[0].Args)
		if strings.Join(names, ",") != strings.Join(c.args, ",") {
			t.Errorf("%s: arguments %v, want %v", c.tile, names, c.args)
		}
		if last := pl.Launches[0].Args[len(names)-1]; last.Kind != ArgOperand || last.Name != "X" {
			t.Errorf("%s: last argument %+v, want X's address", c.tile, last)
		}
		qp, err := fam.Plan(q, c.dims)
		if err != nil {
			t.Fatal(err)
		}
		if len(qp.Launches[0].Args) != len(names)-1 {
			t.Errorf("%s: %d arguments, its twin %d", c.tile, len(names), len(qp.Launches[0].Args))
		}
	}
	for _, tile := range []string{"32_4.xa1", "32_4.pdl1.xa1", "32_4.pdl2.xg1.xa1", "32_4.pdl2.xm1.xa1"} {
		if _, err := fam.ParseTile(tile); err == nil || !strings.Contains(err.Error(), "XA") {
			t.Errorf("tile %s: error %v, want one naming XA", tile, err)
		}
	}
	if _, err := fam.ParseTile("32_4.pdl2.xa2"); err == nil {
		t.Errorf("tile 32_4.pdl2.xa2 accepted")
	}
	src := cudaGemmDecodeSource
	for _, re := range []string{
		`static_assert\(XA == 0 \|\| \(XA == 1 && PDL == 2 && XG == 0 && XM == 0\)`,
		// every full barrier counts XC = 32 arrivals besides the producer's
		`constexpr int XC = 32;`,
		`dec_bar_init\(bars \+ 8u \* s, \(u32\)\(1 \+ XC\)\);`,
		// the producer arms a preloaded stage with its W bytes alone and
		// makes the XC arrivals itself for every stage it copies X for
		`(?s)if \(lane == 0\) \{\s+dec_expect_tx\(full, \(u32\)\(\(WR \? SUB : nbox\) \* WBOX \+ nbox \* \(XG \|\| XS \|\| \(XA && !x\) \? 0 : xr \* 128\)\)\);\s+#if XA\s+if \(x\)\s+dec_arrive_n\(full, \(u32\)XC\);\s+#endif\s+\}`,
		`(?s)for \(; q < pre; q\+\+\) \{\s+issue\(q, true, true, false\);`,
		`(?s)griddepcontrol\.wait;\\n" ::: "memory"\);\s+#if !XA && !XS\s+for \(int k = 0; k < pre && !XG; k\+\+\)\s+issue\(k, false, false, true\);\s+#endif`,
		// the copier of a stage is a warp of the group that reads it
		`static int copier\(int q\) \{ return \(q % KW\) \* RG \+ \(q / KW\) % RG; \}`,
		`__device__ __forceinline__ int stage\(int u\) const \{ return \(round \* T \+ u / SUB\) \* KW \+ kw; \}`,
		// after the consumers' wait: X by cp.async in TMA's swizzle, zeros
		// past M and K, then one noinc arrive per lane
		`(?s)griddepcontrol\.wait;\\n" ::: "memory"\);\s+#endif\s+#if KC > 1\s+asm volatile\("barrier\.cluster\.wait\.acquire;\\n" ::: "memory"\);\s+#endif.*#if XA \|\| XS\s+// The X this warp copies.*const int xFirst = min\(XA \? \(PRE \? PRE : STAGES\) : XSL, Q\);\s+for \(int k = 0; k < xFirst; k\+\+\)\s+if \(Consumer::copier\(k\) == warp\)\s+c\.copyX\(k, lane\);\s+c\.xaPre = XA \? xFirst : 0;`,
		`c\.xrows = XS \? min\(XR, M - m0\) : XR;`,
		`(?s)void copyX\(int q, int lane\) const \{.*const bool in = m < M && kk < K;\s+dec_cp16\(xb \+ \(u32\)\(b \* XBOX \+ r \* 128 \+ \(\(XSW \? ch \^ \(r & 7\) : ch\) << 4\)\), in \? X \+ \(size_t\)m \* K \+ kk : X, in \? 16u : 0u\);\s+\}\s+dec_cp_arrive\(bars \+ 8u \* \(q % STAGES\)\);`,
		`cp\.async\.cg\.shared\.global \[%0\], \[%1\], 16, %2;`,
		`cp\.async\.mbarrier\.arrive\.noinc\.shared::cta\.b64 \[%0\];`,
		`mbarrier\.arrive\.shared::cta\.b64 state, \[%0\], %1;`,
		// the copier fences the proxies before it releases the slot
		`(?s)if \(stage\(u\) < xaPre && copier\(stage\(u\)\) == warp\)\s+asm volatile\("fence\.proxy\.async\.shared::cta;\\n" ::: "memory"\);\s+#endif\s+__syncwarp\(\);\s+if \(lane == 0\)\s+dec_arrive\(bars \+ 8u \* STAGES`,
	} {
		if !regexp.MustCompile(re).MatchString(src) {
			t.Errorf("decode.cu lacks %s", re)
		}
	}
}

// TestDecodePre: PRE n (PDL 2 only, at most STAGES) bounds the stages whose
// W boxes go before the wait; the class is PDL 2's, and the source's
// preload count is PRE's.
func TestDecodePre(t *testing.T) {
	fam := CUDAGemmDecode()
	for tile, ok := range map[string]bool{"32_4.pdl2.pre2": true, "32_4.pdl2.pre4": true, "32_4.pdl2.pre8": false, "32_4.pdl1.pre2": false, "32_4.pre1": false,
		"32_8.tk128.stages16.pdl2.ksplit16.kw4.lp2.pre4": true} {
		p, err := fam.ParseTile(tile)
		if (err == nil) != ok {
			t.Errorf("%s: err %v, want ok %v", tile, err, ok)
			continue
		}
		if err != nil {
			if !strings.Contains(err.Error(), "PRE") {
				t.Errorf("%s: %v does not name PRE", tile, err)
			}
			continue
		}
		if fam.TileName(p) != tile {
			t.Errorf("%s is named %s", tile, fam.TileName(p))
		}
		q := p.Clone()
		q["PRE"] = 0
		if fam.Numerics(p) != fam.Numerics(q) || !fam.Assumes(p) {
			t.Errorf("%s: class %s vs %s, assumes %v", tile, fam.Numerics(p), fam.Numerics(q), fam.Assumes(p))
		}
	}
	for _, w := range []string{"const int pre = min(PRE ? PRE : STAGES, Q);", "static_assert(PRE >= 0 && PRE <= STAGES && (PRE == 0 || PDL == 2)"} {
		if !strings.Contains(cudaGemmDecodeSource, w) {
			t.Errorf("decode.cu lacks %q", w)
		}
	}
}

// namedTile parses tile, which must be valid and named so by the family.
func namedTile(t *testing.T, fam *Family, tile string) Params {
	t.Helper()
	p, err := fam.ParseTile(tile)
	if err != nil {
		t.Fatal(err)
	}
	if got := fam.TileName(p); got != tile {
		t.Errorf("%s is named %s", tile, got)
	}
	return p
}

// argNames is the names of a launch's arguments, in order.
func argNames(args []Arg) []string {
	var names []string
	for _, a := range args {
		names = append(names, a.Name)
	}
	return names
}

// TestDecodeXS: XS n moves X out of the ring into n slots per warp group
// (DecodeXRingBytes after the W stages): the stages hold W alone, the
// class is its twin's, X's address is the last argument, and the tiles the
// H200 runs fit the shared memory with their partials at M 16. XS 1 (a
// warp's one-box-ahead fragments would wait for a copy that waits for
// its release), XS·KW above STAGES, and XS with XA, XG or XM are refused.
// In the source the producer never copies X under XS, every full barrier
// counts the copier's 32 arrivals, and the copier of stage q + XSL waits
// on q's empty barrier after its own release before it copies.
func TestDecodeXS(t *testing.T) {
	fam := CUDAGemmDecode()
	for _, c := range []struct {
		tile, twin string
		dims       Dims
		xring      int
	}{
		{"32_8.tk128.stages20.pdl2.ksplit16.kw4.lp2.xs2", "32_8.tk128.stages20.pdl2.ksplit16.kw4.lp2", Dims{"M": 16, "N": 4096, "K": 4096}, 2 * 4 * 2 * 16 * 128},
		{"32_8.tk128.stages24.pdl2.ksplit16.kw2.lp2.xs2", "32_8.tk128.stages24.pdl2.ksplit16.kw2.lp2", Dims{"M": 16, "N": 4096, "K": 4096}, 2 * 2 * 2 * 16 * 128},
		{"64_8.tk128.stages12.pdl2.ksplit16.kw2.kc2.lp2.xs2", "64_8.tk128.stages12.pdl2.ksplit16.kw2.kc2.lp2", Dims{"M": 16, "N": 4096, "K": 4096}, 2 * 2 * 2 * 16 * 128},
		{"40_10.tk128.stages18.pdl2.ksplit24.kw2.kc2.lp2.xs3", "40_10.tk128.stages18.pdl2.ksplit24.kw2.kc2.lp2", Dims{"M": 16, "N": 2560, "K": 6144}, 3 * 2 * 2 * 16 * 128},
		{"64_4.tk128.stages12.pdl1.lp2.xs2", "64_4.tk128.stages12.pdl1.lp2", Dims{"M": 7, "N": 8192, "K": 8192}, 2 * 1 * 2 * 16 * 128},
	} {
		p := namedTile(t, fam, c.tile)
		q, err := fam.ParseTile(c.twin)
		if err == nil {
			if fam.Class(p) != fam.Class(q) {
				t.Errorf("%s: class %s, %s's %s", c.tile, fam.Class(p), c.twin, fam.Class(q))
			}
		} else if !strings.Contains(err.Error(), "shared memory") {
			t.Errorf("%s: %v (only its size should refuse the twin)", c.twin, err)
		}
		if got, want := DecodeStageBytes(p), p["TK"]/64*p["BN"]*128; got != want {
			t.Errorf("%s: stage %d bytes, want %d (W alone)", c.tile, got, want)
		}
		if got := DecodeXRingBytes(p); got != c.xring {
			t.Errorf("%s: X slots %d bytes, want %d", c.tile, got, c.xring)
		}
		bars := 256
		if p["STAGES"] > 16 {
			bars = 1024
		} else if p["KC"] > 1 {
			bars = 512
		}
		if got, want := DecodeSharedBytes(p), bars+1024+p["STAGES"]*DecodeStageBytes(p)+c.xring; got != want {
			t.Errorf("%s: shared %d bytes, want %d", c.tile, got, want)
		}
		pl, err := fam.Plan(p, c.dims)
		if err != nil {
			t.Fatalf("%s %v: %v", c.tile, c.dims, err)
		}
		l := pl.Launches[0]
		if names := argNames(l.Args); strings.Join(names, ",") != "X,W,Y,M,N,K,X" || l.Args[6].Kind != ArgOperand {
			t.Errorf("%s: arguments %v, want X's address last", c.tile, names)
		}
		if l.Shared != DecodeSharedBytes(p)+DecodePartialBytes(p, c.dims["M"], c.dims["K"]) {
			t.Errorf("%s: launch shared %d", c.tile, l.Shared)
		}
	}
	for _, tile := range []string{"32_4.xs1", "32_4.stages4.xs5", "32_8.ksplit16.kw4.tk128.stages8.xs3", "32_4.pdl2.xa1.xs2", "32_4.xg1.xs2", "32_4.xm1.xs2", "32_4.xs9"} {
		if _, err := fam.ParseTile(tile); err == nil || !strings.Contains(err.Error(), "XS") {
			t.Errorf("tile %s: error %v, want one naming XS", tile, err)
		}
	}
	// 24 stages of 32_8 and 32 KiB of X slots fit, but not with the
	// partials of four chunks
	if p, err := fam.ParseTile("32_8.tk128.stages24.pdl2.ksplit16.kw4.lp2.xs2"); err != nil {
		t.Error(err)
	} else if _, err := fam.Plan(p, Dims{"M": 1, "N": 4096, "K": 4096}); err == nil || !strings.Contains(err.Error(), "shared memory") {
		t.Errorf("24 stages of 32_8 with 32 KiB of X slots: %v, want a shared memory refusal", err)
	}
	src := cudaGemmDecodeSource
	for _, re := range []string{
		`static_assert\(XS == 0 \|\| \(XS >= 2 && XS <= 8 && XA == 0 && XG == 0 && XM == 0 && XSL <= STAGES\)`,
		`constexpr int XSL = XS \* KW;`,
		`constexpr int XSLOTS = XS \? XSL : MB \? STAGES : 0;`,
		`constexpr int RING_BYTES = STAGES \* STAGE_BYTES \+ XSLOTS \* SUB \* XBOX;`,
		`constexpr int BAR_BYTES = STAGES > 16 \? 1024 : KC > 1 \? 512 : 256;`,
		`(?s)#if XA \|\| XS\s+// XC: .*constexpr int XC = 32;`,
		// X slot q % XSL after the W stages
		`return XSLOTS \? ring \+ \(u32\)\(STAGES \* STAGE_BYTES \+ \(q % \(XSLOTS \? XSLOTS : 1\)\) \* SUB \* XBOX\)`,
		// the producer never copies X under XS
		`issue\(q, true, true, !XS\);`,
		`#if !XA && !XS\s+for \(int k = 0; k < pre && !XG; k\+\+\)`,
		// the refill: after the release, wait for q's empty phase, then copy q + XSL
		`(?s)dec_arrive\(bars \+ 8u \* STAGES \+ 8u \* \(stage\(u\) % STAGES\)\);\s+#if XS.*const int q = stage\(u\);\s+if \(q \+ XSL < Q && copier\(q \+ XSL\) == warp\) \{\s+dec_wait\(bars \+ 8u \* STAGES \+ 8u \* \(q % STAGES\), \(u32\)\(\(q / STAGES\) & 1\)\);\s+copyX\(q \+ XSL, lane\);`,
		// the first XSL stages after the wait
		`(?s)#if XA \|\| XS\s+// The X this warp copies.*XS, those of\s+// each group's first XS stages.*const int xFirst = min\(XA \? \(PRE \? PRE : STAGES\) : XSL, Q\);\s+for \(int k = 0; k < xFirst; k\+\+\)\s+if \(Consumer::copier\(k\) == warp\)\s+c\.copyX\(k, lane\);`,
		// rows past M zeroed once before the wait, then a consumer barrier
		`(?s)#if XS\s+// XS: rows xrows .. 15.*if \(M - m0 < XR\) \{.*st\.shared\.v4\.u32.*bar\.sync 2, %0;.*#endif\s+#if PDL\s+asm volatile\("griddepcontrol\.wait;`,
		`const u32 P0 = ring \+ \(u32\)RING_BYTES`,
		`float \*P = reinterpret_cast<float \*>\(smem \+ \(ring - bars\) \+ RING_BYTES\);`,
	} {
		if !regexp.MustCompile(re).MatchString(src) {
			t.Errorf("decode.cu lacks %s", re)
		}
	}
}

// TestDecodeER: ER 1 (a stage's last mma and its release before the
// warp's next stage is waited for) keeps the class, the shared memory and
// the arguments of its twin; in the source a warp's step computes first
// only under ER at a stage's last box, and loads the next box either way.
func TestDecodeER(t *testing.T) {
	fam := CUDAGemmDecode()
	for _, tile := range []string{"32_8.tk128.stages16.pdl2.ksplit16.kw4.lp2.xa1.er1", "40_10.tk128.stages12.pdl2.ksplit24.kw2.kc2.lp2.xa1.er1", "64_4.tk128.stages8.pdl1.lp2.er1", "32_4.er1"} {
		p := namedTile(t, fam, tile)
		q := p.Clone()
		q["ER"] = 0
		if fam.Class(p) != fam.Class(q) || DecodeSharedBytes(p) != DecodeSharedBytes(q) {
			t.Errorf("%s: class %s, %d bytes; without ER %s, %d", tile, fam.Class(p), DecodeSharedBytes(p), fam.Class(q), DecodeSharedBytes(q))
		}
		d := Dims{"M": 7, "N": 4096, "K": 12288} // chunks of 1024 and 1536 both tile it
		a, err := fam.Plan(p, d)
		if err != nil {
			t.Fatal(err)
		}
		b, err := fam.Plan(q, d)
		if err != nil {
			t.Fatal(err)
		}
		if x, y := strings.Join(argNames(a.Launches[0].Args), ","), strings.Join(argNames(b.Launches[0].Args), ","); x != y {
			t.Errorf("%s: arguments %s, without ER %s", tile, x, y)
		}
	}
	if _, err := fam.ParseTile("32_4.er2"); err == nil {
		t.Error("32_4.er2 accepted")
	}
	for _, re := range []string{
		`static_assert\(ER == 0 \|\| ER == 1,`,
		`(?s)void step\(float \(&acc\)\[NB\]\[4\], Frags &cur, Frags &nxt, int u, int lane\) const \{\s+const bool first = ER && u % SUB == SUB - 1;\s+if \(first\)\s+compute\(acc, cur, u, lane\);\s+if \(u \+ 1 < U\)\s+load\(nxt, u \+ 1\);\s+if \(!first\)\s+compute\(acc, cur, u, lane\);`,
		`(?s)load\(f0, 0\);\s+for \(int u = 0; u < U; u \+= 2\) \{\s+step\(acc, f0, f1, u, lane\);\s+if \(u \+ 1 < U\)\s+step\(acc, f1, f0, u \+ 1, lane\);`,
	} {
		if !regexp.MustCompile(re).MatchString(cudaGemmDecodeSource) {
			t.Errorf("decode.cu lacks %s", re)
		}
	}
}

// decodeCxxStubs define CUDA's qualifiers and built-ins away, so that a C++
// compiler can check decode.cu's C++ (names, types, static_asserts) without
// CUDA; the inline PTX is not assembled under -fsyntax-only.
const decodeCxxStubs = `#define __device__
#define __global__
#define __forceinline__ inline
#define __launch_bounds__(x)
#define __grid_constant__
#define __restrict__
#define __align__(x) __attribute__((aligned(x)))
#define __shared__
#include <cstddef>
struct TfDim3 { unsigned x, y, z; };
extern TfDim3 threadIdx, blockIdx;
inline void __syncwarp() {}
inline void __syncthreads() {}
inline long long clock64() { return 0; }
using std::size_t;
template <class T> T min(T a, T b) { return a < b ? a : b; }
template <class T> T max(T a, T b) { return a > b ? a : b; }
`

// TestDecodeMB: MB n (blocks of n token rows) keeps its twin's class and
// W stages, adds STAGES X slots of n-row boxes after them, launches
// ceil(M/n) blocks in y, maps X with n-row boxes (unswizzled below 8
// rows), sizes a cluster's partials by n rows, and refuses XG, XS, XM and
// row counts other than 1, 2, 4 and 8.
func TestDecodeMB(t *testing.T) {
	fam := CUDAGemmDecode()
	for _, c := range []struct {
		tile, twin string
		dims       Dims
		gridY      int
		swizzle    int
	}{
		{"32_8.tk128.stages20.pdl2.ksplit16.kw4.lp2.xa1.er1.mb8", "32_8.tk128.stages20.pdl2.ksplit16.kw4.lp2.xa1.er1", Dims{"M": 7, "N": 4096, "K": 4096}, 1, 3},
		{"32_8.tk128.stages24.pdl2.ksplit16.kw4.lp2.xa1.er1.mb1", "32_8.tk128.stages24.pdl2.ksplit16.kw4.lp2.xa1.er1", Dims{"M": 16, "N": 4096, "K": 4096}, 16, 0},
		{"40_10.tk128.stages20.pdl2.ksplit24.kw2.kc2.lp2.xa1.er1.mb4", "40_10.tk128.stages20.pdl2.ksplit24.kw2.kc2.lp2.xa1.er1", Dims{"M": 9, "N": 2560, "K": 6144}, 3, 0},
		{"64_4.tk128.stages8.pdl1.lp2.mb2", "64_4.tk128.stages8.pdl1.lp2", Dims{"M": 3, "N": 8192, "K": 8192}, 2, 0},
	} {
		p := namedTile(t, fam, c.tile)
		q, err := fam.ParseTile(c.twin)
		if err == nil {
			if fam.Class(p) != fam.Class(q) {
				t.Errorf("%s: class %s, %s's %s", c.tile, fam.Class(p), c.twin, fam.Class(q))
			}
		} else if !strings.Contains(err.Error(), "shared memory") {
			t.Errorf("%s: %v (only its size should refuse the twin)", c.twin, err)
		}
		mb := p["MB"]
		if DecodeBlockRows(p) != mb {
			t.Errorf("%s: %d rows a block", c.tile, DecodeBlockRows(p))
		}
		if got, want := DecodeStageBytes(p), p["TK"]/64*p["BN"]*128; got != want {
			t.Errorf("%s: stage %d bytes, want %d (W alone)", c.tile, got, want)
		}
		if got, want := DecodeXRingBytes(p), p["STAGES"]*p["TK"]/64*mb*128; got != want {
			t.Errorf("%s: X slots %d bytes, want %d", c.tile, got, want)
		}
		pl, err := fam.Plan(p, c.dims)
		if err != nil {
			t.Fatalf("%s %v: %v", c.tile, c.dims, err)
		}
		l := pl.Launches[0]
		if l.Grid[1] != c.gridY || l.Grid[1] != (c.dims["M"]+mb-1)/mb {
			t.Errorf("%s M %d: grid %v, want %d blocks in y", c.tile, c.dims["M"], l.Grid, c.gridY)
		}
		x := l.Args[0].Map
		if x.Box[1] != mb || x.Swizzle != c.swizzle || l.Args[1].Map.Swizzle != 3 {
			t.Errorf("%s: X box %v swizzle %d, W swizzle %d", c.tile, x.Box, x.Swizzle, l.Args[1].Map.Swizzle)
		}
		if l.Shared != DecodeSharedBytes(p)+DecodePartialBytes(p, c.dims["M"], c.dims["K"]) {
			t.Errorf("%s: launch shared %d", c.tile, l.Shared)
		}
		if p["KC"] > 1 {
			if got, want := DecodePartialBytes(p, 16, c.dims["K"]), DecodeChunks(p, c.dims["K"])*mb*p["BN"]*4; got != want {
				t.Errorf("%s: cluster partials %d bytes at M 16, want %d (MB rows)", c.tile, got, want)
			}
		}
	}
	for _, tile := range []string{"32_4.mb3", "32_4.mb16", "32_4.xg1.mb8", "32_4.stages4.xs2.mb4", "32_4.xm1.mb1"} {
		if _, err := fam.ParseTile(tile); err == nil || !strings.Contains(err.Error(), "MB") {
			t.Errorf("tile %s: error %v, want one naming MB", tile, err)
		}
	}
	// The epilogue stores only the block's rows: without the guard a block
	// of MB rows would write zeros over the next block's rows g + 8.
	src := cudaGemmDecodeSource
	if !strings.Contains(src, "if (g < XR) {") || !strings.Contains(src, "if (g + 8 < XR) {") || !strings.Contains(src, "m0 = blockIdx.y * XR") {
		t.Error("decode.cu: the epilogue's row guards or the block's first row by XR are missing")
	}
}

// TestDecodeSourceIsCxx (needs g++, skipped without): decode.cu, with CUDA
// stubbed, passes g++ -fsyntax-only under the defines of every default and
// constant-weights tile and of tiles for each option (XS, ER, XA, XG, PG,
// PF past STAGES, KC 3, RV, WATCHDOG), fp16 and fp32 Y — so the source's
// static_asserts accept every tile the family's rules accept — and fails
// under a define the static_asserts refuse (XS 1).
func TestDecodeSourceIsCxx(t *testing.T) {
	cxx, err := exec.LookPath("g++")
	if err != nil {
		t.Skip("g++ not on PATH")
	}
	dir := t.TempDir()
	src, stubs := filepath.Join(dir, "decode.cu"), filepath.Join(dir, "stubs.h")
	if err := os.WriteFile(src, []byte(cudaGemmDecodeSource), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(stubs, []byte(decodeCxxStubs), 0o644); err != nil {
		t.Fatal(err)
	}
	check := func(defines []string) ([]byte, error) {
		args := []string{"-std=c++17", "-fsyntax-only", "-include", stubs}
		for _, d := range defines {
			args = append(args, "-D"+d)
		}
		return exec.Command(cxx, append(args, "-x", "c++", src)...).CombinedOutput()
	}
	fam := CUDAGemmDecode()
	tiles := append(fam.Space(), fam.ConstSpace()...)
	for _, name := range []string{"32_8.tk128.stages20.pdl2.ksplit16.kw4.lp2.xs3.er1", "40_10.tk128.stages18.pdl1.ksplit24.kw2.kc2.lp2.xs2", "24_1.tk128.stages32.xs4",
		"64_8.ksplit8.kw4.kc3.tk64.stages8.pdl1.xm1.ld1", "64_4.tk128.stages8.pdl2.pg16.xa1", "32_4.xg2.pf8", "16_2.tk64.stages2.pf64",
		"64_8.tk128.stages10.pdl2.ksplit16.kw2.kc2.lp2.xa1.er1.rv1", "64_8.ksplit8.kw4.kc3.tk64.stages8.rv1",
		"32_8.tk128.stages20.pdl2.ksplit16.kw4.lp2.xa1.er1.mb8", "40_10.tk128.stages20.pdl2.ksplit24.kw2.kc2.lp2.xa1.mb1", "64_4.tk128.stages8.pdl1.mb4", "16_2.tk64.stages2.mb2.rv0",
		"32_8.tk128.stages16.pdl2.ksplit16.kw4.lp2.xa1.er1.mb8.wr1", "40_10.tk128.stages12.pdl2.ksplit24.kw2.kc2.lp2.xa1.er1.wr1", "64_4.pdl1.wr1", "32_4.tk64.stages4.xs2.wr1"} {
		p, err := fam.ParseTile(name)
		if err != nil {
			t.Fatal(err)
		}
		tiles = append(tiles, p)
	}
	for i, p := range tiles {
		for _, y := range []string{"Y_DTYPE=1", "Y_DTYPE=3"} {
			d := append(Defines(p), y)
			if i == 0 {
				d = append(d, "WATCHDOG=1")
			}
			if out, err := check(d); err != nil {
				t.Errorf("%s %s: g++ -fsyntax-only: %v\n%s", fam.TileName(p), y, err, out)
			}
		}
	}
	if out, err := check([]string{"XS=1", "STAGES=4"}); err == nil || !strings.Contains(string(out), "XS: 2 to 8") {
		t.Errorf("XS 1 passed g++ -fsyntax-only (%v), want the XS static_assert:\n%s", err, out)
	}
	if out, err := check([]string{"WR=1", "PF=2"}); err == nil || !strings.Contains(string(out), "WR 1: no PF") {
		t.Errorf("WR 1 with PF passed g++ -fsyntax-only (%v), want the WR static_assert:\n%s", err, out)
	}
	if out, err := check([]string{"MB=3"}); err == nil || !strings.Contains(string(out), "MB: 1, 2, 4 or 8") {
		t.Errorf("MB 3 passed g++ -fsyntax-only (%v), want the MB static_assert:\n%s", err, out)
	}
}

// TestDecodeRV: RV 1 (the cluster's partials in the fragments' order, two
// floats a remote store) keeps its twin's class, stage and ring bytes and
// arguments; its partials take 16 rows whatever M; it needs KC > 1. In the
// source the stores and rank 0's reads use the same index, and the sums
// keep the chunk order.
func TestDecodeRV(t *testing.T) {
	fam := CUDAGemmDecode()
	for _, c := range []struct {
		tile string
		k    int
	}{{"40_10.tk128.stages12.pdl2.ksplit24.kw2.kc2.lp2.xa1.er1.rv1", 6144}, {"64_8.tk128.stages10.pdl2.ksplit16.kw2.kc2.lp2.xa1.er1.rv1", 4096}, {"64_8.tk64.stages8.ksplit8.kw4.kc3.rv1", 6144}} {
		p := namedTile(t, fam, c.tile)
		q := p.Clone()
		q["RV"] = 0
		if fam.Class(p) != fam.Class(q) || DecodeSharedBytes(p) != DecodeSharedBytes(q) {
			t.Errorf("%s: class %s, %d bytes; without RV %s, %d", c.tile, fam.Class(p), DecodeSharedBytes(p), fam.Class(q), DecodeSharedBytes(q))
		}
		for _, m := range []int{1, 7, 16, 37} {
			want := DecodeChunks(p, c.k) * DecodeRows * p["BN"] * 4
			if got := DecodePartialBytes(p, m, c.k); got != want {
				t.Errorf("%s M %d: partials %d bytes, want %d", c.tile, m, got, want)
			}
			if m < DecodeRows && DecodePartialBytes(q, m, c.k) >= want {
				t.Errorf("%s M %d: the twin's partials %d bytes, not fewer rows", c.tile, m, DecodePartialBytes(q, m, c.k))
			}
			if _, err := fam.Plan(p, Dims{"M": m, "N": 2560, "K": c.k}); err != nil {
				t.Errorf("%s M %d: %v", c.tile, m, err)
			}
		}
	}
	for _, tile := range []string{"32_4.rv1", "32_8.ksplit16.kw4.tk128.stages16.rv1", "40_10.ksplit24.kw2.kc2.tk128.stages8.rv2"} {
		if _, err := fam.ParseTile(tile); err == nil || !strings.Contains(err.Error(), "RV") {
			t.Errorf("tile %s: error %v, want one naming RV", tile, err)
		}
	}
	for _, re := range []string{
		`static_assert\(RV == 0 \|\| \(RV == 1 && KC > 1\)`,
		`(?s)#if RV.*const u32 a = Pt \+ 4u \* \(u32\)\(\(\(\(gch \* RG \+ rg\) \* 32 \+ lane\) \* NB \+ j\) \* 4\);\s+if \(g < rows\)\s+dec_st_cluster2\(a, acc\[j\]\[0\], acc\[j\]\[1\]\);\s+if \(g \+ 8 < rows\)\s+dec_st_cluster2\(a \+ 8u, acc\[j\]\[2\], acc\[j\]\[3\]\);`,
		`(?s)#if RV\s+\(void\)col;\s+v = P\[\(\(rg \* 32 \+ lane\) \* NB \+ j\) \* 4 \+ e\];\s+for \(int ch = 1; ch < KC \* sq\.S; ch\+\+\)\s+v = v \+ P\[\(\(\(ch \* RG \+ rg\) \* 32 \+ lane\) \* NB \+ j\) \* 4 \+ e\];`,
		`st\.shared::cluster\.v2\.f32 \[%0\], \{%1, %2\};`,
	} {
		if !regexp.MustCompile(re).MatchString(cudaGemmDecodeSource) {
			t.Errorf("decode.cu lacks %s", re)
		}
	}
}

// TestDecodeWR: WR 1 (a stage's W as one 3-D TMA copy, row by row) keeps
// its twin's class, stage, shared and partial bytes, grid and arguments;
// only W's map changes: (64, K/64, N) with strides 128 and 2K bytes and a
// box of TK/64 boxes × BN rows, the same bytes as the twin's TK/64 boxes.
// It refuses PF and K not a multiple of 64; in the
// source the producer issues one 3-D copy and the consumers address row
// r's box i at line r·SUB + i.
func TestDecodeWR(t *testing.T) {
	fam := CUDAGemmDecode()
	for _, c := range []struct {
		tile string
		dims Dims
	}{
		{"32_8.tk128.stages16.pdl2.ksplit16.kw4.lp2.xa1.er1.mb8.wr1", Dims{"M": 7, "N": 4096, "K": 4096}},
		{"40_10.tk128.stages12.pdl2.ksplit24.kw2.kc2.lp2.xa1.er1.wr1", Dims{"M": 16, "N": 2560, "K": 6144}},
		{"64_4.pdl1.wr1", Dims{"M": 3, "N": 8192, "K": 8192 + 64}},
	} {
		p := namedTile(t, fam, c.tile)
		q := maps.Clone(p)
		q["WR"] = 0
		if fam.Class(p) != fam.Class(q) || DecodeStageBytes(p) != DecodeStageBytes(q) || DecodeSharedBytes(p) != DecodeSharedBytes(q) {
			t.Errorf("%s: class, stage or shared bytes differ from its twin's", c.tile)
		}
		pl, err := fam.Plan(p, c.dims)
		if err != nil {
			t.Fatalf("%s %v: %v", c.tile, c.dims, err)
		}
		ql, err := fam.Plan(q, c.dims)
		if err != nil {
			t.Fatal(err)
		}
		l, lq := pl.Launches[0], ql.Launches[0]
		if l.Grid != lq.Grid || l.Shared != lq.Shared || l.Cluster != lq.Cluster || len(l.Args) != len(lq.Args) {
			t.Errorf("%s: launch %+v, twin's %+v", c.tile, l, lq)
		}
		w, wq := l.Args[1].Map, lq.Args[1].Map
		n, k, sub := int64(c.dims["N"]), int64(c.dims["K"]), p["TK"]/64
		if !slices.Equal(w.Dims, []int64{64, k / 64, n}) || !slices.Equal(w.Strides, []int64{128, 2 * k}) || !slices.Equal(w.Box, []int{64, sub, p["BN"]}) {
			t.Errorf("%s: W map dims %v strides %v box %v", c.tile, w.Dims, w.Strides, w.Box)
		}
		if w.Swizzle != wq.Swizzle || w.L2Promotion != wq.L2Promotion || w.Buffer != "W" {
			t.Errorf("%s: W map swizzle %d promotion %d, twin's %d %d", c.tile, w.Swizzle, w.L2Promotion, wq.Swizzle, wq.L2Promotion)
		}
		if got, want := w.Box[0]*w.Box[1]*w.Box[2]*2, sub*p["BN"]*128; got != want {
			t.Errorf("%s: W box %d bytes, want a stage's %d", c.tile, got, want)
		}
		if !reflect.DeepEqual(l.Args[0].Map, lq.Args[0].Map) {
			t.Errorf("%s: X map changed", c.tile)
		}
	}
	for _, tile := range []string{"32_4.wr2", "32_4.pf8.wr1"} {
		if _, err := fam.ParseTile(tile); err == nil || !strings.Contains(err.Error(), "WR") {
			t.Errorf("tile %s: error %v, want one naming WR", tile, err)
		}
	}
	p := namedTile(t, fam, "64_4.tk128.stages8.pdl1.wr1")
	if _, err := fam.Plan(p, Dims{"M": 1, "N": 8192, "K": 8192 + 8}); err == nil || !strings.Contains(err.Error(), "multiple of 64") {
		t.Errorf("WR 1 on K 8200: %v, want a refusal naming the multiple of 64", err)
	}
	if fam.Fits(p, Dims{"M": 1, "N": 8192, "K": 8192 + 8}) || !fam.Fits(p, Dims{"M": 1, "N": 8192, "K": 8192}) {
		t.Error("WR 1: Fits should refuse K 8200 and take K 8192")
	}
	src := cudaGemmDecodeSource
	for _, re := range []string{
		`cp\.async\.bulk\.tensor\.3d\.shared::cluster\.global\.mbarrier::complete_tx::bytes`,
		`(?s)#if WR\s+if \(w && lane == 0\)\s+dec_tma3\(st, &tmW, 0, k0 / TF, n0, full\);`,
		`if \(w && !WR\)`,
		`wsw = \(bSw \+ \(u32\)i\) & 7u, wj = 8u \* SUB \* 128u;`,
		`c\.bRow = \(u32\)\(\(rg \* 8 \* NB \+ \(lane & 7\)\) \* \(WR \? SUB : 1\) \* 128\);`,
	} {
		if !regexp.MustCompile(re).MatchString(src) {
			t.Errorf("decode.cu lacks %s", re)
		}
	}
}
