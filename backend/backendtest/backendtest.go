// Package backendtest is the conformance suite every backend passes (cpu and
// cuda alike): run it from a backend's tests with
//
//	backendtest.Run(t, b, fam)
//
// For every shape of the suite (1×1×1, odd sizes, tails, a padded-ish case,
// K = 1, a long M tail) and for fp32 and fp16 output it checks, on
// Y[M,N] = X[M,K]·W[N,K]ᵀ with fresh random fp16 inputs:
//
//   - the reference tile (fam.Reference): output poisoned (0xFF) before each
//     run, guard regions intact, every element written, no NaN/Inf, the
//     float64 check (verify.Check) within its K-scaled bound, two runs
//     bitwise identical, a second input set giving a different output;
//   - every tile of fam.Space() (a deterministic subset when the space is
//     larger than Options.MaxTiles, the reference always included): bitwise
//     identical (memcmp) to the reference tile's output, guards intact;
//   - the vendor (backend.Vendor, when it reports ok): numerically right.
package backendtest

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/tilefit/tilefit/backend"
	"github.com/tilefit/tilefit/kernel"
	"github.com/tilefit/tilefit/verify"
)

// DefaultShapes are the suite's shapes: 1×1×1; odd (37×48×100); tails (M not
// a multiple of any TM, N = 1, K = 320); padded-ish (one past a multiple of
// every tile size: 65×257×129); K = 1; a long M tail with N 50 (1983 rows).
var DefaultShapes = []backend.Shape{
	{M: 1, N: 1, K: 1},
	{M: 37, N: 48, K: 100},
	{M: 131, N: 1, K: 320},
	{M: 65, N: 257, K: 129},
	{M: 70, N: 33, K: 1},
	{M: 1983, N: 50, K: 72},
}

// Options tunes RunWith; the zero value gives Run's defaults.
type Options struct {
	// Shapes replaces DefaultShapes.
	Shapes []backend.Shape
	// MaxTiles caps the tiles checked per output type (default 40); a larger
	// space is subsampled evenly, the reference tile always included.
	MaxTiles int
	// Seed seeds the inputs (default 1).
	Seed uint64
	// MaxSamples is verify.Check's sample count (default 4096).
	MaxSamples int
	// SkipF16 skips fp16 output.
	SkipF16 bool
}

// Run runs the conformance suite with default options.
func Run(t *testing.T, b backend.Backend, fam *kernel.Family) {
	t.Helper()
	RunWith(t, b, fam, Options{})
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
	ctx := context.Background()
	dev, err := b.Device(ctx)
	if err != nil {
		t.Fatalf("Device: %v", err)
	}
	t.Logf("device: %s, %s; compiler %s; flags %s", dev.Name, dev.Arch, dev.Compiler, dev.Flags)
	if dev.Backend != b.Name() {
		t.Errorf("Device().Backend = %q, backend Name() = %q", dev.Backend, b.Name())
	}

	ref, err := fam.ParseTile(fam.Reference)
	if err != nil {
		t.Fatalf("reference tile: %v", err)
	}
	tiles := Subset(fam, o.MaxTiles)
	t.Logf("%d tiles of %d in the space, reference %s", len(tiles), len(fam.Space()), fam.Reference)

	var vendor backend.Kernel
	if v, ok := b.(backend.Vendor); ok {
		k, ok, err := v.Vendor(ctx)
		switch {
		case err != nil:
			t.Errorf("Vendor: %v", err)
		case ok:
			vendor = k
			defer k.Close()
		default:
			t.Logf("no vendor library installed")
		}
	}

	outs := []bool{false}
	if !o.SkipF16 {
		outs = append(outs, true)
	}
	for _, f16 := range outs {
		t.Run(map[bool]string{false: "fp32", true: "fp16"}[f16], func(t *testing.T) {
			start := time.Now()
			refK := mustLoad(ctx, t, b, fam, fam.Reference, ref, f16)
			defer refK.Close()
			kernels := LoadAll(ctx, t, b, fam, tiles, f16)
			defer func() {
				for _, k := range kernels {
					k.Close()
				}
			}()
			t.Logf("compiled and loaded %d kernels in %v", len(kernels)+1, time.Since(start).Round(time.Millisecond))
			for si, s := range o.Shapes {
				t.Run(fmt.Sprintf("%dx%dx%d", s.M, s.N, s.K), func(t *testing.T) {
					seed := o.Seed*1000 + uint64(si)*10
					sets := []backend.InputSet{verify.RandomInputs(seed, s), verify.RandomInputs(seed+1, s)}
					p, err := b.NewProblem(ctx, s, sets, f16)
					if err != nil {
						t.Fatalf("NewProblem: %v", err)
					}
					defer p.Close()
					if p.Shape() != s || p.Sets() != 2 {
						t.Errorf("problem reports shape %v with %d sets, want %v with 2", p.Shape(), p.Sets(), s)
					}
					want := checkReference(ctx, t, p, refK, sets, f16, seed, o.MaxSamples)
					if want == nil {
						return
					}
					for i, k := range kernels {
						got, err := p.Run(ctx, k, 0)
						if err != nil {
							t.Errorf("tile %s: %v", tiles[i], err)
							continue
						}
						if m := verify.Bitwise(want, got, s, f16); m != nil {
							t.Errorf("tile %s not bitwise identical to %s: %s", tiles[i], fam.Reference, m)
						}
					}
					if vendor != nil {
						got, err := p.Run(ctx, vendor, 0)
						if err != nil {
							t.Errorf("vendor %s: %v", vendor.Name(), err)
							return
						}
						r := verify.Check(sets[0], s, got, f16, seed, o.MaxSamples)
						if r.Err != nil {
							t.Errorf("vendor %s: %v", vendor.Name(), r.Err)
						}
						if _, err := p.Time(ctx, vendor, 2, 1); err != nil {
							t.Errorf("vendor %s: Time: %v", vendor.Name(), err)
						}
					}
				})
			}
		})
	}
}

// checkReference runs the reference kernel and checks everything that does
// not need another tile; it returns the reference output of set 0, or nil
// after a failure that makes comparisons meaningless.
func checkReference(ctx context.Context, t *testing.T, p backend.Problem, k backend.Kernel, sets []backend.InputSet, f16 bool, seed uint64, maxSamples int) []byte {
	t.Helper()
	s := p.Shape()
	es := 4
	if f16 {
		es = 2
	}
	a, err := p.Run(ctx, k, 0)
	if err != nil {
		t.Errorf("reference %s: %v", k.Name(), err)
		return nil
	}
	if len(a) != s.M*s.N*es {
		t.Errorf("reference %s: output has %d bytes, want %d", k.Name(), len(a), s.M*s.N*es)
		return nil
	}
	r := verify.Check(sets[0], s, a, f16, seed, maxSamples)
	if r.Err != nil {
		t.Errorf("reference %s: %v", k.Name(), r.Err)
		return nil
	}
	if r.Unwritten != 0 || r.Checked == 0 {
		t.Errorf("reference %s: %d unwritten, %d checked", k.Name(), r.Unwritten, r.Checked)
	}
	b, err := p.Run(ctx, k, 0)
	if err != nil {
		t.Errorf("reference %s, second run: %v", k.Name(), err)
		return nil
	}
	if m := verify.Bitwise(a, b, s, f16); m != nil {
		t.Errorf("reference %s: two runs differ: %s", k.Name(), m)
	}
	c, err := p.Run(ctx, k, 1)
	if err != nil {
		t.Errorf("reference %s, set 1: %v", k.Name(), err)
		return nil
	}
	if r := verify.Check(sets[1], s, c, f16, seed+1, maxSamples); r.Err != nil {
		t.Errorf("reference %s, set 1: %v", k.Name(), r.Err)
	}
	if verify.Bitwise(a, c, s, f16) == nil {
		t.Errorf("reference %s: input sets 0 and 1 gave the same output (stale output?)", k.Name())
	}
	if d, err := p.Time(ctx, k, 3, 1); err != nil || d <= 0 {
		t.Errorf("reference %s: Time = %v, %v", k.Name(), d, err)
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

// Program returns the Program of tile p of fam (OUT_F16=1 added when f16).
func Program(fam *kernel.Family, p kernel.Params, f16 bool) backend.Program {
	q := p.Clone()
	if f16 {
		q["OUT_F16"] = 1
	}
	return backend.Program{Family: fam.Name, Source: fam.Source, Defines: kernel.Defines(q)}
}

func mustLoad(ctx context.Context, t *testing.T, b backend.Backend, fam *kernel.Family, name string, p kernel.Params, f16 bool) backend.Kernel {
	t.Helper()
	prog := Program(fam, p, f16)
	a, err := b.Compile(ctx, prog)
	if err != nil {
		var ce *backend.CompileError
		if errors.As(err, &ce) {
			t.Fatalf("compile %s: %v", name, ce)
		}
		t.Fatalf("compile %s: %v", name, err)
	}
	k, err := b.Load(ctx, name, prog, a)
	if err != nil {
		t.Fatalf("load %s: %v", name, err)
	}
	if k.Name() != name {
		t.Errorf("kernel Name() = %q, want %q", k.Name(), name)
	}
	return k
}

// LoadAll compiles (in parallel, one job per CPU) and loads the tiles of
// fam, failing the test on any error. The kernels come back in tile order.
func LoadAll(ctx context.Context, t *testing.T, b backend.Backend, fam *kernel.Family, tiles []string, f16 bool) []backend.Kernel {
	t.Helper()
	progs := make([]backend.Program, len(tiles))
	arts := make([]backend.Artifact, len(tiles))
	errs := make([]error, len(tiles))
	for i, name := range tiles {
		p, err := fam.ParseTile(name)
		if err != nil {
			t.Fatalf("tile %s: %v", name, err)
		}
		progs[i] = Program(fam, p, f16)
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
	ks := make([]backend.Kernel, 0, len(tiles))
	for i, name := range tiles {
		if errs[i] != nil {
			t.Fatalf("compile %s: %v", name, errs[i])
		}
		k, err := b.Load(ctx, name, progs[i], arts[i])
		if err != nil {
			t.Fatalf("load %s: %v", name, err)
		}
		ks = append(ks, k)
	}
	return ks
}
