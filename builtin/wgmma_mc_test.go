package builtin

import (
	"strings"
	"testing"

	. "github.com/tilefit/tilefit/kernel"
)

// mcUnitOf mirrors wgmma_core.cuh's unit_of with MC: the t-th tile of the
// pair grid (tile_of over it), then the rank's tile of the pair.
func mcUnitOf(p Params, t, tilesM, tilesN, rank int) (bm, bn int) {
	gm, gn := tilesM, tilesN
	switch p["MC"] {
	case 1:
		gm = (gm + 1) / 2
	case 2:
		gn = (gn + 1) / 2
	}
	group := p["GROUP"]
	if p["RASTER"] == 0 {
		per, first := group*gn, (t/(group*gn))*group
		gs, l := min(gm-first, group), t%per
		bm, bn = first+l%gs, l/gs
	} else {
		per, first := group*gm, (t/(group*gm))*group
		gs, l := min(gn-first, group), t%per
		bn, bm = first+l%gs, l/gs
	}
	switch p["MC"] {
	case 1:
		bm = 2*bm + rank
	case 2:
		bn = 2*bn + rank
	}
	return bm, bn
}

// TestWgmmaMCPlan: an MC tile launches clusters of two CTAs over the pair
// grid (grid even, at most GRID), halves the TMA box of the operand the
// pair shares (and only that one), keeps the numerics class, and the
// pair walk covers every tile exactly once (the pair's second tile past
// the last row or column being the only extra).
func TestWgmmaMCPlan(t *testing.T) {
	fam := CUDAGemmWgmma()
	d := Dims{"M": 1983, "N": 512, "K": 2560}
	for _, c := range []struct {
		tile       string
		grid       int
		boxX, boxW int
	}{
		{"128_128_2.mc1", 2 * 8 * 4, 128, 64},  // 16 tile rows → 8 pairs × 4 columns
		{"128_128_2.mc2", 2 * 16 * 2, 64, 128}, // 4 columns → 2 pairs
		{"64_128_1.mc1", 2 * 16 * 4, 64, 64},   // 31 rows → 16 pairs
		{"64_64_1.mc2.grid128", 128, 32, 64},
		{"64_64_1.mc1.ksplit20.pdl1", 132, 64, 32},
	} {
		p, err := fam.ParseTile(c.tile)
		if err != nil {
			t.Fatalf("%s: %v", c.tile, err)
		}
		pl, err := fam.Plan(p, d)
		if err != nil {
			t.Fatalf("%s: %v", c.tile, err)
		}
		l := pl.Launches[0]
		if l.Cluster != [3]int{2, 1, 1} || l.Grid[0] != c.grid || l.Grid[0]%2 != 0 {
			t.Errorf("%s: grid %v cluster %v, want %d CTAs in clusters of 2", c.tile, l.Grid, l.Cluster, c.grid)
		}
		if bx, bw := l.Args[0].Map.Box[1], l.Args[1].Map.Box[1]; bx != c.boxX || bw != c.boxW {
			t.Errorf("%s: boxes X %d W %d, want %d %d", c.tile, bx, bw, c.boxX, c.boxW)
		}
		if WgmmaNumerics(p) != WgmmaNumerics(withMC(p, 0)) {
			t.Errorf("%s: class %q differs from the tile without MC", c.tile, WgmmaNumerics(p))
		}
		for _, pl2 := range pl.Launches[1:] {
			if pl2.Cluster != [3]int{} {
				t.Errorf("%s: the reduce launch has a cluster %v", c.tile, pl2.Cluster)
			}
		}
	}
	plain, _ := fam.ParseTile("128_128_2")
	if pl, _ := fam.Plan(plain, d); pl.Launches[0].Cluster != [3]int{} {
		t.Errorf("a tile without MC launches a cluster %v", pl.Launches[0].Cluster)
	}
	for _, c := range []struct{ tile, err string }{
		{"128_120_2.mc1", "not a multiple of 16"},
		{"128_128_2.mc2.grid0", ""},
		{"128_128_2.mc3", "MC=3 not allowed"},
	} {
		_, err := fam.ParseTile(c.tile)
		if c.err == "" {
			if err != nil {
				t.Errorf("%s: %v", c.tile, err)
			}
		} else if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: %v, want %q", c.tile, err, c.err)
		}
	}
	// The pair walk: every tile once, by the rank whose pair holds it.
	for _, tile := range []string{"128_128_2.mc1", "128_128_2.mc2", "64_64_1.mc1.raster1.group4", "64_160_2.pingpong1.mc2"} {
		p, _ := fam.ParseTile(tile)
		for _, tm := range []int{1, 3, 4, 16, 31} {
			for _, tn := range []int{1, 2, 5, 20} {
				gm, gn := tm, tn
				if p["MC"] == 1 {
					gm = (tm + 1) / 2
				} else {
					gn = (tn + 1) / 2
				}
				seen := map[[2]int]int{}
				for u := 0; u < gm*gn; u++ {
					for r := 0; r < 2; r++ {
						bm, bn := mcUnitOf(p, u, tm, tn, r)
						seen[[2]int{bm, bn}]++
					}
				}
				for bm := 0; bm < tm; bm++ {
					for bn := 0; bn < tn; bn++ {
						if seen[[2]int{bm, bn}] != 1 {
							t.Fatalf("%s %d×%d tiles: tile (%d,%d) walked %d times", tile, tm, tn, bm, bn, seen[[2]int{bm, bn}])
						}
					}
				}
				if extra := 2*gm*gn - tm*tn; extra != len(seen)-tm*tn || extra > max(tm, tn) {
					t.Fatalf("%s %d×%d tiles: %d walked past the grid", tile, tm, tn, len(seen)-tm*tn)
				}
			}
		}
	}
}

func withMC(p Params, mc int) Params {
	q := Params{}
	for k, v := range p {
		q[k] = v
	}
	q["MC"] = mc
	return q
}

// TestFusedWgmmaMCPlan: hc_up_wgmma and swiglu_wgmma with MC: clusters of
// two over the pair grid; MC 2 halves X's box, MC 1 keeps every box (the pair
// shares the weights by whole boxes: streams 2r, 2r+1 of hc_up, Wg or Wu of
// swiglu); the class is unchanged.
func TestFusedWgmmaMCPlan(t *testing.T) {
	hc := CUDAHcUpWgmma()
	for _, c := range []struct {
		tile string
		grid int
		boxX int
	}{
		{"128_160_2.mc1", 2 * 2 * 64, 128}, // M 512: 4 rows → 2 pairs × 64 columns, GRID 132 → 66 clusters
		{"128_160_2.mc2", 132, 64},
		{"128_160_2.mc1.grid0", 2 * 2 * 64, 128},
	} {
		p, err := hc.ParseTile(c.tile)
		if err != nil {
			t.Fatal(err)
		}
		pl, err := hc.Plan(p, Dims{"M": 512, "S": 2560, "K": 320})
		if err != nil {
			t.Fatal(err)
		}
		l := pl.Launches[0]
		want := min(c.grid, 132)
		if c.tile == "128_160_2.mc1.grid0" {
			want = c.grid
		}
		if l.Cluster != [3]int{2, 1, 1} || l.Grid[0] != want || l.Args[0].Map.Box[1] != c.boxX || l.Args[1].Map.Box[1] != 40 {
			t.Errorf("%s: grid %v cluster %v boxes %v %v", c.tile, l.Grid, l.Cluster, l.Args[0].Map.Box, l.Args[1].Map.Box)
		}
		if hc.Numerics(p) != "hc_up_f16" {
			t.Errorf("%s: class %q", c.tile, hc.Numerics(p))
		}
	}
	sw := CUDASwigluWgmma()
	for _, tile := range []string{"128_160_2.mc1.pdl1", "128_160_2.mc2", "64_80_1.mc1.ksplit20"} {
		p, err := sw.ParseTile(tile)
		if err != nil {
			t.Fatal(err)
		}
		pl, err := sw.Plan(p, Dims{"M": 1983, "N": 640, "K": 2560})
		if err != nil {
			t.Fatal(err)
		}
		l := pl.Launches[0]
		bx := p["BM"]
		if p["MC"] == 2 {
			bx /= 2
		}
		if l.Cluster != [3]int{2, 1, 1} || l.Grid[0]%2 != 0 || l.Args[0].Map.Box[1] != bx || l.Args[1].Map.Box[1] != p["BN"]/2 || l.Args[2].Map.Box[1] != p["BN"]/2 {
			t.Errorf("%s: grid %v cluster %v boxes %v %v %v", tile, l.Grid, l.Cluster, l.Args[0].Map.Box, l.Args[1].Map.Box, l.Args[2].Map.Box)
		}
		if SwigluWgmmaNumerics(p) != SwigluWgmmaNumerics(withMC(p, 0)) {
			t.Errorf("%s: class %q", tile, SwigluWgmmaNumerics(p))
		}
	}
}

// TestHcUpWgmmaHPre: HPRE needs two H buffers, and with it the producer
// loads unit 0's H tile after its stages and a later one's before them only
// where its buffer needs no wait (the first use of buffer 1 with PINGPONG,
// every unit with HBUF=2).
func TestHcUpWgmmaHPre(t *testing.T) {
	hc := CUDAHcUpWgmma()
	for _, tile := range []string{"128_128_2.pingpong1.hpre1", "128_160_2.hbuf2.hpre1"} {
		if _, err := hc.ParseTile(tile); err != nil {
			t.Errorf("%s: %v", tile, err)
		}
	}
	if _, err := hc.ParseTile("128_160_2.hpre1"); err == nil || !strings.Contains(err.Error(), "two H buffers") {
		t.Errorf("HPRE with one H buffer: %v", err)
	}
	for _, want := range []string{
		"if (jj == 0)\n\t\treturn false;",
		"return PINGPONG ? jj < NHB : true;",
		"if (h_early(jj))\n\t\t\tload_h(u, jj, aux, extra);",
		"if (!h_early(jj))\n\t\t\tload_h(u, jj, aux, extra);",
	} {
		if !strings.Contains(hc.Source, want) {
			t.Errorf("hc_up_wgmma's source lacks %q", want)
		}
	}
}
