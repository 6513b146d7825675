package report

import (
	"math"
	"sort"

	"github.com/tilefit/tilefit/result"
)

// A resourceRow is one tile's kernel resources beside its times: what the
// register-pressure and occupancy arguments of a tile choice rest on.
type resourceRow struct {
	Tile string
	// Regs, Local and Shared: registers per thread, local bytes per thread
	// (spills), shared memory bytes per block; -1 when unknown.
	Regs, Local, Shared int
	// Cells is the number of cells with a time, Fastest those where the
	// tile was the fastest OK tile.
	Cells, Fastest int
	// Geomean is the geometric mean of the tile's time ratio to the
	// reference over the cells with a ratio (NaN when none).
	Geomean num
}

// resourceRows returns the tiles of sec whose backend reported resources,
// in order of their geometric-mean ratio (fastest first). Vendor routines
// and A/A twins are left out.
func resourceRows(sec Section) []resourceRow {
	type agg struct {
		row       resourceRow
		logSum    float64
		n         int
		firstSeen int
	}
	aggs := map[string]*agg{}
	var order []*agg
	for _, c := range sec.Cells {
		for _, cand := range c.Candidates {
			if cand.Vendor || cand.AA || cand.Resources == nil {
				continue
			}
			a := aggs[cand.Tile]
			if a == nil {
				a = &agg{row: resourceRow{Tile: cand.Tile, Regs: -1, Local: -1, Shared: -1}, firstSeen: len(order)}
				aggs[cand.Tile] = a
				order = append(order, a)
			}
			// The latest report of a resource wins (a recompiled tile
			// reports the same numbers).
			for k, dst := range map[string]*int{result.ResRegs: &a.row.Regs, result.ResLocalBytes: &a.row.Local, result.ResSharedBytes: &a.row.Shared} {
				if v, ok := cand.Resources[k]; ok {
					*dst = v
				}
			}
			if cand.Status == result.OK && cand.MedianUs.valid() {
				a.row.Cells++
			}
			if cand.RatioToReference.valid() && cand.RatioToReference > 0 {
				a.logSum += math.Log(float64(cand.RatioToReference))
				a.n++
			}
		}
		if c.Best != "" {
			if a := aggs[c.Best]; a != nil {
				a.row.Fastest++
			}
		}
	}
	rows := make([]resourceRow, 0, len(order))
	for _, a := range order {
		a.row.Geomean = none
		if a.n > 0 {
			a.row.Geomean = num(math.Exp(a.logSum / float64(a.n)))
		}
		rows = append(rows, a.row)
	}
	sort.SliceStable(rows, func(i, j int) bool {
		gi, gj := rows[i].Geomean, rows[j].Geomean
		if gi.valid() != gj.valid() {
			return gi.valid()
		}
		return gi.valid() && gi < gj
	})
	return rows
}
