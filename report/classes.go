package report

import (
	"math"
	"sort"
	"strings"

	"github.com/tilefit/tilefit/result"
)

// A Class is a numerics class of a provenance's tiles
// (kernel.Family.Numerics): tiles of one class must compute the same bits
// in every cell. The sweep checks each tile against its class's reference
// in every cell: for the class of the cell's reference tile, the reference
// tile itself; for any other class (e.g. a split-K one), the class's first
// verified tile in that cell.
type Class struct {
	Name string `json:"name"`
	// Tiles counts the distinct tiles of the class; Families names their
	// families.
	Tiles    int      `json:"tiles"`
	Families []string `json:"families"`
	// Reference says what its tiles are checked against, in words.
	Reference string `json:"reference"`
}

// ClassBest is the fastest OK tile of a numerics class in a cell, at the
// time the cell ranks it by (Candidate.RankedUs).
type ClassBest struct {
	Tile string `json:"tile"`
	Us   num    `json:"us"`
}

// A ShapeClass is the numerics class a shape would keep at every M: the one
// whose fastest tiles (left out: tiles whose rows changed with M) give the
// shape the least production-weighted time Σ calls × µs over the M of the
// section, among the classes with a tile at each of them. One class per
// shape keeps the engine's outputs batch-invariant; tilefit select starts
// from the same choice (and confirms it).
type ShapeClass struct {
	Shape string `json:"shape"`
	N     int    `json:"n"`
	K     int    `json:"k"`
	Class string `json:"class"`
	// Us is the shape's Σ calls × µs per class over its M (null for a class
	// that lacks a tile at some M).
	Us map[string]num `json:"us"`
}

// classOf returns the numerics class of a family candidate of a cell of
// provenance prov: the class the sweep stored with it (result.Candidate.
// Class; a loader fills in those of older databases, see
// result.FillClasses), else its family's name.
func classOf(prov result.Provenance, c *Candidate) string {
	if c.Vendor {
		return ""
	}
	if c.Class != "" {
		return c.Class
	}
	if c.Family != "" {
		return c.Family
	}
	fam, _, _ := strings.Cut(prov.Family, ",")
	return fam
}

// classify names the numerics class of every family candidate of sec and
// of each cell's reference, lists the classes, gives each cell the shape's
// one-class choice (Cell.OneClass: with one class, its fastest tile whose
// rows kept their bits across M) and, when there are several, the fastest
// tile of every class (Cell.BestByClass) and the choice (ShapeClasses).
func classify(sec *Section) {
	type info struct {
		tiles map[string]bool
		fams  map[string]bool
	}
	classes := map[string]*info{}
	var order []string
	mainClass := ""
	for i := range sec.Cells {
		c := &sec.Cells[i]
		for j := range c.Candidates {
			cand := &c.Candidates[j]
			if cand.Vendor {
				continue
			}
			cand.Class = classOf(sec.Provenance, cand)
			if cand.AA {
				continue
			}
			in := classes[cand.Class]
			if in == nil {
				in = &info{tiles: map[string]bool{}, fams: map[string]bool{}}
				classes[cand.Class] = in
				order = append(order, cand.Class)
			}
			in.tiles[cand.Tile] = true
			fam := cand.Family
			if fam == "" {
				fam, _, _ = strings.Cut(sec.Provenance.Family, ",")
			}
			in.fams[fam] = true
		}
		if ref := c.find(c.Reference, false); ref != nil {
			c.ReferenceClass = ref.Class
			if c.Reference == sec.Reference {
				mainClass = ref.Class
			}
		}
	}
	sec.Classes = []Class{}
	for _, name := range order {
		in := classes[name]
		cl := Class{Name: name, Tiles: len(in.tiles), Reference: "its first verified tile in each cell"}
		for f := range in.fams {
			cl.Families = append(cl.Families, f)
		}
		sort.Strings(cl.Families)
		if name == mainClass {
			cl.Reference = "the reference tile " + sec.Reference
		}
		sec.Classes = append(sec.Classes, cl)
	}
	// The reference's class first.
	sort.SliceStable(sec.Classes, func(i, j int) bool { return sec.Classes[i].Name == mainClass && sec.Classes[j].Name != mainClass })
	multi := len(sec.Classes) > 1

	// Tiles whose rows changed with M on a shape (the report's check, or
	// the sweep's parity failure) are left out of its one-class choice.
	changed := map[shapeKey]map[string]bool{}
	for _, s := range sec.Invariance.Shapes {
		k := shapeKey{s.Shape, s.N, s.K}
		for _, t := range s.Candidates {
			if t.Status == "changed" && !t.Vendor {
				if changed[k] == nil {
					changed[k] = map[string]bool{}
				}
				changed[k][t.Tile] = true
			}
		}
	}
	byShape := map[shapeKey][]int{}
	var shapes []shapeKey
	for i := range sec.Cells {
		c := &sec.Cells[i]
		k := shapeKey{c.Shape, c.N, c.K}
		if _, ok := byShape[k]; !ok {
			shapes = append(shapes, k)
		}
		byShape[k] = append(byShape[k], i)
		for _, cand := range c.Candidates {
			if cand.Status == result.ParityFailed && strings.HasPrefix(cand.Detail, "not batch-invariant") {
				if changed[k] == nil {
					changed[k] = map[string]bool{}
				}
				changed[k][cand.Tile] = true
			}
		}
	}
	for _, k := range shapes {
		idx := byShape[k]
		best := map[string][]*ClassBest{} // per class, per cell of the shape
		for n, i := range idx {
			c := &sec.Cells[i]
			if multi {
				c.BestByClass = map[string]ClassBest{}
			}
			for j := range c.Candidates {
				cand := &c.Candidates[j]
				if cand.Vendor || cand.AA || cand.Status != result.OK || !cand.RankedUs.valid() {
					continue
				}
				if b, ok := c.BestByClass[cand.Class]; multi && (!ok || cand.RankedUs < b.Us) {
					c.BestByClass[cand.Class] = ClassBest{Tile: cand.Tile, Us: cand.RankedUs}
				}
				if changed[k][cand.Tile] {
					continue
				}
				if best[cand.Class] == nil {
					best[cand.Class] = make([]*ClassBest, len(idx))
				}
				if b := best[cand.Class][n]; b == nil || cand.RankedUs < b.Us {
					best[cand.Class][n] = &ClassBest{Tile: cand.Tile, Us: cand.RankedUs}
				}
			}
		}
		sc := ShapeClass{Shape: k.name, N: k.n, K: k.k, Us: map[string]num{}}
		bestUs := math.Inf(1)
		for _, cl := range sec.Classes {
			per := best[cl.Name]
			sum := 0.0
			for n, i := range idx {
				if per == nil || per[n] == nil {
					sum = math.NaN()
					break
				}
				sum += float64(max(sec.Cells[i].Calls, 1)) * float64(per[n].Us)
			}
			sc.Us[cl.Name] = num(sum)
			if !math.IsNaN(sum) && sum < bestUs {
				bestUs, sc.Class = sum, cl.Name
			}
		}
		if sc.Class == "" {
			continue
		}
		if multi {
			sec.ShapeClasses = append(sec.ShapeClasses, sc)
		}
		for n, i := range idx {
			b := *best[sc.Class][n]
			sec.Cells[i].OneClass = &b
		}
	}
}

// inClassBitwise reports whether a family candidate is bitwise equal to its
// class's reference in its cell: the reference tile for the reference's
// class (Bitwise), and, for another class, its OK status (the sweep fails a
// tile that differs from its class's first verified tile).
func inClassBitwise(c *Cell, cand *Candidate) bool {
	if cand.Bitwise {
		return true
	}
	return cand.Status == result.OK && cand.Class != "" && c.ReferenceClass != "" && cand.Class != c.ReferenceClass
}
