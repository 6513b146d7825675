package report

import (
	"math"

	"github.com/tilefit/tilefit/result"
	"github.com/tilefit/tilefit/stats"
)

// decide replays the sequential rule on every OK candidate of c that was
// timed in the same stored row as the reference tile: Verdict against the
// reference, the paired ratio and the anchored time of a candidate that left
// the rounds early, and c.Undecided.
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
	so := stats.DefaultSequentialOptions()
	for i, rc := range mc.cands {
		if i == ref || rc.Status != result.OK || mc.run[i] != mc.run[ref] || !usable(rc.Samples) {
			continue
		}
		n := min(len(rs), len(rc.Samples))
		s, err := stats.Sequential(rs[:n], rc.Samples[:n], so)
		if err != nil {
			continue
		}
		cand := &c.Candidates[i]
		cand.Verdict = string(s.Verdict)
		if s.Verdict == stats.Undecided {
			c.Undecided = append(c.Undecided, rc.Tile)
		}
		if len(rc.Samples) < len(rs) { // left the adaptive rounds early
			cand.RatioToReference = num(stats.Median(ratios(rs[:n], rc.Samples[:n])))
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

func ratios(a, b []float64) []float64 {
	out := make([]float64, len(a))
	for i := range a {
		out[i] = b[i] / a[i]
	}
	return out
}

// decisions counts the verdicts of a section's cells.
func decisions(cells []Cell) Decisions {
	d := Decisions{Confidence: stats.DefaultSequentialOptions().Confidence}
	for _, c := range cells {
		for _, cand := range c.Candidates {
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
