package report

import (
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tilefit/tilefit/kernel"
)

// Markdown writes the report as Markdown: the whole workload's chunk per
// device first (tilefit's picks, the vendor and the roofline floor, with
// paired ratios, intervals and verdicts), then per provenance its facts,
// the parity and batch-invariance summaries, the power state, the
// per-cell table (the three fastest OK tiles with their paired ratio to the
// reference, interval and verdict, the vendor baselines, the best tile's
// GFLOP/s), the decisions and the cells left undecided, the batch
// invariance, the A/A noise floor, the kernel resources, the failures and
// links to the figures of in.Plots. It renders the same model as HTML
// (docView). Tables are padded so that they read in a terminal.
func Markdown(w io.Writer, in Input) error { return markdownDoc(w, build(in), in.Plots) }

// markdownDoc is Markdown of a built model.
func markdownDoc(w io.Writer, doc Document, plots []PlotFile) error {
	if _, err := io.WriteString(w, alignTables(markdownOf(docView(doc), plots))); err != nil {
		return fmt.Errorf("write Markdown report: %w", err)
	}
	return nil
}

// markdownOf renders a report's model as Markdown.
func markdownOf(v view, plots []PlotFile) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n%s\n", v.Title, v.Meta)
	if v.NoResults {
		b.WriteString("\nNo results.\n")
	}
	markdownBlocks(&b, v.Top, plots)
	for _, sec := range v.Sections {
		fmt.Fprintf(&b, "\n## %s\n", cellText(sec.Heading))
		markdownBlocks(&b, sec.Blocks, plots)
	}
	return b.String()
}

// markdownBlocks renders blocks, each after a blank line; HTML-only blocks
// (bDetails) are left out.
func markdownBlocks(b *strings.Builder, bs []block, plots []PlotFile) {
	for _, bl := range bs {
		switch bl.Kind {
		case bHeading:
			fmt.Fprintf(b, "\n%s %s\n", strings.Repeat("#", bl.Level), cellText(bl.Text))
		case bPara:
			text := cellText(bl.Text)
			if bl.Class == "strong" || strings.HasPrefix(bl.Class, "verdict") {
				text = "**" + text + "**"
			}
			fmt.Fprintf(b, "\n%s\n", text)
		case bTable:
			b.WriteString("\n")
			markdownTable(b, bl.Table)
		case bFigures:
			markdownPlots(b, bl.Key, plots)
		}
	}
}

// markdownTable renders a table (a facts table with an empty header).
func markdownTable(b *strings.Builder, t *table) {
	head := t.Head
	if t.Class == "facts" {
		head = []column{{"", false}, {"", false}}
	}
	b.WriteString("|")
	for _, h := range head {
		fmt.Fprintf(b, " %s |", cellText(h.Label))
	}
	b.WriteString("\n|")
	for _, h := range head {
		if h.Num {
			b.WriteString("---:|")
		} else {
			b.WriteString("---|")
		}
	}
	b.WriteString("\n")
	for _, r := range t.Rows {
		b.WriteString("|")
		for _, c := range r {
			text := cellText(c.Text)
			if c.Plain {
				text = cellText(strings.ReplaceAll(c.Text, "`", "'"))
			}
			if text == "" {
				b.WriteString(" |")
				continue
			}
			fmt.Fprintf(b, " %s |", text)
		}
		b.WriteString("\n")
	}
}

// leftEarly marks a tile that left the adaptive rounds early: its time is
// the reference's median × its paired ratio.
func leftEarly(c *Candidate) string {
	if c.RankedUs == c.MedianUs || !c.RankedUs.valid() {
		return ""
	}
	return " ‡"
}

// dagger marks a candidate that is not bitwise equal to its numerics
// class's reference in cell c.
func dagger(c *Cell, cand *Candidate) string {
	if inClassBitwise(c, cand) {
		return ""
	}
	return " †"
}

// fixed formats x with prec decimals, or "—" when x has no value.
func fixed(x num, prec int) string {
	if !x.valid() {
		return "—"
	}
	return strconv.FormatFloat(float64(x), 'f', prec, 64)
}

func rangeText(r [2]int, one, many string) string {
	if r[0] == r[1] {
		return strconv.Itoa(r[0]) + " " + plural(r[0], one, many)
	}
	return strconv.Itoa(r[0]) + "–" + strconv.Itoa(r[1]) + " " + many
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func short(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return cellText(s)
}

// code formats s as inline code ("—" when empty).
func code(s string) string {
	if s == "" {
		return "—"
	}
	s = strings.ReplaceAll(cellText(s), "`", "'")
	return "`" + s + "`"
}

// cellText makes s safe inside a Markdown table cell: one line, pipes
// escaped.
func cellText(s string) string {
	s = strings.ReplaceAll(s, "\r", " ")
	s = strings.ReplaceAll(s, "\n", " ")
	return strings.ReplaceAll(s, "|", `\|`)
}

// firstLine returns the first non-empty line of s, cut to at most n runes.
// A cut keeps the first differing element ("first difference at [r,c]
// (index i)") when the line names one: the part a reader needs to find the
// failure.
func firstLine(s string, n int) string {
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if utf8.RuneCountInString(line) <= n {
			return line
		}
		if loc := firstDiffRE.FindStringIndex(line); loc != nil && utf8.RuneCountInString(line[:loc[1]]) > n-1 {
			keep := line[loc[0]:loc[1]]
			head := n - utf8.RuneCountInString(keep) - 3
			if head < 8 {
				return cut(keep, n)
			}
			return cut(line[:loc[0]], head+1) + " " + keep + "…"
		}
		return cut(line, n)
	}
	return ""
}

// FailureLine is the line of a failure's detail a reader needs, cut to at
// most n runes: for a compile failure ("compile gemm_f16[…]: exit status
// 1" then the compiler's output) the compiler's first error
// ("broken.c:440:5: error: …"), else the first line (firstLine).
func FailureLine(detail string, n int) string {
	lines := strings.Split(detail, "\n")
	if len(lines) > 1 && strings.HasPrefix(strings.TrimSpace(lines[0]), "compile ") {
		for _, l := range lines[1:] {
			if compilerError.MatchString(l) {
				return firstLine(l, n)
			}
		}
	}
	return firstLine(detail, n)
}

// compilerError matches a compiler's error line: cc's "file:12:5: error:"
// and "fatal error:", NVRTC's "file(12): error:".
var compilerError = regexp.MustCompile(`(:[0-9]+(:[0-9]+)?: (fatal )?error:|\([0-9]+\): (catastrophic )?error)`)

// firstDiffRE matches verify's "first difference at [r,c] (index i)".
var firstDiffRE = regexp.MustCompile(`first difference at \[[0-9]+,[0-9]+\] \(index [0-9]+\)`)

// cut shortens line to at most n runes, ending in "…" when it cuts: at the
// last word boundary (a space) that keeps at least half of the room, else
// mid-word.
func cut(line string, n int) string {
	r := []rune(line)
	if len(r) <= n {
		return line
	}
	head := r[:n-1]
	if i := lastSpace(head); i >= (n-1)/2 {
		head = head[:i]
	}
	return strings.TrimSpace(string(head)) + "…"
}

// lastSpace is the index of the last space of r, or -1.
func lastSpace(r []rune) int {
	for i := len(r) - 1; i >= 0; i-- {
		if r[i] == ' ' {
			return i
		}
	}
	return -1
}

// nText is a cell's N column: N, or for an operator without an N dimension
// (hc_up_f16's S) its dimensions other than M and K, e.g. "S=2560".
func nText(n int, d kernel.Dims) string {
	if _, ok := d["N"]; ok || len(d) == 0 {
		return strconv.Itoa(n)
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(d)) {
		if k != "M" && k != "K" {
			parts = append(parts, fmt.Sprintf("%s=%d", k, d[k]))
		}
	}
	if len(parts) == 0 {
		return strconv.Itoa(n)
	}
	return strings.Join(parts, " ")
}
