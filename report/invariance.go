package report

import (
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/tilefit/tilefit/verify"
)

// Invariance is the batch-invariance check of a provenance: for every
// shape and candidate, the output rows of each M compared with those of
// the largest M with rows (verify.CheckInvariance).
type Invariance struct {
	// Summary is the line the Markdown prints under the parity line, e.g.
	// "BATCH-INVARIANT: 5 tiles × 5 shapes (0 of 190 rows changed) · cublas
	// 1332 of 3315 rows changed".
	Summary string `json:"summary"`
	// AllInvariant: every family tile compared is invariant, and at least
	// one was compared.
	AllInvariant bool `json:"all_invariant"`
	// Tiles and Changed count the family tiles compared on some shape and
	// those whose rows changed on some shape.
	Tiles   int `json:"tiles"`
	Changed int `json:"changed"`
	// Vendors counts each vendor's rows changed and compared over every
	// shape: "cublas" → [changed, compared].
	Vendors map[string][2]int `json:"vendors"`
	Shapes  []ShapeInvariance `json:"shapes"`
}

// ShapeInvariance is one shape's batch-invariance check.
type ShapeInvariance struct {
	Shape string `json:"shape"`
	N     int    `json:"n"`
	K     int    `json:"k"`
	// Ms are the shape's M cells, ascending; RowMs those at which some
	// family tile stored row hashes (passed verification).
	Ms         []int            `json:"ms"`
	RowMs      []int            `json:"row_ms,omitempty"`
	Candidates []TileInvariance `json:"candidates"`
}

// TileInvariance is one candidate's batch invariance on one shape.
type TileInvariance struct {
	Tile   string `json:"tile"`
	Vendor bool   `json:"vendor"`
	// Status is "invariant", "changed" or "n/a" (Note says why: "one M",
	// "not recorded", "inputs differ", "no common output").
	Status string `json:"status"`
	Note   string `json:"note"`
	// Text is what the Markdown shows: "0 of 38 rows changed", "n/a: one M".
	Text string `json:"text"`
	// LargestM is the largest M with rows, the one every other M is
	// compared with; ComparedMs the M compared with it.
	LargestM   int   `json:"largest_m"`
	ComparedMs []int `json:"compared_ms"`
	// Rows and Changed add up the rows compared and changed.
	Rows    int `json:"rows"`
	Changed int `json:"changed"`
	// First is the first changed row (smallest M, then row).
	First *RowChange `json:"first,omitempty"`
}

// RowChange names a changed row: row Row of output Operand at M differs
// from the same row at Against.
type RowChange struct {
	M       int    `json:"m"`
	Against int    `json:"against_m"`
	Row     int    `json:"row"`
	Operand string `json:"operand"`
}

// CellInvariance is a candidate's row comparison in one cell: its rows at
// the cell's M against those at the largest M of the shape.
type CellInvariance struct {
	AgainstM int `json:"against_m"`
	Rows     int `json:"rows"`
	Changed  int `json:"changed"`
}

// invariance checks the merged cells of one provenance (mcs and cells in
// the same order) and fills each compared candidate's Invariance.
func invariance(mcs []*mcell, cells []Cell, vendors []string) Invariance {
	inv := Invariance{Vendors: map[string][2]int{}, Shapes: []ShapeInvariance{}}
	type key struct {
		name string
		n, k int
	}
	var order []key
	byShape := map[key][]int{}
	for i, mc := range mcs {
		k := key{mc.key.shape, mc.key.n, mc.key.k}
		if _, ok := byShape[k]; !ok {
			order = append(order, k)
		}
		byShape[k] = append(byShape[k], i)
	}
	tiles, changedTiles := map[string]bool{}, map[string]bool{}
	// Where each changed tile first changed, grouped by shape and count:
	// "a, b on Wout (2 of 37 rows changed)".
	type where struct{ shape, text string }
	var wheres []where
	tilesAt := map[where][]string{}
	shapes := 0
	rows, rowsChanged := 0, 0
	for _, k := range order {
		si := ShapeInvariance{Shape: k.name, N: k.n, K: k.k, Candidates: []TileInvariance{}}
		// Every candidate's side per M, in candidate order of first sight.
		type cand struct {
			tile   string
			vendor bool
			sides  []verify.RowSide
			at     map[int]*Candidate
		}
		var cands []*cand
		index := map[string]*cand{}
		for _, ci := range byShape[k] {
			mc := mcs[ci]
			si.Ms = append(si.Ms, mc.key.m)
			for j, rc := range mc.cands {
				if rc.AA {
					continue
				}
				c := index[rc.Tile]
				if c == nil {
					c = &cand{tile: rc.Tile, vendor: rc.Vendor, at: map[int]*Candidate{}}
					index[rc.Tile] = c
					cands = append(cands, c)
				}
				c.at[mc.key.m] = cells[ci].find(rc.Tile, false)
				if len(rc.Rows) > 0 && !rc.Vendor && !slices.Contains(si.RowMs, mc.key.m) {
					si.RowMs = append(si.RowMs, mc.key.m)
				}
				if len(rc.Rows) > 0 {
					row := mc.rows[mc.run[j]]
					c.sides = append(c.sides, verify.RowSide{M: mc.key.m, InputKey: row.InputKey, InputRows: row.InputRows, Rows: rc.Rows})
				}
			}
		}
		sort.Ints(si.Ms)
		sort.Ints(si.RowMs)
		shapeCompared := false
		for _, c := range cands {
			v := verify.CheckInvariance(c.sides)
			ti := TileInvariance{Tile: c.tile, Vendor: c.vendor, Note: v.NA, Text: v.String(), LargestM: v.Largest,
				ComparedMs: append([]int{}, v.Compared...), Rows: v.Rows, Changed: v.Changed}
			switch {
			case v.NA != "":
				ti.Status = "n/a"
			case v.Changed > 0:
				ti.Status = "changed"
			default:
				ti.Status = "invariant"
			}
			if f := v.First; f != nil {
				ti.First = &RowChange{M: f.M, Against: f.Against, Row: f.Row, Operand: f.Operand}
			}
			si.Candidates = append(si.Candidates, ti)
			markCells(c.sides, v, c.at)
			if v.NA != "" {
				continue
			}
			if c.vendor {
				t := inv.Vendors[c.tile]
				inv.Vendors[c.tile] = [2]int{t[0] + v.Changed, t[1] + v.Rows}
				continue
			}
			shapeCompared = true
			tiles[c.tile] = true
			rows += v.Rows
			rowsChanged += v.Changed
			if v.Changed > 0 {
				if !changedTiles[c.tile] {
					w := where{k.name, v.String()}
					if tilesAt[w] == nil {
						wheres = append(wheres, w)
					}
					tilesAt[w] = append(tilesAt[w], c.tile)
				}
				changedTiles[c.tile] = true
			}
		}
		if shapeCompared {
			shapes++
		}
		inv.Shapes = append(inv.Shapes, si)
	}
	inv.Tiles, inv.Changed = len(tiles), len(changedTiles)
	inv.AllInvariant = inv.Tiles > 0 && inv.Changed == 0
	dims := strconv.Itoa(inv.Tiles) + plural(inv.Tiles, " tile", " tiles") + " × " + strconv.Itoa(shapes) + plural(shapes, " shape", " shapes")
	switch {
	case inv.AllInvariant:
		inv.Summary = "BATCH-INVARIANT: " + dims + " (" + strconv.Itoa(rows) + " tile rows compared across M, none changed)"
	case inv.Tiles > 0:
		var shown []string
		for i, w := range wheres {
			if i == 6 {
				shown = append(shown, "and more")
				break
			}
			names := tilesAt[w]
			if len(names) > 4 {
				names = append(slices.Clip(names[:3]), strconv.Itoa(len(names)-3)+" more")
			}
			shown = append(shown, strings.Join(names, ", ")+" on "+w.shape+" ("+w.text+")")
		}
		inv.Summary = "NOT BATCH-INVARIANT: " + strconv.Itoa(inv.Changed) + " of " + strconv.Itoa(inv.Tiles) + " tiles changed rows across M (" +
			strconv.Itoa(rowsChanged) + " of " + strconv.Itoa(rows) + " tile rows over " + dims + ") — " + strings.Join(shown, "; ")
	default:
		inv.Summary = "BATCH INVARIANCE NOT CHECKED: " + notChecked(inv.Shapes)
	}
	var vparts []string
	for _, name := range vendors {
		if t, ok := inv.Vendors[name]; ok {
			vparts = append(vparts, name+" "+strconv.Itoa(t[0])+" of "+strconv.Itoa(t[1])+" rows changed")
		}
	}
	if len(vparts) > 0 {
		inv.Summary += " · " + strings.Join(vparts, ", ")
	}
	return inv
}

// markCells gives the candidate of every compared M (at, by M) its rows
// against the largest M's (the latest side of each M).
func markCells(sides []verify.RowSide, v verify.Invariance, at map[int]*Candidate) {
	for _, m := range v.Compared {
		var side, big verify.RowSide
		for _, s := range sides {
			if s.M == m {
				side = s // the latest
			}
			if s.M == v.Largest {
				big = s
			}
		}
		d := verify.CompareRows(side, big)
		if cc := at[m]; cc != nil {
			cc.Invariance = &CellInvariance{AgainstM: v.Largest, Rows: d.Rows, Changed: d.Changed}
		}
	}
}

// notChecked says why no family tile was compared: for shapes swept at
// several M whose tiles passed verification at one M only, which M those
// were (the rows of a failed tile are not recorded, so "not recorded, one
// M" would hide that the others failed); else the notes of the shapes'
// candidates, most common first ("one M", "not recorded", ...).
func notChecked(shapes []ShapeInvariance) string {
	var partial []string
	for _, s := range shapes {
		if len(s.Ms) < 2 || len(s.RowMs) != 1 {
			continue
		}
		var failed []string
		for _, m := range s.Ms {
			if m != s.RowMs[0] {
				failed = append(failed, strconv.Itoa(m))
			}
		}
		if len(partial) == 3 {
			partial = append(partial, "…")
			break
		}
		partial = append(partial, s.Shape+" has verified tiles at M="+strconv.Itoa(s.RowMs[0])+" only (no tile passed verification at M "+strings.Join(failed, ", ")+")")
	}
	if len(partial) > 0 {
		return "rows of one M only — " + strings.Join(partial, "; ")
	}
	count := map[string]int{}
	for _, s := range shapes {
		for _, c := range s.Candidates {
			if !c.Vendor && c.Note != "" {
				count[c.Note]++
			}
		}
	}
	if len(count) == 0 || len(count) == 1 && count[verify.NotRecorded] > 0 {
		return "no row hashes stored (cells of a tilefit before schema 3, or no verified tile)"
	}
	var notes []string
	for n := range count {
		notes = append(notes, n)
	}
	sort.Slice(notes, func(i, j int) bool {
		if count[notes[i]] != count[notes[j]] {
			return count[notes[i]] > count[notes[j]]
		}
		return notes[i] < notes[j]
	})
	return strings.Join(notes, ", ")
}

// tilesText is the Markdown "tiles" column of a shape: "5 of 5 invariant
// (38 rows each)", "3 of 5 invariant; changed: `a` 12 of 38 rows (row 0 of
// Y at M=37), …", "n/a: one M".
func tilesText(s ShapeInvariance) string {
	var ok, changed, na []TileInvariance
	for _, c := range s.Candidates {
		switch {
		case c.Vendor:
		case c.Status == "invariant":
			ok = append(ok, c)
		case c.Status == "changed":
			changed = append(changed, c)
		case c.Note != verify.NotRecorded:
			na = append(na, c)
		}
	}
	compared := len(ok) + len(changed)
	if compared == 0 {
		if len(na) > 0 {
			return "n/a: " + na[0].Note
		}
		return "n/a: " + verify.NotRecorded
	}
	lo, hi := -1, 0
	for _, c := range append(append([]TileInvariance{}, ok...), changed...) {
		if lo < 0 || c.Rows < lo {
			lo = c.Rows
		}
		hi = max(hi, c.Rows)
	}
	rows := strconv.Itoa(hi) + " rows each"
	if lo != hi {
		rows = strconv.Itoa(lo) + "–" + strconv.Itoa(hi) + " rows"
	}
	text := strconv.Itoa(len(ok)) + " of " + strconv.Itoa(compared) + " invariant (" + rows + ")"
	if len(changed) > 0 {
		// Tiles that changed the same rows alike (a whole numerics class
		// does) are listed together.
		type group struct {
			what  string
			tiles []string
		}
		var groups []*group
		byWhat := map[string]*group{}
		for _, c := range changed {
			what := c.Text
			if f := c.First; f != nil {
				what += " (first: row " + strconv.Itoa(f.Row) + " of " + f.Operand + " at M=" + strconv.Itoa(f.M) + ")"
			}
			g := byWhat[what]
			if g == nil {
				g = &group{what: what}
				byWhat[what] = g
				groups = append(groups, g)
			}
			g.tiles = append(g.tiles, code(c.Tile))
		}
		var parts []string
		for i, g := range groups {
			if i == 6 {
				parts = append(parts, "and "+strconv.Itoa(len(groups)-6)+" more")
				break
			}
			names := g.tiles
			if len(names) > 4 {
				names = append(slices.Clip(names[:3]), "and "+strconv.Itoa(len(g.tiles)-3)+" more")
			}
			parts = append(parts, strings.Join(names, ", ")+" "+g.what)
		}
		text += "; changed: " + strings.Join(parts, "; ")
	}
	if len(na) > 0 {
		text += "; " + strconv.Itoa(len(na)) + " n/a (" + na[0].Note + ")"
	}
	return text
}

// vendorText is a vendor's Markdown column of a shape.
func vendorText(s ShapeInvariance, vendor string) string {
	for _, c := range s.Candidates {
		if c.Vendor && c.Tile == vendor {
			return c.Text
		}
	}
	return "—"
}

// recorded reports whether any candidate of inv has row hashes.
func (inv Invariance) recorded() bool {
	for _, s := range inv.Shapes {
		for _, c := range s.Candidates {
			if c.Note != verify.NotRecorded {
				return true
			}
		}
	}
	return false
}
