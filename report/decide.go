package report

import (
	"math"

	"github.com/tilefit/tilefit/result"
	"github.com/tilefit/tilefit/stats"
)

// compareCell is the one comparison of a cell's candidate with its anchor
// that every view prints: B against A by the sequential rule replayed on
// their paired samples (stats.Compare with the default options, what an
// adaptive run stopped on and what tilefit select reads from a sweep), its
// ratio the median per-pair ratio B/A. a and b must be paired round by
// round (b may be shorter: a candidate that left the rounds early).
func compareCell(a, b []float64) (stats.Outcome, error) {
	n := min(len(a), len(b))
	seq := stats.DefaultSequentialOptions()
	return stats.Compare(a[:n], b[:n], stats.DefaultOptions(), &seq)
}

// decide compares every OK candidate of c with the reference tile: paired
// round by round (compareCell) when it was timed in the same stored row as
// the reference, else unpaired (stats.Unpaired: two runs of a resumed
// sweep, drift between them not cancelled; Candidate.Unpaired). It sets
// VsReference, RatioToReference (the comparison's ratio: the median
// per-pair ratio, never a ratio of medians), Verdict, the anchored time of
// a candidate that left the rounds early, and c.Undecided (paired
// comparisons only, as Decisions counts them).
func decide(mc *mcell, c *Cell) {
	ref := -1
	for i, rc := range mc.cands {
		if rc.Tile == c.Reference && !rc.AA && !rc.Vendor && rc.Status == result.OK {
			ref = i
		}
	}
	if ref < 0 || !usable(mc.cands[ref].Samples) {
		return
	}
	rs := mc.cands[ref].Samples
	for i, rc := range mc.cands {
		if i == ref || rc.Status != result.OK || !usable(rc.Samples) {
			continue
		}
		cand := &c.Candidates[i]
		if mc.run[i] != mc.run[ref] {
			u, err := stats.Unpaired(rs, rc.Samples, stats.DefaultOptions())
			if err != nil {
				continue
			}
			o := stats.OutcomeOf(u)
			cand.VsReference, cand.Unpaired, cand.Verdict = &o, true, string(o.Verdict)
			cand.RatioToReference = num(o.Ratio)
			continue
		}
		o, err := compareCell(rs, rc.Samples)
		if err != nil {
			continue
		}
		cand.VsReference, cand.Verdict = &o, string(o.Verdict)
		cand.RatioToReference = num(o.Ratio)
		if o.Verdict == stats.Undecided {
			c.Undecided = append(c.Undecided, rc.Tile)
		}
		if len(rc.Samples) < len(rs) { // left the adaptive rounds early
			cand.RankedUs = num(stats.AnchoredMedian(rs, rc.Samples))
		}
	}
}

// usable reports whether xs is non-empty and every sample is finite and
// positive (the stats functions' contract).
func usable(xs []float64) bool {
	for _, x := range xs {
		if !(x > 0) || math.IsInf(x, 0) {
			return false
		}
	}
	return len(xs) > 0
}

// decisions counts the verdicts of a section's cells (the paired
// comparisons with the reference).
func decisions(cells []Cell) Decisions {
	d := Decisions{Confidence: stats.DefaultSequentialOptions().Confidence}
	for _, c := range cells {
		for _, cand := range c.Candidates {
			if cand.Unpaired {
				continue
			}
			switch stats.Verdict(cand.Verdict) {
			case stats.Faster:
				d.Faster++
			case stats.Slower:
				d.Slower++
			case stats.Tie:
				d.Tie++
			case stats.Undecided:
				d.Undecided++
			default:
				continue
			}
			d.Comparisons++
		}
	}
	d.ExpectedFalse = stats.ExpectedFalse(d.Comparisons, d.Confidence)
	return d
}
