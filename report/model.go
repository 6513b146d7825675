// Package report turns stored sweep results into the evidence a kernel
// engineer reads: Markdown in the style of the tuning reports tilefit grew
// from, JSON for scripts (documented on JSON and in docs/report-json.md) and
// CSV for spreadsheets.
//
// All three formats are built from one model. Cells are grouped by
// provenance key; the cell rows stored for the same (provenance, shape, N,
// K, M) — a resumed sweep adds rows — are merged, and for every tile (and
// A/A twin) the latest row's outcome wins. A candidate's time is the median
// of its samples, in µs per call. Every ratio a view prints is one
// estimator, the paired ratio with its interval and verdict (stats.Outcome):
// per cell the median per-pair ratio to the reference tile (compareCell),
// per chunk stats.WeightedTotal; a candidate from another row than the
// reference's was not timed in the same rounds and is compared unpaired.
package report

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tilefit/tilefit/kernel"
	"github.com/tilefit/tilefit/result"
	"github.com/tilefit/tilefit/stats"
)

// A Shape is one GEMM of the workload, Y[M,N] = X[M,K]·W[N,K]ᵀ, called
// Calls times per chunk.
type Shape struct {
	Name  string
	N, K  int
	Calls int
}

// Input is what a report is made of.
type Input struct {
	// Title heads the report; "" gives "tilefit report".
	Title string
	// Shapes are the workload's shapes in display order; they give the
	// calls per chunk and define the chunk the totals add up. A cell whose
	// (name, N, K) is not listed still appears, after the listed ones, with
	// the calls stored in the cell, but is left out of the per-chunk totals.
	// With no Shapes, every shape is shown in first-seen order and counted.
	Shapes []Shape
	// Cells are the stored results, in insertion order (as store.Cells
	// returns them): a later row's candidate replaces an earlier one's.
	Cells []result.CellResult
	// Generated is the report's date.
	Generated time.Time
	// Devices are optional device records (measured ceilings); a record
	// shows under each provenance of the same backend and device name.
	Devices []result.DeviceRecord
	// Plots are figures written for this report (WritePlots) that the
	// Markdown links under their provenance; each path as the link is to
	// read.
	Plots []PlotFile
}

// num is a float64 that encodes as JSON null when it is NaN or infinite
// (no value).
type num float64

func (x num) valid() bool { return !math.IsNaN(float64(x)) && !math.IsInf(float64(x), 0) }

func (x num) MarshalJSON() ([]byte, error) {
	if !x.valid() {
		return []byte("null"), nil
	}
	return json.Marshal(float64(x))
}

var none = num(math.NaN())

// Document is the JSON report; see JSON.
type Document struct {
	Schema      string    `json:"schema"`
	Title       string    `json:"title"`
	Generated   time.Time `json:"generated"`
	Provenances []Section `json:"provenances"`
	// Chunks are the whole workload's chunk per device, across operators.
	Chunks []Chunk `json:"chunks"`
}

// Section is the report of one provenance.
type Section struct {
	Key        string            `json:"key"`
	Provenance result.Provenance `json:"provenance"`
	Device     *Device           `json:"device,omitempty"`
	Reference  string            `json:"reference"`
	Rounds     [2]int            `json:"rounds"`
	Sets       [2]int            `json:"sets"`
	Dispatches [2]int            `json:"dispatches"`
	Started    time.Time         `json:"started"`
	Finished   time.Time         `json:"finished"`
	Runs       int               `json:"runs"`
	// Devices are the physical devices that measured the runs (their
	// UUIDs, or the CPU backend's host), with how many runs each; empty
	// when no run recorded one (databases before schema 5).
	Devices    []DeviceRuns `json:"devices,omitempty"`
	Vendors    []string     `json:"vendors"`
	Parity     Parity       `json:"parity"`
	Invariance Invariance   `json:"invariance"`
	// Classes are the numerics classes of the tiles, the reference's first.
	Classes []Class `json:"classes"`
	// ShapeClasses are, with several classes, each shape's one class at
	// every M (see ShapeClass).
	ShapeClasses []ShapeClass `json:"shape_classes,omitempty"`
	// Chunk names the shapes the section's Totals add up: those of the
	// workload it holds cells of (its operator's share of the chunk; the
	// whole chunk is Document.Chunks).
	Chunk     []string  `json:"chunk"`
	Totals    []Total   `json:"totals"`
	Cells     []Cell    `json:"cells"`
	Failures  []Failure `json:"failures"`
	Decisions Decisions `json:"decisions"`
	// Power is the state the cells were measured in (SM clocks, power),
	// from the per-round sensor readings; nil when none were stored.
	Power *PowerState `json:"power,omitempty"`
}

// Decisions counts the verdicts of the sequential rule (stats.Sequential,
// docs/rounds.md) against the reference tile, replayed on the paired
// samples of every OK candidate timed in the same run as the reference:
// faster, slower, tie (within the practical band) or undecided (the rounds
// ended first: the budget ran out, or --rounds N fixed them).
// ExpectedFalse is the most false verdicts to expect among Comparisons at
// Confidence (stats.ExpectedFalse).
type Decisions struct {
	Comparisons   int     `json:"comparisons"`
	Faster        int     `json:"faster"`
	Slower        int     `json:"slower"`
	Tie           int     `json:"tie"`
	Undecided     int     `json:"undecided"`
	Confidence    float64 `json:"confidence"`
	ExpectedFalse float64 `json:"expected_false"`
}

// DeviceRuns counts the stored runs one physical device measured.
type DeviceRuns struct {
	ID   string `json:"id"`
	Runs int    `json:"runs"`
}

// devicesText is "GPU-… (40 runs), GPU-… (25 runs)".
func devicesText(ds []DeviceRuns) string {
	var parts []string
	for _, d := range ds {
		parts = append(parts, fmt.Sprintf("%s (%d %s)", d.ID, d.Runs, plural(d.Runs, "run", "runs")))
	}
	return strings.Join(parts, ", ")
}

// Device is a device record shown with a provenance.
type Device struct {
	Props    map[string]string `json:"props"`
	Measured time.Time         `json:"measured"`
}

// Parity summarises the bitwise comparison of a provenance's candidates
// with the reference tile.
type Parity struct {
	AllBitwise bool   `json:"all_bitwise"`
	Summary    string `json:"summary"`
	Vendors    string `json:"vendors"`
	Tiles      int    `json:"tiles"`
	Shapes     int    `json:"shapes"`
	Ms         int    `json:"ms"`
	Checked    int    `json:"checked"`
	Unchecked  int    `json:"unchecked"`
	Differ     []Ref  `json:"differ"`
	// Numeric lists the family candidates that failed a numerical check
	// (float64 bound, exact answer, written-and-finite): wrong values, not
	// a bitwise difference from the reference (issue 17).
	Numeric []Ref `json:"numeric,omitempty"`
}

// Ref names a candidate in a cell.
type Ref struct {
	Shape  string        `json:"shape"`
	M      int           `json:"m"`
	Tile   string        `json:"tile"`
	Status result.Status `json:"status"`
	// Bitwise is false for an OK candidate that is not bitwise equal.
	Bitwise bool `json:"bitwise"`
}

// Total is the time of one chunk at one M, Σ over the chunk's shapes of
// calls × µs/call ÷ 1000, each column a stats.WeightedTotal anchored on the
// reference tile: a cell adds calls × median(reference) × the column's
// median paired ratio to the reference (a candidate and the reference of
// one run are paired round by round, so drift cancels; a candidate from
// another run of a resumed sweep is unpaired: the ratio of medians). A
// cell without a reference time adds the column's own median. Each sum
// covers the chunk's shapes that have a value for it; Missing names what
// is left out ("Wz: no cell", "Wz: no reference time", "Wz: no OK tile",
// "Wz: no openblas time"). A ratio is given only when both of its sums
// cover the same shapes, with its comparison (ratio, bootstrap interval,
// verdict); a sum with nothing in it is null.
type Total struct {
	M                 int            `json:"m"`
	Complete          bool           `json:"complete"`
	ReferenceMs       num            `json:"reference_ms"`
	BestMs            num            `json:"best_ms"`
	VendorMs          map[string]num `json:"vendor_ms"`
	BestOverReference num            `json:"best_over_reference"`
	VendorOverBest    map[string]num `json:"vendor_over_best"`
	// BestVsReference is the comparison behind BestOverReference; VendorVsBest
	// those behind VendorOverBest (each vendor paired with the best tile of
	// its cell round by round); nil without a ratio.
	BestVsReference *stats.Outcome            `json:"best_vs_reference,omitempty"`
	VendorVsBest    map[string]*stats.Outcome `json:"vendor_vs_best,omitempty"`
	// OneClassMs is the chunk with every shape on its one class at every M
	// (Cell.OneClass; with several numerics classes Section.ShapeClasses)
	// — the batch-invariant choice — with its ratio to the reference and
	// each vendor's to it; with several classes, ClassMs the chunk on each
	// class's fastest tile per cell (a shape the class lacks is left out:
	// partial).
	OneClassMs            num                       `json:"one_class_ms"`
	OneClassOverReference *stats.Outcome            `json:"one_class_vs_reference,omitempty"`
	VendorVsOneClass      map[string]*stats.Outcome `json:"vendor_vs_one_class,omitempty"`
	ClassMs               map[string]num            `json:"class_ms,omitempty"`
	// FloorMs is the roofline floor of the chunk, Σ calls × max(FLOPs ÷
	// vendor peak, bytes moved ÷ copy bandwidth) from the device's measured
	// ceilings (null when not recorded), FloorOverBest its ratio to the best
	// per cell (a floor is computed, not timed: no interval).
	FloorMs       num      `json:"floor_ms"`
	FloorOverBest num      `json:"floor_over_best"`
	Missing       []string `json:"missing"`
	// Warnings are the totals' own (cells of two runs, unpaired).
	Warnings []string `json:"warnings,omitempty"`

	// partial marks the sums that lack a shape: "reference", "best" or a
	// vendor name.
	partial map[string]bool
}

// Cell is one merged (shape, M) cell.
type Cell struct {
	Shape       string      `json:"shape"`
	N           int         `json:"n"`
	K           int         `json:"k"`
	M           int         `json:"m"`
	Dims        kernel.Dims `json:"dims"`
	Calls       int         `json:"calls"`
	InChunk     bool        `json:"in_chunk"`
	FLOPs       float64     `json:"flops"`
	Bytes       float64     `json:"bytes"`
	Reference   string      `json:"reference"`
	ReferenceUs num         `json:"reference_us"`
	Best        string      `json:"best"`
	BestUs      num         `json:"best_us"`
	BestGFLOPs  num         `json:"best_gflops"`
	Fastest     []string    `json:"fastest"`
	// ReferenceClass is the numerics class of the reference tile.
	ReferenceClass string `json:"reference_class,omitempty"`
	// BestByClass is, with several numerics classes, the fastest OK tile of
	// each; OneClass the fastest of the shape's one class
	// (Section.ShapeClasses) that kept its rows whatever M.
	BestByClass map[string]ClassBest `json:"best_by_class,omitempty"`
	OneClass    *ClassBest           `json:"one_class,omitempty"`
	AA          *AA                  `json:"aa,omitempty"`
	Runs        []Run                `json:"runs"`
	Candidates  []Candidate          `json:"candidates"`
	// Undecided names the candidates whose comparison with the reference
	// was still undecided when the rounds ended.
	Undecided []string `json:"undecided"`
	// Clocks is the cell's sensor readings (see PowerState); nil when none.
	Clocks *CellClocks `json:"clocks,omitempty"`
}

// AA is the A/A check of a cell: the reference tile's twin against the
// reference, per round of the same run.
type AA struct {
	Pairs  int `json:"pairs"`
	Median num `json:"median"`
	Min    num `json:"min"`
	Max    num `json:"max"`
}

// Run is one stored row merged into a cell.
type Run struct {
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished"`
	Rounds   int       `json:"rounds"`
	Sets     int       `json:"sets"`
	Seed     uint64    `json:"seed"`
	Clocks   []string  `json:"clocks,omitempty"`
}

// Candidate is one candidate's latest outcome in a cell.
type Candidate struct {
	Tile string `json:"tile"`
	// Family is the candidate's family ("" for vendors and cells stored
	// before families were recorded); Class its numerics class.
	Family           string        `json:"family,omitempty"`
	Class            string        `json:"class,omitempty"`
	Params           string        `json:"params"`
	Vendor           bool          `json:"vendor"`
	AA               bool          `json:"aa"`
	Status           result.Status `json:"status"`
	Detail           string        `json:"detail"`
	Bitwise          bool          `json:"bitwise"`
	MaxErr           num           `json:"max_err"`
	CompileSeconds   num           `json:"compile_seconds"`
	Dispatches       int           `json:"dispatches"`
	Run              int           `json:"run"`
	Samples          int           `json:"samples"`
	MedianUs         num           `json:"median_us"`
	MinUs            num           `json:"min_us"`
	MaxUs            num           `json:"max_us"`
	GFLOPs           num           `json:"gflops"`
	RatioToReference num           `json:"ratio_to_reference"`
	SamplesUs        []num         `json:"samples_us"`
	// Resources: registers per thread, local bytes, shared memory, where
	// the backend reports them (result.Candidate.Resources).
	Resources map[string]int `json:"resources,omitempty"`
	// Invariance is this M's rows against the largest M of the shape (nil
	// when not compared; see Section.Invariance).
	Invariance *CellInvariance `json:"invariance,omitempty"`
	// RankedUs is the time the cell ranks by: MedianUs, or, for a tile that
	// left the adaptive rounds early (fewer samples than the reference of
	// its run), the reference's median × the tile's paired median ratio
	// (stats.AnchoredMedian), so that drift between rounds does not rank it.
	RankedUs num `json:"ranked_us"`
	// Verdict is the verdict of VsReference (faster, slower, tie,
	// undecided), "" when not compared.
	Verdict string `json:"verdict"`
	// VsReference is the candidate against the reference tile of its cell:
	// the sequential rule replayed on their paired samples (the ratio is
	// the median per-pair ratio, with the deciding look's interval), or,
	// when Unpaired (timed in another run of a resumed sweep), the
	// unpaired comparison; nil when not compared. RatioToReference is its
	// ratio.
	VsReference *stats.Outcome `json:"vs_reference,omitempty"`
	Unpaired    bool           `json:"unpaired,omitempty"`
	// LeftAt is the pairs after which the race took the tile out of the
	// rounds (result.Candidate.LeftAt); 0 when it was timed to the end.
	LeftAt int `json:"left_at,omitempty"`
}

// Failure is a candidate whose status is not OK.
type Failure struct {
	Shape  string        `json:"shape"`
	N      int           `json:"n"`
	K      int           `json:"k"`
	M      int           `json:"m"`
	Tile   string        `json:"tile"`
	Vendor bool          `json:"vendor"`
	Status result.Status `json:"status"`
	Detail string        `json:"detail"`
}

// SchemaID identifies the JSON document's schema.
const SchemaID = "tilefit.report/v1"

type cellKey struct {
	shape string
	n, k  int
	m     int
}

type shapeKey struct {
	name string
	n, k int
}

type candKey struct {
	tile string
	aa   bool
}

// mcell is a cell being merged.
type mcell struct {
	key   cellKey
	rows  []*result.CellResult
	cands []result.Candidate
	run   []int // index into rows of each of cands
	index map[candKey]int
}

// build makes the report model of in.
func build(in Input) Document { return buildWith(in, true) }

// buildWith is build, with the chunk and section totals only when totals
// is set (their bootstrap intervals are most of build's time; the parity
// and invariance summaries do not need them).
func buildWith(in Input, totals bool) Document {
	doc := Document{Schema: SchemaID, Title: in.Title, Generated: in.Generated.UTC()}
	if doc.Title == "" {
		doc.Title = "tilefit report"
	}

	// Shape order: listed shapes first, then the others as first seen.
	order := map[shapeKey]int{}
	calls := map[shapeKey]int{}
	for _, s := range in.Shapes {
		k := shapeKey{s.Name, s.N, s.K}
		if _, ok := order[k]; !ok {
			order[k] = len(order)
			calls[k] = s.Calls
		}
	}
	listed := len(order)
	for i := range in.Cells {
		c := &in.Cells[i].Cell
		k := shapeKey{c.Shape, c.N, c.K}
		if _, ok := order[k]; !ok {
			order[k] = len(order)
		}
	}

	// Group rows by provenance, merge by cell.
	type group struct {
		prov  result.Provenance
		key   string
		cells []*mcell
		index map[cellKey]*mcell
	}
	var groups []*group
	byKey := map[string]*group{}
	for i := range in.Cells {
		row := &in.Cells[i]
		pk := row.Prov.Key()
		g := byKey[pk]
		if g == nil {
			g = &group{prov: row.Prov, key: pk, index: map[cellKey]*mcell{}}
			byKey[pk] = g
			groups = append(groups, g)
		}
		ck := cellKey{row.Cell.Shape, row.Cell.N, row.Cell.K, row.Cell.M}
		mc := g.index[ck]
		if mc == nil {
			mc = &mcell{key: ck, index: map[candKey]int{}}
			g.index[ck] = mc
			g.cells = append(g.cells, mc)
		}
		mc.rows = append(mc.rows, row)
		for _, cand := range row.Candidates {
			k := candKey{cand.Tile, cand.AA}
			if j, ok := mc.index[k]; ok {
				mc.cands[j] = cand
				mc.run[j] = len(mc.rows) - 1
				continue
			}
			mc.index[k] = len(mc.cands)
			mc.cands = append(mc.cands, cand)
			mc.run = append(mc.run, len(mc.rows)-1)
		}
	}

	for _, g := range groups {
		sort.SliceStable(g.cells, func(i, j int) bool {
			a, b := g.cells[i].key, g.cells[j].key
			oa, ob := order[shapeKey{a.shape, a.n, a.k}], order[shapeKey{b.shape, b.n, b.k}]
			if oa != ob {
				return oa < ob
			}
			return a.m < b.m
		})
		sec := Section{Key: g.key, Provenance: g.prov}
		for _, d := range in.Devices {
			if d.Backend == g.prov.Backend && d.Name == g.prov.Device {
				sec.Device = &Device{Props: d.Props, Measured: d.Measured.UTC()}
			}
		}
		haveDispatches := false
		refCount := map[string]int{}
		var refOrder []string
		for _, mc := range g.cells {
			c := buildCell(mc, order, calls, listed)
			sec.Cells = append(sec.Cells, c)
			if refCount[c.Reference] == 0 {
				refOrder = append(refOrder, c.Reference)
			}
			refCount[c.Reference]++
			for _, row := range mc.rows {
				sec.Runs++
				if row.DeviceID != "" {
					countDevice(&sec.Devices, row.DeviceID)
				}
				extend(&sec.Rounds, row.Rounds, sec.Runs == 1)
				extend(&sec.Sets, row.Sets, sec.Runs == 1)
				if sec.Started.IsZero() || row.Started.Before(sec.Started) {
					sec.Started = row.Started.UTC()
				}
				if row.Finished.After(sec.Finished) {
					sec.Finished = row.Finished.UTC()
				}
			}
			for _, cand := range c.Candidates {
				if cand.Status == result.OK && cand.Dispatches > 0 {
					extend(&sec.Dispatches, cand.Dispatches, !haveDispatches)
					haveDispatches = true
				}
				if cand.Vendor && !slices.Contains(sec.Vendors, cand.Tile) {
					sec.Vendors = append(sec.Vendors, cand.Tile)
				}
				if cand.Status != result.OK {
					sec.Failures = append(sec.Failures, Failure{
						Shape: c.Shape, N: c.N, K: c.K, M: c.M, Tile: cand.Tile, Vendor: cand.Vendor,
						Status: cand.Status, Detail: cand.Detail,
					})
				}
			}
		}
		for _, r := range refOrder { // the most common reference, first seen on ties
			if refCount[r] > refCount[sec.Reference] {
				sec.Reference = r
			}
		}
		if sec.Vendors == nil {
			sec.Vendors = []string{}
		}
		if sec.Failures == nil {
			sec.Failures = []Failure{}
		}
		sec.Power = powerState(&sec)
		sec.Invariance = invariance(g.cells, sec.Cells, sec.Vendors)
		classify(&sec)
		sec.Parity = parity(sec)
		sec.Decisions = decisions(sec.Cells)
		if totals {
			sec.Chunk, sec.Totals = sectionTotals(sec)
		}
		doc.Provenances = append(doc.Provenances, sec)
	}
	if doc.Provenances == nil {
		doc.Provenances = []Section{}
	}
	if totals {
		doc.Chunks = chunks(&doc, in.Shapes)
	}
	return doc
}

// extend widens the [min, max] range r to include v (or sets it when first).
func extend(r *[2]int, v int, first bool) {
	if first {
		*r = [2]int{v, v}
		return
	}
	r[0] = min(r[0], v)
	r[1] = max(r[1], v)
}

func buildCell(mc *mcell, order map[shapeKey]int, calls map[shapeKey]int, listed int) Cell {
	latest := mc.rows[len(mc.rows)-1]
	sk := shapeKey{mc.key.shape, mc.key.n, mc.key.k}
	c := Cell{
		Shape: mc.key.shape, N: mc.key.n, K: mc.key.k, M: mc.key.m,
		Calls:     latest.Cell.Calls,
		InChunk:   listed > 0 && order[sk] < listed,
		Reference: latest.Reference,
		Fastest:   []string{},
		Undecided: []string{},
	}
	if listed > 0 && order[sk] < listed {
		c.Calls = calls[sk]
	}
	if listed == 0 {
		// Without a workload every shape is in the chunk but the size
		// study's (tilefit scan), which a shared database may hold.
		c.InChunk = !isScanCell(&c)
	}
	c.FLOPs = latest.Cell.FLOPs() // the operator's count, recorded with the cell
	c.Bytes = latest.Cell.Bytes
	c.Dims = latest.Cell.DimsOrGemm()
	for _, row := range mc.rows {
		c.Runs = append(c.Runs, Run{
			Started: row.Started.UTC(), Finished: row.Finished.UTC(),
			Rounds: row.Rounds, Sets: row.Sets, Seed: row.Seed, Clocks: row.Clocks,
		})
	}
	for i, rc := range mc.cands {
		cand := Candidate{
			Tile: rc.Tile, Family: rc.Family, Params: rc.Params, Class: rc.Class, Vendor: rc.Vendor, AA: rc.AA, Status: rc.Status,
			Detail: rc.Detail, Bitwise: rc.Bitwise, MaxErr: num(rc.MaxErr),
			CompileSeconds: num(rc.CompileSeconds), Dispatches: rc.Dispatches, Run: mc.run[i],
			SamplesUs: make([]num, len(rc.Samples)),
			MedianUs:  none, MinUs: none, MaxUs: none, GFLOPs: none, RatioToReference: none,
			Resources: rc.Resources, LeftAt: rc.LeftAt,
		}
		var xs []float64
		for j, x := range rc.Samples {
			cand.SamplesUs[j] = num(x)
			if !math.IsNaN(x) && !math.IsInf(x, 0) {
				xs = append(xs, x)
			}
		}
		cand.Samples = len(xs)
		if len(xs) > 0 {
			cand.MedianUs = num(median(xs))
			cand.MinUs, cand.MaxUs = num(slices.Min(xs)), num(slices.Max(xs))
			if cand.MedianUs > 0 {
				cand.GFLOPs = num(c.FLOPs / (float64(cand.MedianUs) * 1e3))
			}
		}
		c.Candidates = append(c.Candidates, cand)
	}
	if ref := c.find(c.Reference, false); ref != nil && ref.Status == result.OK && ref.MedianUs.valid() {
		c.ReferenceUs = ref.MedianUs
	} else {
		c.ReferenceUs = none
	}
	var ranked []*Candidate
	for i := range c.Candidates {
		c.Candidates[i].RankedUs = c.Candidates[i].MedianUs
	}
	if ref := c.find(c.Reference, false); ref != nil && ref.Status == result.OK && ref.MedianUs.valid() {
		ref.RatioToReference = 1
	}
	decide(mc, &c)
	for i := range c.Candidates {
		cand := &c.Candidates[i]
		if cand.Status == result.OK && !cand.Vendor && !cand.AA && cand.RankedUs.valid() {
			ranked = append(ranked, cand)
		}
	}
	sort.SliceStable(ranked, func(i, j int) bool { return ranked[i].RankedUs < ranked[j].RankedUs })
	for i, cand := range ranked {
		if i == 3 {
			break
		}
		c.Fastest = append(c.Fastest, cand.Tile)
	}
	c.BestUs, c.BestGFLOPs = none, none
	if len(ranked) > 0 {
		c.Best, c.BestUs, c.BestGFLOPs = ranked[0].Tile, ranked[0].RankedUs, ranked[0].GFLOPs
	}
	c.AA = aaStats(mc)
	return c
}

// find returns the candidate named tile (the A/A twin when aa), or nil.
func (c *Cell) find(tile string, aa bool) *Candidate {
	for i := range c.Candidates {
		if c.Candidates[i].Tile == tile && c.Candidates[i].AA == aa {
			return &c.Candidates[i]
		}
	}
	return nil
}

// aaStats pairs the A/A twin's samples with the reference tile's samples
// of the same stored row, round by round.
func aaStats(mc *mcell) *AA {
	for i, cand := range mc.cands {
		if !cand.AA || cand.Status != result.OK {
			continue
		}
		row := mc.rows[mc.run[i]]
		var ref *result.Candidate
		for j := range row.Candidates {
			if rc := &row.Candidates[j]; !rc.AA && rc.Tile == row.Reference {
				ref = rc
			}
		}
		if ref == nil || ref.Status != result.OK {
			return nil
		}
		var ratios []float64
		for r := 0; r < len(cand.Samples) && r < len(ref.Samples); r++ {
			a, b := cand.Samples[r], ref.Samples[r]
			q := a / b
			if b > 0 && !math.IsNaN(q) && !math.IsInf(q, 0) {
				ratios = append(ratios, q)
			}
		}
		if len(ratios) == 0 {
			return nil
		}
		return &AA{Pairs: len(ratios), Median: num(median(ratios)), Min: num(slices.Min(ratios)), Max: num(slices.Max(ratios))}
	}
	return nil
}

// median returns the median of xs (the mean of the middle two for an even
// count) without changing xs.
func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// vstat counts a vendor's verified cells.
type vstat struct{ ok, cells int }

// parity summarises the bitwise comparison with the reference tile: every
// OK family candidate (not a vendor, not the A/A twin) must be bitwise
// equal; parity failures and OK candidates that are not bitwise count as
// differing; numeric failures are listed apart (their values were wrong,
// which says nothing of their bits against the reference: tiles that all
// share one wrong answer are bitwise equal), and a candidate failed for
// changing rows across M (batch invariance, the line below) counts by its
// bits within its cell; candidates that failed before parity (compile,
// crash, timeout, skipped) count as unchecked.
func parity(sec Section) Parity {
	p := Parity{Differ: []Ref{}}
	tiles, shapes, ms := map[string]bool{}, map[string]bool{}, map[int]bool{}
	unchecked := map[result.Status]int{}
	vendors := map[string]*vstat{}
	maxErr := map[string]float64{}
	for _, c := range sec.Cells {
		shapes[c.Shape] = true
		ms[c.M] = true
		for _, cand := range c.Candidates {
			if cand.AA {
				continue
			}
			if cand.Vendor {
				v := vendors[cand.Tile]
				if v == nil {
					v = &vstat{}
					vendors[cand.Tile] = v
				}
				v.cells++
				if cand.Status == result.OK {
					v.ok++
					if cand.MaxErr.valid() {
						maxErr[cand.Tile] = math.Max(maxErr[cand.Tile], float64(cand.MaxErr))
					}
				}
				continue
			}
			invariance := cand.Status == result.ParityFailed && strings.HasPrefix(cand.Detail, "not batch-invariant")
			switch {
			case (cand.Status == result.OK || invariance) && inClassBitwise(&c, &cand):
				p.Checked++
				tiles[cand.Tile] = true
			case cand.Status == result.NumericFailed:
				p.Numeric = append(p.Numeric, Ref{Shape: c.Shape, M: c.M, Tile: cand.Tile, Status: cand.Status})
			case cand.Status == result.OK, cand.Status == result.ParityFailed:
				p.Differ = append(p.Differ, Ref{Shape: c.Shape, M: c.M, Tile: cand.Tile, Status: cand.Status, Bitwise: false})
			default:
				p.Unchecked++
				unchecked[cand.Status]++
			}
		}
	}
	p.Tiles, p.Shapes, p.Ms = len(tiles), len(shapes), len(ms)
	dims := strconv.Itoa(p.Tiles) + plural(p.Tiles, " tile", " tiles") + " × " +
		strconv.Itoa(p.Shapes) + plural(p.Shapes, " shape", " shapes") + " × " + strconv.Itoa(p.Ms) + " M"
	var notChecked string
	if p.Unchecked > 0 {
		var parts []string
		for _, st := range sortedStatuses(unchecked) {
			parts = append(parts, strconv.Itoa(unchecked[st])+" "+string(st))
		}
		notChecked = strconv.Itoa(p.Unchecked) + " not checked: " + strings.Join(parts, ", ")
	}
	refWords := "the reference"
	if len(sec.Classes) > 1 {
		refWords = "their numerics class's reference"
	}
	numeric := ""
	if len(p.Numeric) > 0 {
		numeric = strconv.Itoa(len(p.Numeric)) + plural(len(p.Numeric), " candidate", " candidates") +
			" failed the numeric checks (wrong values, not a bitwise difference): " + refList(p.Numeric, false)
	}
	switch {
	case len(p.Differ) == 0 && p.Checked == 0 && len(p.Numeric) > 0:
		p.Summary = "NO CANDIDATE VERIFIED: " + numeric + "; bitwise parity not judged"
		if notChecked != "" {
			p.Summary += "; " + notChecked
		}
		return p.withVendors(sec, vendors, maxErr)
	case len(p.Differ) == 0 && p.Checked > 0:
		p.AllBitwise = true
		p.Summary = "ALL BITWISE: " + dims
		if len(sec.Classes) > 1 {
			names := make([]string, len(sec.Classes))
			for i, cl := range sec.Classes {
				names[i] = cl.Name
			}
			p.Summary = "ALL BITWISE within each numerics class (" + strings.Join(names, ", ") + "): " + dims
		}
		if notChecked != "" {
			p.Summary += " (" + notChecked + ")"
		}
		if numeric != "" {
			p.Summary += "; " + numeric
		}
	case len(p.Differ) == 0:
		p.Summary = "NOT ALL BITWISE: no candidate was checked"
		if notChecked != "" {
			p.Summary += " (" + notChecked + ")"
		}
	default:
		p.Summary = "NOT ALL BITWISE: " + strconv.Itoa(len(p.Differ)) + " of " +
			strconv.Itoa(len(p.Differ)+p.Checked) + " checked candidates differ from " + refWords + " — " + refList(p.Differ, true) +
			"; " + strconv.Itoa(p.Checked) + " bitwise equal across " + dims
		if notChecked != "" {
			p.Summary += "; " + notChecked
		}
		if numeric != "" {
			p.Summary += "; " + numeric
		}
	}
	return p.withVendors(sec, vendors, maxErr)
}

// refList names up to 8 candidates: "x on A M=1 (parity), …, and 3 more"
// (the status only when status says so; OK reads "not bitwise").
func refList(refs []Ref, status bool) string {
	var parts []string
	for i, d := range refs {
		if i == 8 {
			parts = append(parts, "and "+strconv.Itoa(len(refs)-8)+" more")
			break
		}
		part := d.Tile + " on " + d.Shape + " M=" + strconv.Itoa(d.M)
		if status {
			why := string(d.Status)
			if d.Status == result.OK {
				why = "not bitwise"
			}
			part += " (" + why + ")"
		}
		parts = append(parts, part)
	}
	return strings.Join(parts, ", ")
}

// withVendors adds the vendors' numeric line to p.
func (p Parity) withVendors(sec Section, vendors map[string]*vstat, maxErr map[string]float64) Parity {
	var vparts []string
	for _, name := range sec.Vendors {
		v := vendors[name]
		if v == nil {
			continue
		}
		s := name + " OK in " + strconv.Itoa(v.ok) + " of " + strconv.Itoa(v.cells) + " cells"
		if e, ok := maxErr[name]; ok {
			s += ", max error " + strconv.FormatFloat(e, 'f', 3, 64) + " of the bound"
		}
		vparts = append(vparts, s)
	}
	if len(vparts) > 0 {
		p.Vendors = "checked numerically, not bitwise: " + strings.Join(vparts, "; ")
	}
	return p
}

func sortedStatuses(m map[result.Status]int) []result.Status {
	var out []result.Status
	for s := range m {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// countDevice adds one run of device id to ds (in order of first sight).
func countDevice(ds *[]DeviceRuns, id string) {
	for i := range *ds {
		if (*ds)[i].ID == id {
			(*ds)[i].Runs++
			return
		}
	}
	*ds = append(*ds, DeviceRuns{ID: id, Runs: 1})
}
