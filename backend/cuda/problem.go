package cuda

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"
	"unsafe"

	"github.com/tilefit/tilefit/backend"
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

// Problem is one cell's device buffers: Sets input sets (X M×K, W N×K fp16)
// and as many outputs (M×N, fp32 or fp16), each output between two guard
// regions of GuardBytes filled with GuardWord.
type Problem struct {
	b       *Backend
	shape   backend.Shape
	outF16  bool
	esize   int   // bytes per output element
	outSize int64 // M·N·esize
	bufSize int64 // GuardBytes + roundup(outSize, 256) + GuardBytes
	x, w, y []devptr
	args    []*launchArgs // per set: X, W, output start, M, N, K
	graphs  map[graphKey]*graph
	modes   map[*Kernel]string
	closed  bool
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

// NewProblem allocates len(sets) input sets and guarded outputs for s and
// uploads the inputs. outF16 selects fp16 output (the kernels must be
// compiled with OUT_F16=1).
func (b *Backend) NewProblem(ctx context.Context, s backend.Shape, sets []backend.InputSet, outF16 bool) (backend.Problem, error) {
	if s.M < 0 || s.N < 0 || s.K < 0 {
		return nil, fmt.Errorf("new problem %dx%dx%d: negative size", s.M, s.N, s.K)
	}
	if len(sets) == 0 {
		return nil, fmt.Errorf("new problem %dx%dx%d: no input sets", s.M, s.N, s.K)
	}
	for i, in := range sets {
		if len(in.X) != s.M*s.K || len(in.W) != s.N*s.K {
			return nil, fmt.Errorf("new problem %dx%dx%d: set %d has |X| %d, |W| %d (want %d, %d)", s.M, s.N, s.K, i, len(in.X), len(in.W), s.M*s.K, s.N*s.K)
		}
	}
	p := &Problem{b: b, shape: s, outF16: outF16, esize: 4, graphs: map[graphKey]*graph{}, modes: map[*Kernel]string{}}
	if outF16 {
		p.esize = 2
	}
	p.outSize = int64(s.M) * int64(s.N) * int64(p.esize)
	p.bufSize = 2*GuardBytes + (p.outSize+255)/256*256
	err := b.w.do(ctx, func() error {
		d := b.drv
		for _, in := range sets {
			x, err := d.alloc(int64(len(in.X)) * 2)
			if err != nil {
				return err
			}
			p.x = append(p.x, x)
			w, err := d.alloc(int64(len(in.W)) * 2)
			if err != nil {
				return err
			}
			p.w = append(p.w, w)
			y, err := d.alloc(p.bufSize)
			if err != nil {
				return err
			}
			p.y = append(p.y, y)
			if err := htod(d, x, in.X); err != nil {
				return fmt.Errorf("upload X: %w", err)
			}
			if err := htod(d, w, in.W); err != nil {
				return fmt.Errorf("upload W: %w", err)
			}
			p.args = append(p.args, newLaunchArgs(x, w, y+GuardBytes, s.M, s.N, s.K))
		}
		return nil
	})
	if err != nil {
		p.Close()
		return nil, fmt.Errorf("new problem %dx%dx%d: %w", s.M, s.N, s.K, err)
	}
	return p, nil
}

// Shape is the problem's M, N, K.
func (p *Problem) Shape() backend.Shape { return p.shape }

// Sets is the number of input/output sets.
func (p *Problem) Sets() int { return len(p.args) }

// Mode is how Time measured k on this problem: TimingGraph, TimingEvents,
// or "" before the first Time.
func (p *Problem) Mode(k backend.Kernel) string {
	if kk, ok := k.(*Kernel); ok {
		return p.modes[kk]
	}
	return ""
}

func (p *Problem) kernel(k backend.Kernel) (*Kernel, error) {
	kk, ok := k.(*Kernel)
	if !ok || kk.b != p.b {
		return nil, fmt.Errorf("kernel %s does not belong to this CUDA backend", k.Name())
	}
	if kk.closed {
		return nil, fmt.Errorf("kernel %s is closed", k.Name())
	}
	if !kk.vendor && kk.geo.outF16 != p.outF16 {
		return nil, fmt.Errorf("kernel %s writes %s but the problem's output is %s (OUT_F16 define)", k.Name(), dtype(kk.geo.outF16), dtype(p.outF16))
	}
	if p.closed {
		return nil, fmt.Errorf("problem closed")
	}
	return kk, nil
}

func dtype(f16 bool) string {
	if f16 {
		return "fp16"
	}
	return "fp32"
}

// dispatch enqueues one run of k on set (device thread).
func (p *Problem) dispatch(k *Kernel, set int) error {
	s := p.shape
	a := p.args[set]
	if s.M == 0 || s.N == 0 {
		return nil
	}
	if k.vendor {
		return p.b.handle.gemm(a.x, a.w, a.y, s.M, s.N, s.K, p.outF16)
	}
	return p.b.drv.launch(k.fn, k.grid(s.M, s.N), k.geo.block, k.geo.smem, p.b.stream, a)
}

// Run poisons output set with 0xFF (cuMemsetD8) and its guards with
// GuardWord, runs k once on input set `set`, waits, and returns the output
// (M·N little-endian fp32 or fp16). A changed guard is a *backend.GuardError.
func (p *Problem) Run(ctx context.Context, k backend.Kernel, set int) ([]byte, error) {
	kk, err := p.kernel(k)
	if err != nil {
		return nil, fmt.Errorf("run: %w", err)
	}
	if set < 0 || set >= len(p.args) {
		return nil, fmt.Errorf("run %s: set %d of %d", k.Name(), set, len(p.args))
	}
	host := make([]byte, p.bufSize)
	err = p.b.w.do(ctx, func() error {
		d, st := p.b.drv, p.b.stream
		y := p.y[set]
		if err := d.do("cuMemsetD32Async", uintptr(y), GuardWord, uintptr(p.bufSize/4), st); err != nil {
			return err
		}
		if err := d.do("cuMemsetD8Async", uintptr(y+GuardBytes), 0xFF, uintptr(p.outSize), st); err != nil {
			return err
		}
		if err := p.dispatch(kk, set); err != nil {
			return err
		}
		if err := d.do("cuStreamSynchronize", st); err != nil {
			return err
		}
		return d.dtoh(host, y)
	})
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", k.Name(), err)
	}
	if off, bad := p.checkGuards(host); bad {
		return nil, fmt.Errorf("run %s: %w", k.Name(), &backend.GuardError{Offset: off})
	}
	return host[GuardBytes : GuardBytes+p.outSize : GuardBytes+p.outSize], nil
}

// checkGuards finds the first byte outside [GuardBytes, GuardBytes+outSize)
// that lost the guard pattern and returns its element offset from the
// output start (negative before it).
func (p *Problem) checkGuards(host []byte) (int, bool) {
	var pat [4]byte
	binary.LittleEndian.PutUint32(pat[:], GuardWord)
	elem := func(o int64) int {
		r := o - GuardBytes
		if r < 0 {
			return int((r - int64(p.esize) + 1) / int64(p.esize))
		}
		return int(r / int64(p.esize))
	}
	for o := int64(0); o < GuardBytes; o++ {
		if host[o] != pat[o%4] {
			return elem(o), true
		}
	}
	for o := GuardBytes + p.outSize; o < p.bufSize; o++ {
		if host[o] != pat[o%4] {
			return elem(o), true
		}
	}
	return 0, false
}

// Time dispatches k n times back to back on sets first, first+1, ... (mod
// Sets) and returns the mean time per dispatch, measured with CUDA events.
// With TimingAuto the first call for k on this problem runs k once and
// times 3 dispatches; under Options.GraphBelow per dispatch, k is timed from
// then on as a CUDA graph of the n dispatches (captured once per (k, n,
// first), replayed once untimed, then replayed between the events), else as
// n plain launches between the events. Mode reports the choice.
func (p *Problem) Time(ctx context.Context, k backend.Kernel, n, first int) (time.Duration, error) {
	kk, err := p.kernel(k)
	if err != nil {
		return 0, fmt.Errorf("time: %w", err)
	}
	if n <= 0 {
		return 0, fmt.Errorf("time %s: n = %d", k.Name(), n)
	}
	sets := len(p.args)
	first = ((first % sets) + sets) % sets
	var dt time.Duration
	err = p.b.w.do(ctx, func() error {
		mode, err := p.mode(kk)
		if err != nil {
			return err
		}
		if mode == TimingGraph {
			g, err := p.graph(kk, n, first)
			if err == nil {
				dt, err = p.timeGraph(g, n)
				return err
			}
			if !errors.Is(err, errCapture) {
				return err
			}
			// The dispatches cannot be captured: time them as launches.
			p.modes[kk] = TimingEvents
		}
		dt, err = p.timeEvents(kk, n, first)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("time %s: %w", k.Name(), err)
	}
	return dt, nil
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
		est, err := p.timeEvents(k, 3, 0)
		if err != nil {
			return "", err
		}
		m = TimingEvents
		if est < p.b.opts.GraphBelow {
			m = TimingGraph
		}
	}
	p.modes[k] = m
	return m, nil
}

// timeEvents records an event, launches n dispatches, records an event,
// waits, and returns the elapsed time / n.
func (p *Problem) timeEvents(k *Kernel, n, first int) (time.Duration, error) {
	d, st := p.b.drv, p.b.stream
	if err := d.do("cuEventRecord", uintptr(p.b.evStart), st); err != nil {
		return 0, err
	}
	for i := 0; i < n; i++ {
		if err := p.dispatch(k, (first+i)%len(p.args)); err != nil {
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
// capturing it on first use and replaying it once untimed.
func (p *Problem) graph(k *Kernel, n, first int) (*graph, error) {
	key := graphKey{k, n, first}
	if g, ok := p.graphs[key]; ok {
		return g, nil
	}
	d, st := p.b.drv, p.b.stream
	if err := d.do("cuStreamBeginCapture_v2", st, captureModeRelaxed); err != nil {
		return nil, fmt.Errorf("%w: %w", errCapture, err)
	}
	var derr error
	for i := 0; i < n && derr == nil; i++ {
		derr = p.dispatch(k, (first+i)%len(p.args))
	}
	gp := new(uintptr)
	eerr := d.do("cuStreamEndCapture", st, uintptr(unsafe.Pointer(gp)))
	if derr != nil || eerr != nil {
		if *gp != 0 {
			d.call("cuGraphDestroy", *gp)
		}
		return nil, fmt.Errorf("%w: %w", errCapture, errors.Join(derr, eerr))
	}
	g := &graph{g: *gp}
	ep := new(uintptr)
	if err := d.do("cuGraphInstantiateWithFlags", uintptr(unsafe.Pointer(ep)), g.g, 0); err != nil {
		d.call("cuGraphDestroy", g.g)
		return nil, fmt.Errorf("%w: %w", errCapture, err)
	}
	g.exec = *ep
	p.graphs[key] = g
	if err := d.do("cuGraphLaunch", g.exec, st); err != nil {
		return nil, err
	}
	if err := d.do("cuStreamSynchronize", st); err != nil {
		return nil, err
	}
	return g, nil
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
		for _, bufs := range [][]devptr{p.x, p.w, p.y} {
			for _, b := range bufs {
				errs = append(errs, d.free(b))
			}
		}
		p.x, p.w, p.y = nil, nil, nil
		return errors.Join(errs...)
	})
}
