package tune

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/tilefit/tilefit/kernel"
	"github.com/tilefit/tilefit/policy"
	"github.com/tilefit/tilefit/result"
	"github.com/tilefit/tilefit/stats"
)

// A TileRef is a tile name parsed once into its family and parameters and
// carried as such: the display name (a family other than the first is
// prefixed "family/", as in a sweep's cells), the family, the assignment.
type TileRef struct {
	Name   string
	Family *kernel.Family
	Params kernel.Params
}

// ResolveTile parses name, "TILE" of fams[0] or "FAMILY/TILE" of any of
// fams, into a TileRef.
func ResolveTile(fams []*kernel.Family, name string) (TileRef, error) {
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
			return TileRef{}, fmt.Errorf("tile %q: no family %s here (families: %s)", name, famName, strings.Join(names, ", "))
		}
		bare = rest
	}
	p, err := f.ParseTile(bare)
	if err != nil {
		return TileRef{}, err
	}
	display := f.TileName(p)
	if f != fams[0] {
		display = f.Name + "/" + display
	}
	return TileRef{Name: display, Family: f, Params: p}, nil
}

// The kinds of an ABSpec.
const (
	ABTile   = "tile"
	ABPolicy = "policy"
	ABSource = "source"
)

// An ABSpec is one side of an A/B comparison (tilefit ab --a/--b), parsed:
// a tile, a policy's tile per cell, or a source revision (at a tile, or
// at the other side's tiles).
type ABSpec struct {
	// Raw is the spec as given ("tile:64_128_2").
	Raw string
	// Kind is ABTile, ABPolicy or ABSource.
	Kind string
	// Tile is the side's tile (a source side's only with FILE@TILE).
	Tile TileRef
	// Policy and Tiles are a policy side's policy and its tiles, parsed
	// once (PolicyTiles).
	Policy *policy.Policy
	Tiles  map[string]TileRef
	// Source is the side's source text ("" = the family's built-in one).
	Source string
	// Key identifies the side's content, for A/A detection.
	Key string
}

// Fixed reports whether the side names its tile in every cell: tile: and
// policy: sides, and source:FILE@TILE. A source:FILE side without a tile
// runs the other side's tile (or, against another such side, every tile).
func (s ABSpec) Fixed() bool { return s.Kind != ABSource || s.Tile.Name != "" }

// TileFor is the side's tile in cell c (ok false for a source side
// without a tile) and a note when a policy had to fall back to the
// reference tile of fams[0].
func (s ABSpec) TileFor(fams []*kernel.Family, c result.Cell) (t TileRef, ok bool, note string) {
	switch s.Kind {
	case ABTile:
		return s.Tile, true, ""
	case ABSource:
		return s.Tile, s.Fixed(), ""
	case ABPolicy:
		if name, ok := s.Policy.Lookup(c.Shape, c.M); ok {
			return s.Tiles[name], true, ""
		}
		ref, _ := ResolveTile(fams, fams[0].Reference)
		return ref, true, "policy has no tile for " + c.Shape + "; reference tile used"
	}
	return TileRef{}, false, ""
}

// PolicyTiles parses every tile a policy names (its rules and default)
// once, as tiles of fams (see ResolveTile), keyed by the policy's name.
func PolicyTiles(p policy.Policy, fams []*kernel.Family) (map[string]TileRef, error) {
	names := []string{}
	if p.Default != "" {
		names = append(names, p.Default)
	}
	for _, s := range p.Shapes {
		for _, r := range s.Rules {
			names = append(names, r.Tile)
		}
	}
	out := map[string]TileRef{}
	for _, n := range names {
		if _, ok := out[n]; ok {
			continue
		}
		t, err := ResolveTile(fams, n)
		if err != nil {
			return nil, err
		}
		out[n] = t
	}
	return out, nil
}

// CheckPolicyFamilies checks that policy p is for backend be and for
// families among fams (the policy's family list, comma-separated).
func CheckPolicyFamilies(p policy.Policy, fams []*kernel.Family, be string) error {
	have := map[string]bool{}
	var names []string
	for _, f := range fams {
		have[f.Name] = true
		names = append(names, f.Name)
	}
	ok := p.Backend == be
	for _, f := range strings.Split(p.Family, ",") {
		ok = ok && have[f]
	}
	if !ok {
		return fmt.Errorf("is for family %s on %s, not %s on %s", p.Family, p.Backend, strings.Join(names, ","), be)
	}
	return nil
}

// An ABPair is one comparison of an A/B run: a cell and the tiles of the
// two sides there.
type ABPair struct {
	Cell         result.Cell
	TileA, TileB TileRef
	// Group is the totals group: the tile of a source A/B over several
	// tiles, else "".
	Group string
	Note  string
}

// ABPairs lists the comparisons of sides a and b over cells (of the
// families fams, fams[0] the one a source side edits): per cell the two
// sides' tiles; a source side without a tile runs the other side's; two
// such sides run every tile of tiles.
func ABPairs(a, b ABSpec, fams []*kernel.Family, cells []result.Cell, tiles []TileRef) []ABPair {
	var pairs []ABPair
	for _, c := range cells {
		ta, _, na := a.TileFor(fams, c)
		tb, _, nb := b.TileFor(fams, c)
		note := strings.Trim(na+"; "+nb, "; ")
		switch {
		case !a.Fixed() && !b.Fixed():
			for _, t := range tiles {
				g := ""
				if len(tiles) > 1 {
					g = t.Name
				}
				pairs = append(pairs, ABPair{Cell: c, TileA: t, TileB: t, Group: g})
			}
		case !a.Fixed():
			pairs = append(pairs, ABPair{Cell: c, TileA: tb, TileB: tb, Note: note})
		case !b.Fixed():
			pairs = append(pairs, ABPair{Cell: c, TileA: ta, TileB: ta, Note: note})
		default:
			pairs = append(pairs, ABPair{Cell: c, TileA: ta, TileB: tb, Note: note})
		}
	}
	return pairs
}

// swapPairs returns pairs with the tiles of A and B swapped.
func swapPairs(pairs []ABPair) []ABPair {
	out := slices.Clone(pairs)
	for i := range out {
		out[i].TileA, out[i].TileB = out[i].TileB, out[i].TileA
	}
	return out
}

// An ABRun is a whole A/B comparison (tilefit ab) ready to measure.
type ABRun struct {
	A, B ABSpec
	// Family is the family a source side edits (the operator's reference
	// family, or the first of --family).
	Family *kernel.Family
	Pairs  []ABPair
	// Reverse runs every pair again with the sides swapped and compares
	// the two runs (result.ABReport.Reversed, Agreement).
	Reverse bool
	Options ABOptions
	// Stats are the verdict's options; Sequential the adaptive rule the
	// rounds were stopped by (nil: fixed rounds).
	Stats      stats.Options
	Sequential *stats.SequentialOptions
	// Backend, Device, Workload and Ms describe the run in the report.
	Backend, Device, Workload string
	Ms                        []int
	// Step, when set, is called after each comparison with its name and
	// a one-line summary (progress).
	Step func(what, summary string)
}

// An ABInterrupted error ends an A/B run that ctx stopped.
type ABInterrupted struct {
	Done, Total int
	Reversed    bool
}

func (e *ABInterrupted) Error() string {
	s := fmt.Sprintf("interrupted after %d of %d comparisons", e.Done, e.Total)
	if e.Reversed {
		s += " of the reversed run"
	}
	return s
}

// RunAB measures every pair of r on ex (ABCell) and analyses them into
// the report: per cell the ratio B/A, its interval and verdict; the
// production-weighted totals; the verdict counts; on A/A the noise floor;
// with Reverse the reversed run and the agreement of the two. A side that
// does not compile is an error naming it; an interrupt an *ABInterrupted.
func RunAB(ctx context.Context, ex Executor, r ABRun) (result.ABReport, error) {
	type pass struct {
		a, b     ABSpec
		pairs    []ABPair
		reversed bool
	}
	runs := []pass{{a: r.A, b: r.B, pairs: r.Pairs}}
	if r.Reverse {
		runs = append(runs, pass{a: r.B, b: r.A, pairs: swapPairs(r.Pairs), reversed: true})
	}
	var reps []result.ABReport
	for _, p := range runs {
		rows, err := r.measure(ctx, ex, p.a, p.b, p.pairs, p.reversed)
		if err != nil {
			return result.ABReport{}, err
		}
		rep := result.ABReport{A: p.a.Raw, B: p.b.Raw, AA: p.a.Key == p.b.Key, Backend: r.Backend, Device: r.Device, Family: r.Family.Name,
			Workload: r.Workload, Ms: r.Ms, MinGain: r.Stats.MinGain, MaxRegress: r.Stats.MaxRegress, Confidence: r.Stats.Confidence,
			Rounds: fmt.Sprint(r.Options.Measure.Rounds), Cells: rows}
		if r.Sequential != nil {
			rep.Rounds, rep.LookConfidence = result.RoundsAuto, r.Sequential.LookConfidence()
		}
		rep.Totals, rep.Warnings = ABTotals(rep.Cells, r.Stats)
		rep.Verdicts = CountVerdicts(rep.Cells, r.Stats.Confidence)
		if rep.AA {
			rep.Noise = Calibrate(rep.Cells)
		}
		reps = append(reps, rep)
	}
	rep := reps[0]
	if r.Reverse {
		rep.Reversed = &reps[1]
		rep.Agreement = ABAgreements(reps[0].Cells, reps[1].Cells)
	}
	return rep, nil
}

// measure compares every pair in paired rounds (ABCell) with sides a and
// b and returns one row per pair (ABRowOf).
func (r ABRun) measure(ctx context.Context, ex Executor, a, b ABSpec, pairs []ABPair, reversed bool) ([]result.ABRow, error) {
	var rows []result.ABRow
	what := ""
	if reversed {
		what = "reversed: "
	}
	for i, p := range pairs {
		for _, side := range []struct {
			spec ABSpec
			tile TileRef
		}{{a, p.TileA}, {b, p.TileB}} {
			if side.spec.Kind == ABSource && side.tile.Family != r.Family {
				return nil, fmt.Errorf("%s M=%d: a source: side edits family %s, but the tile here is %s", p.Cell.Shape, p.Cell.M, r.Family.Name, side.tile.Name)
			}
		}
		res, err := ABCell(ctx, ex, r.Family, p.Cell, ABSide{Label: "A", Source: a.Source, Family: p.TileA.Family, Params: p.TileA.Params},
			ABSide{Label: "B", Source: b.Source, Family: p.TileB.Family, Params: p.TileB.Params}, r.Options)
		if err != nil {
			if ctx.Err() != nil {
				return nil, &ABInterrupted{Done: i, Total: len(pairs), Reversed: reversed}
			}
			return nil, fmt.Errorf("%s M=%d: %w", p.Cell.Shape, p.Cell.M, err)
		}
		for j, side := range []ABSpec{a, b} {
			if j < len(res.Candidates) && res.Candidates[j].Status == result.CompileFailed {
				return nil, fmt.Errorf("side %s (%s) does not compile at tile %s:\n%s", []string{"A", "B"}[j], side.Raw,
					[]string{p.TileA.Name, p.TileB.Name}[j], res.Candidates[j].Detail)
			}
		}
		row := ABRowOf(p, res, r.Stats, r.Sequential)
		rows = append(rows, row)
		if r.Step != nil {
			r.Step(fmt.Sprintf("%s%s M=%d %s:", what, p.Cell.Shape, p.Cell.M, row.Tiles()), rowSummary(row))
		}
	}
	return rows, nil
}

// ABRowOf analyses one ABCell result: by the sequential rule when seq is
// set (the rounds were adaptive), else by one fixed-n interval.
func ABRowOf(p ABPair, res result.CellResult, so stats.Options, seq *stats.SequentialOptions) result.ABRow {
	c := p.Cell
	row := result.ABRow{Shape: c.Shape, N: c.N, K: c.K, M: c.M, Calls: c.Calls, TileA: p.TileA.Name, TileB: p.TileB.Name, Group: p.Group, Rounds: res.Rounds}
	if p.Note != "" {
		row.Notes = append(row.Notes, p.Note)
	}
	if len(res.Candidates) != 2 {
		row.Status = fmt.Sprintf("%d results for 2 sides", len(res.Candidates))
		return row
	}
	ca, cb := res.Candidates[0], res.Candidates[1]
	var failed []string
	for i, cand := range []result.Candidate{ca, cb} {
		if cand.Status != result.OK {
			failed = append(failed, fmt.Sprintf("%s %s: %s", []string{"A", "B"}[i], cand.Status, FirstLine(cand.Detail)))
		}
	}
	if len(failed) > 0 {
		row.Status = strings.Join(failed, "; ")
		return row
	}
	row.Status = "ok"
	row.Bitwise = cb.Bitwise
	row.ASamples, row.BSamples = ca.Samples, cb.Samples
	row.AUS, row.BUS = stats.Median(ca.Samples), stats.Median(cb.Samples)
	out, err := stats.Compare(ca.Samples, cb.Samples, so, seq)
	if err != nil {
		row.Status = "no comparison: " + err.Error()
		return row
	}
	row.Outcome = out
	if seq != nil && out.Verdict == stats.Undecided {
		why := "the budget ran out"
		if looks := seq.Looks(); out.Pairs >= looks[len(looks)-1] {
			why = "the rule's looks are spent"
			row.LooksSpent = true
		}
		row.Notes = append(row.Notes, fmt.Sprintf("undecided after %d rounds (%s): the interval straddles an edge of the ±%g%% band", out.Pairs, why, 100*so.MaxRegress))
	}
	return row
}

// FirstLine returns s up to its first newline.
func FirstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

func rowSummary(r result.ABRow) string {
	if r.Status != "ok" {
		return r.Status
	}
	bits := "bitwise identical"
	if !r.Bitwise {
		bits = "outputs differ"
	}
	return fmt.Sprintf("ratio %.3f [%.3f, %.3f] %s after %d rounds, %s", r.Ratio, r.Lo, r.Hi, r.Verdict, r.Rounds, bits)
}

// ABTotals computes per group and M (and over every M) the weighted totals
// of the rows compared successfully (stats.TotalsByM). A total is one
// analysis after every cell is done (no looks), so its verdict keeps the
// fixed rule (stats.Decide: faster, slower, tie inside the ±1% band, else undecided), whatever the cells'
// rounds were.
func ABTotals(rows []result.ABRow, so stats.Options) ([]result.ABTotal, []string) {
	var groups []string
	byGroup := map[string][]result.ABRow{}
	for _, r := range rows {
		if _, ok := byGroup[r.Group]; !ok {
			groups = append(groups, r.Group)
		}
		byGroup[r.Group] = append(byGroup[r.Group], r)
	}
	var out []result.ABTotal
	var warns []string
	for _, g := range groups {
		var cells []stats.ChunkCell
		skipped := 0
		for _, r := range byGroup[g] {
			if r.Status != "ok" {
				skipped++
				continue
			}
			cells = append(cells, stats.ChunkCell{M: r.M, Weighted: stats.Weighted{Weight: float64(max(r.Calls, 1)), A: r.ASamples, B: r.BSamples}})
		}
		if skipped > 0 {
			name := "the totals"
			if g != "" {
				name = "the totals of tile " + g
			}
			warns = append(warns, fmt.Sprintf("%d failed cells left out of %s", skipped, name))
		}
		for _, t := range stats.TotalsByM(cells, so) {
			if t.Err != nil {
				warns = append(warns, fmt.Sprintf("total M=%d: %v", t.M, t.Err))
				continue
			}
			out = append(out, result.ABTotal{Group: g, M: t.M, Cells: t.Cells, A: t.Total.A, B: t.Total.B, Outcome: t.Total.Outcome()})
		}
	}
	return out, warns
}

// Calibrate summarises an A/A run: the noise floor.
func Calibrate(rows []result.ABRow) *result.ABCalibration {
	var hw []float64
	c := &result.ABCalibration{}
	for _, r := range rows {
		if r.Status != "ok" {
			continue
		}
		c.Cells++
		hw = append(hw, (r.Hi-r.Lo)/2)
		switch stats.Verdict(r.Verdict) {
		case stats.Faster, stats.Slower:
			c.FalseVerdicts++
		case stats.Undecided:
			c.Undecided++
		}
		if !r.Bitwise {
			c.NotBitwise++
		}
	}
	if len(hw) > 0 {
		c.MedianHalfWidth = stats.Median(hw)
		c.MaxHalfWidth = slices.Max(hw)
	}
	return c
}

// CountVerdicts counts the compared rows' verdicts and the most false ones
// to expect among them at confidence conf.
func CountVerdicts(rows []result.ABRow, conf float64) result.ABVerdicts {
	var v result.ABVerdicts
	for _, r := range rows {
		if r.Status != "ok" {
			continue
		}
		v.Compared++
		switch stats.Verdict(r.Verdict) {
		case stats.Faster:
			v.Faster++
		case stats.Slower:
			v.Slower++
		case stats.Tie:
			v.Tie++
		case stats.Undecided:
			v.Undecided++
		}
	}
	v.ExpectedFalse = stats.ExpectedFalse(v.Compared, conf)
	return v
}

// mirror turns a verdict on A/B into the verdict on B/A.
func mirror(v string) string {
	switch stats.Verdict(v) {
	case stats.Faster:
		return string(stats.Slower)
	case stats.Slower:
		return string(stats.Faster)
	}
	return v
}

// ABAgreements pairs the rows of a forward run with those of its reversed
// run (the same pairs in the same order, tiles swapped).
func ABAgreements(fwd, rev []result.ABRow) []result.ABAgreement {
	var out []result.ABAgreement
	for i, f := range fwd {
		g := result.ABAgreement{Shape: f.Shape, M: f.M, TileA: f.TileA, TileB: f.TileB}
		if i >= len(rev) {
			g.Note = "not run reversed"
			out = append(out, g)
			continue
		}
		r := rev[i]
		switch {
		case f.Status != "ok":
			g.Note = "forward: " + f.Status
		case r.Status != "ok":
			g.Note = "reversed: " + r.Status
		default:
			g.Ratio, g.Lo, g.Hi, g.Verdict = f.Ratio, f.Lo, f.Hi, string(f.Verdict)
			if r.Ratio > 0 && r.Lo > 0 && r.Hi > 0 {
				g.ReversedRatio, g.ReversedLo, g.ReversedHi = 1/r.Ratio, 1/r.Hi, 1/r.Lo
			}
			g.ReversedVerdict = mirror(string(r.Verdict))
			g.Agree = g.Verdict == g.ReversedVerdict && f.Decided()
			g.Overlap = g.ReversedRatio > 0 && g.Lo <= g.ReversedHi && g.ReversedLo <= g.Hi
		}
		out = append(out, g)
	}
	return out
}
