package policy

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/tilefit/tilefit/kernel"
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
// paired round (the CLI runs tune.ABCell with the tiles' families and
// parameters; tests inject fixed samples). An error is a failure of the
// machinery, not of a candidate.
type Confirmer func(ctx context.Context, cell result.Cell, baseline, candidate Tile) (Confirmation, error)

// SelectOptions configure Select.
type SelectOptions struct {
	// Reference is the family's reference tile: the baseline where Baseline
	// has no tile.
	Reference string
	// Baseline is the policy to depart from; nil means Reference
	// everywhere. BaselineName describes it in the result.
	Baseline     *Policy
	BaselineName string
	// RequireBitwise admits only candidates bitwise equal to their numerics
	// class's reference in the sweep (for the reference's class, the
	// reference tile; for another class, its first verified tile, which
	// the sweep's parity check requires of every OK tile of the class) and
	// to the baseline in the confirmation (within the baseline's class).
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
	// Describe gives a stored candidate's family, numerics class and
	// parameters (a tile the sweep lacks, e.g. of the baseline policy,
	// comes as a Candidate with only its Tile). nil: the candidate's
	// Family (else the sweep's first), a class named after the family, its
	// stored Params.
	Describe func(c result.Candidate) (Tile, error)
	// Operator and Dims record the operator and its dimensions other than
	// M, in its order (Policy.Operator, Policy.Dims).
	Operator string
	Dims     []string
}

// invarianceFailure starts the detail of a tile the sweep's
// batch-invariance check failed (verify.Invariance.Message).
const invarianceFailure = "not batch-invariant"

// Select synthesises a policy from one provenance's swept cells.
//
// Per shape, first the numerics class: the tiles of a shape's rules must
// be of one class at every M, so that the engine's outputs do not change
// with M (batch invariance). The baseline's class (the reference tile's)
// is kept unless another class, with an admitted tile at every measured M,
// has a smaller production-weighted sweep time Σ_M calls × µs (each M on
// the class's fastest tile) and its per-M winners, re-measured against the
// baseline (o.Confirm, else the sweep's paired samples), make a shape total
// (stats.WeightedTotal) whose verdict is faster: then every M of the shape
// takes that class's winner. Tiles that failed the sweep's
// batch-invariance check on any M of the shape are left out of it.
//
// Within the baseline's class, per cell (shape × M): the baseline tile is
// o.Baseline's (else o.Reference); the candidates admitted are the OK,
// non-vendor, timed ones of the class (with RequireBitwise, bitwise equal
// to the reference); the winner is the admitted candidate with the
// smallest median µs. When the winner is not the baseline it is confirmed:
// re-measured against the baseline in a fresh paired round (o.Confirm),
// and the cell departs from the baseline only when the verdict of
// stats.Compare(baseline, winner) is faster. A tie (the gain is inside the
// noise), slower or undecided keeps the baseline, so no cell regresses by
// more than MaxRegress.
//
// Per shape, the cells' tiles (M ascending) are then compressed into rules:
// consecutive cells with the same tile share a rule. With o.MaxRules > 0 and
// more runs than that, the runs are merged by a dynamic programme that
// minimises the shape's production-weighted time Σ_M calls × µs, each cell
// allowed only its baseline (when of the shape's class) or its chosen tile
// (so merging never introduces an unconfirmed departure). The M between
// two measured cells follow the rule "the baseline keeps the gaps" (see
// thresholds): the baseline policy's own tile there, unless both
// neighbours departed from it.
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
	op := o.Operator
	if op == "" {
		op = prov.Operator
	}

	p := Policy{Version: Version, Family: prov.Family, Backend: prov.Backend, Operator: op, Dims: slices.Clone(o.Dims),
		Provenance: key, Sweep: &prov, Workload: o.Workload, Baseline: baseName, Default: base.Default,
		Options: &Options{RequireBitwise: o.RequireBitwise, Confirmed: o.Confirm != nil, MinGain: o.Stats.MinGain,
			MaxRegress: o.Stats.MaxRegress, Confidence: o.Stats.Confidence, MaxRules: o.MaxRules, ThresholdRule: ThresholdRule},
		Invariance: &Invariance{}}
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
	sel := &selector{o: o, base: baseline{base, o.Reference}, prov: prov, tiles: map[string]Tile{}}
	for _, g := range groups {
		s, ds, err := sel.shape(ctx, g, &p)
		if err != nil {
			return Policy{}, err
		}
		p.Shapes = append(p.Shapes, s)
		p.Cells = append(p.Cells, ds...)
	}
	// Shapes the sweep did not cover keep the baseline's rules.
	for _, s := range base.Shapes {
		if p.Shape(s.Shape) == nil {
			kept := s
			kept.Rules = slices.Clone(s.Rules)
			kept.Class = ""
			p.Shapes = append(p.Shapes, kept)
			p.Invariance.Unchecked = append(p.Invariance.Unchecked, s.Shape)
		}
	}
	// Describe every tile named; a shape's class is its tiles' one class.
	names := []string{}
	if p.Default != "" {
		names = append(names, p.Default)
	}
	for i := range p.Shapes {
		s := &p.Shapes[i]
		classes := map[string]bool{}
		for _, r := range s.Rules {
			names = append(names, r.Tile)
			t, err := sel.describe(result.Candidate{Tile: r.Tile})
			if err != nil {
				return Policy{}, fmt.Errorf("select: %s: %w", s.Shape, err)
			}
			classes[t.Class] = true
		}
		s.Class = ""
		if len(classes) == 1 {
			for c := range classes {
				s.Class = c
			}
		} else {
			p.Invariance.MixedClasses = append(p.Invariance.MixedClasses, s.Shape)
		}
	}
	for _, n := range names {
		if _, ok := p.TileInfo(n); ok {
			continue
		}
		t, err := sel.describe(result.Candidate{Tile: n})
		if err != nil {
			return Policy{}, fmt.Errorf("select: %w", err)
		}
		p.Tiles = append(p.Tiles, t)
	}
	slices.SortFunc(p.Tiles, func(a, b Tile) int { return cmp.Compare(a.Name, b.Name) })
	inv := p.Invariance
	inv.BatchInvariant = len(inv.MixedClasses) == 0
	for _, x := range inv.Excluded {
		if s := p.Shape(x.Shape); s != nil && slices.ContainsFunc(s.Rules, func(r Rule) bool { return r.Tile == x.Tile }) {
			inv.BatchInvariant = false
		}
	}
	if err := p.Validate(); err != nil {
		return Policy{}, fmt.Errorf("select: internal error: %w", err)
	}
	return p, nil
}

// selector is the state of one Select.
type selector struct {
	o     SelectOptions
	base  baseline
	prov  result.Provenance
	tiles map[string]Tile // described tiles by name
}

// describe returns c's Tile, described once per name.
func (s *selector) describe(c result.Candidate) (Tile, error) {
	if t, ok := s.tiles[c.Tile]; ok {
		return t, nil
	}
	var t Tile
	if s.o.Describe != nil {
		var err error
		if t, err = s.o.Describe(c); err != nil {
			return Tile{}, err
		}
	} else {
		fam := c.Family
		if fam == "" {
			fam, _, _ = strings.Cut(s.prov.Family, ",")
		}
		params, err := kernel.ParseParams(c.Params)
		if err != nil {
			return Tile{}, fmt.Errorf("tile %s: %w", c.Tile, err)
		}
		t = Tile{Family: fam, Class: fam, Params: params}
	}
	t.Name = c.Tile
	if t.Params == nil {
		t.Params = kernel.Params{}
	}
	s.tiles[c.Tile] = t
	return t, nil
}

// mcell is one measured M of a shape: its stored rows, the latest outcome
// of every tile, the baseline.
type mcell struct {
	rows   []result.CellResult
	cands  map[string]result.Candidate
	vendor *result.Candidate
	base   Tile
	// baseOK: the baseline was timed (OK, samples) in this cell.
	baseOK bool
}

func (m *mcell) cell() result.Cell { return m.rows[len(m.rows)-1].Cell }

// ranked is an admitted candidate with the time it ranks by.
type ranked struct {
	tile Tile
	us   float64
}

// shape selects one shape's rules and decisions.
func (s *selector) shape(ctx context.Context, g shapeGroup, p *Policy) (Shape, []Decision, error) {
	o := s.o
	// Tiles whose rows changed with M on any M of the shape are left out.
	excluded := map[string]bool{}
	for _, rows := range g.ms {
		for _, r := range rows {
			for _, c := range r.Candidates {
				if !c.AA && !c.Vendor && c.Status == result.ParityFailed && strings.HasPrefix(c.Detail, invarianceFailure) && !excluded[c.Tile] {
					excluded[c.Tile] = true
					p.Invariance.Excluded = append(p.Invariance.Excluded, Excluded{Shape: g.shape, Tile: c.Tile, Detail: firstLine(c.Detail)})
				}
			}
		}
	}
	ms := make([]*mcell, len(g.ms))
	// best[class][i]: the admitted candidates of class at the i-th M, fastest first.
	best := map[string][][]ranked{}
	var classOrder []string
	baseClass := ""
	for i, rows := range g.ms {
		mc := &mcell{rows: rows}
		ms[i] = mc
		mc.cands, mc.vendor = latest(rows)
		cell := mc.cell()
		bt, ok := s.base.p.Lookup(cell.Shape, cell.M)
		if !ok {
			bt = s.o.Reference
		}
		bc, swept := mc.cands[bt]
		if !swept {
			bc = result.Candidate{Tile: bt}
		}
		t, err := s.describe(bc)
		if err != nil {
			return Shape{}, nil, err
		}
		mc.base = t
		mc.baseOK = swept && bc.Status == result.OK && len(bc.Samples) > 0
		switch {
		case i == 0:
			baseClass = t.Class
		case baseClass != t.Class:
			baseClass = "\x00mixed"
		}
		refClass := ""
		if rc, ok := mc.cands[rows[len(rows)-1].Reference]; ok {
			rt, err := s.describe(rc)
			if err != nil {
				return Shape{}, nil, err
			}
			refClass = rt.Class
		}
		tiles := make([]string, 0, len(mc.cands))
		for name := range mc.cands {
			tiles = append(tiles, name)
		}
		slices.Sort(tiles)
		for _, name := range tiles {
			c := mc.cands[name]
			if c.Status != result.OK || len(c.Samples) == 0 || excluded[name] {
				continue
			}
			t, err := s.describe(c)
			if err != nil {
				return Shape{}, nil, err
			}
			if o.RequireBitwise && !c.Bitwise && t.Class == refClass {
				continue
			}
			if best[t.Class] == nil {
				best[t.Class] = make([][]ranked, len(g.ms))
				classOrder = append(classOrder, t.Class)
			}
			best[t.Class][i] = append(best[t.Class][i], ranked{t, rankUS(rows, c)})
		}
	}
	for _, c := range classOrder {
		for i := range best[c] {
			slices.SortStableFunc(best[c][i], func(a, b ranked) int { return cmp.Compare(a.us, b.us) })
		}
	}

	var ds []Decision
	var switchNote string
	if baseClass != "\x00mixed" {
		var err error
		ds, switchNote, err = s.switchClass(ctx, ms, best, classOrder, baseClass)
		if err != nil {
			return Shape{}, nil, err
		}
	}
	if ds == nil {
		for i, mc := range ms {
			var admitted []ranked
			if per := best[mc.base.Class]; per != nil {
				admitted = per[i]
			}
			d, err := s.decide(ctx, mc, admitted)
			if err != nil {
				return Shape{}, nil, err
			}
			if switchNote != "" {
				d.Warnings = append(d.Warnings, switchNote)
			}
			ds = append(ds, d)
		}
	}

	lc := ms[len(ms)-1].cell()
	sh := Shape{Shape: g.shape, N: lc.N, K: lc.K, Calls: lc.Calls, Dims: extraDims(lc)}
	baseOK := make([]bool, len(ds))
	for i := range ds {
		baseOK[i] = ds[i].Class == ms[i].base.Class
	}
	segs := segment(ds, o.MaxRules, baseOK)
	sh.Rules = thresholds(ds, segs, s.base)
	// Every measured cell gets its tile from the rules.
	tmp := Policy{Shapes: []Shape{sh}}
	for i := range ds {
		tile, _ := tmp.Lookup(ds[i].Shape, ds[i].M)
		if tile != ds[i].Chosen {
			ds[i].Reason += fmt.Sprintf("; the shape's rules (at most %d, --max-rules) give %s here", o.MaxRules, tile)
			ds[i].Chosen = tile
			t, err := s.describe(result.Candidate{Tile: tile})
			if err != nil {
				return Shape{}, nil, err
			}
			ds[i].Class = t.Class
		}
	}
	// Checked: every tile of the rules had its rows compared across M.
	checked := len(ms) > 1
	for _, r := range sh.Rules {
		n := 0
		for _, mc := range ms {
			if c, ok := mc.cands[r.Tile]; ok && len(c.Rows) > 0 {
				n++
			}
		}
		checked = checked && n >= 2
	}
	if checked {
		p.Invariance.Checked = append(p.Invariance.Checked, g.shape)
	} else {
		p.Invariance.Unchecked = append(p.Invariance.Unchecked, g.shape)
	}
	return sh, ds, nil
}

// extraDims is a cell's dimensions other than M when it has some other
// than N and K (nil for a GEMM shape, which N and K describe).
func extraDims(c result.Cell) kernel.Dims {
	var d kernel.Dims
	for k, v := range c.Dims {
		if k != "M" && k != "N" && k != "K" {
			if d == nil {
				d = kernel.Dims{}
			}
			d[k] = v
		}
	}
	if d == nil {
		return nil
	}
	for k, v := range c.Dims {
		if k != "M" {
			d[k] = v
		}
	}
	return d
}

// switchClass decides whether the shape moves to another numerics class
// (see Select). It returns the decisions of the move, or nil and a note
// saying why the shape stays in the baseline's class ("" when no other
// class was cheaper in the sweep).
func (s *selector) switchClass(ctx context.Context, ms []*mcell, best map[string][][]ranked, classes []string, baseClass string) ([]Decision, string, error) {
	cost := func(class string) (float64, bool) {
		var sum float64
		for i, mc := range ms {
			us := math.Inf(1)
			if len(best[class]) > 0 && len(best[class][i]) > 0 {
				us = best[class][i][0].us
			}
			if class == baseClass && mc.baseOK {
				us = min(us, stats.Median(mc.cands[mc.base.Name].Samples))
			}
			if math.IsInf(us, 1) {
				if class == baseClass {
					continue // the baseline is kept where nothing was timed
				}
				return 0, false
			}
			sum += float64(max(mc.cell().Calls, 1)) * us
		}
		return sum, true
	}
	baseCost, _ := cost(baseClass)
	to, toCost := "", math.Inf(1)
	for _, c := range classes {
		if c == baseClass {
			continue
		}
		if v, ok := cost(c); ok && v < toCost && v < baseCost {
			to, toCost = c, v
		}
	}
	if to == "" {
		return nil, "", nil
	}
	classRatio := toCost / baseCost
	var ds []Decision
	var cells []stats.Weighted
	for i, mc := range ms {
		w := best[to][i][0]
		d := s.newDecision(mc)
		d.Best, d.Class, d.Bitwise = w.tile.Name, to, false
		if mc.baseOK {
			d.SweepRatio = sweepRatio(mc, w.tile.Name, w.us)
		}
		a, b, _, source, failed, err := s.measure(ctx, mc, w.tile)
		if err != nil {
			return nil, "", err
		}
		if failed != "" {
			return nil, fmt.Sprintf("numerics class %s looked %.3f× the baseline's time in the sweep, but %s; the shape stays in class %s", to, classRatio, failed, baseClass), nil
		}
		d.Confirmed = s.o.Confirm != nil
		d.BaselineSamples, d.BestSamples = slices.Clone(a), slices.Clone(b)
		d.BaselineUS, d.BestUS = stats.Median(a), stats.Median(b)
		out, err := stats.Compare(a, b, s.o.Stats, s.o.Sequential)
		if err != nil {
			return nil, fmt.Sprintf("numerics class %s: cannot compare %s with the baseline at M=%d (%v); the shape stays in class %s", to, w.tile.Name, mc.cell().M, err, baseClass), nil
		}
		d.Outcome = out
		d.Chosen = w.tile.Name
		d.Reason = source // completed below
		ds = append(ds, d)
		cells = append(cells, stats.Weighted{Weight: float64(max(mc.cell().Calls, 1)), A: a, B: b})
	}
	tot, err := stats.WeightedTotal(cells, s.o.Stats)
	if err != nil {
		return nil, fmt.Sprintf("numerics class %s: no shape total (%v); the shape stays in class %s", to, err, baseClass), nil
	}
	if tot.Verdict != stats.Faster {
		return nil, fmt.Sprintf("numerics class %s looked %.3f× the baseline's time in the sweep; re-measured, its shape total is %.3f [%.3f, %.3f], %s: the shape stays in class %s",
			to, classRatio, tot.Ratio, tot.Lo, tot.Hi, tot.Verdict, baseClass), nil
	}
	for i := range ds {
		ds[i].Reason = fmt.Sprintf("the shape moves to numerics class %s: its total over every M, %.3f [%.3f, %.3f] of the baseline's, is faster (%s); one class at every M keeps outputs batch-invariant",
			to, tot.Ratio, tot.Lo, tot.Hi, ds[i].Reason)
	}
	return ds, "", nil
}

// newDecision starts a cell's decision: the baseline chosen, the vendor
// beside.
func (s *selector) newDecision(mc *mcell) Decision {
	cell := mc.cell()
	d := Decision{Shape: cell.Shape, N: cell.N, K: cell.K, M: cell.M, Calls: cell.Calls, Baseline: mc.base.Name, Chosen: mc.base.Name, Class: mc.base.Class}
	if _, ok := s.base.p.Lookup(cell.Shape, cell.M); !ok {
		d.Warnings = append(d.Warnings, "the baseline policy has no tile for this shape; the reference tile stands in")
	}
	if v := mc.vendor; v != nil {
		d.Vendor, d.VendorUS = v.Tile, stats.Median(v.Samples)
	}
	return d
}

// measure returns paired samples of the baseline (a) and cand (b) in cell
// mc: a fresh confirmation (o.Confirm), else the sweep's own pairs; the
// words for where they come from; failed says why there are none.
func (s *selector) measure(ctx context.Context, mc *mcell, cand Tile) (a, b []float64, bitwise bool, source, failed string, err error) {
	cell := mc.cell()
	if s.o.Confirm != nil {
		conf, err := s.o.Confirm(ctx, cellOf(mc.rows), mc.base, cand)
		if err != nil {
			if ctx.Err() != nil {
				return nil, nil, false, "", "", fmt.Errorf("confirm %s M=%d: %w", cell.Shape, cell.M, err)
			}
			return nil, nil, false, "", fmt.Sprintf("confirmation of %s failed (%v)", cand.Name, err), nil
		}
		if conf.Failed != "" {
			return nil, nil, false, "", fmt.Sprintf("confirmation of %s failed: %s", cand.Name, conf.Failed), nil
		}
		return conf.A, conf.B, conf.Bitwise, "fresh paired round", "", nil
	}
	a, b = pairedInSweep(mc.rows, mc.base.Name, cand.Name)
	if a == nil {
		return nil, nil, false, "", fmt.Sprintf("%s and the baseline were not timed in the same rounds and --confirm is off", cand.Name), nil
	}
	return a, b, true, "sweep samples, not re-measured", "", nil
}

// decide makes one cell's Decision within the baseline's class (Chosen =
// the baseline or the confirmed winner; compression may change it later);
// admitted are the class's admitted candidates, fastest first.
func (s *selector) decide(ctx context.Context, mc *mcell, admitted []ranked) (Decision, error) {
	o := s.o
	d := s.newDecision(mc)
	bt := mc.base.Name
	bc := mc.cands[bt]
	if len(admitted) == 0 {
		d.Reason = "no admitted candidate in the sweep; baseline kept"
		if mc.baseOK {
			d.BaselineSamples = slices.Clone(bc.Samples)
			d.BaselineUS = stats.Median(bc.Samples)
		}
		return d, nil
	}
	best := admitted[0]
	bestCand := mc.cands[best.tile.Name]
	d.Best, d.Bitwise = best.tile.Name, bestCand.Bitwise
	if mc.baseOK {
		d.SweepRatio = sweepRatio(mc, best.tile.Name, best.us)
	}
	if best.tile.Name == bt {
		d.Reason = "the baseline is the fastest admitted candidate"
		d.BaselineSamples = slices.Clone(bc.Samples)
		d.BaselineUS = stats.Median(bc.Samples)
		d.BestSamples, d.BestUS = d.BaselineSamples, d.BaselineUS
		return d, nil
	}
	a, b, bitwise, source, failed, err := s.measure(ctx, mc, best.tile)
	if err != nil {
		return d, err
	}
	if failed != "" {
		d.Reason = failed + "; baseline kept"
		return d, nil
	}
	d.Confirmed = o.Confirm != nil
	d.BaselineSamples, d.BestSamples = slices.Clone(a), slices.Clone(b)
	out, err := stats.Compare(a, b, o.Stats, o.Sequential)
	if err != nil {
		d.Reason = fmt.Sprintf("cannot compare %s with the baseline: %v; baseline kept", best.tile.Name, err)
		d.BaselineSamples, d.BestSamples = nil, nil
		return d, nil
	}
	d.BaselineUS, d.BestUS = stats.Median(a), stats.Median(b)
	warn := d.Warnings
	d.Outcome = out
	d.Warnings = append(warn, out.Warnings...)
	d.Bitwise = d.Bitwise && bitwise
	switch {
	case o.RequireBitwise && !bitwise:
		d.Reason = fmt.Sprintf("%s's output differs from the baseline's (%s); baseline kept", best.tile.Name, source)
	case out.Verdict == stats.Faster:
		d.Chosen, d.Class = best.tile.Name, best.tile.Class
		d.Reason = fmt.Sprintf("%s confirmed faster than the baseline (%s)", best.tile.Name, source)
	case out.Verdict == stats.Slower:
		d.Reason = fmt.Sprintf("%s measured slower than the baseline (%s): the sweep's lead was luck; baseline kept", best.tile.Name, source)
	case out.Verdict == stats.Undecided:
		why := "the budget ran out"
		if o.Sequential == nil {
			why = "fixed rounds: more could decide it"
		}
		d.Reason = fmt.Sprintf("%s undecided against the baseline after %d rounds (%s; %s): baseline kept", best.tile.Name, len(a), source, why)
	default:
		d.Reason = fmt.Sprintf("%s's gain is inside the noise (%s); baseline kept", best.tile.Name, source)
	}
	return d, nil
}

// firstLine is s up to its first newline.
func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// shapeGroup is one shape's cells: ms[i] holds the stored rows of the i-th
// M (ascending), in insertion order.
type shapeGroup struct {
	shape string
	ms    [][]result.CellResult
}

// dimsText describes a cell's dimensions other than M: "N 64, K 128", or
// every dimension for an operator with others.
func dimsText(c result.Cell) string {
	if extra := extraDims(c); extra != nil {
		keys := make([]string, 0, len(extra))
		for k := range extra {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = fmt.Sprintf("%s %d", k, extra[k])
		}
		return strings.Join(parts, ", ")
	}
	return fmt.Sprintf("N %d, K %d", c.N, c.K)
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
			if first := groups[gi].ms[0][0].Cell; dimsText(first) != dimsText(c.Cell) {
				return nil, fmt.Errorf("select: shape %s was swept as %s and as %s; select one workload (--workload)",
					name, dimsText(first), dimsText(c.Cell))
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
// sweepRatio is a candidate's ratio to the baseline in the sweep, the
// one estimator every view prints: the median per-round ratio of their
// paired samples (the report's ratio to the reference), or, when the two
// were not timed in the same rounds, its time us over the baseline's
// median.
func sweepRatio(mc *mcell, cand string, us float64) float64 {
	if a, b := pairedInSweep(mc.rows, mc.base.Name, cand); a != nil {
		r := make([]float64, len(a))
		for i := range a {
			r[i] = b[i] / a[i]
		}
		return stats.Median(r)
	}
	return us / stats.Median(mc.cands[mc.base.Name].Samples)
}

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
// (calls × median µs; 0 when unknown): the baseline when baseOK (it is of
// the shape's class), and the chosen tile.
func options(d Decision, baseOK bool) map[string]float64 {
	opts := map[string]float64{}
	if baseOK {
		opts[d.Baseline] = weight(d) * nz(d.BaselineUS)
	}
	if d.Chosen != d.Baseline || !baseOK {
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
func segment(ds []Decision, maxRules int, baseOK []bool) []seg {
	r := runs(ds)
	if maxRules <= 0 || len(r) <= maxRules {
		return r
	}
	n := len(ds)
	opts := make([]map[string]float64, n)
	tileSet := map[string]bool{}
	for i, d := range ds {
		opts[i] = options(d, baseOK[i])
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
// segment's every M above, and every measured cell keeps its segment's
// tile. Between two measured cells — tile P at M = a, tile Q at M = b > a —
// the rule "the baseline keeps the gaps" decides the M nobody measured:
//
//	both departures from the baseline: P = Q covers the gap; P ≠ Q meet at
//	    the midpoint T = a + ⌈(b − a)/2⌉ (P for M < T, Q from T on)
//	otherwise: every M in (a, b) gets the baseline's own tile for it
//
// so a departure holds only from (or up to) its measured M, and where the
// baseline policy itself switches tiles inside the gap its thresholds stay
// where they are. With the reference tile as the baseline this is
//
//	P is the baseline at a, Q a departure at b:  T = b
//	P a departure at a, Q the baseline at b:     T = a + 1
//
// Adjacent pieces with the same tile become one rule.
func thresholds(ds []Decision, segs []seg, bl baseline) []Rule {
	tileOf := make([]string, len(ds))
	for _, sg := range segs {
		for i := sg.from; i <= sg.to; i++ {
			tileOf[i] = sg.tile
		}
	}
	var ps []piece // tile for M < below, in order; the last below is ignored
	for i, d := range ds {
		ps = append(ps, piece{tileOf[i], d.M + 1})
		if i == len(ds)-1 {
			break
		}
		next := ds[i+1]
		p, q := tileOf[i], tileOf[i+1]
		a, b := d.M, next.M
		switch {
		case b-a <= 1:
		case p != d.Baseline && q != next.Baseline:
			if p != q {
				ps = append(ps, piece{p, a + (b-a+1)/2})
			}
			ps = append(ps, piece{q, b})
		default:
			ps = append(ps, bl.pieces(d.Shape, a+1, b)...)
		}
	}
	var rules []Rule
	for _, pc := range ps {
		if n := len(rules); n > 0 && rules[n-1].Tile == pc.tile {
			rules[n-1].Below = pc.below
			continue
		}
		rules = append(rules, Rule{Tile: pc.tile, Below: pc.below})
	}
	rules[len(rules)-1].Below = 0
	return rules
}

// A piece is a tile for the M below a bound, after the previous piece's.
type piece struct {
	tile  string
	below int
}

// baseline is the policy Select departs from, with the reference tile
// standing in where it has none.
type baseline struct {
	p   *Policy
	ref string
}

// at returns the baseline's tile at m and the first M above m where its
// rules may change (math.MaxInt when they do not).
func (bl baseline) at(shape string, m int) (string, int) {
	if s := bl.p.Shape(shape); s != nil {
		for _, r := range s.Rules {
			if r.Below == 0 {
				return r.Tile, math.MaxInt
			}
			if m < r.Below {
				return r.Tile, r.Below
			}
		}
		return bl.ref, math.MaxInt
	}
	if bl.p.Default != "" {
		return bl.p.Default, math.MaxInt
	}
	return bl.ref, math.MaxInt
}

// pieces returns the baseline's tiles for M in [lo, hi), lo < hi.
func (bl baseline) pieces(shape string, lo, hi int) []piece {
	var out []piece
	for m := lo; m < hi; {
		t, end := bl.at(shape, m)
		e := min(end, hi)
		out = append(out, piece{t, e})
		m = e
	}
	return out
}
