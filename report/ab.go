package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/tilefit/tilefit/result"
	"github.com/tilefit/tilefit/stats"
)

// abMarkdown writes one direction of an A/B comparison: the cells, the
// verdicts, the production-weighted totals, the A/A calibration and the
// warnings.
func abMarkdown(w io.Writer, r result.ABReport) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "# tilefit ab\n\nA = `%s`, B = `%s`", r.A, r.B)
	if r.AA {
		fmt.Fprint(bw, " (the same on both sides: A/A calibration)")
	}
	ms := make([]string, len(r.Ms))
	for i, m := range r.Ms {
		ms[i] = fmt.Sprint(m)
	}
	fmt.Fprintf(bw, ".\nBackend %s, device %s, family %s, workload %s (M %s). Paired rounds, order ABBA by round, rotating outputs, the same inputs for A and B; ",
		r.Backend, r.Device, r.Family, r.Workload, strings.Join(ms, ", "))
	if r.Rounds == result.RoundsAuto {
		fmt.Fprintf(bw, "adaptive rounds (docs/rounds.md): rounds are added until the signed-rank interval of the ratio B/A (%.2f%% at each look, %.0f%% over all looks) lies below %.3f (`faster`), above %.3f (`slower`) or inside the band (`tie`), or the budget runs out (`undecided`).\n\n",
			100*r.LookConfidence, 100*r.Confidence, 1-r.MinGain, 1+r.MaxRegress)
	} else {
		fmt.Fprintf(bw, "%s rounds; %.0f%% signed-rank interval of the ratio B/A; verdict `faster` when it lies below %.3f, `slower` above %.3f, else `tie`.\n\n",
			r.Rounds, 100*r.Confidence, 1-r.MinGain, 1+r.MaxRegress)
	}
	fmt.Fprintln(bw, "| shape | M | tile A | tile B | A µs | B µs | ratio B/A | interval | brackets | verdict | rounds | bitwise | notes |")
	fmt.Fprintln(bw, "|---|---:|---|---|---:|---:|---:|---|---|---|---:|---|---|")
	for _, c := range r.Cells {
		notes := strings.Join(append(slices.Clone(c.Notes), c.Warnings...), "; ")
		if c.Status != "ok" {
			notes = strings.Trim(c.Status+"; "+notes, "; ")
			fmt.Fprintf(bw, "| %s | %d | `%s` | `%s` | — | — | — | — | — | — | — | — | %s |\n", c.Shape, c.M, c.TileA, c.TileB, mdCell(notes))
			continue
		}
		bits := "yes"
		if !c.Bitwise {
			bits = "**no**"
		}
		fmt.Fprintf(bw, "| %s | %d | `%s` | `%s` | %s | %s | %.3f | [%.3f, %.3f] | [%.3f, %.3f] | %s | %d | %s | %s |\n",
			c.Shape, c.M, c.TileA, c.TileB, fmtUS(c.AUS), fmtUS(c.BUS), c.Ratio, c.Lo, c.Hi, c.BracketLo, c.BracketHi,
			c.Verdict, c.Rounds, bits, mdCell(notes))
	}
	abVerdicts(bw, r)
	if len(r.Totals) > 0 {
		fmt.Fprint(bw, "\n## Production-weighted totals (Σ calls × µs per chunk)\n\n")
		fmt.Fprintln(bw, "| tile | M | cells | A µs/chunk | B µs/chunk | ratio B/A | interval | verdict |")
		fmt.Fprintln(bw, "|---|---:|---:|---:|---:|---:|---|---|")
		for _, t := range r.Totals {
			g, m := t.Group, fmt.Sprint(t.M)
			if g == "" {
				g = "as specified"
			} else {
				g = "`" + g + "`"
			}
			if t.M == 0 {
				m = "all"
			}
			fmt.Fprintf(bw, "| %s | %s | %d | %s | %s | %.3f | [%.3f, %.3f] | %s |\n", g, m, t.Cells, fmtUS(t.A), fmtUS(t.B),
				t.Ratio, t.Lo, t.Hi, t.Verdict)
		}
	}
	if n := r.Noise; n != nil {
		fmt.Fprintf(bw, "\n## A/A calibration: the noise floor\n\nOver %d cells the interval half-width is %.2f%% (median) and %.2f%% at most: differences smaller than that are invisible on this machine at these settings. Verdicts `faster` or `slower` (all false on A/A): %d of %d",
			n.Cells, 100*n.MedianHalfWidth, 100*n.MaxHalfWidth, n.FalseVerdicts, n.Cells)
		if r.Rounds == result.RoundsAuto {
			fmt.Fprintf(bw, "; `undecided`: %d", n.Undecided)
		}
		fmt.Fprintf(bw, ". Cells whose two outputs differed: %d.\n", n.NotBitwise)
	}
	if len(r.Warnings) > 0 {
		fmt.Fprintln(bw)
		for _, w := range r.Warnings {
			fmt.Fprintf(bw, "Warning: %s.\n", w)
		}
	}
	return bw.Flush()
}

// abVerdicts writes the count of verdicts, the cells that ended
// undecided and, with several cells, how many verdicts to expect false.
func abVerdicts(w io.Writer, r result.ABReport) {
	v := r.Verdicts
	if v.Compared == 0 {
		return
	}
	fmt.Fprintf(w, "\nVerdicts of %d %s: %d faster, %d slower, %d tie", v.Compared, plural(v.Compared, "cell", "cells"), v.Faster, v.Slower, v.Tie)
	if r.Rounds == result.RoundsAuto {
		fmt.Fprintf(w, ", %d undecided", v.Undecided)
	}
	fmt.Fprint(w, ".")
	if v.Undecided > 0 {
		var cut, spent []string
		for _, c := range r.Cells {
			if c.Verdict == stats.Undecided {
				name := fmt.Sprintf("%s M=%d %s (%d rounds)", c.Shape, c.M, c.Tiles(), c.Rounds)
				if c.LooksSpent {
					spent = append(spent, name)
				} else {
					cut = append(cut, name)
				}
			}
		}
		if len(cut) > 0 {
			fmt.Fprintf(w, " Undecided because the budget ran out (more rounds, or a larger --budget, could decide them): %s.", strings.Join(cut, ", "))
		}
		if len(spent) > 0 {
			fmt.Fprintf(w, " Undecided with the rule's looks spent (the difference sits on an edge of the ±%g%% band; a larger --budget cannot decide it): %s.",
				100*r.MaxRegress, strings.Join(spent, ", "))
		}
	}
	if v.Compared > 1 {
		fmt.Fprintf(w, " At %.0f%% confidence each cell's verdict is false with probability at most %.0f%%: up to %.1f of these %d verdicts are expected to be false by chance alone.",
			100*r.Confidence, 100*(1-r.Confidence), v.ExpectedFalse, v.Compared)
	}
	fmt.Fprintln(w)
}

// fmtUS formats µs with three or four significant digits.
func fmtUS(x float64) string {
	switch {
	case x >= 100:
		return fmt.Sprintf("%.0f", x)
	case x >= 10:
		return fmt.Sprintf("%.1f", x)
	}
	return fmt.Sprintf("%.2f", x)
}

// ABJSON writes an A/B comparison as indented JSON (tilefit ab --format
// json; result.ABReport's fields).
func ABJSON(w io.Writer, r result.ABReport) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// ABMarkdown writes the Markdown of an A/B comparison (tilefit ab): with a
// reversed run (--reverse) the forward report, the reversed one, and the
// comparison of the two.
func ABMarkdown(w io.Writer, r result.ABReport) error {
	if r.Reversed == nil {
		return abMarkdown(w, r)
	}
	if err := abMarkdown(w, r); err != nil {
		return err
	}
	var rev bytes.Buffer
	if err := abMarkdown(&rev, *r.Reversed); err != nil {
		return err
	}
	text := strings.Replace(rev.String(), "# tilefit ab\n", "# tilefit ab, reversed: the same comparison with the sides swapped\n", 1)
	text = strings.ReplaceAll(text, "\n## ", "\n## Reversed: ")
	fmt.Fprintf(w, "\n%s", text)
	return abAgreement(w, r.Agreement)
}

// abAgreement writes the forward-against-reversed table and summary.
func abAgreement(w io.Writer, ag []result.ABAgreement) error {
	var b strings.Builder
	fmt.Fprint(&b, "\n# Forward against reversed\n\nEvery cell as B/A of the comparison asked for: the reversed run's ratio A/B inverted, its verdict mirrored. A verdict that holds with the sides swapped does not come from the side's position in the rounds.\n\n")
	fmt.Fprintln(&b, "| shape | M | tile A | tile B | B/A forward | interval | B/A reversed | interval | verdicts | agree |")
	fmt.Fprintln(&b, "|---|---:|---|---|---:|---|---:|---|---|---|")
	agree, compared := 0, 0
	var diffs []float64
	for _, g := range ag {
		if g.Note != "" {
			fmt.Fprintf(&b, "| %s | %d | `%s` | `%s` | — | — | — | — | — | %s |\n", g.Shape, g.M, g.TileA, g.TileB, mdCell(g.Note))
			continue
		}
		compared++
		yes := "**no**"
		if g.Agree {
			yes, agree = "yes", agree+1
		}
		if g.Ratio > 0 && g.ReversedRatio > 0 {
			d := g.ReversedRatio/g.Ratio - 1
			if d < 0 {
				d = -d
			}
			diffs = append(diffs, d)
		}
		fmt.Fprintf(&b, "| %s | %d | `%s` | `%s` | %.3f | [%.3f, %.3f] | %.3f | [%.3f, %.3f] | %s / %s | %s |\n", g.Shape, g.M, g.TileA, g.TileB,
			g.Ratio, g.Lo, g.Hi, g.ReversedRatio, g.ReversedLo, g.ReversedHi, g.Verdict, g.ReversedVerdict, yes)
	}
	fmt.Fprintf(&b, "\n%d of %d compared cells give the same verdict both ways", agree, compared)
	if len(diffs) > 0 {
		fmt.Fprintf(&b, "; the two ratios differ by %.2f%% (median) and %.2f%% at most", 100*stats.Median(diffs), 100*slices.Max(diffs))
	}
	fmt.Fprintln(&b, ".")
	_, err := io.WriteString(w, b.String())
	return err
}
