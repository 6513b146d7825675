// Package backendtest is the conformance suite every backend passes (cpu and
// cuda alike): run it from a backend's tests with
//
//	backendtest.Run(t, b, fam)
//
// It is operand-generic: for every shape of the suite (for gemm-like
// operators 1×1×1, odd sizes, tails, a padded-ish case, K = 1, a long M
// tail; any operator may give its own) and every type variant of the
// family's operator (e.g. gemm_f16's Y as fp32 and fp16), on the operator's
// seeded inputs, it checks every output operand:
//
//   - the reference tile (fam.Reference): outputs poisoned (0xFF) before
//     each run, guard regions intact, every element written, no NaN/Inf,
//     the operator's float64 reference (verify.Check) within its bound, two
//     runs bitwise identical, a second input set giving different outputs;
//   - every tile of fam.Space() (a deterministic subset when the space is
//     larger than Options.MaxTiles): bitwise identical (memcmp) to the
//     reference tile's outputs when in its numerics class, guards intact;
//   - the vendor baselines given: numerically right;
//   - on the operator's exact known-answer inputs (Operator.Exact), every
//     tile of every numerics class gives the exact answer on every element
//     (a baseline that does not is logged);
//   - for an operator that declares itself a plain GEMM (Operator.Gemm),
//     on square shapes: with W the periodic 1-D Laplacian, every tile and
//     baseline gives each row's cyclic second difference exactly
//     (verify.CheckLaplacian).
package backendtest

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tilefit/tilefit/backend"
	"github.com/tilefit/tilefit/kernel"
	"github.com/tilefit/tilefit/verify"
)

// DefaultShapes are the suite's gemm-like shapes: 1×1×1; odd (37×48×100);
// tails (M not a multiple of any TM, N = 1, K = 320); padded-ish (one past a
// multiple of every tile size: 65×257×129); K = 1; a long M tail with N 50
// (1983 rows).
var DefaultShapes = []kernel.Dims{
	{"M": 1, "N": 1, "K": 1},
	{"M": 37, "N": 48, "K": 100},
	{"M": 131, "N": 1, "K": 320},
	{"M": 65, "N": 257, "K": 129},
	{"M": 70, "N": 33, "K": 1},
	{"M": 1983, "N": 50, "K": 72},
}

// Options tunes RunWith; the zero value gives Run's defaults.
type Options struct {
	// Shapes replaces DefaultShapes (an operator with other dimensions
	// must give its own); the operator's Defaults fill dimensions left out.
	Shapes []kernel.Dims
	// MaxTiles caps the tiles checked per type variant (default 40); a
	// larger space is subsampled evenly, the reference tile always included.
	MaxTiles int
	// Seed seeds the inputs (default 1).
	Seed uint64
	// MaxSamples is verify.Check's sample count (default 4096).
	MaxSamples int
	// Types are the operand-type variants checked (default: the operator's
	// defaults, then each other type an output operand may take).
	Types []map[string]kernel.DType
	// Baselines are vendor baselines checked numerically on every shape
	// (a baseline whose library is missing is skipped with a log line).
	Baselines []*kernel.Baseline
	// Laplacian are the square shapes of the Laplacian known-answer check,
	// run when the operator declares itself a plain GEMM (default
	// DefaultLaplacianShapes; the square shapes of Shapes are added).
	Laplacian []kernel.Dims
}

// Run runs the conformance suite with default options.
func Run(t *testing.T, b backend.Backend, fam *kernel.Family, baselines ...*kernel.Baseline) {
	t.Helper()
	RunWith(t, b, fam, Options{Baselines: baselines})
}

// Variants lists op's type variants: the defaults, then each other type an
// operand with a choice of types (Operand.DTypes) may take, one at a time.
func Variants(op *kernel.Operator) []map[string]kernel.DType {
	out := []map[string]kernel.DType{{}}
	for _, o := range op.Operands {
		for _, t := range o.DTypes {
			if t != o.DType {
				out = append(out, map[string]kernel.DType{o.Name: t})
			}
		}
	}
	return out
}

func variantName(op *kernel.Operator) string {
	var parts []string
	for _, o := range op.Operands {
		if o.Dir == kernel.Out {
			parts = append(parts, o.Name+"="+o.DType.String())
		}
	}
	return strings.Join(parts, ",")
}

// RunWith runs the conformance suite with o.
func RunWith(t *testing.T, b backend.Backend, fam *kernel.Family, o Options) {
	t.Helper()
	if o.Shapes == nil {
		o.Shapes = DefaultShapes
	}
	if o.MaxTiles <= 0 {
		o.MaxTiles = 40
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.MaxSamples <= 0 {
		o.MaxSamples = 4096
	}
	if o.Types == nil {
		o.Types = Variants(fam.Operator)
	}
	ctx := context.Background()
	dev, err := b.Device(ctx)
	if err != nil {
		t.Fatalf("Device: %v", err)
	}
	t.Logf("device: %s, %s; compiler %s; flags %s", dev.Name, dev.Arch, dev.Compiler, dev.Flags)
	if dev.Backend != b.Name() {
		t.Errorf("Device().Backend = %q, backend Name() = %q", dev.Backend, b.Name())
	}
	tiles := Subset(fam, o.MaxTiles)
	t.Logf("%d tiles of %d in the space, reference %s", len(tiles), len(fam.Space()), fam.Reference)
	var baselines []*kernel.Baseline
	for _, bl := range o.Baselines {
		if bl.Library != "" && dev.Props[bl.Library] == "" {
			t.Logf("baseline %s: %s not installed", bl.Name, bl.Library)
			continue
		}
		baselines = append(baselines, bl)
	}

	for _, types := range o.Types {
		op, err := fam.Operator.Typed(types)
		if err != nil {
			t.Fatalf("types %v: %v", types, err)
		}
		t.Run(variantName(op), func(t *testing.T) {
			start := time.Now()
			arts := CompileAll(ctx, t, b, fam, op, tiles)
			t.Logf("compiled %d kernels in %v", len(arts), time.Since(start).Round(time.Millisecond))
			for si, given := range o.Shapes {
				d, err := op.Resolve(given)
				if err != nil {
					t.Fatalf("shape %v: %v", given, err)
				}
				t.Run(shapeName(op, d), func(t *testing.T) {
					seed := o.Seed*1000 + uint64(si)*10
					sets := [][][]byte{op.GenInputs(seed, d), op.GenInputs(seed+1, d)}
					p, err := b.NewProblem(ctx, op, d, sets)
					if err != nil {
						t.Fatalf("NewProblem: %v", err)
					}
					defer p.Close()
					if p.Dims().String() != d.String() || p.Sets() != 2 || p.Operator().Name != op.Name {
						t.Errorf("problem reports %s %v with %d sets, want %s %v with 2", p.Operator().Name, p.Dims(), p.Sets(), op.Name, d)
					}
					ref := mustLoad(ctx, t, b, fam, d, fam.Reference, arts[fam.Reference])
					defer ref.Close()
					refP, _ := fam.ParseTile(fam.Reference)
					want := checkReference(ctx, t, p, ref, present(op, refP), sets, seed, o.MaxSamples)
					checkExact(ctx, t, b, fam, op, d, tiles, arts, baselines, seed, func(f string, a ...any) { t.Errorf(f, a...) })
					if want == nil {
						return
					}
					for _, tile := range tiles {
						if tile == fam.Reference {
							continue
						}
						k := mustLoad(ctx, t, b, fam, d, tile, arts[tile])
						got, err := p.Run(ctx, k, 0)
						k.Close()
						if err != nil {
							t.Errorf("tile %s: %v", tile, err)
							continue
						}
						params, _ := fam.ParseTile(tile)
						if !sameClass(fam, refP, params) {
							continue
						}
						if msg, m := verify.BitwiseAll(op, d, present(op, params), want, got); m != nil {
							t.Errorf("tile %s not bitwise identical to %s: %s", tile, fam.Reference, msg)
						}
					}
					for _, bl := range baselines {
						checkBaseline(ctx, t, b, p, bl, sets, seed, o.MaxSamples)
					}
				})
			}
			if op.Gemm != nil {
				runLaplacian(ctx, t, b, fam, op, arts, tiles, baselines, o)
			}
		})
	}
}

func sameClass(fam *kernel.Family, a, b kernel.Params) bool {
	return fam.Numerics == nil || fam.Numerics(a) == fam.Numerics(b)
}

// present lists which operands exist for assignment p.
func present(op *kernel.Operator, p kernel.Params) []bool {
	out := make([]bool, len(op.Operands))
	for i, o := range op.Operands {
		out[i] = o.Present(p)
	}
	return out
}

func shapeName(op *kernel.Operator, d kernel.Dims) string {
	parts := make([]string, len(op.Dims))
	for i, n := range op.Dims {
		parts[i] = fmt.Sprint(d[n])
	}
	return strings.Join(parts, "x")
}

// checkBaseline loads a vendor baseline on p and checks every output
// numerically; it also times it once.
func checkBaseline(ctx context.Context, t *testing.T, b backend.Backend, p backend.Problem, bl *kernel.Baseline, sets [][][]byte, seed uint64, maxSamples int) {
	t.Helper()
	op, d := p.Operator(), p.Dims()
	plan, err := bl.Plan(op, d)
	if err != nil {
		t.Errorf("baseline %s: plan: %v", bl.Name, err)
		return
	}
	var art backend.Artifact
	if bl.Source != "" {
		art, err = b.Compile(ctx, backend.Program{Family: bl.Name, Source: bl.Source, Defines: op.TypeDefines()})
		if err != nil {
			t.Errorf("baseline %s: %v", bl.Name, err)
			return
		}
	}
	k, err := b.Load(ctx, bl.Name, art, plan)
	if err != nil {
		t.Errorf("baseline %s: %v", bl.Name, err)
		return
	}
	defer k.Close()
	got, err := p.Run(ctx, k, 0)
	if err != nil {
		t.Errorf("baseline %s: %v", bl.Name, err)
		return
	}
	// A baseline with fp16 intermediates is checked against the unfused
	// bound; one with Params writes the operands those parameters give.
	check := op
	if bl.F16Intermediate {
		check = op.WithUnfusedBound()
	}
	for i, o := range op.Operands {
		if o.Dir == kernel.Out && (bl.Params == nil || o.Present(bl.Params)) {
			if r := verify.Check(check, d, sets[0], i, got[i], seed, maxSamples); r.Err != nil {
				t.Errorf("baseline %s: %s", bl.Name, verify.Label(op, i, r.Err.Error()))
			}
		}
	}
	if _, err := p.Time(ctx, k, 2, 1); err != nil {
		t.Errorf("baseline %s: Time: %v", bl.Name, err)
	}
}

// checkReference runs the reference kernel and checks everything that does
// not need another tile; it returns the reference outputs of set 0, or nil
// after a failure that makes comparisons meaningless.
func checkReference(ctx context.Context, t *testing.T, p backend.Problem, k backend.Kernel, pres []bool, sets [][][]byte, seed uint64, maxSamples int) [][]byte {
	t.Helper()
	op, d := p.Operator(), p.Dims()
	a, err := p.Run(ctx, k, 0)
	if err != nil {
		t.Errorf("reference %s: %v", k.Name(), err)
		return nil
	}
	if len(a) != len(op.Operands) {
		t.Errorf("reference %s: Run returned %d operands, want %d", k.Name(), len(a), len(op.Operands))
		return nil
	}
	for i, o := range op.Operands {
		n, _ := op.OperandBytes(i, d)
		switch {
		case o.Dir == kernel.In && a[i] != nil:
			t.Errorf("reference %s: Run returned input %s", k.Name(), o.Name)
		case o.Dir == kernel.Out && int64(len(a[i])) != n:
			t.Errorf("reference %s: output %s has %d bytes, want %d", k.Name(), o.Name, len(a[i]), n)
			return nil
		}
	}
	c, err := p.Run(ctx, k, 1)
	if err != nil {
		t.Errorf("reference %s, set 1: %v", k.Name(), err)
		return nil
	}
	for i, o := range op.Operands {
		if o.Dir != kernel.Out || !pres[i] {
			continue
		}
		r := verify.Check(op, d, sets[0], i, a[i], seed, maxSamples)
		if r.Err != nil {
			t.Errorf("reference %s: %s", k.Name(), verify.Label(op, i, r.Err.Error()))
			return nil
		}
		if r.Unwritten != 0 || r.Checked == 0 {
			t.Errorf("reference %s: %s: %d unwritten, %d checked", k.Name(), o.Name, r.Unwritten, r.Checked)
		}
		if r := verify.Check(op, d, sets[1], i, c[i], seed+1, maxSamples); r.Err != nil {
			t.Errorf("reference %s, set 1: %s", k.Name(), verify.Label(op, i, r.Err.Error()))
		}
		if verify.Bitwise(o, d, a[i], c[i]) == nil {
			t.Errorf("reference %s: input sets 0 and 1 gave the same %s (stale output?)", k.Name(), o.Name)
		}
	}
	b2, err := p.Run(ctx, k, 0)
	if err != nil {
		t.Errorf("reference %s, second run: %v", k.Name(), err)
		return nil
	}
	if msg, m := verify.BitwiseAll(op, d, pres, a, b2); m != nil {
		t.Errorf("reference %s: two runs differ: %s", k.Name(), msg)
	}
	if dt, err := p.Time(ctx, k, 3, 1); err != nil || dt <= 0 {
		t.Errorf("reference %s: Time = %v, %v", k.Name(), dt, err)
	}
	return a
}

// Subset returns the tile names checked for fam: all of fam.Space() when it
// has at most max tiles, else the reference and max−1 tiles spread evenly
// over the space (deterministic).
func Subset(fam *kernel.Family, max int) []string {
	all := fam.Tiles()
	if len(all) <= max {
		return all
	}
	out := []string{fam.Reference}
	for i := 0; i < max-1; i++ {
		name := all[i*len(all)/(max-1)]
		if name != fam.Reference {
			out = append(out, name)
		}
	}
	return out
}

// Program returns the Program of tile p of fam computing op (op carries
// the chosen operand types; nil: fam.Operator's defaults).
func Program(fam *kernel.Family, op *kernel.Operator, p kernel.Params) backend.Program {
	if op == nil {
		op = fam.Operator
	}
	return backend.Program{Family: fam.Name, Source: fam.Source, Defines: append(kernel.Defines(p), op.TypeDefines()...)}
}

// mustLoad loads tile name of fam with its Plan for dims d.
func mustLoad(ctx context.Context, t *testing.T, b backend.Backend, fam *kernel.Family, d kernel.Dims, name string, a backend.Artifact) backend.Kernel {
	t.Helper()
	p, err := fam.ParseTile(name)
	if err != nil {
		t.Fatalf("tile %s: %v", name, err)
	}
	plan, err := fam.Plan(p, d)
	if err != nil {
		t.Fatalf("plan %s: %v", name, err)
	}
	k, err := b.Load(ctx, name, a, plan)
	if err != nil {
		t.Fatalf("load %s: %v", name, err)
	}
	if k.Name() != name {
		t.Errorf("kernel Name() = %q, want %q", k.Name(), name)
	}
	return k
}

// CompileAll compiles (in parallel, one job per CPU) the tiles of fam for
// op, failing the test on any error; the reference tile is always included.
func CompileAll(ctx context.Context, t *testing.T, b backend.Backend, fam *kernel.Family, op *kernel.Operator, tiles []string) map[string]backend.Artifact {
	t.Helper()
	tiles = append([]string{fam.Reference}, tiles...)
	progs := make([]backend.Program, len(tiles))
	arts := make([]backend.Artifact, len(tiles))
	errs := make([]error, len(tiles))
	for i, name := range tiles {
		p, err := fam.ParseTile(name)
		if err != nil {
			t.Fatalf("tile %s: %v", name, err)
		}
		progs[i] = Program(fam, op, p)
	}
	sem := make(chan struct{}, runtime.NumCPU())
	var wg sync.WaitGroup
	for i := range progs {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			arts[i], errs[i] = b.Compile(ctx, progs[i])
		}(i)
	}
	wg.Wait()
	out := map[string]backend.Artifact{}
	for i, name := range tiles {
		if errs[i] != nil {
			var ce *backend.CompileError
			if errors.As(errs[i], &ce) {
				t.Fatalf("compile %s: %v", name, ce)
			}
			t.Fatalf("compile %s: %v", name, errs[i])
		}
		out[name] = arts[i]
	}
	return out
}
