package report

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tilefit/tilefit/result"
	"github.com/tilefit/tilefit/stats"
)

// The report's views (Markdown, HTML, serve) render one model: a list of
// blocks — headings, paragraphs, tables, the figures — built once from the
// Document by docView and sectionView, so that every view carries the same
// tables, intervals, verdicts and notes. Text is in a small inline markup
// both renderers read: `code` spans, **strong** and \* for a literal star.

// A blockKind says what a block is.
type blockKind int

const (
	bHeading blockKind = iota // Text at Level (2 or 3), with ID
	bPara                     // Text; Class "note", "strong", "verdict ok", "verdict bad"
	bTable                    // Table
	bFigures                  // the section's figures (HTML: inline; Markdown: links to the plot files)
	bDetails                  // HTML only: Table behind a summary Text
)

// A block is one piece of a rendered report.
type block struct {
	Kind  blockKind
	Level int
	ID    string
	Class string
	Text  string
	Table *table
	// Key is the section of a bFigures block.
	Key string
}

// A table is one table of a view. Facts tables (Class "facts") are key /
// value lists without a header.
type table struct {
	ID    string
	Class string
	Head  []column
	Rows  [][]tcell
}

// A column is a table header.
type column struct {
	Label string
	Num   bool
}

// A tcell is one table cell: Text in the inline markup (verbatim when
// Plain), Sort the value an HTML table sorts by ("" sorts last), Detail the
// whole text behind a cut Text (HTML shows it on a click).
type tcell struct {
	Text, Sort, Detail string
	Num, Bad, Plain    bool
}

func (t *table) head(label string, isNum bool) { t.Head = append(t.Head, column{label, isNum}) }

func para(class, format string, args ...any) block {
	return block{Kind: bPara, Class: class, Text: fmt.Sprintf(format, args...)}
}

func heading(level int, id, text string) block {
	return block{Kind: bHeading, Level: level, ID: id, Text: text}
}

// mono is s as inline code ("—" when empty).
func mono(s string) string {
	if s == "" {
		return "—"
	}
	return "`" + strings.ReplaceAll(s, "`", "'") + "`"
}

func numC(x num, prec int) tcell {
	if !x.valid() {
		return dashC
	}
	return tcell{Text: fixed(x, prec), Sort: strconv.FormatFloat(float64(x), 'g', 10, 64), Num: true}
}

func intC(v int) tcell {
	if v < 0 {
		return dashC
	}
	return tcell{Text: strconv.Itoa(v), Sort: strconv.Itoa(v), Num: true}
}

func textC(s string) tcell { return tcell{Text: s, Sort: s} }

func plainC(s string) tcell { return tcell{Text: s, Sort: s, Plain: true} }

func codeC(s string) tcell { return tcell{Text: mono(s), Sort: s} }

// outcomeC is a comparison's cell: ratio, interval and verdict, sorted by
// the ratio.
func outcomeC(o *stats.Outcome) tcell {
	if o == nil || o.Ratio == 0 {
		return dashC
	}
	return tcell{Text: outcomeText(o), Sort: strconv.FormatFloat(o.Ratio, 'g', 10, 64), Num: true}
}

// partialC is a chunk sum's cell, starred when partial.
func partialC(t Total, col string, x num) tcell {
	c := numC(x, 3)
	if t.partial[col] && x.valid() {
		c.Text += "\\*"
	}
	return c
}

var dashC = tcell{Text: "—", Num: true}

// A view is the model of a whole report: the title, a line of facts, the
// blocks before the sections (the whole chunk of every device) and each
// provenance's section.
type view struct {
	Title, Meta string
	NoResults   bool
	Top         []block
	Sections    []sectionView
}

// A sectionView is the model of one provenance's section.
type sectionView struct {
	Key, Heading string
	Blocks       []block
}

// docView is the whole report's model.
func docView(doc Document) view {
	runs := 0
	for _, sec := range doc.Provenances {
		runs += sec.Runs
	}
	v := view{Title: doc.Title, Meta: fmt.Sprintf("Generated %s from %d stored cell %s.", doc.Generated.Format("2006-01-02 15:04:05 UTC"), runs, plural(runs, "run", "runs"))}
	if len(doc.Provenances) == 0 {
		v.NoResults = true
		return v
	}
	for i, ch := range doc.Chunks {
		v.Top = append(v.Top, chunkBlocks(ch, i, len(doc.Chunks))...)
	}
	for _, sec := range doc.Provenances {
		pv := sec.Provenance
		v.Sections = append(v.Sections, sectionView{Key: sec.Key, Heading: pv.Backend + " · " + pv.Family + " · " + pv.Device, Blocks: sectionBlocks(doc, sec)})
	}
	return v
}

// chunkBlocks is the whole-workload chunk table of one device.
func chunkBlocks(ch Chunk, i, n int) []block {
	title := "The whole chunk"
	if n > 1 {
		title += ": " + ch.Backend + " · " + ch.Device
	}
	var present []string
	ops := map[string]bool{}
	for _, s := range ch.Shapes {
		if s.Present {
			present = append(present, s.Shape)
			ops[s.Operator] = true
		}
	}
	bs := []block{heading(2, "whole-chunk-"+strconv.Itoa(i), title)}
	bs = append(bs, para("note", "ms/chunk = Σ calls × µs/call ÷ 1000 over the workload's %d %s (%d with cells here, %d %s), whichever operator computes them: the reference tiles, "+
		"tilefit's picks (the best tile per cell, and one class per shape: the batch-invariant choice), the vendor (for a fused operator its baseline: the vendor GEMM and an elementwise pass) and the roofline floor. "+
		"Each column adds per cell the reference's median × the column's median paired ratio (stats.WeightedTotal: drift between rounds cancels); a ratio comes with its 95%% bootstrap interval and verdict (tie only inside the ±1%% band).",
		len(ch.Shapes), plural(len(ch.Shapes), "shape", "shapes"), len(present), len(ops), plural(len(ops), "operator", "operators")))
	bs = append(bs, block{Kind: bTable, Table: totalsTable("chunk-"+strconv.Itoa(i), ch.Totals, ch.Vendors, ch.Floor, "reference tiles")})
	bs = append(bs, totalsNotes(ch.Totals)...)
	for _, n := range ch.Notes {
		bs = append(bs, para("note", "%s.", capitalize(n)))
	}
	return bs
}

// totalsTable is a chunk's table: the sums, then the paired ratios with
// their intervals and verdicts.
func totalsTable(id string, ts []Total, vendors []string, floor bool, refLabel string) *table {
	t := &table{ID: id}
	t.head("M", true)
	t.head(refLabel+" (ms)", true)
	t.head("best per cell (ms)", true)
	t.head("one class per shape (ms)", true)
	for _, v := range vendors {
		t.head(v+" (ms)", true)
	}
	if floor {
		t.head("roofline floor (ms)", true)
	}
	t.head("best/reference", true)
	t.head("one class/reference", true)
	for _, v := range vendors {
		t.head(v+"/best", true)
		t.head(v+"/one class", true)
	}
	if floor {
		t.head("floor/best", true)
	}
	for _, tot := range ts {
		r := []tcell{intC(tot.M), partialC(tot, colReference, tot.ReferenceMs), partialC(tot, colBest, tot.BestMs), partialC(tot, colOneClass, tot.OneClassMs)}
		for _, v := range vendors {
			r = append(r, partialC(tot, v, tot.VendorMs[v]))
		}
		if floor {
			r = append(r, partialC(tot, colFloor, tot.FloorMs))
		}
		r = append(r, outcomeC(tot.BestVsReference), outcomeC(tot.OneClassOverReference))
		for _, v := range vendors {
			r = append(r, outcomeC(tot.VendorVsBest[v]), outcomeC(tot.VendorVsOneClass[v]))
		}
		if floor {
			r = append(r, numC(tot.FloorOverBest, 3))
		}
		t.Rows = append(t.Rows, r)
	}
	return t
}

// totalsNotes are the one-line footnotes of a chunk table: what its
// partial sums lack, and the totals' warnings.
func totalsNotes(ts []Total) []block {
	var bs []block
	if m := missingText(ts); m != "" {
		bs = append(bs, para("note", "\\* partial sum (a ratio only where both sums cover the same shapes): %s.", m))
	}
	var warnings []string
	for _, t := range ts {
		for _, w := range t.Warnings {
			warnings = append(warnings, fmt.Sprintf("M=%d: %s", t.M, w))
		}
	}
	if len(warnings) > 0 {
		bs = append(bs, para("note", "Totals: %s.", strings.Join(warnings, "; ")))
	}
	return bs
}

// sectionBlocks is one provenance's section below its heading.
func sectionBlocks(doc Document, sec Section) []block {
	pv := sec.Provenance
	bs := []block{{Kind: bTable, Table: factsTable(sec, doc.Generated)}}
	class := "verdict ok"
	if !sec.Parity.AllBitwise {
		class = "verdict bad"
	}
	bs = append(bs, block{Kind: bPara, ID: "verdict-" + sec.Key, Class: class, Text: sec.Parity.Summary})
	if sec.Parity.Vendors != "" {
		bs = append(bs, para("", "Vendors %s.", sec.Parity.Vendors))
	} else if len(sec.Vendors) == 0 {
		bs = append(bs, para("", "No vendor baseline: %s.", noVendorText(pv.Backend)))
	}
	bs = append(bs, para("strong", "%s", sec.Invariance.Summary))
	if p := sec.Power; p != nil && p.Summary != "" {
		bs = append(bs, block{Kind: bPara, ID: "power-" + sec.Key, Class: "power", Text: p.Summary})
	}
	if sectionChunkShown(doc, sec) {
		bs = append(bs, sectionChunk(sec)...)
	}
	if len(sec.Classes) > 1 {
		bs = append(bs, classesBlocks(sec)...)
	}
	bs = append(bs, block{Kind: bFigures, Key: sec.Key})
	bs = append(bs, cellBlocks(sec)...)
	bs = append(bs, decisionBlocks(sec)...)
	bs = append(bs, invarianceBlocks(sec)...)
	bs = append(bs, aaBlocks(sec)...)
	bs = append(bs, resourceBlocks(sec)...)
	bs = append(bs, block{Kind: bDetails, Text: fmt.Sprintf("Every candidate (%d)", candidateCount(sec)), Table: candidatesTable(sec)})
	bs = append(bs, failureBlocks(sec)...)
	return bs
}

// sectionChunkShown reports whether sec gets its own per-chunk table: when
// its chunk is not the whole chunk of its device (several operators or
// provenances share the device's chunk).
func sectionChunkShown(doc Document, sec Section) bool {
	for _, ch := range doc.Chunks {
		if ch.Backend != sec.Provenance.Backend || ch.Device != sec.Provenance.Device {
			continue
		}
		for _, s := range ch.Shapes {
			if s.Present && s.Provenance != sec.Key {
				return true
			}
		}
		return len(sec.Chunk) != len(ch.Shapes)
	}
	return true
}

// sectionChunk is a provenance's share of the chunk.
func sectionChunk(sec Section) []block {
	_, _, floor := ceilings(sec.Device)
	bs := []block{heading(3, "", "Per chunk: this provenance's share")}
	bs = append(bs, para("note", "ms/chunk over the %d %s this provenance measured (%s); columns as in the whole chunk above.",
		len(sec.Chunk), plural(len(sec.Chunk), "shape", "shapes"), strings.Join(sec.Chunk, ", ")))
	bs = append(bs, block{Kind: bTable, Table: totalsTable("chunk-"+sec.Key, sec.Totals, sec.Vendors, floor, "reference "+mono(sec.Reference))})
	bs = append(bs, totalsNotes(sec.Totals)...)
	var unlisted []string
	for _, c := range sec.Cells {
		if !c.InChunk && !isScanCell(&c) && !contains(unlisted, c.Shape) {
			unlisted = append(unlisted, c.Shape)
		}
	}
	if len(unlisted) > 0 {
		bs = append(bs, para("note", "Not in the workload, so not in the totals: %s.", strings.Join(unlisted, ", ")))
	}
	return bs
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// factsTable is a section's provenance and run facts.
func factsTable(sec Section, generated time.Time) *table {
	pv := sec.Provenance
	t := &table{ID: "facts-" + sec.Key, Class: "facts"}
	row := func(k string, v tcell) { t.Rows = append(t.Rows, []tcell{textC(k), v}) }
	out := "fp32"
	if pv.OutF16() {
		out = "fp16"
	}
	row("provenance key", codeC(sec.Key))
	row("backend", plainC(orDash(pv.Backend)))
	row("device", plainC(orDash(pv.Device)))
	row("arch", plainC(orDash(pv.Arch)))
	row("compiler", plainC(orDash(pv.Compiler)))
	row("flags", codeC(pv.Flags))
	row("driver", plainC(orDash(pv.Driver)))
	row("family", plainC(orDash(pv.Family)))
	row("source hash", codeC(short(pv.SourceHash, 12)))
	if pv.Operator != "" && pv.Operator != "gemm_f16" {
		row("operator", codeC(pv.Operator))
		out = pv.Types
	}
	row("output", plainC(out))
	row("reference tile", codeC(sec.Reference))
	facts := rangeText(sec.Rounds, "round", "rounds") + " × " + rangeText(sec.Sets, "input set", "input sets")
	if sec.Dispatches != [2]int{} {
		facts += ", " + rangeText(sec.Dispatches, "dispatch", "dispatches") + " per sample"
	}
	row("run", plainC(facts))
	row("generated", plainC(generated.Format("2006-01-02 15:04:05 UTC")))
	row("measured", plainC(fmt.Sprintf("%s – %s; %d %s from %d stored %s",
		sec.Started.Format("2006-01-02 15:04:05"), sec.Finished.Format("2006-01-02 15:04:05 UTC"),
		len(sec.Cells), plural(len(sec.Cells), "cell", "cells"), sec.Runs, plural(sec.Runs, "run", "runs"))))
	if len(sec.Devices) > 0 {
		row("measured on", plainC(devicesText(sec.Devices)))
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
		row("device facts", plainC(strings.Join(parts, ", ")+" (measured "+d.Measured.Format("2006-01-02 15:04 UTC")+")"))
	}
	return t
}

// classesBlocks lists a provenance's numerics classes, each shape's one
// class and the chunk on each class's fastest tiles.
func classesBlocks(sec Section) []block {
	bs := []block{heading(3, "classes-"+sec.Key, "Numerics classes")}
	bs = append(bs, para("note", "Tiles of one class compute the same bits; parity is checked within each class (a tile of another class than the reference's is checked against its class's first verified tile in each cell). A selector that keeps every shape in one class at every M keeps outputs batch-invariant."))
	t := &table{ID: "classlist-" + sec.Key}
	t.head("class", false)
	t.head("tiles", true)
	t.head("families", false)
	t.head("checked against", false)
	for _, cl := range sec.Classes {
		t.Rows = append(t.Rows, []tcell{codeC(cl.Name), intC(cl.Tiles), plainC(strings.Join(cl.Families, ", ")), plainC(cl.Reference)})
	}
	bs = append(bs, block{Kind: bTable, Table: t})
	if len(sec.ShapeClasses) > 0 {
		bs = append(bs, para("note", "One class per shape: the class whose fastest tiles (those whose rows kept their bits across M) give the shape the least Σ calls × µs over its M (what `tilefit select` starts from, and confirms)."))
		st := &table{ID: "shapeclasses-" + sec.Key}
		st.head("shape", false)
		st.head("N", true)
		st.head("K", true)
		st.head("class", false)
		for _, cl := range sec.Classes {
			st.head(mono(cl.Name)+" µs", true)
		}
		for _, sc := range sec.ShapeClasses {
			r := []tcell{plainC(sc.Shape), intC(sc.N), intC(sc.K), codeC(sc.Class)}
			for _, cl := range sec.Classes {
				r = append(r, numC(sc.Us[cl.Name], 1))
			}
			st.Rows = append(st.Rows, r)
		}
		bs = append(bs, block{Kind: bTable, Table: st})
	}
	bs = append(bs, para("note", "ms/chunk on each class's fastest tile per cell (\\* a class without a tile for some shape: partial)."))
	ct := &table{ID: "classchunk-" + sec.Key}
	ct.head("M", true)
	for _, cl := range sec.Classes {
		ct.head(mono(cl.Name), true)
	}
	for _, tot := range sec.Totals {
		r := []tcell{intC(tot.M)}
		for _, cl := range sec.Classes {
			r = append(r, partialC(tot, "class "+cl.Name, tot.ClassMs[cl.Name]))
		}
		ct.Rows = append(ct.Rows, r)
	}
	return append(bs, block{Kind: bTable, Table: ct})
}

// candidateCount is the number of candidates of sec's cells.
func candidateCount(sec Section) int {
	n := 0
	for _, c := range sec.Cells {
		n += len(c.Candidates)
	}
	return n
}

// failureBlocks lists the failed candidates with their messages' first
// lines (HTML: the whole message behind it).
func failureBlocks(sec Section) []block {
	bs := []block{heading(3, "", "Failures")}
	if len(sec.Failures) == 0 {
		return append(bs, para("", "None."))
	}
	t := &table{ID: "failures-" + sec.Key, Class: "failures"}
	t.head("shape", false)
	t.head("M", true)
	t.head("tile", false)
	t.head("status", false)
	t.head("message", false)
	for _, f := range sec.Failures {
		detail := strings.TrimSpace(f.Detail)
		first := FailureLine(detail, 100)
		msg := plainC(first)
		if detail != first {
			msg.Detail = detail
		}
		st := textC(string(f.Status))
		st.Bad = true
		t.Rows = append(t.Rows, []tcell{plainC(f.Shape), intC(f.M), codeC(f.Tile), st, msg})
	}
	return append(bs, block{Kind: bTable, Table: t})
}

// failedCount is the number of candidates of c that did not pass.
func failedCount(c *Cell) int {
	n := 0
	for _, cand := range c.Candidates {
		if cand.Status != result.OK {
			n++
		}
	}
	return n
}
