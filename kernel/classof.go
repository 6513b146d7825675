package kernel

import "strings"

// ClassOf is the numerics class of a tile of family family on backend:
// the family's Class of params (Params.String's form) or, when params is
// empty or does not parse, of the tile's display name (a "FAMILY/"
// prefix stripped). It fails when r has no such family or neither names
// a tile of it.
func (r *Registry) ClassOf(backend, family, params, tile string) (string, error) {
	f, err := r.Lookup(backend, family)
	if err != nil {
		return "", err
	}
	p, err := ParseParams(params)
	if err != nil || params == "" {
		bare := tile
		if _, rest, ok := strings.Cut(bare, "/"); ok {
			bare = rest
		}
		if p, err = f.ParseTile(bare); err != nil {
			return "", err
		}
	}
	return f.Class(p), nil
}
