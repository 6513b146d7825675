package backendtest

import (
	"context"
	"encoding/binary"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/tilefit/tilefit/backend"
	"github.com/tilefit/tilefit/builtin"
	"github.com/tilefit/tilefit/kernel"
	"github.com/tilefit/tilefit/verify"
)

// ClassOptions tunes RunClasses.
type ClassOptions struct {
	// Shapes are the dimensions checked (the operator's Defaults fill
	// dimensions left out); required.
	Shapes []kernel.Dims
	// Tiles are the tile names checked (default: fam.Tiles()); the
	// reference tile is always included, first.
	Tiles []string
	// Seed seeds the inputs (default 1).
	Seed uint64
	// MaxSamples is verify.Check's sample count per output (default 4096).
	MaxSamples int
	// Baselines are vendor baselines checked numerically on every shape.
	Baselines []*kernel.Baseline
	// Extra are defines added to every tile's program (e.g. FAULT=1 to
	// see a planted fault caught); with Extra set, failures are returned
	// in the report instead of failing the test.
	Extra []string
}

// A ClassReport is what RunClasses saw.
type ClassReport struct {
	// Classes maps each numerics class to its tiles, in order (the first is
	// the class's bitwise base).
	Classes map[string][]string
	// Equal maps "classA=classB" (sorted) to whether the two classes' bases
	// were bitwise equal on every output both have, on every shape.
	Equal map[string]bool
	// Failures lists what failed (only collected when Extra is set).
	Failures []string
}

// RunClasses is the conformance suite for families with several numerics
// classes and optional operands (Operand.When): on every shape, every tile
// runs on poisoned, guarded outputs; every present output of every tile is
// checked against the operator's float64 reference (verify.Check: nothing
// unwritten, no NaN/Inf, within the bound); every tile is bitwise identical,
// on every output, to the first tile of its numerics class that has that
// output; the vendor baselines are numerically right; and on the
// operator's exact inputs every tile gives the exact answer (checkExact).
func RunClasses(t *testing.T, b backend.Backend, fam *kernel.Family, o ClassOptions) ClassReport {
	t.Helper()
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.MaxSamples <= 0 {
		o.MaxSamples = 4096
	}
	tiles := o.Tiles
	if tiles == nil {
		tiles = fam.Tiles()
	}
	rest := []string{}
	for _, tl := range tiles {
		if tl != fam.Reference {
			rest = append(rest, tl)
		}
	}
	tiles = append([]string{fam.Reference}, rest...)
	rep := ClassReport{Classes: map[string][]string{}, Equal: map[string]bool{}}
	fail := func(format string, args ...any) {
		t.Helper()
		if o.Extra != nil {
			rep.Failures = append(rep.Failures, fmt.Sprintf(format, args...))
			return
		}
		t.Errorf(format, args...)
	}
	ctx := context.Background()
	dev, err := b.Device(ctx)
	if err != nil {
		t.Fatalf("Device: %v", err)
	}
	var baselines []*kernel.Baseline
	for _, bl := range o.Baselines {
		if bl.Library != "" && dev.Props[bl.Library] == "" {
			t.Logf("baseline %s: %s not installed", bl.Name, bl.Library)
			continue
		}
		baselines = append(baselines, bl)
	}
	op := fam.Operator
	arts := compileWith(ctx, t, b, fam, op, tiles, o.Extra)
	params := map[string]kernel.Params{}
	for _, tl := range tiles {
		p, err := fam.ParseTile(tl)
		if err != nil {
			t.Fatalf("tile %s: %v", tl, err)
		}
		params[tl] = p
		c := NumericsClass(fam, p)
		rep.Classes[c] = append(rep.Classes[c], tl)
	}
	for si, given := range o.Shapes {
		d, err := op.Resolve(given)
		if err != nil {
			t.Fatalf("shape %v: %v", given, err)
		}
		seed := o.Seed*1000 + uint64(si)*10
		set := op.GenInputs(seed, d)
		sets := [][][]byte{set, op.GenInputs(seed+1, d)}
		p, err := b.NewProblem(ctx, op, d, sets)
		if err != nil {
			t.Fatalf("NewProblem %v: %v", d, err)
		}
		// base[class][operand] is the first output of that operand in the class.
		base := map[string][][]byte{}
		baseTile := map[string][]string{}
		for _, tl := range tiles {
			k := mustLoad(ctx, t, b, fam, d, tl, arts[tl])
			out, err := p.Run(ctx, k, 0)
			k.Close()
			if err != nil {
				fail("%v tile %s: %v", d, tl, err)
				continue
			}
			pres := present(op, params[tl])
			for i, oo := range op.Operands {
				if oo.Dir != kernel.Out || !pres[i] {
					continue
				}
				if r := verify.Check(op, d, set, i, out[i], seed, o.MaxSamples); r.Err != nil {
					fail("%v tile %s: %s", d, tl, verify.Label(op, i, r.Err.Error()))
				}
			}
			c := NumericsClass(fam, params[tl])
			if base[c] == nil {
				base[c] = make([][]byte, len(op.Operands))
				baseTile[c] = make([]string, len(op.Operands))
			}
			for i, oo := range op.Operands {
				if oo.Dir != kernel.Out || !pres[i] {
					continue
				}
				if base[c][i] == nil {
					base[c][i], baseTile[c][i] = out[i], tl
					continue
				}
				if m := verify.Bitwise(oo, d, base[c][i], out[i]); m != nil {
					fail("%v tile %s: %s not bitwise identical to %s (class %q): %s", d, tl, oo.Name, baseTile[c][i], c, m)
				}
			}
		}
		classes := make([]string, 0, len(base))
		for c := range base {
			classes = append(classes, c)
		}
		sort.Strings(classes)
		for i, a := range classes {
			for _, c := range classes[i+1:] {
				key := a + "=" + c
				eq := true
				for j := range op.Operands {
					if base[a][j] != nil && base[c][j] != nil && verify.Bitwise(op.Operands[j], d, base[a][j], base[c][j]) != nil {
						eq = false
					}
				}
				if prev, ok := rep.Equal[key]; ok {
					eq = eq && prev
				}
				rep.Equal[key] = eq
			}
		}
		for _, bl := range baselines {
			checkBaseline(ctx, t, b, p, bl, sets, seed, o.MaxSamples)
		}
		p.Close()
		checkExact(ctx, t, b, fam, op, d, tiles, arts, baselines, seed, fail)
	}
	return rep
}

// NumericsClass is fam.Numerics(p), or the family name when it has none
// (the sweep's rule).
func NumericsClass(fam *kernel.Family, p kernel.Params) string {
	if fam.Numerics == nil {
		return fam.Name
	}
	return fam.Numerics(p)
}

// compileWith is CompileAll with extra defines.
func compileWith(ctx context.Context, t *testing.T, b backend.Backend, fam *kernel.Family, op *kernel.Operator, tiles []string, extra []string) map[string]backend.Artifact {
	t.Helper()
	if len(extra) == 0 {
		return CompileAll(ctx, t, b, fam, op, tiles)
	}
	out := map[string]backend.Artifact{}
	for _, tl := range tiles {
		p, err := fam.ParseTile(tl)
		if err != nil {
			t.Fatalf("tile %s: %v", tl, err)
		}
		prog := Program(fam, op, p)
		prog.Defines = append(prog.Defines, extra...)
		a, err := b.Compile(ctx, prog)
		if err != nil {
			t.Fatalf("compile %s %s: %v", tl, strings.Join(extra, " "), err)
		}
		out[tl] = a
	}
	return out
}

// WithTails returns fam's default sweep plus row-tail variants (TAIL 16 and
// 32) of the tiles whose other parameters are the reference's except TM.
func WithTails(fam *kernel.Family) []string {
	tiles := fam.Tiles()
	ref, _ := fam.ParseTile(fam.Reference)
	for _, p := range fam.Space() {
		same := true
		for _, name := range []string{"TN", "THREADS", "WARPS"} {
			if _, ok := fam.Param(name); ok && p[name] != ref[name] {
				same = false
			}
		}
		if !same {
			continue
		}
		for _, tail := range []int{16, 32} {
			q := p.Clone()
			q["TAIL"] = tail
			if fam.Validate(q) == nil {
				tiles = append(tiles, fam.TileName(q))
			}
		}
	}
	return tiles
}

// DequantQ8Exact checks gemm_q8_f16's in-kernel dequantisation on backend
// b: for each tile, the DEBUG=1 build's wdq output (the dequantised weights
// the kernel used) equals builtin.DequantQ8 bit for bit on every element, on
// inputs whose scales reach fp16's subnormal range; DEBUG does not change Y.
func DequantQ8Exact(t *testing.T, b backend.Backend, fam *kernel.Family, tiles []string) {
	ctx := context.Background()
	op := fam.Operator
	sub := 0
	for _, given := range []kernel.Dims{{"M": 3, "N": 70, "K": 256}, {"M": 2, "N": 9, "K": 60, "G": 12}, {"M": 17, "N": 130, "K": 320}} {
		d, err := op.Resolve(given)
		if err != nil {
			t.Fatal(err)
		}
		in := op.GenInputs(9, d)
		p, err := b.NewProblem(ctx, op, d, [][][]byte{in})
		if err != nil {
			t.Fatal(err)
		}
		_, yi, _ := op.Operand("Y")
		_, wi, _ := op.Operand("wdq")
		for _, tl := range tiles {
			par, err := fam.ParseTile(tl)
			if err != nil {
				t.Fatal(err)
			}
			run := func(debug int) [][]byte {
				q := par.Clone()
				q["DEBUG"] = debug
				a, err := b.Compile(ctx, Program(fam, op, q))
				if err != nil {
					t.Fatal(err)
				}
				plan, err := fam.Plan(q, d)
				if err != nil {
					t.Fatal(err)
				}
				k, err := b.Load(ctx, fam.TileName(q), a, plan)
				if err != nil {
					t.Fatal(err)
				}
				defer k.Close()
				out, err := p.Run(ctx, k, 0)
				if err != nil {
					t.Fatal(err)
				}
				return out
			}
			plain, dbg := run(0), run(1)
			if string(plain[yi]) != string(dbg[yi]) {
				t.Errorf("%v %s: DEBUG=1 changes Y", d, tl)
			}
			n, k, g := d["N"], d["K"], d["G"]
			for i := 0; i < n*k; i++ {
				row, kk := i/k, i%k
				q := int8(in[1][i])
				s := binary.LittleEndian.Uint16(in[2][2*(row*(k/g)+kk/g):])
				want := builtin.DequantQ8(q, s)
				if got := binary.LittleEndian.Uint16(dbg[wi][2*i:]); got != want {
					t.Fatalf("%v %s: wdq[%d,%d] = %#04x, DequantQ8(%d, %#04x) = %#04x", d, tl, row, kk, got, q, s, want)
				}
				if want&0x7c00 == 0 && want&0x3ff != 0 {
					sub++
				}
			}
		}
		p.Close()
	}
	if sub == 0 {
		t.Error("no subnormal dequantised weight: the inputs do not exercise fp16's subnormal range")
	}
	t.Logf("every dequantised weight bitwise equal to DequantQ8 (%d subnormal)", sub)
}
