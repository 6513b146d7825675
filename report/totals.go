package report

import (
	"fmt"
	"slices"
	"sort"

	"github.com/tilefit/tilefit/result"
	"github.com/tilefit/tilefit/stats"
)

// samplesOf returns a candidate's samples and whether every one is a
// value (a sample that is not can not be paired by round).
func samplesOf(c *Candidate) ([]float64, bool) {
	out := make([]float64, 0, len(c.SamplesUs))
	all := true
	for _, x := range c.SamplesUs {
		if x.valid() && x > 0 {
			out = append(out, float64(x))
		} else {
			all = false
		}
	}
	return out, all
}

// weighted pairs candidate b with a, its anchor, in one cell of weight w:
// round by round when both come from the same run (b's first rounds when
// it left them early; a's first when a did), else unpaired. ok is false
// when either has no samples.
func weighted(w float64, a, b *Candidate) (stats.Weighted, bool) {
	as, aAll := samplesOf(a)
	bs, bAll := samplesOf(b)
	if len(as) == 0 || len(bs) == 0 {
		return stats.Weighted{}, false
	}
	if a.Run != b.Run || !aAll || !bAll {
		return stats.Weighted{Weight: w, A: as, B: bs, Unpaired: true}, true
	}
	if len(bs) > len(as) {
		bs = bs[:len(as)]
	}
	return stats.Weighted{Weight: w, A: as, B: bs}, true
}

// totals adds up the chunk at every M: per column (the reference, the best
// tile per cell, each vendor; with several numerics classes, the best of
// one class per shape and each class's best), Σ over the chunk's shapes of
// calls × µs/call ÷ 1000, each a stats.WeightedTotal anchored on the
// reference tile (see Total).
func totals(sec Section, shapes []Shape) (chunk []string, out []Total) {
	var chunkShapes []shapeKey
	callsOf := map[shapeKey]int{}
	if len(shapes) > 0 {
		for _, s := range shapes {
			k := shapeKey{s.Name, s.N, s.K}
			if _, ok := callsOf[k]; !ok {
				chunkShapes = append(chunkShapes, k)
				callsOf[k] = s.Calls
			}
		}
	} else {
		for _, c := range sec.Cells {
			k := shapeKey{c.Shape, c.N, c.K}
			if _, ok := callsOf[k]; !ok {
				chunkShapes = append(chunkShapes, k)
			}
			callsOf[k] = c.Calls
		}
	}
	chunk = []string{}
	for _, k := range chunkShapes {
		chunk = append(chunk, k.name)
	}
	var ms []int
	cells := map[cellKey]*Cell{}
	for i := range sec.Cells {
		c := &sec.Cells[i]
		if !slices.Contains(ms, c.M) {
			ms = append(ms, c.M)
		}
		cells[cellKey{c.Shape, c.N, c.K, c.M}] = c
	}
	sort.Ints(ms)
	multi := len(sec.Classes) > 1
	var classNames []string
	if multi {
		for _, cl := range sec.Classes {
			classNames = append(classNames, cl.Name)
		}
	}
	so := stats.DefaultOptions()
	values := so
	values.Resamples = 1 // a column's value needs no interval
	out = []Total{}
	for _, m := range ms {
		cols := append([]string{"reference", "best"}, sec.Vendors...)
		if multi {
			cols = append(cols, "oneclass")
			for _, cl := range classNames {
				cols = append(cols, "class "+cl)
			}
		}
		ws := map[string][]stats.Weighted{}
		anchored := map[string]bool{} // every cell of the column anchored on the reference
		vs := map[string][]stats.Weighted{}
		covers := map[string][]string{} // the shapes each sum covers
		t := Total{M: m, VendorMs: map[string]num{}, VendorOverBest: map[string]num{}, Missing: []string{}, partial: map[string]bool{}}
		for _, col := range cols {
			anchored[col] = true
		}
		for _, k := range chunkShapes {
			calls := float64(callsOf[k])
			c := cells[cellKey{k.name, k.n, k.k, m}]
			if c == nil {
				t.Missing = append(t.Missing, k.name+": no cell")
				for _, col := range cols {
					t.partial[col] = true
				}
				continue
			}
			var ref *Candidate
			if rc := c.find(c.Reference, false); rc != nil && rc.Status == result.OK && c.ReferenceUs.valid() {
				ref = rc
			}
			cand := map[string]*Candidate{}
			for _, col := range cols {
				var x *Candidate
				var why string
				switch {
				case col == "reference":
					x, why = ref, "no reference time"
				case col == "best":
					why = "no OK tile"
					if c.Best != "" {
						x = c.find(c.Best, false)
					}
				case col == "oneclass":
					why = "no tile of its one class"
					if c.OneClass != nil {
						x = c.find(c.OneClass.Tile, false)
					}
				case len(col) > 6 && col[:6] == "class ":
					why = "no tile of class " + col[6:]
					if b, ok := c.BestByClass[col[6:]]; ok {
						x = c.find(b.Tile, false)
					}
				default:
					why = "no " + col + " time"
					if vc := c.find(col, false); vc != nil && vc.Status == result.OK {
						x = vc
					}
				}
				var w stats.Weighted
				ok := x != nil
				if ok {
					if ref != nil {
						w, ok = weighted(calls, ref, x)
					} else {
						w, ok = weighted(calls, x, x)
						anchored[col] = false
					}
				}
				if !ok {
					// The class columns only say which shapes a class lacks.
					if col[:min(6, len(col))] != "class " {
						t.Missing = append(t.Missing, k.name+": "+why)
					}
					t.partial[col] = true
					continue
				}
				cand[col] = x
				ws[col] = append(ws[col], w)
				covers[col] = append(covers[col], k.name)
			}
			for _, v := range sec.Vendors {
				for _, base := range []string{"best", "oneclass"} {
					if cand[v] != nil && cand[base] != nil {
						if w, ok := weighted(calls, cand[base], cand[v]); ok {
							vs[v+"/"+base] = append(vs[v+"/"+base], w)
						}
					}
				}
			}
		}
		t.Complete = len(t.Missing) == 0
		value := func(col string) num {
			if len(ws[col]) == 0 {
				return none
			}
			tot, err := stats.WeightedTotal(ws[col], values)
			if err != nil {
				return none
			}
			return num(tot.B / 1000)
		}
		warn := func(ws []string) {
			for _, w := range ws {
				if !slices.Contains(t.Warnings, w) {
					t.Warnings = append(t.Warnings, w)
				}
			}
		}
		// compare is the total of ws with its interval, when the sums it
		// relates cover the same shapes.
		compare := func(a, b string, ws []stats.Weighted) (num, *stats.Outcome) {
			if len(ws) == 0 || !slices.Equal(covers[a], covers[b]) || len(ws) != len(covers[b]) {
				return none, nil
			}
			tot, err := stats.WeightedTotal(ws, so)
			if err != nil {
				return none, nil
			}
			warn(tot.Warnings)
			o := tot.Outcome()
			return num(tot.Ratio), &o
		}
		t.ReferenceMs, t.BestMs = value("reference"), value("best")
		if anchored["best"] {
			t.BestOverReference, t.BestVsReference = compare("best", "reference", ws["best"])
		} else {
			t.BestOverReference = none
		}
		for _, v := range sec.Vendors {
			t.VendorMs[v] = value(v)
			var o *stats.Outcome
			t.VendorOverBest[v], o = compare(v, "best", vs[v+"/best"])
			if o != nil {
				if t.VendorVsBest == nil {
					t.VendorVsBest = map[string]*stats.Outcome{}
				}
				t.VendorVsBest[v] = o
			}
		}
		if multi {
			t.OneClassMs = value("oneclass")
			if anchored["oneclass"] {
				_, t.OneClassOverReference = compare("oneclass", "reference", ws["oneclass"])
			}
			t.ClassMs = map[string]num{}
			for _, cl := range classNames {
				t.ClassMs[cl] = value("class " + cl)
			}
			for _, v := range sec.Vendors {
				if _, o := compare(v, "oneclass", vs[v+"/oneclass"]); o != nil {
					if t.VendorVsOneClass == nil {
						t.VendorVsOneClass = map[string]*stats.Outcome{}
					}
					t.VendorVsOneClass[v] = o
				}
			}
		}
		out = append(out, t)
	}
	return chunk, out
}

// ratioText is an Outcome's ratio with its interval, "0.912 [0.905, 0.920]",
// or "—".
func ratioText(o *stats.Outcome) string {
	if o == nil || o.Ratio == 0 {
		return "—"
	}
	return fmt.Sprintf("%.3f [%.3f, %.3f]", o.Ratio, o.Lo, o.Hi)
}
