package policy

import (
	"context"
	"strings"
	"testing"

	"github.com/tilefit/tilefit/result"
	"github.com/tilefit/tilefit/stats"
)

// adaptiveRow is a sweep cell measured with adaptive rounds: the machine is
// 40 % slower after round 12; tile "slow" (20 % slower than the reference)
// left the rounds at the first look, "fast" (5 % faster) and "edge" (exactly
// 1 % faster, on the margin) stayed for 48.
func adaptiveRow(m int, tiles map[string]float64) result.CellResult {
	series := func(n int, ratio float64, salt string) []float64 {
		s := make([]float64, n)
		for i := range s {
			level := 1.0
			if i >= 12 {
				level = 1.4
			}
			s[i] = 100 * ratio * level * (1 + noise(i, salt)/4)
		}
		return s
	}
	c := sweepCell("a", 64, 64, m, 1)
	c.Rounds = 48
	c.Candidates = append(c.Candidates, result.Candidate{Tile: ref, Status: result.OK, Bitwise: true, Dispatches: 1, Samples: series(48, 1, "ref")})
	for _, tile := range []string{"slow", "fast", "edge"} {
		r, ok := tiles[tile]
		if !ok {
			continue
		}
		n := 48
		if tile == "slow" {
			n = 12
		}
		c.Candidates = append(c.Candidates, result.Candidate{Tile: tile, Status: result.OK, Bitwise: true, Dispatches: 1, Samples: series(n, r, tile)})
	}
	return c
}

func TestSelectAdaptiveSweep(t *testing.T) {
	cells := []result.CellResult{
		adaptiveRow(16, map[string]float64{"slow": 1.2, "fast": 0.95}),
		adaptiveRow(32, map[string]float64{"slow": 1.2, "edge": 0.99}),
	}
	seq := stats.DefaultSequentialOptions()
	p, err := Select(context.Background(), cells, SelectOptions{Reference: ref, RequireBitwise: true, Sequential: &seq})
	if err != nil {
		t.Fatal(err)
	}
	// "slow" has the lowest raw median (its 12 rounds were the quiet ones);
	// ranked by its paired ratio it is the slowest.
	if d := decision(t, p, "a", 16); d.Best != "fast" || d.Chosen != "fast" || d.Verdict != "faster" {
		t.Errorf("M=16: best %s chosen %s verdict %s; want fast, fast, faster (%s)", d.Best, d.Chosen, d.Verdict, d.Reason)
	}
	if d := decision(t, p, "a", 32); d.Best != "edge" || d.Chosen != ref || d.Verdict != "undecided" || !strings.Contains(d.Reason, "undecided") {
		t.Errorf("M=32: best %s chosen %s verdict %s reason %q; want edge, the baseline, undecided", d.Best, d.Chosen, d.Verdict, d.Reason)
	}
	if p.Options.Rounds != "auto" {
		t.Errorf("Options.Rounds = %q, want auto", p.Options.Rounds)
	}
}
