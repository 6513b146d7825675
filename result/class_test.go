package result

import (
	"errors"
	"testing"
)

// TestFillClasses: only family candidates without a class are filled, from
// their backend, family (the provenance's first when they name none),
// parameters and tile; a family classOf does not know gets its name.
func TestFillClasses(t *testing.T) {
	cells := []CellResult{{Prov: Provenance{Backend: "cuda", Family: "gemm_f16,gemm_wgmma"}, Candidates: []Candidate{
		{Tile: "64_64_2", Params: "TM=64"},
		{Tile: "gemm_wgmma/128_64_1", Family: "gemm_wgmma", Params: "BM=128"},
		{Tile: "x", Family: "mine", Params: "A=1"},
		{Tile: "kept", Family: "gemm_f16", Class: "stored"},
		{Tile: "cublas", Vendor: true},
	}}}
	var asked []string
	n := FillClasses(cells, func(backend, family, params, tile string) (string, error) {
		asked = append(asked, backend+" "+family+" "+params+" "+tile)
		if family == "mine" {
			return "", errors.New("no family mine")
		}
		return family + "/derived", nil
	})
	if n != 3 {
		t.Errorf("filled %d, want 3", n)
	}
	want := []string{"gemm_f16/derived", "gemm_wgmma/derived", "mine", "stored", ""}
	for i, c := range cells[0].Candidates {
		if c.Class != want[i] {
			t.Errorf("%s: class %q, want %q", c.Tile, c.Class, want[i])
		}
	}
	if len(asked) != 3 || asked[0] != "cuda gemm_f16 TM=64 64_64_2" {
		t.Errorf("asked %q", asked)
	}
}
