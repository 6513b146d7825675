package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"context"

	"github.com/tilefit/tilefit/kernel"
	"github.com/tilefit/tilefit/result"
	"github.com/tilefit/tilefit/stats"
	"github.com/tilefit/tilefit/tune"
)

// An abPass is one direction of an A/B comparison: its sides and the pairs
// of tiles to compare, cell by cell.
type abPass struct {
	a, b     abSpec
	pairs    []abPair
	reversed bool // the sides of the comparison asked for, swapped (--reverse)
}

// swapPairs returns pairs with the tiles of A and B swapped.
func swapPairs(pairs []abPair) []abPair {
	out := slices.Clone(pairs)
	for i := range out {
		out[i].tileA, out[i].tileB = out[i].tileB, out[i].tileA
	}
	return out
}

// measure compares every pair of r in paired rounds (tune.ABCell) and
// returns one row per pair, analysed by rowOf; each finished pair is a
// progress step. An interrupt ends it with exit code 130; a side that does
// not compile is an error naming it.
func (r abPass) measure(ctx context.Context, ex tune.Executor, fam *kernel.Family, opts tune.ABOptions,
	rowOf func(abPair, result.CellResult) ABRow, prog *progress, stderr io.Writer) ([]ABRow, error) {
	var rows []ABRow
	what := ""
	if r.reversed {
		what = "reversed: "
	}
	for i, p := range r.pairs {
		for _, side := range []struct {
			spec abSpec
			tile tileRef
		}{{r.a, p.tileA}, {r.b, p.tileB}} {
			if side.spec.kind == "source" && side.tile.fam != fam {
				return nil, fmt.Errorf("%s M=%d: a source: side edits family %s, but the tile here is %s", p.cell.Shape, p.cell.M, fam.Name, side.tile.name)
			}
		}
		res, err := tune.ABCell(ctx, ex, fam, p.cell, tune.ABSide{Label: "A", Source: r.a.source, Family: p.tileA.fam, Params: p.tileA.params},
			tune.ABSide{Label: "B", Source: r.b.source, Family: p.tileB.fam, Params: p.tileB.params}, opts)
		if err != nil {
			if ctx.Err() != nil {
				fmt.Fprintf(stderr, "\ninterrupted after %d of %d comparisons%s\n", i, len(r.pairs), map[bool]string{true: " of the reversed run"}[r.reversed])
				return nil, &exitError{code: ExitInterrupted, err: errors.New("")}
			}
			return nil, fmt.Errorf("%s M=%d: %w", p.cell.Shape, p.cell.M, err)
		}
		for j, side := range []abSpec{r.a, r.b} {
			if j < len(res.Candidates) && res.Candidates[j].Status == result.CompileFailed {
				return nil, fmt.Errorf("side %s (%s) does not compile at tile %s:\n%s", []string{"A", "B"}[j], side.raw,
					[]string{p.tileA.name, p.tileB.name}[j], res.Candidates[j].Detail)
			}
		}
		row := rowOf(p, res)
		rows = append(rows, row)
		prog.step(fmt.Sprintf("%s%s M=%d %s:", what, p.cell.Shape, p.cell.M, tilePair(row)), rowSummary(row), false)
	}
	return rows, nil
}

// An ABAgreement compares one cell of an A/B comparison with the same cell
// of the reversed run (--reverse), both read as B/A of the comparison asked
// for: the reversed run's ratio A/B is inverted, and its verdict mirrored
// (its "faster" — A faster than B — is "slower" for B/A).
type ABAgreement struct {
	Shape string `json:"shape"`
	M     int    `json:"m"`
	TileA string `json:"tile_a"`
	TileB string `json:"tile_b"`
	// Ratio, Lo, Hi are the forward run's B/A and interval; ReversedRatio,
	// ReversedLo, ReversedHi the reversed run's, as B/A.
	Ratio         float64 `json:"ratio,omitempty"`
	Lo            float64 `json:"lo,omitempty"`
	Hi            float64 `json:"hi,omitempty"`
	ReversedRatio float64 `json:"reversed_ratio,omitempty"`
	ReversedLo    float64 `json:"reversed_lo,omitempty"`
	ReversedHi    float64 `json:"reversed_hi,omitempty"`
	// Verdict and ReversedVerdict are the two runs' verdicts on B/A.
	Verdict         string `json:"verdict,omitempty"`
	ReversedVerdict string `json:"reversed_verdict,omitempty"`
	// Agree: both runs compared the cell and gave the same verdict;
	// Overlap: their intervals overlap.
	Agree   bool   `json:"agree"`
	Overlap bool   `json:"overlap"`
	Note    string `json:"note,omitempty"`
}

// mirror turns a verdict on A/B into the verdict on B/A.
func mirror(v string) string {
	switch stats.Verdict(v) {
	case stats.Faster:
		return string(stats.Slower)
	case stats.Slower:
		return string(stats.Faster)
	}
	return v
}

// abAgreements pairs the rows of a forward run with those of its reversed
// run (the same pairs in the same order, tiles swapped).
func abAgreements(fwd, rev []ABRow) []ABAgreement {
	var out []ABAgreement
	for i, f := range fwd {
		g := ABAgreement{Shape: f.Shape, M: f.M, TileA: f.TileA, TileB: f.TileB}
		if i >= len(rev) {
			g.Note = "not run reversed"
			out = append(out, g)
			continue
		}
		r := rev[i]
		switch {
		case f.Status != "ok":
			g.Note = "forward: " + f.Status
		case r.Status != "ok":
			g.Note = "reversed: " + r.Status
		default:
			g.Ratio, g.Lo, g.Hi, g.Verdict = f.Ratio, f.Lo, f.Hi, string(f.Verdict)
			if r.Ratio > 0 && r.Lo > 0 && r.Hi > 0 {
				g.ReversedRatio, g.ReversedLo, g.ReversedHi = 1/r.Ratio, 1/r.Hi, 1/r.Lo
			}
			g.ReversedVerdict = mirror(string(r.Verdict))
			g.Agree = g.Verdict == g.ReversedVerdict && f.Decided()
			g.Overlap = g.ReversedRatio > 0 && g.Lo <= g.ReversedHi && g.ReversedLo <= g.Hi
		}
		out = append(out, g)
	}
	return out
}

// writeABReport writes an A/B report: with --reverse the forward report,
// the reversed one, and the comparison of the two.
func writeABReport(w io.Writer, r ABReport) error {
	if r.Reversed == nil {
		return writeABMarkdown(w, r)
	}
	if err := writeABMarkdown(w, r); err != nil {
		return err
	}
	var rev bytes.Buffer
	if err := writeABMarkdown(&rev, *r.Reversed); err != nil {
		return err
	}
	text := strings.Replace(rev.String(), "# tilefit ab\n", "# tilefit ab, reversed: the same comparison with the sides swapped\n", 1)
	text = strings.ReplaceAll(text, "\n## ", "\n## Reversed: ")
	fmt.Fprintf(w, "\n%s", text)
	return writeABAgreement(w, r.Agreement)
}

// writeABAgreement writes the forward-against-reversed table and summary.
func writeABAgreement(w io.Writer, ag []ABAgreement) error {
	var b strings.Builder
	fmt.Fprint(&b, "\n# Forward against reversed\n\nEvery cell as B/A of the comparison asked for: the reversed run's ratio A/B inverted, its verdict mirrored. A verdict that holds with the sides swapped does not come from the side's position in the rounds.\n\n")
	fmt.Fprintln(&b, "| shape | M | tile A | tile B | B/A forward | interval | B/A reversed | interval | verdicts | agree |")
	fmt.Fprintln(&b, "|---|---:|---|---|---:|---|---:|---|---|---|")
	agree, compared := 0, 0
	var diffs []float64
	for _, g := range ag {
		if g.Note != "" {
			fmt.Fprintf(&b, "| %s | %d | `%s` | `%s` | — | — | — | — | — | %s |\n", g.Shape, g.M, g.TileA, g.TileB, mdEscape(g.Note))
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
