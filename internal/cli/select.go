package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/tilefit/tilefit/internal/progress"
	"github.com/tilefit/tilefit/kernel"
	"github.com/tilefit/tilefit/measure"
	"github.com/tilefit/tilefit/policy"
	"github.com/tilefit/tilefit/result"
	"github.com/tilefit/tilefit/stats"
	"github.com/tilefit/tilefit/store"
	"github.com/tilefit/tilefit/tune"
	"github.com/tilefit/tilefit/workload"
)

const selectUsage = `Usage: tilefit select [flags]

Turns a stored sweep into a tile policy: for each shape a piecewise choice
of tile over M. Per cell (shape × M) the fastest admitted candidate (OK,
timed, and with --require-bitwise bitwise equal to the reference tile;
vendor libraries are shown beside, never chosen) is re-measured against the
cell's baseline tile in a fresh paired round (--confirm, against the
winner's curse); the cell departs from the baseline only on a "faster"
verdict (95% interval below 0.99), so no cell regresses by more than 1%.
Per shape the cells are compressed into rules "tile T for M < threshold",
at most --max-rules of them (0: no cap) chosen to minimise Σ calls × µs;
between two measured M values the baseline keeps the gap unless both
neighbours departed (then the threshold is the midpoint): see
docs/ab-select.md.

The sweep is the latest provenance in --db matching --backend, --family
and the workload's shapes (or --provenance KEY). A sweep over several
families of an operator (--family gemm_f16,gemm_wgmma) is selected across
all of them. Per shape the rules stay in one numerics class at every M,
so the engine's outputs do not depend on M (batch invariance): another
class than the baseline's is taken only when its total over the shape's M
is confirmed faster; tiles that failed the sweep's batch-invariance check
are left out. The baseline is the reference tile of the first family
everywhere, or --baseline FILE (a policy).

Writes the policy (JSON, every cell's ratio, interval, verdict and reason)
to --policy-out, the selector code with --emit go,c,cpp,json into --emit-dir (it
selects by shape name or by the shape's dimensions, returns the tile's
family, numerics class and parameters, and checks the sweep's provenance;
an unknown shape gets none), and prints the decision table (Markdown;
--format json prints the policy).
`

// selectFlags are tilefit select's flags.
type selectFlags struct {
	db, backend, family, wl, ms, prov, baseline, out, emit, emitDir, source, format string
	requireBitwise, confirm, isolate                                                bool
	rounds                                                                          string
	maxRules, dispatches, maxSamples                                                int
	budget                                                                          time.Duration
	seed                                                                            uint64
	// confirmWeights are the expected costs of the confirmations select
	// will ask for, for the progress display (set by runSelect).
	confirmWeights []float64
}

func (f *selectFlags) register(fs *flagSet) {
	d := measure.DefaultOptions()
	fs.StringVar(&f.db, "db", "tilefit.db", "database holding the sweep: a SQLite file or a postgres:// URL")
	fs.StringVar(&f.backend, "backend", "cpu", "backend of the sweep: cpu or cuda")
	fs.StringVar(&f.family, "family", "", "kernel families of the sweep, comma-separated (default: those of the latest sweep on --backend)")
	fs.StringVar(&f.wl, "workload", "", "preset or YAML workload file: only its shapes and M, calls from it (default: every cell of the sweep)")
	fs.StringVar(&f.ms, "m", "", "token counts M, comma-separated (default: the workload's, or every swept M)")
	fs.StringVar(&f.prov, "provenance", "", "provenance key of the sweep (default: the latest matching one)")
	fs.StringVar(&f.baseline, "baseline", "", "policy file to depart from (default: the family's reference tile everywhere)")
	fs.BoolVar(&f.requireBitwise, "require-bitwise", true, "admit only candidates bitwise equal to the reference tile")
	fs.BoolVar(&f.confirm, "confirm", true, "re-measure each winner against the baseline in a fresh paired round (needs the sweep's device)")
	fs.IntVar(&f.maxRules, "max-rules", 0, "at most this many rules per shape (0: no cap)")
	fs.StringVar(&f.out, "policy-out", "policy.json", "policy file to write (\"\": none)")
	fs.StringVar(&f.emit, "emit", "", "selector code to generate: go, c, cpp, json, comma-separated")
	fs.StringVar(&f.emitDir, "emit-dir", "tileselect", "directory for --emit's files")
	fs.StringVar(&f.format, "format", "md", "stdout: md (decision table) or json (the policy)")
	fs.StringVar(&f.source, "source", "", "the edited family source the sweep ran (when it was not the built-in one), for the confirmation")
	fs.StringVar(&f.rounds, "rounds", roundsAuto, roundsUsage+" (per confirmation)")
	fs.IntVar(&f.dispatches, "dispatches", 0, "dispatches per sample in a confirmation (0: about 1 ms per sample)")
	fs.IntVar(&f.maxSamples, "max-samples", 1<<16, "elements per confirmation checked against the float64 reference")
	fs.DurationVar(&f.budget, "budget", d.Budget, "timing budget per confirmation")
	fs.Uint64Var(&f.seed, "seed", 1, "seed for the confirmations' inputs (mixed so they differ from the sweep's)")
	fs.BoolVar(&f.isolate, "isolate", true, "run confirmations in a worker process")
}

// confirmerFactory returns the confirmation step for a sweep of families
// fams (the reference family first): the CLI's runs tune.ABCell on the
// device; tests inject fixed samples.
type confirmerFactory func(ctx context.Context, f *selectFlags, fams []*kernel.Family, prov result.Provenance, stderr io.Writer) (policy.Confirmer, func(), error)

func selectVerb() verb {
	return verb{name: "select", summary: "turn a sweep into a tile policy and selector code", usage: selectUsage,
		run: func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
			fs := newFlags("select", selectUsage, stdout)
			var f selectFlags
			f.register(fs)
			deprecatedFlag(fs.FlagSet, stderr, "out", "policy-out")
			if err := parse(fs, args); err != nil {
				return err
			}
			if fs.NArg() > 0 {
				return fmt.Errorf("unexpected arguments %q", fs.Args())
			}
			return runSelect(ctx, &f, deviceConfirmer, stdout, stderr)
		}}
}

// runSelect is tilefit select after flag parsing.
func runSelect(ctx context.Context, f *selectFlags, newConfirmer confirmerFactory, stdout, stderr io.Writer) error {
	if f.format != "md" && f.format != "json" {
		return fmt.Errorf("--format: want md or json, got %q", f.format)
	}
	var kinds, emit []string
	if f.emit != "" {
		var err error
		if emit, err = splitStrict("--emit", f.emit); err != nil {
			return err
		}
	}
	for _, k := range emit {
		switch k {
		case policy.EmitGoKind, policy.EmitCKind, policy.EmitCPPKind, policy.EmitJSONKind:
			kinds = append(kinds, k)
		default:
			return fmt.Errorf("--emit: unknown kind %q (want %s)", k, strings.Join(policy.EmitKinds, ", "))
		}
	}
	if f.maxRules < 0 {
		return fmt.Errorf("--max-rules: want ≥ 0, got %d", f.maxRules)
	}
	if err := (&sweepFlags{rounds: f.rounds, dispatches: f.dispatches, budget: f.budget, maxSamples: f.maxSamples}).checkNumbers(); err != nil {
		return err
	}
	mo, err := measureOptions(f.rounds, f.dispatches, f.budget)
	if err != nil {
		return err
	}
	reg := registryFrom(ctx)
	if err := backendsFrom(ctx).Check(f.backend); err != nil {
		return err
	}
	var want []string // the families asked for, as a set
	if f.family != "" {
		var err error
		if want, err = splitStrict("--family", f.family); err != nil {
			return err
		}
		for _, name := range want {
			if _, err := reg.Lookup(f.backend, name); err != nil {
				return err
			}
		}
	}
	var w *workload.Workload
	if f.wl != "" {
		x, err := workload.OpenContext(ctx, f.wl, workload.Options{})
		if err != nil {
			return err
		}
		w = &x
	}
	var ms map[int]bool
	if f.ms != "" {
		list, err := parseMs("--m", f.ms)
		if err != nil {
			return err
		}
		ms = map[int]bool{}
		for _, m := range list {
			ms[m] = true
		}
	} else if w != nil {
		ms = map[int]bool{}
		for _, m := range w.Ms {
			ms[m] = true
		}
	}
	var basePol policy.Policy
	if f.baseline != "" {
		var err error
		if basePol, _, err = readPolicy(ctx, f.baseline); err != nil {
			return fmt.Errorf("--baseline: %w", err)
		}
	}
	st, err := store.OpenReadOnly(ctx, f.db)
	if err != nil {
		return err
	}
	defer st.Close()
	all, err := st.Cells(ctx, store.Filter{Backend: f.backend})
	if err != nil {
		return err
	}
	var cells, provCandidates []result.CellResult
	sets := map[string]bool{} // the family lists swept on the backend
	for _, c := range all {
		sets[c.Prov.Family] = true
		if want != nil && !sameSet(strings.Split(c.Prov.Family, ","), want) {
			continue
		}
		if ms != nil && !ms[c.Cell.M] {
			continue
		}
		if w != nil {
			s, ok := w.Shape(c.Cell.Shape)
			if !ok || !sameSize(s, c.Cell) {
				continue
			}
			c.Cell.Calls = s.Calls
		}
		provCandidates = append(provCandidates, c)
		if f.prov != "" && c.Prov.Key() != f.prov {
			continue
		}
		cells = append(cells, c)
	}
	if len(cells) == 0 {
		what := "any family"
		if want != nil {
			what = "family " + strings.Join(want, ",")
		}
		what += " on " + f.backend
		if w != nil {
			what += " for workload " + w.Name
		}
		if f.prov != "" {
			what += " with provenance " + f.prov
		}
		msg := fmt.Sprintf("no swept cells of %s in %s; run tilefit sweep first", what, f.db)
		if want != nil && len(sets) > 0 {
			var have []string
			for s := range sets {
				have = append(have, s)
			}
			slices.Sort(have)
			msg += fmt.Sprintf(" (swept on %s: --family %s)", f.backend, strings.Join(have, " or --family "))
		}
		return errors.New(msg)
	}
	prov := cells[len(cells)-1].Prov
	key := prov.Key()
	writeProvenanceChoice(stderr, f.db, provCandidates, key, reg, f.prov != "")
	kept := cells[:0]
	for _, c := range cells {
		if c.Prov.Key() == key {
			kept = append(kept, c)
		}
	}
	cells = kept
	var fams []*kernel.Family
	for _, name := range strings.Split(prov.Family, ",") {
		fam, err := reg.Lookup(f.backend, name)
		if err != nil {
			return fmt.Errorf("the sweep's family: %w", err)
		}
		fams = append(fams, fam)
	}
	fam := fams[0]
	var base *policy.Policy
	baseName := ""
	if f.baseline != "" {
		p := basePol
		if err := tune.CheckPolicyFamilies(p, fams, f.backend); err != nil {
			return fmt.Errorf("--baseline: policy %s %w", f.baseline, err)
		}
		if _, err := tune.PolicyTiles(p, fams); err != nil {
			return fmt.Errorf("--baseline: policy %s: %w", f.baseline, err)
		}
		base = &p
		baseName = "policy " + f.baseline
		if p.Provenance != "" {
			baseName += " (provenance " + p.Provenance + ")"
		}
	}

	o := policy.SelectOptions{Reference: fam.Reference, Baseline: base, BaselineName: baseName, RequireBitwise: f.requireBitwise,
		Stats: stats.DefaultOptions(), MaxRules: f.maxRules, Sequential: sequentialOf(mo),
		Describe: describer(fams), Operator: fam.Operator.Name, Dims: slices.Clone(fam.Operator.Dims[1:])}
	if w != nil {
		o.Workload = w.Name
	}
	if f.confirm {
		f.confirmWeights = confirmationWeights(ctx, cells, o)
		confirm, done, err := newConfirmer(ctx, f, fams, prov, stderr)
		if err != nil {
			return err
		}
		defer done()
		o.Confirm = confirm
	}
	p, err := policy.Select(ctx, cells, o)
	if err != nil {
		if ctx.Err() != nil {
			fmt.Fprintln(stderr, "\ninterrupted; no policy written")
			return &exitError{code: ExitInterrupted, err: errors.New("")}
		}
		return err
	}
	if f.out != "" {
		if err := policy.Save(f.out, p); err != nil {
			return fmt.Errorf("--policy-out: %w", err)
		}
		fmt.Fprintf(stderr, "wrote %s\n", f.out)
	}
	if len(kinds) > 0 {
		paths, err := policy.EmitFiles(f.emitDir, p, kinds)
		if err != nil {
			return fmt.Errorf("--emit: %w", err)
		}
		for _, path := range paths {
			fmt.Fprintf(stderr, "wrote %s\n", path)
		}
	}
	if f.format == "json" {
		return policy.Write(stdout, p)
	}
	return policy.Markdown(stdout, p)
}

// sameSize reports whether cell c is of workload shape s's size: every
// dimension s gives (N, K, and others such as S), as the cell recorded them.
func sameSize(s workload.Shape, c result.Cell) bool {
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

// describer describes a stored candidate of a sweep of fams: its family,
// numerics class and parameters (the stored ones, parsed once; a tile the
// sweep lacks, named "TILE" or "FAMILY/TILE", from its name).
func describer(fams []*kernel.Family) func(result.Candidate) (policy.Tile, error) {
	return func(c result.Candidate) (policy.Tile, error) {
		var t tune.TileRef
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
			if t, err = tune.ResolveTile(fams, c.Tile); err != nil {
				return policy.Tile{}, err
			}
		}
		return policy.Tile{Name: c.Tile, Family: t.Family.Name, Class: tune.NumericsClass(t.Family, t.Params), Params: t.Params}, nil
	}
}

// deviceConfirmer confirms on the device through tune.ABCell, with the
// sweep's source, on the sweep's device only.
func deviceConfirmer(ctx context.Context, f *selectFlags, fams []*kernel.Family, prov result.Provenance, stderr io.Writer) (policy.Confirmer, func(), error) {
	fam := fams[0]
	src := ""
	srcs := make([]string, len(fams))
	for i, g := range fams {
		srcs[i] = g.Source
	}
	if result.SourceHash(strings.Join(srcs, "\x00")) != prov.SourceHash {
		if len(fams) > 1 {
			return nil, nil, fmt.Errorf("the sweep's sources (sha256 %.12s…) are not the built-in ones of %s: confirm with the tilefit that swept them, or --confirm=false", prov.SourceHash, prov.Family)
		}
		if f.source == "" {
			return nil, nil, fmt.Errorf("the sweep ran an edited source (sha256 %.12s…), not the built-in one: pass it with --source FILE, or --confirm=false", prov.SourceHash)
		}
		b, err := readSource(ctx, "--source", f.source)
		if err != nil {
			return nil, nil, err
		}
		if h := result.SourceHash(b); h != prov.SourceHash {
			return nil, nil, fmt.Errorf("--source %s (sha256 %.12s…) is not the source the sweep ran (sha256 %.12s…)", f.source, h, prov.SourceHash)
		}
		src = b
	}
	famOf := map[string]*kernel.Family{}
	for _, g := range fams {
		famOf[g.Name] = g
	}
	sf := sweepFlags{backend: f.backend, isolate: f.isolate}
	ex := sf.executor(ctx)
	dev, err := ex.Device(ctx)
	if err != nil {
		ex.Close()
		return nil, nil, err
	}
	if dev.Name != prov.Device || dev.Arch != prov.Arch {
		ex.Close()
		return nil, nil, fmt.Errorf("the sweep ran on %s (%s) but this machine is %s (%s): confirm on the sweep's device, or --confirm=false",
			prov.Device, prov.Arch, dev.Name, dev.Arch)
	}
	mo, err := measureOptions(f.rounds, f.dispatches, f.budget)
	if err != nil {
		ex.Close()
		return nil, nil, err
	}
	types, err := kernel.ParseTypes(prov.Types)
	if err != nil {
		ex.Close()
		return nil, nil, fmt.Errorf("the sweep's operand types: %w", err)
	}
	if prov.Types == "" && prov.OutF16() {
		types = map[string]kernel.DType{"Y": kernel.F16}
	}
	opts := tune.ABOptions{Seed: f.seed ^ 0x636f6e6669726d, Types: types, Measure: mo, MaxSamples: f.maxSamples}
	prog := progress.New(stderr, "confirm", f.confirmWeights)
	side := func(label string, t policy.Tile) (tune.ABSide, error) {
		g := famOf[t.Family]
		if g == nil {
			return tune.ABSide{}, fmt.Errorf("tile %s: family %s is not among the sweep's", t.Name, t.Family)
		}
		s := tune.ABSide{Label: label, Family: g, Params: t.Params}
		if g == fam {
			s.Source = src
		}
		return s, nil
	}
	confirm := func(ctx context.Context, cell result.Cell, baseline, cand policy.Tile) (policy.Confirmation, error) {
		a, err := side("A", baseline)
		if err != nil {
			return policy.Confirmation{}, err
		}
		b, err := side("B", cand)
		if err != nil {
			return policy.Confirmation{}, err
		}
		res, err := tune.ABCell(ctx, ex, fam, cell, a, b, opts)
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
			c.Failed = fmt.Sprintf("baseline %s %s: %s", baseline.Name, ca.Status, tune.FirstLine(ca.Detail))
		case cb.Status != result.OK:
			c.Failed = fmt.Sprintf("%s %s: %s", cand.Name, cb.Status, tune.FirstLine(cb.Detail))
		default:
			c.A, c.B, c.Bitwise = ca.Samples, cb.Samples, cb.Bitwise
		}
		prog.Step(fmt.Sprintf("confirm %s M=%d: %s against baseline %s", cell.Shape, cell.M, cand.Name, baseline.Name), "done", false)
		return c, nil
	}
	return confirm, func() { ex.Close() }, nil
}
