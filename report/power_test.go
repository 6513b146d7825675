package report

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tilefit/tilefit/result"
)

// TestPowerState: the report names the state a provenance was measured in
// from the per-round sensor readings stored with its cells — the SM clock
// range per cell and overall, and "power-limited" where the clocks sit
// well under their maximum at the power limit (issue 19: the power state
// was invisible, so absolute times read 10–20% off a microbenchmark with
// no reason given).
func TestPowerState(t *testing.T) {
	t0 := time.Unix(0, 0).UTC()
	readings := func(mhz, power int) []string {
		var out []string
		for i := 0; i < 6; i++ {
			out = append(out, "sm_mhz="+itoa(mhz+15*(i%2))+" temp_c=60 power_w="+itoa(power)+" limit_w=700 max_mhz=1980")
		}
		return out
	}
	hot := row("Wqkv", 1983, t0, ok("ref", 10, 10, 10, 10, 10, 10), ok("x", 9, 9, 9, 9, 9, 9))
	hot.Clocks = readings(1410, 699)
	cool := row("Wqkv", 256, t0, ok("ref", 1, 1, 1, 1, 1, 1), ok("x", 1, 1, 1, 1, 1, 1))
	cool.Clocks = readings(1965, 420)
	doc := build(Input{Cells: []result.CellResult{cool, hot}})
	sec := doc.Provenances[0]
	ps := sec.Power
	if ps == nil {
		t.Fatal("no power state from stored readings")
	}
	if ps.SMMHz != [2]int{1410, 1980} || ps.MaxMHz != 1980 || ps.LimitW != 700 || ps.PowerLimited != 1 || ps.Cells != 2 {
		t.Errorf("power state %+v", *ps)
	}
	for _, want := range []string{"Measured at SM clocks 1410–1980 MHz", "board power 420–699 W of a 700 W limit", "**Power-limited** in 1 of 2 cells", "paired ratios, timed in the same rounds, hold"} {
		if !strings.Contains(ps.Summary, want) {
			t.Errorf("summary lacks %q: %s", want, ps.Summary)
		}
	}
	var md, page strings.Builder
	if err := Markdown(&md, Input{Cells: []result.CellResult{cool, hot}}); err != nil {
		t.Fatal(err)
	}
	if err := HTML(&page, Input{Cells: []result.CellResult{cool, hot}}); err != nil {
		t.Fatal(err)
	}
	for view, text := range map[string]string{"Markdown": md.String(), "HTML": page.String()} {
		for _, want := range []string{"SM MHz", "1410–1425 (power-limited)", "1965–1980", "Power-limited"} {
			if !strings.Contains(text, want) {
				t.Errorf("the %s report lacks %q", view, want)
			}
		}
	}
	// Old readings without power: throttling is named, not blamed on power.
	old := row("A", 4, t0, ok("ref", 1, 1, 1, 1, 1, 1))
	old.Clocks = []string{"sm_mhz=1500 temp_c=80", "sm_mhz=1980 temp_c=70"}
	other := row("A", 8, t0, ok("ref", 1, 1, 1, 1, 1, 1))
	other.Clocks = []string{"sm_mhz=1980 temp_c=50", "sm_mhz=1980 temp_c=50"}
	ps = build(Input{Cells: []result.CellResult{old, other}}).Provenances[0].Power
	if ps == nil || ps.PowerLimited != 0 || ps.Throttled != 1 || !strings.Contains(ps.Summary, "power and heat cannot be told apart") {
		t.Errorf("old readings: %+v", ps)
	}
	// The CPU backend stores no readings: no power state.
	if build(Input{Cells: []result.CellResult{row("A", 4, t0, ok("ref", 1))}}).Provenances[0].Power != nil {
		t.Error("a power state without readings")
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestNoVendorSaid: a provenance without a vendor baseline (OpenBLAS not
// installed) says so in the Markdown, the HTML and the JSON, not only on
// the sweep's stderr (issue 19: `"vendors": []` and nothing else).
func TestNoVendorSaid(t *testing.T) {
	in := Input{Cells: []result.CellResult{row("A", 4, time.Unix(0, 0).UTC(), ok("ref", 2, 2, 2), ok("x", 1, 1, 1))}}
	var md, page, js strings.Builder
	if err := Markdown(&md, in); err != nil {
		t.Fatal(err)
	}
	if err := HTML(&page, in); err != nil {
		t.Fatal(err)
	}
	if err := JSON(&js, in); err != nil {
		t.Fatal(err)
	}
	want := "No vendor baseline: no OpenBLAS time in any cell (libopenblas.so.0 not installed where the sweep ran, or --vendor=false)"
	for view, text := range map[string]string{"Markdown": md.String(), "HTML": page.String()} {
		if !strings.Contains(text, want) {
			t.Errorf("the %s report does not say there is no vendor baseline", view)
		}
	}
	if !strings.Contains(js.String(), `"no vendor baseline: no OpenBLAS time in any cell`) {
		t.Errorf("the JSON report does not say there is no vendor baseline:\n%s", js.String())
	}
}
