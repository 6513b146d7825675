package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tilefit/tilefit/internal/progress"
	"github.com/tilefit/tilefit/kernel"
	"github.com/tilefit/tilefit/measure"
	"github.com/tilefit/tilefit/report"
	"github.com/tilefit/tilefit/result"
	"github.com/tilefit/tilefit/store"
	"github.com/tilefit/tilefit/tune"
	"github.com/tilefit/tilefit/workload"
)

const sweepUsage = `Usage: tilefit sweep [flags]

Tunes a kernel family over a workload: compiles every candidate tile, proves
each bitwise equal to the reference tile and close to a float64 reference
(outputs poisoned first), times the survivors in paired interleaved rounds,
and stores every sample in the database. Running the same command again
resumes: cells already stored are skipped, new tiles or M values are added.
Prints the Markdown report of the swept cells at the end (--report=false to
skip).

Past one device and one process: --device N runs on device N; --devices all
(or 0,1,…) runs a worker process per device and shares the cells out, each
cell whole on one device. With a postgres:// --db, or --claim on a SQLite
file, any number of sweep processes share the plan: each claims cells with
leases (--lease), saves a cell only while it holds its lease, and takes the
cells of a process that died once their leases end; each waits until the
whole plan is stored. --shard I/N runs only shard I of N of the plan's cells.
`

// sweepFlags are the flags sweep shares with ab and select.
type sweepFlags struct {
	backend, wl, ms, family, tiles, source, db, out string
	check, rounds                                   string
	dispatches, maxSamples, device                  int
	budget                                          time.Duration
	seed                                            uint64
	vendor, aa, isolate, race                       bool
	// given, when set, is the workload instead of --workload (scan
	// generates its own).
	given *workload.Workload
	// outNote, set by configs, says which operators --out-type applied to.
	outNote string
}

func (f *sweepFlags) register(fs interface {
	StringVar(*string, string, string, string)
	IntVar(*int, string, int, string)
	DurationVar(*time.Duration, string, time.Duration, string)
	Uint64Var(*uint64, string, uint64, string)
	BoolVar(*bool, string, bool, string)
}) {
	d := measure.DefaultOptions()
	fs.StringVar(&f.backend, "backend", "cpu", "backend: cpu or cuda")
	fs.StringVar(&f.wl, "workload", "smoke", "preset (smoke, strata) or a YAML workload file")
	fs.StringVar(&f.ms, "m", "", "token counts M, comma-separated (default: the workload's)")
	fs.StringVar(&f.family, "family", "", "kernel families, comma-separated (default: every family of each shape's operator on the backend)")
	fs.StringVar(&f.family, "families", "", "same as --family")
	fs.StringVar(&f.tiles, "tiles", "", "candidate tiles, comma-separated, FAMILY/TILE for a family other than the first (default: the families' sweeps)")
	fs.StringVar(&f.source, "source", "", "file with an edited family source (the whole text 'families source' prints) to tune instead of the built-in one")
	fs.StringVar(&f.db, "db", "tilefit.db", "database: a SQLite file, or a PostgreSQL server's postgres://USER@HOST/DB URL")
	fs.IntVar(&f.device, "device", 0, "device ordinal to run on (cuda: the GPU; the cpu backend has only 0)")
	fs.StringVar(&f.out, "out-type", "f32", "element type of the output operand Y: f32 or f16 (gemm-like operators)")
	fs.StringVar(&f.rounds, "rounds", fmt.Sprint(d.Rounds), roundsUsage)
	fs.IntVar(&f.dispatches, "dispatches", 0, "dispatches per sample (0: about 1 ms per sample, at most 64)")
	fs.IntVar(&f.maxSamples, "max-samples", 1<<16, "elements per cell checked against the float64 reference")
	fs.DurationVar(&f.budget, "budget", d.Budget, "timing budget per cell (auto rounds stop there; fixed rounds are cut to fit, to at least 6)")
	fs.Uint64Var(&f.seed, "seed", 1, "seed for inputs")
	fs.BoolVar(&f.vendor, "vendor", true, "time the vendor library (openblas, cublas) in every cell")
	fs.BoolVar(&f.aa, "aa", true, "time an A/A twin of the reference in one cell per shape class")
	fs.BoolVar(&f.race, "race", true, "let a tile confirmed >10% slower than its cell's best tile leave the timing rounds early (the reference, the A/A twin and the vendor never do)")
	fs.BoolVar(&f.isolate, "isolate", true, "run candidates in a worker process (a crash costs one candidate)")
	fs.StringVar(&f.check, "check", "", "known-answer check added to verification: laplacian (square cells of a plain GEMM: W the periodic 1-D Laplacian, Y must be each row's cyclic second difference exactly)")
}

// config validates the flags into the tune.Config of the workload's first
// operator (without device checks); see configs.
func (f *sweepFlags) config(ctx context.Context, reg *kernel.Registry) (tune.Config, error) {
	cs, err := f.configs(ctx, reg)
	if err != nil {
		return tune.Config{}, err
	}
	return cs[0], nil
}

// configs validates the flags into one tune.Config per operator of the
// workload's shapes, in order of first appearance: each runs that
// operator's shapes with its families on the backend (--family: those
// listed that compute it; default: every registered family of it). It reads
// the workload and source files (only regular files; ctx cancels a read).
func (f *sweepFlags) configs(ctx context.Context, reg *kernel.Registry) ([]tune.Config, error) {
	if err := backendsFrom(ctx).Check(f.backend); err != nil {
		return nil, err
	}
	var listed []*kernel.Family
	if f.family != "" {
		names, err := splitStrict("--family", f.family)
		if err != nil {
			return nil, err
		}
		for _, name := range names {
			fam, err := reg.Lookup(f.backend, name)
			if err != nil {
				return nil, err
			}
			listed = append(listed, fam)
		}
	}
	if err := f.checkNumbers(); err != nil {
		return nil, err
	}
	if f.check != "" && f.check != checkLaplacian {
		return nil, fmt.Errorf("--check: want %s, got %q", checkLaplacian, f.check)
	}
	var tiles []string
	if f.tiles != "" {
		var err error
		if tiles, err = splitStrict("--tiles", f.tiles); err != nil {
			return nil, err
		}
	}
	var mlist []int
	if f.ms != "" {
		var err error
		if mlist, err = parseMs("--m", f.ms); err != nil {
			return nil, err
		}
	}
	var w workload.Workload
	var err error
	if f.given != nil {
		w = *f.given
	} else if w, err = workload.OpenContext(ctx, f.wl, workload.Options{Operators: reg}); err != nil {
		return nil, err
	}
	if mlist != nil {
		if w, err = w.WithMs(mlist); err != nil {
			return nil, fmt.Errorf("--m: %w", err)
		}
	}
	var ops []string
	for _, s := range w.Shapes {
		if !slices.Contains(ops, s.Operator()) {
			ops = append(ops, s.Operator())
		}
	}
	if len(listed) > 0 {
		// Only the operators of the families given.
		var keep []string
		for _, op := range ops {
			for _, fam := range listed {
				if fam.Operator.Name == op && !slices.Contains(keep, op) {
					keep = append(keep, op)
				}
			}
		}
		if len(keep) == 0 {
			return nil, fmt.Errorf("--family %s computes none of the workload's operators (%s)", f.family, strings.Join(ops, ", "))
		}
		ops = keep
	}
	var types map[string]kernel.DType
	switch f.out {
	case "f32":
	case "f16":
		types = map[string]kernel.DType{"Y": kernel.F16}
	default:
		return nil, fmt.Errorf("--out-type: want f32 or f16, got %q", f.out)
	}
	var src string
	if f.source != "" {
		if src, err = readSource(ctx, "--source", f.source); err != nil {
			return nil, err
		}
	}
	mo, err := measureOptions(f.rounds, f.dispatches, f.budget)
	if err != nil {
		return nil, err
	}
	var out []tune.Config
	var applied, kept []string // the operators --out-type applies to, and the others
	for _, opName := range ops {
		var fams []*kernel.Family
		if len(listed) > 0 {
			for _, fam := range listed {
				if fam.Operator.Name == opName {
					fams = append(fams, fam)
				}
			}
		} else {
			fams = reg.Of(f.backend, opName)
		}
		if len(fams) == 0 {
			return nil, fmt.Errorf("no %s family computes operator %s (of the workload's shapes)", f.backend, opName)
		}
		cfg := tune.Config{Families: fams, Workload: w, AA: f.aa, Seed: f.seed, MaxSamples: f.maxSamples, Measure: mo, Source: src,
			Laplacian: f.check == checkLaplacian, NoRace: !f.race}
		if src != "" {
			cfg.SourceName = f.source
		}
		if f.vendor {
			cfg.Baselines = reg.Baselines(f.backend, opName)
		}
		if types != nil {
			if _, _, ok := fams[0].Operator.Operand("Y"); ok {
				if _, err := fams[0].Operator.Typed(types); err != nil {
					return nil, fmt.Errorf("--out-type: %w", err)
				}
				cfg.Types = types
				applied = append(applied, opName)
			} else {
				kept = append(kept, opName+" ("+outputsText(fams[0].Operator)+")")
			}
		}
		cfg.Tiles = tiles
		cands, err := tune.CandidatesOf(fams, cfg.Tiles)
		if err != nil {
			return nil, err
		}
		if src != "" && f.isolate {
			if err := checkFrames("--source", f.source, src, len(cands)+2); err != nil {
				return nil, err
			}
		}
		if src != "" && len(fams) > 1 {
			return nil, fmt.Errorf("--source: the edited source replaces one family; name it with --family (operator %s has %d)", opName, len(fams))
		}
		out = append(out, cfg)
	}
	f.outNote = ""
	if types != nil {
		if len(applied) == 0 {
			return nil, fmt.Errorf("--out-type %s: no operator of the workload has an output operand Y (%s)", f.out, strings.Join(kept, "; "))
		}
		f.outNote = fmt.Sprintf("--out-type %s: applied to the output Y of %s", f.out, strings.Join(applied, ", "))
		if len(kept) > 0 {
			f.outNote += "; " + strings.Join(kept, ", ") + plural(len(kept), " has no operand Y and keeps its", " have no operand Y and keep their") + " own output types"
		}
	}
	return out, nil
}

// Upper bounds of the count flags (issue 18): --dispatches 1099511627776
// ran one sample for ever. Each is far past any useful value.
const (
	maxDispatches = 1 << 20 // calls per sample
	maxSamples    = 1 << 24 // elements checked against float64 per cell
	maxCount      = 1 << 20 // other counts (--max-rules)
)

// outputsText lists an operator's output operands with their types: "h
// f16" or "mixh f16, mixed f32".
func outputsText(op *kernel.Operator) string {
	var parts []string
	for _, o := range op.Operands {
		if o.Dir == kernel.Out {
			parts = append(parts, o.Name+" "+o.DType.String())
		}
	}
	return "outputs " + strings.Join(parts, ", ")
}

// checkNumbers checks the numeric flags, each against its own rule.
func (f *sweepFlags) checkNumbers() error {
	if _, err := measureOptions(f.rounds, 0, 0); err != nil {
		return err
	}
	switch {
	case f.dispatches < 0:
		return fmt.Errorf("--dispatches: want 0 (automatic: about 1 ms per sample) or more, got %d", f.dispatches)
	case f.dispatches > maxDispatches:
		return fmt.Errorf("--dispatches: at most %d calls per sample, got %d (0 chooses about 1 ms per sample)", maxDispatches, f.dispatches)
	case f.budget < 0:
		return fmt.Errorf("--budget: must not be negative, got %s", f.budget)
	case f.maxSamples < 1:
		return fmt.Errorf("--max-samples: want at least 1 element checked against the float64 reference per cell, got %d", f.maxSamples)
	case f.maxSamples > maxSamples:
		return fmt.Errorf("--max-samples: at most %d elements checked against the float64 reference per cell, got %d", maxSamples, f.maxSamples)
	case f.device < 0:
		return fmt.Errorf("--device: want a device ordinal (0 or more), got %d", f.device)
	case f.device > 0 && f.backend == "cpu":
		return fmt.Errorf("--device %d: the cpu backend has one device, 0", f.device)
	}
	return nil
}

// executor returns the executor for the flags on --device: a worker
// process by default.
func (f *sweepFlags) executor(ctx context.Context) tune.Executor {
	return f.executorOn(ctx, f.device)
}

// executorOn returns the executor for the flags on device ordinal device:
// a worker process (its own context on its own device) by default, else
// the backend ctx's registry opens in this process.
func (f *sweepFlags) executorOn(ctx context.Context, device int) tune.Executor {
	if f.isolate {
		return tune.NewWorker(tune.WorkerOptions{Backend: f.backend, Device: device})
	}
	return tune.NewLocal(newBackendOn(backendsFrom(ctx), f.backend, device), registryFrom(ctx))
}

func sweepVerb() verb {
	return verb{name: "sweep", summary: "tune a family over a workload and store every sample", usage: sweepUsage, graceful: true,
		run: func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
			fs := newFlags("sweep", sweepUsage, stdout)
			var f sweepFlags
			f.register(fs)
			deprecatedFlag(fs.FlagSet, stderr, "out", "out-type")
			failOnError := fs.Bool("fail-on-error", false, "exit 1 when any candidate failed")
			showReport := fs.Bool("report", true, "print the Markdown report of the swept cells")
			devicesFlag := fs.String("devices", "", "run on several devices at once, one worker process each: all, or ordinals 0,1,… (cells are shared out; each cell runs whole on one device)")
			shardFlag := fs.String("shard", "", "run only shard I of N of the plan's cells (I/N, I from 0; a stable hash of each cell), e.g. $JOB_COMPLETION_INDEX/8")
			claim := fs.Bool("claim", false, "share the plan with other sweep processes on the same database: cells are claimed with leases (always on with PostgreSQL)")
			lease := fs.Duration("lease", tune.DefaultLease, "how long a claimed cell stays this process's without renewal (renewed every third of it while the cell runs); a dead process's cells go to others after it")
			if err := parse(fs, args); err != nil {
				return err
			}
			if fs.NArg() > 0 {
				return fmt.Errorf("unexpected arguments %q", fs.Args())
			}
			var shard tune.Shard
			if *shardFlag != "" {
				var err error
				if shard, err = tune.ParseShard(*shardFlag); err != nil {
					return fmt.Errorf("--shard: %w", err)
				}
			}
			if *lease < time.Second {
				return fmt.Errorf("--lease: want at least 1s, got %s", *lease)
			}
			var devList []int
			allDevices := false
			if *devicesFlag != "" {
				set := false
				fs.Visit(func(fl *flag.Flag) { set = set || fl.Name == "device" })
				if set {
					return errors.New("--device and --devices: give one (--device N runs on one device, --devices all or 0,1 on several)")
				}
				var err error
				if devList, allDevices, err = parseDevices(*devicesFlag); err != nil {
					return err
				}
				if !allDevices {
					f.device = devList[0]
				}
			}
			if store.IsURL(f.db) {
				if err := store.CheckURL(f.db); err != nil {
					return err
				}
			}
			shared := *claim || store.IsURL(f.db)
			reg := registryFrom(ctx)
			// Until the first cell starts, an interrupt stops at once.
			early, cancelEarly := stopNow(ctx)
			defer cancelEarly()
			cfgs, err := f.configs(early, reg)
			if err != nil {
				return err
			}
			if f.outNote != "" {
				fmt.Fprintln(stderr, f.outNote)
			}
			ex := f.executor(ctx)
			exs := []tune.Executor{ex}
			defer func() {
				for _, e := range exs {
					e.Close()
				}
			}()
			// The device is checked before the database is created, so
			// that a refusal leaves no file behind.
			dev, err := tune.CheckDevice(early, ex, cfgs[0].Workload, reg)
			if err != nil {
				return err
			}
			if allDevices {
				devList = nil
				for i := range max(dev.Count, 1) {
					devList = append(devList, i)
				}
			}
			for _, d := range devList {
				if d >= max(dev.Count, 1) {
					return fmt.Errorf("--devices: no device %d: %s has %d device(s), 0 to %d", d, f.backend, max(dev.Count, 1), max(dev.Count, 1)-1)
				}
			}
			for _, d := range devList[min(1, len(devList)):] {
				exs = append(exs, f.executorOn(ctx, d))
			}
			if len(devList) == 0 {
				devList = []int{f.device}
			}
			var st *store.Store
			if shared && !store.IsURL(f.db) {
				st, err = store.OpenShared(early, f.db)
			} else {
				st, err = store.OpenLocked(early, f.db)
			}
			if err != nil {
				return err
			}
			defer st.Close()
			run := sweepRun{st: st, exs: exs, devList: devList, shard: shard, lease: *lease, owner: tune.DefaultOwner(), shared: shared,
				showReport: *showReport, several: len(cfgs) > 1}
			failures, notRun := 0, 0
			var keys []string
			var missing []tune.Missing
			for _, cfg := range cfgs {
				sum, err := run.sweep(ctx, cfg, stderr)
				if err != nil {
					return err
				}
				failures += sum.Failures
				notRun += sum.NotRun
				missing = append(missing, sum.Missing...)
				keys = append(keys, sum.Prov.Key())
			}
			in, err := run.summary(ctx, keys, cfgs[0].Workload, f.db, f.wl, stdout, stderr)
			if err != nil {
				return err
			}
			writeMissing(stdout, missing)
			if f.source != "" {
				if err := sourceCompiled(in, f.source); err != nil {
					return err
				}
			}
			if notRun > 0 {
				// A cell asked for and not measured is a failure, with or
				// without --fail-on-error (issue 18).
				return failuresError("%d requested cells were not measured (listed above, with why); run the same command again to retry them", notRun)
			}
			if *failOnError && failures > 0 {
				return failuresError("%d failed candidate results (--fail-on-error)", failures)
			}
			return nil
		}}
}

// sweepRun is what a sweep's operators share: the store, the executors
// (one per device) and the shard, lease and claims of the plan.
type sweepRun struct {
	st                          *store.Store
	exs                         []tune.Executor
	devList                     []int
	shard                       tune.Shard
	lease                       time.Duration
	owner                       string
	shared, showReport, several bool
	// beat is how often a line says the sweep is still at its first cell
	// (compiling, verifying) while no cell has finished; 0: 15 s.
	beat time.Duration
}

// sweep runs the plan of one operator's config and prints its summary on
// stderr.
func (r sweepRun) sweep(ctx context.Context, cfg tune.Config, stderr io.Writer) (tune.Summary, error) {
	cfg.Stop = stopFrom(ctx)
	cfg.Shard, cfg.Lease, cfg.Owner = r.shard, r.lease, r.owner
	if r.shared {
		cfg.Claims = r.st
	}
	op, _ := cfg.Families[0].Operator.Typed(cfg.Types)
	cells, _ := tune.CellsOf(cfg.Workload, op)
	total := 0
	for _, c := range cells {
		if r.shard.Has(c) {
			total++
		}
	}
	tiles := "its tiles"
	if cands, err := tune.CandidatesOf(cfg.Families, cfg.Tiles); err == nil {
		tiles = fmt.Sprintf("%d %s", len(cands), plural(len(cands), "tile", "tiles"))
	}
	// Said before the first compile, which can take a while with nothing
	// else on the screen (heartbeat says it goes on).
	fmt.Fprintf(stderr, "operator %s: %d %s, families %s; compiling %s (and the vendor baselines) before the first cell\n",
		op.Name, total, plural(total, "cell", "cells"), familyNames(cfg.Families), tiles)
	if cfg.Laplacian {
		fmt.Fprintln(stderr, tune.LaplacianNote(op, cells))
	}
	var mine []result.Cell
	for _, c := range cells {
		if r.shard.Has(c) {
			mine = append(mine, c)
		}
	}
	show, stop := progress.Heartbeat(stderr, progressPrinter(stderr, mine, r.devList), r.beat)
	sum, err := tune.SweepOn(ctx, cfg, r.exs, r.st, show)
	stop()
	if errors.Is(err, tune.ErrInterrupted) {
		fmt.Fprintf(stderr, "\n%v.\nEvery finished cell is saved in %s; run the same command again to resume.\n", err, r.st.Path())
		return sum, &exitError{code: ExitInterrupted, err: errors.New("")}
	}
	if err != nil {
		return sum, err
	}
	stored := fmt.Sprintf("%d already stored", sum.Skipped)
	if sum.Others > 0 {
		stored += fmt.Sprintf(", %d by other workers", sum.Others)
	}
	fmt.Fprintf(stderr, "swept %d cells (%s) in %s, compiles %s; %d failed candidate results\n",
		sum.Cells, stored, sum.Elapsed.Round(time.Millisecond), sum.Compile.Round(time.Millisecond), sum.Failures)
	if len(r.exs) > 1 {
		var per []string
		for i, n := range sum.PerExecutor {
			per = append(per, fmt.Sprintf("device %d: %d", r.devList[i], n))
		}
		fmt.Fprintf(stderr, "cells per device: %s\n", strings.Join(per, ", "))
	}
	for _, w := range sum.Warnings {
		fmt.Fprintln(stderr, "warning:", w)
	}
	return sum, nil
}

// summary prints what the sweep of the provenances keys found, over every
// operator at once: the parity and batch-invariance lines, the verdicts
// against the reference (undecided counted), (--report) the Markdown report
// with the whole workload's chunk, and what to do next — the tilefit select
// commands for this database and workload.
func (r sweepRun) summary(ctx context.Context, keys []string, w workload.Workload, db, wl string, stdout, stderr io.Writer) (report.Input, error) {
	in, note, err := tune.LoadReportKeys(ctx, r.st, keys, &w, registryFrom(ctx))
	if note != "" {
		fmt.Fprintln(stderr, note)
	}
	if err != nil {
		return in, err
	}
	// The headline reads every stored M of the swept shapes (headlineInput).
	var lines []string
	for _, k := range keys {
		head, err := headlineInput(ctx, r.st, k, w, io.Discard) // a class note is said once, above
		if err != nil {
			return in, err
		}
		lines = append(lines, report.ParityLine(head))
	}
	fmt.Fprintln(stdout, strings.Join(lines, "\n"))
	if line := report.DecisionsLine(in); line != "" {
		fmt.Fprintln(stdout, capitalizeFirst(line)+".")
	}
	if r.showReport {
		fmt.Fprintln(stdout)
		if err := report.Markdown(stdout, in); err != nil {
			return in, err
		}
	}
	cmds := report.SelectCommands(in, db, wl)
	if len(cmds) == 0 {
		return in, nil
	}
	what := "Next: pick the tiles to ship, confirm them on this device in adaptive rounds, and emit the selector"
	if len(cmds) > 1 {
		what += fmt.Sprintf(" (%d operators: one policy each)", len(cmds))
	}
	fmt.Fprintf(stdout, "\n%s:\n\n", what)
	for _, c := range cmds {
		fmt.Fprintf(stdout, "    %s\n", c)
	}
	return in, nil
}

// sourceCompiled is an error (exit 2: the input is bad) when the edited
// source of a sweep compiled for none of its tiles: the compiler's first
// message, its line in the user's file.
func sourceCompiled(in report.Input, path string) error {
	failed, first := 0, ""
	for _, c := range in.Cells {
		for _, cand := range c.Candidates {
			if cand.Vendor {
				continue
			}
			if cand.Status != result.CompileFailed {
				return nil // some tile compiled: the failures are in the report
			}
			failed++
			if first == "" {
				first = report.FailureLine(cand.Detail, 300)
			}
		}
	}
	if failed == 0 {
		return nil
	}
	return fmt.Errorf("--source %s does not compile (every one of its %d tile results failed): %s", path, failed, first)
}

// capitalizeFirst upper-cases the first byte of an ASCII line.
func capitalizeFirst(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}

// writeMissing says which cells of the plan were not measured, and why
// (nothing when every cell was), as a Markdown table.
func writeMissing(w io.Writer, missing []tune.Missing) {
	if len(missing) == 0 {
		return
	}
	fmt.Fprintf(w, "\nNot measured: %d cells of the plan (nothing of them is stored; the same command tries them again):\n\n| shape | M | why |\n|---|---:|---|\n", len(missing))
	esc := strings.NewReplacer("|", `\|`, "\n", " ", "\r", " ", "<", "&lt;")
	for _, m := range missing {
		fmt.Fprintf(w, "| %s | %d | %s |\n", esc.Replace(m.Cell.Shape), m.Cell.M, esc.Replace(m.Why))
	}
}

// parseDevices parses --devices: "all", or distinct ordinals "0,1,…".
func parseDevices(s string) (list []int, all bool, err error) {
	if strings.TrimSpace(s) == "all" {
		return nil, true, nil
	}
	items, err := splitStrict("--devices", s)
	if err != nil {
		return nil, false, err
	}
	seen := map[int]bool{}
	for _, it := range items {
		d, err := strconv.Atoi(strings.TrimSpace(it))
		if err != nil || d < 0 {
			return nil, false, fmt.Errorf("--devices: want all or device ordinals like 0,1; %q is not one", it)
		}
		if seen[d] {
			return nil, false, fmt.Errorf("--devices: device %d is listed twice", d)
		}
		seen[d] = true
		list = append(list, d)
	}
	return list, false, nil
}

func familyNames(fs []*kernel.Family) string {
	var n []string
	for _, f := range fs {
		n = append(n, f.Name)
	}
	return strings.Join(n, ",")
}

// progressPrinter shows the sweep's progress (see progress) over cells:
// a cell's weight is its FLOPs plus a constant for the work every cell has
// whatever its size (verifying, the float64 check). devices maps executor
// indices to device ordinals (named in the lines when there are several);
// cells claimed in a shared sweep print a "claimed" line when they start.
func progressPrinter(stderr io.Writer, cells []result.Cell, devices []int) func(tune.Progress) {
	p := progress.ForCells(stderr, cells)
	return func(tp tune.Progress) {
		on := ""
		if len(devices) > 1 && tp.Executor < len(devices) {
			on = fmt.Sprintf(" on device %d", devices[tp.Executor])
		}
		if tp.Started {
			if !p.Bar() {
				fmt.Fprintf(stderr, "claimed %s M=%d (%s%s)\n", tp.Cell.Shape, tp.Cell.M, tp.Elapsed.Round(time.Millisecond), on)
			}
			return
		}
		state := "done"
		if tp.Skipped {
			state = "already stored"
		}
		note := ""
		if tp.Phases != "" {
			note = " [" + tp.Phases + "]"
		}
		p.StepWeighted(fmt.Sprintf("%s M=%d", tp.Cell.Shape, tp.Cell.M), state+on, note, progress.CellWeight(tp.Cell), progress.CellFeatures(tp.Cell), tp.Skipped)
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
