package report

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tilefit/tilefit/result"
)

// adaptiveCell is one stored row of an adaptive run: the machine slows down
// by 40 % after round 12; tile fast (10 % faster) and slow (20 % slower)
// left the rounds at the first look, edge (exactly 1 % slower) stayed to
// the end, undecided.
func adaptiveCell() result.CellResult {
	jitter := func(i int) float64 { return 1 + 0.001*float64((i*7)%5-2) }
	series := func(n int, ratio float64, seed int) []float64 {
		s := make([]float64, n)
		for i := range s {
			level := 1.0
			if i >= 12 {
				level = 1.4
			}
			s[i] = 100 * ratio * level * jitter(i+seed)
		}
		return s
	}
	cand := func(tile string, s []float64) result.Candidate {
		return result.Candidate{Tile: tile, Status: result.OK, Bitwise: true, Dispatches: 1, Samples: s}
	}
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	return result.CellResult{
		Prov: result.Provenance{Backend: "cpu", Device: "d", Family: "f"}, Cell: result.Cell{Shape: "s", N: 8, K: 8, M: 4, Calls: 1},
		Reference: "ref", Rounds: 48, Sets: 1, Started: t0, Finished: t0.Add(time.Second),
		Candidates: []result.Candidate{
			cand("ref", series(48, 1, 0)), cand("fast", series(12, 0.9, 1)), cand("slow", series(12, 1.2, 2)), cand("edge", series(48, 1.01, 3)),
		},
	}
}

func TestAdaptiveRowsRankedByPairedRatio(t *testing.T) {
	doc := build(Input{Cells: []result.CellResult{adaptiveCell()}, Generated: time.Now()})
	c := doc.Provenances[0].Cells[0]
	// Raw medians would rank slow (120 µs, all in the quiet rounds) ahead of
	// the reference (140 µs); paired, it is 20 % slower.
	if want := []string{"fast", "ref", "edge"}; !slices.Equal(c.Fastest, want) {
		t.Errorf("fastest %v, want %v", c.Fastest, want)
	}
	verdicts := map[string]string{}
	for _, cand := range c.Candidates {
		verdicts[cand.Tile] = cand.Verdict
		if cand.Tile == "slow" && (float64(cand.RatioToReference) < 1.19 || float64(cand.RatioToReference) > 1.21) {
			t.Errorf("slow: ratio to reference %v, want the paired 1.2", cand.RatioToReference)
		}
	}
	if want := map[string]string{"ref": "", "fast": "faster", "slow": "slower", "edge": "undecided"}; !mapsEqual(verdicts, want) {
		t.Errorf("verdicts %v, want %v", verdicts, want)
	}
	if !slices.Equal(c.Undecided, []string{"edge"}) {
		t.Errorf("undecided %v, want [edge]", c.Undecided)
	}
	d := doc.Provenances[0].Decisions
	if d.Comparisons != 3 || d.Faster != 1 || d.Slower != 1 || d.Undecided != 1 || d.ExpectedFalse < 0.149 || d.ExpectedFalse > 0.151 {
		t.Errorf("decisions %+v", d)
	}
	var md bytes.Buffer
	if err := Markdown(&md, Input{Cells: []result.CellResult{adaptiveCell()}, Generated: time.Now()}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"`fast` ‡", "0.902 [", "] faster", "1 faster, 1 slower, 0 tie", "up to 0.2 of these verdicts are expected to be false", "| s     |   4 |     48 |         1 | `edge`"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md.String())
		}
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
