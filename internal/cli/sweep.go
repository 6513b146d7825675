package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/tilefit/tilefit/internal/input"
	"github.com/tilefit/tilefit/internal/interrupt"
	"github.com/tilefit/tilefit/kernel"
	"github.com/tilefit/tilefit/measure"
	"github.com/tilefit/tilefit/report"
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
	vendor, aa, isolate, race, ahead, constWeights  bool
	// given, when set, is the workload instead of --workload (scan
	// generates its own).
	given *workload.Workload
	// outNote, set by configs, says which operators --out-type applied to.
	outNote string
	// trace, set by sweep --trace, receives the start-up steps of the
	// sweep and of its worker processes.
	trace *tune.Trace
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
	fs.StringVar(&f.wl, "workload", "smoke", "preset (decode, smoke, strata) or a YAML workload file")
	fs.StringVar(&f.ms, "m", "", "token counts M, comma-separated (default: the workload's)")
	fs.StringVar(&f.family, "family", "", "kernel families, comma-separated (default: every family of each shape's operator on the backend)")
	fs.StringVar(&f.family, "families", "", "same as --family")
	fs.StringVar(&f.tiles, "tiles", "", "candidate tiles, comma-separated, FAMILY/TILE for a family other than the first (default: the families' sweeps); on a workload of several operators each FAMILY/TILE goes to the operator its family computes, and when every tile names its family only those operators are swept")
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
	fs.BoolVar(&f.constWeights, "const-weights", false, "the weights are constant (no kernel before an operator writes them, as in inference): add the families' tiles that copy weights before waiting for the kernel before them (PDL 2 of hc_up_wgmma and gemm_decode) to their default sweeps")
	fs.BoolVar(&f.isolate, "isolate", true, "run candidates in a worker process (a crash costs one candidate)")
	fs.BoolVar(&f.ahead, "compile-ahead", true, "cuda, several operators: compile the later operators' tiles in a background worker while the first operator's cells run (false: each operator compiles before its first cell)")
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
		names, err := input.SplitList("--family", f.family)
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
		if tiles, err = input.SplitList("--tiles", f.tiles); err != nil {
			return nil, err
		}
	}
	var mlist []int
	if f.ms != "" {
		var err error
		if mlist, err = workload.ParseMs("--m", f.ms); err != nil {
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
	ops, err := tune.SweepOperators(w, listed, f.family)
	if err != nil {
		return nil, err
	}
	if len(listed) == 0 {
		if ops, err = tune.TileOperators(reg, f.backend, ops, tiles); err != nil {
			return nil, err
		}
	}
	types, err := tune.OutTypes(f.out)
	if err != nil {
		return nil, err
	}
	var src string
	if f.source != "" {
		if src, err = tune.ReadSource(ctx, "--source", f.source); err != nil {
			return nil, err
		}
	}
	mo, err := measure.OptionsFor(f.rounds, f.dispatches, f.budget)
	if err != nil {
		return nil, err
	}
	cfgs, note, err := tune.Configs(reg, ops, tune.ConfigOptions{Backend: f.backend, Listed: listed, Workload: w, Tiles: tiles,
		OutType: f.out, Types: types, Source: src, SourceName: f.source, Isolate: f.isolate, Vendor: f.vendor, AA: f.aa, Race: f.race,
		Laplacian: f.check == checkLaplacian, ConstWeights: f.constWeights, Seed: f.seed, MaxSamples: f.maxSamples, Measure: mo})
	if err != nil {
		return nil, err
	}
	f.outNote = note
	return cfgs, nil
}

// Upper bounds of the count flags (issue 18): --dispatches 1099511627776
// ran one sample for ever. Each is far past any useful value.
const (
	maxDispatches = 1 << 20 // calls per sample
	maxSamples    = 1 << 24 // elements checked against float64 per cell
	maxCount      = 1 << 20 // other counts (--max-rules)
)

// checkNumbers checks the numeric flags, each against its own rule.
func (f *sweepFlags) checkNumbers() error {
	if _, err := measure.OptionsFor(f.rounds, 0, 0); err != nil {
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
		return tune.NewWorker(tune.WorkerOptions{Backend: f.backend, Device: device, Trace: f.trace.Writer()})
	}
	return tune.NewLocal(newBackendOn(backendsFrom(ctx), f.backend, device), registryFrom(ctx))
}

// backgroundCompiler returns the executor that compiles the later
// operators' tiles while the first operator's cells run (tune.Run.Compiler):
// a worker at nice 10 compiling on all cores but two (the timing worker's
// launches and this process keep theirs; nice gives the first operator's
// float64 references the rest when they run), for a backend that
// times on a device (cuda: the host's cores are free but for the timing
// worker's launches; on the cpu backend a compile would disturb the
// timings) and a workload of several operators, unless --compile-ahead=false
// (to see what the compiles cost the cells they overlap); nil otherwise.
func (f *sweepFlags) backgroundCompiler(operators int, devices []int) tune.Executor {
	if operators < 2 || !f.ahead || !f.isolate || f.backend != "cuda" || len(devices) == 0 {
		return nil
	}
	return tune.NewWorker(tune.WorkerOptions{Backend: f.backend, Device: devices[0], Nice: 10, CompileJobs: max(1, runtime.NumCPU()-2), Trace: f.trace.Writer()})
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
			traceFlag := fs.Bool("trace", false, "say on stderr how long the sweep's own steps take (start-up, each worker's backend and libraries, the report, the close) and add the parts of each cell's verify and time phases to its progress line")
			if err := parse(fs, args); err != nil {
				return err
			}
			t0 := time.Now()
			if *traceFlag {
				f.trace = tune.NewTrace(stderr)
			}
			tr := f.trace
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
				if devList, allDevices, err = tune.ParseDevices(*devicesFlag); err != nil {
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
			early, cancelEarly := interrupt.Now(ctx)
			defer cancelEarly()
			cfgs, err := f.configs(early, reg)
			if err != nil {
				return err
			}
			for i := range cfgs {
				cfgs[i].Trace = *traceFlag
			}
			mark := tr.Since("flags and workload", t0)
			if f.outNote != "" {
				fmt.Fprintln(stderr, f.outNote)
			}
			ex := f.executor(ctx)
			exs := []tune.Executor{ex}
			var compiler tune.Executor
			closed := false
			closeAll := func() {
				if closed {
					return
				}
				closed = true
				// At once: each worker ends its device (its context's
				// teardown) on its own.
				var wg sync.WaitGroup
				for _, e := range append(slices.Clone(exs), compiler) {
					if e == nil {
						continue
					}
					wg.Add(1)
					go func() {
						defer wg.Done()
						e.Close()
					}()
				}
				wg.Wait()
			}
			defer closeAll()
			// The device is checked before the database is created, so
			// that a refusal leaves no file behind.
			dev, err := tune.CheckDevice(early, ex, cfgs[0].Workload, reg)
			if err != nil {
				return err
			}
			mark = tr.Since("worker start and device", mark)
			if devList, err = tune.DeviceOrdinals(devList, allDevices, dev.Count, f.device, f.backend); err != nil {
				return err
			}
			for _, d := range devList[1:] {
				exs = append(exs, f.executorOn(ctx, d))
			}
			open := store.OpenLocked // a PostgreSQL URL opens the same either way
			if shared {
				open = store.OpenShared
			}
			st, err := open(early, f.db)
			if err != nil {
				return err
			}
			defer st.Close()
			mark = tr.Since("store open", mark)
			run := tune.Run{Store: st, Executors: exs, Devices: devList, Shard: shard, Lease: *lease, Owner: tune.DefaultOwner(), Shared: shared,
				Stop: interrupt.Stop(ctx)}
			if c := f.backgroundCompiler(len(cfgs), devList); c != nil {
				run.Compiler = c
				compiler = c // closed by closeAll
			}
			tot, err := run.SweepAll(ctx, cfgs, stderr)
			if errors.Is(err, tune.ErrInterrupted) {
				return &exitError{code: ExitInterrupted, err: errors.New("")}
			}
			if err != nil {
				return err
			}
			mark = tr.Since("sweeps", mark)
			in, heads, note, err := tune.SweepReport(ctx, st, tot.Keys, cfgs[0].Workload, reg)
			if note != "" {
				fmt.Fprintln(stderr, note)
			}
			if err != nil {
				return err
			}
			mark = tr.Since("report load", mark)
			if err := report.SweepSummary(stdout, in, heads, *showReport, f.db, f.wl); err != nil {
				return err
			}
			report.NotMeasured(stdout, tot.Missing)
			mark = tr.Since("report", mark)
			if tr != nil {
				// Closed here to time it (the workers end their devices).
				closeAll()
				tr.Since("close", mark)
				tr.Since("total", t0)
			}
			if f.source != "" {
				if err := tune.SourceCompiled(in, f.source); err != nil {
					return err
				}
			}
			if tot.NotRun > 0 {
				// A cell asked for and not measured is a failure, with or
				// without --fail-on-error (issue 18).
				return failuresError("%d requested cells were not measured (listed above, with why); run the same command again to retry them", tot.NotRun)
			}
			if *failOnError && tot.Failures > 0 {
				return failuresError("%d failed candidate results (--fail-on-error)", tot.Failures)
			}
			return nil
		}}
}
