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
	"github.com/tilefit/tilefit/kernel"
	"github.com/tilefit/tilefit/measure"
	"github.com/tilefit/tilefit/report"
	"github.com/tilefit/tilefit/result"
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
beside the vendor — stored in --db like any sweep: run the same command
again and nothing is measured twice (a size already stored is reported from
the database). Sizes are square (M = N = K: --sizes, default 64, 128, …,
8192) or given as --shapes MxNxK. A size whose estimated time on a backend
(every candidate's verification and rounds, at the vendor's measured rate)
exceeds --size-budget is skipped there, with a line saying so.

The ceilings are those tilefit devices stored for the device, measured now
(and stored) when the database has none. --plots DIR draws the curves
(GFLOP/s against size, log–log, with the roofs and peaks) as SVG and PNG.
`

// scanSize is one problem size of a scan.
type scanSize struct{ m, n, k int }

func (s scanSize) label() string { return report.SizeLabel(s.m, s.n, s.k) }

// name is the shape name of the size's cell in the store.
func (s scanSize) name() string { return fmt.Sprintf("%dx%dx%d", s.m, s.n, s.k) }

func (s scanSize) workload(op string) workload.Workload {
	return workload.Workload{Name: "scan", Shapes: []workload.Shape{{Name: s.name(), Op: op, N: s.n, K: s.k, Calls: 1}}, Ms: []int{s.m}}
}

// defaultScanSizes are 64, 128, …, 8192.
func defaultScanSizes() []scanSize {
	var out []scanSize
	for n := 64; n <= 8192; n *= 2 {
		out = append(out, scanSize{n, n, n})
	}
	return out
}

// parseScanSizes parses --sizes (square sizes) or --shapes (MxNxK), each
// value within the workload limits, none twice.
func parseScanSizes(flag, s string, shapes bool) ([]scanSize, error) {
	items, err := splitStrict(flag, s)
	if err != nil {
		return nil, err
	}
	var out []scanSize
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
		sz := scanSize{v[0], v[0], v[0]}
		if shapes {
			sz = scanSize{v[0], v[1], v[2]}
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

// scanBackend is one backend of a scan while it runs.
type scanBackend struct {
	name     string
	flags    sweepFlags
	cfg      tune.Config
	op       *kernel.Operator
	dev      backend.Device
	b        backend.Backend // in-process, for the ceilings; closed before sweeping
	key      string
	peak     float64 // vendor GFLOP/s from the ceilings (0: unknown)
	copyGBps float64
	measured time.Time
	warned   []string // warnings printed once for the whole scan (tune.VendorWarning)
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
			sizes := defaultScanSizes()
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
			slices.SortStableFunc(sizes, func(a, b scanSize) int {
				return cmp.Compare(float64(a.m)*float64(a.n)*float64(a.k), float64(b.m)*float64(b.n)*float64(b.k))
			})
			f.aa = false
			return runScan(ctx, &f, *backends, sizes, *sizeBudget, *format, *plots, stdout, stderr)
		}}
}

// runScan is tilefit scan after flag parsing.
func runScan(ctx context.Context, f *sweepFlags, backendList string, sizes []scanSize, sizeBudget time.Duration, format, plots string, stdout, stderr io.Writer) error {
	reg := registryFrom(ctx)
	early, cancelEarly := stopNow(ctx)
	defer cancelEarly()
	known := backendsFrom(ctx)
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
	const opName = workload.DefaultOp
	var bes []*scanBackend
	defer func() {
		for _, sb := range bes {
			if sb.b != nil {
				sb.b.Close()
			}
		}
	}()
	var unavailable []string
	for _, name := range names {
		sb := &scanBackend{name: name, flags: *f}
		sb.flags.backend = name
		if name != "cuda" {
			sb.flags.device = 0 // --device chooses the GPU; the CPU is one device
		}
		tiles, err := scanTiles(known, f.tiles, name)
		if err != nil {
			return err
		}
		sb.flags.tiles = tiles
		if sb.flags.family, err = scanFor(known, "--family", f.family, name); err != nil {
			return err
		}
		w := sizes[0].workload(opName)
		sb.flags.given = &w
		cfgs, err := sb.flags.configs(early, reg)
		if err != nil {
			if !explicit && strings.Contains(err.Error(), "no "+name+" family") {
				unavailable = append(unavailable, fmt.Sprintf("%s: %v", name, err))
				continue
			}
			return fmt.Errorf("%s: %w", name, err)
		}
		sb.cfg = cfgs[0]
		sb.cfg.Stop = stopFrom(ctx)
		if sb.op, err = sb.cfg.Families[0].Operator.Typed(sb.cfg.Types); err != nil {
			return err
		}
		b, err := known.Open(early, name, sb.flags.device)
		if err == nil {
			sb.b = b
			sb.dev, err = b.Device(early)
		}
		if err != nil {
			if explicit {
				return fmt.Errorf("backend %s is not available: %w", name, err)
			}
			unavailable = append(unavailable, fmt.Sprintf("%s: not available: %v", name, err))
			if sb.b != nil {
				sb.b.Close()
			}
			continue
		}
		prov, err := tune.ProvenanceOf(sb.cfg, sb.dev)
		if err != nil {
			return err
		}
		sb.key = prov.Key()
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
	if err := scanCeilings(early, st, bes, stderr); err != nil {
		return err
	}

	doc := report.Scan{Operator: bes[0].op.Name, Doc: bes[0].op.Doc, Types: bes[0].op.Types(), DB: f.db}
	for _, sb := range bes {
		vendor := ""
		var vendorWarn []string
		for _, bl := range sb.cfg.Baselines {
			if bl.Library == "" || sb.dev.Props[bl.Library] != "" {
				vendor = bl.Name
			}
			// The device's word on its vendor library (OpenBLAS on
			// kernels far below the CPU): printed once here, whether or
			// not a size is swept, and kept in the report.
			if w := tune.VendorWarning(bl, sb.dev); w != "" {
				fmt.Fprintf(stderr, "%s: warning: %s\n", sb.name, w)
				sb.warned = append(sb.warned, w)
				vendorWarn = append(vendorWarn, w)
			}
		}
		doc.Backends = append(doc.Backends, report.ScanBackend{Backend: sb.name, Device: sb.dev.Name, Provenance: sb.key,
			Families: familyNames(sb.cfg.Families), Vendor: vendor, VendorWarning: strings.Join(vendorWarn, "; "),
			CopyGBps: rateOrNone(sb.copyGBps), PeakGFLOPs: rateOrNone(sb.peak), Measured: sb.measured})
	}
	for _, sz := range sizes {
		c := result.NewCell(sz.name(), bes[0].op, kernel.Dims{"M": sz.m, "N": sz.n, "K": sz.k}, 1)
		doc.Sizes = append(doc.Sizes, report.ScanSize{M: sz.m, N: sz.n, K: sz.k, FLOPs: c.FLOPs(), Bytes: c.Bytes})
	}
	// Progress weights: the expected seconds of each (backend, size).
	var weights []float64
	for _, sb := range bes {
		rate := sb.peak
		if rate <= 0 {
			rate = 100 // GFLOP/s: a guess until something is measured
		}
		n := len(sb.candidateNames())
		for _, sz := range doc.Sizes {
			weights = append(weights, scanEstimate(n, time.Duration(sz.FLOPs/(rate*1e9)*float64(time.Second)), sb.cfg, sz).Seconds())
		}
	}
	prog := progress.New(stderr, "scan", weights)
	for _, sb := range bes {
		if sb.b != nil {
			sb.b.Close()
			sb.b = nil
		}
		if err := scanBackendSizes(ctx, st, sb, &doc, sizeBudget, prog, stderr); err != nil {
			return err
		}
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
		return report.ScanJSON(stdout, doc)
	}
	return report.ScanMarkdown(stdout, doc)
}

// candidateNames lists the candidates a sweep of sb runs in a cell: the
// tiles and the vendors installed on the device.
func (sb *scanBackend) candidateNames() []string {
	var out []string
	if cands, err := tune.CandidatesOf(sb.cfg.Families, sb.cfg.Tiles); err == nil {
		for _, c := range cands {
			out = append(out, c.Tile)
		}
	}
	for _, bl := range sb.cfg.Baselines {
		if bl.Library == "" || sb.dev.Props[bl.Library] != "" {
			out = append(out, bl.Name)
		}
	}
	return out
}

func rateOrNone(x float64) report.Rate {
	if x > 0 {
		return report.Rate(x)
	}
	return report.NoRate
}

// scanCeilings fills each backend's ceilings from the database, measuring
// and storing them where the database has none for the device.
func scanCeilings(ctx context.Context, st *store.Store, bes []*scanBackend, stderr io.Writer) error {
	recs, err := st.Devices(ctx)
	if err != nil {
		return err
	}
	for _, sb := range bes {
		var props map[string]string
		for _, r := range recs {
			if r.Backend == sb.dev.Backend && r.Name == sb.dev.Name && r.Props["copy_gbps"] != "" {
				props, sb.measured = r.Props, r.Measured
			}
		}
		if c, ok := sb.b.(backend.Ceilings); ok && props == nil {
			fmt.Fprintf(stderr, "%s: measuring the ceilings of %s (copy bandwidth, vendor matmul peak)\n", sb.name, sb.dev.Name)
			ceil, err := c.Ceilings(ctx)
			if err != nil {
				fmt.Fprintf(stderr, "%s: ceilings: %v\n", sb.name, err)
			} else {
				props, sb.measured = ceil, time.Now().UTC()
				if err := st.SaveDevice(ctx, store.DeviceRecord{Backend: sb.dev.Backend, Name: sb.dev.Name, Props: ceil, Measured: sb.measured}); err != nil {
					return err
				}
			}
		}
		if v, err := strconv.ParseFloat(props["copy_gbps"], 64); err == nil && v > 0 {
			sb.copyGBps = v
		}
		if v, err := strconv.ParseFloat(props["vendor_tflops"], 64); err == nil && v > 0 {
			sb.peak = v * 1e3
		}
	}
	return nil
}

// scanEstimate is the expected time of a one-cell sweep in which n
// candidates each take t per call: per candidate two verification runs and
// a warm-up (one more with --check laplacian), then the paired rounds
// measure.Plan chooses for n candidates of t each (cut to the per-cell
// budget), plus the host's work (inputs, the float64 check) at about 20 ns
// per input element and 1 ns per product checked.
func scanEstimate(n int, t time.Duration, cfg tune.Config, sz report.ScanSize) time.Duration {
	if n == 0 {
		return 0
	}
	est := make([]time.Duration, n)
	for i := range est {
		est[i] = max(t, time.Nanosecond)
	}
	d, rounds := measure.Plan(est, cfg.Measure)
	calls := 0
	for _, di := range d {
		calls += 3 + rounds*di
		if cfg.Laplacian {
			calls++
		}
	}
	maxSamples := cfg.MaxSamples
	if maxSamples <= 0 {
		maxSamples = 1 << 16
	}
	host := 20*float64(sz.M*sz.K+sz.N*sz.K) + float64(min(sz.M*sz.N, maxSamples)*sz.K)
	return time.Duration(calls)*t + time.Duration(host)
}

// scanRate is the rate (GFLOP/s) the size budget's estimate assumes for
// every candidate, and where it comes from: the slowest rate measured at
// the size before when it is below the vendor's peak (or there is no
// peak), else the peak, else the fastest rate measured at a smaller size;
// 0 when nothing is known (no estimate).
func scanRate(peak, slowest, fastest float64) (float64, string) {
	switch {
	case slowest > 0 && (peak <= 0 || slowest < peak):
		return slowest, "the slowest rate measured at the size before"
	case peak > 0:
		return peak, "the vendor's measured peak"
	case fastest > 0:
		return fastest, "the fastest rate measured at a smaller size"
	}
	return 0, ""
}

// scanBackendSizes sweeps every size on one backend (the next of doc's
// backends) and appends its result to every size.
func scanBackendSizes(ctx context.Context, st *store.Store, sb *scanBackend, doc *report.Scan, sizeBudget time.Duration,
	prog *progress.Progress, stderr io.Writer) error {
	reg := registryFrom(ctx)
	ex := sb.flags.executor(ctx)
	defer ex.Close()
	if sb.cfg.Laplacian {
		var cells []result.Cell
		for _, sz := range doc.Sizes {
			cells = append(cells, result.NewCell(scanSize{sz.M, sz.N, sz.K}.name(), sb.op, kernel.Dims{"M": sz.M, "N": sz.N, "K": sz.K}, 1))
		}
		fmt.Fprintf(stderr, "%s: %s\n", sb.name, laplacianNote(sb.op, cells))
	}
	measuredRate := 0.0 // GFLOP/s seen at smaller sizes, when the ceilings have no peak
	// slowest is the slowest rate of the last measured size (vendor, best
	// and reference tile): the estimate of the next size takes it for every
	// candidate when it is below the peak, since the reference tile and the
	// weaker candidates run far below the vendor's peak (at the vendor's
	// peak the CPU's 8192³ was estimated under a minute and took 2.5).
	slowest := 0.0
	for si := range doc.Sizes {
		sz := &doc.Sizes[si]
		s := scanSize{sz.M, sz.N, sz.K}
		res := report.ScanResult{Backend: sb.name, Status: report.ScanSkipped, VendorUs: report.NoRate, VendorGFLOPs: report.NoRate,
			BestUs: report.NoRate, BestGFLOPs: report.NoRate, ReferenceGFLOPs: report.NoRate}
		res.RoofGFLOPs = report.ScanRoof(sz.FLOPs, sz.Bytes, rateOrNone(sb.peak), rateOrNone(sb.copyGBps))
		cfg := sb.cfg
		cfg.Workload = s.workload(sb.op.Name)
		cell := result.NewCell(s.name(), sb.op, kernel.Dims{"M": s.m, "N": s.n, "K": s.k}, 1)
		state, skipped := "done", false
		done, err := st.Measured(ctx, sb.key, cell)
		if err != nil {
			return err
		}
		todo := 0
		for _, name := range sb.candidateNames() {
			if _, ok := done[name]; !ok {
				todo++
			}
		}
		if todo > 0 && len(done) > 0 {
			todo++ // the reference tile is measured again beside new tiles
		}
		rate, from := scanRate(sb.peak, slowest, measuredRate)
		switch {
		case todo == 0:
			state, skipped = "already stored", true
		default:
			if _, err := tune.CheckDevice(ctx, ex, cfg.Workload, reg); err != nil {
				res.Note = err.Error()
				state, skipped = "skipped: beyond the device's memory", true
				break
			}
			if rate > 0 {
				t := time.Duration(sz.FLOPs / (rate * 1e9) * float64(time.Second))
				if est := scanEstimate(todo, t, cfg, *sz); est > sizeBudget {
					res.Note = fmt.Sprintf("estimated %s (%d candidates at %s, %.4g GFLOP/s: %s per call) exceeds --size-budget %s",
						progress.Duration(est), todo, from, rate, progress.Duration(t), sizeBudget)
					fmt.Fprintf(stderr, "%s %s: skipped: %s\n", sb.name, s.label(), res.Note)
					state, skipped = "skipped (size budget)", true
					break
				}
			}
			sum, err := tune.Sweep(ctx, cfg, ex, st, nil)
			if errors.Is(err, tune.ErrInterrupted) {
				fmt.Fprintf(stderr, "\n%v.\nEvery finished size is saved in %s; run the same command again to resume.\n", err, sb.flags.db)
				return &exitError{code: ExitInterrupted, err: errors.New("")}
			}
			if err != nil {
				return fmt.Errorf("%s %s: %w", sb.name, s.label(), err)
			}
			for _, w := range sum.Warnings {
				if slices.Contains(sb.warned, w) {
					continue // said before (the vendor's, per size alike)
				}
				if si == 0 || !strings.HasPrefix(w, "no vendor baseline") {
					fmt.Fprintf(stderr, "%s: warning: %s\n", sb.name, w)
				}
			}
			if sum.NotRun > 0 {
				res.Status, res.Note = report.ScanNotRun, strings.Join(sum.Warnings, "; ")
				state = "not run"
			}
		}
		if state == "done" || state == "already stored" {
			rows, err := st.Cells(ctx, store.Filter{ProvKey: sb.key})
			if err != nil {
				return err
			}
			var mine []result.CellResult
			for _, r := range rows {
				if r.Cell.Shape == s.name() && r.Cell.M == s.m && r.Cell.N == s.n && r.Cell.K == s.k {
					mine = append(mine, r)
				}
			}
			if len(mine) == 0 {
				res.Status, res.Note = report.ScanNotRun, "no stored cell"
			} else {
				r := report.ScanCell(sb.name, mine, sz.FLOPs)
				r.RoofGFLOPs = res.RoofGFLOPs
				res = r
				for _, g := range []report.Rate{r.VendorGFLOPs, r.BestGFLOPs} {
					if g.Valid() {
						measuredRate = max(measuredRate, float64(g))
					}
				}
				slowest = 0
				for _, g := range []report.Rate{r.VendorGFLOPs, r.BestGFLOPs, r.ReferenceGFLOPs} {
					if g.Valid() && float64(g) > 0 && (slowest == 0 || float64(g) < slowest) {
						slowest = float64(g)
					}
				}
			}
		}
		sz.Results = append(sz.Results, res)
		prog.Step(fmt.Sprintf("%s %s", sb.name, s.label()), state, skipped)
	}
	return nil
}
