package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/tilefit/tilefit/internal/input"
	"github.com/tilefit/tilefit/internal/outpath"
	"github.com/tilefit/tilefit/kernel"
	"github.com/tilefit/tilefit/measure"
	"github.com/tilefit/tilefit/policy"
	"github.com/tilefit/tilefit/result"
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
	// will ask for, for the progress display (set by selectOptions).
	confirmWeights []float64
	// policyOutGiven and emitDirGiven say whether --policy-out and
	// --emit-dir were given (set by given).
	policyOutGiven, emitDirGiven bool
}

// given notes which of the output flags fs parsed were given: without
// --policy-out, the policy goes into the selector's folder when there is
// one (--emit or --emit-dir), not the working directory.
func (f *selectFlags) given(fs *flagSet) {
	fs.Visit(func(fl *flag.Flag) {
		switch fl.Name {
		case "policy-out", "out":
			f.policyOutGiven = true
		case "emit-dir":
			f.emitDirGiven = true
		}
	})
}

// outputs are where the selection goes (policy.Outputs), with the emit
// kinds checked.
func (f *selectFlags) outputs(kinds []string) policy.Outputs {
	return policy.Outputs{PolicyOut: f.out, PolicyOutGiven: f.policyOutGiven, EmitDir: f.emitDir, EmitDirGiven: f.emitDirGiven,
		Kinds: kinds, JSON: f.format == "json"}
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
	fs.StringVar(&f.out, "policy-out", "policy.json", "policy file to write (\"\": none; default: policy.json in --emit-dir with --emit or --emit-dir, else here)")
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
			f.given(fs)
			return runSelect(ctx, &f, deviceConfirmer, stdout, stderr)
		}}
}

// runSelect is tilefit select after flag parsing, in its phases: the
// flags checked, the sweep's cells chosen, the selection's options (with
// the device confirmation), the selection and its outputs.
func runSelect(ctx context.Context, f *selectFlags, newConfirmer confirmerFactory, stdout, stderr io.Writer) error {
	in, err := selectInputsOf(ctx, f)
	if err != nil {
		return err
	}
	cells, fams, err := tune.SelectSweep(ctx, in.query, registryFrom(ctx), stderr)
	if err != nil {
		return err
	}
	o, done, err := selectOptions(ctx, f, in, cells, fams, newConfirmer, stderr)
	if err != nil {
		return err
	}
	defer done()
	p, err := policy.Select(ctx, cells, o)
	if err != nil {
		if ctx.Err() != nil {
			fmt.Fprintln(stderr, "\ninterrupted; no policy written")
			return &exitError{code: ExitInterrupted, err: errors.New("")}
		}
		return err
	}
	if note := assumesNote(&p, fams); note != "" {
		fmt.Fprintln(stderr, note)
	}
	return f.outputs(in.kinds).Write(p, stdout, stderr)
}

// assumesNote names the policy's tiles that assume constant weights
// (kernel.Family.Assumes: PDL 2 copies weights before waiting for the
// kernel before), "" when none does.
func assumesNote(p *policy.Policy, fams []*kernel.Family) string {
	var names []string
	for _, t := range p.Tiles {
		for _, f := range fams {
			if f.Name == t.Family && f.Assumes(t.Params) {
				names = append(names, t.Name)
			}
		}
	}
	if len(names) == 0 {
		return ""
	}
	verb := " assume"
	if len(names) == 1 {
		verb = " assumes"
	}
	return "note: " + strings.Join(names, ", ") + verb + " the weights constant: valid only where no kernel before the operator writes them (as in inference; not after a kernel that dequantises or updates them)"
}

// selectInputs are select's flags checked and read: the emit kinds, the
// timing protocol of the confirmations, the query for the sweep's cells
// and the baseline policy.
type selectInputs struct {
	kinds   []string
	measure measure.Options
	query   tune.SelectQuery
	basePol *policy.Policy
}

// selectInputsOf checks select's flags and reads the files they name (the
// workload, the baseline policy).
func selectInputsOf(ctx context.Context, f *selectFlags) (selectInputs, error) {
	var in selectInputs
	if f.format != "md" && f.format != "json" {
		return in, fmt.Errorf("--format: want md or json, got %q", f.format)
	}
	var emit []string
	if f.emit != "" {
		var err error
		if emit, err = input.SplitList("--emit", f.emit); err != nil {
			return in, err
		}
	}
	for _, k := range emit {
		if policy.EmitNames(k) == nil {
			return in, fmt.Errorf("--emit: unknown kind %q (want %s)", k, strings.Join(policy.EmitKinds, ", "))
		}
		in.kinds = append(in.kinds, k)
	}
	if f.maxRules < 0 || f.maxRules > maxCount {
		return in, fmt.Errorf("--max-rules: want 0 (no cap) to %d, got %d", maxCount, f.maxRules)
	}
	// No output may land on what select reads (issue 18): checked before
	// anything is read or written.
	prot := []outpath.Protected{outpath.Database(f.db), outpath.Input("the baseline policy", f.baseline),
		outpath.Input("the source file", f.source), outpath.Input("the workload file", f.wl)}
	if err := f.outputs(in.kinds).Check(prot...); err != nil {
		return in, err
	}
	if f.source != "" {
		// Read when a confirmation needs it; checked now in any case.
		if _, err := tune.ReadSource(ctx, "--source", f.source); err != nil {
			return in, err
		}
	}
	if err := (&sweepFlags{rounds: f.rounds, dispatches: f.dispatches, budget: f.budget, maxSamples: f.maxSamples}).checkNumbers(); err != nil {
		return in, err
	}
	var err error
	if in.measure, err = measure.OptionsFor(f.rounds, f.dispatches, f.budget); err != nil {
		return in, err
	}
	if err := backendsFrom(ctx).Check(f.backend); err != nil {
		return in, err
	}
	in.query = tune.SelectQuery{DB: f.db, Backend: f.backend, Provenance: f.prov}
	if f.family != "" {
		if in.query.Families, err = input.SplitList("--family", f.family); err != nil {
			return in, err
		}
		for _, name := range in.query.Families {
			if _, err := registryFrom(ctx).Lookup(f.backend, name); err != nil {
				return in, err
			}
		}
	}
	if f.wl != "" {
		w, err := workload.OpenContext(ctx, f.wl, workload.Options{})
		if err != nil {
			return in, err
		}
		in.query.Workload = &w
	}
	var ms []int
	switch {
	case f.ms != "":
		if ms, err = workload.ParseMs("--m", f.ms); err != nil {
			return in, err
		}
	case in.query.Workload != nil:
		ms = in.query.Workload.Ms
	}
	if ms != nil {
		in.query.Ms = map[int]bool{}
		for _, m := range ms {
			in.query.Ms[m] = true
		}
	}
	if f.baseline != "" {
		p, _, err := readPolicy(ctx, f.baseline)
		if err != nil {
			return in, fmt.Errorf("--baseline: %w", err)
		}
		in.basePol = &p
	}
	return in, nil
}

// selectOptions are the selection's options (tune.SelectOptionsFor) and,
// with --confirm, the confirmation on the device (done releases it).
func selectOptions(ctx context.Context, f *selectFlags, in selectInputs, cells []result.CellResult, fams []*kernel.Family,
	newConfirmer confirmerFactory, stderr io.Writer) (o policy.SelectOptions, done func(), err error) {
	s := tune.SelectSettings{RequireBitwise: f.requireBitwise, MaxRules: f.maxRules, Sequential: in.measure.SequentialRule(),
		Baseline: in.basePol, BaselineFile: f.baseline, Backend: f.backend}
	if w := in.query.Workload; w != nil {
		s.Workload = w.Name
	}
	if o, err = tune.SelectOptionsFor(fams, s); err != nil {
		return o, nil, err
	}
	done = func() {}
	if f.confirm {
		f.confirmWeights = tune.ConfirmationWeights(ctx, cells, o)
		confirm, release, err := newConfirmer(ctx, f, fams, cells[len(cells)-1].Prov, stderr)
		if err != nil {
			return o, nil, err
		}
		o.Confirm, done = confirm, release
	}
	return o, done, nil
}

// deviceConfirmer confirms on the device through tune.ABCell, with the
// sweep's source, on the sweep's device only.
func deviceConfirmer(ctx context.Context, f *selectFlags, fams []*kernel.Family, prov result.Provenance, stderr io.Writer) (policy.Confirmer, func(), error) {
	src, err := tune.SweepSource(fams, prov, f.source, func() (string, error) { return tune.ReadSource(ctx, "--source", f.source) })
	if err != nil {
		return nil, nil, err
	}
	mo, err := measure.OptionsFor(f.rounds, f.dispatches, f.budget)
	if err != nil {
		return nil, nil, err
	}
	sf := sweepFlags{backend: f.backend, isolate: f.isolate}
	ex := sf.executor(ctx)
	confirm, err := tune.SweepConfirmer(ctx, ex, fams, prov, src, tune.ConfirmOptions{Seed: f.seed, Measure: mo, MaxSamples: f.maxSamples,
		Weights: f.confirmWeights, Log: stderr})
	if err != nil {
		ex.Close()
		return nil, nil, err
	}
	return confirm, func() { ex.Close() }, nil
}
