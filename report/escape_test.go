package report

import (
	"bytes"
	"encoding/csv"
	"strconv"
	"strings"
	"testing"
)

// hostileInput is the fixture with strings from a database that another
// program (or a shared store) could have written: markup and spreadsheet
// formulas as device, compiler, shape and detail.
func hostileInput(t *testing.T) Input {
	t.Helper()
	in := fixtureInput(t)
	in.Shapes = nil
	for i := range in.Cells {
		c := &in.Cells[i]
		c.Prov.Device = `<script>alert("device")</script>`
		c.Prov.Compiler = `=HYPERLINK("http://evil.example/","click")`
		c.Cell.Shape = `<img src=x onerror=alert(1)>` + c.Cell.Shape
		for j := range c.Candidates {
			c.Candidates[j].Detail = "@SUM(1+1)*cmd|' /C calc'!A0 </td><b>x</b>"
		}
	}
	return in
}

// TestMarkdownEscapesHTML (issue 18 item 12): strings from the database
// went raw into Markdown ("<script>" survived; pipes were escaped). Raw
// HTML is shown as text now, in tables and headings alike; prose such as
// "r < m" is left alone.
func TestMarkdownEscapesHTML(t *testing.T) {
	var b bytes.Buffer
	if err := Markdown(&b, hostileInput(t)); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, bad := range []string{"<script", "<img", "</td", "<b>"} {
		if i := strings.Index(out, bad); i >= 0 {
			t.Errorf("raw %q in the Markdown: …%s…", bad, out[max(0, i-80):min(len(out), i+80)])
		}
	}
	if !strings.Contains(out, "&lt;script>") {
		t.Errorf("the device name is gone rather than escaped")
	}
	if got := escapeTags("r < m, `<b>` and <b>x</b> and ``a`<i>`b``"); got != "r < m, `<b>` and &lt;b>x&lt;/b> and ``a`<i>`b``" {
		t.Errorf("escapeTags: %q", got)
	}
}

// TestCSVNeutralisesFormulas (issue 18 item 12): "=HYPERLINK(…)" from the
// database went raw into CSV, where a spreadsheet runs it. A value that
// starts like a formula is prefixed with an apostrophe; numbers stay.
func TestCSVNeutralisesFormulas(t *testing.T) {
	in := hostileInput(t)
	for i := range in.Cells {
		in.Cells[i].Prov.Device = `=HYPERLINK("http://evil.example/","click")`
	}
	var b bytes.Buffer
	if err := CSV(&b, in); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for i, rec := range recs {
		for j, v := range rec {
			if v != "" && strings.ContainsRune("=+-@\t\r", rune(v[0])) {
				if _, isNum := parseNum(v); !isNum {
					t.Errorf("row %d column %s: %q would run as a formula", i, recs[0][j], v)
				}
			}
		}
	}
	dev := -1
	for j, c := range recs[0] {
		if c == "device" {
			dev = j
		}
	}
	if dev < 0 || len(recs) < 2 || recs[1][dev] != `'=HYPERLINK("http://evil.example/","click")` {
		t.Errorf("device column %d: %q", dev, recs[1])
	}
	for _, tc := range [][2]string{{"=1+2", "'=1+2"}, {"-1.5", "-1.5"}, {"+3", "+3"}, {"@x", "'@x"}, {"-O3", "'-O3"}, {"\tx", "'\tx"}, {"plain", "plain"}, {"", ""}} {
		if got := csvSafe(tc[0]); got != tc[1] {
			t.Errorf("csvSafe(%q) = %q, want %q", tc[0], got, tc[1])
		}
	}
}

func parseNum(s string) (float64, bool) {
	x, err := strconv.ParseFloat(s, 64)
	return x, err == nil
}
