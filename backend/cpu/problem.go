package cpu

import (
	"context"
	"encoding/binary"
	"fmt"
	"runtime"
	"sync"
	"time"
	"unsafe"

	"github.com/x448/float16"

	"github.com/tilefit/tilefit/backend"
)

// Guard is the number of output elements before and after every output
// buffer that must keep their sentinel through a run.
const Guard = 64

// Guard sentinels: NaN patterns no kernel computes and different from the
// 0xFF poison, so a stray write shows as a changed guard.
const (
	GuardF32 uint32 = 0x7fa5a5a5
	GuardF16 uint16 = 0x7da5
)

// problem holds one cell's Go-allocated buffers: the input sets (fp16, as
// given), one guarded output buffer per set, and — built lazily on the first
// vendor dispatch, outside any timed region — fp32 copies of the inputs.
type problem struct {
	s      backend.Shape
	outF16 bool
	es     int // output element size
	sets   []backend.InputSet
	outs   [][]byte // Guard + M·N + Guard elements each

	mu      sync.Mutex
	f32     []f32Set
	scratch [][]float32 // per set: vendor fp32 output when outF16
	closed  bool
}

type f32Set struct{ x, w []float32 }

// NewProblem copies the input sets and allocates one guarded output per set.
// Every set must hold X (M×K) and W (N×K); M, N, K must be positive.
func (c *CPU) NewProblem(ctx context.Context, s backend.Shape, sets []backend.InputSet, outF16 bool) (backend.Problem, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if s.M <= 0 || s.N <= 0 || s.K <= 0 {
		return nil, fmt.Errorf("problem %d×%d×%d: M, N and K must be positive", s.M, s.N, s.K)
	}
	if len(sets) == 0 {
		return nil, fmt.Errorf("problem %d×%d×%d: no input sets", s.M, s.N, s.K)
	}
	p := &problem{s: s, outF16: outF16, es: 4}
	if outF16 {
		p.es = 2
	}
	for i, in := range sets {
		if len(in.X) != s.M*s.K || len(in.W) != s.N*s.K {
			return nil, fmt.Errorf("problem %d×%d×%d: set %d has %d X and %d W elements, want %d and %d",
				s.M, s.N, s.K, i, len(in.X), len(in.W), s.M*s.K, s.N*s.K)
		}
		p.sets = append(p.sets, backend.InputSet{
			X: append([]uint16(nil), in.X...),
			W: append([]uint16(nil), in.W...),
		})
		out := make([]byte, (s.M*s.N+2*Guard)*p.es)
		p.outs = append(p.outs, out)
		p.resetGuards(i)
	}
	return p, nil
}

func (p *problem) Shape() backend.Shape { return p.s }
func (p *problem) Sets() int            { return len(p.sets) }

// body returns the M·N-element output region of set i.
func (p *problem) body(i int) []byte {
	return p.outs[i][Guard*p.es : (Guard+p.s.M*p.s.N)*p.es]
}

func (p *problem) resetGuards(i int) {
	out := p.outs[i]
	n := p.s.M * p.s.N
	for j := 0; j < Guard; j++ {
		for _, e := range []int{j, Guard + n + j} {
			if p.outF16 {
				binary.LittleEndian.PutUint16(out[2*e:], GuardF16)
			} else {
				binary.LittleEndian.PutUint32(out[4*e:], GuardF32)
			}
		}
	}
}

// checkGuards returns a *backend.GuardError for the first changed guard
// element of set i (offset relative to the output start).
func (p *problem) checkGuards(i int) error {
	out := p.outs[i]
	n := p.s.M * p.s.N
	changed := func(e int) bool {
		if p.outF16 {
			return binary.LittleEndian.Uint16(out[2*e:]) != GuardF16
		}
		return binary.LittleEndian.Uint32(out[4*e:]) != GuardF32
	}
	for j := 0; j < Guard; j++ {
		if changed(j) {
			return &backend.GuardError{Offset: j - Guard}
		}
	}
	for j := 0; j < Guard; j++ {
		if changed(Guard + n + j) {
			return &backend.GuardError{Offset: n + j}
		}
	}
	return nil
}

func (p *problem) checkSet(set int) error {
	if set < 0 || set >= len(p.sets) {
		return fmt.Errorf("set %d out of range (problem has %d)", set, len(p.sets))
	}
	return nil
}

// Run poisons output set with 0xFF bytes and resets its guards, dispatches k
// once on input set `set`, checks the guards and returns a copy of the
// output (M·N elements, little-endian). A non-zero kernel return is an error;
// a changed guard is a *backend.GuardError.
func (p *problem) Run(ctx context.Context, k backend.Kernel, set int) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, fmt.Errorf("run %s: problem %w", k.Name(), errClosed)
	}
	if err := p.checkSet(set); err != nil {
		return nil, fmt.Errorf("run %s: %w", k.Name(), err)
	}
	d, err := p.dispatcher(k)
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", k.Name(), err)
	}
	body := p.body(set)
	for i := range body {
		body[i] = 0xFF
	}
	p.resetGuards(set)
	if err := d(set, true); err != nil {
		return nil, fmt.Errorf("run %s on %d×%d×%d: %w", k.Name(), p.s.M, p.s.N, p.s.K, err)
	}
	if err := p.checkGuards(set); err != nil {
		return nil, fmt.Errorf("run %s on %d×%d×%d: %w", k.Name(), p.s.M, p.s.N, p.s.K, err)
	}
	return append([]byte(nil), body...), nil
}

// Time dispatches k n times back to back on sets first, first+1, … (mod
// Sets) and returns the wall-clock time divided by n. For the vendor, the
// fp32 input copies are made before the clock starts and the timed call is
// cblas_sgemm alone (fp32 output; fp16 conversion happens only in Run).
func (p *problem) Time(ctx context.Context, k backend.Kernel, n, first int) (time.Duration, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if n <= 0 {
		return 0, fmt.Errorf("time %s: n = %d dispatches, want ≥ 1", k.Name(), n)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return 0, fmt.Errorf("time %s: problem %w", k.Name(), errClosed)
	}
	if err := p.checkSet(first); err != nil {
		return 0, fmt.Errorf("time %s: %w", k.Name(), err)
	}
	d, err := p.dispatcher(k)
	if err != nil {
		return 0, fmt.Errorf("time %s: %w", k.Name(), err)
	}
	start := time.Now()
	for i := 0; i < n; i++ {
		if err := d((first+i)%len(p.sets), false); err != nil {
			return 0, fmt.Errorf("time %s on %d×%d×%d: %w", k.Name(), p.s.M, p.s.N, p.s.K, err)
		}
	}
	return time.Since(start) / time.Duration(n), nil
}

// dispatcher returns a function that runs k once on a set; final asks the
// vendor to also produce the fp16 output. Any preparation (fp32 copies) is
// done here, before a timed loop starts.
func (p *problem) dispatcher(k backend.Kernel) (func(set int, final bool) error, error) {
	switch k := k.(type) {
	case *Kernel:
		if k.outF16 != p.outF16 {
			return nil, fmt.Errorf("kernel writes %s output, problem holds %s", outName(k.outF16), outName(p.outF16))
		}
		k.mu.Lock()
		closed := k.closed
		k.mu.Unlock()
		if closed {
			return nil, fmt.Errorf("kernel %w", errClosed)
		}
		s := p.s
		return func(set int, _ bool) error {
			in := p.sets[set]
			y := p.body(set)
			rc := k.fn(unsafe.Pointer(&in.X[0]), unsafe.Pointer(&in.W[0]), unsafe.Pointer(&y[0]), int64(s.M), int64(s.N), int64(s.K))
			runtime.KeepAlive(in)
			runtime.KeepAlive(y)
			if rc != 0 {
				return fmt.Errorf("kernel returned %d (workspace allocation failed)", rc)
			}
			return nil
		}, nil
	case *blasKernel:
		p.prepareF32()
		s := p.s
		return func(set int, final bool) error {
			f := p.f32[set]
			var y unsafe.Pointer
			if p.outF16 {
				y = unsafe.Pointer(&p.scratch[set][0])
			} else {
				y = unsafe.Pointer(&p.body(set)[0])
			}
			k.b.sgemm(s.M, s.N, s.K, f.x, f.w, y)
			runtime.KeepAlive(f)
			if p.outF16 && final {
				body := p.body(set)
				for i, v := range p.scratch[set] {
					binary.LittleEndian.PutUint16(body[2*i:], float16.Fromfloat32(v).Bits())
				}
			}
			return nil
		}, nil
	case nil:
		return nil, fmt.Errorf("nil kernel")
	default:
		return nil, fmt.Errorf("kernel %s (%T) is not a CPU kernel", k.Name(), k)
	}
}

func outName(f16 bool) string {
	if f16 {
		return "fp16"
	}
	return "fp32"
}

// prepareF32 converts every input set to fp32 once (for the vendor).
func (p *problem) prepareF32() {
	if p.f32 != nil {
		return
	}
	conv := func(h []uint16) []float32 {
		f := make([]float32, len(h))
		for i, v := range h {
			f[i] = float16.Frombits(v).Float32()
		}
		return f
	}
	for _, in := range p.sets {
		p.f32 = append(p.f32, f32Set{x: conv(in.X), w: conv(in.W)})
		if p.outF16 {
			p.scratch = append(p.scratch, make([]float32, p.s.M*p.s.N))
		}
	}
}

// Close drops the buffers.
func (p *problem) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	p.sets, p.outs, p.f32, p.scratch = nil, nil, nil, nil
	return nil
}
