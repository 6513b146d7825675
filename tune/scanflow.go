package tune

import (
	"context"
	"errors"
	"fmt"
	"io"
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
	"github.com/tilefit/tilefit/workload"
)

// A ScanSize is one problem size of a scan (tilefit scan): Y[M,N] =
// X[M,K]·W[N,K]ᵀ.
type ScanSize struct{ M, N, K int }

// Label is the size as the report names it ("1024³", "256×4096×1024").
func (s ScanSize) Label() string { return report.SizeLabel(s.M, s.N, s.K) }

// Name is the shape name of the size's cell in the store.
func (s ScanSize) Name() string { return fmt.Sprintf("%dx%dx%d", s.M, s.N, s.K) }

// IsScanCell reports whether c is a cell of the size study: its shape is
// named for its own M, N and K (ScanSize.Name). A workload's chunk never
// holds one.
func IsScanCell(c result.Cell) bool {
	return c.Shape == (ScanSize{M: c.M, N: c.N, K: c.K}).Name()
}

// DefaultScanDB is the database tilefit scan writes by default: its own,
// so that the size study's square cells never join a workload's chunk in
// the sweep's tilefit.db.
const DefaultScanDB = "tilefit-scan.db"

// CheckScanDB refuses a database that holds cells of a workload sweep
// (anything but the size study's cells): the study keeps its own.
func CheckScanDB(ctx context.Context, st *store.Store, path string) error {
	cells, err := st.Cells(ctx, store.Filter{})
	if err != nil {
		return err
	}
	var shapes []string
	for _, c := range cells {
		if !IsScanCell(c.Cell) && !slices.Contains(shapes, c.Cell.Shape) {
			shapes = append(shapes, c.Cell.Shape)
		}
	}
	if len(shapes) == 0 {
		return nil
	}
	list := strings.Join(shapes, ", ")
	if len(shapes) > 4 {
		list = strings.Join(shapes[:4], ", ") + fmt.Sprintf(" and %d more", len(shapes)-4)
	}
	return fmt.Errorf("--db %s holds the cells of a workload sweep (shapes %s): the size study keeps its own database (default %s) so that its square sizes never join a workload's chunk; give another --db", path, list, DefaultScanDB)
}

// Workload is the one-cell workload of the size on operator op.
func (s ScanSize) Workload(op string) workload.Workload {
	return workload.Workload{Name: "scan", Shapes: []workload.Shape{{Name: s.Name(), Op: op, N: s.N, K: s.K, Calls: 1}}, Ms: []int{s.M}}
}

// DefaultScanSizes are the square sizes 64, 128, …, 8192.
func DefaultScanSizes() []ScanSize {
	var out []ScanSize
	for n := 64; n <= 8192; n *= 2 {
		out = append(out, ScanSize{n, n, n})
	}
	return out
}

// A ScanBackend is one backend of a scan: its sweep, the backend opened in
// this process (for its device and ceilings) and the executor the sizes
// are swept on.
type ScanBackend struct {
	Name string
	// Config is the sweep of one size (its Workload is replaced per size).
	Config Config
	// Backend is open in this process; ScanCeilings reads its ceilings and
	// Scan closes it before sweeping (the executor opens its own).
	Backend backend.Backend
	// Executor sweeps the sizes; the caller closes it.
	Executor Executor

	op       *kernel.Operator
	dev      backend.Device
	key      string  // the provenance key of the sweeps
	peak     float64 // vendor GFLOP/s from the ceilings (0: unknown)
	copyGBps float64
	measured time.Time
	warned   []string // warnings printed once for the whole scan (VendorWarning)
}

// Prepare reads the backend's device and operator and the provenance its
// sweeps are stored under.
func (sb *ScanBackend) Prepare(ctx context.Context) error {
	var err error
	if sb.op, err = sb.Config.Families[0].Operator.Typed(sb.Config.Types); err != nil {
		return err
	}
	if sb.dev, err = sb.Backend.Device(ctx); err != nil {
		return err
	}
	prov, err := ProvenanceOf(sb.Config, sb.dev)
	if err != nil {
		return err
	}
	sb.key = prov.Key()
	return nil
}

// ScanOptions configure Scan.
type ScanOptions struct {
	Sizes []ScanSize
	// SizeBudget skips a size on a backend whose estimated time exceeds it.
	SizeBudget time.Duration
	// DB names the database in the report.
	DB string
	// Registry validates each size against the device's memory.
	Registry *kernel.Registry
	// Warn receives warnings and notes (stderr).
	Warn io.Writer
	// Progress, when set, is given the expected seconds of every (backend,
	// size) step in order and returns the function each finished step is
	// reported to.
	Progress func(weights []float64) func(what, state string, skipped bool)
}

// Scan is the size study: every size swept on every backend (a one-cell
// sweep stored in st like any other: a size already stored is reported
// from the database), skipped where its estimate exceeds the size budget,
// and reported beside the devices' ceilings (ScanCeilings first). An
// interrupt returns an error wrapping ErrInterrupted; every finished size
// is stored.
func Scan(ctx context.Context, st *store.Store, bes []*ScanBackend, o ScanOptions) (report.Scan, error) {
	doc := report.Scan{Operator: bes[0].op.Name, Doc: bes[0].op.Doc, Types: bes[0].op.Types(), DB: o.DB}
	for _, sb := range bes {
		vendor := ""
		var vendorWarn []string
		for _, bl := range sb.Config.Baselines {
			if bl.Library == "" || sb.dev.Props[bl.Library] != "" {
				vendor = bl.Name
			}
			// The device's word on its vendor library (OpenBLAS on
			// kernels far below the CPU): printed once here, whether or
			// not a size is swept, and kept in the report.
			if w := VendorWarning(bl, sb.dev); w != "" {
				fmt.Fprintf(o.Warn, "%s: warning: %s\n", sb.Name, w)
				sb.warned = append(sb.warned, w)
				vendorWarn = append(vendorWarn, w)
			}
		}
		doc.Backends = append(doc.Backends, report.ScanBackend{Backend: sb.Name, Device: sb.dev.Name, Provenance: sb.key,
			Families: familyList(sb.Config.Families), Vendor: vendor, VendorWarning: strings.Join(vendorWarn, "; "),
			CopyGBps: rateOrNone(sb.copyGBps), PeakGFLOPs: rateOrNone(sb.peak), Measured: sb.measured})
	}
	for _, sz := range o.Sizes {
		c := result.NewCell(sz.Name(), bes[0].op, kernel.Dims{"M": sz.M, "N": sz.N, "K": sz.K}, 1)
		doc.Sizes = append(doc.Sizes, report.ScanSize{M: sz.M, N: sz.N, K: sz.K, FLOPs: c.FLOPs(), Bytes: c.Bytes})
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
			weights = append(weights, scanEstimate(n, time.Duration(sz.FLOPs/(rate*1e9)*float64(time.Second)), sb.Config, sz).Seconds())
		}
	}
	step := func(string, string, bool) {}
	if o.Progress != nil {
		step = o.Progress(weights)
	}
	for _, sb := range bes {
		if sb.Backend != nil {
			sb.Backend.Close()
			sb.Backend = nil
		}
		if err := scanBackendSizes(ctx, st, sb, &doc, o, step); err != nil {
			return doc, err
		}
	}
	return doc, nil
}

func familyList(fs []*kernel.Family) string {
	var n []string
	for _, f := range fs {
		n = append(n, f.Name)
	}
	return strings.Join(n, ",")
}

// ScanCeilings fills each backend's ceilings from the database, measuring
// and storing them where the database has none for the device.
func ScanCeilings(ctx context.Context, st *store.Store, bes []*ScanBackend, stderr io.Writer) error {
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
		if c, ok := sb.Backend.(backend.Ceilings); ok && props == nil {
			fmt.Fprintf(stderr, "%s: measuring the ceilings of %s (copy bandwidth, vendor matmul peak)\n", sb.Name, sb.dev.Name)
			ceil, err := c.Ceilings(ctx)
			if err != nil {
				fmt.Fprintf(stderr, "%s: ceilings: %v\n", sb.Name, err)
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

// candidateNames lists the candidates a sweep of sb runs in a cell: the
// tiles and the vendors installed on the device.
func (sb *ScanBackend) candidateNames() []string {
	var out []string
	if cands, err := CandidatesFor(sb.Config.Families, sb.Config.Tiles, sb.Config.ConstWeights); err == nil {
		for _, c := range cands {
			out = append(out, c.Tile)
		}
	}
	for _, bl := range sb.Config.Baselines {
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

// scanEstimate is the expected time of a one-cell sweep in which n
// candidates each take t per call: per candidate two verification runs and
// a warm-up (one more with --check laplacian), then the paired rounds
// measure.Plan chooses for n candidates of t each (cut to the per-cell
// budget), plus the host's work (inputs, the float64 check) at about 20 ns
// per input element and 1 ns per product checked.
func scanEstimate(n int, t time.Duration, cfg Config, sz report.ScanSize) time.Duration {
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
func scanBackendSizes(ctx context.Context, st *store.Store, sb *ScanBackend, doc *report.Scan, o ScanOptions,
	step func(what, state string, skipped bool)) error {
	ex, reg, stderr, sizeBudget := sb.Executor, o.Registry, o.Warn, o.SizeBudget
	if sb.Config.Laplacian {
		var cells []result.Cell
		for _, sz := range doc.Sizes {
			cells = append(cells, result.NewCell(ScanSize{sz.M, sz.N, sz.K}.Name(), sb.op, kernel.Dims{"M": sz.M, "N": sz.N, "K": sz.K}, 1))
		}
		fmt.Fprintf(stderr, "%s: %s\n", sb.Name, LaplacianNote(sb.op, cells))
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
		s := ScanSize{sz.M, sz.N, sz.K}
		res := report.ScanResult{Backend: sb.Name, Status: report.ScanSkipped, VendorUs: report.NoRate, VendorGFLOPs: report.NoRate,
			BestUs: report.NoRate, BestGFLOPs: report.NoRate, ReferenceGFLOPs: report.NoRate}
		res.RoofGFLOPs = report.ScanRoof(sz.FLOPs, sz.Bytes, rateOrNone(sb.peak), rateOrNone(sb.copyGBps))
		cfg := sb.Config
		cfg.Workload = s.Workload(sb.op.Name)
		cell := result.NewCell(s.Name(), sb.op, kernel.Dims{"M": s.M, "N": s.N, "K": s.K}, 1)
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
			if _, err := CheckDevice(ctx, ex, cfg.Workload, reg); err != nil {
				res.Note = err.Error()
				state, skipped = "skipped: beyond the device's memory", true
				break
			}
			if rate > 0 {
				t := time.Duration(sz.FLOPs / (rate * 1e9) * float64(time.Second))
				if est := scanEstimate(todo, t, cfg, *sz); est > sizeBudget {
					res.Note = fmt.Sprintf("estimated %s (%d candidates at %s, %.4g GFLOP/s: %s per call) exceeds --size-budget %s",
						progress.Duration(est), todo, from, rate, progress.Duration(t), sizeBudget)
					fmt.Fprintf(stderr, "%s %s: skipped: %s\n", sb.Name, s.Label(), res.Note)
					state, skipped = "skipped (size budget)", true
					break
				}
			}
			sum, err := Sweep(ctx, cfg, ex, st, nil)
			if errors.Is(err, ErrInterrupted) {
				return err // every finished size is stored
			}
			if err != nil {
				return fmt.Errorf("%s %s: %w", sb.Name, s.Label(), err)
			}
			for _, w := range sum.Warnings {
				if slices.Contains(sb.warned, w) {
					continue // said before (the vendor's, per size alike)
				}
				if si == 0 || !strings.HasPrefix(w, "no vendor baseline") {
					fmt.Fprintf(stderr, "%s: warning: %s\n", sb.Name, w)
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
				if r.Cell.Shape == s.Name() && r.Cell.M == s.M && r.Cell.N == s.N && r.Cell.K == s.K {
					mine = append(mine, r)
				}
			}
			if len(mine) == 0 {
				res.Status, res.Note = report.ScanNotRun, "no stored cell"
			} else {
				r := report.ScanCell(sb.Name, mine, sz.FLOPs)
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
		step(fmt.Sprintf("%s %s", sb.Name, s.Label()), state, skipped)
	}
	return nil
}
