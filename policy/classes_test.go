package policy

import (
	"context"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tilefit/tilefit/kernel"
	"github.com/tilefit/tilefit/result"
)

// classOf is the fixture's numerics classes: tiles "sk…" split K (class
// gemm_f16/splitk1024), every other tile is of the main class gemm_f16.
func classOf(tile string) string {
	if strings.HasPrefix(tile, "sk") {
		return "gemm_f16/splitk1024"
	}
	return "gemm_f16"
}

func describeFixture(c result.Candidate) (Tile, error) {
	return Tile{Family: "gemm_f16", Class: classOf(c.Tile), Params: kernel.Params{"TM": len(c.Tile)}}, nil
}

// classCell is a sweep cell whose split-K tiles are not bitwise equal to
// the reference (another class), as a sweep stores them.
func classCell(shape string, m int, cands ...fc) result.CellResult {
	c := sweepCell(shape, 324, 10240, m, 96, cands...)
	for i := range c.Candidates {
		if classOf(c.Candidates[i].Tile) != "gemm_f16" {
			c.Candidates[i].Bitwise = false
		}
	}
	return c
}

// TestSelectNumericsClass: a shape moves to another numerics class only as
// a whole (every M), only when its total is confirmed faster, and never
// mixes classes across M.
func TestSelectNumericsClass(t *testing.T) {
	ms := []int{256, 1024, 2048}
	var cells []result.CellResult
	cf := &confirmer{byCell: map[string]conf{}}
	for _, m := range ms {
		// moves: split-K 30–40 % faster everywhere; sk2 at small M, sk4 at large.
		sk2, sk4 := 0.6, 0.7
		if m >= 1024 {
			sk2, sk4 = 0.75, 0.65
		}
		cells = append(cells, classCell("moves", m, fc{tile: ref, us: 100}, fc{tile: "32_64_1", us: 95}, fc{tile: "sk2", us: 100 * sk2}, fc{tile: "sk4", us: 100 * sk4}))
		win := "sk2"
		if m >= 1024 {
			win = "sk4"
		}
		cf.byCell["moves/"+itoa(m)+"/"+ref+"/"+win] = conf{us: 100, ratio: min(sk2, sk4) + 0.02}
		// lucky: split-K looked 3 % faster in the sweep; re-measured it ties.
		cells = append(cells, classCell("lucky", m, fc{tile: ref, us: 100}, fc{tile: "sk2", us: 97}))
		cf.byCell["lucky/"+itoa(m)+"/"+ref+"/sk2"] = conf{us: 100, ratio: 1.0}
		// gap: split-K much faster, but not swept at M 2048: not eligible;
		// the main class's 32_64_1 is confirmed faster there.
		g := []fc{{tile: ref, us: 100}, {tile: "32_64_1", us: 90}}
		if m != 2048 {
			g = append(g, fc{tile: "sk2", us: 50})
		}
		cells = append(cells, classCell("gap", m, g...))
		cf.byCell["gap/"+itoa(m)+"/"+ref+"/32_64_1"] = conf{us: 100, ratio: 0.9}
	}
	p, err := Select(context.Background(), cells, SelectOptions{Reference: ref, RequireBitwise: true, Confirm: cf.confirm, Describe: describeFixture})
	if err != nil {
		t.Fatal(err)
	}
	s := p.Shape("moves")
	if want := []Rule{{Tile: "sk2", Below: 640}, {Tile: "sk4"}}; !reflect.DeepEqual(s.Rules, want) || s.Class != "gemm_f16/splitk1024" {
		t.Errorf("moves: rules %+v class %q; want %+v in the split-K class", s.Rules, s.Class, want)
	}
	for _, m := range ms {
		d := decision(t, p, "moves", m)
		if d.Class != "gemm_f16/splitk1024" || d.Chosen == ref || !strings.Contains(d.Reason, "moves to numerics class gemm_f16/splitk1024") || d.Verdict != "faster" {
			t.Errorf("moves M=%d: %+v", m, d)
		}
	}
	if s := p.Shape("lucky"); !reflect.DeepEqual(s.Rules, []Rule{{Tile: ref}}) || s.Class != "gemm_f16" {
		t.Errorf("lucky: %+v; want the reference, main class", s)
	}
	if d := decision(t, p, "lucky", 1024); d.Chosen != ref || !slices.ContainsFunc(d.Warnings, func(w string) bool { return strings.Contains(w, "stays in class gemm_f16") }) {
		t.Errorf("lucky M=1024: %+v; want the baseline and a note why the class stays", d)
	}
	if s := p.Shape("gap"); !reflect.DeepEqual(s.Rules, []Rule{{Tile: "32_64_1"}}) || s.Class != "gemm_f16" {
		t.Errorf("gap: %+v; want 32_64_1 at every M (split-K lacks M 2048)", s)
	}
	if inv := p.Invariance; inv == nil || !inv.BatchInvariant || len(inv.MixedClasses) != 0 {
		t.Errorf("invariance %+v", p.Invariance)
	}
	for _, tl := range p.Tiles {
		if tl.Class != classOf(tl.Name) || tl.Family != "gemm_f16" || tl.Params["TM"] != len(tl.Name) {
			t.Errorf("tile %+v", tl)
		}
	}
	if _, ok := p.TileInfo("sk4"); !ok {
		t.Error("sk4 not described")
	}
}

// TestSelectExcludesNotInvariant: a tile the sweep's batch-invariance check
// failed at one M (its rows changed against the largest M) is left out of
// the shape at every M, and the policy says so.
func TestSelectExcludesNotInvariant(t *testing.T) {
	var cells []result.CellResult
	cf := &confirmer{byCell: map[string]conf{}}
	for _, m := range []int{37, 130} {
		c := sweepCell("w", 2560, 6144, m, 48, fc{tile: ref, us: 100}, fc{tile: "fastvar", us: 70}, fc{tile: "32_64_1", us: 90})
		if m == 130 {
			bad := c.Find("fastvar")
			bad.Status, bad.Samples = result.ParityFailed, nil
			bad.Detail = "not batch-invariant: 2 of 37 rows changed between M 37 and M=130 (first: row 3 of Y at M=37 differs from M=130)"
		}
		for i := range c.Candidates {
			c.Candidates[i].Rows = []result.RowHashes{{Operand: "Y", Hashes: result.Hashes{1, 2}}}
		}
		cells = append(cells, c)
		cf.byCell["w/"+itoa(m)+"/"+ref+"/32_64_1"] = conf{us: 100, ratio: 0.9}
	}
	p, err := Select(context.Background(), cells, SelectOptions{Reference: ref, RequireBitwise: true, Confirm: cf.confirm})
	if err != nil {
		t.Fatal(err)
	}
	if got := rulesOf(t, p, "w"); !reflect.DeepEqual(got, []Rule{{Tile: "32_64_1"}}) {
		t.Errorf("rules %+v; want 32_64_1 (fastvar is not batch-invariant)", got)
	}
	if d := decision(t, p, "w", 37); d.Best != "32_64_1" {
		t.Errorf("M=37 best %s; fastvar must not be admitted where it passed either", d.Best)
	}
	inv := p.Invariance
	if len(inv.Excluded) != 1 || inv.Excluded[0].Tile != "fastvar" || inv.Excluded[0].Shape != "w" || !strings.HasPrefix(inv.Excluded[0].Detail, "not batch-invariant") {
		t.Errorf("excluded %+v", inv.Excluded)
	}
	if !inv.BatchInvariant || !slices.Equal(inv.Checked, []string{"w"}) || len(inv.Unchecked) != 0 {
		t.Errorf("invariance %+v; want invariant, w checked (rows at both M)", inv)
	}
}

// TestSelectMixedBaseline: a baseline policy whose rules mix classes on a
// shape makes that shape, and so the policy, not batch-invariant.
func TestSelectMixedBaseline(t *testing.T) {
	base := Policy{Version: Version, Family: "gemm_f16", Backend: "cpu", Baseline: "none", Default: ref,
		Shapes: []Shape{{Shape: "h", Rules: []Rule{{Tile: "sk2", Below: 500}, {Tile: ref}}}}}
	cells := []result.CellResult{
		classCell("h", 256, fc{tile: ref, us: 100}, fc{tile: "sk2", us: 100}),
		classCell("h", 1024, fc{tile: ref, us: 100}, fc{tile: "sk2", us: 100}),
	}
	p, err := Select(context.Background(), cells, SelectOptions{Reference: ref, Baseline: &base, Describe: describeFixture, Confirm: (&confirmer{}).confirm})
	if err != nil {
		t.Fatal(err)
	}
	if s := p.Shape("h"); s.Class != "" || !reflect.DeepEqual(s.Rules, base.Shapes[0].Rules) {
		t.Errorf("h: %+v; want the baseline's rules, no one class", s)
	}
	if inv := p.Invariance; inv.BatchInvariant || !slices.Equal(inv.MixedClasses, []string{"h"}) {
		t.Errorf("invariance %+v; want not invariant, h mixed", inv)
	}
}

// TestSelectExtraDims: an operator with dimensions beyond N and K (hc_up's
// S) records them per shape, and one name swept at two sizes is refused.
func TestSelectExtraDims(t *testing.T) {
	cell := func(s, m int) result.CellResult {
		c := sweepCell("hc_up", 0, 320, m, 96, fc{tile: ref, us: 100})
		c.Cell.Dims = kernel.Dims{"M": m, "S": s, "K": 320}
		return c
	}
	p, err := Select(context.Background(), []result.CellResult{cell(2560, 16), cell(2560, 32)}, SelectOptions{Reference: ref, Operator: "hc_up_f16", Dims: []string{"S", "K"}})
	if err != nil {
		t.Fatal(err)
	}
	s := p.Shape("hc_up")
	if got, ok := s.DimsOf(p.Dims); !ok || !slices.Equal(got, []int{2560, 320}) {
		t.Errorf("dims %v %v (shape %+v)", got, ok, s)
	}
	if p.Operator != "hc_up_f16" || !slices.Equal(p.Dims, []string{"S", "K"}) {
		t.Errorf("operator %q dims %v", p.Operator, p.Dims)
	}
	var md strings.Builder
	if err := Markdown(&md, p); err != nil || !strings.Contains(md.String(), "### hc_up (K 320, S 2560, 96 calls per chunk)") {
		t.Errorf("decision table: %v\n%s", err, md.String())
	}
	if _, err := Select(context.Background(), []result.CellResult{cell(2560, 16), cell(1280, 32)}, SelectOptions{Reference: ref}); err == nil || !strings.Contains(err.Error(), "swept as K 320, S 2560 and as K 320, S 1280") {
		t.Errorf("two sizes: %v", err)
	}
}

func itoa(m int) string { return strconv.Itoa(m) }

// TestSelectNothingAdmitted: a shape whose only OK tiles are of another
// class than the baseline's, and too few to move it, keeps the baseline
// (no admitted candidate of its class) rather than failing.
func TestSelectNothingAdmitted(t *testing.T) {
	cells := []result.CellResult{
		classCell("h", 256, fc{tile: ref, status: result.ParityFailed}, fc{tile: "sk2", us: 50}),
		classCell("h", 1024, fc{tile: ref, status: result.ParityFailed}),
	}
	p, err := Select(context.Background(), cells, SelectOptions{Reference: ref, Describe: describeFixture})
	if err != nil {
		t.Fatal(err)
	}
	if d := decision(t, p, "h", 256); d.Chosen != ref || !strings.Contains(d.Reason, "no admitted candidate") {
		t.Errorf("M=256: %+v", d)
	}
}
