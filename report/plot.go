package report

import (
	"bytes"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/tilefit/tilefit/result"
)

// A Series is one named line of a LineChart: Y[i] at X[i]; a NaN Y leaves
// a gap in the line.
type Series struct {
	Name string
	X, Y []float64
	// Dashed draws the line dashed (references and baselines).
	Dashed bool
}

// A Level is a horizontal line across a LineChart, e.g. a measured ceiling.
type Level struct {
	Name string
	Y    float64
}

// A LineChart plots series against a numeric X: token count M, or a problem
// size (the scan's GFLOP/s-by-size curves are a LineChart with sizes on X
// and the device's ceilings as Levels).
type LineChart struct {
	Title, XLabel, YLabel string
	// LogX and LogY use logarithmic axes (every value must be > 0).
	LogX, LogY bool
	// XTicks are the labelled X ticks; nil labels every X of the series.
	XTicks []float64
	Series []Series
	Levels []Level
}

// A Figure is one chart, ready to render as SVG or PNG.
type Figure struct {
	// Name is the file stem ("chunk", "ratio", "Wout-gflops").
	Name string
	// Title describes the figure (alt text, captions, links).
	Title         string
	Width, Height vg.Length
	draw          func(draw.Canvas)
}

// PlotFormats are the formats a Figure renders to.
var PlotFormats = []string{"svg", "png"}

// Render writes f in format "svg" or "png".
func (f Figure) Render(w io.Writer, format string) error {
	if !slices.Contains(PlotFormats, format) {
		return fmt.Errorf("plot %s: unknown format %q (want svg or png)", f.Name, format)
	}
	c, err := draw.NewFormattedCanvas(f.Width, f.Height, format)
	if err != nil {
		return fmt.Errorf("plot %s: %w", f.Name, err)
	}
	f.draw(draw.New(c))
	if _, err := c.WriteTo(w); err != nil {
		return fmt.Errorf("plot %s: %w", f.Name, err)
	}
	return nil
}

// Bytes renders f in format.
func (f Figure) Bytes(format string) ([]byte, error) {
	var b bytes.Buffer
	err := f.Render(&b, format)
	return b.Bytes(), err
}

// newLegend returns an empty legend for the strip right of a chart.
func newLegend() plot.Legend {
	leg := plot.NewLegend()
	leg.Top, leg.Left = true, true
	leg.Padding = vg.Points(3)
	return leg
}

// legendWidth is the width of the strip that holds a legend of names.
func legendWidth(leg plot.Legend, names []string) vg.Length {
	w := vg.Inch
	for _, n := range names {
		w = max(w, leg.TextStyle.Width(n)+leg.ThumbnailWidth+vg.Points(24))
	}
	return w
}

// withLegend draws p with leg in a strip of width lw on its right.
func withLegend(p *plot.Plot, leg plot.Legend, lw vg.Length) func(draw.Canvas) {
	return func(c draw.Canvas) {
		w := c.Max.X - c.Min.X
		p.Draw(draw.Crop(c, 0, -lw, 0, 0))
		leg.Draw(draw.Crop(c, w-lw+vg.Points(10), 0, 0, -vg.Points(24)))
	}
}

// Figure makes the figure of lc: the chart with its legend beside it.
func (lc LineChart) Figure(name string) Figure {
	p := plot.New()
	p.Title.Text = lc.Title
	p.X.Label.Text = lc.XLabel
	p.Y.Label.Text = lc.YLabel
	p.Add(plotter.NewGrid())
	leg := newLegend()
	var names []string
	var xs []float64
	for i, s := range lc.Series {
		col := plotutil.Color(i)
		var pts plotter.XYs
		for j := range s.X {
			if j < len(s.Y) && finite(s.Y[j]) && (!lc.LogY || s.Y[j] > 0) && (!lc.LogX || s.X[j] > 0) {
				pts = append(pts, plotter.XY{X: s.X[j], Y: s.Y[j]})
				xs = append(xs, s.X[j])
			}
		}
		if len(pts) == 0 {
			continue
		}
		line, points, err := plotter.NewLinePoints(pts)
		if err != nil {
			continue
		}
		line.Color, line.Width = col, vg.Points(2)
		if s.Dashed {
			line.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		}
		points.Color, points.Shape, points.Radius = col, glyphs[i%len(glyphs)], vg.Points(3.5)
		p.Add(line, points)
		leg.Add(s.Name, line, points)
		names = append(names, s.Name)
	}
	for i, l := range lc.Levels {
		if !finite(l.Y) || (lc.LogY && l.Y <= 0) {
			continue
		}
		fn := plotter.NewFunction(func(float64) float64 { return l.Y })
		fn.Color = color.Gray{Y: 90}
		fn.Width = vg.Points(1)
		fn.Dashes = plotutil.Dashes(i + 1)
		p.Add(fn)
		leg.Add(l.Name, fn)
		names = append(names, l.Name)
		p.Y.Max = math.Max(p.Y.Max, l.Y*1.05)
	}
	if lc.LogX {
		p.X.Scale = plot.LogScale{}
	}
	if lc.LogY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	ticks := lc.XTicks
	if ticks == nil {
		ticks = xs
	}
	p.X.Tick.Marker = valueTicks(ticks)
	if len(xs) > 0 {
		lo, hi := slices.Min(xs), slices.Max(xs)
		if lc.LogX {
			p.X.Min, p.X.Max = lo/1.15, hi*1.15
		} else {
			pad := (hi - lo) * 0.04
			p.X.Min, p.X.Max = lo-pad, hi+pad
		}
	}
	if !lc.LogY {
		p.Y.Min = 0
		p.Y.Max *= 1.08 // room above the highest point
	}
	lw := legendWidth(leg, names)
	return Figure{Name: name, Title: lc.Title, Width: 7*vg.Inch + lw, Height: 4.2 * vg.Inch, draw: withLegend(p, leg, lw)}
}

// valueTicks labels exactly the given values (duplicates dropped), in
// order.
func valueTicks(vs []float64) plot.ConstantTicks {
	s := append([]float64(nil), vs...)
	sort.Float64s(s)
	s = slices.Compact(s)
	// Thin out labels that would collide: keep at most 16.
	step := (len(s) + 15) / 16
	var t plot.ConstantTicks
	for i, v := range s {
		label := ""
		if step <= 1 || i%step == 0 || i == len(s)-1 {
			label = strconv.FormatFloat(v, 'g', 6, 64)
		}
		t = append(t, plot.Tick{Value: v, Label: label})
	}
	return t
}

// glyphs mark the points of the series, filled ones first.
var glyphs = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.BoxGlyph{}, draw.PyramidGlyph{}, draw.RingGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{}}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// Metric is what a shape chart plots against M.
type Metric int

// The metrics of ShapeChart.
const (
	// GFLOPs is the operator's FLOPs per second, in GFLOP/s (higher is faster).
	GFLOPs Metric = iota
	// Micros is the median time per call in µs (lower is faster).
	Micros
)

// shapeID identifies a shape of a section.
type shapeID struct {
	name string
	n, k int
}

// shapes returns the section's shapes in report order with their cells
// (sorted by M).
func shapes(sec Section) ([]shapeID, map[shapeID][]*Cell) {
	var order []shapeID
	cells := map[shapeID][]*Cell{}
	for i := range sec.Cells {
		c := &sec.Cells[i]
		id := shapeID{c.Shape, c.N, c.K}
		if _, ok := cells[id]; !ok {
			order = append(order, id)
		}
		cells[id] = append(cells[id], c)
	}
	return order, cells
}

// maxBestTiles caps the tiles a shape chart draws beside the reference and
// the vendors.
const maxBestTiles = 4

// ShapeChart plots one shape of sec against M: the reference tile, the
// tiles that were fastest at some M (the most often fastest first, at most
// four) and every vendor baseline, in metric m.
func ShapeChart(sec Section, shape string, n, k int, m Metric) LineChart {
	_, byShape := shapes(sec)
	cells := byShape[shapeID{shape, n, k}]
	var xs []float64
	wins := map[string]int{}
	var winners []string
	for _, c := range cells {
		xs = append(xs, float64(c.M))
		if c.Best != "" {
			if wins[c.Best] == 0 {
				winners = append(winners, c.Best)
			}
			wins[c.Best]++
		}
	}
	sort.SliceStable(winners, func(i, j int) bool { return wins[winners[i]] > wins[winners[j]] })
	if len(winners) > maxBestTiles {
		winners = winners[:maxBestTiles]
	}
	value := func(c *Cell, cand *Candidate) float64 {
		if cand == nil || cand.Status != result.OK || !cand.MedianUs.valid() {
			return math.NaN()
		}
		if m == Micros {
			return float64(cand.MedianUs)
		}
		return float64(cand.GFLOPs)
	}
	series := func(name, tile string, dashed bool) Series {
		s := Series{Name: name, X: xs, Dashed: dashed}
		for _, c := range cells {
			s.Y = append(s.Y, value(c, c.find(tile, false)))
		}
		return s
	}
	lc := LineChart{XLabel: "M (tokens)", LogX: spread(xs) >= 8}
	if m == Micros {
		lc.Title = fmt.Sprintf("%s (N %d, K %d): µs per call by M", shape, n, k)
		lc.YLabel = "µs per call (median)"
		lc.LogY = true
	} else {
		lc.Title = fmt.Sprintf("%s (N %d, K %d): GFLOP/s by M", shape, n, k)
		lc.YLabel = "GFLOP/s"
	}
	ref := sec.Reference
	if len(cells) > 0 && cells[0].Reference != "" {
		ref = cells[0].Reference
	}
	lc.Series = append(lc.Series, series("reference "+ref, ref, true))
	for _, t := range winners {
		if t == ref {
			continue
		}
		lc.Series = append(lc.Series, series(fmt.Sprintf("%s (fastest at %d M)", t, wins[t]), t, false))
	}
	for _, v := range sec.Vendors {
		lc.Series = append(lc.Series, series(v, v, true))
	}
	return lc
}

// spread is max/min of positive xs (1 when there are none).
func spread(xs []float64) float64 {
	if len(xs) == 0 || slices.Min(xs) <= 0 {
		return 1
	}
	return slices.Max(xs) / slices.Min(xs)
}

// ratioGrid is the heat map's grid: rows are tiles, columns cells, values
// log2 of the time ratio to the reference (NaN: no ratio).
type ratioGrid struct {
	z [][]float64 // [row][col]
}

func (g ratioGrid) Dims() (c, r int) {
	if len(g.z) == 0 {
		return 0, 0
	}
	return len(g.z[0]), len(g.z)
}
func (g ratioGrid) Z(c, r int) float64 { return g.z[r][c] }
func (g ratioGrid) X(c int) float64    { return float64(c) }
func (g ratioGrid) Y(r int) float64    { return float64(r) }

// RatioHeatmap draws every family tile's median time ratio to the
// reference tile in every cell of sec (shape × M): blue faster, red slower,
// white equal, grey where the tile has no time (failed or not run). Tiles
// are ordered by their geometric-mean ratio, fastest at the top. ok is
// false when no cell has a ratio.
func RatioHeatmap(sec Section) (Figure, bool) {
	type tileAgg struct {
		name      string
		sum       float64
		n         int
		firstSeen int
	}
	aggs := map[string]*tileAgg{}
	for _, c := range sec.Cells {
		for _, cand := range c.Candidates {
			if cand.Vendor || cand.AA {
				continue
			}
			a := aggs[cand.Tile]
			if a == nil {
				a = &tileAgg{name: cand.Tile, firstSeen: len(aggs)}
				aggs[cand.Tile] = a
			}
			if cand.RatioToReference.valid() && cand.RatioToReference > 0 {
				a.sum += math.Log2(float64(cand.RatioToReference))
				a.n++
			}
		}
	}
	var tiles []*tileAgg
	for _, a := range aggs {
		if a.n > 0 {
			tiles = append(tiles, a)
		}
	}
	if len(tiles) == 0 {
		return Figure{}, false
	}
	// Fastest (lowest mean log ratio) at the top: the last row is drawn
	// highest.
	sort.Slice(tiles, func(i, j int) bool {
		mi, mj := tiles[i].sum/float64(tiles[i].n), tiles[j].sum/float64(tiles[j].n)
		if mi != mj {
			return mi > mj
		}
		return tiles[i].firstSeen > tiles[j].firstSeen
	})
	row := map[string]int{}
	var rowNames []string
	for i, a := range tiles {
		row[a.name] = i
		rowNames = append(rowNames, a.name)
	}
	g := ratioGrid{z: make([][]float64, len(tiles))}
	for r := range g.z {
		g.z[r] = make([]float64, len(sec.Cells))
		for c := range g.z[r] {
			g.z[r][c] = math.NaN()
		}
	}
	var colNames []string
	limit := math.Log2(1.1)
	for ci, c := range sec.Cells {
		colNames = append(colNames, c.Shape+" "+strconv.Itoa(c.M))
		for _, cand := range c.Candidates {
			r, ok := row[cand.Tile]
			if !ok || cand.Vendor || cand.AA || !cand.RatioToReference.valid() || cand.RatioToReference <= 0 {
				continue
			}
			v := math.Log2(float64(cand.RatioToReference))
			g.z[r][ci] = v
			limit = math.Max(limit, math.Abs(v))
		}
	}
	limit = math.Min(limit, 2) // beyond 4× either way saturates

	cmap := moreland.SmoothBlueRed()
	cmap.SetMin(-limit)
	cmap.SetMax(limit)
	pal := cmap.Palette(255)
	hm := plotter.NewHeatMap(g, pal)
	hm.Min, hm.Max = -limit, limit
	cols := pal.Colors()
	hm.Underflow, hm.Overflow = cols[0], cols[len(cols)-1]
	hm.NaN = noTime

	p := plot.New()
	p.Title.Text = "Time ratio to the reference tile " + sec.Reference + " per cell"
	p.X.Label.Text = "cell (shape M); dark grey: no time (failed or not run)"
	p.Y.Label.Text = "tile"
	p.Add(hm)
	p.X.Tick.Marker = nameTicks(colNames)
	p.Y.Tick.Marker = nameTicks(rowNames)
	p.X.Tick.Label.Rotation = math.Pi / 2
	p.X.Tick.Label.XAlign = draw.XRight
	p.X.Tick.Label.YAlign = draw.YCenter
	p.X.Min, p.X.Max = -0.5, float64(len(colNames))-0.5
	p.Y.Min, p.Y.Max = -0.5, float64(len(rowNames))-0.5
	p.X.Padding, p.Y.Padding = 0, 0

	bar := plot.New()
	bar.Add(colorBar{pal: pal.Colors(), min: -limit, max: limit})
	bar.HideX()
	bar.Y.Label.Text = "time ÷ reference"
	bar.Y.Padding = 0
	var bt plot.ConstantTicks
	ratios := []float64{0.8, 0.9, 1, 1.1, 1.25} // labels that do not crowd at this range
	switch {
	case limit > 1:
		ratios = []float64{0.25, 0.5, 1, 2, 4}
	case limit > 0.5:
		ratios = []float64{0.5, 0.67, 1, 1.5, 2}
	}
	for _, r := range ratios {
		if l := math.Log2(r); math.Abs(l) <= limit+1e-9 {
			bt = append(bt, plot.Tick{Value: l, Label: strconv.FormatFloat(r, 'g', 3, 64)})
		}
	}
	bar.Y.Tick.Marker = bt

	barW := 1.3 * vg.Inch
	w := vg.Length(math.Max(6, 2.6+0.16*float64(len(colNames)))) * vg.Inch
	h := vg.Length(math.Max(3.5, 2.2+0.17*float64(len(rowNames)))) * vg.Inch
	return Figure{
		Name: "ratio", Title: p.Title.Text, Width: w + barW, Height: h,
		draw: func(c draw.Canvas) {
			cw := c.Max.X - c.Min.X
			p.Draw(draw.Crop(c, 0, -barW, 0, 0))
			bar.Draw(draw.Crop(c, cw-barW+vg.Points(10), -vg.Points(6), vg.Inch, -vg.Points(30)))
		},
	}, true
}

// colorBar draws a vertical colour scale from min to max with filled
// rectangles (plotter.ColorBar draws an image, which SVG viewers stretch
// keeping its aspect ratio: a hairline).
type colorBar struct {
	pal      []color.Color
	min, max float64
}

func (b colorBar) Plot(c draw.Canvas, p *plot.Plot) {
	tx, ty := p.Transforms(&c)
	step := (b.max - b.min) / float64(len(b.pal))
	for i, col := range b.pal {
		y0, y1 := b.min+float64(i)*step, b.min+float64(i+1)*step
		// Overlap the next step by a hair so that no seams show.
		c.FillPolygon(col, []vg.Point{{X: tx(0), Y: ty(y0)}, {X: tx(1), Y: ty(y0)}, {X: tx(1), Y: ty(y1) + 0.3}, {X: tx(0), Y: ty(y1) + 0.3}})
	}
}

func (b colorBar) DataRange() (xmin, xmax, ymin, ymax float64) { return 0, 1, b.min, b.max }

// noTime is the heat map's colour of a cell where a tile has no time.
var noTime = color.Gray{Y: 80}

// nameTicks labels 0, 1, … with names.
func nameTicks(names []string) plot.ConstantTicks {
	t := make(plot.ConstantTicks, len(names))
	for i, n := range names {
		t[i] = plot.Tick{Value: float64(i), Label: n}
	}
	return t
}

// ChunkChart draws ms per chunk at every M of sec as grouped bars: the
// reference tile, the best tile per cell, each vendor and, where the
// device's ceilings are recorded, the roofline floor. ok is false when
// there are no totals.
func ChunkChart(sec Section) (Figure, bool) {
	if len(sec.Totals) == 0 {
		return Figure{}, false
	}
	floor := false
	for _, t := range sec.Totals {
		floor = floor || t.FloorMs.valid()
	}
	type group struct {
		name string
		v    []float64
	}
	var groups []group
	add := func(name string, f func(Total) num) {
		g := group{name: name}
		any := false
		for _, t := range sec.Totals {
			x := f(t)
			if x.valid() {
				any = true
				g.v = append(g.v, float64(x))
			} else {
				g.v = append(g.v, 0)
			}
		}
		if any {
			groups = append(groups, g)
		}
	}
	add("reference "+sec.Reference, func(t Total) num { return t.ReferenceMs })
	add("best per cell", func(t Total) num { return t.BestMs })
	for _, v := range sec.Vendors {
		add(v, func(t Total) num { return t.VendorMs[v] })
	}
	if floor {
		add("roofline floor", func(t Total) num { return t.FloorMs })
	}
	if len(groups) == 0 {
		return Figure{}, false
	}
	p := plot.New()
	p.Title.Text = "ms per chunk by M (" + strings.Join(sec.Chunk, ", ") + ")"
	if len(p.Title.Text) > 110 {
		p.Title.Text = fmt.Sprintf("ms per chunk by M (%d shapes)", len(sec.Chunk))
	}
	p.Y.Label.Text = "ms per chunk"
	p.X.Label.Text = "M (tokens)"
	grid := plotter.NewGrid()
	grid.Vertical.Color = nil
	p.Add(grid)
	leg := newLegend()
	var names []string
	groupW := vg.Length(math.Min(90, 400/float64(len(sec.Totals))))
	barW := groupW / vg.Length(len(groups))
	for i, g := range groups {
		bc, err := plotter.NewBarChart(plotter.Values(g.v), barW)
		if err != nil {
			continue
		}
		bc.Color = plotutil.Color(i)
		bc.LineStyle.Width = 0
		if g.name == "roofline floor" {
			bc.Color = color.Gray{Y: 110}
		}
		bc.Offset = barW*vg.Length(i) - groupW/2 + barW/2
		p.Add(bc)
		leg.Add(g.name, bc)
		names = append(names, g.name)
	}
	var labels []string
	for _, t := range sec.Totals {
		l := strconv.Itoa(t.M)
		if !t.Complete {
			l += "*"
		}
		labels = append(labels, l)
	}
	p.NominalX(labels...)
	p.X.Min, p.X.Max = -0.5, float64(len(labels))-0.5 // room for the bars around each M
	p.Y.Min = 0
	p.Y.Max *= 1.08
	lw := legendWidth(leg, names)
	w := vg.Length(math.Max(5.5, 1.5+1.2*float64(len(sec.Totals))))*vg.Inch + lw
	return Figure{Name: "chunk", Title: p.Title.Text, Width: w, Height: 4.2 * vg.Inch, draw: withLegend(p, leg, lw)}, true
}

// Figures returns the figures of one provenance: the per-chunk bars, the
// ratio heat map and one GFLOP/s-by-M chart per shape (each only when it
// has data).
func Figures(sec Section) []Figure {
	var out []Figure
	if f, ok := ChunkChart(sec); ok {
		out = append(out, f)
	}
	if f, ok := RatioHeatmap(sec); ok {
		out = append(out, f)
	}
	order, _ := shapes(sec)
	names := map[string]int{}
	for _, id := range order {
		names[id.name]++
	}
	for _, id := range order {
		lc := ShapeChart(sec, id.name, id.n, id.k, GFLOPs)
		if !hasPoints(lc) {
			continue
		}
		stem := fileSafe(id.name)
		if names[id.name] > 1 {
			stem += fmt.Sprintf("-n%d-k%d", id.n, id.k)
		}
		out = append(out, lc.Figure(stem+"-gflops"))
	}
	return out
}

func hasPoints(lc LineChart) bool {
	for _, s := range lc.Series {
		for _, y := range s.Y {
			if finite(y) {
				return true
			}
		}
	}
	return false
}

// fileSafe keeps letters, digits, '-', '_' and '.' of s and replaces the
// rest with '_'.
func fileSafe(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			b[i] = '_'
		}
	}
	return strings.TrimLeft(string(b), ".")
}

// A PlotFile is a figure written by WritePlots.
type PlotFile struct {
	// Key is the provenance key of the figure's section.
	Key   string
	Name  string
	Title string
	// Paths holds the written file of every format, keyed by format.
	Paths map[string]string
}

// WritePlots renders the figures of every provenance of in into dir (made
// if missing), as KEY-NAME.svg and KEY-NAME.png, and returns what it wrote
// in report order.
func WritePlots(dir string, in Input) ([]PlotFile, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("plots: %w", err)
	}
	var out []PlotFile
	for _, sec := range build(in).Provenances {
		for _, f := range Figures(sec) {
			pf := PlotFile{Key: sec.Key, Name: f.Name, Title: f.Title, Paths: map[string]string{}}
			for _, format := range PlotFormats {
				b, err := f.Bytes(format)
				if err != nil {
					return out, err
				}
				path := filepath.Join(dir, sec.Key+"-"+f.Name+"."+format)
				if err := os.WriteFile(path, b, 0o644); err != nil {
					return out, fmt.Errorf("plots: %w", err)
				}
				pf.Paths[format] = path
			}
			out = append(out, pf)
		}
	}
	return out, nil
}

// markdownPlots links the figures of section key among plots: the SVG
// shown, the PNG linked beside it.
func markdownPlots(b *strings.Builder, key string, plots []PlotFile) {
	first := true
	for _, pf := range plots {
		if pf.Key != key {
			continue
		}
		if first {
			b.WriteString("\n### Plots\n\n")
			first = false
		}
		svg, png := filepath.ToSlash(pf.Paths["svg"]), filepath.ToSlash(pf.Paths["png"])
		switch {
		case svg != "" && png != "":
			fmt.Fprintf(b, "![%s](%s) ([PNG](%s))\n\n", mdAlt(pf.Title), mdLink(svg), mdLink(png))
		case svg != "":
			fmt.Fprintf(b, "![%s](%s)\n\n", mdAlt(pf.Title), mdLink(svg))
		case png != "":
			fmt.Fprintf(b, "![%s](%s)\n\n", mdAlt(pf.Title), mdLink(png))
		}
	}
}

// mdAlt makes s safe as Markdown image alt text.
func mdAlt(s string) string {
	return strings.NewReplacer("[", "(", "]", ")", "\n", " ").Replace(s)
}

// mdLink makes a path safe as a Markdown link target.
func mdLink(path string) string {
	return strings.NewReplacer(" ", "%20", "(", "%28", ")", "%29").Replace(path)
}
