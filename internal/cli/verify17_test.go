package cli

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tilefit/tilefit/result"
	"github.com/tilefit/tilefit/stats"
)

// TestABSummaryLooksSpent (issue 17, defect 4): a cell undecided with the
// rule's looks spent (6144 rounds) is not summarised as "the budget ran
// out … a larger --budget could decide them"; a cell cut by the budget
// still is.
func TestABSummaryLooksSpent(t *testing.T) {
	so, seq := stats.DefaultOptions(), stats.DefaultSequentialOptions()
	p := abPair{cell: result.Cell{Shape: "s", N: 8, K: 8, M: 4, Calls: 1}, tileA: tileRef{name: "t"}, tileB: tileRef{name: "t"}}
	spent := abRowOf(p, noisyAB(6144, 1.01), so, &seq)
	p.cell.Shape = "u"
	cut := abRowOf(p, abResult(300, 1.01), so, &seq)
	if spent.Verdict != stats.Undecided || cut.Verdict != stats.Undecided {
		t.Fatalf("verdicts %s, %s; want two undecided", spent.Verdict, cut.Verdict)
	}
	rep := ABReport{A: "source:a.c", B: "source:b.c", Backend: "cpu", Device: "d", Family: "f", Workload: "w", Ms: []int{4},
		MinGain: so.MinGain, MaxRegress: so.MaxRegress, Confidence: so.Confidence, Rounds: roundsAuto,
		LookConfidence: seq.LookConfidence(), Cells: []ABRow{spent}}
	rep.Verdicts = countVerdicts(rep.Cells, so.Confidence)
	var md bytes.Buffer
	if err := writeABMarkdown(&md, rep); err != nil {
		t.Fatal(err)
	}
	out := md.String()
	if strings.Contains(out, "budget ran out") || !strings.Contains(out, "looks spent") || !strings.Contains(out, "s M=4 t (6144 rounds)") {
		t.Errorf("looks spent at 6144 rounds summarised as:\n%s", out)
	}
	rep.Cells = []ABRow{spent, cut}
	rep.Verdicts = countVerdicts(rep.Cells, so.Confidence)
	md.Reset()
	if err := writeABMarkdown(&md, rep); err != nil {
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

// TestSweepHeadlineCountsStoredM (issue 17, defect 3): a sweep of M 1, 37
// into a database that holds M 130 of a batch-dependent source compares
// the new cells with M 130 and fails them; its headline must say NOT
// BATCH-INVARIANT, as the report of the same database does, not
// "BATCH-INVARIANT … none changed" from the two M it swept.
func TestSweepHeadlineCountsStoredM(t *testing.T) {
	needCC(t)
	dir := t.TempDir()
	srcPath := filepath.Join(dir, "batchdep.c")
	if err := os.WriteFile(srcPath, []byte(plantBatchDependence(t)), 0o644); err != nil {
		t.Fatal(err)
	}
	wl := filepath.Join(dir, "w.yaml")
	if err := os.WriteFile(wl, []byte("name: batchdep\nm: [1, 37, 130]\nshapes:\n  - {name: albe, n: 48, k: 64, calls: 72}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "h.db")
	var out string
	for _, m := range []string{"130", "1,37"} {
		var stdout, stderr bytes.Buffer
		Run(context.Background(), []string{"sweep", "--workload", wl, "--m", m, "--db", db, "--source", srcPath, "--tiles", "16_32_1,64_128_2",
			"--rounds", "6", "--aa=false", "--report=false", "--vendor=false"}, &stdout, &stderr)
		out = stdout.String()
	}
	failed := 0
	for _, c := range readCells(t, db) {
		for _, cand := range c.Candidates {
			if strings.HasPrefix(cand.Detail, "not batch-invariant") {
				failed++
			}
		}
	}
	if failed == 0 {
		t.Fatal("the second sweep failed no candidate as not batch-invariant; the planted source did not work")
	}
	if strings.Contains(out, "BATCH-INVARIANT:") && !strings.Contains(out, "NOT BATCH-INVARIANT:") {
		t.Errorf("the sweep stored %d not batch-invariant failures but its headline says:\n%s", failed, out)
	}
	if !strings.Contains(out, "NOT BATCH-INVARIANT:") {
		t.Errorf("headline:\n%s", out)
	}
}
