package report

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/tilefit/tilefit/result"
	"github.com/tilefit/tilefit/stats"
)

// cellBlocks is the per-cell table: the reference, the three fastest OK
// tiles with their paired comparison to the reference, the vendors, the
// best tile's GFLOP/s, the SM clocks the cell ran at, and short notes.
func cellBlocks(sec Section) []block {
	multi := len(sec.Classes) > 1
	dag := "† not bitwise equal to the reference"
	if multi {
		dag = "† not bitwise equal to its numerics class's reference (the reference tile for its class; for another class, the class's first verified tile in the cell)"
	}
	bs := []block{heading(3, "", "Per cell")}
	bs = append(bs, para("note", "µs/call is the median over rounds; ×reference is the paired ratio to the reference tile (the median per-round ratio, below 1 is faster) with its interval and verdict by the sequential rule (docs/rounds.md; tie only when the interval lies inside the ±1%% band, undecided when it straddles an edge); %s.", dag))
	clocks := sec.Power != nil && sec.Power.Cells > 0
	t := &table{ID: "cells-" + sec.Key}
	for _, h := range []column{{"shape", false}, {"N", true}, {"K", true}, {"M", true}, {"calls", true},
		{"reference (µs)", true}, {"fastest", false}, {"fastest (µs)", true}, {"fastest ×reference", true}, {"2nd", false}, {"3rd", false}} {
		t.Head = append(t.Head, h)
	}
	for _, v := range sec.Vendors {
		t.head(v+" (µs)", true)
		t.head(v+" ×reference", true)
	}
	t.head("best GFLOP/s", true)
	if clocks {
		t.head("SM MHz", true)
	}
	t.head("notes", false)
	early := false
	for i := range sec.Cells {
		c := &sec.Cells[i]
		r := []tcell{plainC(c.Shape), nC(c), intC(c.K), intC(c.M), intC(c.Calls), refC(sec, c)}
		if best := c.find(c.Best, false); best != nil {
			bc := codeC(best.Tile)
			bc.Text += dagger(c, best) + leftEarly(best)
			early = early || leftEarly(best) != ""
			vs := outcomeC(best.VsReference)
			if best.Tile == c.Reference {
				vs = tcell{Text: "the reference", Sort: "1", Num: true}
			}
			r = append(r, bc, numC(best.RankedUs, 2), vs)
		} else {
			r = append(r, dashC, dashC, dashC)
		}
		for j := 1; j < 3; j++ {
			if j >= len(c.Fastest) {
				r = append(r, tcell{})
				continue
			}
			cand := c.find(c.Fastest[j], false)
			early = early || leftEarly(cand) != ""
			verdict := ""
			if cand.VsReference != nil {
				verdict = " " + cand.Verdict
			}
			r = append(r, tcell{Text: mono(cand.Tile) + " " + fixed(cand.RankedUs, 2) + " (" + fixed(cand.RatioToReference, 3) + verdict + ")" + dagger(c, cand) + leftEarly(cand),
				Sort: strconv.FormatFloat(float64(cand.RankedUs), 'g', 10, 64), Num: true})
		}
		for _, v := range sec.Vendors {
			vc := c.find(v, false)
			switch {
			case vc == nil:
				r = append(r, dashC, dashC)
			case vc.Status != result.OK:
				r = append(r, tcell{Text: string(vc.Status), Num: true, Bad: true}, dashC)
			default:
				r = append(r, numC(vc.MedianUs, 2), outcomeC(vc.VsReference))
			}
		}
		r = append(r, numC(c.BestGFLOPs, 1))
		if clocks {
			r = append(r, clockC(c.Clocks))
		}
		r = append(r, plainC(cellNotes(c)))
		t.Rows = append(t.Rows, r)
	}
	bs = append(bs, block{Kind: bTable, Table: t})
	if early {
		bs = append(bs, para("note", "‡ left the rounds early (its comparison decided, or the race): the reference's median × its paired ratio."))
	}
	if line := raceLine(sec); line != "" {
		bs = append(bs, para("note", "%s", line))
	}
	return bs
}

// raceLine says how many tiles left the race (confirmed slower than their
// cell's best tile), in how many cells and after how many pairs; "" when
// none did.
func raceLine(sec Section) string {
	raced, cells := map[int]int{}, 0
	for _, c := range sec.Cells {
		inCell := false
		for _, cand := range c.Candidates {
			if cand.LeftAt > 0 {
				raced[cand.LeftAt]++
				inCell = true
			}
		}
		if inCell {
			cells++
		}
	}
	if len(raced) == 0 {
		return ""
	}
	var at []string
	total := 0
	for _, n := range slices.Sorted(maps.Keys(raced)) {
		at = append(at, fmt.Sprintf("%d after %d pairs", raced[n], n))
		total += raced[n]
	}
	return fmt.Sprintf("Left the race: %d %s in %d %s, each confirmed slower than its cell's best tile by more than the race's margin (%s).",
		total, plural(total, "tile", "tiles"), cells, plural(cells, "cell", "cells"), strings.Join(at, ", "))
}

// nC is a cell's N column (nText).
func nC(c *Cell) tcell {
	s := nText(c.N, c.Dims)
	return tcell{Text: s, Sort: strconv.Itoa(c.N), Num: true}
}

// refC is a cell's reference column: its time, or its status when it
// failed; named when it is not the section's reference.
func refC(sec Section, c *Cell) tcell {
	ref := numC(c.ReferenceUs, 2)
	if rc := c.find(c.Reference, false); rc != nil && rc.Status != result.OK {
		ref = tcell{Text: string(rc.Status), Num: true, Bad: true}
	}
	if c.Reference != sec.Reference {
		ref.Text = mono(c.Reference) + " " + ref.Text
	}
	return ref
}

// clockC is a cell's SM clock range.
func clockC(cl *CellClocks) tcell {
	if cl == nil {
		return dashC
	}
	text := strconv.Itoa(cl.MinMHz)
	if cl.MaxMHz != cl.MinMHz {
		text += "–" + strconv.Itoa(cl.MaxMHz)
	}
	if cl.PowerLimited {
		text += " (power-limited)"
	}
	return tcell{Text: text, Sort: strconv.Itoa(cl.MinMHz), Num: true}
}

// cellNotes are a cell's short notes: counts, never lists.
func cellNotes(c *Cell) string {
	var notes []string
	compared, undecided, unpaired := 0, len(c.Undecided), 0
	for _, cand := range c.Candidates {
		if cand.VsReference != nil {
			compared++
		}
		if cand.Unpaired {
			unpaired++
		}
	}
	if undecided > 0 {
		notes = append(notes, fmt.Sprintf("%d of %d undecided", undecided, compared))
	}
	if unpaired > 0 {
		notes = append(notes, fmt.Sprintf("%d from another run (unpaired)", unpaired))
	}
	if n := failedCount(c); n > 0 {
		notes = append(notes, fmt.Sprintf("%d failed", n))
	}
	if c.AA != nil {
		notes = append(notes, "A/A "+fixed(c.AA.Median, 3))
	}
	return strings.Join(notes, "; ")
}

// decisionBlocks is the sequential rule's verdicts against the reference,
// the expected number of false ones, and the cells that ended undecided.
func decisionBlocks(sec Section) []block {
	d := sec.Decisions
	if d.Comparisons == 0 {
		return nil
	}
	bs := []block{heading(3, "decisions-"+sec.Key, "Decisions against the reference")}
	bs = append(bs, block{Kind: bPara, ID: "decision-counts-" + sec.Key, Text: fmt.Sprintf(
		"Each OK tile against the reference tile of its run, by the sequential rule (docs/rounds.md): %d %s — %d faster, %d slower, %d tie (inside the ±1%% band), **%d undecided**. "+
			"At %.0f%% confidence each comparison ends in a false verdict with probability at most %.0f%%, so up to %.1f of these verdicts are expected to be false.",
		d.Comparisons, plural(d.Comparisons, "comparison", "comparisons"), d.Faster, d.Slower, d.Tie, d.Undecided,
		100*d.Confidence, 100*(1-d.Confidence), d.ExpectedFalse)})
	t := &table{ID: "undecided-" + sec.Key}
	t.head("shape", false)
	t.head("M", true)
	t.head("rounds", true)
	t.head("undecided", true)
	t.head("tiles undecided against the reference", false)
	const maxRows = 20
	rows := 0
	for _, c := range sec.Cells {
		if len(c.Undecided) == 0 {
			continue
		}
		rows++
		if rows > maxRows {
			continue
		}
		rounds := 0
		for _, r := range c.Runs {
			rounds = max(rounds, r.Rounds)
		}
		tiles := c.Undecided
		more := ""
		if len(tiles) > 3 {
			tiles, more = tiles[:3], fmt.Sprintf(" and %d more", len(c.Undecided)-3)
		}
		names := make([]string, len(tiles))
		for i, n := range tiles {
			names[i] = mono(n)
		}
		t.Rows = append(t.Rows, []tcell{plainC(c.Shape), intC(c.M), intC(rounds), intC(len(c.Undecided)), textC(strings.Join(names, ", ") + more)})
	}
	if rows > 0 {
		bs = append(bs, para("note", "Undecided when the rounds ended (fixed rounds, or the --budget ran out): more rounds could decide these — `tilefit select` confirms its picks with adaptive rounds."))
		bs = append(bs, block{Kind: bTable, Table: t})
		if rows > maxRows {
			bs = append(bs, para("note", "… and %d more cells (every one in the JSON report's `undecided`).", rows-maxRows))
		}
	}
	return bs
}

// invarianceBlocks is the batch-invariance table of a section (none when
// no cell has row hashes: the summary line says so).
func invarianceBlocks(sec Section) []block {
	inv := sec.Invariance
	if !inv.recorded() {
		return nil
	}
	bs := []block{heading(3, "invariance-"+sec.Key, "Batch invariance")}
	bs = append(bs, para("note", "The inputs of a smaller M are the first rows of the largest M's (weights identical); row r of every output at M=m is compared with row r at the largest M of the shape with rows, for r < m. Rows changed / rows compared, added over the smaller M; a tile whose rows change fails parity, a vendor is only reported."))
	t := &table{ID: "invariance-table-" + sec.Key}
	t.head("shape", false)
	t.head("M", false)
	t.head("tiles", false)
	for _, v := range sec.Vendors {
		t.head(v, false)
	}
	for _, s := range inv.Shapes {
		ms := make([]string, len(s.Ms))
		for i, m := range s.Ms {
			ms[i] = strconv.Itoa(m)
		}
		r := []tcell{plainC(s.Shape), textC(strings.Join(ms, ", ")), textC(tilesText(s))}
		for _, v := range sec.Vendors {
			r = append(r, plainC(vendorText(s, v)))
		}
		t.Rows = append(t.Rows, r)
	}
	return append(bs, block{Kind: bTable, Table: t})
}

// aaBlocks is the A/A noise floor: the reference tile's twin against it,
// round by round.
func aaBlocks(sec Section) []block {
	t := &table{ID: "aa-" + sec.Key}
	for _, h := range []column{{"shape", false}, {"M", true}, {"pairs", true}, {"median ratio", true}, {"min", true}, {"max", true}} {
		t.Head = append(t.Head, h)
	}
	for _, c := range sec.Cells {
		if c.AA != nil {
			t.Rows = append(t.Rows, []tcell{plainC(c.Shape), intC(c.M), intC(c.AA.Pairs), numC(c.AA.Median, 3), numC(c.AA.Min, 3), numC(c.AA.Max, 3)})
		}
	}
	if len(t.Rows) == 0 {
		return nil
	}
	return []block{heading(3, "", "A/A noise floor"),
		para("note", "The reference tile timed twice in the same rounds; ratio = twin ÷ reference per round."),
		{Kind: bTable, Table: t}}
}

// resourceBlocks is the per-tile kernel resources table, when the backend
// reported any.
func resourceBlocks(sec Section) []block {
	rows := resourceRows(sec)
	if len(rows) == 0 {
		return nil
	}
	t := &table{ID: "resources-" + sec.Key}
	for _, h := range []column{{"tile", false}, {"regs/thread", true}, {"local B/thread", true}, {"smem B/block", true},
		{"cells", true}, {"fastest in", true}, {"×reference (geomean)", true}} {
		t.Head = append(t.Head, h)
	}
	for _, r := range rows {
		t.Rows = append(t.Rows, []tcell{codeC(r.Tile), intC(r.Regs), intC(r.Local), intC(r.Shared), intC(r.Cells), intC(r.Fastest), numC(r.Geomean, 3)})
	}
	return []block{heading(3, "", "Kernel resources"),
		para("note", "What the backend reports of each compiled tile, beside its times: registers and local (spill) bytes per thread, shared memory per block; ×reference is the geometric mean of its paired ratio to the reference over its cells."),
		{Kind: bTable, Table: t}}
}

// candidatesTable lists every candidate of every cell with its times,
// comparison and resources (HTML: behind a summary).
func candidatesTable(sec Section) *table {
	t := &table{ID: "candidates-" + sec.Key}
	for _, h := range []column{{"shape", false}, {"M", true}, {"tile", false}, {"status", false}, {"bitwise", false},
		{"median µs", true}, {"min µs", true}, {"max µs", true}, {"samples", true}, {"×reference", true}, {"interval", false}, {"verdict", false},
		{"GFLOP/s", true}, {"GB/s", true}, {"regs/thread", true}, {"local B/thread", true}, {"smem B/block", true},
		{"max error / bound", true}, {"compile s", true}} {
		t.Head = append(t.Head, h)
	}
	for i := range sec.Cells {
		c := &sec.Cells[i]
		for _, cand := range c.Candidates {
			tile := codeC(cand.Tile)
			switch {
			case cand.AA:
				tile.Text += " (A/A twin)"
			case cand.Vendor:
				tile.Text += " (vendor)"
			}
			st := textC(string(cand.Status))
			st.Bad = cand.Status != result.OK
			bitwise, maxErr := "yes", numC(cand.MaxErr, 3)
			switch {
			case cand.Status != result.OK:
				bitwise, maxErr = "—", dashC // not checked, or failed the check
			case !cand.Bitwise:
				bitwise = "no"
			}
			res := func(k string) tcell {
				if v, ok := cand.Resources[k]; ok {
					return intC(v)
				}
				return dashC
			}
			interval, verdict := textC(""), textC(cand.Verdict)
			if o := cand.VsReference; o != nil {
				interval = textC(fmt.Sprintf("[%.3f, %.3f]", o.Lo, o.Hi))
				if cand.Unpaired {
					verdict.Text += " (unpaired)"
				}
			}
			t.Rows = append(t.Rows, []tcell{
				plainC(c.Shape), intC(c.M), tile, st, textC(bitwise),
				numC(cand.MedianUs, 2), numC(cand.MinUs, 2), numC(cand.MaxUs, 2), intC(cand.Samples),
				numC(cand.RatioToReference, 3), interval, verdict, numC(cand.GFLOPs, 1), numC(gbps(c, cand.MedianUs), 1),
				res(result.ResRegs), res(result.ResLocalBytes), res(result.ResSharedBytes),
				maxErr, numC(cand.CompileSeconds, 2),
			})
		}
	}
	return t
}

// gbps is the bytes moved per second of a call of c taking us µs, in GB/s.
func gbps(c *Cell, us num) num {
	if c.Bytes <= 0 || !us.valid() || us <= 0 {
		return none
	}
	return num(c.Bytes / (float64(us) * 1e3))
}

// capitalize upper-cases the first letter of s.
func capitalize(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 {
		return s
	}
	return string(unicode.ToUpper(r)) + s[n:]
}

// verdictOf is an Outcome's verdict ("" for none).
func verdictOf(o *stats.Outcome) string {
	if o == nil {
		return ""
	}
	return string(o.Verdict)
}
