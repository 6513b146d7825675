package builtin

import (
	"strings"
	"testing"

	"github.com/tilefit/tilefit/kernel"
)

// TestRegister checks that Register fills a registry the caller built with
// every built-in family and baseline, refuses to register them twice, and
// that every registry gets its own copies (no state shared between two).
func TestRegister(t *testing.T) {
	r, err := kernel.NewRegistry()
	if err != nil {
		t.Fatal(err)
	}
	if err := Register(r); err != nil {
		t.Fatal(err)
	}
	if got, want := len(r.Families()), len(Families()); got != want || got == 0 {
		t.Fatalf("Register added %d families, want %d", got, want)
	}
	for _, f := range Families() {
		if _, err := r.Lookup(f.Backend, f.Name); err != nil {
			t.Errorf("%s/%s not registered: %v", f.Backend, f.Name, err)
		}
	}
	for _, b := range Baselines() {
		found := false
		for _, g := range r.Baselines(b.Backend, b.Operator) {
			found = found || g.Name == b.Name
		}
		if !found {
			t.Errorf("baseline %s/%s of %s not registered", b.Backend, b.Name, b.Operator)
		}
	}
	if err := Register(r); err == nil || !strings.Contains(err.Error(), "registered twice") {
		t.Errorf("second Register: %v, want a family registered twice", err)
	}

	a, b := New(), New()
	fa, err := a.Lookup("cuda", "gemm_wgmma")
	if err != nil {
		t.Fatal(err)
	}
	fb, err := b.Lookup("cuda", "gemm_wgmma")
	if err != nil {
		t.Fatal(err)
	}
	if fa == fb || fa.Operator == fb.Operator {
		t.Errorf("two registries share a family or operator value")
	}
	fa.Source += "// edited"
	if fb.Source == fa.Source {
		t.Errorf("editing one registry's family changed the other's")
	}
}

// TestConstWeightTiles: the default sweep never assumes constant weights
// (no Space tile of any family does); a family's ConstWeights tiles are
// canonical names of valid tiles outside its Space that do assume them,
// and ConstSpace (what --const-weights adds) is exactly those tiles.
// hc_up_wgmma, gemm_decode, gemm_wgmma and swiglu_wgmma have some (their
// PDL 2); PDL 1 assumes nothing.
func TestConstWeightTiles(t *testing.T) {
	has := map[string]int{}
	for _, f := range Families() {
		for _, p := range f.Space() {
			if f.Assumes(p) {
				t.Errorf("%s: default tile %s assumes constant weights", f.Name, f.TileName(p))
			}
		}
		for _, tile := range f.ConstWeights {
			p, err := f.ParseTile(tile)
			if err != nil {
				t.Errorf("%s: ConstWeights tile %s: %v", f.Name, tile, err)
				continue
			}
			if got := f.TileName(p); got != tile {
				t.Errorf("%s: ConstWeights tile %s is named %s by the family", f.Name, tile, got)
			}
			if !f.Assumes(p) {
				t.Errorf("%s: ConstWeights tile %s does not assume constant weights", f.Name, tile)
			}
		}
		cs := f.ConstSpace()
		if len(cs) != len(f.ConstWeights) {
			t.Errorf("%s: ConstSpace has %d tiles, ConstWeights %d", f.Name, len(cs), len(f.ConstWeights))
		}
		has[f.Name] = len(cs)
	}
	if has["hc_up_wgmma"] == 0 || has["gemm_decode"] == 0 || has["gemm_wgmma"] == 0 || has["swiglu_wgmma"] == 0 {
		t.Errorf("--const-weights adds nothing to hc_up_wgmma, gemm_decode, gemm_wgmma or swiglu_wgmma: %v", has)
	}
	for _, f := range []*kernel.Family{CUDAHcUpWgmma(), CUDAGemmDecode()} {
		for tile, want := range map[string]bool{f.Reference: false, f.Reference + ".pdl1": false, f.Reference + ".pdl2": true} {
			p, err := f.ParseTile(tile)
			if err != nil {
				t.Fatalf("%s %s: %v", f.Name, tile, err)
			}
			if f.Assumes(p) != want {
				t.Errorf("%s %s: Assumes %v, want %v", f.Name, tile, !want, want)
			}
		}
	}
}
