package cli

import (
	"fmt"
	"strings"

	"github.com/tilefit/tilefit/kernel"
)

// A tileRef is a tile name parsed once into its family and parameters and
// carried as such: the display name (a family other than the first is
// prefixed "family/", as in a sweep's cells), the family, the assignment.
type tileRef struct {
	name   string
	fam    *kernel.Family
	params kernel.Params
}

// resolveTile parses name, "TILE" of fams[0] or "FAMILY/TILE" of any of
// fams, into a tileRef.
func resolveTile(fams []*kernel.Family, name string) (tileRef, error) {
	f, bare := fams[0], name
	if famName, rest, ok := strings.Cut(name, "/"); ok {
		f = nil
		for _, g := range fams {
			if g.Name == famName {
				f = g
			}
		}
		if f == nil {
			names := make([]string, len(fams))
			for i, g := range fams {
				names[i] = g.Name
			}
			return tileRef{}, fmt.Errorf("tile %q: no family %s here (families: %s)", name, famName, strings.Join(names, ", "))
		}
		bare = rest
	}
	p, err := f.ParseTile(bare)
	if err != nil {
		return tileRef{}, err
	}
	display := f.TileName(p)
	if f != fams[0] {
		display = f.Name + "/" + display
	}
	return tileRef{name: display, fam: f, params: p}, nil
}
