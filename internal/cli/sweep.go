package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

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
`

// sweepFlags are the flags sweep shares with ab and select.
type sweepFlags struct {
	backend, wl, ms, family, tiles, source, db, out string
	rounds, dispatches, maxSamples                  int
	budget                                          time.Duration
	seed                                            uint64
	vendor, aa, isolate                             bool
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
	fs.StringVar(&f.family, "family", "gemm_f16", "kernel family")
	fs.StringVar(&f.tiles, "tiles", "", "candidate tiles, comma-separated (default: the family's sweep)")
	fs.StringVar(&f.source, "source", "", "file with an edited family source to tune instead of the built-in one")
	fs.StringVar(&f.db, "db", "tilefit.db", "SQLite database file")
	fs.StringVar(&f.out, "out", "f32", "output type: f32 or f16")
	fs.IntVar(&f.rounds, "rounds", d.Rounds, "paired rounds per cell")
	fs.IntVar(&f.dispatches, "dispatches", 0, "dispatches per sample (0: about 1 ms per sample, at most 64)")
	fs.IntVar(&f.maxSamples, "max-samples", 1<<16, "elements per cell checked against the float64 reference")
	fs.DurationVar(&f.budget, "budget", d.Budget, "timing budget per cell (rounds are cut to fit, to at least 6)")
	fs.Uint64Var(&f.seed, "seed", 1, "seed for inputs")
	fs.BoolVar(&f.vendor, "vendor", true, "time the vendor library (openblas, cublas) in every cell")
	fs.BoolVar(&f.aa, "aa", true, "time an A/A twin of the reference in one cell per shape class")
	fs.BoolVar(&f.isolate, "isolate", true, "run candidates in a worker process (a crash costs one candidate)")
}

// config validates the flags into a tune.Config (without device checks),
// reading the workload and source files (only regular files; ctx cancels a
// read).
func (f *sweepFlags) config(ctx context.Context) (tune.Config, error) {
	var cfg tune.Config
	fam, err := kernel.Lookup(f.backend, f.family)
	if err != nil {
		if opener(f.backend) == nil {
			return cfg, fmt.Errorf("unknown backend %q (known: cpu, cuda)", f.backend)
		}
		return cfg, err
	}
	if err := f.checkNumbers(); err != nil {
		return cfg, err
	}
	var outF16 bool
	switch f.out {
	case "f32":
	case "f16":
		outF16 = true
	default:
		return cfg, fmt.Errorf("--out: want f32 or f16, got %q", f.out)
	}
	var ms []int
	if f.ms != "" {
		if ms, err = parseMs("--m", f.ms); err != nil {
			return cfg, err
		}
	}
	var tiles []string
	if f.tiles != "" {
		if tiles, err = splitStrict("--tiles", f.tiles); err != nil {
			return cfg, err
		}
	}
	cands, err := tune.Candidates(fam, tiles)
	if err != nil {
		return cfg, err
	}
	w, err := workload.OpenContext(ctx, f.wl, workload.Options{})
	if err != nil {
		return cfg, err
	}
	if ms != nil {
		if w, err = w.WithMs(ms); err != nil {
			return cfg, fmt.Errorf("--m: %w", err)
		}
	}
	cfg = tune.Config{Family: fam, Workload: w, Tiles: tiles, Vendor: f.vendor, AA: f.aa, Seed: f.seed, MaxSamples: f.maxSamples, OutF16: outF16}
	if f.source != "" {
		if cfg.Source, err = readSource(ctx, "--source", f.source); err != nil {
			return cfg, err
		}
		if f.isolate {
			if err := checkFrames("--source", f.source, cfg.Source, len(cands)+2); err != nil {
				return cfg, err
			}
		}
	}
	mo := measure.DefaultOptions()
	mo.Rounds, mo.Dispatches, mo.Budget = f.rounds, f.dispatches, f.budget
	mo.MinRounds = min(mo.MinRounds, f.rounds)
	cfg.Measure = mo
	return cfg, nil
}

// checkNumbers checks the numeric flags, each against its own rule.
func (f *sweepFlags) checkNumbers() error {
	switch {
	case f.rounds < 2:
		return fmt.Errorf("--rounds: want at least 2 paired rounds, got %d", f.rounds)
	case f.dispatches < 0:
		return fmt.Errorf("--dispatches: want 0 (automatic: about 1 ms per sample) or more, got %d", f.dispatches)
	case f.budget < 0:
		return fmt.Errorf("--budget: must not be negative, got %s", f.budget)
	case f.maxSamples < 1:
		return fmt.Errorf("--max-samples: want at least 1 element checked against the float64 reference per cell, got %d", f.maxSamples)
	}
	return nil
}

// executor returns the executor for the flags: a worker process by default.
func (f *sweepFlags) executor() tune.Executor {
	if f.isolate {
		return tune.NewWorker(tune.WorkerOptions{Backend: f.backend})
	}
	return tune.NewLocal(opener(f.backend))
}

// checkDevice validates the workload's buffers against half the device
// memory (a cell holds its input sets twice: generated, and in the problem).
func checkDevice(ctx context.Context, ex tune.Executor, w workload.Workload) error {
	dev, err := ex.Device(ctx)
	if err != nil {
		return err
	}
	if dev.Memory > 0 {
		if err := w.Validate(workload.Options{MaxBytes: dev.Memory / 2}); err != nil {
			return fmt.Errorf("workload %s on %s: %w", w.Name, dev.Name, err)
		}
	}
	return nil
}

func sweepVerb() verb {
	return verb{name: "sweep", summary: "tune a family over a workload and store every sample", usage: sweepUsage, graceful: true,
		run: func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
			fs := newFlags("sweep", sweepUsage, stdout)
			var f sweepFlags
			f.register(fs)
			failOnError := fs.Bool("fail-on-error", false, "exit 1 when any candidate failed")
			showReport := fs.Bool("report", true, "print the Markdown report of the swept cells")
			if err := parse(fs, args); err != nil {
				return err
			}
			if fs.NArg() > 0 {
				return fmt.Errorf("unexpected arguments %q", fs.Args())
			}
			// Until the first cell starts, an interrupt stops at once.
			early, cancelEarly := stopNow(ctx)
			defer cancelEarly()
			cfg, err := f.config(early)
			if err != nil {
				return err
			}
			ex := f.executor()
			defer ex.Close()
			// The device is checked before the database is created, so
			// that a refusal leaves no file behind.
			if err := checkDevice(early, ex, cfg.Workload); err != nil {
				return err
			}
			st, err := store.OpenLocked(early, f.db)
			if err != nil {
				return err
			}
			defer st.Close()
			cfg.Stop = stopFrom(ctx)
			sum, err := tune.Sweep(ctx, cfg, ex, st, progressPrinter(stderr, len(tune.Cells(cfg.Workload))))
			if errors.Is(err, tune.ErrInterrupted) {
				fmt.Fprintf(stderr, "\n%v.\nEvery finished cell is saved in %s; run the same command again to resume.\n", err, f.db)
				return &exitError{code: ExitInterrupted, err: errors.New("")}
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(stderr, "swept %d cells (%d already stored) in %s, compiles %s; %d failed candidate results\n",
				sum.Cells, sum.Skipped, sum.Elapsed.Round(time.Millisecond), sum.Compile.Round(time.Millisecond), sum.Failures)
			for _, w := range sum.Warnings {
				fmt.Fprintln(stderr, "warning:", w)
			}
			in, err := reportInput(ctx, st, sum.Prov.Key(), cfg.Workload)
			if err != nil {
				return err
			}
			fmt.Fprintln(stdout, report.ParityLine(in))
			if *showReport {
				fmt.Fprintln(stdout)
				if err := report.Markdown(stdout, in); err != nil {
					return err
				}
			}
			if *failOnError && (sum.Failures > 0 || sum.NotRun > 0) {
				return failuresError("%d failed candidate results, %d cells not run (--fail-on-error)", sum.Failures, sum.NotRun)
			}
			return nil
		}}
}

// progressPrinter shows a progress bar on a terminal, else a line per cell.
func progressPrinter(stderr io.Writer, total int) func(tune.Progress) {
	if f, ok := stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		bar := progressbar.NewOptions(total, progressbar.OptionSetWriter(stderr), progressbar.OptionSetDescription("sweep"),
			progressbar.OptionShowCount(), progressbar.OptionClearOnFinish())
		return func(p tune.Progress) {
			bar.Describe(fmt.Sprintf("%s M=%d", p.Cell.Shape, p.Cell.M))
			bar.Set(p.Done)
		}
	}
	return func(p tune.Progress) {
		state := "done"
		if p.Skipped {
			state = "already stored"
		}
		fmt.Fprintf(stderr, "[%d/%d] %s M=%d %s (%s)\n", p.Done, p.Total, p.Cell.Shape, p.Cell.M, state, p.Elapsed.Round(time.Millisecond))
	}
}
