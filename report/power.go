package report

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// A PowerState is the state a provenance's cells were measured in, read
// from the per-round sensor readings the sweep stores with each cell
// (result.CellResult.Clocks, e.g. "sm_mhz=1785 temp_c=52 power_w=698
// limit_w=700 max_mhz=1980"): the SM clock range, the temperatures and,
// where the readings hold them, the board power against its limit. Under
// sustained load a GPU sits at its power limit with its clocks well under
// their maximum ("power-limited"): absolute times then read slower than a
// short burst of the same kernel (a microbenchmark), while the paired
// ratios, taken in the same rounds, hold.
type PowerState struct {
	// Readings counts the readings, Cells the cells with any.
	Readings int `json:"readings"`
	Cells    int `json:"cells"`
	// SMMHz is the range of the SM clock readings, MedianMHz their median;
	// MaxMHz the device's maximum SM clock where a reading says it (else
	// 0).
	SMMHz     [2]int `json:"sm_mhz"`
	MedianMHz int    `json:"median_mhz"`
	MaxMHz    int    `json:"max_mhz,omitempty"`
	// TempC is the range of the temperature readings ([0, 0] when none).
	TempC [2]int `json:"temp_c"`
	// PowerW is the range of the board power readings and LimitW the
	// enforced power limit, where the readings hold them (0 otherwise).
	PowerW [2]float64 `json:"power_w"`
	LimitW float64    `json:"limit_w,omitempty"`
	// PowerLimited counts the cells whose median clock lies well under the
	// maximum (below 90 %) while the power sits at its limit (at least 95 %
	// of it); Throttled those whose median clock lies well under the
	// maximum (or, without a known maximum, the highest reading).
	PowerLimited int `json:"power_limited"`
	Throttled    int `json:"throttled"`
	// Summary says it in one line.
	Summary string `json:"summary"`
}

// CellClocks is the sensor readings of one cell (every run merged into it).
type CellClocks struct {
	Readings     int     `json:"readings"`
	MinMHz       int     `json:"min_mhz"`
	MaxMHz       int     `json:"max_mhz"`
	MedianMHz    int     `json:"median_mhz"`
	PowerW       float64 `json:"power_w,omitempty"` // median
	LimitW       float64 `json:"limit_w,omitempty"`
	PowerLimited bool    `json:"power_limited,omitempty"`
}

// A reading is one parsed sensor reading.
type reading struct {
	mhz, temp, maxMHz int
	power, limit      float64
}

// parseReading reads "sm_mhz=1980 temp_c=41 power_w=650 limit_w=700
// max_mhz=1980" (fields in any order, unknown ones ignored); ok is false
// without an SM clock.
func parseReading(s string) (reading, bool) {
	var r reading
	for _, f := range strings.Fields(s) {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			continue
		}
		x, err := strconv.ParseFloat(v, 64)
		if err != nil || x < 0 {
			continue
		}
		switch k {
		case "sm_mhz":
			r.mhz = int(x)
		case "temp_c":
			r.temp = int(x)
		case "max_mhz":
			r.maxMHz = int(x)
		case "power_w":
			r.power = x
		case "limit_w":
			r.limit = x
		}
	}
	return r, r.mhz > 0
}

// Clock thresholds: a median clock under throttledBelow × the maximum is
// well under it; a median power at least atLimit × the limit is at it.
const (
	throttledBelow = 0.9
	atLimit        = 0.95
)

// powerState reads the sensor readings of sec's cells into each cell's
// Clocks and returns the section's PowerState (nil when no cell has a
// reading: the CPU backend records none).
func powerState(sec *Section) *PowerState {
	ps := &PowerState{}
	var all, temps []int
	var powers []float64
	perCell := make([][]reading, len(sec.Cells))
	for i := range sec.Cells {
		for _, run := range sec.Cells[i].Runs {
			for _, s := range run.Clocks {
				r, ok := parseReading(s)
				if !ok {
					continue
				}
				perCell[i] = append(perCell[i], r)
				all = append(all, r.mhz)
				if r.temp > 0 {
					temps = append(temps, r.temp)
				}
				if r.power > 0 {
					powers = append(powers, r.power)
				}
				ps.MaxMHz = max(ps.MaxMHz, r.maxMHz)
				ps.LimitW = max(ps.LimitW, r.limit)
			}
		}
	}
	if len(all) == 0 {
		return nil
	}
	ps.Readings = len(all)
	ps.SMMHz = [2]int{slices.Min(all), slices.Max(all)}
	ps.MedianMHz = medianInt(all)
	if len(temps) > 0 {
		ps.TempC = [2]int{slices.Min(temps), slices.Max(temps)}
	}
	if len(powers) > 0 {
		ps.PowerW = [2]float64{slices.Min(powers), slices.Max(powers)}
	}
	top := ps.MaxMHz
	if top == 0 {
		top = ps.SMMHz[1]
	}
	for i, rs := range perCell {
		if len(rs) == 0 {
			continue
		}
		ps.Cells++
		mhz := make([]int, len(rs))
		var pw []float64
		limit := 0.0
		for j, r := range rs {
			mhz[j] = r.mhz
			if r.power > 0 {
				pw = append(pw, r.power)
			}
			limit = max(limit, r.limit)
		}
		cc := &CellClocks{Readings: len(rs), MinMHz: slices.Min(mhz), MaxMHz: slices.Max(mhz), MedianMHz: medianInt(mhz), LimitW: limit}
		if len(pw) > 0 {
			cc.PowerW = median(pw)
		}
		under := float64(cc.MedianMHz) < throttledBelow*float64(top)
		if under {
			ps.Throttled++
		}
		if under && limit > 0 && cc.PowerW >= atLimit*limit {
			cc.PowerLimited = true
			ps.PowerLimited++
		}
		sec.Cells[i].Clocks = cc
	}
	ps.Summary = powerSummary(ps, top)
	return ps
}

// powerSummary says a PowerState in one line.
func powerSummary(ps *PowerState, top int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Measured at SM clocks %d–%d MHz (median %d", ps.SMMHz[0], ps.SMMHz[1], ps.MedianMHz)
	if ps.MaxMHz > 0 {
		fmt.Fprintf(&b, ", maximum %d", ps.MaxMHz)
	}
	b.WriteString(")")
	if ps.TempC[1] > 0 {
		fmt.Fprintf(&b, ", %d–%d °C", ps.TempC[0], ps.TempC[1])
	}
	if ps.PowerW[1] > 0 {
		fmt.Fprintf(&b, ", board power %.0f–%.0f W", ps.PowerW[0], ps.PowerW[1])
		if ps.LimitW > 0 {
			fmt.Fprintf(&b, " of a %.0f W limit", ps.LimitW)
		}
	}
	fmt.Fprintf(&b, ", over %d %s in %d %s. ", ps.Readings, plural(ps.Readings, "reading", "readings"), ps.Cells, plural(ps.Cells, "cell", "cells"))
	switch {
	case ps.PowerLimited > 0:
		fmt.Fprintf(&b, "**Power-limited** in %d of %d cells (clocks under %.0f%% of %d MHz at the power limit): the sustained state a serving engine runs in — absolute times read slower than a short burst of the same kernel (a microbenchmark), while paired ratios, timed in the same rounds, hold.",
			ps.PowerLimited, ps.Cells, 100*throttledBelow, top)
	case ps.Throttled > 0 && ps.PowerW[1] == 0:
		fmt.Fprintf(&b, "Clocks under %.0f%% of %d MHz in %d of %d cells (throttled; these readings hold no power, so power and heat cannot be told apart): absolute times there read slower than a burst would, while paired ratios hold.",
			100*throttledBelow, top, ps.Throttled, ps.Cells)
	case ps.Throttled > 0:
		fmt.Fprintf(&b, "Clocks under %.0f%% of %d MHz in %d of %d cells, below the power limit (thermal or another cap): absolute times there read slower than a burst would, while paired ratios hold.",
			100*throttledBelow, top, ps.Throttled, ps.Cells)
	default:
		b.WriteString("Clocks stayed near their maximum: not power-limited.")
	}
	return b.String()
}

// medianInt is the median of xs, rounded down, without changing xs.
func medianInt(xs []int) int {
	f := make([]float64, len(xs))
	for i, x := range xs {
		f[i] = float64(x)
	}
	return int(median(f))
}
