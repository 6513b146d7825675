package report

import (
	"bytes"
	"encoding/base64"
	"html"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tilefit/tilefit/result"
)

// svgDataURI matches the inline images of the HTML report (html/template
// writes the '+' of the data URL as "&#43;").
var svgDataURI = regexp.MustCompile(`src="(data:image/svg[^"]*)"`)

// TestHTMLGolden checks the page's structure and text against a golden
// file; the inline SVG images are checked as SVG and replaced by a marker
// (their bytes are gonum/plot's business).
func TestHTMLGolden(t *testing.T) {
	in := fixtureInput(t)
	var b bytes.Buffer
	if err := HTML(&b, in); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	imgs := svgDataURI.FindAllStringSubmatch(page, -1)
	// CPU: chunk, ratio, 3 shapes; CUDA: chunk, ratio, 1 shape.
	if len(imgs) != 8 {
		t.Fatalf("%d inline SVG images, want 8", len(imgs))
	}
	for i, m := range imgs {
		uri := html.UnescapeString(m[1])
		const prefix = "data:image/svg+xml;base64,"
		if !strings.HasPrefix(uri, prefix) {
			t.Fatalf("image %d: %.40s…", i, uri)
		}
		svg, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(uri, prefix))
		if err != nil {
			t.Fatalf("image %d: %v", i, err)
		}
		checkSVG(t, "inline image", svg)
	}
	stripped := svgDataURI.ReplaceAllString(page, `src="data:image/svg+xml;base64,…"`)
	golden(t, "report.html.golden", []byte(stripped))

	// Self-contained: nothing is fetched from elsewhere.
	for _, bad := range []string{`src="http`, `href="http`, `<link `, `@import`, `src="/`} {
		if strings.Contains(page, bad) {
			t.Errorf("the page refers to an outside resource: %q", bad)
		}
	}
	// The whole chunk of each device first; the top of each section:
	// verdict, then its share of the chunk (where it is not the whole
	// chunk), before the plots and the per-cell table.
	doc := build(in)
	first := strings.Index(page, `<section class="provenance"`)
	for i := range doc.Chunks {
		if c := strings.Index(page, `id="chunk-`+strconv.Itoa(i)+`"`); c < 0 || c > first {
			t.Errorf("the whole chunk %d at %d, the first section at %d", i, c, first)
		}
	}
	for _, sec := range doc.Provenances {
		i := strings.Index(page, `id="prov-`+sec.Key+`"`)
		v := strings.Index(page[i:], `id="verdict-`+sec.Key+`"`)
		c := strings.Index(page[i:], `id="chunk-`+sec.Key+`"`)
		f := strings.Index(page[i:], `<img class="plot"`)
		p := strings.Index(page[i:], `id="cells-`+sec.Key+`"`)
		if !sectionChunkShown(doc, sec) {
			if c >= 0 {
				t.Errorf("section %s repeats the whole chunk", sec.Key)
			}
			c = v + 1
		}
		if i < 0 || v < 0 || !(v < c && c < f && f < p) {
			t.Errorf("section %s order: verdict %d, chunk %d, plots %d, cells %d", sec.Key, v, c, f, p)
		}
	}
}

// Text from the database (shape names, compiler messages) is escaped.
func TestHTMLEscapes(t *testing.T) {
	t0 := time.Unix(0, 0).UTC()
	bad := result.Candidate{Tile: "z", Status: result.CompileFailed, Detail: "<script>alert(1)</script>\nline 2 & more"}
	in := Input{Cells: []result.CellResult{row(`<img src=x onerror="alert(2)">`, 1, t0, ok("ref", 2), ok("x", 1), bad)}}
	var b bytes.Buffer
	if err := HTML(&b, in); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, raw := range []string{"<script>alert(1)", `<img src=x`} {
		if strings.Contains(page, raw) {
			t.Errorf("unescaped %q in the page", raw)
		}
	}
	// The whole message is there, behind its first line.
	if !strings.Contains(page, "<summary>&lt;script&gt;alert(1)&lt;/script&gt;</summary><pre>&lt;script&gt;alert(1)&lt;/script&gt;\nline 2 &amp; more</pre>") {
		t.Errorf("the failure's message is not shown whole:\n%s", page)
	}
}

func TestHTMLEmptyAndIndex(t *testing.T) {
	var b bytes.Buffer
	in := Input{Generated: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	if err := HTML(&b, in); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `<p id="no-results">No results.</p>`) {
		t.Errorf("empty page:\n%s", b.String())
	}
	b.Reset()
	if err := HTMLIndex(&b, fixtureInput(t), func(key string) string { return "run/" + key }); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<a href="run/f9189b3b17e3b42f"><code>f9189b3b17e3b42f</code></a>`, `<a href="run/ab3293380ab8558c">`,
		"<td>NVIDIA H200</td>", "ALL BITWISE: 3 tiles × 1 shape × 1 M", `<table class="sortable" id="runs">`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("index lacks %q:\n%s", want, b.String())
		}
	}
}
