package result

import "strings"

// FillClasses gives every family candidate of cells that has no numerics
// class (stored before the store kept classes) the class classOf derives
// from its backend, family, parameters and tile name — or, when classOf
// fails (a family this binary does not know), the family's name. The
// family of a candidate that does not name one is the first of its
// provenance's. It returns how many candidates it filled.
func FillClasses(cells []CellResult, classOf func(backend, family, params, tile string) (string, error)) int {
	n := 0
	for i := range cells {
		c := &cells[i]
		for j := range c.Candidates {
			cand := &c.Candidates[j]
			if cand.Vendor || cand.Class != "" {
				continue
			}
			fam := cand.Family
			if fam == "" {
				fam, _, _ = strings.Cut(c.Prov.Family, ",")
			}
			class, err := classOf(c.Prov.Backend, fam, cand.Params, cand.Tile)
			if err != nil {
				class = fam
			}
			cand.Class = class
			n++
		}
	}
	return n
}
