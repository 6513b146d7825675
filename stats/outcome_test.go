package stats

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
)

// drifting returns n paired samples: A at base µs, B at base·ratio, both
// multiplied by the same ±30 % drift of their round, each with its own
// ±0.3 % noise.
func drifting(n int, base, ratio float64) (a, b []float64) {
	for i := range n {
		d := 1 + 0.3*math.Sin(float64(i)*1.3)
		a = append(a, base*d*(1+0.003*math.Cos(float64(i)*2.1)))
		b = append(b, base*ratio*d*(1+0.003*math.Sin(float64(i)*3.7+1)))
	}
	return a, b
}

func TestCompareIsPairedOrSequential(t *testing.T) {
	a, b := drifting(48, 100, 0.95)
	o := DefaultOptions()
	fixed, err := Compare(a, b, o, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := Paired(a, b, o)
	if fixed.Ratio != c.Median || fixed.Lo != c.Lo || fixed.Hi != c.Hi || fixed.Verdict != c.Verdict || fixed.Pairs != 48 || fixed.Look != 0 {
		t.Errorf("fixed: %+v; Paired gives %+v", fixed, c)
	}
	if fixed.BracketLo != c.BracketLo || fixed.BracketHi != c.BracketHi || !fixed.Decided() || !fixed.Compared() {
		t.Errorf("fixed brackets or flags: %+v", fixed)
	}
	so := DefaultSequentialOptions()
	seq, err := Compare(a, b, o, &so)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := Sequential(a, b, so)
	if seq.Verdict != Faster || seq.Pairs != s.Pairs || seq.Look != s.Look || seq.Ratio != s.Median || seq.Lo != s.Lo {
		t.Errorf("sequential: %+v; Sequential gives %+v", seq, s)
	}
	if seq.Pairs != 12 || seq.Look != 1 {
		t.Errorf("a 5 %% gain under ±0.3 %% noise is decided at the first look: %+v", seq)
	}
	// Undecided: a 1 % difference on noisy pairs within 12 rounds.
	na, nb := drifting(12, 100, 1.0)
	for i := range nb {
		nb[i] *= 1 + 0.02*math.Sin(float64(i)*5)
	}
	und, _ := Compare(na, nb, o, &so)
	if und.Verdict != Undecided || und.Decided() || !und.Compared() {
		t.Errorf("noisy 12 pairs: %+v; want undecided", und)
	}
	if _, err := Compare(a, b[:3], o, nil); err == nil {
		t.Error("lengths differ: no error")
	}
	if _, err := Compare(a, b[:3], o, &so); err == nil {
		t.Error("lengths differ (sequential): no error")
	}
	if (Outcome{}).Compared() {
		t.Error("the zero Outcome compared something")
	}
}

// TestOutcomeEncodes: brackets and intervals that do not exist (NaN) are 0,
// so an Outcome always encodes as JSON.
func TestOutcomeEncodes(t *testing.T) {
	c, err := Unpaired([]float64{1, 2, 3, 4, 5, 6, 7}, []float64{2, 3, 4, 5, 6, 7, 8}, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	o := OutcomeOf(c)
	if o.BracketLo != 0 || o.BracketHi != 0 {
		t.Errorf("unpaired brackets %v %v; want 0", o.BracketLo, o.BracketHi)
	}
	if _, err := json.Marshal(o); err != nil {
		t.Errorf("encode: %v", err)
	}
	b, _ := json.Marshal(Outcome{Ratio: 0.9, Lo: 0.8, Hi: 0.95, Verdict: Faster, Pairs: 12})
	if got := string(b); got != `{"ratio":0.9,"lo":0.8,"hi":0.95,"verdict":"faster","pairs":12}` {
		t.Errorf("JSON %s", got)
	}
	tot := Total{A: 10, B: 9, Ratio: 0.9, Lo: math.NaN(), Hi: 0.95, Verdict: Tie, Warnings: []string{"w"}}
	if got := tot.Outcome(); !reflect.DeepEqual(got, Outcome{Ratio: 0.9, Hi: 0.95, Verdict: Tie, Warnings: []string{"w"}}) {
		t.Errorf("total outcome %+v", got)
	}
}

// TestWeightedTotalPrefix: a B that left the adaptive rounds early holds
// the first rounds only; the total anchors it on all of A, as
// AnchoredMedian does.
func TestWeightedTotalPrefix(t *testing.T) {
	a, b := drifting(48, 100, 0.9)
	short := b[:12]
	tot, err := WeightedTotal([]Weighted{{Weight: 3, A: a, B: short}}, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if want := 3 * AnchoredMedian(a, short); math.Abs(tot.B-want) > 1e-9 {
		t.Errorf("B %v; want 3 × AnchoredMedian = %v", tot.B, want)
	}
	if want := 3 * Median(a); math.Abs(tot.A-want) > 1e-9 {
		t.Errorf("A %v; want %v (every round of A)", tot.A, want)
	}
	if tot.Verdict != Faster || !(tot.Lo <= 0.9 && 0.9 <= tot.Hi) || tot.Hi-tot.Lo > 0.02 {
		t.Errorf("prefix total %+v; want faster around 0.9", tot)
	}
}

// TestWeightedTotalUnpaired: cells from two runs are not paired; their
// ratio is the ratio of medians, drift between the runs is not cancelled
// (the interval is far wider than the paired one), and a warning says so.
func TestWeightedTotalUnpaired(t *testing.T) {
	a, b := drifting(24, 100, 0.9)
	paired, err := WeightedTotal([]Weighted{{Weight: 1, A: a, B: b}}, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	// B from another run: the same times, in another order of rounds.
	other := append(append([]float64(nil), b[7:]...), b[:7]...)
	un, err := WeightedTotal([]Weighted{{Weight: 1, A: a, B: other[:20], Unpaired: true}}, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if want := Median(other[:20]); math.Abs(un.B-want) > 1e-9 {
		t.Errorf("unpaired B %v; want median(B) = %v", un.B, want)
	}
	if un.Hi-un.Lo < 5*(paired.Hi-paired.Lo) {
		t.Errorf("unpaired interval [%v, %v] not much wider than the paired [%v, %v]", un.Lo, un.Hi, paired.Lo, paired.Hi)
	}
	if len(un.Warnings) != 1 || !strings.Contains(un.Warnings[0], "not timed in the same rounds") {
		t.Errorf("warnings %q", un.Warnings)
	}
}

func TestTotalsByM(t *testing.T) {
	a, b := drifting(12, 100, 0.9)
	c, d := drifting(12, 50, 1.0)
	cells := []ChunkCell{
		{M: 512, Weighted: Weighted{Weight: 2, A: a, B: b}},
		{M: 256, Weighted: Weighted{Weight: 1, A: c, B: d}},
		{M: 512, Weighted: Weighted{Weight: 1, A: c, B: d}},
	}
	got := TotalsByM(cells, DefaultOptions())
	if len(got) != 3 || got[0].M != 256 || got[1].M != 512 || got[2].M != 0 {
		t.Fatalf("totals %+v; want M 256, 512, all", got)
	}
	if got[0].Cells != 1 || got[1].Cells != 2 || got[2].Cells != 3 {
		t.Errorf("cells %d %d %d", got[0].Cells, got[1].Cells, got[2].Cells)
	}
	want, _ := WeightedTotal([]Weighted{cells[0].Weighted, cells[2].Weighted}, DefaultOptions())
	if !reflect.DeepEqual(got[1].Total, want) || got[1].Err != nil {
		t.Errorf("M 512: %+v; WeightedTotal gives %+v", got[1].Total, want)
	}
	if one := TotalsByM(cells[:1], DefaultOptions()); len(one) != 1 {
		t.Errorf("one M: %d totals; want no sum over every M", len(one))
	}
	bad := TotalsByM([]ChunkCell{{M: 1, Weighted: Weighted{Weight: -1, A: a, B: b}}}, DefaultOptions())
	if len(bad) != 1 || bad[0].Err == nil {
		t.Errorf("negative weight: %+v", bad)
	}
}

func TestMedianInPlace(t *testing.T) {
	for n := 1; n < 60; n++ {
		for seed := range 5 {
			xs := make([]float64, n)
			for i := range xs {
				xs[i] = float64((i*7919+seed*104729)%13) + float64(i%3)/10 // ties included
			}
			want := Median(xs)
			if got := medianInPlace(xs); got != want {
				t.Fatalf("n=%d seed=%d: %v; want %v", n, seed, got, want)
			}
		}
	}
	// All equal, thousands of them: linear, not quadratic.
	same := make([]float64, 200000)
	for i := range same {
		same[i] = 1.5
	}
	if got := medianInPlace(same); got != 1.5 {
		t.Errorf("all equal: %v", got)
	}
}
