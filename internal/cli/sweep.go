package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
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
	rounds                                          string
	dispatches, maxSamples                          int
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
	fs.StringVar(&f.rounds, "rounds", roundsAuto, roundsUsage)
	fs.IntVar(&f.dispatches, "dispatches", 0, "dispatches per sample (0: about 1 ms per sample, at most 64)")
	fs.IntVar(&f.maxSamples, "max-samples", 1<<16, "elements per cell checked against the float64 reference")
	fs.DurationVar(&f.budget, "budget", d.Budget, "timing budget per cell (auto rounds stop there; fixed rounds are cut to fit, to at least 6)")
	fs.Uint64Var(&f.seed, "seed", 1, "seed for inputs")
	fs.BoolVar(&f.vendor, "vendor", true, "time the vendor library (openblas, cublas) in every cell")
	fs.BoolVar(&f.aa, "aa", true, "time an A/A twin of the reference in one cell per shape class")
	fs.BoolVar(&f.isolate, "isolate", true, "run candidates in a worker process (a crash costs one candidate)")
}

// config validates the flags into a tune.Config (without device checks).
func (f *sweepFlags) config() (tune.Config, error) {
	var cfg tune.Config
	fam, err := kernel.Lookup(f.backend, f.family)
	if err != nil {
		if opener(f.backend) == nil {
			return cfg, fmt.Errorf("unknown backend %q (known: cpu, cuda)", f.backend)
		}
		return cfg, err
	}
	w, err := workload.Open(f.wl, workload.Options{})
	if err != nil {
		return cfg, err
	}
	if f.ms != "" {
		var ms []int
		for _, s := range splitList(f.ms) {
			m, err := strconv.Atoi(s)
			if err != nil {
				return cfg, fmt.Errorf("--m: %q is not a number", s)
			}
			ms = append(ms, m)
		}
		if w, err = w.WithMs(ms); err != nil {
			return cfg, fmt.Errorf("--m: %w", err)
		}
	}
	cfg = tune.Config{Family: fam, Workload: w, Vendor: f.vendor, AA: f.aa, Seed: f.seed, MaxSamples: f.maxSamples}
	if f.tiles != "" {
		cfg.Tiles = splitList(f.tiles)
	}
	if _, err := tune.Candidates(fam, cfg.Tiles); err != nil {
		return cfg, err
	}
	if f.source != "" {
		b, err := os.ReadFile(f.source)
		if err != nil {
			return cfg, fmt.Errorf("--source: %w", err)
		}
		cfg.Source = string(b)
	}
	switch f.out {
	case "f32":
	case "f16":
		cfg.OutF16 = true
	default:
		return cfg, fmt.Errorf("--out: want f32 or f16, got %q", f.out)
	}
	if f.dispatches < 0 || f.budget < 0 || f.maxSamples < 1 {
		return cfg, errors.New("--dispatches, --budget and --max-samples must not be negative")
	}
	mo, err := measureOptions(f.rounds, f.dispatches, f.budget)
	if err != nil {
		return cfg, err
	}
	cfg.Measure = mo
	return cfg, nil
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
			cfg, err := f.config()
			if err != nil {
				return err
			}
			st, unlock, err := openStoreLocked(ctx, f.db)
			if err != nil {
				return err
			}
			defer unlock()
			defer st.Close()
			ex := f.executor()
			defer ex.Close()
			if err := checkDevice(ctx, ex, cfg.Workload); err != nil {
				return err
			}
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

// openStoreLocked takes the database's sweep lock and opens it.
func openStoreLocked(ctx context.Context, path string) (*store.Store, func() error, error) {
	unlock, err := store.Lock(path)
	if err != nil {
		return nil, nil, err
	}
	st, err := store.Open(ctx, path)
	if err != nil {
		unlock()
		return nil, nil, err
	}
	return st, unlock, nil
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
