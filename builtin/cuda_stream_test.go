package builtin

import (
	. "github.com/tilefit/tilefit/kernel"
	"strings"
	"testing"
)

// TestStreamSpace: the default sweep is valid and round-trips its names,
// every tile of the space fits the shared memory and register budgets, and
// the restrictions refuse what the source's static_asserts refuse.
func TestStreamSpace(t *testing.T) {
	fam := CUDAGemmStream()
	tiles := fam.Tiles()
	if len(tiles) < 6 {
		t.Fatalf("%d default tiles: %v", len(tiles), tiles)
	}
	if _, err := fam.ParseTile(fam.Reference); err != nil {
		t.Fatalf("reference %s: %v", fam.Reference, err)
	}
	for _, p := range fam.Space() {
		name := fam.TileName(p)
		q, err := fam.ParseTile(name)
		if err != nil || q.String() != p.String() {
			t.Errorf("tile %s: round trip gives %v, %v", name, q, err)
		}
		if b := StreamSharedBytes(p); b > CUDAMaxSharedBytes {
			t.Errorf("tile %s: %d bytes of shared memory", name, b)
		}
		if r := StreamFragmentRegs(p); r > StreamMaxFragmentRegs {
			t.Errorf("tile %s: %d fragment registers", name, r)
		}
		if p["BN"]%(16*p["WARPS"]) != 0 {
			t.Errorf("tile %s: BN not a multiple of 16·WARPS", name)
		}
	}
	for tile, why := range map[string]string{
		"16_8_2":               "multiple of 16·WARPS",
		"48_8_2":               "multiple of 16·WARPS",
		"64_32_1":              "registers",
		"128_8_1":              "registers",
		"32_8_2.stages16.tk32": "",
		"128_32_8.stages16":    "shared memory",
	} {
		_, err := fam.ParseTile(tile)
		if why == "" {
			if err != nil {
				t.Errorf("tile %s: %v", tile, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("tile %s: error %v, want one mentioning %q", tile, err, why)
		}
	}
	for _, ok := range []string{"16_8_1", "32_8_1", "32_8_2", "64_8_4", "64_16_4", "128_8_8", "64_32_4", "32_32_2", "16_8_1.pdl1", "32_8_2.tk32.stages2", "96_8_2.stages16"} {
		if _, err := fam.ParseTile(ok); err != nil {
			t.Errorf("tile %s: %v", ok, err)
		}
	}
	if p, _ := fam.ParseTile("64_16_4.stages12"); StreamSharedBytes(p) != 12*(64+16)*64*2 {
		t.Errorf("shared bytes %d", StreamSharedBytes(p))
	}
}

// oneLaunch parses tile of fam and plans it on M×N×K, failing the test
// unless the plan is one launch without scratch; it returns the tile's
// parameters and that launch.
func oneLaunch(t *testing.T, fam *Family, tile string, m, n, k int) (Params, Launch) {
	t.Helper()
	p, err := fam.ParseTile(tile)
	if err != nil {
		t.Fatal(err)
	}
	pl, err := fam.Plan(p, Dims{"M": m, "N": n, "K": k})
	if err != nil {
		t.Fatalf("%s: %v", tile, err)
	}
	if len(pl.Launches) != 1 || len(pl.Scratch) != 0 {
		t.Fatalf("%s: %d launches, %d scratch", tile, len(pl.Launches), len(pl.Scratch))
	}
	return p, pl.Launches[0]
}

// tilesTightly fails the test unless grid's blocks of cols weight rows ×
// rows tokens cover M×N with no block wholly outside it.
func tilesTightly(t *testing.T, tile string, grid [3]int, cols, rows, m, n int) {
	t.Helper()
	if grid[0]*cols < n || (grid[0]-1)*cols >= n || grid[1]*rows < m || (grid[1]-1)*rows >= m {
		t.Errorf("%s: grid %v does not tile %d×%d tightly", tile, grid, m, n)
	}
}

// TestStreamPlan: the grid covers every output element with blocks of BN
// weight rows × MT tokens, the block has WARPS warps, the arguments follow
// the CUDA convention, and PDL reaches the launch.
func TestStreamPlan(t *testing.T) {
	fam := CUDAGemmStream()
	for _, c := range []struct {
		tile    string
		m, n, k int
		grid    [3]int
	}{
		{"32_8_2", 1, 4096, 4096, [3]int{128, 1, 1}},
		{"16_8_1", 16, 4096, 4096, [3]int{256, 2, 1}},
		{"64_16_4", 16, 10240, 2560, [3]int{160, 1, 1}},
		{"64_16_4", 17, 1, 2560, [3]int{1, 2, 1}},
		{"32_32_2", 1983, 48, 2560, [3]int{2, 62, 1}},
		{"128_8_8", 1, 324, 10240, [3]int{3, 1, 1}},
	} {
		p, l := oneLaunch(t, fam, c.tile, c.m, c.n, c.k)
		if l.Entry != StreamEntry || l.Grid != c.grid || l.Block != [3]int{32 * p["WARPS"], 1, 1} || l.Shared != StreamSharedBytes(p) || l.PDL {
			t.Errorf("%s M %d N %d: launch %+v, want grid %v", c.tile, c.m, c.n, l, c.grid)
		}
		tilesTightly(t, c.tile, l.Grid, p["BN"], p["MT"], c.m, c.n)
		var kinds []string
		for _, a := range l.Args {
			kinds = append(kinds, a.Name)
		}
		if strings.Join(kinds, ",") != "X,W,Y,M,N,K" || l.Args[0].Kind != ArgOperand || l.Args[3].Kind != ArgDim {
			t.Errorf("%s: args %+v", c.tile, l.Args)
		}
	}
	p, _ := fam.ParseTile("32_8_2.pdl1")
	pl, err := fam.Plan(p, Dims{"M": 1, "N": 64, "K": 64})
	if err != nil || !pl.Launches[0].PDL {
		t.Errorf("pdl1: %+v, %v", pl, err)
	}
	// M whose blocks overflow the grid's y limit is refused, not launched.
	p, _ = fam.ParseTile("32_8_2")
	if _, err := fam.Plan(p, Dims{"M": 8*65535 + 1, "N": 64, "K": 64}); err == nil || !strings.Contains(err.Error(), "65535") {
		t.Errorf("huge M: %v", err)
	}
}

// TestStreamClass: every gemm_stream tile, PDL or not, is in gemm_f16's
// numerics class (the class gemm_wgmma's unsplit tiles declare), so the
// sweep requires it bitwise equal to gemm_f16's reference and a selector
// may mix the three families per shape; the built-in registry holds it
// beside them for operator gemm_f16.
func TestStreamClass(t *testing.T) {
	fam := CUDAGemmStream()
	wg := CUDAGemmWgmma()
	pw, _ := wg.ParseTile(wg.Reference)
	for _, p := range fam.Space() {
		if c := fam.Numerics(p); c != "gemm_f16" || c != wg.Numerics(pw) {
			t.Fatalf("tile %s: class %q", fam.TileName(p), c)
		}
	}
	r := New()
	f, err := r.Lookup("cuda", "gemm_stream")
	if err != nil || f.Operator.Name != "gemm_f16" {
		t.Fatalf("registry: %v, %v", f, err)
	}
	names := map[string]bool{}
	for _, g := range r.Of("cuda", "gemm_f16") {
		names[g.Name] = true
	}
	if !names["gemm_f16"] || !names["gemm_wgmma"] || !names["gemm_stream"] {
		t.Errorf("cuda gemm_f16 families: %v", names)
	}
}

// TestWgmmaPDL: PDL 1 marks both launches of a split-K tile (partials and
// reduce) and the one launch of an unsplit tile; it is not a numerics
// parameter; PDL 0 leaves the launches plain and the tile names unchanged.
func TestWgmmaPDL(t *testing.T) {
	fam := CUDAGemmWgmma()
	for _, c := range []struct {
		tile     string
		launches int
		pdl      bool
	}{
		{"64_48_1", 1, false}, {"64_48_1.pdl1", 1, true}, {"64_48_1.ksplit10", 2, false}, {"64_48_1.ksplit10.pdl1", 2, true},
		{"64_48_1.pdl2", 1, true}, {"64_48_1.ksplit10.pdl2", 2, true}, {"64_8_1.pdl2.swap1", 1, true},
	} {
		p, err := fam.ParseTile(c.tile)
		if err != nil {
			t.Fatal(err)
		}
		if fam.TileName(p) != c.tile {
			t.Errorf("name %s → %s", c.tile, fam.TileName(p))
		}
		pl, err := fam.Plan(p, Dims{"M": 256, "N": 48, "K": 2560})
		if err != nil || len(pl.Launches) != c.launches {
			t.Fatalf("%s: %+v %v", c.tile, pl, err)
		}
		for i, l := range pl.Launches {
			if l.PDL != c.pdl {
				t.Errorf("%s launch %d: PDL %v", c.tile, i, l.PDL)
			}
		}
		q := p.Clone()
		q["PDL"] = 0
		if fam.Numerics(p) != fam.Numerics(q) {
			t.Errorf("%s: PDL changes the class (%s vs %s)", c.tile, fam.Numerics(p), fam.Numerics(q))
		}
	}
	if _, err := fam.ParseTile("64_48_1.pdl3"); err == nil {
		t.Error("PDL 3 accepted")
	}
	if _, err := fam.ParseTile("128_128_2.pdl2.mc1"); err == nil || !strings.Contains(err.Error(), "PDL=2") {
		t.Errorf("PDL 2 with MC: %v", err)
	}
}

// TestWgmmaSwap: SWAP 1 hands the kernel the transposed problem — its first
// tensor map (BM rows) over W, its second (BN rows) over X, dims N then M —
// tiles the output as ceil(N/BM)·ceil(M/BN), and keeps the numerics class.
func TestWgmmaSwap(t *testing.T) {
	fam := CUDAGemmWgmma()
	p, err := fam.ParseTile("64_8_1.swap1")
	if err != nil {
		t.Fatal(err)
	}
	pl, err := fam.Plan(p, Dims{"M": 1, "N": 4096, "K": 4096})
	if err != nil {
		t.Fatal(err)
	}
	l := pl.Launches[0]
	a, b := l.Args[0].Map, l.Args[1].Map
	if a.Buffer != "W" || a.Dims[1] != 4096 || a.Box[1] != 64 || b.Buffer != "X" || b.Dims[1] != 1 || b.Box[1] != 8 {
		t.Errorf("maps %+v %+v", a, b)
	}
	if l.Args[3].Name != "N" || l.Args[4].Name != "M" || l.Args[5].Name != "K" {
		t.Errorf("dims %+v", l.Args[3:])
	}
	if l.Grid[0] != 64 {
		t.Errorf("grid %v, want 64 tiles of 64 weight rows", l.Grid)
	}
	q, _ := fam.ParseTile("64_8_1")
	if fam.Numerics(p) != fam.Numerics(q) {
		t.Errorf("SWAP changes the class")
	}
	p, _ = fam.ParseTile("64_16_1.swap1.ksplit10")
	pl, err = fam.Plan(p, Dims{"M": 37, "N": 324, "K": 2560})
	if err != nil || len(pl.Launches) != 2 || pl.Scratch[0].Elems != 4*37*324 {
		t.Fatalf("split swap: %+v %v", pl, err)
	}
	if g := pl.Launches[0].Grid[0]; g != 6*3*4 {
		t.Errorf("split swap grid %d, want 6·3 tiles × 4 chunks", g)
	}
}
