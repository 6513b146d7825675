package report

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/tilefit/tilefit/result"
	"github.com/tilefit/tilefit/stats"
)

// samplesOf returns a candidate's samples and whether every one is a
// value (a sample that is not can not be paired by round).
func samplesOf(c *Candidate) ([]float64, bool) {
	out := make([]float64, 0, len(c.SamplesUs))
	all := true
	for _, x := range c.SamplesUs {
		if x.valid() && x > 0 {
			out = append(out, float64(x))
		} else {
			all = false
		}
	}
	return out, all
}

// weighted pairs candidate b with a, its anchor, in one cell of weight w:
// round by round when both come from the same run (b's first rounds when
// it left them early; a's first when a did), else unpaired. ok is false
// when either has no samples.
func weighted(w float64, a, b *Candidate) (stats.Weighted, bool) {
	as, aAll := samplesOf(a)
	bs, bAll := samplesOf(b)
	if len(as) == 0 || len(bs) == 0 {
		return stats.Weighted{}, false
	}
	if a.Run != b.Run || !aAll || !bAll {
		return stats.Weighted{Weight: w, A: as, B: bs, Unpaired: true}, true
	}
	if len(bs) > len(as) {
		bs = bs[:len(as)]
	}
	return stats.Weighted{Weight: w, A: as, B: bs}, true
}

// A chunkShape is one shape of a chunk: its calls per chunk and its cells
// by M (each in the section that holds the shape).
type chunkShape struct {
	name  string
	calls int
	cells map[int]*Cell
}

// ceiling is a device's measured ceilings (see ceilings), for the roofline
// floor; nil when not recorded.
type ceiling struct{ flops, bytesPerSec float64 }

// totalsOptions are the columns a chunk's totals add up beside the
// reference, the best tile per cell and the one-class choice.
type totalsOptions struct {
	vendors []string
	// classes are the per-class columns (one provenance of several
	// numerics classes); nil for none.
	classes []string
	ceil    *ceiling
}

// The columns of chunkTotals: these, each vendor's name, and "class "+name.
const (
	colReference = "reference"
	colBest      = "best"
	colOneClass  = "oneclass"
	colFloor     = "floor"
)

// chunkTotals adds up the chunk of shapes at every M of ms: per column
// (the reference, the best tile per cell, the one-class choice of each
// shape, each vendor, each class of o.classes), Σ over the shapes of calls
// × µs/call ÷ 1000, each a stats.WeightedTotal anchored on the cell's
// reference tile (see Total), and the roofline floor when o.ceil is set.
// A shape without a cell, or a cell without a column's value, makes that
// column's sum partial and is named in Missing.
func chunkTotals(shapes []chunkShape, ms []int, o totalsOptions) []Total {
	so := stats.DefaultOptions()
	values := so
	values.Resamples = 1 // a column's value needs no interval
	cols := append([]string{colReference, colBest, colOneClass}, o.vendors...)
	for _, cl := range o.classes {
		cols = append(cols, "class "+cl)
	}
	out := []Total{}
	for _, m := range ms {
		t := Total{M: m, VendorMs: map[string]num{}, VendorOverBest: map[string]num{}, Missing: []string{}, partial: map[string]bool{},
			OneClassMs: none, FloorMs: none, FloorOverBest: none}
		ws := map[string][]stats.Weighted{}
		anchored := map[string]bool{} // every cell of the column anchored on the reference
		vs := map[string][]stats.Weighted{}
		covers := map[string][]string{} // the shapes each sum covers
		for _, col := range cols {
			anchored[col] = true
		}
		floor, floorOK := 0.0, o.ceil != nil
		for _, s := range shapes {
			calls := float64(s.calls)
			c := s.cells[m]
			if c == nil {
				t.Missing = append(t.Missing, s.name+": no cell")
				for _, col := range append(cols, colFloor) {
					t.partial[col] = true
				}
				floorOK = false
				continue
			}
			if o.ceil != nil {
				if f := floorUs(c, o.ceil.flops, o.ceil.bytesPerSec); finite(f) {
					floor += calls * f / 1000
				} else {
					floorOK = false
					t.partial[colFloor] = true
				}
			}
			var ref *Candidate
			if rc := c.find(c.Reference, false); rc != nil && rc.Status == result.OK && c.ReferenceUs.valid() {
				ref = rc
			}
			cand := map[string]*Candidate{}
			for _, col := range cols {
				x, why := columnCandidate(c, col, ref)
				var w stats.Weighted
				ok := x != nil
				if ok {
					if ref != nil {
						w, ok = weighted(calls, ref, x)
					} else {
						w, ok = weighted(calls, x, x)
						anchored[col] = false
					}
				}
				if !ok {
					// The class columns only say which shapes a class lacks.
					if !strings.HasPrefix(col, "class ") {
						t.Missing = append(t.Missing, s.name+": "+why)
					}
					t.partial[col] = true
					continue
				}
				cand[col] = x
				ws[col] = append(ws[col], w)
				covers[col] = append(covers[col], s.name)
			}
			for _, v := range o.vendors {
				for _, base := range []string{colBest, colOneClass} {
					if cand[v] != nil && cand[base] != nil {
						if w, ok := weighted(calls, cand[base], cand[v]); ok {
							vs[v+"/"+base] = append(vs[v+"/"+base], w)
						}
					}
				}
			}
		}
		t.Complete = len(t.Missing) == 0
		value := func(col string) num {
			if len(ws[col]) == 0 {
				return none
			}
			tot, err := stats.WeightedTotal(ws[col], values)
			if err != nil {
				return none
			}
			return num(tot.B / 1000)
		}
		warn := func(ws []string) {
			for _, w := range ws {
				if !slices.Contains(t.Warnings, w) {
					t.Warnings = append(t.Warnings, w)
				}
			}
		}
		// compare is the total of ws with its interval, when the sums it
		// relates cover the same shapes.
		compare := func(a, b string, ws []stats.Weighted) (num, *stats.Outcome) {
			if len(ws) == 0 || !slices.Equal(covers[a], covers[b]) || len(ws) != len(covers[b]) {
				return none, nil
			}
			tot, err := stats.WeightedTotal(ws, so)
			if err != nil {
				return none, nil
			}
			warn(tot.Warnings)
			o := tot.Outcome()
			return num(tot.Ratio), &o
		}
		t.ReferenceMs, t.BestMs, t.OneClassMs = value(colReference), value(colBest), value(colOneClass)
		t.BestOverReference = none
		if anchored[colBest] {
			t.BestOverReference, t.BestVsReference = compare(colBest, colReference, ws[colBest])
		}
		if anchored[colOneClass] {
			_, t.OneClassOverReference = compare(colOneClass, colReference, ws[colOneClass])
		}
		for _, v := range o.vendors {
			t.VendorMs[v] = value(v)
			var oc *stats.Outcome
			if t.VendorOverBest[v], oc = compare(v, colBest, vs[v+"/"+colBest]); oc != nil {
				if t.VendorVsBest == nil {
					t.VendorVsBest = map[string]*stats.Outcome{}
				}
				t.VendorVsBest[v] = oc
			}
			if _, oc := compare(v, colOneClass, vs[v+"/"+colOneClass]); oc != nil {
				if t.VendorVsOneClass == nil {
					t.VendorVsOneClass = map[string]*stats.Outcome{}
				}
				t.VendorVsOneClass[v] = oc
			}
		}
		if len(o.classes) > 0 {
			t.ClassMs = map[string]num{}
			for _, cl := range o.classes {
				t.ClassMs[cl] = value("class " + cl)
			}
		}
		if o.ceil != nil && len(shapes) > 0 && (floorOK || floor > 0) {
			t.FloorMs = num(floor)
			if floorOK && !t.partial[colBest] && t.BestMs.valid() && t.BestMs > 0 {
				t.FloorOverBest = t.FloorMs / t.BestMs
			}
		}
		out = append(out, t)
	}
	return out
}

// columnCandidate is the candidate of cell c a column of chunkTotals adds
// (nil when the cell has none), with what is missing when it has none.
func columnCandidate(c *Cell, col string, ref *Candidate) (*Candidate, string) {
	switch {
	case col == colReference:
		return ref, "no reference time"
	case col == colBest:
		if c.Best != "" {
			return c.find(c.Best, false), "no OK tile"
		}
		return nil, "no OK tile"
	case col == colOneClass:
		if c.OneClass != nil {
			return c.find(c.OneClass.Tile, false), "no tile of its one class"
		}
		return nil, "no tile of its one class"
	case strings.HasPrefix(col, "class "):
		if b, ok := c.BestByClass[col[6:]]; ok {
			return c.find(b.Tile, false), "no tile of class " + col[6:]
		}
		return nil, "no tile of class " + col[6:]
	}
	if vc := c.find(col, false); vc != nil && vc.Status == result.OK {
		return vc, "no " + col + " time"
	}
	return nil, "no " + col + " time"
}

// sectionTotals adds up a provenance's share of the chunk at every M of its
// cells: the shapes of the workload it holds cells of (all of its shapes
// in the chunk without a workload), each with the workload's calls.
func sectionTotals(sec Section) (chunk []string, out []Total) {
	shapes, ms := sectionShapes(&sec)
	chunk = []string{}
	for _, s := range shapes {
		chunk = append(chunk, s.name)
	}
	o := totalsOptions{vendors: sec.Vendors}
	if len(sec.Classes) > 1 {
		for _, cl := range sec.Classes {
			o.classes = append(o.classes, cl.Name)
		}
	}
	if f, b, ok := ceilings(sec.Device); ok {
		o.ceil = &ceiling{f, b}
	}
	return chunk, chunkTotals(shapes, ms, o)
}

// sectionShapes returns the chunk shapes of sec (its cells in the chunk,
// by shape in the section's order) and every M of those cells, ascending.
func sectionShapes(sec *Section) ([]chunkShape, []int) {
	var shapes []chunkShape
	index := map[shapeKey]int{}
	var ms []int
	for i := range sec.Cells {
		c := &sec.Cells[i]
		if !c.InChunk {
			continue
		}
		k := shapeKey{c.Shape, c.N, c.K}
		j, ok := index[k]
		if !ok {
			j = len(shapes)
			index[k] = j
			shapes = append(shapes, chunkShape{name: c.Shape, calls: c.Calls, cells: map[int]*Cell{}})
		}
		shapes[j].cells[c.M] = c
		if !slices.Contains(ms, c.M) {
			ms = append(ms, c.M)
		}
	}
	sort.Ints(ms)
	return shapes, ms
}

// A Chunk is the whole workload's chunk on one device, across operators:
// every shape of the workload (without one, every shape of the device's
// cells but the size study's), each from the provenance that holds its
// cells, added up per M like a section's Totals — the reference tiles, the
// best tile per cell, the one-class choice per shape (the batch-invariant
// selector), each vendor's composition (for a fused operator, its baseline:
// the vendor GEMM plus an elementwise pass) and the roofline floor.
type Chunk struct {
	Backend string `json:"backend"`
	Device  string `json:"device"`
	// Shapes are the chunk's shapes in workload order, with the
	// provenance and reference tile their cells come from.
	Shapes  []ChunkShape `json:"shapes"`
	Vendors []string     `json:"vendors"`
	// Floor says whether the device's ceilings were recorded (the
	// roofline floor column).
	Floor  bool    `json:"floor"`
	Totals []Total `json:"totals"`
	// Notes say what the chunk leaves out or chose (a shape held by
	// several provenances, the size study's cells, a missing vendor).
	Notes []string `json:"notes,omitempty"`
}

// A ChunkShape is one shape of a Chunk.
type ChunkShape struct {
	Shape      string `json:"shape"`
	N          int    `json:"n"`
	K          int    `json:"k"`
	Calls      int    `json:"calls"`
	Operator   string `json:"operator"`
	Provenance string `json:"provenance"`
	Reference  string `json:"reference"`
	// Present is false for a shape of the workload that has no cell on
	// the device.
	Present bool `json:"present"`
}

// chunks builds the whole-workload chunk of every device (backend and
// device name) of doc, in the order of their first provenance.
func chunks(doc *Document, shapes []Shape) []Chunk {
	type group struct {
		backend, device string
		secs            []*Section
	}
	var groups []*group
	for i := range doc.Provenances {
		sec := &doc.Provenances[i]
		var g *group
		for _, x := range groups {
			if x.backend == sec.Provenance.Backend && x.device == sec.Provenance.Device {
				g = x
			}
		}
		if g == nil {
			g = &group{backend: sec.Provenance.Backend, device: sec.Provenance.Device}
			groups = append(groups, g)
		}
		g.secs = append(g.secs, sec)
	}
	out := []Chunk{}
	for _, g := range groups {
		out = append(out, chunkOf(g.backend, g.device, g.secs, shapes))
	}
	return out
}

// chunkOf is the chunk of one device over the sections secs.
func chunkOf(backend, device string, secs []*Section, shapes []Shape) Chunk {
	ch := Chunk{Backend: backend, Device: device, Shapes: []ChunkShape{}, Vendors: []string{}}
	// Which section holds each shape: the latest to finish when several do.
	holder := map[shapeKey]*Section{}
	held := map[shapeKey]int{}
	var order []shapeKey
	scanCells := 0
	for _, sec := range secs {
		seen := map[shapeKey]bool{}
		for i := range sec.Cells {
			c := &sec.Cells[i]
			k := shapeKey{c.Shape, c.N, c.K}
			if !c.InChunk {
				if isScanCell(c) {
					scanCells++
				}
				continue
			}
			if seen[k] {
				continue
			}
			seen[k] = true
			held[k]++
			if _, ok := holder[k]; !ok {
				order = append(order, k)
			}
			if h := holder[k]; h == nil || sec.Finished.After(h.Finished) {
				holder[k] = sec
			}
		}
	}
	calls := map[shapeKey]int{}
	if len(shapes) > 0 {
		order = order[:0]
		for _, s := range shapes {
			k := shapeKey{s.Name, s.N, s.K}
			if _, ok := calls[k]; !ok {
				order = append(order, k)
				calls[k] = s.Calls
			}
		}
	}
	var parts []chunkShape
	var ms []int
	var several []string
	for _, k := range order {
		sec := holder[k]
		cs := ChunkShape{Shape: k.name, N: k.n, K: k.k, Calls: calls[k]}
		part := chunkShape{name: k.name, calls: calls[k], cells: map[int]*Cell{}}
		if sec != nil {
			cs.Present, cs.Provenance, cs.Operator = true, sec.Key, sec.Provenance.Operator
			if cs.Operator == "" {
				cs.Operator = "gemm_f16"
			}
			for i := range sec.Cells {
				c := &sec.Cells[i]
				if c.Shape != k.name || c.N != k.n || c.K != k.k {
					continue
				}
				part.cells[c.M] = c
				cs.Reference = c.Reference
				if len(shapes) == 0 {
					cs.Calls, part.calls = c.Calls, c.Calls
				}
				if !slices.Contains(ms, c.M) {
					ms = append(ms, c.M)
				}
			}
			for _, v := range sec.Vendors {
				if !slices.Contains(ch.Vendors, v) {
					ch.Vendors = append(ch.Vendors, v)
				}
			}
			if held[k] > 1 {
				several = append(several, fmt.Sprintf("%s (%d provenances; the latest, %s)", k.name, held[k], sec.Key))
			}
		}
		ch.Shapes = append(ch.Shapes, cs)
		parts = append(parts, part)
	}
	sort.Ints(ms)
	o := totalsOptions{vendors: ch.Vendors}
	for _, sec := range secs {
		if f, b, ok := ceilings(sec.Device); ok {
			o.ceil = &ceiling{f, b}
			ch.Floor = true
			break
		}
	}
	ch.Totals = chunkTotals(parts, ms, o)
	if len(several) > 0 {
		ch.Notes = append(ch.Notes, "shapes measured under several provenances, each taken from the one that finished last: "+strings.Join(several, ", "))
	}
	if scanCells > 0 {
		ch.Notes = append(ch.Notes, fmt.Sprintf("%d %s of the size study (tilefit scan) left out of the chunk", scanCells, plural(scanCells, "cell", "cells")))
	}
	if len(ch.Vendors) == 0 {
		ch.Notes = append(ch.Notes, "no vendor baseline: "+noVendorText(backend))
	}
	if !ch.Floor {
		ch.Notes = append(ch.Notes, "no roofline floor: the device's ceilings are not recorded (`tilefit devices` measures and stores them)")
	}
	return ch
}

// noVendorText says why a backend's cells have no vendor candidate.
func noVendorText(backend string) string {
	switch backend {
	case "cpu":
		return "no OpenBLAS time in any cell (libopenblas.so.0 not installed where the sweep ran, or --vendor=false)"
	case "cuda":
		return "no cuBLAS time in any cell (libcublas not found where the sweep ran, or --vendor=false)"
	}
	return "no vendor time in any cell (the backend has none, its library was not found, or --vendor=false)"
}

// scanName matches the shape name tilefit scan gives a size's cell
// ("256x4096x1024": M×N×K, tune.ScanSize.Name).
var scanName = regexp.MustCompile(`^([0-9]+)x([0-9]+)x([0-9]+)$`)

// isScanCell reports whether c is a cell of the size study: its shape is
// named for its own M, N and K.
func isScanCell(c *Cell) bool {
	m := scanName.FindStringSubmatch(c.Shape)
	return m != nil && m[1] == strconv.Itoa(c.M) && m[2] == strconv.Itoa(c.N) && m[3] == strconv.Itoa(c.K)
}

// ratioText is an Outcome's ratio with its interval, "0.912 [0.905, 0.920]",
// or "—".
func ratioText(o *stats.Outcome) string {
	if o == nil || o.Ratio == 0 {
		return "—"
	}
	return fmt.Sprintf("%.3f [%.3f, %.3f]", o.Ratio, o.Lo, o.Hi)
}

// outcomeText is an Outcome as every table prints it: "0.912 [0.905,
// 0.920] faster", or "—".
func outcomeText(o *stats.Outcome) string {
	if o == nil || o.Ratio == 0 {
		return "—"
	}
	return ratioText(o) + " " + string(o.Verdict)
}

// missingText says in one line what a chunk's partial sums lack: each
// reason once, with the M it holds at when not every M ("Wz: no cell at
// M=256, 512; Wsg: no cublas time").
func missingText(ts []Total) string {
	var reasons []string
	at := map[string][]string{}
	for _, t := range ts {
		for _, m := range t.Missing {
			if _, ok := at[m]; !ok {
				reasons = append(reasons, m)
			}
			at[m] = append(at[m], strconv.Itoa(t.M))
		}
	}
	parts := make([]string, len(reasons))
	for i, r := range reasons {
		parts[i] = r
		if len(at[r]) < len(ts) {
			parts[i] += " at M=" + strings.Join(at[r], ", ")
		}
	}
	return strings.Join(parts, "; ")
}
