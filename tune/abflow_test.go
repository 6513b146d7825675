package tune

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/tilefit/tilefit/policy"
	"github.com/tilefit/tilefit/report"
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
	p := ABPair{Cell: cell, TileA: TileRef{Name: "t"}, TileB: TileRef{Name: "t"}}
	slow := ABRowOf(p, abResult(12, 1.05), so, &seq)
	same := ABRowOf(p, abResult(48, 1.0), so, &seq)
	edge := ABRowOf(p, abResult(300, 1.01), so, &seq) // on the margin, cut by the budget at 300
	for _, tc := range []struct {
		row  result.ABRow
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
	if fixed := ABRowOf(p, abResult(12, 1.0), so, nil); fixed.Verdict != stats.Tie || fixed.Look != 0 {
		t.Errorf("fixed rounds: verdict %s look %d, want tie, 0", fixed.Verdict, fixed.Look)
	}

	rep := result.ABReport{A: "source:a.c", B: "source:b.c", Backend: "cpu", Device: "d", Family: "f", Workload: "w", Ms: []int{4},
		MinGain: so.MinGain, MaxRegress: so.MaxRegress, Confidence: so.Confidence, Rounds: result.RoundsAuto,
		LookConfidence: seq.LookConfidence(), Cells: []result.ABRow{slow, same, edge}}
	rep.Verdicts = CountVerdicts(rep.Cells, so.Confidence)
	if v := rep.Verdicts; v.Compared != 3 || v.Slower != 1 || v.Tie != 1 || v.Undecided != 1 || v.ExpectedFalse < 0.149 || v.ExpectedFalse > 0.151 {
		t.Errorf("verdicts %+v", v)
	}
	var md bytes.Buffer
	if err := report.ABMarkdown(&md, rep); err != nil {
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

// TestOneComparisonType: an A/B row, a policy decision and a report's
// per-chunk total carry the same comparison (stats.Outcome) and write it
// under the same JSON names with the same values.
func TestOneComparisonType(t *testing.T) {
	res := abResult(24, 0.9)
	o, err := stats.Compare(res.Candidates[0].Samples, res.Candidates[1].Samples, stats.DefaultOptions(), nil)
	if err != nil {
		t.Fatal(err)
	}
	row := ABRowOf(ABPair{Cell: result.Cell{Shape: "s", M: 4, Calls: 1}}, res, stats.DefaultOptions(), nil)
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
	for name, v := range map[string]any{"ab row": row, "policy decision": policy.Decision{Outcome: o}, "ab total": result.ABTotal{Outcome: o}} {
		if got := fields(v); !reflect.DeepEqual(got, want) {
			t.Errorf("%s writes %v; the Outcome is %v", name, got, want)
		}
	}
}

func TestABAgreements(t *testing.T) {
	fwd := []result.ABRow{
		{Shape: "a", M: 1, TileA: "x", TileB: "y", Status: "ok", Outcome: stats.Outcome{Ratio: 0.9, Lo: 0.88, Hi: 0.92, Verdict: stats.Faster}},
		{Shape: "b", M: 1, TileA: "x", TileB: "y", Status: "ok", Outcome: stats.Outcome{Ratio: 1.0, Lo: 0.995, Hi: 1.004, Verdict: stats.Tie}},
		{Shape: "c", M: 1, TileA: "x", TileB: "y", Status: "B crashed: boom"},
	}
	rev := []result.ABRow{
		{Shape: "a", M: 1, TileA: "y", TileB: "x", Status: "ok", Outcome: stats.Outcome{Ratio: 1.1, Lo: 1.08, Hi: 1.13, Verdict: stats.Slower}},
		{Shape: "b", M: 1, TileA: "y", TileB: "x", Status: "ok", Outcome: stats.Outcome{Ratio: 0.97, Lo: 0.96, Hi: 0.98, Verdict: stats.Faster}},
		{Shape: "c", M: 1, TileA: "y", TileB: "x", Status: "ok", Outcome: stats.Outcome{Ratio: 1, Lo: 1, Hi: 1, Verdict: stats.Tie}},
	}
	g := ABAgreements(fwd, rev)
	if !g[0].Agree || !g[0].Overlap || g[0].ReversedVerdict != "faster" || math.Abs(g[0].ReversedLo-0.884956) > 1e-6 || math.Abs(g[0].ReversedHi-0.925926) > 1e-6 {
		t.Errorf("mirrored faster: %+v", g[0])
	}
	if g[1].Agree || g[1].Overlap || g[1].ReversedVerdict != "slower" {
		t.Errorf("tie against faster: %+v", g[1])
	}
	if g[2].Agree || g[2].Note != "forward: B crashed: boom" {
		t.Errorf("failed cell: %+v", g[2])
	}
	var b strings.Builder
	rep := result.ABReport{Cells: fwd, Reversed: &result.ABReport{Cells: rev}, Agreement: g}
	if err := report.ABMarkdown(&b, rep); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "1 of 2 compared cells give the same verdict both ways") || !strings.Contains(b.String(), "| c | 1 | `x` | `y` | — |") {
		t.Errorf("agreement Markdown:\n%s", b.String())
	}
}

// TestABSummaryLooksSpent (issue 17, defect 4): a cell undecided with the
// rule's looks spent (6144 rounds) is not summarised as "the budget ran
// out … a larger --budget could decide them"; a cell cut by the budget
// still is.
func TestABSummaryLooksSpent(t *testing.T) {
	so, seq := stats.DefaultOptions(), stats.DefaultSequentialOptions()
	p := ABPair{Cell: result.Cell{Shape: "s", N: 8, K: 8, M: 4, Calls: 1}, TileA: TileRef{Name: "t"}, TileB: TileRef{Name: "t"}}
	spent := ABRowOf(p, noisyAB(6144, 1.01), so, &seq)
	p.Cell.Shape = "u"
	cut := ABRowOf(p, abResult(300, 1.01), so, &seq)
	if spent.Verdict != stats.Undecided || cut.Verdict != stats.Undecided {
		t.Fatalf("verdicts %s, %s; want two undecided", spent.Verdict, cut.Verdict)
	}
	rep := result.ABReport{A: "source:a.c", B: "source:b.c", Backend: "cpu", Device: "d", Family: "f", Workload: "w", Ms: []int{4},
		MinGain: so.MinGain, MaxRegress: so.MaxRegress, Confidence: so.Confidence, Rounds: result.RoundsAuto,
		LookConfidence: seq.LookConfidence(), Cells: []result.ABRow{spent}}
	rep.Verdicts = CountVerdicts(rep.Cells, so.Confidence)
	var md bytes.Buffer
	if err := report.ABMarkdown(&md, rep); err != nil {
		t.Fatal(err)
	}
	out := md.String()
	if strings.Contains(out, "budget ran out") || !strings.Contains(out, "looks spent") || !strings.Contains(out, "s M=4 t (6144 rounds)") {
		t.Errorf("looks spent at 6144 rounds summarised as:\n%s", out)
	}
	rep.Cells = []result.ABRow{spent, cut}
	rep.Verdicts = CountVerdicts(rep.Cells, so.Confidence)
	md.Reset()
	if err := report.ABMarkdown(&md, rep); err != nil {
		t.Fatal(err)
	}
	out = md.String()
	if !strings.Contains(out, "budget ran out (more rounds, or a larger --budget, could decide them): u M=4 t (300 rounds).") ||
		!strings.Contains(out, "a larger --budget cannot decide it): s M=4 t (6144 rounds).") {
		t.Errorf("one cell cut by the budget, one with its looks spent, summarised as:\n%s", out)
	}
}

// noisyAB is abResult with 5% random noise on each pair: on the margin
// it stays undecided however many rounds it gets.
func noisyAB(n int, ratio float64) result.CellResult {
	r := rand.New(rand.NewPCG(17, 4))
	res := abResult(n, ratio)
	for i := range res.Candidates[1].Samples {
		res.Candidates[1].Samples[i] *= 1 + 0.05*r.NormFloat64()
	}
	return res
}
