package report

import (
	"bufio"
	_ "embed"
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
	"regexp"
	"strings"
)

// HTML writes the report as one self-contained HTML page from the same
// model as Markdown (docView): the whole workload's chunk per device, then
// per provenance its facts, the parity, batch-invariance and power
// summaries, the figures (inline SVG images), the per-cell table with its
// intervals and verdicts, the decisions and undecided cells, the batch
// invariance, the A/A noise floor, the kernel resources, every candidate
// and the failures with their whole messages. Every table sorts by a click
// on a column header (a few lines of inline JavaScript); the page loads
// nothing else.
func HTML(w io.Writer, in Input) error {
	doc := build(in)
	v := docView(doc)
	page := htmlPage{view: v}
	for i, sv := range v.Sections {
		hs := htmlSection{sectionView: sv}
		for _, f := range Figures(doc.Provenances[i]) {
			b, err := f.Bytes("svg")
			if err != nil {
				return err
			}
			hs.Figures = append(hs.Figures, htmlFigure{
				ID: "fig-" + sv.Key + "-" + f.Name, Name: f.Name, Title: f.Title,
				Src:   template.URL("data:image/svg+xml;base64," + base64.StdEncoding.EncodeToString(b)),
				Width: int(f.Width.Points() * 96 / 72),
			})
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
// each linked to link(key), below the whole workload's chunk of every
// device (the tables the report starts with); "tilefit serve" shows it at
// "/".
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
		Top              []block
	}{doc.Title, doc.Generated.Format("2006-01-02 15:04:05 UTC"), entries, docView(doc).Top}); err != nil {
		return fmt.Errorf("write HTML index: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write HTML index: %w", err)
	}
	return nil
}

type htmlPage struct {
	view
	Sections []htmlSection
}

type htmlSection struct {
	sectionView
	Figures []htmlFigure
}

type htmlFigure struct {
	ID, Name, Title string
	Src             template.URL
	Width           int // CSS pixels
}

// inline renders the model's inline markup as HTML: the text escaped, then
// `code` spans, **strong** and \* (a literal star).
func inline(s string) template.HTML {
	e := template.HTMLEscapeString(s)
	e = codeSpan.ReplaceAllString(e, "<code>$1</code>")
	e = strongSpan.ReplaceAllString(e, "<strong>$1</strong>")
	e = strings.ReplaceAll(e, `\*`, "*")
	return template.HTML(e)
}

var (
	codeSpan   = regexp.MustCompile("`([^`]*)`")
	strongSpan = regexp.MustCompile(`\*\*(.+?)\*\*`)
)

// cellHTML is a table cell's content.
func cellHTML(c tcell) template.HTML {
	if c.Plain {
		return template.HTML(template.HTMLEscapeString(c.Text))
	}
	return inline(c.Text)
}

// blocksOf pairs a section's blocks with its figures for the template.
func blocksOf(bs []block, figs []htmlFigure) map[string]any {
	return map[string]any{"Blocks": bs, "Figures": figs}
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
	"style":    func() template.CSS { return template.CSS(styleCSS) },
	"script":   func() template.JS { return template.JS(sortJS) },
	"inline":   inline,
	"cell":     cellHTML,
	"blocksOf": blocksOf,
}

var (
	pageTemplate  = template.Must(template.New("page").Funcs(funcs).Parse(pageTmpl))
	indexTemplate = template.Must(template.Must(pageTemplate.Clone()).New("index").Parse(indexTmpl))
)
