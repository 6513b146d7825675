package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

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
and the workload's shapes (or --provenance KEY). The baseline is the
family's reference tile everywhere, or --baseline FILE (a policy).

Writes the policy (JSON, every cell's ratio, interval, verdict and reason)
to --policy-out, the selector code with --emit go,c,json into --emit-dir, and
prints the decision table (Markdown; --format json prints the policy).
`

// selectFlags are tilefit select's flags.
type selectFlags struct {
	db, backend, family, wl, ms, prov, baseline, out, emit, emitDir, source, format string
	requireBitwise, confirm, isolate                                                bool
	maxRules, rounds, dispatches, maxSamples                                        int
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
	fs.StringVar(&f.family, "family", "gemm_f16", "kernel family of the sweep")
	fs.StringVar(&f.wl, "workload", "", "preset or YAML workload file: only its shapes and M, calls from it (default: every cell of the sweep)")
	fs.StringVar(&f.ms, "m", "", "token counts M, comma-separated (default: the workload's, or every swept M)")
	fs.StringVar(&f.prov, "provenance", "", "provenance key of the sweep (default: the latest matching one)")
	fs.StringVar(&f.baseline, "baseline", "", "policy file to depart from (default: the family's reference tile everywhere)")
	fs.BoolVar(&f.requireBitwise, "require-bitwise", true, "admit only candidates bitwise equal to the reference tile")
	fs.BoolVar(&f.confirm, "confirm", true, "re-measure each winner against the baseline in a fresh paired round (needs the sweep's device)")
	fs.IntVar(&f.maxRules, "max-rules", 0, "at most this many rules per shape (0: no cap)")
	fs.StringVar(&f.out, "policy-out", "policy.json", "policy file to write (\"\": none)")
	fs.StringVar(&f.emit, "emit", "", "selector code to generate: go, c, json, comma-separated")
	fs.StringVar(&f.emitDir, "emit-dir", "tileselect", "directory for --emit's files")
	fs.StringVar(&f.format, "format", "md", "stdout: md (decision table) or json (the policy)")
	fs.StringVar(&f.source, "source", "", "the edited family source the sweep ran (when it was not the built-in one), for the confirmation")
	fs.IntVar(&f.rounds, "rounds", d.Rounds, "paired rounds per confirmation")
	fs.IntVar(&f.dispatches, "dispatches", 0, "dispatches per sample in a confirmation (0: about 1 ms per sample)")
	fs.IntVar(&f.maxSamples, "max-samples", 1<<16, "elements per confirmation checked against the float64 reference")
	fs.DurationVar(&f.budget, "budget", d.Budget, "timing budget per confirmation")
	fs.Uint64Var(&f.seed, "seed", 1, "seed for the confirmations' inputs (mixed so they differ from the sweep's)")
	fs.BoolVar(&f.isolate, "isolate", true, "run confirmations in a worker process")
}

// confirmerFactory returns the confirmation step for a sweep: the CLI's
// runs tune.ABCell on the device; tests inject fixed samples.
type confirmerFactory func(ctx context.Context, f *selectFlags, fam *kernel.Family, prov result.Provenance, stderr io.Writer) (policy.Confirmer, func(), error)

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
		case policy.EmitGoKind, policy.EmitCKind, policy.EmitJSONKind:
			kinds = append(kinds, k)
		default:
			return fmt.Errorf("--emit: unknown kind %q (want go, c, json)", k)
		}
	}
	if f.maxRules < 0 {
		return fmt.Errorf("--max-rules: want ≥ 0, got %d", f.maxRules)
	}
	if err := (&sweepFlags{rounds: f.rounds, dispatches: f.dispatches, budget: f.budget, maxSamples: f.maxSamples}).checkNumbers(); err != nil {
		return err
	}
	fam, err := registryFrom(ctx).Lookup(f.backend, f.family)
	if err != nil {
		if opener(f.backend) == nil {
			return fmt.Errorf("unknown backend %q (known: cpu, cuda)", f.backend)
		}
		return err
	}
	var base *policy.Policy
	baseName := ""
	if f.baseline != "" {
		p, _, err := readPolicy(ctx, f.baseline)
		if err != nil {
			return fmt.Errorf("--baseline: %w", err)
		}
		if p.Family != fam.Name || p.Backend != f.backend {
			return fmt.Errorf("--baseline: policy %s is for family %s on %s, not %s on %s", f.baseline, p.Family, p.Backend, fam.Name, f.backend)
		}
		if err := checkPolicyTiles(p, fam); err != nil {
			return fmt.Errorf("--baseline: policy %s: %w", f.baseline, err)
		}
		base = &p
		baseName = "policy " + f.baseline
		if p.Provenance != "" {
			baseName += " (provenance " + p.Provenance + ")"
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
	st, err := store.OpenReadOnly(ctx, f.db)
	if err != nil {
		return err
	}
	defer st.Close()
	all, err := st.Cells(ctx, store.Filter{Backend: f.backend, Family: fam.Name})
	if err != nil {
		return err
	}
	var cells, provCandidates []result.CellResult
	for _, c := range all {
		if ms != nil && !ms[c.Cell.M] {
			continue
		}
		if w != nil {
			s, ok := w.Shape(c.Cell.Shape)
			if !ok || s.N != c.Cell.N || s.K != c.Cell.K {
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
		what := fmt.Sprintf("family %s on %s", fam.Name, f.backend)
		if w != nil {
			what += " for workload " + w.Name
		}
		if f.prov != "" {
			what += " with provenance " + f.prov
		}
		return fmt.Errorf("no swept cells of %s in %s; run tilefit sweep first", what, f.db)
	}
	prov := cells[len(cells)-1].Prov
	key := prov.Key()
	writeProvenanceChoice(stderr, f.db, provCandidates, key, fam, f.prov != "")
	kept := cells[:0]
	for _, c := range cells {
		if c.Prov.Key() == key {
			kept = append(kept, c)
		}
	}
	cells = kept

	o := policy.SelectOptions{Reference: fam.Reference, Baseline: base, BaselineName: baseName, RequireBitwise: f.requireBitwise,
		Stats: stats.DefaultOptions(), MaxRules: f.maxRules}
	if w != nil {
		o.Workload = w.Name
	}
	if f.confirm {
		f.confirmWeights = confirmationWeights(ctx, cells, o)
		confirm, done, err := newConfirmer(ctx, f, fam, prov, stderr)
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

// deviceConfirmer confirms on the device through tune.ABCell, with the
// sweep's source, on the sweep's device only.
func deviceConfirmer(ctx context.Context, f *selectFlags, fam *kernel.Family, prov result.Provenance, stderr io.Writer) (policy.Confirmer, func(), error) {
	src := ""
	if result.SourceHash(fam.Source) != prov.SourceHash {
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
	sf := sweepFlags{backend: f.backend, isolate: f.isolate}
	ex := sf.executor(registryFrom(ctx))
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
	mo := measure.DefaultOptions()
	mo.Rounds, mo.Dispatches, mo.Budget = f.rounds, f.dispatches, f.budget
	mo.MinRounds = min(mo.MinRounds, f.rounds)
	var types map[string]kernel.DType
	if prov.OutF16() {
		types = map[string]kernel.DType{"Y": kernel.F16}
	}
	opts := tune.ABOptions{Seed: f.seed ^ 0x636f6e6669726d, Types: types, Measure: mo, MaxSamples: f.maxSamples}
	prog := newProgress(stderr, "confirm", f.confirmWeights)
	confirm := func(ctx context.Context, cell result.Cell, baseline, cand string) (policy.Confirmation, error) {
		res, err := tune.ABCell(ctx, ex, fam, cell, tune.ABSide{Label: "A", Source: src, Tile: baseline},
			tune.ABSide{Label: "B", Source: src, Tile: cand}, opts)
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
			c.Failed = fmt.Sprintf("baseline %s %s: %s", baseline, ca.Status, firstLine(ca.Detail))
		case cb.Status != result.OK:
			c.Failed = fmt.Sprintf("%s %s: %s", cand, cb.Status, firstLine(cb.Detail))
		default:
			c.A, c.B, c.Bitwise = ca.Samples, cb.Samples, cb.Bitwise
		}
		prog.step(fmt.Sprintf("confirm %s M=%d: %s against baseline %s", cell.Shape, cell.M, cand, baseline), "done", false)
		return c, nil
	}
	return confirm, func() { ex.Close() }, nil
}
