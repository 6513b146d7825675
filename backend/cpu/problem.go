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
	"github.com/tilefit/tilefit/kernel"
)

// Guard is the number of output elements before and after every output
// buffer that must keep their sentinel through a run.
const Guard = 64

// Guard sentinels per element size: NaN patterns no kernel computes (for
// floating-point types) and different from the 0xFF poison, so a stray
// write shows as a changed guard.
const (
	GuardF32 uint32 = 0x7fa5a5a5
	GuardF16 uint16 = 0x7da5
	GuardI8  uint8  = 0xa5
)

// buffer is one operand or scratch buffer of one set: Go memory, 64-byte
// aligned, with Guard elements on both sides of outputs.
type buffer struct {
	mem   []byte // whole allocation
	body  []byte // the operand's elements
	dt    kernel.DType
	guard bool
}

func newBuffer(dt kernel.DType, elems int, guard bool) *buffer {
	es := dt.Size()
	g := 0
	if guard {
		g = Guard * es
	}
	mem := make([]byte, elems*es+2*g+64)
	off := int((64 - uintptr(unsafe.Pointer(&mem[0]))%64) % 64)
	mem = mem[off : off+elems*es+2*g]
	b := &buffer{mem: mem, body: mem[g : g+elems*es : g+elems*es], dt: dt, guard: guard}
	if guard {
		b.resetGuards()
	}
	return b
}

func (b *buffer) bodyPtr() unsafe.Pointer {
	return unsafe.Pointer(unsafe.SliceData(b.body)) // zero elements: never dereferenced
}

func (b *buffer) guardBytes() int {
	if !b.guard {
		return 0
	}
	return Guard * b.dt.Size()
}

func putGuard(m []byte, es int) {
	switch es {
	case 1:
		m[0] = GuardI8
	case 2:
		binary.LittleEndian.PutUint16(m, GuardF16)
	default:
		binary.LittleEndian.PutUint32(m, GuardF32)
	}
}

func (b *buffer) resetGuards() {
	es, g := b.dt.Size(), b.guardBytes()
	n := len(b.body)
	for j := 0; j < Guard; j++ {
		putGuard(b.mem[j*es:], es)
		putGuard(b.mem[g+n+j*es:], es)
	}
}

// checkGuards returns the element offset of the first changed guard
// (relative to the body start) and true, or false.
func (b *buffer) checkGuards() (int, bool) {
	es, g := b.dt.Size(), b.guardBytes()
	n := len(b.body)
	var want [4]byte
	putGuard(want[:], es)
	for j := 0; j < Guard; j++ {
		if string(b.mem[j*es:j*es+es]) != string(want[:es]) {
			return j - Guard, true
		}
	}
	for j := 0; j < Guard; j++ {
		o := g + n + j*es
		if string(b.mem[o:o+es]) != string(want[:es]) {
			return n/es + j, true
		}
	}
	return 0, false
}

// problem holds one cell's Go-allocated buffers: every operand of every set
// (inputs copied as given, outputs guarded), the scratch buffers of each
// kernel, and — built lazily before a vendor launch's first timed call —
// fp32 copies of the fp16 inputs it reads.
type problem struct {
	op   *kernel.Operator
	dims kernel.Dims
	sets [][]*buffer // [set][operand]

	mu      sync.Mutex
	kernels map[*Kernel]*bound
	f32     map[f32Key][]float32
	closed  bool
	// host holds Run's copies for reuse (backend.Recycler).
	host backend.HostPool
	// HostVerifier makes the problem a backend.Verifier (verify.go).
	*backend.HostVerifier
}

// Recycle hands back outputs of Run the caller no longer reads.
func (p *problem) Recycle(out [][]byte) { p.host.Put(out) }

type f32Key struct{ set, operand int }

// bound is one kernel's plan resolved against this problem: per set, the
// pointer and integer argument arrays of every launch.
type bound struct {
	k       *Kernel
	args    [][]backend.Resolved
	scratch []*buffer
	ptrs    [][][]unsafe.Pointer // [set][launch]
	ints    [][]int64            // [launch]
	tmp     map[int][]float32    // vendor fp32 output per launch when C is not fp32
}

// NewProblem allocates every operand of op on d for each input set and
// copies the inputs (sets[s] holds the In operands in Operands order).
func (c *CPU) NewProblem(ctx context.Context, op *kernel.Operator, d kernel.Dims, sets [][][]byte) (backend.Problem, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(sets) == 0 {
		return nil, fmt.Errorf("problem %s %s: no input sets", op.Name, d)
	}
	p := &problem{op: op, dims: d, kernels: map[*Kernel]*bound{}, f32: map[f32Key][]float32{}}
	for si, in := range sets {
		var bufs []*buffer
		j := 0
		for oi, o := range op.Operands {
			n, err := d.Elems(o.Shape)
			if err != nil {
				return nil, fmt.Errorf("problem %s %s: operand %s: %w", op.Name, d, o.Name, err)
			}
			if n < 0 {
				return nil, fmt.Errorf("problem %s %s: operand %s has %d elements", op.Name, d, o.Name, n)
			}
			b := newBuffer(o.DType, n, o.Dir == kernel.Out)
			if o.Dir == kernel.In {
				if j >= len(in) || len(in[j]) != len(b.body) {
					got := -1
					if j < len(in) {
						got = len(in[j])
					}
					return nil, fmt.Errorf("problem %s %s: set %d operand %s has %d bytes, want %d (%v %s)",
						op.Name, d, si, o.Name, got, len(b.body), o.Shape, o.DType)
				}
				copy(b.body, in[j])
				j++
			}
			_ = oi
			bufs = append(bufs, b)
		}
		if j != len(in) {
			return nil, fmt.Errorf("problem %s %s: set %d has %d input buffers, the operator %d", op.Name, d, si, len(in), j)
		}
		p.sets = append(p.sets, bufs)
	}
	p.HostVerifier = backend.NewHostVerifier(p)
	return p, nil
}

func (p *problem) Operator() *kernel.Operator { return p.op }
func (p *problem) Dims() kernel.Dims          { return p.dims }
func (p *problem) Sets() int                  { return len(p.sets) }

func (p *problem) checkSet(set int) error {
	if set < 0 || set >= len(p.sets) {
		return fmt.Errorf("set %d out of range (problem has %d)", set, len(p.sets))
	}
	return nil
}

// Run poisons every output of set with 0xFF bytes and resets its guards,
// runs k's launches once on input set `set`, checks the guards and returns
// copies of the outputs. A non-zero entry return is an error; a changed
// guard is a *backend.GuardError.
func (p *problem) Run(ctx context.Context, k backend.Kernel, set int) ([][]byte, error) {
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
	b, err := p.bind(k)
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", k.Name(), err)
	}
	for _, buf := range p.sets[set] {
		if buf.guard {
			for i := range buf.body {
				buf.body[i] = 0xFF
			}
			buf.resetGuards()
		}
	}
	if err := p.call(b, set, true); err != nil {
		return nil, fmt.Errorf("run %s on %s %s: %w", k.Name(), p.op.Name, p.dims, err)
	}
	out := make([][]byte, len(p.op.Operands))
	for i, buf := range p.sets[set] {
		if !buf.guard {
			continue
		}
		if off, bad := buf.checkGuards(); bad {
			return nil, fmt.Errorf("run %s on %s %s: %w", k.Name(), p.op.Name, p.dims, &backend.GuardError{Operand: p.op.Operands[i].Name, Offset: off})
		}
		if len(buf.body) > 0 {
			out[i] = p.host.Get(len(buf.body))
			copy(out[i], buf.body)
			p.host.Lend(out[i], out[i])
		}
	}
	return out, nil
}

// Time runs k n times back to back on sets first, first+1, … (mod Sets) and
// returns the wall-clock time divided by n. Preparation (scratch buffers,
// a vendor's fp32 input copies) is done before the clock starts; a vendor
// GEMM into an fp16 operand output is timed without the final rounding to
// fp16 (done only in Run).
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
	b, err := p.bind(k)
	if err != nil {
		return 0, fmt.Errorf("time %s: %w", k.Name(), err)
	}
	for s := range p.sets {
		p.prepareVendor(b, s)
	}
	start := time.Now()
	for i := 0; i < n; i++ {
		if err := p.call(b, (first+i)%len(p.sets), false); err != nil {
			return 0, fmt.Errorf("time %s on %s %s: %w", k.Name(), p.op.Name, p.dims, err)
		}
	}
	return time.Since(start) / time.Duration(n), nil
}

// bind resolves k's plan against the problem once: arguments, scratch
// buffers, per-set pointer arrays.
func (p *problem) bind(k backend.Kernel) (*bound, error) {
	kk, ok := k.(*Kernel)
	if !ok || kk == nil {
		if k == nil {
			return nil, fmt.Errorf("nil kernel")
		}
		return nil, fmt.Errorf("kernel %s (%T) is not a CPU kernel", k.Name(), k)
	}
	kk.mu.Lock()
	closed := kk.closed
	kk.mu.Unlock()
	if closed {
		return nil, fmt.Errorf("kernel %w", errClosed)
	}
	if b, ok := p.kernels[kk]; ok {
		return b, nil
	}
	args, err := backend.ResolvePlan(p.op, p.dims, kk.plan)
	if err != nil {
		return nil, err
	}
	b := &bound{k: kk, args: args, tmp: map[int][]float32{}}
	for _, s := range kk.plan.Scratch {
		b.scratch = append(b.scratch, newBuffer(s.DType, s.Elems, false))
	}
	b.ints = make([][]int64, len(args))
	for li, l := range args {
		if kk.plan.Launches[li].Vendor == kernel.VendorGemm {
			if err := backend.GemmArgs(l); err != nil {
				return nil, err
			}
		}
		for _, a := range l {
			if a.Kind == kernel.ArgDim || a.Kind == kernel.ArgInt {
				b.ints[li] = append(b.ints[li], a.Value)
			}
		}
	}
	for s := range p.sets {
		var per [][]unsafe.Pointer
		for _, l := range args {
			var ptrs []unsafe.Pointer
			for _, a := range l {
				switch a.Kind {
				case kernel.ArgOperand:
					ptrs = append(ptrs, p.sets[s][a.Operand].bodyPtr())
				case kernel.ArgScratch:
					ptrs = append(ptrs, b.scratch[a.Scratch].bodyPtr())
				}
			}
			per = append(per, ptrs)
		}
		b.ptrs = append(b.ptrs, per)
	}
	p.kernels[kk] = b
	return b, nil
}

// buf returns the buffer argument a of set s.
func (p *problem) buf(b *bound, a backend.Resolved, s int) *buffer {
	if a.Kind == kernel.ArgScratch {
		return b.scratch[a.Scratch]
	}
	return p.sets[s][a.Operand]
}

// call runs b's launches once on set s; final is true in Run.
func (p *problem) call(b *bound, s int, final bool) error {
	for i, sc := range b.k.plan.Scratch {
		if sc.Zero {
			clear(b.scratch[i].body)
		}
	}
	for li, l := range b.k.plan.Launches {
		if l.Vendor != "" {
			if err := p.vendorGemm(b, li, s, final); err != nil {
				return fmt.Errorf("launch %d (vendor %s): %w", li, l.Vendor, err)
			}
			continue
		}
		var pp, ip unsafe.Pointer
		if ptrs := b.ptrs[s][li]; len(ptrs) > 0 {
			pp = unsafe.Pointer(&ptrs[0])
		}
		if ints := b.ints[li]; len(ints) > 0 {
			ip = unsafe.Pointer(&ints[0])
		}
		rc := b.k.fns[li](pp, ip)
		runtime.KeepAlive(b)
		runtime.KeepAlive(p.sets[s])
		if rc != 0 {
			return fmt.Errorf("launch %d (%s) returned %d", li, l.Entry, rc)
		}
	}
	return nil
}

// f32Of returns buffer a of set s as fp32 values: a cached copy for input
// operands (made once, outside timed regions), a fresh conversion for
// scratch buffers (their contents change every call).
func (p *problem) f32Of(b *bound, a backend.Resolved, s int) ([]float32, error) {
	buf := p.buf(b, a, s)
	key := f32Key{s, a.Operand}
	if a.Kind == kernel.ArgOperand && p.op.Operands[a.Operand].Dir == kernel.In {
		if v, ok := p.f32[key]; ok {
			return v, nil
		}
	}
	n := len(buf.body) / buf.dt.Size()
	v := make([]float32, n)
	switch buf.dt {
	case kernel.F16:
		for i := range v {
			v[i] = float16.Frombits(binary.LittleEndian.Uint16(buf.body[2*i:])).Float32()
		}
	case kernel.F32:
		copy(v, unsafe.Slice((*float32)(buf.bodyPtr()), n))
	default:
		return nil, fmt.Errorf("vendor gemm reads f16 or f32, not %s", buf.dt)
	}
	if a.Kind == kernel.ArgOperand && p.op.Operands[a.Operand].Dir == kernel.In {
		p.f32[key] = v
	}
	return v, nil
}

// prepareVendor makes the fp32 input copies of b's vendor launches for set s.
func (p *problem) prepareVendor(b *bound, s int) {
	for li, l := range b.k.plan.Launches {
		if l.Vendor != "" {
			p.f32Of(b, b.args[li][0], s)
			p.f32Of(b, b.args[li][1], s)
		}
	}
}

// vendorGemm runs a kernel.VendorGemm launch with OpenBLAS sgemm: C[M,N] =
// A[M,K]·B[N,K]ᵀ on fp32 copies. An fp32 C is written in place; any other C
// is computed into an fp32 temporary and rounded into C — for an output
// operand only in Run (final), so that timing measures sgemm alone.
func (p *problem) vendorGemm(b *bound, li, s int, final bool) error {
	a := b.args[li]
	m, n, k := int(a[3].Value), int(a[4].Value), int(a[5].Value)
	x, err := p.f32Of(b, a[0], s)
	if err != nil {
		return err
	}
	w, err := p.f32Of(b, a[1], s)
	if err != nil {
		return err
	}
	if len(x) < m*k || len(w) < n*k {
		return fmt.Errorf("A or B smaller than %d×%d, %d×%d", m, k, n, k)
	}
	c := p.buf(b, a[2], s)
	if len(c.body) < m*n*c.dt.Size() {
		return fmt.Errorf("C smaller than %d×%d", m, n)
	}
	if c.dt == kernel.F32 {
		b.k.blas.sgemm(m, n, k, x, w, c.bodyPtr())
		return nil
	}
	if c.dt != kernel.F16 {
		return fmt.Errorf("vendor gemm writes f16 or f32, not %s", c.dt)
	}
	t := b.tmp[li]
	if len(t) < m*n {
		t = make([]float32, m*n)
		b.tmp[li] = t
	}
	if m*n > 0 {
		b.k.blas.sgemm(m, n, k, x, w, unsafe.Pointer(&t[0]))
	}
	if final || a[2].Kind == kernel.ArgScratch {
		for i := 0; i < m*n; i++ {
			binary.LittleEndian.PutUint16(c.body[2*i:], float16.Fromfloat32(t[i]).Bits())
		}
	}
	return nil
}

// Close drops the buffers.
func (p *problem) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	p.sets, p.kernels, p.f32 = nil, nil, nil
	return nil
}
