package builtin

import (
	"strings"
	"testing"

	. "github.com/tilefit/tilefit/kernel"
)

// epiOff mirrors wgmma_core.cuh's epi_off: the byte offset of the fp16 pair
// at row r, even column col of a consumer's staging tile of cols columns and
// rows rows.
func epiOff(r, col, cols, rows int) int {
	bc := WgmmaEpiBoxCols(cols)
	o := r*bc*2 + (col%bc)*2
	return (col/bc)*rows*bc*2 + tmaSwizzle(o, WgmmaEpiSwizzle(cols))
}

// TestWgmmaEpiLayout: for every staged width (8..256 columns) and consumer
// rows (64, 128, 256), the staging offsets of the fragment pairs (a
// thread's pair (r, col) with r = 16·warp + lane/4 (+8, +64i), col = 8j +
// 2·(lane%4)) are distinct, 4-byte aligned and inside the EPI_STG bytes, each
// is where TMA reads that element (box col/BOXC, swizzled box row r), and one
// warp's 32 stores of a (j, half, i) fall in 32 distinct banks. The
// source's epi_off, box width and swizzle are the arithmetic mirrored here.
func TestWgmmaEpiLayout(t *testing.T) {
	for cols := 8; cols <= 256; cols += 8 {
		bc := WgmmaEpiBoxCols(cols)
		if cols%bc != 0 || bc*2 > 16<<WgmmaEpiSwizzle(cols) && WgmmaEpiSwizzle(cols) != 0 {
			t.Fatalf("cols %d: box of %d columns, swizzle %d", cols, bc, WgmmaEpiSwizzle(cols))
		}
		for _, rows := range []int{64, 128, 256} {
			total := rows * cols * 2
			if total%1024 != 0 {
				t.Fatalf("cols %d rows %d: %d staging bytes, not a multiple of 1024", cols, rows, total)
			}
			seen := make(map[int]bool, rows*cols/2)
			for i := 0; i < rows/64; i++ {
				for half := 0; half < 2; half++ {
					for warp := 0; warp < 4; warp++ {
						for j := 0; j < cols/8; j++ {
							banks := map[int]bool{}
							for lane := 0; lane < 32; lane++ {
								r, col := 64*i+16*warp+lane/4+8*half, 8*j+2*(lane&3)
								o := epiOff(r, col, cols, rows)
								if o%4 != 0 || o < 0 || o+4 > total || seen[o] {
									t.Fatalf("cols %d rows %d: pair (%d, %d) at %d (aligned, inside %d bytes, once)", cols, rows, r, col, o, total)
								}
								seen[o] = true
								b, cc := col/bc, col%bc
								if want := b*rows*bc*2 + tmaSwizzle(r*bc*2+cc*2, WgmmaEpiSwizzle(cols)); o != want {
									t.Fatalf("cols %d: (%d, %d) at %d, TMA reads it at %d", cols, r, col, o, want)
								}
								banks[(o/4)%32] = true
							}
							if len(banks) != 32 {
								t.Errorf("cols %d rows %d: a warp's stores fall in %d banks, want 32", cols, rows, len(banks))
							}
						}
					}
				}
			}
			if len(seen) != rows*cols/2 {
				t.Errorf("cols %d rows %d: %d pairs staged, want %d", cols, rows, len(seen), rows*cols/2)
			}
		}
	}
	for _, frag := range []string{
		"constexpr int EPI_BOXC = EPI_N % 64 == 0 ? 64 : EPI_N % 32 == 0 ? 32 : EPI_N % 16 == 0 ? 16 : 8;",
		"constexpr u32 SW = EPI_ROWB == 128 ? 7 : EPI_ROWB == 64 ? 3 : EPI_ROWB == 32 ? 1 : 0;",
		"const u32 o = (u32)(r * EPI_ROWB + (col % EPI_BOXC) * 2);",
		"return (u32)((col / EPI_BOXC) * EPI_BOXBYTES) + (o ^ (((o >> 7) & SW) << 4));",
		"constexpr int EPI_STG = (EPI && WG_EPI_USED) ? EPI_NBOX * EPI_BOXBYTES : 0;",
		"constexpr int EXTRA_BYTES = WG_EXTRA_BYTES + EPI_BYTES;",
	} {
		if !strings.Contains(cudaWgmmaCore, frag) {
			t.Errorf("wgmma_core.cuh lacks %q (the arithmetic this test mirrors)", frag)
		}
	}
	if !strings.Contains(hcWgmmaPrelude, "#define WG_EPI_N (BN / 4)") || !strings.Contains(swigluWgmmaPrelude, "#define WG_EPI_N (BN / 2)") {
		t.Error("the fused preludes do not stage BN/4 (hc_up) and BN/2 (swiglu) columns")
	}
}

// TestWgmmaEpiGeometry: EPI 1 adds CONSUMERS·rows·columns·2 bytes of
// staging after the family's own, taken from the stage ring (fewer stages
// where they no longer fit), never past 227 KiB; EPI 0 tiles keep their
// geometry; Restrict refuses what EPI 1 cannot stage.
func TestWgmmaEpiGeometry(t *testing.T) {
	fam := CUDAGemmWgmma()
	for tile, want := range map[string]struct{ epi, stages int }{
		"128_128_2.pingpong1.epi1":     {2 * 128 * 128 * 2, 5},
		"128_128_2.epi1":               {2 * 64 * 128 * 2, 6},
		"128_256_2.epi1":               {2 * 64 * 256 * 2, 3},
		"64_160_2.pingpong1.epi1":      {2 * 64 * 160 * 2, 6},
		"128_192_2.epi1":               {2 * 64 * 192 * 2, 4},
		"64_96_1.epi1":                 {64 * 96 * 2, 10},
		"128_128_2.pingpong1.mc1.epi1": {2 * 128 * 128 * 2, 5},
		"128_128_2.pingpong1":          {0, 7},
	} {
		p, err := fam.ParseTile(tile)
		if err != nil {
			t.Fatal(err)
		}
		if err := fam.Restrict(p); err != nil {
			t.Fatalf("%s: %v", tile, err)
		}
		g := gemmGeo(p)
		sb := (p["BM"] + p["BN"]) * 128
		if g.epi != want.epi || g.extra != 0 || WgmmaStages(p) != want.stages {
			t.Errorf("%s: %d staging bytes, %d stages; want %d, %d", tile, g.epi, WgmmaStages(p), want.epi, want.stages)
		}
		plain := min(15, (CUDAMaxSharedBytes-1280)/sb) // an fp32 program's stages (no staging)
		if b := WgmmaSharedBytes(p); b != max(want.stages*sb+want.epi, plain*sb)+1280 || b > CUDAMaxSharedBytes {
			t.Errorf("%s: %d bytes of shared memory", tile, b)
		}
	}
	for tile, msg := range map[string]string{
		"128_128_2.swap1.epi1":   "SWAP 1",
		"64_48_1.ksplit40.epi1":  "partials",
		"128_256_2.epi1.stages4": "exceeds",
	} {
		if _, err := fam.ParseTile(tile); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: %v, want a refusal naming %q", tile, err, msg)
		}
	}
	p, err := fam.ParseTile("128_48_2.pingpong1.ksplit40.kfold1.epi1")
	if err != nil {
		t.Fatalf("KFOLD stores Y, EPI 1 may stage it: %v", err)
	}
	p["EPI"] = 2
	if err := fam.Restrict(p); err == nil || !strings.Contains(err.Error(), "EPI = 2") {
		t.Errorf("EPI 2: %v", err)
	}
	hc := CUDAHcUpWgmma()
	hp, _ := hc.ParseTile("128_160_2.epi1")
	if g := hcWgmmaGeo(hp); g.extra != 128*160*2 || g.epi != 2*64*40*2 {
		t.Errorf("hc_up 128_160_2.epi1: %d bytes of its own, want the H buffer and 2·64·40·2 of staging", g.extra)
	}
	sw := CUDASwigluWgmma()
	sp, _ := sw.ParseTile("128_160_2.epi1")
	if g := swigluWgmmaGeo(sp); g.epi != 2*64*80*2 || g.shared(sp) != g.stages(sp)*(128+160)*128+2*64*80*2+1280 {
		t.Errorf("swiglu 128_160_2.epi1: %d staging bytes, %d in all; want 2·64·80·2", g.epi, g.shared(sp))
	}
	if _, err := sw.ParseTile("64_80_1.ksplit20.epi1"); err == nil || !strings.Contains(err.Error(), "KSPLIT") {
		t.Errorf("swiglu ksplit20.epi1: %v, want a refusal", err)
	}
}

// TestWgmmaEpiPlan: an EPI 1 tile's launch has the output's tensor map
// after the operands' (dims {N, M}, box {BOXC, rows per consumer}, the box
// rows' swizzle, no L2 promotion), a placeholder map when the output's rows
// are not 16-byte aligned; EPI 0 launches are unchanged.
func TestWgmmaEpiPlan(t *testing.T) {
	fam := CUDAGemmWgmma()
	p, _ := fam.ParseTile("64_160_2.pingpong1.epi1")
	pl, err := fam.Plan(p, Dims{"M": 1983, "N": 2560, "K": 640})
	if err != nil {
		t.Fatal(err)
	}
	l := pl.Launches[0]
	if len(l.Args) != 7 || l.Args[2].Kind != ArgTensorMap || l.Args[2].Name != "Y" || l.Args[3].Kind != ArgOperand || l.Args[3].Name != "Y" || l.Shared != WgmmaSharedBytes(p) {
		t.Fatalf("args %+v", l.Args)
	}
	y := l.Args[2].Map
	if y.Buffer != "Y" || y.DType != F16 || y.Dims[0] != 2560 || y.Dims[1] != 1983 || y.Strides[0] != 5120 || y.Box[0] != 32 || y.Box[1] != 64 || y.Swizzle != 2 {
		t.Errorf("Y map %+v", y)
	}
	pl, err = fam.Plan(p, Dims{"M": 300, "N": 324, "K": 2560})
	if err != nil {
		t.Fatal(err)
	}
	if y := pl.Launches[0].Args[2].Map; y.Dims[0] != 8 || y.Dims[1] != 1 || y.Box[0] != 8 {
		t.Errorf("N 324: map %+v, want the placeholder", y)
	}
	q, _ := fam.ParseTile("64_160_2.pingpong1")
	if pl, _ := fam.Plan(q, Dims{"M": 1983, "N": 2560, "K": 640}); len(pl.Launches[0].Args) != 6 {
		t.Errorf("EPI 0: %d args", len(pl.Launches[0].Args))
	}

	hc := CUDAHcUpWgmma()
	hp, _ := hc.ParseTile("128_160_2.epi1")
	pl, err = hc.Plan(hp, Dims{"M": 512, "S": 2560, "K": 320})
	if err != nil {
		t.Fatal(err)
	}
	a := pl.Launches[0].Args
	if a[3].Kind != ArgTensorMap || a[3].Name != "mixh" || a[4].Kind != ArgOperand || a[4].Name != "mixh" || pl.Launches[0].Shared != hcWgmmaGeo(hp).shared(hp) {
		t.Fatalf("hc_up args %+v", a)
	}
	if m := a[3].Map; m.Dims[0] != 2560 || m.Dims[1] != 512 || m.Box[0] != 8 || m.Box[1] != 64 || m.Swizzle != 0 {
		t.Errorf("mixh map %+v (40 columns: boxes of 8, unswizzled)", m)
	}

	sw := CUDASwigluWgmma()
	sp, _ := sw.ParseTile("128_128_2.epi1")
	pl, err = sw.Plan(sp, Dims{"M": 2048, "N": 640, "K": 2560})
	if err != nil {
		t.Fatal(err)
	}
	a = pl.Launches[0].Args
	if a[3].Kind != ArgTensorMap || a[3].Name != "h" || a[4].Name != "h" || len(a) != 8 {
		t.Fatalf("swiglu args %+v", a)
	}
	if m := a[3].Map; m.Dims[0] != 640 || m.Dims[1] != 2048 || m.Box[0] != 64 || m.Box[1] != 64 || m.Swizzle != 3 {
		t.Errorf("h map %+v", m)
	}
}

// TestWgmmaEpiFits: the default sweep times a tile or its staged twin on a
// shape, never both: the EPI 1 tile where the output's rows are 16-byte
// aligned fp16 (N % 8 == 0), the EPI 0 one elsewhere, and an EPI 0 tile
// without a valid twin (split-K partials, SWAP) everywhere; the fused
// families' EPI 1 extras are valid default tiles.
func TestWgmmaEpiFits(t *testing.T) {
	fam := CUDAGemmWgmma()
	for _, c := range []struct {
		tile   string
		n      int
		k      int
		expect bool
	}{
		{"128_128_2.pingpong1", 2560, 640, false}, {"128_128_2.pingpong1.epi1", 2560, 640, true},
		{"128_128_2.pingpong1", 324, 10240, true}, {"128_128_2.pingpong1.epi1", 324, 10240, false},
		{"128_48_2.pingpong1.ksplit40.kfold1", 324, 10240, true},
		{"64_48_1.ksplit10.pdl1", 48, 2560, true}, {"64_48_1.ksplit10.kfold1", 48, 2560, false}, {"64_48_1.ksplit10.kfold1.epi1", 48, 2560, true},
		{"64_48_1.ksplit10.kfold1", 1, 2560, true}, {"64_48_1.ksplit10.kfold1.epi1", 1, 2560, false},
		{"128_128_2.pingpong1.mc1.epi1", 10240, 2560, true}, {"128_128_2.pingpong1.mc1", 10240, 2560, false},
		{"128_128_2.pingpong1.mc1.epi1", 512, 2560, false},
	} {
		p, err := fam.ParseTile(c.tile)
		if err != nil {
			t.Fatal(err)
		}
		if got := fam.FitsShape(p, Dims{"M": 1983, "N": c.n, "K": c.k}); got != c.expect {
			t.Errorf("%s on N %d K %d: fits %v, want %v", c.tile, c.n, c.k, got, c.expect)
		}
	}
	for _, f := range []*Family{CUDAHcUpWgmma(), CUDASwigluWgmma()} {
		in := map[string]bool{}
		for _, name := range f.Tiles() {
			in[name] = true
		}
		for _, name := range f.Extra {
			p, err := f.ParseTile(name)
			if err != nil || f.TileName(p) != name || !in[name] || p["EPI"] != 1 {
				t.Errorf("%s extra %s: %v, canonical %v, in the default sweep %v", f.Name, name, err, err == nil && f.TileName(p) == name, in[name])
			}
		}
	}
}
