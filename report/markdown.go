package report

import (
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tilefit/tilefit/kernel"
	"github.com/tilefit/tilefit/result"
	"github.com/tilefit/tilefit/stats"
)

// Markdown writes the report as Markdown: per provenance a header (backend,
// device, arch, compiler, flags, driver, family, source hash, output type,
// run facts), the parity summary, the per-chunk totals at every M, the
// per-cell table (reference, the three fastest OK tiles with their time
// ratio to the reference, the vendor baselines, the best tile's GFLOP/s),
// the A/A noise floor, the kernel resources (where the backend reports
// them), the failures and links to the figures of in.Plots. Tables are
// padded so that they read in a terminal.
func Markdown(w io.Writer, in Input) error {
	doc := build(in)
	var bw strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&bw, format, args...) }

	p("# %s\n\n", doc.Title)
	runs := 0
	for _, sec := range doc.Provenances {
		runs += sec.Runs
	}
	p("Generated %s from %d stored cell %s.\n", doc.Generated.Format("2006-01-02 15:04:05 UTC"), runs, plural(runs, "run", "runs"))
	if len(doc.Provenances) == 0 {
		p("\nNo results.\n")
	}
	for _, sec := range doc.Provenances {
		markdownSection(p, sec, doc.Generated)
		markdownPlots(p, sec, in.Plots)
	}
	if _, err := io.WriteString(w, alignTables(bw.String())); err != nil {
		return fmt.Errorf("write Markdown report: %w", err)
	}
	return nil
}

func markdownSection(p func(string, ...any), sec Section, generated time.Time) {
	pv := sec.Provenance
	p("\n## %s · %s · %s\n\n", cellText(pv.Backend), cellText(pv.Family), cellText(pv.Device))
	out := "fp32"
	if pv.OutF16() {
		out = "fp16"
	}
	p("| | |\n|---|---|\n")
	row := func(k, v string) { p("| %s | %s |\n", k, v) }
	row("provenance key", code(sec.Key))
	row("backend", orDash(pv.Backend))
	row("device", orDash(pv.Device))
	row("arch", orDash(pv.Arch))
	row("compiler", orDash(pv.Compiler))
	row("flags", code(pv.Flags))
	row("driver", orDash(pv.Driver))
	row("family", orDash(pv.Family))
	row("source hash", code(short(pv.SourceHash, 12)))
	if pv.Operator != "" && pv.Operator != "gemm_f16" {
		row("operator", code(pv.Operator))
		out = pv.Types
	}
	row("output", out)
	row("reference tile", code(sec.Reference))
	facts := rangeText(sec.Rounds, "round", "rounds") + " × " + rangeText(sec.Sets, "input set", "input sets")
	if sec.Dispatches != [2]int{} {
		facts += ", " + rangeText(sec.Dispatches, "dispatch", "dispatches") + " per sample"
	}
	row("run", facts)
	row("generated", generated.Format("2006-01-02 15:04:05 UTC"))
	row("measured", fmt.Sprintf("%s – %s; %d %s from %d stored %s",
		sec.Started.Format("2006-01-02 15:04:05"), sec.Finished.Format("2006-01-02 15:04:05 UTC"),
		len(sec.Cells), plural(len(sec.Cells), "cell", "cells"), sec.Runs, plural(sec.Runs, "run", "runs")))
	if len(sec.Devices) > 0 {
		row("measured on", devicesText(sec.Devices))
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
		row("device facts", cellText(strings.Join(parts, ", "))+" (measured "+d.Measured.Format("2006-01-02 15:04 UTC")+")")
	}

	p("\n**%s**\n", cellText(sec.Parity.Summary))
	if sec.Parity.Vendors != "" {
		p("\nVendors %s.\n", sec.Parity.Vendors)
	}
	p("\n**%s**\n", cellText(sec.Invariance.Summary))

	// Per chunk.
	multi := len(sec.Classes) > 1
	p("\n### Per chunk\n\n")
	p("ms/chunk = Σ calls × µs/call ÷ 1000 over the chunk's %d %s (%s); best = the fastest OK tile of each cell. ",
		len(sec.Chunk), plural(len(sec.Chunk), "shape", "shapes"), cellText(strings.Join(sec.Chunk, ", ")))
	p("Each column adds per cell the reference's median × the column's median ratio to the reference, paired round by round (stats.WeightedTotal: drift between rounds cancels); a ratio comes with its 95%% bootstrap interval and verdict.")
	if multi {
		p(" One class per shape = the fastest tile of the shape's numerics class at every M (the batch-invariant choice, below).")
	}
	p("\n\n| M | reference %s | best per cell |", code(sec.Reference))
	if multi {
		p(" one class per shape |")
	}
	for _, v := range sec.Vendors {
		p(" %s |", cellText(v))
	}
	p(" best/reference |")
	if multi {
		p(" one class/reference |")
	}
	for _, v := range sec.Vendors {
		p(" %s/best |", cellText(v))
		if multi {
			p(" %s/one class |", cellText(v))
		}
	}
	extra := 0
	if multi {
		extra = 2 + len(sec.Vendors)
	}
	p("\n|---:|---:|---:|%s---:|%s\n", strings.Repeat("---:|", len(sec.Vendors)), strings.Repeat("---:|", len(sec.Vendors)+extra))
	var missing, warnings []string
	sumText := func(t Total, col string, x num) string {
		if t.partial[col] && x.valid() {
			return fixed(x, 3) + "*"
		}
		return fixed(x, 3)
	}
	verdictText := func(x num, o *stats.Outcome) string {
		if o == nil {
			return fixed(x, 3)
		}
		return ratioText(o) + " " + string(o.Verdict)
	}
	for _, t := range sec.Totals {
		p("| %d | %s | %s |", t.M, sumText(t, "reference", t.ReferenceMs), sumText(t, "best", t.BestMs))
		if multi {
			p(" %s |", sumText(t, "oneclass", t.OneClassMs))
		}
		for _, v := range sec.Vendors {
			p(" %s |", sumText(t, v, t.VendorMs[v]))
		}
		p(" %s |", verdictText(t.BestOverReference, t.BestVsReference))
		if multi {
			p(" %s |", verdictText(none, t.OneClassOverReference))
		}
		for _, v := range sec.Vendors {
			p(" %s |", verdictText(t.VendorOverBest[v], t.VendorVsBest[v]))
			if multi {
				p(" %s |", verdictText(none, t.VendorVsOneClass[v]))
			}
		}
		p("\n")
		if len(t.Missing) > 0 {
			missing = append(missing, fmt.Sprintf("M=%d lacks %s", t.M, strings.Join(t.Missing, ", ")))
		}
		for _, w := range t.Warnings {
			warnings = append(warnings, fmt.Sprintf("M=%d: %s", t.M, w))
		}
	}
	if len(missing) > 0 {
		p("\n\\* partial sum (a ratio only where both sums cover the same shapes): %s.\n", cellText(strings.Join(missing, "; ")))
	}
	if len(warnings) > 0 {
		p("\nTotals: %s.\n", cellText(strings.Join(warnings, "; ")))
	}
	if multi {
		markdownClasses(p, sec)
	}
	var unlisted []string
	for _, c := range sec.Cells {
		if !c.InChunk && !slices.Contains(unlisted, c.Shape) {
			unlisted = append(unlisted, c.Shape)
		}
	}
	if len(unlisted) > 0 {
		p("\nNot in the workload, so not in the totals: %s.\n", cellText(strings.Join(unlisted, ", ")))
	}

	// Per cell.
	p("\n### Per cell\n\n")
	if multi {
		p("µs/call is the median over rounds; (×) is the time ratio to the reference tile, below 1 is faster; † not bitwise equal to its numerics class's reference (the reference tile for its class; for another class, the class's first verified tile in the cell).\n\n")
	} else {
		p("µs/call is the median over rounds; (×) is the time ratio to the reference tile, below 1 is faster; † not bitwise equal to the reference.\n\n")
	}
	p("| shape | N | K | M | calls | reference | fastest | 2nd | 3rd |")
	for _, v := range sec.Vendors {
		p(" %s |", cellText(v))
	}
	p(" best GFLOP/s |\n|---|---:|---:|---:|---:|---:|---|---|---|%s---:|\n", strings.Repeat("---:|", len(sec.Vendors)))
	for i := range sec.Cells {
		c := &sec.Cells[i]
		ref := "—"
		if rc := c.find(c.Reference, false); rc != nil {
			if rc.Status == result.OK {
				ref = fixed(rc.MedianUs, 2)
			} else {
				ref = string(rc.Status)
			}
		}
		if c.Reference != sec.Reference {
			ref = code(c.Reference) + " " + ref
		}
		p("| %s | %s | %d | %d | %d | %s |", cellText(c.Shape), nText(c.N, c.Dims), c.K, c.M, c.Calls, ref)
		for j := 0; j < 3; j++ {
			if j >= len(c.Fastest) {
				p(" |")
				continue
			}
			cand := c.find(c.Fastest[j], false)
			p(" %s %s (%s)%s%s |", code(cand.Tile), fixed(cand.RankedUs, 2), fixed(cand.RatioToReference, 3), dagger(c, cand), leftEarly(cand))
		}
		for _, v := range sec.Vendors {
			vc := c.find(v, false)
			switch {
			case vc == nil:
				p(" — |")
			case vc.Status != result.OK:
				p(" %s |", vc.Status)
			default:
				p(" %s (%s) |", fixed(vc.MedianUs, 2), fixed(vc.RatioToReference, 3))
			}
		}
		p(" %s |\n", fixed(c.BestGFLOPs, 1))
	}
	markdownDecisions(p, sec)

	markdownInvariance(p, sec)

	// A/A.
	var aa []*Cell
	for i := range sec.Cells {
		if sec.Cells[i].AA != nil {
			aa = append(aa, &sec.Cells[i])
		}
	}
	if len(aa) > 0 {
		p("\n### A/A noise floor\n\n")
		p("The reference tile timed twice in the same rounds; ratio = twin ÷ reference per round.\n\n")
		p("| shape | M | pairs | median ratio | min..max |\n|---|---:|---:|---:|---|\n")
		for _, c := range aa {
			p("| %s | %d | %d | %s | %s..%s |\n", cellText(c.Shape), c.M, c.AA.Pairs,
				fixed(c.AA.Median, 3), fixed(c.AA.Min, 3), fixed(c.AA.Max, 3))
		}
	}

	markdownResources(p, sec)

	// Failures.
	p("\n### Failures\n\n")
	if len(sec.Failures) == 0 {
		p("None.\n")
		return
	}
	p("| shape | M | tile | status | detail |\n|---|---:|---|---|---|\n")
	for _, f := range sec.Failures {
		p("| %s | %d | %s | %s | %s |\n", cellText(f.Shape), f.M, code(f.Tile), f.Status, cellText(firstLine(f.Detail, 100)))
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

// markdownDecisions writes the sequential rule's verdicts against the
// reference, the expected number of false ones, and the cells that ended
// undecided.
func markdownDecisions(p func(string, ...any), sec Section) {
	d := sec.Decisions
	if d.Comparisons == 0 {
		return
	}
	early, raced, racedCells := false, map[int]int{}, 0
	for _, c := range sec.Cells {
		inCell := false
		for j := range c.Candidates {
			early = early || leftEarly(&c.Candidates[j]) != ""
			if n := c.Candidates[j].LeftAt; n > 0 {
				raced[n]++
				inCell = true
			}
		}
		if inCell {
			racedCells++
		}
	}
	if early {
		p("\n‡ left the rounds early (its comparison decided, or the race): the reference's median × its paired ratio.\n")
	}
	if len(raced) > 0 {
		var at []string
		total := 0
		for _, n := range slices.Sorted(maps.Keys(raced)) {
			at = append(at, fmt.Sprintf("%d after %d pairs", raced[n], n))
			total += raced[n]
		}
		p("\nLeft the race: %d %s in %d %s, each confirmed slower than its cell's best tile by more than the race's margin (%s).\n",
			total, plural(total, "tile", "tiles"), racedCells, plural(racedCells, "cell", "cells"), strings.Join(at, ", "))
	}
	p("\n### Decisions against the reference\n\n")
	p("Each OK tile against the reference tile of its run, by the sequential rule (docs/rounds.md): %d %s — %d faster, %d slower, %d tie (within the ±1%% band), %d undecided. ",
		d.Comparisons, plural(d.Comparisons, "comparison", "comparisons"), d.Faster, d.Slower, d.Tie, d.Undecided)
	p("At %.0f%% confidence each comparison ends in a false verdict with probability at most %.0f%%, so up to %.1f of these verdicts are expected to be false.\n",
		100*d.Confidence, 100*(1-d.Confidence), d.ExpectedFalse)
	var rows []string
	for _, c := range sec.Cells {
		if len(c.Undecided) == 0 {
			continue
		}
		rounds := 0
		for _, r := range c.Runs {
			rounds = max(rounds, r.Rounds)
		}
		tiles := c.Undecided
		more := ""
		if len(tiles) > 6 {
			tiles, more = tiles[:6], fmt.Sprintf(" and %d more", len(c.Undecided)-6)
		}
		names := make([]string, len(tiles))
		for i, t := range tiles {
			names[i] = code(t)
		}
		rows = append(rows, fmt.Sprintf("| %s | %d | %d | %s%s |", cellText(c.Shape), c.M, rounds, strings.Join(names, ", "), more))
	}
	if len(rows) > 0 {
		p("\nUndecided when the rounds ended (the --budget ran out, or --rounds N fixed them): more rounds could decide these.\n\n")
		p("| shape | M | rounds | undecided against the reference |\n|---|---:|---:|---|\n")
		const maxRows = 20
		for i, r := range rows {
			if i == maxRows {
				p("\n… and %d more cells (every one in the JSON report's `undecided`).\n", len(rows)-maxRows)
				break
			}
			p("%s\n", r)
		}
	}
}

// dagger marks a candidate that is not bitwise equal to its numerics
// class's reference in cell c.
func dagger(c *Cell, cand *Candidate) string {
	if inClassBitwise(c, cand) {
		return ""
	}
	return " †"
}

// markdownClasses writes, for a provenance of several numerics classes,
// the classes, each shape's one class at every M with the weighted time of
// every class, and the chunk on each class's fastest tiles.
func markdownClasses(p func(string, ...any), sec Section) {
	p("\n### Numerics classes\n\n")
	p("Tiles of one class compute the same bits; parity is checked within each class (a tile of another class than the reference's is checked against its class's first verified tile in each cell). A selector that keeps every shape in one class at every M keeps outputs batch-invariant.\n\n")
	p("| class | tiles | families | checked against |\n|---|---:|---|---|\n")
	for _, cl := range sec.Classes {
		p("| %s | %d | %s | %s |\n", code(cl.Name), cl.Tiles, cellText(strings.Join(cl.Families, ", ")), cellText(cl.Reference))
	}
	if len(sec.ShapeClasses) > 0 {
		p("\nOne class per shape: the class whose fastest tiles (those whose rows kept their bits across M) give the shape the least Σ calls × µs over its M (what `tilefit select` starts from, and confirms).\n\n")
		p("| shape | N | K | class |")
		for _, cl := range sec.Classes {
			p(" %s µs |", code(cl.Name))
		}
		p("\n|---|---:|---:|---|%s\n", strings.Repeat("---:|", len(sec.Classes)))
		for _, sc := range sec.ShapeClasses {
			p("| %s | %d | %d | %s |", cellText(sc.Shape), sc.N, sc.K, code(sc.Class))
			for _, cl := range sec.Classes {
				p(" %s |", fixed(sc.Us[cl.Name], 1))
			}
			p("\n")
		}
	}
	p("\nms/chunk on each class's fastest tile per cell (\\* a class without a tile for some shape: partial).\n\n| M |")
	for _, cl := range sec.Classes {
		p(" %s |", code(cl.Name))
	}
	p("\n|---:|%s\n", strings.Repeat("---:|", len(sec.Classes)))
	for _, t := range sec.Totals {
		p("| %d |", t.M)
		for _, cl := range sec.Classes {
			x := t.ClassMs[cl.Name]
			mark := ""
			if t.partial["class "+cl.Name] && x.valid() {
				mark = "*"
			}
			p(" %s%s |", fixed(x, 3), mark)
		}
		p("\n")
	}
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

// firstDiffRE matches verify's "first difference at [r,c] (index i)".
var firstDiffRE = regexp.MustCompile(`first difference at \[[0-9]+,[0-9]+\] \(index [0-9]+\)`)

// cut shortens line to at most n runes, ending in "…" when it cuts.
func cut(line string, n int) string {
	r := []rune(line)
	if len(r) <= n {
		return line
	}
	return strings.TrimSpace(string(r[:n-1])) + "…"
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
