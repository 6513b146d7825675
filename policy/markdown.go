package policy

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/tilefit/tilefit/stats"
)

// Markdown writes p's decision table: per shape its rules, then per
// measured M the baseline tile and the new choice, the ratio winner/baseline
// with its interval, brackets and verdict, and why; then the per-chunk
// totals old vs new (Σ calls × µs per call, over the shapes measured at
// that M) with the interval of their ratio (stats.WeightedTotal).
func Markdown(w io.Writer, p Policy) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "## Tile policy: %s on %s\n\n", p.Family, p.Backend)
	var facts []string
	if p.Provenance != "" {
		facts = append(facts, fmt.Sprintf("provenance `%s`", p.Provenance))
	}
	if s := p.Sweep; s != nil {
		facts = append(facts, fmt.Sprintf("device %s", s.Device))
		if len(s.SourceHash) >= 12 {
			facts = append(facts, fmt.Sprintf("source sha256 %s…", s.SourceHash[:12]))
		}
	}
	if p.Workload != "" {
		facts = append(facts, "workload "+p.Workload)
	}
	if p.Swept != "" {
		facts = append(facts, "swept "+p.Swept)
	}
	facts = append(facts, "baseline: "+p.Baseline)
	fmt.Fprintf(bw, "%s.\n", capitalize(strings.Join(facts, ", ")))
	if op := p.Options; op != nil {
		conf := "winners re-measured against the baseline in a fresh paired round"
		if !op.Confirmed {
			conf = "verdicts from the sweep's own paired samples (not re-measured)"
		}
		bit := "only candidates bitwise equal to the reference admitted"
		if !op.RequireBitwise {
			bit = "candidates admitted whatever their bits"
		}
		fmt.Fprintf(bw, "Selected with %s; %s; a cell departs from the baseline only on a `faster` verdict (%.0f%% interval entirely below %.3f; `slower` above %.3f); thresholds: %s.\n",
			bit, conf, 100*op.Confidence, 1-op.MinGain, 1+op.MaxRegress, op.ThresholdRule)
	}
	if p.Default != "" {
		fmt.Fprintf(bw, "Default tile (for a shape without rules): `%s`.\n", p.Default)
	}
	if inv := p.Invariance; inv != nil {
		fmt.Fprintf(bw, "%s\n", InvarianceText(p))
	}

	byShape := map[string][]Decision{}
	for _, d := range p.Cells {
		byShape[d.Shape] = append(byShape[d.Shape], d)
	}
	for _, s := range p.Shapes {
		fmt.Fprintf(bw, "\n### %s", s.Shape)
		switch {
		case len(s.Dims) > 0:
			names := make([]string, 0, len(s.Dims))
			for k := range s.Dims {
				names = append(names, k)
			}
			slices.Sort(names)
			parts := make([]string, len(names))
			for i, k := range names {
				parts[i] = fmt.Sprintf("%s %d", k, s.Dims[k])
			}
			fmt.Fprintf(bw, " (%s, %d calls per chunk)", strings.Join(parts, ", "), s.Calls)
		case s.N > 0:
			fmt.Fprintf(bw, " (N %d, K %d, %d calls per chunk)", s.N, s.K, s.Calls)
		}
		fmt.Fprintf(bw, "\n\nRules: %s.", RulesText(s.Rules))
		if s.Class != "" {
			fmt.Fprintf(bw, " Numerics class `%s`.", s.Class)
		}
		fmt.Fprintln(bw)
		ds := byShape[s.Shape]
		if len(ds) == 0 {
			continue
		}
		slices.SortStableFunc(ds, func(a, b Decision) int { return cmp.Compare(a.M, b.M) })
		fmt.Fprintln(bw)
		fmt.Fprintln(bw, "| M | baseline | µs | best | sweep ratio | ratio | interval | brackets | verdict | chosen | µs | vendor µs | why |")
		fmt.Fprintln(bw, "|---:|---|---:|---|---:|---:|---|---|---|---|---:|---:|---|")
		for _, d := range ds {
			chosen := "`" + d.Chosen + "`"
			if d.Chosen != d.Baseline {
				chosen = "**" + chosen + "**"
			}
			ratio, interval, brackets := "—", "—", "—"
			if d.Verdict != "" {
				ratio = fmt.Sprintf("%.3f", d.Ratio)
				interval = fmt.Sprintf("[%.3f, %.3f]", d.Lo, d.Hi)
				brackets = fmt.Sprintf("[%.3f, %.3f]", d.BracketLo, d.BracketHi)
			}
			best := "—"
			if d.Best != "" {
				best = "`" + d.Best + "`"
			}
			verdict := d.Verdict
			if verdict == "" {
				verdict = "—"
			} else if !d.Confirmed {
				verdict += " (sweep)"
			}
			why := d.Reason
			if len(d.Warnings) > 0 {
				why += " (" + strings.Join(d.Warnings, "; ") + ")"
			}
			fmt.Fprintf(bw, "| %d | `%s` | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
				d.M, d.Baseline, us(d.BaselineUS), best, ratioOrDash(d.SweepRatio), ratio, interval, brackets, verdict,
				chosen, us(chosenUS(d)), us(d.VendorUS), escapePipes(why))
		}
	}
	writeTotals(bw, p)
	return bw.Flush()
}

// RulesText renders rules as "`128_64_4` for M < 1504, `64_128_4` otherwise".
func RulesText(rules []Rule) string {
	var parts []string
	for i, r := range rules {
		switch {
		case r.Below > 0:
			parts = append(parts, fmt.Sprintf("`%s` for M < %d", r.Tile, r.Below))
		case i == 0:
			parts = append(parts, fmt.Sprintf("`%s` for every M", r.Tile))
		default:
			parts = append(parts, fmt.Sprintf("`%s` otherwise", r.Tile))
		}
	}
	return strings.Join(parts, ", ")
}

// A ChunkTotal is the production-weighted time of one chunk at token count
// M (Σ over the shapes measured at M of calls × µs per call) under the
// baseline (Old) and under the policy (New), with the ratio's interval.
type ChunkTotal struct {
	M        int // 0 for the sum over every M
	Cells    int
	Skipped  int // cells without samples, left out
	Old, New float64
	Total    stats.Total
	Err      error
}

// Totals returns the per-chunk totals of p, M ascending, then the sum over
// every M (M = 0), each a stats.WeightedTotal (stats.TotalsByM). A cell's
// baseline samples stand for both sides when its chosen tile is the
// baseline.
func Totals(p Policy) []ChunkTotal {
	o := statsOptions(p)
	var cells []stats.ChunkCell
	skipped := map[int]int{}
	var ms []int
	for _, d := range p.Cells {
		if !slices.Contains(ms, d.M) {
			ms = append(ms, d.M)
		}
		a := d.BaselineSamples
		b := a
		if d.Chosen != d.Baseline {
			b = d.BestSamples
		}
		if len(a) == 0 || len(a) != len(b) {
			skipped[d.M]++
			continue
		}
		cells = append(cells, stats.ChunkCell{M: d.M, Weighted: stats.Weighted{Weight: float64(max(d.Calls, 1)), A: a, B: b}})
	}
	slices.Sort(ms)
	totals := map[int]stats.ChunkTotal{}
	for _, t := range stats.TotalsByM(cells, o) {
		totals[t.M] = t
	}
	var out []ChunkTotal
	allSkipped := 0
	for _, m := range ms {
		allSkipped += skipped[m]
	}
	if len(ms) > 1 {
		ms = append(ms, 0)
	}
	for _, m := range ms {
		t := totals[m]
		ct := ChunkTotal{M: m, Cells: t.Cells, Skipped: skipped[m], Total: t.Total, Err: t.Err}
		if m == 0 {
			ct.Skipped = allSkipped
		}
		ct.Old, ct.New = ct.Total.A, ct.Total.B
		out = append(out, ct)
	}
	return out
}

// InvarianceText says in words whether p keeps outputs batch-invariant.
func InvarianceText(p Policy) string {
	inv := p.Invariance
	if inv == nil {
		return "Batch invariance: not recorded."
	}
	var b strings.Builder
	if inv.BatchInvariant {
		b.WriteString("Batch-invariant: every shape uses tiles of one numerics class at every M, so a row's bits do not depend on M")
		switch {
		case len(inv.Unchecked) == 0:
			b.WriteString("; every tile's rows were compared across M by the sweep")
		case len(inv.Checked) == 0:
			b.WriteString(" (rows not compared across M by the sweep: one M, or cells stored before row hashes; invariance rests on the classes)")
		default:
			fmt.Fprintf(&b, "; rows compared across M on %s, not on %s", strings.Join(inv.Checked, ", "), strings.Join(inv.Unchecked, ", "))
		}
	} else {
		b.WriteString("NOT batch-invariant")
		if len(inv.MixedClasses) > 0 {
			fmt.Fprintf(&b, ": the rules of %s mix numerics classes", strings.Join(inv.MixedClasses, ", "))
		}
	}
	b.WriteString(".")
	if len(inv.Excluded) > 0 {
		var parts []string
		for _, x := range inv.Excluded {
			parts = append(parts, x.Tile+" on "+x.Shape)
		}
		fmt.Fprintf(&b, " Left out, their rows changed with M: %s.", strings.Join(parts, ", "))
	}
	return b.String()
}

func writeTotals(w io.Writer, p Policy) {
	ts := Totals(p)
	if len(ts) == 0 {
		return
	}
	fmt.Fprintf(w, "\n### Per-chunk totals, baseline vs policy (Σ calls × µs)\n\n")
	fmt.Fprintln(w, "| M | cells | baseline µs/chunk | policy µs/chunk | ratio | interval | verdict |")
	fmt.Fprintln(w, "|---:|---:|---:|---:|---:|---|---|")
	for _, t := range ts {
		m := fmt.Sprint(t.M)
		if t.M == 0 {
			m = "all"
		}
		cells := fmt.Sprint(t.Cells)
		if t.Skipped > 0 {
			cells += fmt.Sprintf(" (+%d without samples)", t.Skipped)
		}
		if t.Cells == 0 || t.Err != nil || t.Total.Ratio == 0 {
			fmt.Fprintf(w, "| %s | %s | — | — | — | — | — |\n", m, cells)
			continue
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %.3f | [%.3f, %.3f] | %s |\n", m, cells, us(t.Old), us(t.New),
			t.Total.Ratio, t.Total.Lo, t.Total.Hi, t.Total.Verdict)
	}
}

// statsOptions are the defaults with p's recorded margins and confidence.
func statsOptions(p Policy) stats.Options {
	o := stats.DefaultOptions()
	if op := p.Options; op != nil && op.Confidence > 0 && op.Confidence < 1 {
		o.MinGain, o.MaxRegress, o.Confidence = op.MinGain, op.MaxRegress, op.Confidence
	}
	return o
}

func chosenUS(d Decision) float64 {
	if d.Chosen == d.Baseline {
		return d.BaselineUS
	}
	return d.BestUS
}

// us formats µs with three or four significant digits; "—" for 0 or NaN.
func us(x float64) string {
	switch {
	case x == 0 || math.IsNaN(x):
		return "—"
	case x >= 100:
		return fmt.Sprintf("%.0f", x)
	case x >= 10:
		return fmt.Sprintf("%.1f", x)
	}
	return fmt.Sprintf("%.2f", x)
}

func ratioOrDash(x float64) string {
	if x == 0 || math.IsNaN(x) {
		return "—"
	}
	return fmt.Sprintf("%.3f", x)
}

func escapePipes(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
