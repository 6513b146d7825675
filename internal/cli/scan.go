package cli

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tilefit/tilefit/backend"
	"github.com/tilefit/tilefit/internal/progress"
	"github.com/tilefit/tilefit/report"
	"github.com/tilefit/tilefit/store"
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

// parseScanSizes parses --sizes (square sizes) or --shapes (MxNxK), each
// value within the workload limits, none twice.
func parseScanSizes(flag, s string, shapes bool) ([]tune.ScanSize, error) {
	items, err := splitStrict(flag, s)
	if err != nil {
		return nil, err
	}
	var out []tune.ScanSize
	for i, it := range items {
		parts, n := []string{it}, 1
		bad := fmt.Errorf("%s: item %d %q is not a size: want integers in 1..%d (M = N = K) separated by commas", flag, i+1, it, workload.MaxM)
		if shapes {
			parts, n = strings.Split(strings.ToLower(it), "x"), 3
			bad = fmt.Errorf("%s: item %d %q is not a shape MxNxK (e.g. 256x4096x1024) with M in 1..%d and N, K in 1..%d", flag, i+1, it, workload.MaxM, workload.MaxDim)
		}
		if len(parts) != n {
			return nil, bad
		}
		v := make([]int, len(parts))
		for j, p := range parts {
			x, err := strconv.Atoi(strings.TrimSpace(p))
			limit := workload.MaxDim
			if j == 0 {
				limit = workload.MaxM
			}
			if err != nil || x < 1 || x > limit {
				return nil, bad
			}
			v[j] = x
		}
		sz := tune.ScanSize{M: v[0], N: v[0], K: v[0]}
		if shapes {
			sz = tune.ScanSize{M: v[0], N: v[1], K: v[2]}
		}
		if slices.Contains(out, sz) {
			return nil, fmt.Errorf("%s: %s is given twice", flag, it)
		}
		out = append(out, sz)
	}
	return out, nil
}

// scanTiles splits --tiles for backend be: items "BACKEND:TILE" belong to
// that backend only, plain items to every backend. "" means the families'
// sweeps.
func scanTiles(bes *backend.Registry, list, be string) (string, error) {
	return scanFor(bes, "--tiles", list, be)
}

// scanFor splits a comma-separated flag value for backend be: items
// "BACKEND:ITEM" belong to that backend only, plain items to every backend;
// "" when none is left for be (the default).
func scanFor(bes *backend.Registry, flag, list, be string) (string, error) {
	if list == "" {
		return "", nil
	}
	items, err := splitStrict(flag, list)
	if err != nil {
		return "", err
	}
	var keep []string
	prefixed := false
	for _, it := range items {
		if b, t, ok := strings.Cut(it, ":"); ok {
			if err := bes.Check(b); err != nil {
				return "", fmt.Errorf("%s: %q: %w", flag, it, err)
			}
			prefixed = true
			if b == be {
				keep = append(keep, t)
			}
			continue
		}
		keep = append(keep, it)
	}
	if len(keep) == 0 && prefixed {
		return "", nil // this backend's default sweep
	}
	return strings.Join(keep, ","), nil
}

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
				if sizes, err = parseScanSizes("--sizes", *sizesFlag, false); err != nil {
					return err
				}
			case set["shapes"]:
				var err error
				if sizes, err = parseScanSizes("--shapes", *shapesFlag, true); err != nil {
					return err
				}
			}
			// Smallest first: the estimates of big sizes learn from small ones.
			slices.SortStableFunc(sizes, func(a, b tune.ScanSize) int {
				return cmp.Compare(float64(a.M)*float64(a.N)*float64(a.K), float64(b.M)*float64(b.N)*float64(b.K))
			})
			f.aa = false
			return runScan(ctx, &f, *backends, sizes, *sizeBudget, *format, *plots, stdout, stderr)
		}}
}

// runScan is tilefit scan after flag parsing: each backend's sweep and
// executor built from the flags, then the study (tune.Scan).
func runScan(ctx context.Context, f *sweepFlags, backendList string, sizes []tune.ScanSize, sizeBudget time.Duration, format, plots string, stdout, stderr io.Writer) error {
	known := backendsFrom(ctx)
	early, cancelEarly := stopNow(ctx)
	defer cancelEarly()
	names := known.Names()
	explicit := backendList != ""
	if explicit {
		var err error
		if names, err = splitStrict("--backend", backendList); err != nil {
			return err
		}
		for _, n := range names {
			if err := known.Check(n); err != nil {
				return fmt.Errorf("--backend: %w", err)
			}
		}
	}
	var bes []*tune.ScanBackend
	defer func() {
		for _, sb := range bes {
			if sb.Backend != nil {
				sb.Backend.Close()
			}
			sb.Executor.Close()
		}
	}()
	var unavailable []string
	for _, name := range names {
		sb, why, err := scanBackendOf(early, f, name, sizes[0], explicit)
		if err != nil {
			return err
		}
		if why != "" {
			unavailable = append(unavailable, why)
			continue
		}
		bes = append(bes, sb)
	}
	for _, u := range unavailable {
		fmt.Fprintln(stderr, u)
	}
	if len(bes) == 0 {
		return fmt.Errorf("no backend is available here (%s)", strings.Join(unavailable, "; "))
	}
	st, err := store.OpenLocked(early, f.db)
	if err != nil {
		return err
	}
	defer st.Close()
	if err := tune.CheckScanDB(early, st, f.db); err != nil {
		return err
	}
	if err := tune.ScanCeilings(early, st, bes, stderr); err != nil {
		return err
	}
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
	return notMeasuredScan(doc)
}

// notMeasuredScan is the failure of a scan with sizes it could not
// measure ("not run"; the output's notes say why), nil when every size
// was measured or skipped by its budget.
func notMeasuredScan(doc report.Scan) error {
	var missing []string
	for _, sz := range doc.Sizes {
		for _, r := range sz.Results {
			if r.Status == report.ScanNotRun {
				missing = append(missing, r.Backend+" "+report.SizeLabel(sz.M, sz.N, sz.K))
			}
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return failuresError("%d requested sizes were not measured (%s; the notes above say why)", len(missing), strings.Join(missing, ", "))
}

// scanBackendOf builds the scan of backend name from the flags: its own
// --tiles and --family items, the device (--device where the backend has
// it, else its one device 0), the sweep of the first size, the backend
// opened in this process and the executor. why says, instead of an error,
// why a backend the user did not ask for by name is left out.
func scanBackendOf(ctx context.Context, f *sweepFlags, name string, first tune.ScanSize, explicit bool) (sb *tune.ScanBackend, why string, err error) {
	known := backendsFrom(ctx)
	flags := *f
	flags.backend = name
	if flags.tiles, err = scanTiles(known, f.tiles, name); err != nil {
		return nil, "", err
	}
	if flags.family, err = scanFor(known, "--family", f.family, name); err != nil {
		return nil, "", err
	}
	b, err := known.Open(ctx, name, flags.device)
	if err != nil && flags.device > 0 {
		// --device chooses among a backend's devices; a backend with one
		// device (the CPU) runs on its device 0.
		if b0, err0 := known.Open(ctx, name, 0); err0 == nil {
			if d, derr := b0.Device(ctx); derr == nil && d.Count <= 1 {
				b, err, flags.device = b0, nil, 0
			} else {
				b0.Close()
			}
		}
	}
	if err != nil {
		if explicit {
			return nil, "", fmt.Errorf("backend %s is not available: %w", name, err)
		}
		return nil, fmt.Sprintf("%s: not available: %v", name, err), nil
	}
	w := first.Workload(workload.DefaultOp)
	flags.given = &w
	cfgs, err := flags.configs(ctx, registryFrom(ctx))
	if err != nil {
		b.Close()
		if !explicit && strings.Contains(err.Error(), "no "+name+" family") {
			return nil, fmt.Sprintf("%s: %v", name, err), nil
		}
		return nil, "", fmt.Errorf("%s: %w", name, err)
	}
	sb = &tune.ScanBackend{Name: name, Config: cfgs[0], Backend: b}
	sb.Config.Stop = stopFrom(ctx)
	if err := sb.Prepare(ctx); err != nil {
		b.Close()
		if explicit {
			return nil, "", fmt.Errorf("backend %s is not available: %w", name, err)
		}
		return nil, fmt.Sprintf("%s: not available: %v", name, err), nil
	}
	sb.Executor = flags.executor(ctx)
	return sb, "", nil
}
