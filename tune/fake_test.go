package tune

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/x448/float16"

	"github.com/tilefit/tilefit/backend"
	"github.com/tilefit/tilefit/builtin"
	"github.com/tilefit/tilefit/kernel"
)

// fakeFamily computes gemm_f16 with one parameter TM, passed to the fake
// backend as an int argument of its one launch; tile names are the TM value.
func fakeFamily() *kernel.Family {
	return &kernel.Family{
		Name: "fake", Backend: "fake", Source: "good",
		Params:     []kernel.Param{{Name: "TM", Values: []int{2, 4, 8, 16, 32}, Sweep: []int{4, 8, 16}}},
		Positional: []string{"TM"},
		Reference:  "8",
		Operator:   builtin.GemmF16(),
		Plan: func(p kernel.Params, d kernel.Dims) (kernel.Plan, error) {
			if p["TM"] == 0 {
				return kernel.Plan{}, errors.New("no TM")
			}
			return kernel.Plan{Launches: []kernel.Launch{{Entry: "fake",
				Args: kernel.Args(kernel.Operands("X", "W", "Y"), kernel.DimArgs("M", "N", "K"), []kernel.Arg{{Kind: kernel.ArgInt, Value: int64(p["TM"])}})}}}, nil
		},
	}
}

// fakeBaseline is the fake backend's vendor: a GEMM that sums k backwards.
func fakeBaseline() *kernel.Baseline {
	return &kernel.Baseline{Name: "openblas", Backend: "fake", Operator: "gemm_f16", Library: "openblas",
		Plan: func(op *kernel.Operator, d kernel.Dims) (kernel.Plan, error) {
			return kernel.Plan{Launches: []kernel.Launch{{Vendor: kernel.VendorGemm, Args: kernel.Args(kernel.Operands("X", "W", "Y"), kernel.DimArgs("M", "N", "K"))}}}, nil
		}}
}

// fakeBackend computes Y = X·Wᵀ in Go with one float32 FMA chain per
// element (so every tile is bitwise identical), and misbehaves on purpose
// for the tiles named in bugs: "tail" leaves the last M%TM rows unwritten,
// "nan" writes NaN, "err" returns a device error, "nondet" differs between
// runs, "flip" differs from the others in one element (deterministically),
// "guard" writes past the output, "mdep" sums k backwards when M > 12
// (not batch-invariant; a source "mdep" plants it in every tile).
// vendorBug is the vendor's behaviour ("reorder" when empty: k backwards at
// every M, invariant).
type fakeBackend struct {
	mu         sync.Mutex
	bugs       map[string]string
	times      map[string]time.Duration
	runs       map[string]int // Run calls per tile
	timed      map[string]int // Time calls per tile
	opened     int
	device     int    // the device number (its UUID is "fake-N")
	name       string // the device's name ("" → "fake device")
	vendor     bool
	vendorBug  string
	vendorWarn string            // the device's "openblas_warning" ("" → none)
	compile    map[string]string // tile → compile error
	recycled   int               // Recycle calls on its problems
	// pair gives its problems a Verifier with KeepPair (as the CUDA
	// problem has), counted in pairs; keeps counts Keep calls outside it.
	pair         bool
	pairs, keeps int
	// triple gives its problems KeepPairAnd as well (the CUDA problem's
	// third run, of the exact check's problem, in the same wait), counted
	// in triples.
	triple  bool
	triples int
	// bind gives its problems a Bind (as the CUDA problem has); binds
	// lists "tile@problem" per call, runBeforeBind counts Runs of a tile
	// on a problem before that tile was bound there.
	bind          bool
	binds         []string
	runBeforeBind int
}

func newFake() *fakeBackend {
	return &fakeBackend{bugs: map[string]string{}, times: map[string]time.Duration{}, runs: map[string]int{}, timed: map[string]int{}, compile: map[string]string{}}
}

func (f *fakeBackend) Name() string { return "fake" }
func (f *fakeBackend) Device(context.Context) (backend.Device, error) {
	props := map[string]string{"llc_bytes": "4096"}
	if f.vendor {
		props["openblas"] = "fake 1"
		if f.vendorWarn != "" {
			props["openblas_warning"] = f.vendorWarn
		}
	}
	name := f.name
	if name == "" {
		name = "fake device"
	}
	return backend.Device{Backend: "fake", Name: name, Compiler: "fakecc 1", Memory: 1 << 30, Props: props,
		UUID: fmt.Sprintf("fake-%d", f.device), Ordinal: f.device, Count: 2}, nil
}
func (f *fakeBackend) Compile(_ context.Context, p backend.Program) (backend.Artifact, error) {
	tile := strings.TrimPrefix(p.Defines[0], "TM=")
	if msg, ok := f.compile[tile]; ok {
		return backend.Artifact{}, &backend.CompileError{Program: tile, Log: msg, Err: errors.New("exit status 1")}
	}
	return backend.Artifact{Key: strings.Join(p.Defines, ","), Path: p.Source}, nil
}

type fakeKernel struct {
	name string
	tm   int
	bug  string
	src  string
}

func (k *fakeKernel) Name() string { return k.name }
func (k *fakeKernel) Close() error { return nil }

// Resources reports made-up resources of a compiled tile (as the CUDA
// backend reports a function's attributes): 32+TM registers, TM·64 bytes
// of shared memory; zero registers for a vendor routine.
func (k *fakeKernel) Resources() (regs, localBytes, sharedBytes int) {
	if k.tm == 0 {
		return 0, 0, 0
	}
	return 32 + k.tm, 0, 64 * k.tm
}

func (f *fakeBackend) Load(_ context.Context, name string, a backend.Artifact, plan kernel.Plan) (backend.Kernel, error) {
	l := plan.Launches[0]
	if l.Vendor != "" {
		if !f.vendor {
			return nil, errors.New("vendor library not installed")
		}
		bug := "reorder"
		if f.vendorBug != "" {
			bug = f.vendorBug
		}
		return &fakeKernel{name: name, bug: bug}, nil
	}
	tm := int(l.Args[len(l.Args)-1].Value)
	bug := f.bugs[name]
	if a.Path != "good" {
		bug = a.Path
	}
	return &fakeKernel{name: name, tm: tm, bug: bug, src: a.Path}, nil
}

type fakeProblem struct {
	f    *fakeBackend
	op   *kernel.Operator
	d    kernel.Dims
	sets [][][]byte
	n    int
	// pool reuses output buffers handed back (backend.Recycler), as the
	// real backends do: a buffer recycled too early is overwritten by the
	// next Run.
	pool     backend.HostPool
	recycled int
}

func (p *fakeProblem) Recycle(out [][]byte) {
	p.f.mu.Lock()
	p.recycled++
	p.f.recycled++
	p.f.mu.Unlock()
	p.pool.Put(out)
}

func (f *fakeBackend) NewProblem(_ context.Context, op *kernel.Operator, d kernel.Dims, sets [][][]byte) (backend.Problem, error) {
	p := &fakeProblem{f: f, op: op, d: d, sets: sets}
	if f.bind {
		return &bindProblem{fakeProblem: p, bound: map[string]bool{}}, nil
	}
	if f.triple {
		tp := &tripleProblem{fakeProblem: p}
		tp.HostVerifier = backend.NewHostVerifier(tp)
		return tp, nil
	}
	if f.pair {
		return &pairProblem{fakeProblem: p, HostVerifier: backend.NewHostVerifier(p)}, nil
	}
	return p, nil
}

// pairProblem is a fake problem with its own Verifier and a KeepPair that
// keeps the two runs one after the other (the CUDA problem's contract,
// without its single wait).
type pairProblem struct {
	*fakeProblem
	*backend.HostVerifier
	inPair bool
}

func (p *pairProblem) Keep(ctx context.Context, k backend.Kernel, set, slot int) error {
	if !p.inPair {
		p.f.mu.Lock()
		p.f.keeps++
		p.f.mu.Unlock()
	}
	return p.HostVerifier.Keep(ctx, k, set, slot)
}

func (p *pairProblem) KeepPair(ctx context.Context, k backend.Kernel, set, a, b int) error {
	p.f.mu.Lock()
	p.f.pairs++
	p.f.mu.Unlock()
	p.inPair = true
	defer func() { p.inPair = false }()
	if err := p.Keep(ctx, k, set, a); err != nil {
		return err
	}
	return p.Keep(ctx, k, set, b)
}
func (f *fakeBackend) Close() error { return nil }

// tripleProblem is a fake problem with KeepPair and KeepPairAnd: the third
// run is the other problem's (Run goes there while it is kept), its
// outputs held in this problem's slot, its guard error returned apart
// from the pair's (the CUDA problem's contract, without its one wait).
type tripleProblem struct {
	*fakeProblem
	*backend.HostVerifier
	other  backend.Problem
	oset   int
	inPair bool
}

func (p *tripleProblem) Run(ctx context.Context, k backend.Kernel, set int) ([][]byte, error) {
	if p.other != nil {
		return p.other.Run(ctx, k, p.oset)
	}
	return p.fakeProblem.Run(ctx, k, set)
}

func (p *tripleProblem) Keep(ctx context.Context, k backend.Kernel, set, slot int) error {
	if !p.inPair {
		p.f.mu.Lock()
		p.f.keeps++
		p.f.mu.Unlock()
	}
	return p.HostVerifier.Keep(ctx, k, set, slot)
}

func (p *tripleProblem) KeepPair(ctx context.Context, k backend.Kernel, set, a, b int) error {
	p.f.mu.Lock()
	p.f.pairs++
	p.f.mu.Unlock()
	p.inPair = true
	defer func() { p.inPair = false }()
	if err := p.Keep(ctx, k, set, a); err != nil {
		return err
	}
	return p.Keep(ctx, k, set, b)
}

func (p *tripleProblem) KeepPairAnd(ctx context.Context, k backend.Kernel, set, a, b int, other backend.Problem, oset, c int) (error, error) {
	p.f.mu.Lock()
	p.f.triples++
	p.f.mu.Unlock()
	if err := p.KeepPair(ctx, k, set, a, b); err != nil {
		return err, nil
	}
	p.inPair, p.other, p.oset = true, other, oset
	err := p.Keep(ctx, k, 0, c)
	p.inPair, p.other = false, nil
	var ge *backend.GuardError
	if err != nil && !errors.As(err, &ge) {
		return err, nil // a device error, as the pair's
	}
	return nil, err
}

func (p *tripleProblem) KeepsFrom(other backend.Problem) bool {
	_, ok := other.(*tripleProblem)
	return ok && other != backend.Problem(p)
}

func (p *fakeProblem) Operator() *kernel.Operator { return p.op }
func (p *fakeProblem) Dims() kernel.Dims          { return p.d }
func (p *fakeProblem) Sets() int                  { return len(p.sets) }
func (p *fakeProblem) Close() error               { return nil }

func (p *fakeProblem) Run(_ context.Context, kk backend.Kernel, set int) ([][]byte, error) {
	k := kk.(*fakeKernel)
	p.f.mu.Lock()
	p.f.runs[k.name]++
	p.n++
	p.f.mu.Unlock()
	if k.bug == "err" {
		return nil, errors.New("illegal address")
	}
	if k.bug == "guard" {
		return nil, &backend.GuardError{Operand: "Y", Offset: 3}
	}
	in := p.sets[set]
	M, N, K := p.d["M"], p.d["N"], p.d["K"]
	x := func(i int) float32 { return h(binary.LittleEndian.Uint16(in[0][2*i:])) }
	// guardexact: writes past Y where the inputs are integers (the exact
	// check's), within it on random inputs.
	if k.bug == "guardexact" && x(0) == float32(int(x(0))) {
		return nil, &backend.GuardError{Operand: "Y", Offset: 5}
	}
	w := func(i int) float32 { return h(binary.LittleEndian.Uint16(in[1][2*i:])) }
	out := p.pool.Get(4 * M * N)
	p.pool.Lend(out, out)
	for i := range out {
		out[i] = 0xFF
	}
	rows := M
	if k.bug == "tail" && k.tm > 0 {
		rows -= M % k.tm
	}
	for m := 0; m < rows; m++ {
		for n := 0; n < N; n++ {
			var acc float32
			if k.bug == "reorder" || k.bug == "mdep" && M > 12 {
				for kk := K - 1; kk >= 0; kk-- {
					acc = float32(math.FMA(float64(x(m*K+kk)), float64(w(n*K+kk)), float64(acc)))
				}
			} else {
				kn := K
				if k.bug == "droplast" {
					kn-- // the last k term is skipped
				}
				for kk := 0; kk < kn; kk++ {
					acc = fma32(x(m*K+kk), w(n*K+kk), acc)
				}
			}
			// flipexact: element 0 is off by one where the inputs are
			// integers (the exact check's), right on random inputs.
			if k.bug == "flipexact" && m == 0 && n == 0 && x(0) == float32(int(x(0))) {
				acc++
			}
			if k.bug == "nan" && m == 0 && n == 0 {
				acc = float32(math.NaN())
			}
			if k.bug == "flip" && m == 0 && n == 0 {
				acc = math.Nextafter32(acc, 10)
			}
			if k.bug == "nondet" && p.n%2 == 0 && m == 0 && n == 0 {
				acc = math.Nextafter32(acc, 10)
			}
			binary.LittleEndian.PutUint32(out[4*(m*N+n):], math.Float32bits(acc))
		}
	}
	return [][]byte{nil, nil, out}, nil
}

func (p *fakeProblem) Time(_ context.Context, kk backend.Kernel, n, first int) (time.Duration, error) {
	k := kk.(*fakeKernel)
	p.f.mu.Lock()
	defer p.f.mu.Unlock()
	p.f.timed[k.name]++
	if d, ok := p.f.times[k.name]; ok {
		return d, nil
	}
	return time.Duration(100+k.tm) * time.Microsecond, nil
}

func h(b uint16) float32 { return float16.Frombits(b).Float32() }

// fma32 is a float32 multiply-add through float64 (deterministic, which is
// all the fake needs).
func fma32(a, b, c float32) float32 { return float32(math.FMA(float64(a), float64(b), float64(c))) }

type backendT = backend.Backend

// bindProblem is a fake problem with Bind, recording whether a kernel ran
// on it before it was bound.
type bindProblem struct {
	*fakeProblem
	bound map[string]bool
}

func (p *bindProblem) Bind(_ context.Context, k backend.Kernel) error {
	p.f.mu.Lock()
	defer p.f.mu.Unlock()
	p.bound[k.Name()] = true
	p.f.binds = append(p.f.binds, fmt.Sprintf("%s@%p", k.Name(), p))
	return nil
}

func (p *bindProblem) Run(ctx context.Context, k backend.Kernel, set int) ([][]byte, error) {
	p.f.mu.Lock()
	if !p.bound[k.Name()] {
		p.f.runBeforeBind++
	}
	p.f.mu.Unlock()
	return p.fakeProblem.Run(ctx, k, set)
}
