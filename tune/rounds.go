package tune

import "github.com/tilefit/tilefit/result"

// anchorIndex returns the index in timed (indices into cands) of the cell's
// reference tile: the candidate every other one is compared with when the
// rounds are adaptive (measure.Options.Auto). It is −1 when the reference
// is not among the timed candidates; the cell then runs the fixed rounds.
func anchorIndex(cands []result.Candidate, timed []int, reference string) int {
	for j, i := range timed {
		if c := cands[i]; c.Tile == reference && !c.AA && !c.Vendor {
			return j
		}
	}
	return -1
}
