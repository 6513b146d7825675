package builtin

import (
	"strings"
	"testing"

	. "github.com/tilefit/tilefit/kernel"
)

// TestWgmmaKFoldPlan: a KFOLD tile is one launch over the tiles (no K
// chunks in the units), writing Y itself with no scratch and no reduce,
// in the class of its split-K twin; the Restrict rules of KFOLD.
func TestWgmmaKFoldPlan(t *testing.T) {
	fam := CUDAGemmWgmma()
	p, err := fam.ParseTile("128_96_2.ksplit40.kfold1")
	if err != nil {
		t.Fatal(err)
	}
	twin, _ := fam.ParseTile("128_96_2.ksplit40")
	for _, m := range []int{1, 256, 2048} {
		pl, err := fam.Plan(p, Dims{"M": m, "N": 324, "K": 10240})
		if err != nil {
			t.Fatal(err)
		}
		if len(pl.Launches) != 1 || len(pl.Scratch) != 0 {
			t.Fatalf("M %d: plan %+v, want one launch and no scratch", m, pl)
		}
		l := pl.Launches[0]
		if l.Entry != WgmmaEntry || l.Args[2].Kind != ArgOperand || l.Args[2].Name != "Y" {
			t.Errorf("M %d: launch %+v writes %+v, want Y", m, l, l.Args[2])
		}
		tiles := ((m + 127) / 128) * 4
		if l.Grid[0] != min(tiles, 132) {
			t.Errorf("M %d: grid %d, want min(%d tiles, 132): a unit is a whole tile", m, l.Grid[0], tiles)
		}
		tp, _ := fam.Plan(twin, Dims{"M": m, "N": 324, "K": 10240})
		if len(tp.Launches) != 2 || tp.Launches[0].Grid[0] != min(4*tiles, 132) {
			t.Errorf("M %d: the split twin's plan %+v", m, tp)
		}
	}
	if WgmmaNumerics(p) != WgmmaNumerics(twin) || WgmmaNumerics(p) != "gemm_f16/splitk2560" {
		t.Errorf("KFOLD class %q, split twin %q: want both gemm_f16/splitk2560", WgmmaNumerics(p), WgmmaNumerics(twin))
	}
	for _, c := range []struct{ tile, err string }{
		{"128_96_2.kfold1", "KFOLD 1 needs KSPLIT > 0"},
		{"128_192_2.ksplit40.kfold1", "KFOLD doubles the accumulators"},
		{"128_96_2.ksplit40.kfold2", "KFOLD=2 not allowed"},
	} {
		if _, err := fam.ParseTile(c.tile); err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: %v, want %q", c.tile, err, c.err)
		}
	}
	if _, err := fam.ParseTile("128_192_2.ksplit40"); err != nil {
		t.Errorf("the split tile of the refused KFOLD one: %v", err)
	}
}

// TestWgmmaKFoldOrder: the fold in the core adds the chunks in the split-K
// reduce kernel's order — the first chunk copied, each later one added to
// the running sum in fp32 — so a KFOLD tile gives its class's bits.
func TestWgmmaKFoldOrder(t *testing.T) {
	src := CUDAGemmWgmma().Source
	for _, want := range []string{
		// the fold (wgmma_core.cuh), chunk by chunk in ascending kc
		"for (int kc = w.kb0; kc < w.kb1; kc += KSPLIT)",
		"if (kc == w.kb0) {",
		"tot[i][j] = acc[i][j];",
		"tot[i][j] = tot[i][j] + acc[i][j];",
		"epi(tot, ctx);",
		// the reduce (gemm_wgmma.cu): P[0], then P[1], P[2], ... added
		"float acc = P[i];",
		"for (int j = 1; j < S; j++)",
		"acc += P[(size_t)j * mn + i];",
	} {
		if !strings.Contains(src, want) {
			t.Errorf("gemm_wgmma's source lacks %q", want)
		}
	}
	// The fold zeroes acc at every chunk, as a split-K unit starts from zero.
	fold := src[strings.Index(src, "for (int kc = w.kb0; kc < w.kb1; kc += KSPLIT)"):]
	fold = fold[:strings.Index(fold, "epi(tot, ctx);")]
	if z, k := strings.Index(fold, "wg_zero(acc);"), strings.Index(fold, "for (int kb = kc; kb < kend; kb++)"); z < 0 || k < 0 || z > k {
		t.Errorf("the fold does not zero acc before each chunk's k loop")
	}
	if !strings.Contains(src, "void wg_zero(float (&acc)[MW][BN / 2]) {\n#pragma unroll\n\tfor (int i = 0; i < MW; i++)\n#pragma unroll\n\t\tfor (int j = 0; j < BN / 2; j++) {\n\t\t\tacc[i][j] = 0.0f;") {
		t.Errorf("wg_zero does not zero every accumulator")
	}
}

// TestWgmmaExtraTiles: the default sweep's extra tiles are valid canonical
// names in the Space, at most 15; each split-K class the default offers a
// skinny strata shape has a partials tile and a KFOLD tile fitting it (the
// class can be chosen at every M); split-K tiles fit only skinny shapes
// with 2–8 chunks, never by M.
func TestWgmmaExtraTiles(t *testing.T) {
	fam := CUDAGemmWgmma()
	if n := len(fam.Extra); n == 0 || n > 24 {
		t.Fatalf("%d extra tiles, want 1..24", n)
	}
	// The default sweep's size is a sweep-time budget (issue 17): a cell
	// times no more default tiles than before the staged epilogue came (39
	// on the skinny shapes, 33 on the wide ones: wgmmaFits times a tile or
	// its EPI 1 twin, never both), and the programs compiled stay under 90.
	if n := len(fam.Tiles()); n > 90 {
		t.Errorf("%d default tiles, want at most 90", n)
	}
	for _, s := range [][2]int{{324, 10240}, {10240, 2560}, {2560, 640}, {512, 2560}, {48, 2560}, {1, 2560}, {128, 2560}, {2560, 6144}} {
		n := 0
		for _, p := range fam.Space() {
			if fam.FitsShape(p, Dims{"M": 512, "N": s[0], "K": s[1]}) {
				n++
			}
		}
		if want := map[bool]int{true: 33, false: 39}[s[0] >= 2048]; n != want {
			t.Errorf("N %d K %d: %d default tiles fit, want %d", s[0], s[1], n, want)
		}
	}
	in := map[string]bool{}
	for _, name := range fam.Tiles() {
		in[name] = true
	}
	var extras []Params
	for _, name := range fam.Extra {
		p, err := fam.ParseTile(name)
		if err != nil {
			t.Fatalf("extra %s: %v", name, err)
		}
		if fam.TileName(p) != name || !in[name] {
			t.Errorf("extra %s: canonical %s, in the space %v", name, fam.TileName(p), in[name])
		}
		extras = append(extras, p)
	}
	if got, want := len(fam.Tiles()), len(productOf(fam))+len(fam.Extra); got != want {
		t.Errorf("%d default tiles, want %d (product + extras)", got, want)
	}
	type shape struct {
		name string
		n, k int
		// class is the split-K class the default offers this shape ("": none)
		class string
	}
	for _, s := range []shape{
		{"hc_read", 324, 10240, "gemm_f16/splitk2560"}, {"W512", 512, 2560, "gemm_f16/splitk1280"},
		{"Walbe", 48, 2560, "gemm_f16/splitk640"}, {"Wsg", 1, 2560, "gemm_f16/splitk640"},
		{"Wout", 2560, 6144, ""}, {"Wqkv", 10240, 2560, ""}, {"Wshd", 2560, 640, ""},
	} {
		byClass := map[string][2]int{} // class → (partials tiles, KFOLD tiles)
		mcFits := 0
		for i, p := range extras {
			fits := fam.FitsShape(p, Dims{"M": 256, "N": s.n, "K": s.k})
			for _, m := range []int{1, 512, 2048} {
				if fam.FitsShape(p, Dims{"M": m, "N": s.n, "K": s.k}) != fits {
					t.Errorf("%s on %s: Fits depends on M", fam.Extra[i], s.name)
				}
			}
			if p["MC"] > 0 {
				// Cluster tiles pay for their pairs only on the wide shapes.
				if fits != (s.n >= 2048 && wgmmaEpiFits(p, Dims{"N": s.n}, wgmmaRestrict)) {
					t.Errorf("%s (MC %d) fits %s (N %d): %v, want N ≥ 2048 (the tile or its staged twin)", fam.Extra[i], p["MC"], s.name, s.n, fits)
				}
				if fits {
					mcFits++
				}
				continue
			}
			if p["KSPLIT"] == 0 {
				if want := wgmmaEpiFits(p, Dims{"N": s.n}, wgmmaRestrict); fits != want {
					t.Errorf("%s (K not split) fits %s: %v, want %v (the tile or its staged twin)", fam.Extra[i], s.name, fits, want)
				}
				continue
			}
			if !fits {
				continue
			}
			if ch := WgmmaChunks(p, s.k); s.n > 1024 || ch < 2 || ch > 8 {
				t.Errorf("%s fits %s (N %d, %d chunks)", fam.Extra[i], s.name, s.n, ch)
			}
			c := byClass[WgmmaNumerics(p)]
			c[p["KFOLD"]]++
			byClass[WgmmaNumerics(p)] = c
		}
		if s.n >= 2048 && mcFits == 0 {
			t.Errorf("%s: no MC extra fits a wide shape", s.name)
		}
		if s.class == "" {
			if len(byClass) != 0 {
				t.Errorf("%s: split-K classes %v fit a wide shape", s.name, byClass)
			}
			continue
		}
		if c := byClass[s.class]; c[0] == 0 || c[1] == 0 {
			t.Errorf("%s: class %s has %d partials and %d KFOLD tiles fitting it, want both (all: %v)", s.name, s.class, c[0], c[1], byClass)
		}
	}
}

// TestSpaceExtra: Space appends the valid Extra tiles after the product,
// once each, and leaves out the invalid ones.
func TestSpaceExtra(t *testing.T) {
	f := &Family{
		Name:       "x",
		Params:     []Param{{Name: "A", Values: []int{1, 2, 3, 4}, Sweep: []int{1, 2}}, {Name: "B", Values: []int{0, 1}, Sweep: []int{0}}},
		Positional: []string{"A"},
		Extra:      []string{"3.b1", "1", "9", "3.b1", "4"},
	}
	got := strings.Join(f.Tiles(), " ")
	if want := "1 2 3.b1 4"; got != want {
		t.Errorf("tiles %q, want %q", got, want)
	}
	if !f.FitsShape(Params{"A": 1}, Dims{}) {
		t.Error("a family without Fits: a tile does not fit")
	}
	f.Fits = func(p Params, d Dims) bool { return p["A"] < d["N"] }
	if f.FitsShape(Params{"A": 3}, Dims{"N": 2}) || !f.FitsShape(Params{"A": 1}, Dims{"N": 2}) {
		t.Error("FitsShape does not ask Fits")
	}
}

// productOf is the Space of fam without its extras.
func productOf(fam *Family) []Params {
	g := *fam
	g.Extra = nil
	return g.Space()
}
