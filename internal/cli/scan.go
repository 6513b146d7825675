package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/tilefit/tilefit/internal/input"
	"github.com/tilefit/tilefit/internal/interrupt"
	"github.com/tilefit/tilefit/internal/progress"
	"github.com/tilefit/tilefit/report"
	"github.com/tilefit/tilefit/tune"
	"github.com/tilefit/tilefit/workload"
)

const scanUsage = `Usage: tilefit scan [flags]

The size study: GFLOP/s by problem size on every backend present (CPU and
GPU in one table), for the vendor library and for the best tile of the
family's sweep at each size, beside each device's measured ceilings (copy
bandwidth and vendor matmul peak; the roof min(peak, FLOPs/bytes × copy
bandwidth) per size).

Each size is a one-cell sweep — every tile compiled, proven bitwise equal to
the reference tile and checked against float64, then timed in paired rounds
beside the vendor — stored in --db (default tilefit-scan.db, the study's
own: a database holding a workload sweep's cells is refused, so the square
sizes never join a workload's chunk): run the same command again and
nothing is measured twice (a size already stored is reported from the
database). Sizes are square (M = N = K: --sizes, default 64, 128, …,
8192) or given as --shapes MxNxK. A size whose estimated time on a backend
(every candidate's verification and rounds, at the vendor's measured rate)
exceeds --size-budget is skipped there, with a line saying so.

The ceilings are those tilefit devices stored for the device, measured now
(and stored) when the database has none. --plots DIR draws the curves
(GFLOP/s against size, log–log, with the roofs and peaks) as SVG and PNG.
`

func scanVerb() verb {
	return verb{name: "scan", summary: "GFLOP/s by problem size: vendor and best tile on every backend", usage: scanUsage, graceful: true,
		run: func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
			fs := newFlags("scan", scanUsage, stdout)
			var f sweepFlags
			f.register(newFlagSubset(fs.FlagSet, "backend", "workload", "m", "aa", "source"))
			fs.Lookup("tiles").Usage = "candidate tiles, comma-separated; BACKEND:TILE for one backend only (default: each backend's family sweep)"
			fs.Lookup("family").Usage = "kernel families, comma-separated; BACKEND:FAMILY for one backend only (default: every family of gemm_f16 on each backend)"
			fs.Lookup("families").Usage = "same as --family"
			fs.Lookup("device").Usage = "GPU ordinal for the cuda backend (the cpu backend is one device)"
			dbFlag := fs.Lookup("db")
			dbFlag.Usage = "database of the size study: a SQLite file of its own (not a workload sweep's), or a postgres:// URL"
			dbFlag.DefValue = tune.DefaultScanDB
			if err := dbFlag.Value.Set(tune.DefaultScanDB); err != nil {
				return err
			}
			backends := fs.String("backend", "", "backends, comma-separated: cpu, cuda (default: every backend that opens here)")
			sizesFlag := fs.String("sizes", "", "square sizes M = N = K, comma-separated (default 64,128,256,…,8192)")
			shapesFlag := fs.String("shapes", "", "sizes as MxNxK, comma-separated, instead of --sizes")
			sizeBudget := fs.Duration("size-budget", 5*time.Minute, "skip a size on a backend when its estimated time exceeds this")
			format := fs.String("format", "md", "md or json")
			plots := fs.String("plots", "", "write the GFLOP/s-by-size chart as SVG and PNG into this folder (the Markdown links it)")
			if err := parse(fs, args); err != nil {
				return err
			}
			if fs.NArg() > 0 {
				return fmt.Errorf("unexpected arguments %q", fs.Args())
			}
			set := map[string]bool{}
			fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
			for _, name := range []string{"sizes", "shapes", "backend"} {
				if set[name] && fs.Lookup(name).Value.String() == "" {
					return fmt.Errorf("--%s: empty value; leave the flag out for its default", name)
				}
			}
			if *format != "md" && *format != "json" {
				return fmt.Errorf("--format: want md or json, got %q", *format)
			}
			if fi, err := os.Stat(*plots); *plots != "" && err == nil && !fi.IsDir() {
				return fmt.Errorf("--plots: %s is not a folder", *plots)
			}
			if *sizeBudget <= 0 {
				return fmt.Errorf("--size-budget: want a positive duration, got %s", *sizeBudget)
			}
			sizes := tune.DefaultScanSizes()
			switch {
			case set["sizes"] && set["shapes"]:
				return errors.New("--sizes and --shapes: give one of them")
			case set["sizes"]:
				var err error
				if sizes, err = tune.ParseScanSizes("--sizes", *sizesFlag, false); err != nil {
					return err
				}
			case set["shapes"]:
				var err error
				if sizes, err = tune.ParseScanSizes("--shapes", *shapesFlag, true); err != nil {
					return err
				}
			}
			tune.SortScanSizes(sizes)
			f.aa = false
			return runScan(ctx, &f, *backends, sizes, *sizeBudget, *format, *plots, stdout, stderr)
		}}
}

// runScan is tilefit scan after flag parsing: each backend's sweep and
// executor built from the flags, then the study (tune.Scan).
func runScan(ctx context.Context, f *sweepFlags, backendList string, sizes []tune.ScanSize, sizeBudget time.Duration, format, plots string, stdout, stderr io.Writer) error {
	known := backendsFrom(ctx)
	early, cancelEarly := interrupt.Now(ctx)
	defer cancelEarly()
	names := known.Names()
	explicit := backendList != ""
	if explicit {
		var err error
		if names, err = input.SplitList("--backend", backendList); err != nil {
			return err
		}
		for _, n := range names {
			if err := known.Check(n); err != nil {
				return fmt.Errorf("--backend: %w", err)
			}
		}
	}
	// Each backend's own --tiles and --family items (an error in them is
	// the same for every backend: said before any backend is opened).
	per := map[string]sweepFlags{}
	for _, name := range names {
		flags := *f
		flags.backend = name
		var err error
		if flags.tiles, err = tune.ScanItems(known, "--tiles", f.tiles, name); err != nil {
			return err
		}
		if flags.family, err = tune.ScanItems(known, "--family", f.family, name); err != nil {
			return err
		}
		per[name] = flags
	}
	first := sizes[0].Workload(workload.DefaultOp)
	bes, err := tune.OpenScanBackends(early, known, names, f.device, explicit, tune.ScanSetup{
		Config: func(ctx context.Context, name string, device int) (tune.Config, error) {
			flags := per[name]
			flags.device, flags.given = device, &first
			cfgs, err := flags.configs(ctx, registryFrom(ctx))
			if err != nil {
				return tune.Config{}, err
			}
			return cfgs[0], nil
		},
		Executor: func(name string, device int) tune.Executor {
			flags := per[name]
			flags.device = device
			return flags.executor(ctx)
		},
		Stop: interrupt.Stop(ctx), Log: stderr})
	if err != nil {
		return err
	}
	defer tune.CloseScanBackends(bes)
	st, err := tune.OpenScanDB(early, f.db, bes, stderr)
	if err != nil {
		return err
	}
	defer st.Close()
	doc, err := tune.Scan(ctx, st, bes, tune.ScanOptions{Sizes: sizes, SizeBudget: sizeBudget, DB: f.db, Registry: registryFrom(ctx), Warn: stderr,
		Progress: func(weights []float64) func(string, string, bool) { return progress.New(stderr, "scan", weights).Step }})
	if errors.Is(err, tune.ErrInterrupted) {
		fmt.Fprintf(stderr, "\n%v.\nEvery finished size is saved in %s; run the same command again to resume.\n", err, f.db)
		return &exitError{code: ExitInterrupted, err: errors.New("")}
	}
	if err != nil {
		return err
	}
	if plots != "" {
		if doc.Plots, err = report.WriteScanPlots(plots, doc); err != nil {
			return fmt.Errorf("--plots: %w", err)
		}
		for _, pf := range doc.Plots {
			fmt.Fprintf(stderr, "wrote %s and %s\n", pf.Paths["svg"], pf.Paths["png"])
		}
	}
	if format == "json" {
		err = report.ScanJSON(stdout, doc)
	} else {
		err = report.ScanMarkdown(stdout, doc)
	}
	if err != nil {
		return err
	}
	if missing := doc.NotMeasured(); len(missing) > 0 {
		return failuresError("%d requested sizes were not measured (%s; the notes above say why)", len(missing), strings.Join(missing, ", "))
	}
	return nil
}
