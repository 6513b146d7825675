package report

import (
	"strings"
	"testing"
	"time"

	"github.com/tilefit/tilefit/result"
)

// TestParityNumericFailures (issue 17, defect 5): tiles that all failed
// the numeric checks are not "differ from the reference" — they were never
// compared, and they may be bitwise equal to each other; a mix names them
// apart from the bitwise differences.
func TestParityNumericFailures(t *testing.T) {
	t0 := time.Unix(0, 0).UTC()
	bad := func(tile string) result.Candidate {
		return result.Candidate{Tile: tile, Status: result.NumericFailed, Detail: "error 1.6 × the probabilistic bound"}
	}
	cells := []result.CellResult{row("A", 1, t0, bad("ref"), bad("x"), bad("y")), row("A", 2, t0, bad("ref"), bad("x"), bad("y"))}
	p := build(Input{Cells: cells}).Provenances[0].Parity
	if strings.Contains(p.Summary, "differ from") || !strings.HasPrefix(p.Summary, "NO CANDIDATE VERIFIED: 6 candidates failed the numeric checks") {
		t.Errorf("every tile failed numerically: %q", p.Summary)
	}
	cells = []result.CellResult{row("A", 1, t0, ok("ref", 1), ok("x", 1), bad("y"))}
	p = build(Input{Cells: cells}).Provenances[0].Parity
	if !strings.HasPrefix(p.Summary, "ALL BITWISE: 2 tiles × 1 shape × 1 M; 1 candidate failed the numeric checks") || !p.AllBitwise {
		t.Errorf("one numeric failure beside two bitwise tiles: %q", p.Summary)
	}
}

// TestInvarianceNotCheckedSaysWhy (issue 17, defect 5): a shape swept at
// three M whose tiles passed verification at one M only is not "not
// recorded, one M": the headline names the M that failed.
func TestInvarianceNotCheckedSaysWhy(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	var cells []result.CellResult
	for i, m := range []int{32, 37, 130} {
		c := invCell("a", 48, 100, m, t0.Add(time.Duration(i)*time.Minute), []string{"64_128_2", "16_32_1"}, func(string, int) result.Hashes {
			h := make(result.Hashes, m)
			for r := range h {
				h[r] = uint64(r)
			}
			return h
		})
		if m != 130 {
			for j := range c.Candidates {
				c.Candidates[j].Status, c.Candidates[j].Rows, c.Candidates[j].Samples = result.NumericFailed, nil, nil
				c.Candidates[j].Detail = "32 of 32 elements unwritten"
			}
		}
		cells = append(cells, c)
	}
	inv := build(Input{Cells: cells}).Provenances[0].Invariance
	want := "BATCH INVARIANCE NOT CHECKED: rows of one M only — a has verified tiles at M=130 only (no tile passed verification at M 32, 37)"
	if inv.Summary != want {
		t.Errorf("summary %q, want %q", inv.Summary, want)
	}
}

// TestRaceLine: the report says which tiles left the race and after how
// many pairs (result.Candidate.LeftAt), in one line.
func TestRaceLine(t *testing.T) {
	t0 := time.Unix(0, 0).UTC()
	s12 := []float64{10, 10.1, 9.9, 10, 10.2, 9.8, 10, 10.1, 9.9, 10, 10.2, 9.8}
	slow := ok("x", 20, 20.1, 19.9, 20, 20.2, 19.8)
	slow.LeftAt = 6
	c := row("A", 1, t0, ok("ref", s12...), ok("y", s12...), slow)
	c.Rounds = 12
	var b strings.Builder
	if err := Markdown(&b, Input{Cells: []result.CellResult{c}}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "Left the race: 1 tile in 1 cell, each confirmed slower than its cell's best tile by more than the race's margin (1 after 6 pairs).") {
		t.Errorf("no race line:\n%s", b.String())
	}
}
