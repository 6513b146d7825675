package cli

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/tilefit/tilefit/kernel"
	"github.com/tilefit/tilefit/policy"
	"github.com/tilefit/tilefit/result"
	"github.com/tilefit/tilefit/stats"
	"github.com/tilefit/tilefit/tune"
)

const abUsage = `Usage: tilefit ab --a SPEC --b SPEC [flags]

Compares two sides, A and B, cell by cell (shape × M of the workload) in
paired interleaved rounds (order ABBA by round, rotating outputs, the same
inputs for both) and gives per cell the median ratio B/A, its interval,
the brackets, a verdict and whether A's and B's outputs are bitwise
identical; then the production-weighted totals Σ calls × µs per chunk for A
and B with the interval of their ratio. With --rounds auto (the default)
rounds are added until the cell's interval clears the ±1% band (faster /
slower) or lies inside it (tie), or the --budget runs out (undecided), with
the false-verdict rate held at 5% over all looks (docs/rounds.md); with
--rounds N, N rounds and a 95% interval (faster / slower, else tie). A SPEC is

  tile:64_128_2     the family's built-in source at that tile
  policy:FILE       the tile a policy file (tilefit select) picks per cell
  source:FILE       an edited revision of the family source (tilefit
                    families source NAME prints the original); two source
                    sides are compared tile by tile: every tile of the
                    family's sweep, the tiles of --tiles, or --tiles ref (the
                    reference tile only). Against a side with a tile, the
                    source side runs the other side's tile.
  source:FILE@TILE  that revision at that tile: source and tile change
                    together ("old shipped → new shipped", e.g. --a
                    source:old.c@64_128_2 --b source:new.c@32_64_2). A file
                    whose name holds an '@' is taken whole when it exists.

--reverse runs the whole comparison a second time with the sides swapped
(B as A) and reports both runs and, per cell, whether the verdict holds
both ways (a verdict that flips with the sides came from the order, not
the code).

The same SPEC on both sides is an A/A calibration: the report gives this
machine's noise floor (interval half-width) and how many verdicts were
falsely faster or slower. Exits 0 whatever the verdicts; 2 on a bad SPEC or a side
that does not compile. Nothing is stored.
`

// flagSubset registers the shared sweep flags except those in skip (they go
// to a sink FlagSet no one parses).
type flagSubset struct {
	*flag.FlagSet
	skip map[string]bool
	sink *flag.FlagSet
}

func newFlagSubset(fs *flag.FlagSet, skip ...string) flagSubset {
	m := map[string]bool{}
	for _, s := range skip {
		m[s] = true
	}
	return flagSubset{FlagSet: fs, skip: m, sink: flag.NewFlagSet("unused", flag.ContinueOnError)}
}

func (f flagSubset) to(name string) *flag.FlagSet {
	if f.skip[name] {
		return f.sink
	}
	return f.FlagSet
}

func (f flagSubset) StringVar(p *string, name, value, usage string) {
	f.to(name).StringVar(p, name, value, usage)
}
func (f flagSubset) IntVar(p *int, name string, value int, usage string) {
	f.to(name).IntVar(p, name, value, usage)
}
func (f flagSubset) DurationVar(p *time.Duration, name string, value time.Duration, usage string) {
	f.to(name).DurationVar(p, name, value, usage)
}
func (f flagSubset) Uint64Var(p *uint64, name string, value uint64, usage string) {
	f.to(name).Uint64Var(p, name, value, usage)
}
func (f flagSubset) BoolVar(p *bool, name string, value bool, usage string) {
	f.to(name).BoolVar(p, name, value, usage)
}

// An abSpec is one side of tilefit ab.
type abSpec struct {
	raw  string
	kind string // "tile", "policy" or "source"
	tile tileRef
	pol  *policy.Policy
	// tiles are the policy's tiles, parsed once.
	tiles map[string]tileRef
	// source is the side's source text ("" = the family's built-in one).
	source string
	// key identifies the side's content, for A/A detection.
	key string
}

// parseABSpec parses SPEC (see abUsage) for the families fams of an
// operator (fams[0] first: its tiles are named bare, others "family/tile").
func parseABSpec(ctx context.Context, flagName, s string, fams []*kernel.Family, be string) (abSpec, error) {
	kind, arg, ok := strings.Cut(s, ":")
	if s == "" {
		return abSpec{}, fmt.Errorf("%s: missing; want tile:TILE, policy:FILE or source:FILE[@TILE]", flagName)
	}
	if !ok || arg == "" {
		return abSpec{}, fmt.Errorf("%s %q: want tile:TILE, policy:FILE or source:FILE[@TILE]", flagName, s)
	}
	sp := abSpec{raw: s, kind: kind}
	switch kind {
	case "tile":
		t, err := resolveTile(fams, arg)
		if err != nil {
			return sp, fmt.Errorf("%s: %w", flagName, err)
		}
		sp.tile = t
		sp.key = "tile:" + t.name
	case "policy":
		p, data, err := readPolicy(ctx, arg)
		if err != nil {
			return sp, fmt.Errorf("%s: %w", flagName, err)
		}
		if err := checkPolicyFamilies(p, fams, be); err != nil {
			return sp, fmt.Errorf("%s: policy %s %w", flagName, arg, err)
		}
		tiles, err := policyTiles(p, fams)
		if err != nil {
			return sp, fmt.Errorf("%s: policy %s: %w", flagName, arg, err)
		}
		sp.pol, sp.tiles = &p, tiles
		sp.key = "policy:" + hashOf(data)
	case "source":
		file, tile, err := splitSourceTile(flagName, arg, fams)
		if err != nil {
			return sp, err
		}
		src, err := readSource(ctx, flagName, file)
		if err != nil {
			return sp, err
		}
		sp.source, sp.tile = src, tile
		sp.key = "source:" + hashOf([]byte(src)) + "@" + tile.name
	default:
		return sp, fmt.Errorf("%s %q: unknown kind %q; want tile:TILE, policy:FILE or source:FILE[@TILE]", flagName, s, kind)
	}
	return sp, nil
}

func hashOf(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// policyTiles parses every tile a policy names (its rules and default)
// once, as tiles of fams (see resolveTile), keyed by the policy's name.
func policyTiles(p policy.Policy, fams []*kernel.Family) (map[string]tileRef, error) {
	names := []string{}
	if p.Default != "" {
		names = append(names, p.Default)
	}
	for _, s := range p.Shapes {
		for _, r := range s.Rules {
			names = append(names, r.Tile)
		}
	}
	out := map[string]tileRef{}
	for _, n := range names {
		if _, ok := out[n]; ok {
			continue
		}
		t, err := resolveTile(fams, n)
		if err != nil {
			return nil, err
		}
		out[n] = t
	}
	return out, nil
}

// checkPolicyFamilies checks that policy p is for backend be and for
// families among fams (the policy's family list, comma-separated).
func checkPolicyFamilies(p policy.Policy, fams []*kernel.Family, be string) error {
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

// tileFor is the side's tile in cell c (ok false for a source side
// without a tile) and a note when a policy had to fall back to the
// reference tile.
func (s abSpec) tileFor(fams []*kernel.Family, c result.Cell) (t tileRef, ok bool, note string) {
	switch s.kind {
	case "tile":
		return s.tile, true, ""
	case "source":
		return s.tile, s.fixed(), ""
	case "policy":
		if name, ok := s.pol.Lookup(c.Shape, c.M); ok {
			return s.tiles[name], true, ""
		}
		ref, _ := resolveTile(fams, fams[0].Reference)
		return ref, true, "policy has no tile for " + c.Shape + "; reference tile used"
	}
	return tileRef{}, false, ""
}

// abPair is one comparison to run.
type abPair struct {
	cell         result.Cell
	tileA, tileB tileRef
	group        string // totals group: the tile of a source A/B, else ""
	note         string
}

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

func abVerb() verb {
	return verb{name: "ab", summary: "paired A/B of two tiles, policies or source revisions", usage: abUsage,
		run: func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
			fs := newFlags("ab", abUsage, stdout)
			var f sweepFlags
			f.register(newFlagSubset(fs.FlagSet, "vendor", "aa", "source", "db", "check"))
			deprecatedFlag(fs.FlagSet, stderr, "out", "out-type")
			fs.Lookup("tiles").Usage = "with two source: sides, the tiles to compare, comma-separated, or \"ref\" (default: the family's sweep)"
			// A verdict is what ab is for: adaptive rounds by default.
			f.rounds, fs.Lookup("rounds").DefValue = roundsAuto, roundsAuto
			specA := fs.String("a", "", "side A: tile:TILE, policy:FILE, source:FILE or source:FILE@TILE")
			specB := fs.String("b", "", "side B: tile:TILE, policy:FILE, source:FILE or source:FILE@TILE")
			format := fs.String("format", "md", "md or json")
			reverse := fs.Bool("reverse", false, "run the comparison again with the sides swapped and report both, and whether they agree")
			if err := parse(fs, args); err != nil {
				return err
			}
			if fs.NArg() > 0 {
				return fmt.Errorf("unexpected arguments %q", fs.Args())
			}
			if *format != "md" && *format != "json" {
				return fmt.Errorf("--format: want md or json, got %q", *format)
			}
			refOnly := f.tiles == "ref"
			if refOnly {
				f.tiles = ""
			}
			reg := registryFrom(ctx)
			cfg, err := f.config(ctx, reg)
			if err != nil {
				return err
			}
			fam := cfg.Families[0] // the reference family of the operator (or the first of --family)
			a, err := parseABSpec(ctx, "--a", *specA, cfg.Families, f.backend)
			if err != nil {
				return err
			}
			b, err := parseABSpec(ctx, "--b", *specB, cfg.Families, f.backend)
			if err != nil {
				return err
			}
			bothSource := !a.fixed() && !b.fixed()
			if (f.tiles != "" || refOnly) && !bothSource {
				return errors.New("--tiles applies only when both sides are source: specs without a tile (source:FILE)")
			}
			// Two source sides: the tiles of the edited family, parsed once.
			var tiles []tileRef
			names := fam.Tiles()
			switch {
			case refOnly:
				names = []string{fam.Reference}
			case cfg.Tiles != nil:
				names = cfg.Tiles
			}
			for _, n := range names {
				t, err := resolveTile([]*kernel.Family{fam}, n)
				if err != nil {
					return fmt.Errorf("--tiles: %w", err)
				}
				if !slices.ContainsFunc(tiles, func(u tileRef) bool { return u.name == t.name }) {
					tiles = append(tiles, t)
				}
			}
			var pairs []abPair
			abOp, err := fam.Operator.Typed(cfg.Types)
			if err != nil {
				return err
			}
			abCells, err := tune.CellsOf(cfg.Workload, abOp)
			if err != nil {
				return err
			}
			for _, c := range abCells {
				ta, _, na := a.tileFor(cfg.Families, c)
				tb, _, nb := b.tileFor(cfg.Families, c)
				note := strings.Trim(na+"; "+nb, "; ")
				switch {
				case bothSource:
					for _, t := range tiles {
						g := ""
						if len(tiles) > 1 {
							g = t.name
						}
						pairs = append(pairs, abPair{cell: c, tileA: t, tileB: t, group: g})
					}
				case !a.fixed():
					pairs = append(pairs, abPair{cell: c, tileA: tb, tileB: tb, note: note})
				case !b.fixed():
					pairs = append(pairs, abPair{cell: c, tileA: ta, tileB: ta, note: note})
				default:
					pairs = append(pairs, abPair{cell: c, tileA: ta, tileB: tb, note: note})
				}
			}

			ex := f.executor(reg)
			defer ex.Close()
			if _, err := checkDevice(ctx, ex, cfg.Workload, reg); err != nil {
				return err
			}
			dev, err := ex.Device(ctx)
			if err != nil {
				return err
			}
			so := stats.DefaultOptions()
			seq := sequentialOf(cfg.Measure)
			newReport := func(a, b abSpec) ABReport {
				rep := ABReport{A: a.raw, B: b.raw, AA: a.key == b.key, Backend: f.backend, Device: dev.Name, Family: fam.Name,
					Workload: cfg.Workload.Name, Ms: cfg.Workload.Ms, MinGain: so.MinGain, MaxRegress: so.MaxRegress, Confidence: so.Confidence,
					Rounds: fmt.Sprint(cfg.Measure.Rounds)}
				if seq != nil {
					rep.Rounds, rep.LookConfidence = roundsAuto, seq.LookConfidence()
				}
				return rep
			}
			finish := func(rep *ABReport) {
				rep.Totals, rep.Warnings = abTotals(rep.Cells, so)
				rep.Verdicts = countVerdicts(rep.Cells, so.Confidence)
				if rep.AA {
					rep.Noise = calibrate(rep.Cells)
				}
			}
			rowOf := func(p abPair, res result.CellResult) ABRow { return abRowOf(p, res, so, seq) }
			opts := tune.ABOptions{Seed: cfg.Seed, Types: cfg.Types, Measure: cfg.Measure, MaxSamples: cfg.MaxSamples}
			runs := []abPass{{a: a, b: b, pairs: pairs}}
			if *reverse {
				runs = append(runs, abPass{a: b, b: a, pairs: swapPairs(pairs), reversed: true})
			}
			var weights []float64
			for _, r := range runs {
				for _, p := range r.pairs {
					weights = append(weights, cellWeight(p.cell))
				}
			}
			prog := newProgress(stderr, "ab", weights)
			var reps []ABReport
			for _, r := range runs {
				rows, err := r.measure(ctx, ex, fam, opts, rowOf, prog, stderr)
				if err != nil {
					return err
				}
				rep := newReport(r.a, r.b)
				rep.Cells = rows
				finish(&rep)
				reps = append(reps, rep)
			}
			rep := reps[0]
			if *reverse {
				rep.Reversed = &reps[1]
				rep.Agreement = abAgreements(reps[0].Cells, reps[1].Cells)
			}
			if *format == "json" {
				b, err := json.MarshalIndent(rep, "", "  ")
				if err != nil {
					return err
				}
				_, err = stdout.Write(append(b, '\n'))
				return err
			}
			return writeABReport(stdout, rep)
		}}
}

// abRowOf analyses one ABCell result: by the sequential rule when seq is
// set (the rounds were adaptive), else by one fixed-n interval.
func abRowOf(p abPair, res result.CellResult, so stats.Options, seq *stats.SequentialOptions) ABRow {
	c := p.cell
	row := ABRow{Shape: c.Shape, N: c.N, K: c.K, M: c.M, Calls: c.Calls, TileA: p.tileA.name, TileB: p.tileB.name, Group: p.group, Rounds: res.Rounds}
	if p.note != "" {
		row.Notes = append(row.Notes, p.note)
	}
	if len(res.Candidates) != 2 {
		row.Status = fmt.Sprintf("%d results for 2 sides", len(res.Candidates))
		return row
	}
	ca, cb := res.Candidates[0], res.Candidates[1]
	var failed []string
	for i, cand := range []result.Candidate{ca, cb} {
		if cand.Status != result.OK {
			failed = append(failed, fmt.Sprintf("%s %s: %s", []string{"A", "B"}[i], cand.Status, firstLine(cand.Detail)))
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

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

func tilePair(r ABRow) string {
	if r.TileA == r.TileB {
		return r.TileA
	}
	return r.TileA + " vs " + r.TileB
}

func rowSummary(r ABRow) string {
	if r.Status != "ok" {
		return r.Status
	}
	bits := "bitwise identical"
	if !r.Bitwise {
		bits = "outputs differ"
	}
	return fmt.Sprintf("ratio %.3f [%.3f, %.3f] %s after %d rounds, %s", r.Ratio, r.Lo, r.Hi, r.Verdict, r.Rounds, bits)
}

// abTotals computes per group and M (and over every M) the weighted totals
// of the rows compared successfully (stats.TotalsByM). A total is one
// analysis after every cell is done (no looks), so its verdict keeps the
// fixed rule (stats.Decide: faster, slower, else tie), whatever the cells'
// rounds were.
func abTotals(rows []ABRow, so stats.Options) ([]ABTotal, []string) {
	var groups []string
	byGroup := map[string][]ABRow{}
	for _, r := range rows {
		if _, ok := byGroup[r.Group]; !ok {
			groups = append(groups, r.Group)
		}
		byGroup[r.Group] = append(byGroup[r.Group], r)
	}
	var out []ABTotal
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
			out = append(out, ABTotal{Group: g, M: t.M, Cells: t.Cells, A: t.Total.A, B: t.Total.B, Outcome: t.Total.Outcome()})
		}
	}
	return out, warns
}

// calibrate summarises an A/A run.
func calibrate(rows []ABRow) *ABCalibration {
	var hw []float64
	c := &ABCalibration{}
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

func writeABMarkdown(w io.Writer, r ABReport) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "# tilefit ab\n\nA = `%s`, B = `%s`", r.A, r.B)
	if r.AA {
		fmt.Fprint(bw, " (the same on both sides: A/A calibration)")
	}
	ms := make([]string, len(r.Ms))
	for i, m := range r.Ms {
		ms[i] = fmt.Sprint(m)
	}
	fmt.Fprintf(bw, ".\nBackend %s, device %s, family %s, workload %s (M %s). Paired rounds, order ABBA by round, rotating outputs, the same inputs for A and B; ",
		r.Backend, r.Device, r.Family, r.Workload, strings.Join(ms, ", "))
	if r.Rounds == roundsAuto {
		fmt.Fprintf(bw, "adaptive rounds (docs/rounds.md): rounds are added until the signed-rank interval of the ratio B/A (%.2f%% at each look, %.0f%% over all looks) lies below %.3f (`faster`), above %.3f (`slower`) or inside the band (`tie`), or the budget runs out (`undecided`).\n\n",
			100*r.LookConfidence, 100*r.Confidence, 1-r.MinGain, 1+r.MaxRegress)
	} else {
		fmt.Fprintf(bw, "%s rounds; %.0f%% signed-rank interval of the ratio B/A; verdict `faster` when it lies below %.3f, `slower` above %.3f, else `tie`.\n\n",
			r.Rounds, 100*r.Confidence, 1-r.MinGain, 1+r.MaxRegress)
	}
	fmt.Fprintln(bw, "| shape | M | tile A | tile B | A µs | B µs | ratio B/A | interval | brackets | verdict | rounds | bitwise | notes |")
	fmt.Fprintln(bw, "|---|---:|---|---|---:|---:|---:|---|---|---|---:|---|---|")
	for _, c := range r.Cells {
		notes := strings.Join(append(slices.Clone(c.Notes), c.Warnings...), "; ")
		if c.Status != "ok" {
			notes = strings.Trim(c.Status+"; "+notes, "; ")
			fmt.Fprintf(bw, "| %s | %d | `%s` | `%s` | — | — | — | — | — | — | — | — | %s |\n", c.Shape, c.M, c.TileA, c.TileB, mdEscape(notes))
			continue
		}
		bits := "yes"
		if !c.Bitwise {
			bits = "**no**"
		}
		fmt.Fprintf(bw, "| %s | %d | `%s` | `%s` | %s | %s | %.3f | [%.3f, %.3f] | [%.3f, %.3f] | %s | %d | %s | %s |\n",
			c.Shape, c.M, c.TileA, c.TileB, fmtUS(c.AUS), fmtUS(c.BUS), c.Ratio, c.Lo, c.Hi, c.BracketLo, c.BracketHi,
			c.Verdict, c.Rounds, bits, mdEscape(notes))
	}
	writeABVerdicts(bw, r)
	if len(r.Totals) > 0 {
		fmt.Fprint(bw, "\n## Production-weighted totals (Σ calls × µs per chunk)\n\n")
		fmt.Fprintln(bw, "| tile | M | cells | A µs/chunk | B µs/chunk | ratio B/A | interval | verdict |")
		fmt.Fprintln(bw, "|---|---:|---:|---:|---:|---:|---|---|")
		for _, t := range r.Totals {
			g, m := t.Group, fmt.Sprint(t.M)
			if g == "" {
				g = "as specified"
			} else {
				g = "`" + g + "`"
			}
			if t.M == 0 {
				m = "all"
			}
			fmt.Fprintf(bw, "| %s | %s | %d | %s | %s | %.3f | [%.3f, %.3f] | %s |\n", g, m, t.Cells, fmtUS(t.A), fmtUS(t.B),
				t.Ratio, t.Lo, t.Hi, t.Verdict)
		}
	}
	if n := r.Noise; n != nil {
		fmt.Fprintf(bw, "\n## A/A calibration: the noise floor\n\nOver %d cells the interval half-width is %.2f%% (median) and %.2f%% at most: differences smaller than that are invisible on this machine at these settings. Verdicts `faster` or `slower` (all false on A/A): %d of %d",
			n.Cells, 100*n.MedianHalfWidth, 100*n.MaxHalfWidth, n.FalseVerdicts, n.Cells)
		if r.Rounds == roundsAuto {
			fmt.Fprintf(bw, "; `undecided`: %d", n.Undecided)
		}
		fmt.Fprintf(bw, ". Cells whose two outputs differed: %d.\n", n.NotBitwise)
	}
	if len(r.Warnings) > 0 {
		fmt.Fprintln(bw)
		for _, w := range r.Warnings {
			fmt.Fprintf(bw, "Warning: %s.\n", w)
		}
	}
	return bw.Flush()
}

// writeABVerdicts writes the count of verdicts, the cells that ended
// undecided and, with several cells, how many verdicts to expect false.
func writeABVerdicts(w io.Writer, r ABReport) {
	v := r.Verdicts
	if v.Compared == 0 {
		return
	}
	fmt.Fprintf(w, "\nVerdicts of %d %s: %d faster, %d slower, %d tie", v.Compared, plural(v.Compared, "cell", "cells"), v.Faster, v.Slower, v.Tie)
	if r.Rounds == roundsAuto {
		fmt.Fprintf(w, ", %d undecided", v.Undecided)
	}
	fmt.Fprint(w, ".")
	if v.Undecided > 0 {
		var cut, spent []string
		for _, c := range r.Cells {
			if c.Verdict == stats.Undecided {
				name := fmt.Sprintf("%s M=%d %s (%d rounds)", c.Shape, c.M, tilePair(c), c.Rounds)
				if c.LooksSpent {
					spent = append(spent, name)
				} else {
					cut = append(cut, name)
				}
			}
		}
		if len(cut) > 0 {
			fmt.Fprintf(w, " Undecided because the budget ran out (more rounds, or a larger --budget, could decide them): %s.", strings.Join(cut, ", "))
		}
		if len(spent) > 0 {
			fmt.Fprintf(w, " Undecided with the rule's looks spent (the difference sits on an edge of the ±%g%% band; a larger --budget cannot decide it): %s.",
				100*r.MaxRegress, strings.Join(spent, ", "))
		}
	}
	if v.Compared > 1 {
		fmt.Fprintf(w, " At %.0f%% confidence each cell's verdict is false with probability at most %.0f%%: up to %.1f of these %d verdicts are expected to be false by chance alone.",
			100*r.Confidence, 100*(1-r.Confidence), v.ExpectedFalse, v.Compared)
	}
	fmt.Fprintln(w)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// fmtUS formats µs with three or four significant digits.
func fmtUS(x float64) string {
	switch {
	case x >= 100:
		return fmt.Sprintf("%.0f", x)
	case x >= 10:
		return fmt.Sprintf("%.1f", x)
	}
	return fmt.Sprintf("%.2f", x)
}

func mdEscape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ")
}

// countVerdicts counts the compared rows' verdicts and the most false ones
// to expect among them at confidence conf.
func countVerdicts(rows []ABRow, conf float64) ABVerdicts {
	var v ABVerdicts
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
