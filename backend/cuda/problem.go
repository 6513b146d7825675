package cuda

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"time"
	"unsafe"

	"github.com/tilefit/tilefit/backend"
	"github.com/tilefit/tilefit/kernel"
)

// Guard regions around every output buffer.
const (
	// GuardBytes is the size of the guard region on each side of an output.
	GuardBytes = 64 << 10
	// GuardWord is the 32-bit pattern the guards are filled with: a NaN as
	// fp32 (0x7FC17FC1) and as each fp16 half (0x7FC1), distinct from the
	// 0xFF poison of the output itself.
	GuardWord = 0x7FC17FC1
)

// Problem is one cell's device buffers: Sets input sets (every In operand
// of the operator) and as many output sets (every Out operand), each output
// between two guard regions of GuardBytes filled with GuardWord. Scratch
// buffers of a kernel's Plan are allocated when the kernel is first bound.
type Problem struct {
	b      *Backend
	op     *kernel.Operator
	dims   kernel.Dims
	bytes  []int64    // per operand
	bufs   [][]devptr // [set][operand]: the allocation (outputs: guards included)
	bound  map[*Kernel]*boundKernel
	graphs map[graphKey]*graph
	modes  map[*Kernel]string
	closed bool
	// host holds Run's host copies for reuse (backend.Recycler).
	host backend.HostPool
	vs   *verifyState // outputs kept on the device (verify.go)
}

// Recycle hands back outputs of Run the caller no longer reads: the next
// Run copies into them instead of mapping new host memory.
func (p *Problem) Recycle(out [][]byte) { p.host.Put(out) }

// boundKernel is one kernel's plan resolved against the problem.
type boundKernel struct {
	args    [][]backend.Resolved
	scratch []devptr
	params  [][]*paramBlock // [set][launch]
	lt      []*ltPlan       // [launch]: the tuned cuBLASLt plan of a VendorGemmLt launch
}

// paramBlock holds one launch's kernel parameters and the pointer array
// cuLaunchKernel reads (void** kernelParams), heap-allocated so that the
// addresses stay valid (and stable for graph capture).
type paramBlock struct {
	words []uint64 // the parameters' storage (see params)
	ptrs  []uintptr
}

type graphKey struct {
	k     *Kernel
	n     int
	first int
}

// graph is one captured sequence of dispatches, instantiated.
type graph struct {
	g, exec uintptr
}

var _ backend.Problem = (*Problem)(nil)

// guarded is the allocation size of an output of n bytes.
func guarded(n int64) int64 { return 2*GuardBytes + (n+255)/256*256 }

// NewProblem allocates every operand of op on d for each input set and
// uploads the inputs (sets[s] holds the In operands in Operands order).
func (b *Backend) NewProblem(ctx context.Context, op *kernel.Operator, d kernel.Dims, sets [][][]byte) (backend.Problem, error) {
	p, err := b.newProblem(ctx, op, d, inputsOf(sets), false)
	if err != nil {
		return nil, err
	}
	return p, nil
}

// newProblem is NewProblem of inputs (drawn on the device when draw is set;
// NewDrawnProblem).
func (b *Backend) newProblem(ctx context.Context, op *kernel.Operator, d kernel.Dims, sets [][]backend.Input, draw bool) (*Problem, error) {
	if len(sets) == 0 {
		return nil, fmt.Errorf("new problem %s %s: no input sets", op.Name, d)
	}
	p := &Problem{b: b, op: op, dims: d, bound: map[*Kernel]*boundKernel{}, graphs: map[graphKey]*graph{}, modes: map[*Kernel]string{}}
	nin := 0
	for i := range op.Operands {
		n, err := op.OperandBytes(i, d)
		if err != nil {
			return nil, fmt.Errorf("new problem %s %s: %w", op.Name, d, err)
		}
		if n < 0 {
			return nil, fmt.Errorf("new problem %s %s: operand %s has negative size", op.Name, d, op.Operands[i].Name)
		}
		p.bytes = append(p.bytes, n)
		if op.Operands[i].Dir == kernel.In {
			nin++
		}
	}
	for si, in := range sets {
		if len(in) != nin {
			return nil, fmt.Errorf("new problem %s %s: set %d has %d input buffers, want %d", op.Name, d, si, len(in), nin)
		}
		j := 0
		for i, o := range op.Operands {
			if o.Dir == kernel.In {
				if inputLen(in[j]) != p.bytes[i] {
					return nil, fmt.Errorf("new problem %s %s: set %d operand %s has %d bytes, want %d", op.Name, d, si, o.Name, inputLen(in[j]), p.bytes[i])
				}
				j++
			}
		}
	}
	err := b.w.do(ctx, func() error {
		d := b.drv
		for _, in := range sets {
			var row []devptr
			j := 0
			for i, o := range op.Operands {
				size := p.bytes[i]
				if o.Dir == kernel.Out {
					size = guarded(size)
				}
				ptr, err := d.alloc(size)
				if err != nil {
					return err
				}
				row = append(row, ptr)
				if o.Dir == kernel.In {
					if err := b.upload(ptr, in[j], draw); err != nil {
						return fmt.Errorf("upload %s: %w", o.Name, err)
					}
					j++
				}
			}
			p.bufs = append(p.bufs, row)
		}
		return d.do("cuStreamSynchronize", b.stream)
	})
	if err != nil {
		p.Close()
		return nil, fmt.Errorf("new problem %s %s: %w", op.Name, d, err)
	}
	return p, nil
}

// Operator is the problem's operator.
func (p *Problem) Operator() *kernel.Operator { return p.op }

// Dims are the problem's dimensions.
func (p *Problem) Dims() kernel.Dims { return p.dims }

// Sets is the number of input/output sets.
func (p *Problem) Sets() int { return len(p.bufs) }

// Mode is how Time measured k on this problem: TimingGraph, TimingEvents,
// or "" before the first Time.
func (p *Problem) Mode(k backend.Kernel) string {
	if kk, ok := k.(*Kernel); ok {
		return p.modes[kk]
	}
	return ""
}

// operandPtr is the device address of operand i of set s (past the guard
// for outputs).
func (p *Problem) operandPtr(s, i int) devptr {
	if p.op.Operands[i].Dir == kernel.Out {
		return p.bufs[s][i] + GuardBytes
	}
	return p.bufs[s][i]
}

func (p *Problem) kernel(k backend.Kernel) (*Kernel, error) {
	kk, ok := k.(*Kernel)
	if !ok || kk.b != p.b {
		return nil, fmt.Errorf("kernel %s does not belong to this CUDA backend", k.Name())
	}
	if kk.closed {
		return nil, fmt.Errorf("kernel %s is closed", k.Name())
	}
	if p.closed {
		return nil, fmt.Errorf("problem closed")
	}
	return kk, nil
}

// bind resolves k's plan against the problem once (device thread): the
// arguments, the scratch buffers, the parameter blocks of every set.
func (p *Problem) bind(k *Kernel) (*boundKernel, error) {
	if bk, ok := p.bound[k]; ok {
		return bk, nil
	}
	args, err := backend.ResolvePlan(p.op, p.dims, k.plan)
	if err != nil {
		return nil, err
	}
	bk := &boundKernel{args: args}
	for li, l := range k.plan.Launches {
		if l.Vendor == kernel.VendorGemm || l.Vendor == kernel.VendorGemmLt {
			if err := backend.GemmArgs(args[li]); err != nil {
				return nil, err
			}
		}
	}
	for _, s := range k.plan.Scratch {
		ptr, err := p.b.drv.alloc(int64(s.Elems) * int64(s.DType.Size()))
		if err != nil {
			p.freeScratch(bk)
			return nil, fmt.Errorf("scratch %s: %w", s.Name, err)
		}
		bk.scratch = append(bk.scratch, ptr)
	}
	if err := p.tuneLt(k, bk); err != nil {
		p.freeScratch(bk)
		return nil, err
	}
	for s := range p.bufs {
		var row []*paramBlock
		for li, l := range k.plan.Launches {
			if l.Vendor != "" {
				row = append(row, nil)
				continue
			}
			pb, err := p.params(bk, s, args[li])
			if err != nil {
				p.freeScratch(bk)
				return nil, fmt.Errorf("launch %d (%s): %w", li, l.Entry, err)
			}
			row = append(row, pb)
		}
		bk.params = append(bk.params, row)
	}
	p.bound[k] = bk
	return bk, nil
}

// Bind resolves k's plan against the problem now (bind: the parameter
// blocks of every set, the tensor maps, the scratch buffers, cuBLASLt's
// choice of algorithm), as its first run would: a sweep does it in the
// load phase, so that the first verification run only runs.
func (p *Problem) Bind(ctx context.Context, k backend.Kernel) error {
	kk, err := p.kernel(k)
	if err != nil {
		return err
	}
	return p.b.w.do(ctx, func() error {
		_, err := p.bind(kk)
		return err
	})
}

// tuneLt tunes every VendorGemmLt launch of k on set 0's buffers (device
// thread; see cublaslt.go).
func (p *Problem) tuneLt(k *Kernel, bk *boundKernel) error {
	bk.lt = make([]*ltPlan, len(k.plan.Launches))
	for li, l := range k.plan.Launches {
		if l.Vendor != kernel.VendorGemmLt {
			continue
		}
		a := bk.args[li]
		m, n, kk := int(a[3].Value), int(a[4].Value), int(a[5].Value)
		if m == 0 || n == 0 {
			continue
		}
		var ct kernel.DType
		if a[2].Scratch >= 0 {
			ct = k.plan.Scratch[a[2].Scratch].DType
		} else {
			ct = p.op.Operands[a[2].Operand].DType
		}
		if ct != kernel.F16 && ct != kernel.F32 {
			return fmt.Errorf("vendor %s writes f16 or f32, not %s", l.Vendor, ct)
		}
		if p.b.lt.handle == nil {
			return fmt.Errorf("vendor %s: cuBLASLt has no handle (the kernel was not loaded by this backend)", l.Vendor)
		}
		pl, err := p.b.ltPlanFor(p.b.lt.handle, ltKey{m, n, kk, ct == kernel.F16}, p.bufPtr(bk, a[0], 0), p.bufPtr(bk, a[1], 0), p.bufPtr(bk, a[2], 0))
		if err != nil {
			return fmt.Errorf("launch %d (%s): %w", li, l.Vendor, err)
		}
		bk.lt[li] = pl
	}
	return nil
}

func (p *Problem) freeScratch(bk *boundKernel) {
	for _, s := range bk.scratch {
		_ = p.b.drv.free(s)
	}
	bk.scratch = nil
}

// bufPtr is the device address of buffer argument a on set s.
func (p *Problem) bufPtr(bk *boundKernel, a backend.Resolved, s int) devptr {
	if a.Scratch >= 0 {
		return bk.scratch[a.Scratch]
	}
	return p.operandPtr(s, a.Operand)
}

// params lays out one launch's parameters: 8 bytes per pointer or integer,
// and 128 bytes at a 64-byte-aligned address per tensor map.
func (p *Problem) params(bk *boundKernel, s int, args []backend.Resolved) (*paramBlock, error) {
	words := 0
	for _, a := range args {
		if a.Kind == kernel.ArgTensorMap {
			words += 16
		} else {
			words++
		}
	}
	pb := &paramBlock{words: make([]uint64, words+8)} // +8: room to align a tensor map to 64 bytes
	base := 0
	if off := int(uintptr(unsafe.Pointer(&pb.words[0])) % 64); off != 0 {
		base = (64 - off) / 8
	}
	// Pointers and integers go first at their own words after the aligned
	// tensor maps, so that every map starts on a 64-byte boundary.
	next := base
	slots := make([]int, len(args))
	for i, a := range args {
		if a.Kind == kernel.ArgTensorMap {
			slots[i] = next
			next += 16
		}
	}
	for i, a := range args {
		if a.Kind != kernel.ArgTensorMap {
			slots[i] = next
			next++
		}
	}
	for i, a := range args {
		switch a.Kind {
		case kernel.ArgOperand, kernel.ArgScratch:
			pb.words[slots[i]] = uint64(p.bufPtr(bk, a, s))
		case kernel.ArgDim, kernel.ArgInt:
			pb.words[slots[i]] = uint64(a.Value)
		case kernel.ArgTensorMap:
			m, err := p.b.encodeTensorMap(a.Map, p.bufPtr(bk, a, s))
			if err != nil {
				return nil, err
			}
			copy(pb.words[slots[i]:slots[i]+16], m[:])
		}
		pb.ptrs = append(pb.ptrs, uintptr(unsafe.Pointer(&pb.words[slots[i]])))
	}
	return pb, nil
}

// encodeTensorMap builds a CUtensorMap over the buffer at base
// (cuTensorMapEncodeTiled, tensormap.go; device thread).
func (b *Backend) encodeTensorMap(m *kernel.TensorMap, base devptr) (TensorMap, error) {
	return b.drv.encodeTensorMap(m, base)
}

// dispatch enqueues one call of k on set: zeroes the scratch buffers that
// ask for it, then runs the launches in order (device thread).
func (p *Problem) dispatch(k *Kernel, set int) error {
	bk, err := p.bind(k)
	if err != nil {
		return err
	}
	d, st := p.b.drv, p.b.stream
	for i, s := range k.plan.Scratch {
		if s.Zero && s.Elems > 0 {
			if err := d.do("cuMemsetD8Async", uintptr(bk.scratch[i]), 0, uintptr(int64(s.Elems)*int64(s.DType.Size())), st); err != nil {
				return err
			}
		}
	}
	for li, l := range k.plan.Launches {
		if l.Vendor != "" {
			a := bk.args[li]
			c := a[2]
			var ct kernel.DType
			if c.Scratch >= 0 {
				ct = k.plan.Scratch[c.Scratch].DType
			} else {
				ct = p.op.Operands[c.Operand].DType
			}
			if ct != kernel.F16 && ct != kernel.F32 {
				return fmt.Errorf("vendor %s writes f16 or f32, not %s", l.Vendor, ct)
			}
			m, n, kk := int(a[3].Value), int(a[4].Value), int(a[5].Value)
			if m == 0 || n == 0 {
				continue
			}
			if l.Vendor == kernel.VendorGemmLt {
				if err := p.b.lt.handle.gemm(bk.lt[li], p.bufPtr(bk, a[0], set), p.bufPtr(bk, a[1], set), p.bufPtr(bk, c, set), st); err != nil {
					return err
				}
				continue
			}
			if err := p.b.handle.gemm(p.bufPtr(bk, a[0], set), p.bufPtr(bk, a[1], set), p.bufPtr(bk, c, set), m, n, kk, ct == kernel.F16); err != nil {
				return err
			}
			continue
		}
		if l.Grid[0]*max(l.Grid[1], 1)*max(l.Grid[2], 1) == 0 {
			continue // nothing to compute (an empty dimension)
		}
		pb := bk.params[set][li]
		var pp unsafe.Pointer
		if len(pb.ptrs) > 0 {
			pp = unsafe.Pointer(&pb.ptrs[0])
		}
		err := d.launch(k.fns[li], dim3(l.Grid), dim3(l.Block), l.Shared, l.Cluster, l.PDL, st, pp)
		runtime.KeepAlive(pb)
		if err != nil {
			return fmt.Errorf("launch %d (%s): %w", li, l.Entry, err)
		}
	}
	return nil
}

// dim3 turns zero components into 1.
func dim3(v [3]int) [3]int {
	for i := range v {
		if v[i] == 0 {
			v[i] = 1
		}
	}
	return v
}

// poisonAndDispatch fills every output of set with 0xFF bytes and its
// guards with GuardWord, then queues k's launch list on the backend's
// stream (device thread): the start of Run and Keep.
func (p *Problem) poisonAndDispatch(kk *Kernel, set int) error {
	d, st := p.b.drv, p.b.stream
	for i, o := range p.op.Operands {
		if o.Dir != kernel.Out {
			continue
		}
		y, size := p.bufs[set][i], guarded(p.bytes[i])
		if err := d.do("cuMemsetD32Async", uintptr(y), GuardWord, uintptr(size/4), st); err != nil {
			return err
		}
		if p.bytes[i] > 0 {
			if err := d.do("cuMemsetD8Async", uintptr(y+GuardBytes), 0xFF, uintptr(p.bytes[i]), st); err != nil {
				return err
			}
		}
	}
	return p.dispatch(kk, set)
}

// Run poisons every output of set with 0xFF (cuMemsetD8) and its guards
// with GuardWord, runs k once on input set `set`, waits, and returns the
// outputs (little-endian elements of each operand's type). A changed guard
// is a *backend.GuardError.
func (p *Problem) Run(ctx context.Context, k backend.Kernel, set int) ([][]byte, error) {
	kk, err := p.kernel(k)
	if err != nil {
		return nil, fmt.Errorf("run: %w", err)
	}
	if set < 0 || set >= len(p.bufs) {
		return nil, fmt.Errorf("run %s: set %d of %d", k.Name(), set, len(p.bufs))
	}
	hosts := make([][]byte, len(p.op.Operands))
	err = p.b.w.do(ctx, func() error {
		d, st := p.b.drv, p.b.stream
		if err := p.poisonAndDispatch(kk, set); err != nil {
			return err
		}
		if err := d.do("cuStreamSynchronize", st); err != nil {
			return err
		}
		for i, o := range p.op.Operands {
			if o.Dir != kernel.Out {
				continue
			}
			hosts[i] = p.host.Get(int(guarded(p.bytes[i])))
			if err := d.dtoh(hosts[i], p.bufs[set][i]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", k.Name(), err)
	}
	out := make([][]byte, len(hosts))
	for i, h := range hosts {
		if h == nil {
			continue
		}
		es := p.op.Operands[i].DType.Size()
		if off, bad := checkGuards(h, p.bytes[i], es); bad {
			return nil, fmt.Errorf("run %s: %w", k.Name(), &backend.GuardError{Operand: p.op.Operands[i].Name, Offset: off})
		}
		out[i] = h[GuardBytes : GuardBytes+p.bytes[i] : GuardBytes+p.bytes[i]]
		p.host.Lend(h, out[i])
	}
	return out, nil
}

// checkGuards finds the first byte outside [GuardBytes, GuardBytes+size)
// of host that lost the guard pattern and returns its element offset from
// the output start (negative before it).
func checkGuards(host []byte, size int64, esize int) (int, bool) {
	return guardRegions(host[:GuardBytes], host[GuardBytes+size:], size, esize)
}

// Time dispatches k n times back to back on sets first, first+1, ... (mod
// Sets) and returns the mean time per dispatch, measured with CUDA events.
// With TimingAuto the first call for k on this problem runs k once and
// times 3 dispatches; under Options.GraphBelow per dispatch, k is timed from
// then on as a CUDA graph of the n dispatches (captured once per (k, n,
// first), uploaded (cuGraphUpload), then replayed between the events), else as
// n plain launches between the events. Mode reports the choice.
func (p *Problem) Time(ctx context.Context, k backend.Kernel, n, first int) (time.Duration, error) {
	kk, err := p.kernel(k)
	if err != nil {
		return 0, fmt.Errorf("time: %w", err)
	}
	if n <= 0 {
		return 0, fmt.Errorf("time %s: n = %d", k.Name(), n)
	}
	var dt time.Duration
	err = p.b.w.do(ctx, func() error {
		var err error
		dt, err = p.timeOne(kk, n, first)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("time %s: %w", k.Name(), err)
	}
	return dt, nil
}

// TimeRound is Time for each of ks in order (ks[j] dispatched n[j] times
// from set first[j]), begin(j) called before each, all in one call to the
// device thread: each sample is timed exactly as Time times it (its own
// events, its own wait), and the host's hand-over to the device thread
// and back between two samples — two thread wake-ups, while the GPU sat
// idle — is gone. On an error the durations of the samples before the
// failing one come back with it (len says which failed). begin runs on
// the device thread and must not call the backend.
func (p *Problem) TimeRound(ctx context.Context, ks []backend.Kernel, n, first []int, begin func(j int)) ([]time.Duration, error) {
	if len(n) != len(ks) || len(first) != len(ks) {
		return nil, fmt.Errorf("time round: %d kernels, %d counts, %d first sets", len(ks), len(n), len(first))
	}
	kks := make([]*Kernel, len(ks))
	for j, k := range ks {
		kk, err := p.kernel(k)
		if err != nil {
			return nil, fmt.Errorf("time: %w", err)
		}
		if n[j] <= 0 {
			return nil, fmt.Errorf("time %s: n = %d", k.Name(), n[j])
		}
		kks[j] = kk
	}
	out := make([]time.Duration, 0, len(ks))
	err := p.b.w.do(ctx, func() error {
		for j, kk := range kks {
			if err := ctx.Err(); err != nil {
				return err
			}
			if begin != nil {
				begin(j)
			}
			if err := p.startOne(kk, n[j], first[j]); err != nil {
				return fmt.Errorf("time %s: %w", kk.Name(), err)
			}
			if j+1 < len(kks) {
				// While the GPU runs sample j, capture the graph sample j+1
				// needs (host work: ~1 ms for 50 dispatches, the GPU idle
				// while it ran between the two); its upload is queued
				// behind sample j's end event, outside both samples.
				p.prefetch(kks[j+1], n[j+1], first[j+1])
			}
			dt, err := p.waitOne(n[j])
			if err != nil {
				return fmt.Errorf("time %s: %w", kk.Name(), err)
			}
			out = append(out, dt)
		}
		return nil
	})
	return out, err
}

// startOne queues one sample as timeOne times it — the start event, the
// dispatches (or their graph), the end event — without waiting for it
// (device thread; waitOne ends it).
func (p *Problem) startOne(kk *Kernel, n, first int) error {
	sets := len(p.bufs)
	first = ((first % sets) + sets) % sets
	if _, err := p.bind(kk); err != nil {
		return err
	}
	mode, err := p.mode(kk)
	if err != nil {
		return err
	}
	d, st := p.b.drv, p.b.stream
	if mode == TimingGraph {
		g, err := p.graph(kk, n, first)
		if err == nil {
			if err := d.do("cuEventRecord", uintptr(p.b.evStart), st); err != nil {
				return err
			}
			if err := d.do("cuGraphLaunch", g.exec, st); err != nil {
				return err
			}
			return d.do("cuEventRecord", uintptr(p.b.evEnd), st)
		}
		if !errors.Is(err, errCapture) {
			return err
		}
		p.modes[kk] = TimingEvents
	}
	if err := d.do("cuEventRecord", uintptr(p.b.evStart), st); err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		if err := p.dispatch(kk, (first+i)%sets); err != nil {
			return err
		}
	}
	return d.do("cuEventRecord", uintptr(p.b.evEnd), st)
}

// waitOne waits for the sample startOne queued and returns its time per
// dispatch (device thread).
func (p *Problem) waitOne(n int) (time.Duration, error) {
	d := p.b.drv
	if err := d.do("cuEventSynchronize", uintptr(p.b.evEnd)); err != nil {
		return 0, err
	}
	ms, err := d.elapsedMs(p.b.evStart, p.b.evEnd)
	if err != nil {
		return 0, err
	}
	return time.Duration(float64(ms) * 1e6 / float64(n)), nil
}

// prefetch captures, instantiates and uploads the graph of sample (kk, n,
// first) ahead of it when kk is already bound and timed as a graph and the
// graph is not there yet (device thread). A capture that fails is left to
// the sample itself, which fails the same way and falls back to events.
func (p *Problem) prefetch(kk *Kernel, n, first int) {
	sets := len(p.bufs)
	first = ((first % sets) + sets) % sets
	if p.modes[kk] != TimingGraph || p.bound[kk] == nil {
		return
	}
	if _, ok := p.graphs[graphKey{kk, n, first}]; ok {
		return
	}
	_, _ = p.graph(kk, n, first)
}

// timeOne is Time on the device thread.
func (p *Problem) timeOne(kk *Kernel, n, first int) (time.Duration, error) {
	sets := len(p.bufs)
	first = ((first % sets) + sets) % sets
	// Scratch buffers are allocated before any capture or timing.
	if _, err := p.bind(kk); err != nil {
		return 0, err
	}
	mode, err := p.mode(kk)
	if err != nil {
		return 0, err
	}
	if mode == TimingGraph {
		g, err := p.graph(kk, n, first)
		if err == nil {
			return p.timeGraph(g, n)
		}
		if !errors.Is(err, errCapture) {
			return 0, err
		}
		// The dispatches cannot be captured: time them as launches.
		p.modes[kk] = TimingEvents
	}
	return p.timeEvents(kk, n, first)
}

// mode decides how k is timed (device thread).
func (p *Problem) mode(k *Kernel) (string, error) {
	if m, ok := p.modes[k]; ok {
		return m, nil
	}
	m := p.b.opts.Timing
	if m == TimingAuto {
		if err := p.dispatch(k, 0); err != nil {
			return "", err
		}
		// The threshold is per launch: a dispatch of several launches (a
		// vendor GEMM chain, split K's reduce) pays the host's launch cost
		// per launch, which timed with events would stand in for the GPU
		// time (the fused baselines' three launches read ~30 µs at M 256
		// on the H200 that way, their GPU time ~12 µs).
		below := p.b.opts.GraphBelow * time.Duration(max(1, len(k.plan.Launches)))
		graph, err := p.faster(k, below)
		if err != nil {
			return "", err
		}
		m = TimingEvents
		if graph {
			m = TimingGraph
		}
	}
	p.modes[k] = m
	return m, nil
}

// faster reports whether 3 dispatches of k from set 0 take less than
// below each (their mean, timed with events after one untimed dispatch),
// as TimingAuto decides. The first of the three is timed alone first: it
// runs exactly as it did at the head of the three (same set, right after
// the untimed one), and the three together take at least as long, so
// when it alone took 3·below or more their mean is at least below and
// the decision is made without the other two (the large kernels of a
// cell, whose warm-up dispatches were a quarter of its timing phase at M
// 2048 on the H200). Otherwise the three are timed back to back as
// before, now after two dispatches instead of one.
func (p *Problem) faster(k *Kernel, below time.Duration) (bool, error) {
	one, err := p.timeEvents(k, 1, 0)
	if err != nil {
		return false, err
	}
	if one >= 3*below {
		return false, nil
	}
	est, err := p.timeEvents(k, 3, 0)
	if err != nil {
		return false, err
	}
	return est < below, nil
}

// timeEvents records an event, launches n dispatches, records an event,
// waits, and returns the elapsed time / n.
func (p *Problem) timeEvents(k *Kernel, n, first int) (time.Duration, error) {
	d, st := p.b.drv, p.b.stream
	if err := d.do("cuEventRecord", uintptr(p.b.evStart), st); err != nil {
		return 0, err
	}
	for i := 0; i < n; i++ {
		if err := p.dispatch(k, (first+i)%len(p.bufs)); err != nil {
			return 0, err
		}
	}
	return p.finish(n)
}

// finish records the end event, waits for it and returns elapsed / n.
func (p *Problem) finish(n int) (time.Duration, error) {
	d, st := p.b.drv, p.b.stream
	if err := d.do("cuEventRecord", uintptr(p.b.evEnd), st); err != nil {
		return 0, err
	}
	if err := d.do("cuEventSynchronize", uintptr(p.b.evEnd)); err != nil {
		return 0, err
	}
	ms, err := d.elapsedMs(p.b.evStart, p.b.evEnd)
	if err != nil {
		return 0, err
	}
	return time.Duration(float64(ms) * 1e6 / float64(n)), nil
}

var errCapture = errors.New("stream capture failed")

// graph returns the instantiated graph of n dispatches of k from set first,
// capturing and uploading it on first use.
func (p *Problem) graph(k *Kernel, n, first int) (*graph, error) {
	key := graphKey{k, n, first}
	if g, ok := p.graphs[key]; ok {
		return g, nil
	}
	d, st := p.b.drv, p.b.stream
	gr, exec, err := d.captureGraph(st, n, func(i int) error { return p.dispatch(k, (first+i)%len(p.bufs)) })
	if err != nil {
		return nil, err
	}
	g := &graph{g: gr, exec: exec}
	p.graphs[key] = g
	// The first launch of an instantiated graph would also upload it to
	// the device; cuGraphUpload does that alone, ordered on the stream
	// before the timed launch. (Without it the graph was replayed once
	// untimed: the GPU time of a whole sample again for every (k, n,
	// first) — with D coprime to the sets every sample of a graph-timed
	// candidate, ~1/6 of the strata sweep's timing phase — and each such
	// sample ran right after its own replay while every other ran after
	// another candidate.)
	if d.has("cuGraphUpload") {
		if err := d.do("cuGraphUpload", g.exec, st); err != nil {
			return nil, err
		}
		return g, nil
	}
	if err := d.do("cuGraphLaunch", g.exec, st); err != nil {
		return nil, err
	}
	if err := d.do("cuStreamSynchronize", st); err != nil {
		return nil, err
	}
	return g, nil
}

// captureGraph captures body(0), …, body(n-1) on stream st into a graph and
// instantiates it: the capture of the sweep's graph-timed samples
// (Problem.graph) and of the read-ceiling test's. On an error (wrapping
// errCapture) nothing is left allocated.
func (d *driver) captureGraph(st uintptr, n int, body func(i int) error) (g, exec uintptr, err error) {
	if err := d.do("cuStreamBeginCapture_v2", st, captureModeRelaxed); err != nil {
		return 0, 0, fmt.Errorf("%w: %w", errCapture, err)
	}
	var berr error
	for i := 0; i < n && berr == nil; i++ {
		berr = body(i)
	}
	gp := new(uintptr)
	eerr := d.do("cuStreamEndCapture", st, uintptr(unsafe.Pointer(gp)))
	if berr != nil || eerr != nil {
		if *gp != 0 {
			d.call("cuGraphDestroy", *gp)
		}
		return 0, 0, fmt.Errorf("%w: %w", errCapture, errors.Join(berr, eerr))
	}
	ep := new(uintptr)
	if err := d.do("cuGraphInstantiateWithFlags", uintptr(unsafe.Pointer(ep)), *gp, 0); err != nil {
		d.call("cuGraphDestroy", *gp)
		return 0, 0, fmt.Errorf("%w: %w", errCapture, err)
	}
	return *gp, *ep, nil
}

func (p *Problem) timeGraph(g *graph, n int) (time.Duration, error) {
	d, st := p.b.drv, p.b.stream
	if err := d.do("cuEventRecord", uintptr(p.b.evStart), st); err != nil {
		return 0, err
	}
	if err := d.do("cuGraphLaunch", g.exec, st); err != nil {
		return 0, err
	}
	return p.finish(n)
}

// Close frees the buffers and graphs.
func (p *Problem) Close() error {
	if p.closed {
		return nil
	}
	p.closed = true
	return p.b.w.do(context.Background(), func() error {
		d := p.b.drv
		var errs []error
		for _, g := range p.graphs {
			errs = append(errs, d.do("cuGraphExecDestroy", g.exec), d.do("cuGraphDestroy", g.g))
		}
		p.graphs = nil
		errs = append(errs, p.closeVerify())
		for _, row := range p.bufs {
			for _, b := range row {
				errs = append(errs, d.free(b))
			}
		}
		for _, bk := range p.bound {
			for _, s := range bk.scratch {
				errs = append(errs, d.free(s))
			}
		}
		p.bufs, p.bound = nil, nil
		return errors.Join(errs...)
	})
}
