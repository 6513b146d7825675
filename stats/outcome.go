package stats

import (
	"math"
	"slices"
)

// An Outcome is a comparison of B against A as a decision records it and a
// report shows it: the one comparison type of tilefit's decisions. An A/B
// row (tilefit ab), a policy decision (tilefit select) and a per-chunk
// total (the report, ab and select) each carry one, made by Compare (a
// cell's paired samples) or Total.Outcome (a production-weighted total).
//
// Ratio is the median per-pair ratio B/A of a cell (a total: the ratio of
// the weighted sums), [Lo, Hi] the interval the verdict was read from
// (Paired's signed-rank interval, the deciding look's under the sequential
// rule, or WeightedTotal's bootstrap interval), BracketLo/BracketHi the
// seeds' brackets (0 for a total), Verdict faster, slower, tie or
// undecided ("" when nothing was compared), Pairs the pairs the verdict
// rests on, Look the sequential rule's deciding look (0 for fixed rounds
// and totals). Values that do not exist are 0, so that an Outcome always
// encodes as JSON.
type Outcome struct {
	Ratio     float64  `json:"ratio,omitempty"`
	Lo        float64  `json:"lo,omitempty"`
	Hi        float64  `json:"hi,omitempty"`
	BracketLo float64  `json:"bracket_lo,omitempty"`
	BracketHi float64  `json:"bracket_hi,omitempty"`
	Verdict   Verdict  `json:"verdict,omitempty"`
	Pairs     int      `json:"pairs,omitempty"`
	Look      int      `json:"look,omitempty"`
	Warnings  []string `json:"warnings,omitempty"`
}

// Compared reports whether o holds a comparison (a verdict).
func (o Outcome) Compared() bool { return o.Verdict != "" }

// Decided reports whether o reached faster, slower or tie.
func (o Outcome) Decided() bool {
	return o.Verdict == Faster || o.Verdict == Slower || o.Verdict == Tie
}

// OutcomeOf summarises Paired's or Unpaired's analysis: Ratio is its Median.
func OutcomeOf(c Comparison) Outcome {
	return Outcome{Ratio: finite(c.Median), Lo: finite(c.Lo), Hi: finite(c.Hi), BracketLo: finite(c.BracketLo), BracketHi: finite(c.BracketHi),
		Verdict: c.Verdict, Pairs: c.N, Warnings: slices.Clone(c.Warnings)}
}

// Outcome summarises a sequential comparison: the deciding look's
// analysis of its first Pairs pairs.
func (s SequentialComparison) Outcome() Outcome {
	o := OutcomeOf(s.Comparison)
	o.Pairs, o.Look = s.Pairs, s.Look
	return o
}

// Outcome summarises a weighted total: Ratio = B/A with the bootstrap
// interval and the fixed rule's verdict (a total is one analysis after
// every cell, not a sequence of looks).
func (t Total) Outcome() Outcome {
	return Outcome{Ratio: finite(t.Ratio), Lo: finite(t.Lo), Hi: finite(t.Hi), Verdict: t.Verdict, Warnings: slices.Clone(t.Warnings)}
}

// Compare is the comparison of paired samples a[i], b[i] every decision
// makes: by the sequential rule when seq is set (the rounds were adaptive:
// the verdict the measurement stopped on, undecided included), else by
// one fixed-n interval (Paired with o). Errors are Paired's and
// Sequential's.
func Compare(a, b []float64, o Options, seq *SequentialOptions) (Outcome, error) {
	if seq != nil {
		s, err := Sequential(a, b, *seq)
		if err != nil {
			return Outcome{}, err
		}
		return s.Outcome(), nil
	}
	c, err := Paired(a, b, o)
	if err != nil {
		return Outcome{}, err
	}
	return OutcomeOf(c), nil
}

// finite returns x, or 0 when x is NaN or infinite.
func finite(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0
	}
	return x
}

// A ChunkCell is a weighted cell at token count M.
type ChunkCell struct {
	M int
	Weighted
}

// A ChunkTotal is the production-weighted total of the cells at one M
// (M 0: of every M).
type ChunkTotal struct {
	M     int
	Cells int
	Total Total
	Err   error
}

// TotalsByM returns the WeightedTotal of the cells at each M, M ascending,
// then, when there are several M, of every cell (M = 0). Errors are kept
// per total (a total without cells is not returned).
func TotalsByM(cells []ChunkCell, o Options) []ChunkTotal {
	byM := map[int][]Weighted{}
	var ms []int
	var all []Weighted
	for _, c := range cells {
		if _, ok := byM[c.M]; !ok {
			ms = append(ms, c.M)
		}
		byM[c.M] = append(byM[c.M], c.Weighted)
		all = append(all, c.Weighted)
	}
	slices.Sort(ms)
	var out []ChunkTotal
	for _, m := range ms {
		t, err := WeightedTotal(byM[m], o)
		out = append(out, ChunkTotal{M: m, Cells: len(byM[m]), Total: t, Err: err})
	}
	if len(ms) > 1 {
		t, err := WeightedTotal(all, o)
		out = append(out, ChunkTotal{Cells: len(all), Total: t, Err: err})
	}
	return out
}
