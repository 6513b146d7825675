package policy

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tilefit/tilefit/result"
	"github.com/tilefit/tilefit/stats"
)

const ref = "64_128_2"

// drift multiplies both samples of round i alike (±30 %); noise is each
// sample's own ±0.4 %.
func drift(i int) float64 { return 1 + 0.3*math.Sin(float64(i)*1.7) }

func noise(i int, salt string) float64 {
	h := fnv.New32a()
	h.Write([]byte(salt))
	return 0.004 * math.Cos(float64(i)*2.3+float64(h.Sum32()%1000))
}

func samples(us float64, salt string) []float64 {
	s := make([]float64, 12)
	for i := range s {
		s[i] = us * drift(i) * (1 + noise(i, salt))
	}
	return s
}

// fc is a fixture candidate: its median µs in the sweep.
type fc struct {
	tile   string
	us     float64
	status result.Status
	diff   bool // output not bitwise equal to the reference
	vendor bool
}

var prov = result.Provenance{Backend: "cpu", Device: "test cpu", Arch: "x86_64", Compiler: "cc 1", Family: "gemm_f16", SourceHash: strings.Repeat("ab", 32), Operator: "gemm_f16", Types: "X=f16,W=f16,Y=f32"}

func sweepCell(shape string, n, k, m, calls int, cands ...fc) result.CellResult {
	c := result.CellResult{Prov: prov, Cell: result.Cell{Shape: shape, N: n, K: k, M: m, Calls: calls}, Reference: ref,
		Rounds: 12, Sets: 2, Started: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC), Finished: time.Date(2025, 1, 2, 3, 4, 6, 0, time.UTC)}
	for _, f := range cands {
		st := f.status
		if st == "" {
			st = result.OK
		}
		cand := result.Candidate{Tile: f.tile, Status: st, Vendor: f.vendor, Bitwise: !f.diff && !f.vendor, Dispatches: 4}
		if st == result.OK {
			cand.Samples = samples(f.us, fmt.Sprint(shape, m, f.tile))
		}
		c.Candidates = append(c.Candidates, cand)
	}
	return c
}

// conf is an injected confirmation: the candidate's true ratio to the
// baseline at a baseline time.
type conf struct {
	us, ratio float64
	diff      bool
	failed    string
}

type confirmer struct {
	byCell map[string]conf
	calls  []string
}

func (c *confirmer) confirm(ctx context.Context, cell result.Cell, baseline, cand Tile) (Confirmation, error) {
	key := fmt.Sprintf("%s/%d/%s/%s", cell.Shape, cell.M, baseline.Name, cand.Name)
	c.calls = append(c.calls, key)
	x, ok := c.byCell[key]
	if !ok {
		return Confirmation{}, errors.New("no fixture for " + key)
	}
	if x.failed != "" {
		return Confirmation{Failed: x.failed}, nil
	}
	a, b := make([]float64, 12), make([]float64, 12)
	for i := range a {
		a[i] = x.us * drift(i+5) * (1 + noise(i, key+"a"))
		b[i] = x.us * x.ratio * drift(i+5) * (1 + noise(i, key+"b"))
	}
	return Confirmation{A: a, B: b, Bitwise: !x.diff}, nil
}

func rulesOf(t *testing.T, p Policy, shape string) []Rule {
	t.Helper()
	s := p.Shape(shape)
	if s == nil {
		t.Fatalf("no rules for %s", shape)
	}
	return s.Rules
}

func decision(t *testing.T, p Policy, shape string, m int) Decision {
	t.Helper()
	for _, d := range p.Cells {
		if d.Shape == shape && d.M == m {
			return d
		}
	}
	t.Fatalf("no decision for %s M=%d", shape, m)
	return Decision{}
}

func TestSelectThresholds(t *testing.T) {
	ms := []int{256, 512, 1024, 1983, 2048}
	var cells []result.CellResult
	cf := &confirmer{byCell: map[string]conf{}}
	for _, m := range ms {
		u := float64(m)
		// Wout: the baseline is fastest up to 1024, 128_64_2 from 1983.
		if m < 1983 {
			cells = append(cells, sweepCell("Wout", 2560, 6144, m, 48, fc{tile: ref, us: u}, fc{tile: "128_64_2", us: u * 1.1}))
		} else {
			cells = append(cells, sweepCell("Wout", 2560, 6144, m, 48, fc{tile: ref, us: u}, fc{tile: "128_64_2", us: u * 0.8}))
			cf.byCell[fmt.Sprintf("Wout/%d/%s/128_64_2", m, ref)] = conf{us: u, ratio: 0.82}
		}
		// Walbe: two departures, 16_64_1 up to 512, 32_64_1 from 1024.
		a, b := 0.7, 0.9
		if m >= 1024 {
			a, b = 0.9, 0.7
		}
		cells = append(cells, sweepCell("Walbe", 48, 2560, m, 72, fc{tile: ref, us: u}, fc{tile: "16_64_1", us: u * a}, fc{tile: "32_64_1", us: u * b}))
		win := "16_64_1"
		if m >= 1024 {
			win = "32_64_1"
		}
		cf.byCell[fmt.Sprintf("Walbe/%d/%s/%s", m, ref, win)] = conf{us: u, ratio: 0.75}
		// hc: a departure at 256 only.
		if m == 256 {
			cells = append(cells, sweepCell("hc", 324, 10240, m, 96, fc{tile: ref, us: u}, fc{tile: "32_128_2", us: u * 0.9}))
			cf.byCell[fmt.Sprintf("hc/%d/%s/32_128_2", m, ref)] = conf{us: u, ratio: 0.9}
		} else {
			cells = append(cells, sweepCell("hc", 324, 10240, m, 96, fc{tile: ref, us: u}, fc{tile: "32_128_2", us: u * 1.2}))
		}
	}
	p, err := Select(context.Background(), cells, SelectOptions{Reference: ref, RequireBitwise: true, Stats: stats.DefaultOptions(), Confirm: cf.confirm})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		shape string
		want  []Rule
	}{
		// Baseline up to 1024, departure from 1983: the gap keeps the baseline.
		{"Wout", []Rule{{Tile: ref, Below: 1983}, {Tile: "128_64_2"}}},
		// Two departures: the midpoint of 512 and 1024.
		{"Walbe", []Rule{{Tile: "16_64_1", Below: 768}, {Tile: "32_64_1"}}},
		// Departure at 256, baseline from 512: the departure stops at 256.
		{"hc", []Rule{{Tile: "32_128_2", Below: 257}, {Tile: ref}}},
	} {
		if got := rulesOf(t, p, c.shape); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s rules = %+v; want %+v", c.shape, got, c.want)
		}
	}
	for _, d := range p.Cells {
		if tile, _ := p.Lookup(d.Shape, d.M); tile != d.Chosen {
			t.Errorf("%s M=%d: Lookup %s != Chosen %s", d.Shape, d.M, tile, d.Chosen)
		}
	}
	if d := decision(t, p, "Wout", 1024); d.Confirmed || d.Chosen != ref || d.Best != ref {
		t.Errorf("Wout 1024: %+v; want the baseline, best, unconfirmed", d)
	}
	if d := decision(t, p, "Wout", 2048); !d.Confirmed || d.Verdict != "faster" || d.Chosen != "128_64_2" || d.Hi >= 0.99 {
		t.Errorf("Wout 2048: %+v", d)
	}
	// Every winner that is not the baseline was confirmed, and only those.
	if len(cf.calls) != 2+5+1 {
		t.Errorf("confirmations %v; want 8", cf.calls)
	}
}

func TestSelectKeepsBaseline(t *testing.T) {
	m := 512
	cells := []result.CellResult{
		// The sweep's winner is 3 % faster, the confirmation says 0.5 %: tie.
		sweepCell("noise", 64, 64, m, 1, fc{tile: ref, us: 100}, fc{tile: "32_64_1", us: 97}),
		// The confirmation finds the winner slower: the sweep's lead was luck.
		sweepCell("curse", 64, 64, m, 1, fc{tile: ref, us: 100}, fc{tile: "32_64_1", us: 95}),
		// The confirmation finds the outputs differ.
		sweepCell("bits", 64, 64, m, 1, fc{tile: ref, us: 100}, fc{tile: "32_64_1", us: 80}),
		// The fastest is a parity failure and the vendor: neither admitted.
		sweepCell("parity", 64, 64, m, 1, fc{tile: ref, us: 100}, fc{tile: "16_32_1", us: 50, status: result.ParityFailed},
			fc{tile: "openblas", us: 40, vendor: true}, fc{tile: "32_64_1", us: 120}),
		// A compile failure of the winner in the confirmation.
		sweepCell("fails", 64, 64, m, 1, fc{tile: ref, us: 100}, fc{tile: "32_64_1", us: 80}),
	}
	cf := &confirmer{byCell: map[string]conf{
		"noise/512/64_128_2/32_64_1": {us: 100, ratio: 0.995},
		"curse/512/64_128_2/32_64_1": {us: 100, ratio: 1.04},
		"bits/512/64_128_2/32_64_1":  {us: 100, ratio: 0.8, diff: true},
		"fails/512/64_128_2/32_64_1": {failed: "B: compile: boom"},
	}}
	p, err := Select(context.Background(), cells, SelectOptions{Reference: ref, RequireBitwise: true, Confirm: cf.confirm})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		shape   string
		verdict stats.Verdict
		reason  string
	}{
		{"noise", "tie", "inside the noise"},
		{"curse", "slower", "was luck"},
		{"bits", "faster", "differs from the baseline"},
		{"parity", "", "the baseline is the fastest admitted"},
		{"fails", "", "compile: boom"},
	} {
		d := decision(t, p, c.shape, m)
		if d.Chosen != ref || d.Verdict != c.verdict || !strings.Contains(d.Reason, c.reason) {
			t.Errorf("%s: chosen %s verdict %q reason %q; want %s, %q, %q", c.shape, d.Chosen, d.Verdict, d.Reason, ref, c.verdict, c.reason)
		}
		if got := rulesOf(t, p, c.shape); !reflect.DeepEqual(got, []Rule{{Tile: ref}}) {
			t.Errorf("%s rules %+v", c.shape, got)
		}
	}
	if d := decision(t, p, "parity", m); d.Vendor != "openblas" || math.Abs(d.VendorUS-40) > 3 {
		t.Errorf("vendor not shown beside: %+v", d)
	}
	if d := decision(t, p, "noise", m); math.Abs(d.SweepRatio-0.97) > 0.005 || d.Hi < 0.99 {
		t.Errorf("noise: sweep ratio %v interval [%v, %v]", d.SweepRatio, d.Lo, d.Hi)
	}

	// Without --require-bitwise the differing output is admitted.
	p, err = Select(context.Background(), cells[2:3], SelectOptions{Reference: ref, Confirm: cf.confirm})
	if err != nil {
		t.Fatal(err)
	}
	if d := decision(t, p, "bits", m); d.Chosen != "32_64_1" || d.Bitwise {
		t.Errorf("bits without require-bitwise: %+v", d)
	}
}

func TestSelectFromSweepSamples(t *testing.T) {
	cells := []result.CellResult{
		sweepCell("a", 64, 64, 16, 1, fc{tile: ref, us: 100}, fc{tile: "32_64_1", us: 90}),
		sweepCell("a", 64, 64, 32, 1, fc{tile: ref, us: 100}, fc{tile: "32_64_1", us: 99.3}),
	}
	p, err := Select(context.Background(), cells, SelectOptions{Reference: ref, RequireBitwise: true})
	if err != nil {
		t.Fatal(err)
	}
	if p.Options.Confirmed {
		t.Error("Options.Confirmed without a confirmer")
	}
	if d := decision(t, p, "a", 16); d.Chosen != "32_64_1" || d.Confirmed || !strings.Contains(d.Reason, "not re-measured") {
		t.Errorf("M=16: %+v", d)
	}
	// 0.994 [0.990, 0.997] straddles the band's lower edge: undecided (a
	// tie only when the interval lies inside the ±1% band).
	if d := decision(t, p, "a", 32); d.Chosen != ref || d.Best != "32_64_1" || d.Verdict != "undecided" || !strings.Contains(d.Reason, "fixed rounds") {
		t.Errorf("M=32: %+v", d)
	}
	if got := rulesOf(t, p, "a"); !reflect.DeepEqual(got, []Rule{{Tile: "32_64_1", Below: 17}, {Tile: ref}}) {
		t.Errorf("rules %+v", got)
	}
}

func TestSelectMaxRules(t *testing.T) {
	// Departures alternate between two tiles; at most 2 rules must pick the
	// cheapest merge, each cell on its baseline or its confirmed winner.
	ms := []int{100, 200, 300, 400}
	wins := []string{"A_1_1", "64_128_2", "A_1_1", "64_128_2"}
	var cells []result.CellResult
	cf := &confirmer{byCell: map[string]conf{}}
	for i, m := range ms {
		if wins[i] == ref {
			cells = append(cells, sweepCell("s", 64, 64, m, 1, fc{tile: ref, us: 100}, fc{tile: "A_1_1", us: 110}))
			continue
		}
		cells = append(cells, sweepCell("s", 64, 64, m, 1, fc{tile: ref, us: 100}, fc{tile: "A_1_1", us: 50}))
		cf.byCell[fmt.Sprintf("s/%d/%s/A_1_1", m, ref)] = conf{us: 100, ratio: 0.5 + 0.1*float64(i)}
	}
	p, err := Select(context.Background(), cells, SelectOptions{Reference: ref, Confirm: cf.confirm})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(rulesOf(t, p, "s")); got != 4 {
		t.Fatalf("uncapped: %d rules; want 4", got)
	}
	p, err = Select(context.Background(), cells, SelectOptions{Reference: ref, Confirm: cf.confirm, MaxRules: 2})
	if err != nil {
		t.Fatal(err)
	}
	// Options: A at 100 (50 µs) vs 300 (70 µs). Keeping A at 100 alone
	// saves 50, at 300 alone 30: the best two rules are A below 101, else ref.
	if got, want := rulesOf(t, p, "s"), []Rule{{Tile: "A_1_1", Below: 101}, {Tile: ref}}; !reflect.DeepEqual(got, want) {
		t.Errorf("max 2 rules: %+v; want %+v", got, want)
	}
	if d := decision(t, p, "s", 300); d.Chosen != ref || !strings.Contains(d.Reason, "--max-rules") {
		t.Errorf("M=300 after merging: %+v", d)
	}
}

func TestSelectBaselinePolicy(t *testing.T) {
	base := Policy{Version: Version, Family: "gemm_f16", Backend: "cpu", Baseline: "none", Default: ref,
		Shapes: []Shape{
			{Shape: "a", Rules: []Rule{{Tile: "32_64_1", Below: 300}, {Tile: ref}}},
			{Shape: "unswept", Rules: []Rule{{Tile: "16_64_1"}}},
		}}
	cells := []result.CellResult{
		sweepCell("a", 64, 64, 256, 1, fc{tile: ref, us: 90}, fc{tile: "32_64_1", us: 100}),
		sweepCell("a", 64, 64, 512, 1, fc{tile: ref, us: 100}, fc{tile: "32_64_1", us: 110}),
	}
	cf := &confirmer{byCell: map[string]conf{"a/256/32_64_1/64_128_2": {us: 100, ratio: 0.9}}}
	p, err := Select(context.Background(), cells, SelectOptions{Reference: ref, Baseline: &base, BaselineName: "policy base.json", Confirm: cf.confirm})
	if err != nil {
		t.Fatal(err)
	}
	if d := decision(t, p, "a", 256); d.Baseline != "32_64_1" || d.Chosen != ref {
		t.Errorf("a 256: %+v", d)
	}
	if got := rulesOf(t, p, "unswept"); !reflect.DeepEqual(got, base.Shapes[1].Rules) {
		t.Errorf("unswept shape lost its baseline rules: %+v", got)
	}
	if p.Baseline != "policy base.json" || p.Default != ref {
		t.Errorf("baseline %q default %q", p.Baseline, p.Default)
	}
}

func TestSelectErrors(t *testing.T) {
	a := sweepCell("a", 64, 64, 16, 1, fc{tile: ref, us: 100})
	b := a
	b.Prov.Device = "other"
	if _, err := Select(context.Background(), []result.CellResult{a, b}, SelectOptions{Reference: ref}); err == nil || !strings.Contains(err.Error(), "two provenances") {
		t.Errorf("mixed provenances: %v", err)
	}
	c2 := sweepCell("a", 64, 128, 32, 1, fc{tile: ref, us: 100})
	if _, err := Select(context.Background(), []result.CellResult{a, c2}, SelectOptions{Reference: ref}); err == nil || !strings.Contains(err.Error(), "swept as N 64, K 64 and as N 64, K 128") {
		t.Errorf("one name, two sizes: %v", err)
	}
	if _, err := Select(context.Background(), nil, SelectOptions{Reference: ref}); err == nil {
		t.Error("no cells: no error")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c := sweepCell("a", 64, 64, 16, 1, fc{tile: ref, us: 100}, fc{tile: "32_64_1", us: 50})
	_, err := Select(ctx, []result.CellResult{c}, SelectOptions{Reference: ref, Confirm: func(ctx context.Context, _ result.Cell, _, _ Tile) (Confirmation, error) {
		return Confirmation{}, ctx.Err()
	}})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled confirmation: %v", err)
	}
}

// TestSelectBaselineKeepsItsSwitches: where the baseline policy itself
// switches tiles between two measured M, "the baseline keeps the gaps"
// keeps its threshold there (issue 11 item 9: a second select with a
// policy as the baseline moved Walbe's and Wsg's <130 to the midpoint <82).
func TestSelectBaselineKeepsItsSwitches(t *testing.T) {
	base := Policy{Version: Version, Family: "gemm_f16", Backend: "cpu", Baseline: "none", Default: ref,
		Shapes: []Shape{
			{Shape: "kept", Rules: []Rule{{Tile: "16_64_1", Below: 130}, {Tile: "32_64_1"}}},
			{Shape: "departs", Rules: []Rule{{Tile: "16_64_1", Below: 100}, {Tile: "32_64_1"}}},
			{Shape: "departed", Rules: []Rule{{Tile: "16_64_1", Below: 100}, {Tile: "32_64_1"}}},
			{Shape: "twice", Rules: []Rule{{Tile: "16_64_1", Below: 60}, {Tile: ref, Below: 90}, {Tile: "32_64_1"}}},
		}}
	cells := []result.CellResult{
		// kept: the baseline is the fastest at both measured M.
		sweepCell("kept", 48, 520, 33, 72, fc{tile: "16_64_1", us: 90}, fc{tile: "32_64_1", us: 100}),
		sweepCell("kept", 48, 520, 130, 72, fc{tile: "16_64_1", us: 110}, fc{tile: "32_64_1", us: 100}),
		// departs: the baseline kept at 33, a confirmed departure at 130.
		sweepCell("departs", 48, 520, 33, 72, fc{tile: "16_64_1", us: 90}, fc{tile: "32_64_1", us: 100}),
		sweepCell("departs", 48, 520, 130, 72, fc{tile: "32_64_1", us: 100}, fc{tile: "64_32_1", us: 80}),
		// departed: a confirmed departure at 33, the baseline kept at 130.
		sweepCell("departed", 48, 520, 33, 72, fc{tile: "16_64_1", us: 90}, fc{tile: "64_32_1", us: 70}),
		sweepCell("departed", 48, 520, 130, 72, fc{tile: "16_64_1", us: 110}, fc{tile: "32_64_1", us: 100}),
		// twice: the baseline switches twice between the measured 33 and 130.
		sweepCell("twice", 48, 520, 33, 72, fc{tile: "16_64_1", us: 90}, fc{tile: "32_64_1", us: 100}),
		sweepCell("twice", 48, 520, 130, 72, fc{tile: "16_64_1", us: 110}, fc{tile: "32_64_1", us: 100}),
	}
	cf := &confirmer{byCell: map[string]conf{
		"departs/130/32_64_1/64_32_1": {us: 100, ratio: 0.8},
		"departed/33/16_64_1/64_32_1": {us: 90, ratio: 0.78},
	}}
	p, err := Select(context.Background(), cells, SelectOptions{Reference: ref, Baseline: &base, BaselineName: "policy base.json", Confirm: cf.confirm})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		shape string
		want  []Rule
	}{
		{"kept", []Rule{{Tile: "16_64_1", Below: 130}, {Tile: "32_64_1"}}},
		{"departs", []Rule{{Tile: "16_64_1", Below: 100}, {Tile: "32_64_1", Below: 130}, {Tile: "64_32_1"}}},
		{"departed", []Rule{{Tile: "64_32_1", Below: 34}, {Tile: "16_64_1", Below: 100}, {Tile: "32_64_1"}}},
		{"twice", []Rule{{Tile: "16_64_1", Below: 60}, {Tile: ref, Below: 90}, {Tile: "32_64_1"}}},
	} {
		if got := rulesOf(t, p, tc.shape); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: rules %+v; want %+v (the baseline's own switches stay where they are)", tc.shape, got, tc.want)
		}
	}
	// Every M between the measured ones gets the baseline's tile unless
	// both neighbours departed.
	for _, shape := range []string{"kept", "departs", "departed", "twice"} {
		for m := 34; m < 130; m++ {
			want, _ := base.Lookup(shape, m)
			if got, _ := p.Lookup(shape, m); got != want {
				t.Errorf("%s M=%d: %s; want the baseline's %s (nobody measured it)", shape, m, got, want)
				break
			}
		}
	}
}
