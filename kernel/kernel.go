// Package kernel describes kernel families: a kernel source with compile-time
// parameters, the values each parameter may take, the restrictions between
// them, and how a parameter assignment (a candidate tile) is named.
//
// A family computes an Operator (operator.go: named dimensions, typed
// operands, counts, inputs, a float64 reference) and owns its launch (Plan:
// grid, block, shared memory, cluster, kernel parameters). Families and
// vendor baselines live in a Registry (families.go), built by the caller:
// the built-in catalogue (package builtin: builtin.Register) plus a user's
// own. This package declares none of them.
//
// Tile names: the family's positional parameters (Family.Positional, for
// gemm_f16 on the CPU TM, TN and THREADS) joined by "_" — "64_128_2" is
// TM=64, TN=128, THREADS=2 — followed by ".<name><value>" for every other
// parameter whose value differs from its default (the first of Param.Sweep),
// e.g. "64_128_2.tk128". Parameter names in the suffix are lower-case.
package kernel

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Vendor tile names. A vendor candidate runs the vendor library (OpenBLAS on
// the CPU, cuBLAS on CUDA) instead of a family source.
const (
	VendorOpenBLAS = "openblas"
	VendorCuBLAS   = "cublas"
	// VendorCuBLASLt is cuBLASLt with its own autotuning (VendorGemmLt).
	VendorCuBLASLt = "cublaslt"
)

// A Param is one compile-time parameter of a family, passed to the compiler
// as -DNAME=VALUE.
type Param struct {
	Name string
	// Values are all values the parameter may take.
	Values []int
	// Sweep are the values a default sweep enumerates; Sweep[0] is the
	// default used when a tile name does not mention the parameter.
	Sweep []int
	Doc   string
}

// Params is one assignment of values to a family's parameters.
type Params map[string]int

// Clone returns a copy of p.
func (p Params) Clone() Params {
	q := make(Params, len(p))
	for k, v := range p {
		q[k] = v
	}
	return q
}

// String formats p as "A=1,B=2" with names sorted, a stable key.
func (p Params) String() string {
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%s=%d", k, p[k])
	}
	return b.String()
}

// ParseParams parses String's format, "A=1,B=2" (names in any order; ""
// is the empty assignment): the stored form of a candidate's parameters
// (result.Candidate.Params).
func ParseParams(s string) (Params, error) {
	p := Params{}
	if s == "" {
		return p, nil
	}
	for _, part := range strings.Split(s, ",") {
		name, val, ok := strings.Cut(part, "=")
		v, err := strconv.Atoi(val)
		if !ok || name == "" || err != nil {
			return nil, fmt.Errorf("parameters %q: bad entry %q (want NAME=integer)", s, part)
		}
		if _, dup := p[name]; dup {
			return nil, fmt.Errorf("parameters %q: %s given twice", s, name)
		}
		p[name] = v
	}
	return p, nil
}

// A Family is a kernel source with its parameter space.
type Family struct {
	// Name is the family name, e.g. "gemm_f16".
	Name string
	// Backend is the backend that compiles it: "cpu" or "cuda".
	Backend string
	Doc     string
	// Source is the whole text the backend compiles. A built-in family's
	// is its own file after the files it shares with others (source.go),
	// joined with #line directives; a one-file family's is its file. It is
	// what `tilefit families source NAME` prints, and an edited copy given
	// to --source replaces all of it.
	Source string
	// SourceFile is the family's own file name, e.g. "gemm_f16.c" (the last
	// file of a built-in Source).
	SourceFile string
	Params     []Param
	// Positional names the parameters that form a tile name, in order.
	Positional []string
	// Reference is the reference tile every candidate is compared with.
	Reference string
	// Restrict reports why an assignment is not allowed, or nil.
	Restrict func(Params) error
	// Extra are tiles the default sweep runs besides the product of the
	// Sweep values (each a valid tile name): a few chosen points of a
	// parameter whose whole product would be too large to sweep.
	Extra []string
	// ConstWeights are tiles the default sweep adds only when the caller
	// declares the weights constant (sweep --const-weights): tiles that
	// read an operand before waiting for the kernel before them, which is
	// valid only when that kernel does not write it (PDL 2: weights copied
	// before griddepcontrol.wait). Each is a valid tile name for which
	// AssumesConstWeights holds.
	ConstWeights []string
	// AssumesConstWeights, when set, reports whether tile p assumes that
	// the kernel before it does not write its weights (nil: no tile does).
	AssumesConstWeights func(p Params) bool
	// Fits, when set, reports whether a default-sweep tile is worth timing
	// on a shape: the sweep leaves tile p out of the cells of dims d when it
	// is false (tiles named with --tiles always run). It must not depend on
	// M, so that a tile's numerics class is there at every M of a shape or
	// at none. nil: every tile fits every shape.
	Fits func(p Params, d Dims) bool

	// Operator is what the family computes (see operator.go).
	Operator *Operator
	// Plan returns the launches (and scratch buffers) of one call of
	// assignment p on dimensions d: the family, not the backend, owns grid,
	// block, shared memory, cluster and kernel parameters.
	Plan func(p Params, d Dims) (Plan, error)
	// Numerics names the numerics class of p: candidates of one class must
	// be bitwise equal on every output; nil means one class for the family
	// (named after it). Two families share a class by returning the same
	// name (a cell may hold both).
	Numerics func(p Params) string
}

// Class is the numerics class of assignment p: Numerics(p), or the
// family's name when it declares none. Candidates of one class must be
// bitwise equal on every output.
func (f *Family) Class(p Params) string {
	if f.Numerics == nil {
		return f.Name
	}
	return f.Numerics(p)
}

// Param returns the parameter named name.
func (f *Family) Param(name string) (Param, bool) {
	for _, p := range f.Params {
		if p.Name == name {
			return p, true
		}
	}
	return Param{}, false
}

// TileName formats p as a tile name (see the package comment).
func (f *Family) TileName(p Params) string {
	var b strings.Builder
	for i, name := range f.Positional {
		if i > 0 {
			b.WriteByte('_')
		}
		b.WriteString(strconv.Itoa(p[name]))
	}
	for _, prm := range f.Params {
		if f.isPositional(prm.Name) {
			continue
		}
		if v, ok := p[prm.Name]; ok && len(prm.Sweep) > 0 && v != prm.Sweep[0] {
			fmt.Fprintf(&b, ".%s%d", strings.ToLower(prm.Name), v)
		}
	}
	return b.String()
}

func (f *Family) isPositional(name string) bool {
	for _, n := range f.Positional {
		if n == name {
			return true
		}
	}
	return false
}

// ParseTile parses a tile name into a full, validated assignment.
func (f *Family) ParseTile(tile string) (Params, error) {
	parts := strings.Split(tile, ".")
	pos := strings.Split(parts[0], "_")
	if len(pos) != len(f.Positional) {
		return nil, fmt.Errorf("tile %q: family %s names tiles as %s", tile, f.Name, strings.Join(f.Positional, "_"))
	}
	p := Params{}
	for i, s := range pos {
		v, err := strconv.Atoi(s)
		if err != nil {
			return nil, fmt.Errorf("tile %q: %s is not a number: %q", tile, f.Positional[i], s)
		}
		p[f.Positional[i]] = v
	}
	for _, prm := range f.Params {
		if !f.isPositional(prm.Name) && len(prm.Sweep) > 0 {
			p[prm.Name] = prm.Sweep[0]
		}
	}
	for _, suf := range parts[1:] {
		i := strings.IndexAny(suf, "-0123456789")
		if i <= 0 {
			return nil, fmt.Errorf("tile %q: suffix %q is not <param><value>", tile, suf)
		}
		name, val := strings.ToUpper(suf[:i]), suf[i:]
		prm, ok := f.Param(name)
		if !ok || f.isPositional(name) {
			return nil, fmt.Errorf("tile %q: family %s has no parameter %q", tile, f.Name, name)
		}
		v, err := strconv.Atoi(val)
		if err != nil {
			return nil, fmt.Errorf("tile %q: %s is not a number: %q", tile, prm.Name, val)
		}
		p[name] = v
	}
	if err := f.Validate(p); err != nil {
		return nil, fmt.Errorf("tile %q: %w", tile, err)
	}
	return p, nil
}

// Validate checks that every parameter has an allowed value and that the
// family's restrictions hold.
func (f *Family) Validate(p Params) error {
	for _, prm := range f.Params {
		v, ok := p[prm.Name]
		if !ok {
			return fmt.Errorf("parameter %s missing", prm.Name)
		}
		if !contains(prm.Values, v) {
			return fmt.Errorf("%s=%d not allowed (allowed: %s)", prm.Name, v, joinInts(prm.Values))
		}
	}
	for k := range p {
		if _, ok := f.Param(k); !ok {
			return fmt.Errorf("family %s has no parameter %q", f.Name, k)
		}
	}
	if f.Restrict != nil {
		if err := f.Restrict(p); err != nil {
			return err
		}
	}
	return nil
}

// Space enumerates the default sweep: the cartesian product of every
// parameter's Sweep values that passes Restrict, in a stable order (the
// first parameter varies slowest), then the Extra tiles that are valid and
// not in the product already.
func (f *Family) Space() []Params {
	out := []Params{{}}
	for _, prm := range f.Params {
		var next []Params
		for _, p := range out {
			for _, v := range prm.Sweep {
				q := p.Clone()
				q[prm.Name] = v
				next = append(next, q)
			}
		}
		out = next
	}
	var ok []Params
	seen := map[string]bool{}
	for _, p := range out {
		if f.Restrict == nil || f.Restrict(p) == nil {
			ok = append(ok, p)
			seen[p.String()] = true
		}
	}
	for _, t := range f.Extra {
		if p, err := f.ParseTile(t); err == nil && !seen[p.String()] {
			ok = append(ok, p)
			seen[p.String()] = true
		}
	}
	return ok
}

// ConstSpace is the tiles --const-weights adds to the default sweep: the
// valid ConstWeights tiles not in Space already, in their order.
func (f *Family) ConstSpace() []Params {
	seen := map[string]bool{}
	for _, p := range f.Space() {
		seen[p.String()] = true
	}
	var out []Params
	for _, t := range f.ConstWeights {
		if p, err := f.ParseTile(t); err == nil && !seen[p.String()] {
			out = append(out, p)
			seen[p.String()] = true
		}
	}
	return out
}

// Assumes reports whether tile p assumes constant weights
// (AssumesConstWeights; false when the family declares none).
func (f *Family) Assumes(p Params) bool {
	return f.AssumesConstWeights != nil && f.AssumesConstWeights(p)
}

// FitsShape reports whether default-sweep tile p is worth timing on dims d
// (Fits; true when the family declares none).
func (f *Family) FitsShape(p Params, d Dims) bool {
	return f.Fits == nil || f.Fits(p, d)
}

// Tiles returns the names of the default sweep's tiles.
func (f *Family) Tiles() []string {
	var names []string
	for _, p := range f.Space() {
		names = append(names, f.TileName(p))
	}
	return names
}

// A Candidate is one thing timed in a cell: a family tile or a vendor
// library call.
type Candidate struct {
	// Tile is the tile name, or a vendor name (VendorOpenBLAS, VendorCuBLAS).
	Tile string
	// Params is the assignment; nil for a vendor candidate.
	Params Params
	// Vendor marks a vendor-library candidate; it is checked numerically
	// and never required to be bitwise equal to the reference tile.
	Vendor bool
}

// Defines returns the -D defines for p in a stable order ("TM=64", ...).
func Defines(p Params) []string {
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = fmt.Sprintf("%s=%d", k, p[k])
	}
	return out
}

func contains(xs []int, v int) bool {
	for _, x := range xs {
		if x == v {
			return true
		}
	}
	return false
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}
