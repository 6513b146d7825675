package report

import (
	"bufio"
	_ "embed"
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/tilefit/tilefit/result"
)

// HTML writes the report as one self-contained HTML page: per provenance
// the parity verdict and the per-chunk table first, then the figures
// (inline SVG images), the per-cell table, every candidate with its times
// and kernel resources, the A/A noise floor, the failures with their whole
// messages, and the provenance. Every table sorts by a click on a column
// header (a few lines of inline JavaScript); the page loads nothing else.
func HTML(w io.Writer, in Input) error {
	doc := build(in)
	page := htmlPage{Title: doc.Title, Generated: doc.Generated.Format("2006-01-02 15:04:05 UTC")}
	for _, sec := range doc.Provenances {
		page.Runs += sec.Runs
		hs, err := htmlSectionOf(sec)
		if err != nil {
			return err
		}
		page.Sections = append(page.Sections, hs)
	}
	bw := bufio.NewWriter(w)
	if err := pageTemplate.Execute(bw, page); err != nil {
		return fmt.Errorf("write HTML report: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write HTML report: %w", err)
	}
	return nil
}

// An IndexEntry is one provenance on the index page of HTMLIndex.
type IndexEntry struct {
	Key, Link                       string
	Backend, Family, Device         string
	Cells, Runs                     int
	Started, Finished, Parity, Best string
}

// HTMLIndex writes a page listing the provenances of in (one run each),
// each linked to link(key); "tilefit serve" shows it at "/".
func HTMLIndex(w io.Writer, in Input, link func(key string) string) error {
	doc := build(in)
	var entries []IndexEntry
	for _, sec := range doc.Provenances {
		e := IndexEntry{Key: sec.Key, Link: link(sec.Key), Backend: sec.Provenance.Backend, Family: sec.Provenance.Family,
			Device: sec.Provenance.Device, Cells: len(sec.Cells), Runs: sec.Runs,
			Started: sec.Started.Format("2006-01-02 15:04:05"), Finished: sec.Finished.Format("2006-01-02 15:04:05 UTC"),
			Parity: sec.Parity.Summary}
		entries = append(entries, e)
	}
	bw := bufio.NewWriter(w)
	if err := indexTemplate.Execute(bw, struct {
		Title, Generated string
		Entries          []IndexEntry
	}{doc.Title, doc.Generated.Format("2006-01-02 15:04:05 UTC"), entries}); err != nil {
		return fmt.Errorf("write HTML index: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write HTML index: %w", err)
	}
	return nil
}

type htmlPage struct {
	Title, Generated string
	Runs             int
	Sections         []htmlSection
}

type htmlSection struct {
	Key, Heading    string
	AllBitwise      bool
	Parity, Vendors string
	Chunk           htmlTable
	ChunkNote       string
	Figures         []htmlFigure
	Cells           htmlTable
	Candidates      htmlTable
	Resources       htmlTable
	AA              htmlTable
	Failures        []htmlFailure
	Provenance      [][2]string
}

type htmlFigure struct {
	ID, Name, Title string
	Src             template.URL
	Width           int // CSS pixels
}

// An htmlTable is a sortable table; a cell's Sort is the value it sorts by
// ("" sorts last), Text what it shows.
type htmlTable struct {
	ID   string
	Head []htmlHead
	Rows [][]htmlCell
}

type htmlHead struct {
	Label string
	Num   bool
}

type htmlCell struct {
	Text, Sort, Class string
	Code              bool
}

type htmlFailure struct {
	Shape, Tile, Status, First, Detail string
	M                                  int
	More                               bool
}

// numCell shows x with prec decimals and sorts by its full value.
func numCell(x num, prec int) htmlCell {
	if !x.valid() {
		return dashCell
	}
	return htmlCell{Text: fixed(x, prec), Sort: strconv.FormatFloat(float64(x), 'g', 10, 64), Class: "num"}
}

func intCell(v int) htmlCell {
	if v < 0 {
		return dashCell
	}
	return htmlCell{Text: strconv.Itoa(v), Sort: strconv.Itoa(v), Class: "num"}
}

func textCell(s string) htmlCell { return htmlCell{Text: s, Sort: s} }

func codeCell(s string) htmlCell { return htmlCell{Text: s, Sort: s, Code: true} }

// gbps is the bytes moved per second of a call of c taking us µs, in GB/s.
func gbps(c *Cell, us num) num {
	if c.Bytes <= 0 || !us.valid() || us <= 0 {
		return none
	}
	return num(c.Bytes / (float64(us) * 1e3))
}

func htmlSectionOf(sec Section) (htmlSection, error) {
	pv := sec.Provenance
	hs := htmlSection{
		Key: sec.Key, Heading: pv.Backend + " · " + pv.Family + " · " + pv.Device,
		AllBitwise: sec.Parity.AllBitwise, Parity: sec.Parity.Summary,
	}
	if sec.Parity.Vendors != "" {
		hs.Vendors = "Vendors " + sec.Parity.Vendors + "."
	}

	// Per chunk.
	floors := chunkFloors(sec)
	hs.Chunk = htmlTable{ID: "chunk-" + sec.Key}
	head := func(t *htmlTable, label string, isNum bool) { t.Head = append(t.Head, htmlHead{label, isNum}) }
	head(&hs.Chunk, "M", true)
	head(&hs.Chunk, "reference "+sec.Reference+" (ms)", true)
	head(&hs.Chunk, "best per cell (ms)", true)
	for _, v := range sec.Vendors {
		head(&hs.Chunk, v+" (ms)", true)
	}
	if floors != nil {
		head(&hs.Chunk, "roofline floor (ms)", true)
	}
	head(&hs.Chunk, "best/reference", true)
	for _, v := range sec.Vendors {
		head(&hs.Chunk, v+"/best", true)
	}
	if floors != nil {
		head(&hs.Chunk, "floor/best", true)
	}
	partial := func(t Total, col string, x num) htmlCell {
		c := numCell(x, 3)
		if t.partial[col] && x.valid() {
			c.Text += "*"
		}
		return c
	}
	var missing []string
	for _, t := range sec.Totals {
		r := []htmlCell{intCell(t.M), partial(t, "reference", t.ReferenceMs), partial(t, "best", t.BestMs)}
		for _, v := range sec.Vendors {
			r = append(r, partial(t, v, t.VendorMs[v]))
		}
		f := floors[t.M]
		if floors != nil {
			c := numCell(f.Ms, 3)
			if f.Partial && f.Ms.valid() {
				c.Text += "*"
			}
			r = append(r, c)
		}
		r = append(r, numCell(t.BestOverReference, 3))
		for _, v := range sec.Vendors {
			r = append(r, numCell(t.VendorOverBest[v], 3))
		}
		if floors != nil {
			ratio := none
			if f.Ms.valid() && !f.Partial && t.BestMs.valid() && !t.partial["best"] && t.BestMs > 0 {
				ratio = f.Ms / t.BestMs
			}
			r = append(r, numCell(ratio, 3))
		}
		hs.Chunk.Rows = append(hs.Chunk.Rows, r)
		if len(t.Missing) > 0 {
			missing = append(missing, fmt.Sprintf("M=%d lacks %s", t.M, strings.Join(t.Missing, ", ")))
		}
	}
	hs.ChunkNote = fmt.Sprintf("ms/chunk = Σ calls × µs/call ÷ 1000 over the chunk's %d %s (%s); best = the fastest OK tile of each cell.",
		len(sec.Chunk), plural(len(sec.Chunk), "shape", "shapes"), strings.Join(sec.Chunk, ", "))
	if floors != nil {
		hs.ChunkNote += " Roofline floor per call = max(FLOPs ÷ vendor peak, bytes moved ÷ copy bandwidth), from the device's measured ceilings."
	}
	if len(missing) > 0 {
		hs.ChunkNote += " * partial sum (a ratio only where both sums cover the same shapes): " + strings.Join(missing, "; ") + "."
	}

	// Figures.
	for _, f := range Figures(sec) {
		b, err := f.Bytes("svg")
		if err != nil {
			return hs, err
		}
		hs.Figures = append(hs.Figures, htmlFigure{
			ID: "fig-" + sec.Key + "-" + f.Name, Name: f.Name, Title: f.Title,
			Src:   template.URL("data:image/svg+xml;base64," + base64.StdEncoding.EncodeToString(b)),
			Width: int(f.Width.Points() * 96 / 72),
		})
	}

	// Per cell.
	hs.Cells = htmlTable{ID: "cells-" + sec.Key}
	for _, h := range []htmlHead{{"shape", false}, {"N", true}, {"K", true}, {"M", true}, {"calls", true},
		{"reference (µs)", true}, {"fastest", false}, {"fastest (µs)", true}, {"fastest/reference", true}, {"2nd", false}, {"3rd", false}} {
		hs.Cells.Head = append(hs.Cells.Head, h)
	}
	for _, v := range sec.Vendors {
		head(&hs.Cells, v+" (µs)", true)
		head(&hs.Cells, v+"/reference", true)
	}
	head(&hs.Cells, "best GFLOP/s", true)
	head(&hs.Cells, "A/A median", true)
	for i := range sec.Cells {
		c := &sec.Cells[i]
		ref := numCell(c.ReferenceUs, 2)
		if rc := c.find(c.Reference, false); rc != nil && rc.Status != result.OK {
			ref = htmlCell{Text: string(rc.Status), Class: "num bad"}
		}
		if c.Reference != sec.Reference {
			ref.Text = c.Reference + " " + ref.Text
		}
		r := []htmlCell{textCell(c.Shape), intCell(c.N), intCell(c.K), intCell(c.M), intCell(c.Calls), ref}
		if best := c.find(c.Best, false); best != nil {
			bc := codeCell(best.Tile)
			bc.Text += dagger(c, best)
			r = append(r, bc, numCell(best.MedianUs, 2), numCell(best.RatioToReference, 3))
		} else {
			r = append(r, dashCell, dashCell, dashCell)
		}
		for j := 1; j < 3; j++ {
			if j < len(c.Fastest) {
				cand := c.find(c.Fastest[j], false)
				r = append(r, htmlCell{Text: cand.Tile + " " + fixed(cand.MedianUs, 2) + " (" + fixed(cand.RatioToReference, 3) + ")" + dagger(c, cand),
					Sort: strconv.FormatFloat(float64(cand.MedianUs), 'g', 10, 64), Class: "num"})
			} else {
				r = append(r, htmlCell{})
			}
		}
		for _, v := range sec.Vendors {
			vc := c.find(v, false)
			switch {
			case vc == nil:
				r = append(r, dashCell, dashCell)
			case vc.Status != result.OK:
				r = append(r, htmlCell{Text: string(vc.Status), Class: "num bad"}, dashCell)
			default:
				r = append(r, numCell(vc.MedianUs, 2), numCell(vc.RatioToReference, 3))
			}
		}
		aa := dashCell
		if c.AA != nil {
			aa = numCell(c.AA.Median, 3)
		}
		r = append(r, numCell(c.BestGFLOPs, 1), aa)
		hs.Cells.Rows = append(hs.Cells.Rows, r)
	}

	// Every candidate.
	hs.Candidates = htmlTable{ID: "candidates-" + sec.Key}
	for _, h := range []htmlHead{{"shape", false}, {"M", true}, {"tile", false}, {"status", false}, {"bitwise", false},
		{"median µs", true}, {"min µs", true}, {"max µs", true}, {"samples", true}, {"×reference", true},
		{"GFLOP/s", true}, {"GB/s", true}, {"regs/thread", true}, {"local B/thread", true}, {"smem B/block", true},
		{"max error / bound", true}, {"compile s", true}} {
		hs.Candidates.Head = append(hs.Candidates.Head, h)
	}
	for i := range sec.Cells {
		c := &sec.Cells[i]
		for _, cand := range c.Candidates {
			tile := codeCell(cand.Tile)
			switch {
			case cand.AA:
				tile.Text += " (A/A twin)"
			case cand.Vendor:
				tile.Text += " (vendor)"
			}
			st := textCell(string(cand.Status))
			if cand.Status != result.OK {
				st.Class = "bad"
			}
			bitwise, maxErr := "yes", numCell(cand.MaxErr, 3)
			switch {
			case cand.Status != result.OK:
				bitwise, maxErr = "—", dashCell // not checked, or failed the check
			case !cand.Bitwise:
				bitwise = "no"
			}
			res := func(k string) htmlCell {
				if v, ok := cand.Resources[k]; ok {
					return intCell(v)
				}
				return dashCell
			}
			hs.Candidates.Rows = append(hs.Candidates.Rows, []htmlCell{
				textCell(c.Shape), intCell(c.M), tile, st, textCell(bitwise),
				numCell(cand.MedianUs, 2), numCell(cand.MinUs, 2), numCell(cand.MaxUs, 2), intCell(cand.Samples),
				numCell(cand.RatioToReference, 3), numCell(cand.GFLOPs, 1), numCell(gbps(c, cand.MedianUs), 1),
				res(result.ResRegs), res(result.ResLocalBytes), res(result.ResSharedBytes),
				maxErr, numCell(cand.CompileSeconds, 2),
			})
		}
	}

	// Kernel resources per tile.
	if rows := resourceRows(sec); len(rows) > 0 {
		hs.Resources = htmlTable{ID: "resources-" + sec.Key, Head: []htmlHead{{"tile", false}, {"regs/thread", true},
			{"local B/thread", true}, {"smem B/block", true}, {"cells", true}, {"fastest in", true}, {"×reference (geomean)", true}}}
		for _, r := range rows {
			hs.Resources.Rows = append(hs.Resources.Rows, []htmlCell{codeCell(r.Tile), intCell(r.Regs), intCell(r.Local),
				intCell(r.Shared), intCell(r.Cells), intCell(r.Fastest), numCell(r.Geomean, 3)})
		}
	}

	// A/A.
	hs.AA = htmlTable{ID: "aa-" + sec.Key, Head: []htmlHead{{"shape", false}, {"M", true}, {"pairs", true}, {"median ratio", true}, {"min", true}, {"max", true}}}
	for _, c := range sec.Cells {
		if c.AA != nil {
			hs.AA.Rows = append(hs.AA.Rows, []htmlCell{textCell(c.Shape), intCell(c.M), intCell(c.AA.Pairs),
				numCell(c.AA.Median, 3), numCell(c.AA.Min, 3), numCell(c.AA.Max, 3)})
		}
	}

	// Failures.
	for _, f := range sec.Failures {
		detail := strings.TrimSpace(f.Detail)
		first := firstLine(detail, 160)
		hs.Failures = append(hs.Failures, htmlFailure{Shape: f.Shape, M: f.M, Tile: f.Tile, Status: string(f.Status),
			First: first, Detail: detail, More: detail != first})
	}

	// Provenance.
	kv := func(k, v string) { hs.Provenance = append(hs.Provenance, [2]string{k, v}) }
	kv("provenance key", sec.Key)
	kv("backend", pv.Backend)
	kv("device", pv.Device)
	kv("arch", pv.Arch)
	kv("compiler", pv.Compiler)
	kv("flags", pv.Flags)
	kv("driver", pv.Driver)
	kv("family", pv.Family)
	kv("source hash", pv.SourceHash)
	kv("operator", pv.Operator)
	kv("operand types", pv.Types)
	kv("reference tile", sec.Reference)
	facts := rangeText(sec.Rounds, "round", "rounds") + " × " + rangeText(sec.Sets, "input set", "input sets")
	if sec.Dispatches != [2]int{} {
		facts += ", " + rangeText(sec.Dispatches, "dispatch", "dispatches") + " per sample"
	}
	kv("run", facts)
	kv("measured", fmt.Sprintf("%s – %s; %d %s from %d stored %s",
		sec.Started.Format("2006-01-02 15:04:05"), sec.Finished.Format("2006-01-02 15:04:05 UTC"),
		len(sec.Cells), plural(len(sec.Cells), "cell", "cells"), sec.Runs, plural(sec.Runs, "run", "runs")))
	if len(sec.Devices) > 0 {
		kv("measured on", devicesText(sec.Devices))
	}
	if d := sec.Device; d != nil {
		keys := make([]string, 0, len(d.Props))
		for k := range d.Props {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var parts []string
		for _, k := range keys {
			parts = append(parts, k+" "+d.Props[k])
		}
		kv("device facts", strings.Join(parts, ", ")+" (measured "+d.Measured.Format("2006-01-02 15:04 UTC")+")")
	}
	return hs, nil
}

//go:embed html/page.tmpl
var pageTmpl string

//go:embed html/index.tmpl
var indexTmpl string

//go:embed html/style.css
var styleCSS string

//go:embed html/sort.js
var sortJS string

var funcs = template.FuncMap{
	"style":  func() template.CSS { return template.CSS(styleCSS) },
	"script": func() template.JS { return template.JS(sortJS) },
}

var (
	pageTemplate  = template.Must(template.New("page").Funcs(funcs).Parse(pageTmpl))
	indexTemplate = template.Must(template.New("index").Funcs(funcs).Parse(indexTmpl))
)

// dashCell is a numeric cell with no value.
var dashCell = htmlCell{Text: "—", Class: "num"}
