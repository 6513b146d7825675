package policy

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/tilefit/tilefit/result"
	"github.com/tilefit/tilefit/stats"
)

// ThresholdRule names the rule Select places thresholds between measured M
// values by (see Select).
const ThresholdRule = "baseline-keeps-gaps"

// A Confirmation is a fresh paired measurement, in one cell, of a candidate
// tile (B) against the baseline tile (A).
type Confirmation struct {
	// A and B are µs per call; A[i] and B[i] come from the same round.
	A, B []float64
	// Bitwise reports that B's output is bitwise equal to A's.
	Bitwise bool
	// Failed, when not empty, says why a side could not be measured (a
	// compile, parity or numeric failure, a crash); A and B are then unused.
	Failed string
}

// A Confirmer re-measures candidate against baseline on cell in a fresh
// paired round (the CLI runs tune.ABCell; tests inject fixed samples). An
// error is a failure of the machinery, not of a candidate.
type Confirmer func(ctx context.Context, cell result.Cell, baseline, candidate string) (Confirmation, error)

// SelectOptions configure Select.
type SelectOptions struct {
	// Reference is the family's reference tile: the baseline where Baseline
	// has no tile.
	Reference string
	// Baseline is the policy to depart from; nil means Reference
	// everywhere. BaselineName describes it in the result.
	Baseline     *Policy
	BaselineName string
	// RequireBitwise admits only candidates whose output is bitwise equal
	// to the reference tile's (in the sweep) and to the baseline's (in the
	// confirmation).
	RequireBitwise bool
	// Stats gives the verdict rule (stats.DefaultOptions(): 1 % margins).
	Stats stats.Options
	// Sequential, when set, judges the winner by the sequential rule
	// (stats.Sequential) instead of one fixed-n interval: the confirmation
	// ran adaptive rounds (--rounds auto). A comparison the rule leaves
	// undecided (its budget ran out) keeps the baseline.
	Sequential *stats.SequentialOptions
	// MaxRules caps the rules per shape (0: no cap); see Select.
	MaxRules int
	// Confirm re-measures each winner against its baseline. nil decides
	// from the sweep's own paired samples (subject to the winner's curse).
	Confirm Confirmer
	// Workload names the workload, for the record.
	Workload string
}

// Select synthesises a policy from one provenance's swept cells.
//
// Per cell (shape × M): the baseline tile is o.Baseline's (else
// o.Reference); the candidates admitted are the OK, non-vendor, timed ones
// (and, with RequireBitwise, bitwise equal to the reference); the winner is
// the admitted candidate with the smallest median µs. When the winner is not
// the baseline it is confirmed: re-measured against the baseline in a fresh
// paired round (o.Confirm), and the cell departs from the baseline only when
// the verdict of stats.Paired(baseline, winner) is faster. A tie (the gain is
// inside the noise) or slower keeps the baseline, so no cell regresses by
// more than MaxRegress.
//
// Per shape, the cells' tiles (M ascending) are then compressed into rules:
// consecutive cells with the same tile share a rule. With o.MaxRules > 0 and
// more runs than that, the runs are merged by a dynamic programme that
// minimises the shape's production-weighted time Σ_M calls × µs, each cell
// allowed only its baseline or its confirmed winner (so merging never
// introduces an unconfirmed departure). Thresholds between two measured M
// values are placed by the rule "the baseline keeps the gaps" (ThresholdRule):
// between tile P measured up to M = a and tile Q from M = b > a, the
// threshold T (P for M < T, Q from T on) is
//
//	P is the baseline at a, Q a departure at b:    T = b      (Q only from its measured M on)
//	P a departure at a, Q the baseline at b:       T = a + 1  (P only up to its measured M)
//	otherwise (both departures, or both baseline): T = a + ⌈(b − a)/2⌉, the midpoint
//
// so an M nobody measured keeps the baseline unless both neighbours were
// confirmed faster than it. The first rule's tile also covers every M below
// the smallest measured M, the last rule's every M above the largest.
func Select(ctx context.Context, cells []result.CellResult, o SelectOptions) (Policy, error) {
	if len(cells) == 0 {
		return Policy{}, fmt.Errorf("select: no swept cells")
	}
	if o.Reference == "" {
		return Policy{}, fmt.Errorf("select: no reference tile")
	}
	prov := cells[0].Prov
	key := prov.Key()
	for _, c := range cells[1:] {
		if k := c.Prov.Key(); k != key {
			return Policy{}, fmt.Errorf("select: cells of two provenances (%s and %s); select one sweep", key, k)
		}
	}
	if o.Stats == (stats.Options{}) {
		o.Stats = stats.DefaultOptions()
	}
	base := o.Baseline
	if base == nil {
		u := Uniform(prov.Family, prov.Backend, o.Reference)
		base = &u
	}
	baseName := o.BaselineName
	if baseName == "" {
		baseName = "reference tile " + o.Reference + " everywhere"
	}

	p := Policy{Version: Version, Family: prov.Family, Backend: prov.Backend, Provenance: key, Sweep: &prov,
		Workload: o.Workload, Baseline: baseName, Default: base.Default,
		Options: &Options{RequireBitwise: o.RequireBitwise, Confirmed: o.Confirm != nil, MinGain: o.Stats.MinGain,
			MaxRegress: o.Stats.MaxRegress, Confidence: o.Stats.Confidence, MaxRules: o.MaxRules, ThresholdRule: ThresholdRule}}
	if o.Sequential != nil {
		p.Options.Rounds = "auto"
	}
	var last time.Time
	for _, c := range cells {
		if c.Finished.After(last) {
			last = c.Finished
		}
	}
	if !last.IsZero() {
		p.Swept = last.UTC().Format(time.RFC3339)
	}

	groups, err := groupCells(cells)
	if err != nil {
		return Policy{}, err
	}
	for _, g := range groups {
		var ds []Decision
		for _, rows := range g.ms {
			d, err := decide(ctx, rows, base, o)
			if err != nil {
				return Policy{}, err
			}
			ds = append(ds, d)
		}
		last := g.ms[len(g.ms)-1]
		lc := last[len(last)-1].Cell
		s := Shape{Shape: g.shape, N: lc.N, K: lc.K, Calls: lc.Calls}
		segs := segment(ds, o.MaxRules)
		s.Rules = thresholds(ds, segs)
		p.Shapes = append(p.Shapes, s)
		for i := range ds {
			tile, _ := p.Lookup(ds[i].Shape, ds[i].M)
			if tile != ds[i].Chosen {
				ds[i].Reason += fmt.Sprintf("; the shape's rules (at most %d, --max-rules) give %s here", o.MaxRules, tile)
				ds[i].Chosen = tile
			}
		}
		p.Cells = append(p.Cells, ds...)
	}
	// Shapes the sweep did not cover keep the baseline's rules.
	for _, s := range base.Shapes {
		if p.Shape(s.Shape) == nil {
			p.Shapes = append(p.Shapes, Shape{Shape: s.Shape, N: s.N, K: s.K, Calls: s.Calls, Rules: slices.Clone(s.Rules)})
		}
	}
	if err := p.Validate(); err != nil {
		return Policy{}, fmt.Errorf("select: internal error: %w", err)
	}
	return p, nil
}

// shapeGroup is one shape's cells: ms[i] holds the stored rows of the i-th
// M (ascending), in insertion order.
type shapeGroup struct {
	shape string
	ms    [][]result.CellResult
}

// groupCells groups rows by shape (first appearance order) and M. A shape
// name swept with two sizes (two workloads sharing a name) is an error.
func groupCells(cells []result.CellResult) ([]shapeGroup, error) {
	var groups []shapeGroup
	idx := map[string]int{}
	byM := map[string]map[int]int{}
	for _, c := range cells {
		name := c.Cell.Shape
		gi, ok := idx[name]
		if ok {
			if first := groups[gi].ms[0][0].Cell; first.N != c.Cell.N || first.K != c.Cell.K {
				return nil, fmt.Errorf("select: shape %s was swept as N %d, K %d and as N %d, K %d; select one workload (--workload)",
					name, first.N, first.K, c.Cell.N, c.Cell.K)
			}
		} else {
			gi = len(groups)
			idx[name] = gi
			groups = append(groups, shapeGroup{shape: name})
			byM[name] = map[int]int{}
		}
		g := &groups[gi]
		mi, ok := byM[name][c.Cell.M]
		if !ok {
			mi = len(g.ms)
			byM[name][c.Cell.M] = mi
			g.ms = append(g.ms, nil)
		}
		g.ms[mi] = append(g.ms[mi], c)
	}
	for i := range groups {
		slices.SortStableFunc(groups[i].ms, func(a, b []result.CellResult) int { return cmp.Compare(a[0].Cell.M, b[0].Cell.M) })
	}
	return groups, nil
}

// latest returns the latest stored outcome of every tile of a cell's rows
// (A/A twins left out), and the latest vendor candidate.
func latest(rows []result.CellResult) (map[string]result.Candidate, *result.Candidate) {
	out := map[string]result.Candidate{}
	var vendor *result.Candidate
	for _, r := range rows {
		for _, c := range r.Candidates {
			if c.AA {
				continue
			}
			if c.Vendor {
				if c.Status == result.OK && len(c.Samples) > 0 {
					v := c
					vendor = &v
				}
				continue
			}
			out[c.Tile] = c
		}
	}
	return out, vendor
}

// decide makes one cell's Decision (Chosen = the baseline or the confirmed
// winner; compression may change it later).
func decide(ctx context.Context, rows []result.CellResult, base *Policy, o SelectOptions) (Decision, error) {
	cell := rows[len(rows)-1].Cell
	d := Decision{Shape: cell.Shape, N: cell.N, K: cell.K, M: cell.M, Calls: cell.Calls}
	bt, ok := base.Lookup(cell.Shape, cell.M)
	if !ok {
		bt = o.Reference
		d.Warnings = append(d.Warnings, "the baseline policy has no tile for this shape; the reference tile stands in")
	}
	d.Baseline, d.Chosen = bt, bt
	cands, vendor := latest(rows)
	if vendor != nil {
		d.Vendor, d.VendorUS = vendor.Tile, stats.Median(vendor.Samples)
	}

	var best *result.Candidate
	bestUS := math.Inf(1)
	tiles := make([]string, 0, len(cands))
	for t := range cands {
		tiles = append(tiles, t)
	}
	slices.Sort(tiles)
	for _, t := range tiles {
		c := cands[t]
		if c.Status != result.OK || len(c.Samples) == 0 || (o.RequireBitwise && !c.Bitwise) {
			continue
		}
		if us := rankUS(rows, c); us < bestUS {
			best, bestUS = &c, us
		}
	}
	bc, baseSwept := cands[bt]
	baseSwept = baseSwept && bc.Status == result.OK && len(bc.Samples) > 0
	if best == nil {
		d.Reason = "no admitted candidate in the sweep; baseline kept"
		if baseSwept {
			d.BaselineSamples = slices.Clone(bc.Samples)
			d.BaselineUS = stats.Median(bc.Samples)
		}
		return d, nil
	}
	d.Best, d.Bitwise = best.Tile, best.Bitwise
	if baseSwept {
		d.SweepRatio = bestUS / stats.Median(bc.Samples)
	}
	if best.Tile == bt {
		d.Reason = "the baseline is the fastest admitted candidate"
		d.BaselineSamples = slices.Clone(bc.Samples)
		d.BaselineUS = stats.Median(bc.Samples)
		d.BestSamples, d.BestUS = d.BaselineSamples, d.BaselineUS
		return d, nil
	}

	var a, b []float64
	bitwise := true
	source := "fresh paired round"
	if o.Confirm != nil {
		conf, err := o.Confirm(ctx, cellOf(rows), bt, best.Tile)
		if err != nil {
			if ctx.Err() != nil {
				return d, fmt.Errorf("confirm %s M=%d: %w", cell.Shape, cell.M, err)
			}
			d.Reason = fmt.Sprintf("confirmation of %s failed (%v); baseline kept", best.Tile, err)
			return d, nil
		}
		if conf.Failed != "" {
			d.Reason = fmt.Sprintf("confirmation of %s failed: %s; baseline kept", best.Tile, conf.Failed)
			return d, nil
		}
		d.Confirmed = true
		a, b, bitwise = conf.A, conf.B, conf.Bitwise
	} else {
		source = "sweep samples, not re-measured"
		a, b = pairedInSweep(rows, bt, best.Tile)
		if a == nil {
			d.Reason = fmt.Sprintf("%s and the baseline were not timed in the same rounds and --confirm is off; baseline kept", best.Tile)
			return d, nil
		}
	}
	d.BaselineSamples, d.BestSamples = slices.Clone(a), slices.Clone(b)
	cmpn, err := compare(a, b, o)
	if err != nil {
		d.Reason = fmt.Sprintf("cannot compare %s with the baseline: %v; baseline kept", best.Tile, err)
		d.BaselineSamples, d.BestSamples = nil, nil
		return d, nil
	}
	d.BaselineUS, d.BestUS = stats.Median(a), stats.Median(b)
	d.Ratio, d.Lo, d.Hi = cmpn.Median, cmpn.Lo, cmpn.Hi
	d.BracketLo, d.BracketHi = cmpn.BracketLo, cmpn.BracketHi
	d.Verdict = string(cmpn.Verdict)
	d.Warnings = append(d.Warnings, cmpn.Warnings...)
	d.Bitwise = d.Bitwise && bitwise
	switch {
	case o.RequireBitwise && !bitwise:
		d.Reason = fmt.Sprintf("%s's output differs from the baseline's (%s); baseline kept", best.Tile, source)
	case cmpn.Verdict == stats.Faster:
		d.Chosen = best.Tile
		d.Reason = fmt.Sprintf("%s confirmed faster than the baseline (%s)", best.Tile, source)
	case cmpn.Verdict == stats.Slower:
		d.Reason = fmt.Sprintf("%s measured slower than the baseline (%s): the sweep's lead was luck; baseline kept", best.Tile, source)
	case cmpn.Verdict == stats.Undecided:
		d.Reason = fmt.Sprintf("%s undecided against the baseline after %d rounds (%s; the budget ran out): baseline kept", best.Tile, len(a), source)
	default:
		d.Reason = fmt.Sprintf("%s's gain is inside the noise (%s); baseline kept", best.Tile, source)
	}
	return d, nil
}

// compare judges b against a by the sequential rule when o.Sequential is
// set, else by one fixed-n interval (stats.Paired).
func compare(a, b []float64, o SelectOptions) (stats.Comparison, error) {
	if o.Sequential == nil {
		return stats.Paired(a, b, o.Stats)
	}
	s, err := stats.Sequential(a, b, *o.Sequential)
	return s.Comparison, err
}

// rankUS is the time a candidate ranks by: its median, or, when it left
// adaptive rounds early (fewer samples than the reference of its row), the
// reference's median × its paired ratio (stats.AnchoredMedian), so drift
// between the rounds it was in and the later ones does not rank it.
func rankUS(rows []result.CellResult, c result.Candidate) float64 {
	for i := len(rows) - 1; i >= 0; i-- {
		own := rows[i].Find(c.Tile)
		if own == nil || own.AA {
			continue
		}
		ref := rows[i].Find(rows[i].Reference)
		if ref != nil && !ref.AA && ref.Status == result.OK && len(c.Samples) < len(ref.Samples) {
			if us := stats.AnchoredMedian(ref.Samples, c.Samples); us > 0 {
				return us
			}
		}
		break
	}
	return stats.Median(c.Samples)
}

// cellOf is the cell of a cell's latest row.
func cellOf(rows []result.CellResult) result.Cell { return rows[len(rows)-1].Cell }

// pairedInSweep returns the samples of tiles a and b from the latest row
// that timed both in the same rounds, or nil.
func pairedInSweep(rows []result.CellResult, a, b string) ([]float64, []float64) {
	for i := len(rows) - 1; i >= 0; i-- {
		ca, cb := rows[i].Find(a), rows[i].Find(b)
		if ca == nil || cb == nil || ca.AA || cb.AA || ca.Status != result.OK || cb.Status != result.OK {
			continue
		}
		// A tile that left adaptive rounds early holds a prefix of the
		// rounds: its samples pair with the other's first ones.
		if n := min(len(ca.Samples), len(cb.Samples)); n > 0 {
			return ca.Samples[:n], cb.Samples[:n]
		}
	}
	return nil, nil
}

// A seg is a run of consecutive cells (indices from..to inclusive) of one
// shape sharing a tile.
type seg struct {
	from, to int
	tile     string
}

// options returns the tiles a cell may take with their weighted cost
// (calls × median µs; 0 when unknown): always the baseline, and the winner
// when it was chosen.
func options(d Decision) map[string]float64 {
	opts := map[string]float64{d.Baseline: weight(d) * nz(d.BaselineUS)}
	if d.Chosen != d.Baseline {
		opts[d.Chosen] = weight(d) * nz(d.BestUS)
	}
	return opts
}

func weight(d Decision) float64 { return float64(max(d.Calls, 1)) }

func nz(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0
	}
	return x
}

// runs groups consecutive cells with the same chosen tile.
func runs(ds []Decision) []seg {
	var out []seg
	for i, d := range ds {
		if len(out) > 0 && out[len(out)-1].tile == d.Chosen {
			out[len(out)-1].to = i
			continue
		}
		out = append(out, seg{from: i, to: i, tile: d.Chosen})
	}
	return out
}

// segment returns the shape's runs, merged to at most maxRules (when > 0)
// by minimising Σ calls × µs with every cell on its baseline or its
// confirmed winner. When no such merge exists (a baseline that changes tile
// more often than maxRules allows) the runs are returned as they are.
func segment(ds []Decision, maxRules int) []seg {
	r := runs(ds)
	if maxRules <= 0 || len(r) <= maxRules {
		return r
	}
	n := len(ds)
	opts := make([]map[string]float64, n)
	tileSet := map[string]bool{}
	for i, d := range ds {
		opts[i] = options(d)
		for t := range opts[i] {
			tileSet[t] = true
		}
	}
	tiles := make([]string, 0, len(tileSet))
	for t := range tileSet {
		tiles = append(tiles, t)
	}
	slices.Sort(tiles)
	// segCost is the cost of cells [i, j] on tile t, +Inf when t is not an
	// option of one of them.
	segCost := func(i, j int, t string) float64 {
		var s float64
		for c := i; c <= j; c++ {
			v, ok := opts[c][t]
			if !ok {
				return math.Inf(1)
			}
			s += v
		}
		return s
	}
	inf := math.Inf(1)
	// dp[s][j]: least cost of cells [0, j) in exactly s segments.
	type back struct {
		i    int
		tile string
	}
	dp := make([][]float64, maxRules+1)
	bk := make([][]back, maxRules+1)
	for s := range dp {
		dp[s] = make([]float64, n+1)
		bk[s] = make([]back, n+1)
		for j := range dp[s] {
			dp[s][j] = inf
		}
	}
	dp[0][0] = 0
	for s := 1; s <= maxRules; s++ {
		for j := 1; j <= n; j++ {
			for i := 0; i < j; i++ {
				if math.IsInf(dp[s-1][i], 1) {
					continue
				}
				for _, t := range tiles {
					if c := dp[s-1][i] + segCost(i, j-1, t); c < dp[s][j] {
						dp[s][j], bk[s][j] = c, back{i, t}
					}
				}
			}
		}
	}
	bestS := -1
	for s := 1; s <= maxRules; s++ {
		if !math.IsInf(dp[s][n], 1) && (bestS < 0 || dp[s][n] < dp[bestS][n]) {
			bestS = s
		}
	}
	if bestS < 0 {
		return r
	}
	var out []seg
	for s, j := bestS, n; s > 0; s-- {
		b := bk[s][j]
		out = append(out, seg{from: b.i, to: j - 1, tile: b.tile})
		j = b.i
	}
	slices.Reverse(out)
	// Merge neighbours that ended up on the same tile.
	merged := out[:1]
	for _, sg := range out[1:] {
		if merged[len(merged)-1].tile == sg.tile {
			merged[len(merged)-1].to = sg.to
			continue
		}
		merged = append(merged, sg)
	}
	return merged
}

// thresholds turns a shape's segments (cells ds sorted by M) into rules.
// The first segment's tile covers every M below its cells, the last
// segment's every M above, and a segment covers the M between its own
// cells. Between two segments — tile P measured up to M = a, tile Q from
// M = b > a — the threshold T (P for M < T, Q from T on) is placed by the
// rule "the baseline keeps the gaps":
//
//	P is the baseline at a, Q a departure at b:  T = b      (Q only from its measured M on)
//	P a departure at a, Q the baseline at b:     T = a + 1  (P only up to its measured M)
//	otherwise (both departures, or both baseline): T = a + ⌈(b − a)/2⌉, the midpoint
//
// so an M nobody measured keeps the baseline unless both neighbours were
// confirmed faster than it.
func thresholds(ds []Decision, segs []seg) []Rule {
	rules := make([]Rule, 0, len(segs))
	for k, sg := range segs {
		if k == len(segs)-1 {
			rules = append(rules, Rule{Tile: sg.tile})
			break
		}
		next := segs[k+1]
		a, b := ds[sg.to], ds[next.from]
		departP := sg.tile != a.Baseline
		departQ := next.tile != b.Baseline
		var t int
		switch {
		case !departP && departQ:
			t = b.M
		case departP && !departQ:
			t = a.M + 1
		default:
			t = a.M + (b.M-a.M+1)/2
		}
		rules = append(rules, Rule{Tile: sg.tile, Below: t})
	}
	return rules
}
