package cli

import (
	"fmt"
	"os"
	"strings"

	"github.com/tilefit/tilefit/kernel"
)

// fixed reports whether the side names its tile in every cell: tile: and
// policy: sides, and source:FILE@TILE. A source:FILE side without a tile
// runs the other side's tile (or, against another such side, every tile).
func (s abSpec) fixed() bool { return s.kind != "source" || s.tile.name != "" }

// splitSourceTile splits the argument of a source: spec, FILE or
// FILE@TILE ("old shipped → new shipped": a revision and its tile), at the
// last '@'. A file whose own name holds an '@' is taken whole when it
// exists; otherwise the part after the '@' must be a tile of fams (see
// resolveTile).
func splitSourceTile(flagName, arg string, fams []*kernel.Family) (file string, tile tileRef, err error) {
	i := strings.LastIndex(arg, "@")
	if i < 0 {
		return arg, tileRef{}, nil
	}
	if _, err := os.Stat(arg); err == nil {
		return arg, tileRef{}, nil
	}
	file, t := arg[:i], arg[i+1:]
	if file == "" || t == "" {
		return "", tileRef{}, fmt.Errorf("%s source:%s: want source:FILE or source:FILE@TILE", flagName, arg)
	}
	if tile, err = resolveTile(fams, t); err != nil {
		return "", tileRef{}, fmt.Errorf("%s source:%s: %w", flagName, arg, err)
	}
	return file, tile, nil
}
