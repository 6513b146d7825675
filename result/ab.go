package result

import (
	"fmt"

	"github.com/tilefit/tilefit/stats"
)

// RoundsAuto is ABReport.Rounds (and the --rounds value) for adaptive
// rounds: the sequential rule adds rounds until a comparison is decided.
const RoundsAuto = "auto"

// An ABRow is one compared cell (and tile) in tilefit ab's output.
type ABRow struct {
	Shape  string `json:"shape"`
	N      int    `json:"n"`
	K      int    `json:"k"`
	M      int    `json:"m"`
	Calls  int    `json:"calls"`
	TileA  string `json:"tile_a"`
	TileB  string `json:"tile_b"`
	Group  string `json:"group,omitempty"`
	Status string `json:"status"` // "ok", or what failed
	// AUS and BUS are the median µs per call.
	AUS float64 `json:"a_us,omitempty"`
	BUS float64 `json:"b_us,omitempty"`
	// Outcome is B against A (stats.Compare): the median ratio B/A, its
	// interval, the brackets, the verdict, the pairs it rests on and, with
	// --rounds auto, the look of the sequential rule that decided (or the
	// last one made: the interval is that look's, at the per-look
	// confidence), and the comparison's warnings.
	stats.Outcome
	// Bitwise: B's output is bitwise identical to A's.
	Bitwise  bool      `json:"bitwise"`
	Rounds   int       `json:"rounds"`
	ASamples []float64 `json:"a_samples_us,omitempty"`
	BSamples []float64 `json:"b_samples_us,omitempty"`
	Notes    []string  `json:"notes,omitempty"`
	// LooksSpent: undecided with the sequential rule's looks spent (more
	// budget cannot decide it), not cut by the budget.
	LooksSpent bool `json:"looks_spent,omitempty"`
}

// Tiles names the row's tiles: one name when both sides ran the same
// tile, else "A vs B".
func (r ABRow) Tiles() string {
	if r.TileA == r.TileB {
		return r.TileA
	}
	return r.TileA + " vs " + r.TileB
}

// An ABTotal is the production-weighted total of a group of rows at one M
// (M 0: every M).
type ABTotal struct {
	Group string  `json:"group,omitempty"`
	M     int     `json:"m"`
	Cells int     `json:"cells"`
	A     float64 `json:"a_us_per_chunk"`
	B     float64 `json:"b_us_per_chunk"`
	// Outcome is B/A with its bootstrap interval and the fixed rule's
	// verdict (stats.WeightedTotal).
	stats.Outcome
}

// ABVerdicts counts the verdicts of the compared cells. ExpectedFalse is
// (1 − Confidence) × Compared (stats.ExpectedFalse): each cell ends in a
// false verdict with probability at most 1 − Confidence.
type ABVerdicts struct {
	Compared      int     `json:"compared"`
	Faster        int     `json:"faster"`
	Slower        int     `json:"slower"`
	Tie           int     `json:"tie"`
	Undecided     int     `json:"undecided"`
	ExpectedFalse float64 `json:"expected_false"`
}

// An ABCalibration summarises an A/A run: the noise floor.
type ABCalibration struct {
	Cells int `json:"cells"`
	// MedianHalfWidth and MaxHalfWidth are the median and largest interval
	// half-widths (Hi − Lo)/2 over the cells.
	MedianHalfWidth float64 `json:"median_half_width"`
	MaxHalfWidth    float64 `json:"max_half_width"`
	// FalseVerdicts counts cells whose verdict is faster or slower (all
	// false on A/A).
	FalseVerdicts int `json:"false_verdicts"`
	// Undecided counts cells left undecided (--rounds auto).
	Undecided int `json:"undecided"`
	// NotBitwise counts cells whose two outputs differ (a nondeterministic kernel).
	NotBitwise int `json:"not_bitwise"`
}

// An ABReport is tilefit ab's output (--format json).
type ABReport struct {
	A          string         `json:"a"`
	B          string         `json:"b"`
	AA         bool           `json:"aa"`
	Backend    string         `json:"backend"`
	Device     string         `json:"device"`
	Family     string         `json:"family"`
	Workload   string         `json:"workload"`
	Ms         []int          `json:"ms"`
	MinGain    float64        `json:"min_gain"`
	MaxRegress float64        `json:"max_regress"`
	Confidence float64        `json:"confidence"`
	Cells      []ABRow        `json:"cells"`
	Totals     []ABTotal      `json:"totals"`
	Noise      *ABCalibration `json:"calibration,omitempty"`
	Warnings   []string       `json:"warnings,omitempty"`
	// Rounds is "auto" (the sequential rule) or the fixed number of rounds;
	// LookConfidence the confidence of each look's interval under auto.
	Rounds         string  `json:"rounds"`
	LookConfidence float64 `json:"look_confidence,omitempty"`
	// Verdicts counts the cells' verdicts, with the most false ones to
	// expect among them.
	Verdicts ABVerdicts `json:"verdicts"`
	// Reversed is, with --reverse, the same comparison run again with the
	// sides swapped (its A is this report's B); Agreement compares the two
	// runs cell by cell.
	Reversed  *ABReport     `json:"reversed,omitempty"`
	Agreement []ABAgreement `json:"agreement,omitempty"`
}

// NotCompared lists the cells of the report (and of its reversed run) that
// could not be compared — a side crashed, hung or failed verification —
// as "SHAPE M=M: STATUS"; nil when every cell was compared.
func (r ABReport) NotCompared() []string {
	var missing []string
	for _, x := range []*ABReport{&r, r.Reversed} {
		if x == nil {
			continue
		}
		for _, c := range x.Cells {
			if c.Status != "ok" {
				missing = append(missing, fmt.Sprintf("%s M=%d: %s", c.Shape, c.M, c.Status))
			}
		}
	}
	return missing
}

// An ABAgreement compares one cell of an A/B comparison with the same cell
// of the reversed run (--reverse), both read as B/A of the comparison asked
// for: the reversed run's ratio A/B is inverted, and its verdict mirrored
// (its "faster" — A faster than B — is "slower" for B/A).
type ABAgreement struct {
	Shape string `json:"shape"`
	M     int    `json:"m"`
	TileA string `json:"tile_a"`
	TileB string `json:"tile_b"`
	// Ratio, Lo, Hi are the forward run's B/A and interval; ReversedRatio,
	// ReversedLo, ReversedHi the reversed run's, as B/A.
	Ratio         float64 `json:"ratio,omitempty"`
	Lo            float64 `json:"lo,omitempty"`
	Hi            float64 `json:"hi,omitempty"`
	ReversedRatio float64 `json:"reversed_ratio,omitempty"`
	ReversedLo    float64 `json:"reversed_lo,omitempty"`
	ReversedHi    float64 `json:"reversed_hi,omitempty"`
	// Verdict and ReversedVerdict are the two runs' verdicts on B/A.
	Verdict         string `json:"verdict,omitempty"`
	ReversedVerdict string `json:"reversed_verdict,omitempty"`
	// Agree: both runs compared the cell and gave the same verdict;
	// Overlap: their intervals overlap.
	Agree   bool   `json:"agree"`
	Overlap bool   `json:"overlap"`
	Note    string `json:"note,omitempty"`
}
