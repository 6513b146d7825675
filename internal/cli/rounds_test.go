package cli

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/tilefit/tilefit/policy"
	"github.com/tilefit/tilefit/result"
	"github.com/tilefit/tilefit/stats"
)

// abResult is an ABCell result with B = ratio·A per round and a small
// deterministic wobble.
func abResult(n int, ratio float64) result.CellResult {
	a, b := make([]float64, n), make([]float64, n)
	for i := range a {
		w := 1 + 0.002*float64((i*7)%5-2)
		a[i] = 100 * (1 + 0.3*float64(i%3))
		b[i] = a[i] * ratio * w
	}
	return result.CellResult{Rounds: n, Candidates: []result.Candidate{
		{Tile: "A:t", Status: result.OK, Samples: a, Bitwise: true},
		{Tile: "B:t", Status: result.OK, Samples: b, Bitwise: true},
	}}
}

func TestABRowsUnderAdaptiveRounds(t *testing.T) {
	so, seq := stats.DefaultOptions(), stats.DefaultSequentialOptions()
	cell := result.Cell{Shape: "s", N: 8, K: 8, M: 4, Calls: 1}
	p := abPair{cell: cell, tileA: tileRef{name: "t"}, tileB: tileRef{name: "t"}}
	slow := abRowOf(p, abResult(12, 1.05), so, &seq)
	same := abRowOf(p, abResult(48, 1.0), so, &seq)
	edge := abRowOf(p, abResult(300, 1.01), so, &seq) // on the margin, cut by the budget at 300
	for _, tc := range []struct {
		row  ABRow
		want stats.Verdict
	}{{slow, stats.Slower}, {same, stats.Tie}, {edge, stats.Undecided}} {
		if tc.row.Status != "ok" || tc.row.Verdict != tc.want {
			t.Errorf("%d rounds: %s %s, want %s", tc.row.Rounds, tc.row.Status, tc.row.Verdict, tc.want)
		}
	}
	if note := strings.Join(edge.Notes, "; "); !strings.Contains(note, "undecided after 300 rounds (the budget ran out)") {
		t.Errorf("undecided row's notes %q lack the budget", note)
	}
	// The same 12 rounds judged as fixed rounds: one 95 % interval.
	if fixed := abRowOf(p, abResult(12, 1.0), so, nil); fixed.Verdict != stats.Tie || fixed.Look != 0 {
		t.Errorf("fixed rounds: verdict %s look %d, want tie, 0", fixed.Verdict, fixed.Look)
	}

	rep := ABReport{A: "source:a.c", B: "source:b.c", Backend: "cpu", Device: "d", Family: "f", Workload: "w", Ms: []int{4},
		MinGain: so.MinGain, MaxRegress: so.MaxRegress, Confidence: so.Confidence, Rounds: roundsAuto,
		LookConfidence: seq.LookConfidence(), Cells: []ABRow{slow, same, edge}}
	rep.Verdicts = countVerdicts(rep.Cells, so.Confidence)
	if v := rep.Verdicts; v.Compared != 3 || v.Slower != 1 || v.Tie != 1 || v.Undecided != 1 || v.ExpectedFalse < 0.149 || v.ExpectedFalse > 0.151 {
		t.Errorf("verdicts %+v", v)
	}
	var md bytes.Buffer
	if err := writeABMarkdown(&md, rep); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"adaptive rounds (docs/rounds.md)", "99.50% at each look, 95% over all looks",
		"Verdicts of 3 cells: 0 faster, 1 slower, 1 tie, 1 undecided.",
		"Undecided because the budget ran out", "s M=4 t (300 rounds)",
		"up to 0.2 of these 3 verdicts are expected to be false",
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md.String())
		}
	}
}

func TestRoundsFlag(t *testing.T) {
	for _, tc := range []struct {
		in   string
		auto bool
		n    int
		bad  bool
	}{{"auto", true, 0, false}, {"12", false, 12, false}, {"2", false, 2, false}, {"1", false, 0, true}, {"x", false, 0, true}, {"", false, 0, true}} {
		mo, err := measureOptions(tc.in, 0, 0)
		switch {
		case tc.bad:
			if err == nil {
				t.Errorf("--rounds %q accepted", tc.in)
			}
		case err != nil || mo.Auto != tc.auto || (!tc.auto && mo.Rounds != tc.n):
			t.Errorf("--rounds %q: %+v, %v", tc.in, mo, err)
		}
	}
}

// TestOneComparisonType: an A/B row, a policy decision and a report's
// per-chunk total carry the same comparison (stats.Outcome) and write it
// under the same JSON names with the same values.
func TestOneComparisonType(t *testing.T) {
	res := abResult(24, 0.9)
	o, err := stats.Compare(res.Candidates[0].Samples, res.Candidates[1].Samples, stats.DefaultOptions(), nil)
	if err != nil {
		t.Fatal(err)
	}
	row := abRowOf(abPair{cell: result.Cell{Shape: "s", M: 4, Calls: 1}}, res, stats.DefaultOptions(), nil)
	if !reflect.DeepEqual(row.Outcome, o) {
		t.Errorf("ab row %+v; stats.Compare gives %+v", row.Outcome, o)
	}
	fields := func(v any) map[string]any {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]any{}
		json.Unmarshal(b, &m)
		out := map[string]any{}
		for _, k := range []string{"ratio", "lo", "hi", "bracket_lo", "bracket_hi", "verdict", "pairs"} {
			out[k] = m[k]
		}
		return out
	}
	want := fields(o)
	for name, v := range map[string]any{"ab row": row, "policy decision": policy.Decision{Outcome: o}, "ab total": ABTotal{Outcome: o}} {
		if got := fields(v); !reflect.DeepEqual(got, want) {
			t.Errorf("%s writes %v; the Outcome is %v", name, got, want)
		}
	}
}
