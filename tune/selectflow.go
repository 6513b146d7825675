package tune

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/tilefit/tilefit/internal/progress"
	"github.com/tilefit/tilefit/kernel"
	"github.com/tilefit/tilefit/measure"
	"github.com/tilefit/tilefit/policy"
	"github.com/tilefit/tilefit/result"
	"github.com/tilefit/tilefit/stats"
	"github.com/tilefit/tilefit/store"
	"github.com/tilefit/tilefit/workload"
)

// A SelectQuery says which stored cells a selection (tilefit select) is
// made from.
type SelectQuery struct {
	// DB names the database in messages.
	DB      string
	Backend string
	// Families, when set, is the family list of the sweep, as a set.
	Families []string
	// Workload, when set, keeps only its shapes (of the same size), with
	// their calls.
	Workload *workload.Workload
	// Ms, when set, keeps only these M.
	Ms map[int]bool
	// Provenance, when set, is the key of the sweep; else the latest
	// matching one.
	Provenance string
}

// SelectCells picks the cells of one sweep out of all (a backend's cells,
// as store.Cells returns them, in insertion order) for q: the cells
// matching q of its provenance (q.Provenance, or the latest matching
// one). candidates are the matching cells of every provenance (for
// WriteProvenanceChoice). No matching cell is an error that says what was
// swept instead.
func SelectCells(all []result.CellResult, q SelectQuery) (cells, candidates []result.CellResult, err error) {
	sets := map[string]bool{} // the family lists swept on the backend
	for _, c := range all {
		sets[c.Prov.Family] = true
		if q.Families != nil && !sameSet(strings.Split(c.Prov.Family, ","), q.Families) {
			continue
		}
		if q.Ms != nil && !q.Ms[c.Cell.M] {
			continue
		}
		if w := q.Workload; w != nil {
			s, ok := w.Shape(c.Cell.Shape)
			if !ok || !SameSize(s, c.Cell) {
				continue
			}
			c.Cell.Calls = s.Calls
		}
		candidates = append(candidates, c)
		if q.Provenance != "" && c.Prov.Key() != q.Provenance {
			continue
		}
		cells = append(cells, c)
	}
	if q.Workload == nil {
		// Without a workload every swept shape counts, but not the size
		// study's cells an old shared database may hold beside them.
		var sweep []result.CellResult
		for _, c := range cells {
			if !IsScanCell(c.Cell) {
				sweep = append(sweep, c)
			}
		}
		if len(sweep) > 0 {
			cells = sweep
		}
	}
	if len(cells) == 0 {
		return nil, candidates, errors.New(noCellsMessage(q, sets))
	}
	key := cells[len(cells)-1].Prov.Key()
	kept := cells[:0]
	for _, c := range cells {
		if c.Prov.Key() == key {
			kept = append(kept, c)
		}
	}
	return kept, candidates, nil
}

// noCellsMessage says that nothing matched q, and which family lists the
// backend's sweeps have.
func noCellsMessage(q SelectQuery, sets map[string]bool) string {
	what := "any family"
	if q.Families != nil {
		what = "family " + strings.Join(q.Families, ",")
	}
	what += " on " + q.Backend
	if q.Workload != nil {
		what += " for workload " + q.Workload.Name
	}
	if q.Provenance != "" {
		what += " with provenance " + q.Provenance
	}
	msg := fmt.Sprintf("no swept cells of %s in %s; run tilefit sweep first", what, q.DB)
	if q.Families != nil && len(sets) > 0 {
		var have []string
		for s := range sets {
			have = append(have, s)
		}
		slices.Sort(have)
		msg += fmt.Sprintf(" (swept on %s: --family %s)", q.Backend, strings.Join(have, " or --family "))
	}
	return msg
}

// SameSize reports whether cell c is of workload shape s's size: every
// dimension s gives (N, K, and others such as S), as the cell recorded them.
func SameSize(s workload.Shape, c result.Cell) bool {
	if s.N != c.N || s.K != c.K {
		return false
	}
	for k, v := range s.Dims {
		if got, ok := c.Dims[k]; ok && got != v {
			return false
		}
	}
	return true
}

// sameSet reports whether a and b hold the same names.
func sameSet(a, b []string) bool {
	x, y := slices.Clone(a), slices.Clone(b)
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(slices.Compact(x), slices.Compact(y))
}

// SweepFamilies looks up the families of provenance prov (its family list,
// the reference family first) in reg.
func SweepFamilies(reg *kernel.Registry, prov result.Provenance) ([]*kernel.Family, error) {
	var fams []*kernel.Family
	for _, name := range strings.Split(prov.Family, ",") {
		fam, err := reg.Lookup(prov.Backend, name)
		if err != nil {
			return nil, fmt.Errorf("the sweep's family: %w", err)
		}
		fams = append(fams, fam)
	}
	return fams, nil
}

// Describer describes a stored candidate of a sweep of fams: its family,
// numerics class (the stored one; for a database that predates it, its
// family's Numerics) and parameters (the stored ones, parsed once; a tile
// the sweep lacks, named "TILE" or "FAMILY/TILE", from its name).
func Describer(fams []*kernel.Family) func(result.Candidate) (policy.Tile, error) {
	return func(c result.Candidate) (policy.Tile, error) {
		var t TileRef
		if c.Params != "" {
			famName := c.Family
			if famName == "" {
				famName = fams[0].Name
			}
			for _, f := range fams {
				if f.Name == famName {
					t.Family = f
				}
			}
			if t.Family == nil {
				return policy.Tile{}, fmt.Errorf("tile %s: family %s is not among the sweep's", c.Tile, famName)
			}
			p, err := kernel.ParseParams(c.Params)
			if err != nil {
				return policy.Tile{}, fmt.Errorf("tile %s: %w", c.Tile, err)
			}
			t.Params = p
		} else {
			var err error
			if t, err = ResolveTile(fams, c.Tile); err != nil {
				return policy.Tile{}, err
			}
		}
		class := c.Class
		if class == "" {
			class = NumericsClass(t.Family, t.Params)
		}
		return policy.Tile{Name: c.Tile, Family: t.Family.Name, Class: class, Params: t.Params}, nil
	}
}

// errDryRun ends a confirmation of the dry run of ConfirmationCells.
var errDryRun = errors.New("dry run")

// ConfirmationCells returns the cell of every confirmation policy.Select
// will ask for on cells with o, in order: a dry run of the selection whose
// confirmations only count (which cells need one depends on the sweep
// alone, not on earlier confirmations).
func ConfirmationCells(ctx context.Context, cells []result.CellResult, o policy.SelectOptions) []result.Cell {
	var out []result.Cell
	o.Confirm = func(_ context.Context, cell result.Cell, _, _ policy.Tile) (policy.Confirmation, error) {
		out = append(out, cell)
		return policy.Confirmation{}, errDryRun
	}
	policy.Select(ctx, cells, o)
	return out
}

// DeviceConfirmer returns the confirmation step of a selection over a
// sweep of fams (the reference family first): each candidate re-measured
// against the baseline tile on ex in fresh paired rounds (ABCell), with
// src as the reference family's source ("" = built-in). step, when set,
// is told of each finished confirmation.
func DeviceConfirmer(ex Executor, fams []*kernel.Family, src string, opts ABOptions, step func(what string)) policy.Confirmer {
	fam := fams[0]
	famOf := map[string]*kernel.Family{}
	for _, g := range fams {
		famOf[g.Name] = g
	}
	side := func(label string, t policy.Tile) (ABSide, error) {
		g := famOf[t.Family]
		if g == nil {
			return ABSide{}, fmt.Errorf("tile %s: family %s is not among the sweep's", t.Name, t.Family)
		}
		s := ABSide{Label: label, Family: g, Params: t.Params}
		if g == fam {
			s.Source = src
		}
		return s, nil
	}
	return func(ctx context.Context, cell result.Cell, baseline, cand policy.Tile) (policy.Confirmation, error) {
		a, err := side("A", baseline)
		if err != nil {
			return policy.Confirmation{}, err
		}
		b, err := side("B", cand)
		if err != nil {
			return policy.Confirmation{}, err
		}
		res, err := ABCell(ctx, ex, fam, cell, a, b, opts)
		if err != nil {
			return policy.Confirmation{}, err
		}
		if len(res.Candidates) != 2 {
			return policy.Confirmation{}, fmt.Errorf("confirmation gave %d results for 2 sides", len(res.Candidates))
		}
		ca, cb := res.Candidates[0], res.Candidates[1]
		var c policy.Confirmation
		switch {
		case ca.Status != result.OK:
			c.Failed = fmt.Sprintf("baseline %s %s: %s", baseline.Name, ca.Status, FirstLine(ca.Detail))
		case cb.Status != result.OK:
			c.Failed = fmt.Sprintf("%s %s: %s", cand.Name, cb.Status, FirstLine(cb.Detail))
		default:
			c.A, c.B, c.Bitwise = ca.Samples, cb.Samples, cb.Bitwise
		}
		if step != nil {
			step(fmt.Sprintf("confirm %s M=%d: %s against baseline %s", cell.Shape, cell.M, cand.Name, baseline.Name))
		}
		return c, nil
	}
}

// SweepSource returns the source a confirmation of the sweep prov runs:
// "" when the sweep ran the built-in sources of fams, else the edited
// source read by read (select's --source srcName), checked against the
// sweep's source hash; or says why it cannot confirm (naming select's
// flags --source and --confirm=false).
func SweepSource(fams []*kernel.Family, prov result.Provenance, srcName string, read func() (string, error)) (string, error) {
	srcs := make([]string, len(fams))
	for i, g := range fams {
		srcs[i] = g.Source
	}
	if result.SourceHash(strings.Join(srcs, "\x00")) == prov.SourceHash {
		return "", nil
	}
	if len(fams) > 1 {
		return "", fmt.Errorf("the sweep's sources (sha256 %.12s…) are not the built-in ones of %s: confirm with the tilefit that swept them, or --confirm=false", prov.SourceHash, prov.Family)
	}
	if srcName == "" {
		return "", fmt.Errorf("the sweep ran an edited source (sha256 %.12s…), not the built-in one: pass it with --source FILE, or --confirm=false", prov.SourceHash)
	}
	src, err := read()
	if err != nil {
		return "", err
	}
	if h := result.SourceHash(src); h != prov.SourceHash {
		return "", fmt.Errorf("--source %s (sha256 %.12s…) is not the source the sweep ran (sha256 %.12s…)", srcName, h, prov.SourceHash)
	}
	return src, nil
}

// SweepTypes are the operand types of the sweep prov, for a re-measurement
// (a provenance of schema 1 records only whether Y was f16).
func SweepTypes(prov result.Provenance) (map[string]kernel.DType, error) {
	types, err := kernel.ParseTypes(prov.Types)
	if err != nil {
		return nil, fmt.Errorf("the sweep's operand types: %w", err)
	}
	if prov.Types == "" && prov.OutF16() {
		types = map[string]kernel.DType{"Y": kernel.F16}
	}
	return types, nil
}

// describeSource says which source a provenance ran: its families'
// built-in sources (of reg), or an edited revision (tilefit sweep --source)
// by its hash.
func describeSource(p result.Provenance, reg *kernel.Registry) string {
	var srcs []string
	for _, name := range strings.Split(p.Family, ",") {
		f, err := reg.Lookup(p.Backend, name)
		if err != nil {
			return fmt.Sprintf("source sha256 %.12s…", p.SourceHash)
		}
		srcs = append(srcs, f.Source)
	}
	if p.SourceHash == result.SourceHash(strings.Join(srcs, "\x00")) {
		return "built-in source"
	}
	return fmt.Sprintf("edited source (sha256 %.12s…)", p.SourceHash)
}

// WriteProvenanceChoice tells select's user which sweep (provenance) the
// policy comes from, among the provenances of cells that match the flags,
// and how to pick another: every candidate provenance with its source
// (built-in or edited, by hash), device, output types, cell count and when
// it was swept, newest first.
func WriteProvenanceChoice(w io.Writer, db string, cells []result.CellResult, used string, reg *kernel.Registry, picked bool) {
	type entry struct {
		key   string
		prov  result.Provenance
		cells int
		last  time.Time
	}
	byKey := map[string]*entry{}
	var order []*entry
	for _, c := range cells {
		k := c.Prov.Key()
		e := byKey[k]
		if e == nil {
			e = &entry{key: k, prov: c.Prov}
			byKey[k] = e
			order = append(order, e)
		}
		e.cells++
		if c.Finished.After(e.last) {
			e.last = c.Finished
		}
	}
	sort.SliceStable(order, func(i, j int) bool { return order[i].last.After(order[j].last) })
	describe := func(e *entry) string {
		when := "time unknown"
		if !e.last.IsZero() {
			when = "swept " + e.last.UTC().Format("2006-01-02 15:04 UTC")
		}
		return fmt.Sprintf("%s on %s (%s), %s, %s; %d cells, %s", e.prov.Family, e.prov.Backend, e.prov.Device,
			describeSource(e.prov, reg), strings.TrimSpace(e.prov.Types), e.cells, when)
	}
	u := byKey[used]
	if u == nil {
		return
	}
	how := "the latest"
	if picked {
		how = "chosen by --provenance"
	}
	if len(order) == 1 {
		fmt.Fprintf(w, "using provenance %s (%s): the only sweep on %s in %s\n", used, describe(u), u.prov.Backend, db)
		return
	}
	fmt.Fprintf(w, "using provenance %s (%s): %s of the %d sweeps on %s in %s:\n", used, describe(u), how, len(order), u.prov.Backend, db)
	for _, e := range order {
		mark := ""
		if e.key == used {
			mark = "  ← used"
		}
		fmt.Fprintf(w, "  --provenance %s  %s%s\n", e.key, describe(e), mark)
	}
	fmt.Fprintln(w, "pick another with --provenance KEY (and --source FILE when it ran an edited source)")
}

// SelectSweep reads q.Backend's cells from the database q.DB and keeps
// those of the sweep q chooses (SelectCells), saying which on log
// (WriteProvenanceChoice), with the sweep's families.
func SelectSweep(ctx context.Context, q SelectQuery, reg *kernel.Registry, log io.Writer) ([]result.CellResult, []*kernel.Family, error) {
	st, err := store.OpenReadOnly(ctx, q.DB)
	if err != nil {
		return nil, nil, err
	}
	defer st.Close()
	all, err := st.Cells(ctx, store.Filter{Backend: q.Backend})
	if err != nil {
		return nil, nil, err
	}
	cells, candidates, err := SelectCells(all, q)
	if err != nil {
		return nil, nil, err
	}
	prov := cells[len(cells)-1].Prov
	WriteProvenanceChoice(log, q.DB, candidates, prov.Key(), reg, q.Provenance != "")
	fams, err := SweepFamilies(reg, prov)
	return cells, fams, err
}

// SelectSettings are what select's flags ask of the selection, beside the
// sweep's families.
type SelectSettings struct {
	RequireBitwise bool
	MaxRules       int
	// Sequential is the rule of the confirmations' rounds (nil: fixed).
	Sequential *stats.SequentialOptions
	// Baseline, when set, is the policy to depart from, read from
	// BaselineFile, for a sweep on Backend.
	Baseline     *policy.Policy
	BaselineFile string
	Backend      string
	// Workload names the workload the cells were chosen by ("" none).
	Workload string
}

// SelectOptionsFor are the selection's options over a sweep of fams (the
// reference family first), without the confirmation: the baseline (s's
// policy, checked against fams, or the reference tile), the verdict's
// rule, the describer of the stored candidates, the operator.
func SelectOptionsFor(fams []*kernel.Family, s SelectSettings) (policy.SelectOptions, error) {
	fam := fams[0]
	o := policy.SelectOptions{Reference: fam.Reference, RequireBitwise: s.RequireBitwise,
		Stats: stats.DefaultOptions(), MaxRules: s.MaxRules, Sequential: s.Sequential,
		Describe: Describer(fams), Operator: fam.Operator.Name, Dims: slices.Clone(fam.Operator.Dims[1:]), Workload: s.Workload}
	if p := s.Baseline; p != nil {
		if err := CheckPolicyFamilies(*p, fams, s.Backend); err != nil {
			return o, fmt.Errorf("--baseline: policy %s %w", s.BaselineFile, err)
		}
		if _, err := PolicyTiles(*p, fams); err != nil {
			return o, fmt.Errorf("--baseline: policy %s: %w", s.BaselineFile, err)
		}
		o.Baseline, o.BaselineName = p, "policy "+s.BaselineFile
		if p.Provenance != "" {
			o.BaselineName += " (provenance " + p.Provenance + ")"
		}
	}
	return o, nil
}

// ConfirmationWeights are the progress weights of the confirmations
// policy.Select will ask for on cells with o (ConfirmationCells), in order.
func ConfirmationWeights(ctx context.Context, cells []result.CellResult, o policy.SelectOptions) []float64 {
	var weights []float64
	for _, c := range ConfirmationCells(ctx, cells, o) {
		weights = append(weights, progress.CellWeight(c))
	}
	return weights
}

// ConfirmOptions are the timing of select's confirmations: the sweep's
// seed is mixed so that their inputs differ from the sweep's.
type ConfirmOptions struct {
	Seed       uint64
	Measure    measure.Options
	MaxSamples int
	// Weights are the progress weights of the confirmations
	// (ConfirmationWeights), shown on Log.
	Weights []float64
	Log     io.Writer
}

// SweepConfirmer is the confirmation of a selection over the sweep prov of
// fams on executor ex (DeviceConfirmer, with the sweep's source src and
// operand types): only on the sweep's device, which ex must be.
func SweepConfirmer(ctx context.Context, ex Executor, fams []*kernel.Family, prov result.Provenance, src string, o ConfirmOptions) (policy.Confirmer, error) {
	types, err := SweepTypes(prov)
	if err != nil {
		return nil, err
	}
	dev, err := ex.Device(ctx)
	if err != nil {
		return nil, err
	}
	if dev.Name != prov.Device || dev.Arch != prov.Arch {
		return nil, fmt.Errorf("the sweep ran on %s (%s) but this machine is %s (%s): confirm on the sweep's device, or --confirm=false",
			prov.Device, prov.Arch, dev.Name, dev.Arch)
	}
	opts := ABOptions{Seed: o.Seed ^ 0x636f6e6669726d, Types: types, Measure: o.Measure, MaxSamples: o.MaxSamples}
	prog := progress.New(o.Log, "confirm", o.Weights)
	return DeviceConfirmer(ex, fams, src, opts, func(what string) { prog.Step(what, "done", false) }), nil
}
