package cuda

// This file is verification where the outputs are (issue 17): the CUDA
// Problem is a backend.Verifier and the Backend a backend.Drawer, through
// the kernels of verify.cu (compiled once per process with NVRTC, through
// the disk cache). A candidate's outputs are copied device to device into
// numbered slots; comparisons, row hashes and the special-value scan run
// there, and only an index, the hashes, the counts or the gathered
// elements are copied back. When the kernels cannot be built the problem
// falls back to backend.HostVerifier (every output copied back, as before).

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"time"
	"unsafe"

	"github.com/tilefit/tilefit/backend"
	"github.com/tilefit/tilefit/kernel"
	"github.com/tilefit/tilefit/verify"
)

//go:embed verify.cu
var verifySource string

var (
	_ backend.Verifier    = (*Problem)(nil)
	_ backend.VerifyPlace = (*Problem)(nil)
	_ backend.Drawer      = (*Backend)(nil)
)

// VerifyOnDevice is nil when the verification kernels are built, else
// their error (the problem then verifies on the host).
func (p *Problem) VerifyOnDevice(ctx context.Context) error { return p.b.ensureVerify(ctx) }

// verifyModule is a backend's verification kernels, built on first use.
type verifyModule struct {
	once                                  sync.Once
	err                                   error
	mod                                   uintptr
	draw, diff, rowhash, specials, gather uintptr
}

// verifyState is a problem's slots and small device buffers for results.
type verifyState struct {
	slots    map[int][]devptr // per operand; 0 for inputs
	res      devptr           // 4 words of results
	idx, out devptr           // Gather's indices and any copied-back result
	idxCap   int64
	outCap   int64
	left     []byte // guard read-back buffers
	host     *backend.HostVerifier
}

// precompileVerify compiles the verification kernels into the disk cache
// (from New, in the background: the first cell's ensureVerify then only
// loads them; 0.35 s of the first cell on a cold cache on the H200 host).
// A failure is left for ensureVerify to report.
func (b *Backend) precompileVerify() {
	_, _ = b.Compile(context.Background(), backend.Program{Family: "tilefit_verify", Source: verifySource})
}

// ensureVerify builds the verification kernels once (not on the device
// thread: the compile runs NVRTC, the load runs on it).
func (b *Backend) ensureVerify(ctx context.Context) error {
	v := &b.verify
	v.once.Do(func() {
		t0 := time.Now()
		defer func() { b.steps.add("verify kernels", time.Since(t0)) }()
		if b.verifyPre != nil {
			select { // New compiles them in the background
			case <-b.verifyPre:
			case <-ctx.Done():
			}
		}
		art, err := b.Compile(ctx, backend.Program{Family: "tilefit_verify", Source: verifySource})
		if err != nil {
			v.err = fmt.Errorf("verification kernels: %w", err)
			return
		}
		image, err := os.ReadFile(art.Path)
		if err != nil {
			v.err = fmt.Errorf("verification kernels: %w", err)
			return
		}
		v.err = b.w.do(ctx, func() error {
			d := b.drv
			mod := new(uintptr)
			if err := d.do("cuModuleLoadData", uintptr(unsafe.Pointer(mod)), uintptr(unsafe.Pointer(&image[0]))); err != nil {
				return fmt.Errorf("verification kernels: %w", err)
			}
			v.mod = *mod
			for _, f := range []struct {
				name string
				fn   *uintptr
			}{{"tf_draw", &v.draw}, {"tf_diff", &v.diff}, {"tf_rowhash", &v.rowhash}, {"tf_specials", &v.specials}, {"tf_gather", &v.gather}} {
				sym := cString(f.name)
				if err := d.do("cuModuleGetFunction", uintptr(unsafe.Pointer(f.fn)), v.mod, uintptr(unsafe.Pointer(&sym[0]))); err != nil {
					return fmt.Errorf("verification kernel %s: %w", f.name, err)
				}
			}
			if err := b.selfTest(); err != nil {
				return fmt.Errorf("verification kernels failed their self-test (%w): verifying on the host", err)
			}
			return nil
		})
	})
	return v.err
}

// selfTest runs every verification kernel once on small buffers and
// compares the results with the Go code they replace (kernel.Drawn,
// backend.FirstDiff, verify.HashRows, backend.ScanSpecials, a host gather):
// kernels that compile but compute something else must not verify
// anything (device thread).
func (b *Backend) selfTest() (err error) {
	d := b.drv
	var bufs []devptr
	alloc := func(n int64) devptr {
		p, e := d.alloc(n)
		if e != nil && err == nil {
			err = e
		}
		bufs = append(bufs, p)
		return p
	}
	defer func() {
		for _, p := range bufs {
			_ = d.free(p)
		}
	}()
	sync := func() error { return d.do("cuStreamSynchronize", b.stream) }
	back := func(p devptr, n int) []byte {
		out := make([]byte, n)
		if e := d.dtoh(out, p); e != nil && err == nil {
			err = e
		}
		return out
	}
	// tf_draw against kernel.Drawn, every kind and type.
	draws := []kernel.Drawn{
		{Draw: kernel.Draw{Kind: kernel.DrawUniform}, DType: kernel.F16, Key: kernel.DrawKey(1, kernel.InputStream(0)), Elems: 4099},
		{Draw: kernel.Draw{Kind: kernel.DrawUniform}, DType: kernel.F32, Key: 2, Elems: 1025},
		{Draw: kernel.Draw{Kind: kernel.DrawUniform}, DType: kernel.BF16, Key: 3, Elems: 1000},
		{Draw: kernel.Draw{Kind: kernel.DrawUniform}, DType: kernel.I8, Key: 4, Elems: 1000},
		{Draw: kernel.Draw{Kind: kernel.DrawInt, Max: 8}, DType: kernel.F16, Key: 5, Elems: 1000},
		{Draw: kernel.Draw{Kind: kernel.DrawInt, Max: 2, Lo: -19, Positive: true}, DType: kernel.F16, Key: 6, Elems: 1000},
		{Draw: kernel.Draw{Kind: kernel.DrawInt, Max: 7}, DType: kernel.I8, Key: 7, Elems: 1000},
		{Draw: kernel.Draw{Kind: kernel.DrawPow2, Lo: -3, Hi: 0}, DType: kernel.F16, Key: 8, Elems: 1000},
	}
	var a []byte
	var pa devptr
	for i := range draws {
		dr := draws[i]
		n := int64(dr.Elems) * int64(dr.DType.Size())
		p := alloc(n)
		if err != nil {
			return err
		}
		if err := b.upload(p, backend.Input{Drawn: &dr}, true); err != nil {
			return err
		}
		if err := sync(); err != nil {
			return err
		}
		want := dr.Bytes()
		if got := back(p, int(n)); err != nil || !bytes.Equal(got, want) {
			return errors.Join(err, fmt.Errorf("tf_draw %+v differs from the host's draw", dr))
		}
		if i == 0 {
			a, pa = want, p
		}
	}
	// tf_diff, tf_specials, tf_gather on a (fp16) and a copy with a NaN
	// and a poison element; tf_rowhash on rows of 8 and of 10 bytes.
	c := append([]byte(nil), a...)
	c[2*1000], c[2*1000+1] = 0x01, 0x7e // a NaN
	c[2*3000], c[2*3000+1] = 0xff, 0xff // the poison pattern
	pc := alloc(int64(len(c)))
	res := alloc(64)
	if err != nil {
		return err
	}
	if err := htod(d, pc, c); err != nil {
		return err
	}
	n := uint64(len(a) / 2)
	run := func(fn uintptr, init []byte, words ...uint64) ([]uint64, error) {
		for w, v := range init {
			if err := d.do("cuMemsetD8Async", uintptr(res+devptr(8*w)), uintptr(v), 8, b.stream); err != nil {
				return nil, err
			}
		}
		if err := b.launchWords(fn, 3, 256, words...); err != nil {
			return nil, err
		}
		if err := sync(); err != nil {
			return nil, err
		}
		raw := back(res, 8*len(init))
		out := make([]uint64, len(init))
		for w := range out {
			out[w] = binary.LittleEndian.Uint64(raw[8*w:])
		}
		return out, err
	}
	for _, from := range []uint64{0, 1001, 3001} {
		r, err := run(b.verify.diff, []byte{0xff}, uint64(pa), uint64(pc), n, 2, from, uint64(res))
		if err != nil {
			return err
		}
		want := backend.FirstDiff(a, c, 2, int64(from))
		if int64(r[0]) != want && !(want < 0 && r[0] == ^uint64(0)) {
			return fmt.Errorf("tf_diff from %d: %d, want %d", from, int64(r[0]), want)
		}
	}
	r, err := run(b.verify.specials, []byte{0, 0, 0xff, 0xff}, uint64(pc), n, 1, uint64(res))
	if err != nil {
		return err
	}
	if s := backend.ScanSpecials(kernel.F16, c); int64(r[0]) != s.Poison || int64(r[1]) != s.NonFinite || int64(r[2]) != s.FirstPoison || int64(r[3]) != s.FirstNonFinite {
		return fmt.Errorf("tf_specials %v, want %+v", r, s)
	}
	out := alloc(8 * 1024)
	idx := alloc(8 * 4)
	if err != nil {
		return err
	}
	for _, rowBytes := range []uint64{8, 10} {
		rows := uint64(len(a)) / rowBytes
		if err := b.launchWords(b.verify.rowhash, int(rows+127)/128, 128, uint64(pa), rows, rowBytes, uint64(out)); err != nil {
			return err
		}
		if err := sync(); err != nil {
			return err
		}
		raw := back(out, int(8*rows))
		for r, h := range verify.HashRows(a[:rows*rowBytes], int(rows), int(rowBytes)) {
			if err != nil || binary.LittleEndian.Uint64(raw[8*r:]) != h {
				return errors.Join(err, fmt.Errorf("tf_rowhash of %d-byte rows: row %d differs from FNV-1a", rowBytes, r))
			}
		}
	}
	pick := []uint64{n - 1, 0, 1000, 3000}
	if err := htod(d, idx, pick); err != nil {
		return err
	}
	if err := b.launchWords(b.verify.gather, 1, 256, uint64(pc), 2, uint64(idx), uint64(len(pick)), uint64(out)); err != nil {
		return err
	}
	if err := sync(); err != nil {
		return err
	}
	g := back(out, 2*len(pick))
	for j, e := range pick {
		if err != nil || !bytes.Equal(g[2*j:2*j+2], c[2*e:2*e+2]) {
			return errors.Join(err, fmt.Errorf("tf_gather element %d differs", e))
		}
	}
	return nil
}

// launchWords launches fn on the backend's stream with 64-bit parameters
// (device thread).
func (b *Backend) launchWords(fn uintptr, grid, block int, words ...uint64) error {
	ptrs := make([]uintptr, len(words))
	for i := range words {
		ptrs[i] = uintptr(unsafe.Pointer(&words[i]))
	}
	err := b.drv.launch(fn, [3]int{max(grid, 1), 1, 1}, [3]int{block, 1, 1}, 0, [3]int{}, false, b.stream, unsafe.Pointer(&ptrs[0]))
	runtime.KeepAlive(words)
	runtime.KeepAlive(ptrs)
	return err
}

// gridFor is the grid of a grid-stride kernel over n items in blocks of
// 256: enough blocks for every item, at most 16 per SM.
func (b *Backend) gridFor(n int64) int {
	return int(min((n+255)/256, int64(max(b.sms, 1))*16))
}

// NewDrawnProblem is NewProblem with the inputs given as backend.Inputs: a
// drawn operand is drawn on the device by tf_draw (the host's bits,
// kernel.Drawn), the others uploaded.
func (b *Backend) NewDrawnProblem(ctx context.Context, op *kernel.Operator, d kernel.Dims, sets [][]backend.Input) (backend.Problem, error) {
	p, err := b.newProblem(ctx, op, d, sets, b.ensureVerify(ctx) == nil)
	if err != nil {
		return nil, err
	}
	return p, nil
}

// inputLen is the byte length of input in.
func inputLen(in backend.Input) int64 {
	if in.Bytes == nil && in.Drawn != nil {
		return int64(in.Drawn.Elems) * int64(in.Drawn.DType.Size())
	}
	return int64(len(in.Bytes))
}

// upload fills the input buffer at ptr: drawn on the device when draw is
// set and in is a draw, else copied from the host (device thread).
func (b *Backend) upload(ptr devptr, in backend.Input, draw bool) error {
	if draw && in.Drawn != nil {
		dr := in.Drawn
		n := int64(dr.Elems)
		if n == 0 {
			return nil
		}
		pos := uint64(0)
		if dr.Draw.Positive {
			pos = 1
		}
		return b.launchWords(b.verify.draw, b.gridFor(n), 256, uint64(ptr), uint64(n), uint64(dr.DType.Code()), uint64(dr.Draw.Kind),
			dr.Key, uint64(int64(dr.Draw.Max)), uint64(int64(dr.Draw.Lo)), uint64(int64(dr.Draw.Hi)), pos)
	}
	src := in.Bytes
	if src == nil && in.Drawn != nil {
		src = in.Drawn.Bytes()
	}
	return htod(b.drv, ptr, src)
}

// inputsOf wraps byte sets as Inputs.
func inputsOf(sets [][][]byte) [][]backend.Input {
	out := make([][]backend.Input, len(sets))
	for s, set := range sets {
		for _, b := range set {
			out[s] = append(out[s], backend.Input{Bytes: b})
		}
	}
	return out
}

// verifier returns the problem's device state, or nil with the host
// fallback when the verification kernels cannot be built.
func (p *Problem) verifier(ctx context.Context) (*verifyState, *backend.HostVerifier) {
	if p.vs == nil {
		p.vs = &verifyState{slots: map[int][]devptr{}}
	}
	if p.b.ensureVerify(ctx) != nil {
		if p.vs.host == nil {
			p.vs.host = backend.NewHostVerifier(p)
		}
		return nil, p.vs.host
	}
	return p.vs, nil
}

// slot returns slot's buffers, allocating them (device thread).
func (p *Problem) slot(vs *verifyState, slot int) ([]devptr, error) {
	if s, ok := vs.slots[slot]; ok {
		return s, nil
	}
	s := make([]devptr, len(p.op.Operands))
	for i, o := range p.op.Operands {
		if o.Dir != kernel.Out {
			continue
		}
		ptr, err := p.b.drv.alloc(p.bytes[i])
		if err != nil {
			for _, q := range s {
				_ = p.b.drv.free(q)
			}
			return nil, err
		}
		s[i] = ptr
	}
	vs.slots[slot] = s
	return s, nil
}

// Keep runs k on set like Run and copies its outputs into slot on the
// device; only the guard regions come back (to be checked).
func (p *Problem) Keep(ctx context.Context, k backend.Kernel, set, slot int) error {
	return p.keep(ctx, k, set, []int{slot})
}

// KeepPair is Keep into slot a, then Keep into slot b (two runs of k, each
// on freshly poisoned outputs of set, each run's guards read after it),
// with one wait for the device: the guard regions are copied into pinned
// memory behind each run and checked once both are back, the first run's
// first. A changed guard of either run is its *backend.GuardError, as
// Keep's. (Two Keeps waited six times: after each run and after each of
// its two guard reads.)
func (p *Problem) KeepPair(ctx context.Context, k backend.Kernel, set, a, b int) error {
	return p.keep(ctx, k, set, []int{a, b})
}

// KeepPairAnd is KeepPair with a third run in the same wait: k on set
// oset of other (a problem of the same operator and dims on this backend:
// the exact check's, KeepsFrom), its outputs kept in slot c of p, its
// guards read behind it and checked after the pair's. pairErr is
// KeepPair's error (a guard of either of the two runs, or a device error,
// which leaves otherErr nil); otherErr is the third run's changed guard
// (a *backend.GuardError, wrapped as Keep wraps it). The exact check's run
// of a candidate thus costs no wait of its own.
func (p *Problem) KeepPairAnd(ctx context.Context, k backend.Kernel, set, a, b int, other backend.Problem, oset, c int) (pairErr, otherErr error) {
	op, ok := other.(*Problem)
	if !ok || !p.KeepsFrom(other) {
		return fmt.Errorf("run %s: the third run's problem is not a CUDA problem of the same operator and dims", k.Name()), nil
	}
	bad, err := p.keepRuns(ctx, k, []keepRun{{p, set, a}, {p, set, b}, {op, oset, c}})
	if bad == 2 {
		return nil, err
	}
	return err, nil
}

// KeepsFrom reports whether KeepPairAnd can keep a run of other in p's
// slots: other is a CUDA problem of the same backend, operator and output
// sizes, and both verify on the device.
func (p *Problem) KeepsFrom(other backend.Problem) bool {
	op, ok := other.(*Problem)
	if !ok || op == p || op.b != p.b || op.op != p.op || len(op.bytes) != len(p.bytes) {
		return false
	}
	for i, o := range p.op.Operands {
		if o.Dir == kernel.Out && op.bytes[i] != p.bytes[i] {
			return false
		}
	}
	vs, host := p.verifier(context.Background())
	return vs != nil && host == nil
}

// keepRun is one run of keepRuns: a kernel on set of problem src, its
// outputs kept in slot of the problem keepRuns is called on.
type keepRun struct {
	src       *Problem
	set, slot int
}

// keep runs k on set once per slot, each run's outputs kept in its slot
// and its guard regions read back after it; the guards are checked in
// run order (Keep, KeepPair).
func (p *Problem) keep(ctx context.Context, k backend.Kernel, set int, slots []int) error {
	runs := make([]keepRun, len(slots))
	for i, s := range slots {
		runs[i] = keepRun{p, set, s}
	}
	_, err := p.keepRuns(ctx, k, runs)
	return err
}

// keepRuns runs k once per run (on its problem's set, poisoned first), each
// run's outputs copied into its slot of p and its guard regions into
// pinned memory behind it, with one wait for the device; the guards are
// then checked in run order. bad is the index of the run whose guard
// changed (err its *backend.GuardError), −1 otherwise.
func (p *Problem) keepRuns(ctx context.Context, k backend.Kernel, runs []keepRun) (bad int, err error) {
	vs, host := p.verifier(ctx)
	if host != nil {
		for r, run := range runs {
			if run.src != p {
				return -1, fmt.Errorf("run %s: verifying on the host keeps runs of its own problem only", k.Name())
			}
			if err := host.Keep(ctx, k, run.set, run.slot); err != nil {
				var ge *backend.GuardError
				if errors.As(err, &ge) {
					return r, err
				}
				return -1, err
			}
		}
		return -1, nil
	}
	kks := make([]*Kernel, len(runs))
	for r, run := range runs {
		kk, err := run.src.kernel(k)
		if err != nil {
			return -1, fmt.Errorf("run: %w", err)
		}
		if run.set < 0 || run.set >= len(run.src.bufs) {
			return -1, fmt.Errorf("run %s: set %d of %d", k.Name(), run.set, len(run.src.bufs))
		}
		kks[r] = kk
	}
	var guard error
	bad = -1
	err = p.b.w.do(ctx, func() error {
		d, st := p.b.drv, p.b.stream
		// Each run's guard regions, output by output, in pinned memory
		// (every run's problem has p's output sizes: KeepsFrom).
		per := int64(0)
		for i, o := range p.op.Operands {
			if o.Dir == kernel.Out {
				per += guarded(p.bytes[i]) - p.bytes[i]
			}
		}
		pin := p.b.pinnedBytes(int(per) * len(runs))
		regions := func(run, i int) (left, right []byte) {
			off := int64(run) * per
			for j := 0; j < i; j++ {
				if p.op.Operands[j].Dir == kernel.Out {
					off += guarded(p.bytes[j]) - p.bytes[j]
				}
			}
			right = pin[off+GuardBytes : off+guarded(p.bytes[i])-p.bytes[i]]
			return pin[off : off+GuardBytes], right
		}
		check := func(r, i int, left, right []byte) bool {
			if off, isBad := guardRegions(left, right, p.bytes[i], p.op.Operands[i].DType.Size()); isBad {
				guard, bad = &backend.GuardError{Operand: p.op.Operands[i].Name, Offset: off}, r
				return true
			}
			return false
		}
		queued := false // copies into pinned memory may be in flight
		fail := func(err error) error {
			if queued {
				// Not until they have landed: the buffer is reused.
				_ = d.do("cuStreamSynchronize", st)
			}
			return err
		}
		for r, run := range runs {
			src := run.src
			if err := src.poisonAndDispatch(kks[r], run.set); err != nil {
				return fail(err)
			}
			dst, err := p.slot(vs, run.slot)
			if err != nil {
				return fail(err)
			}
			for i, o := range p.op.Operands {
				if o.Dir == kernel.Out && p.bytes[i] > 0 {
					if err := d.do("cuMemcpyDtoDAsync_v2", uintptr(dst[i]), uintptr(src.bufs[run.set][i]+GuardBytes), uintptr(p.bytes[i]), st); err != nil {
						return fail(err)
					}
				}
			}
			if pin == nil {
				// No pinned memory: wait, read the guards back, check.
				if err := d.do("cuStreamSynchronize", st); err != nil {
					return err
				}
				for i, o := range p.op.Operands {
					if o.Dir != kernel.Out {
						continue
					}
					if off, isBad, err := src.readGuards(vs, run.set, i); err != nil || isBad {
						if err == nil {
							guard, bad = &backend.GuardError{Operand: o.Name, Offset: off}, r
						}
						return err
					}
				}
				continue
			}
			for i, o := range p.op.Operands {
				if o.Dir != kernel.Out {
					continue
				}
				left, right := regions(r, i)
				queued = true
				if err := d.dtohAsync(left, src.bufs[run.set][i]); err != nil {
					return fail(err)
				}
				if err := d.dtohAsync(right, src.bufs[run.set][i]+devptr(GuardBytes+p.bytes[i])); err != nil {
					return fail(err)
				}
			}
		}
		if pin == nil {
			return nil
		}
		if err := d.do("cuStreamSynchronize", st); err != nil {
			return err
		}
		for r := range runs {
			for i, o := range p.op.Operands {
				if o.Dir == kernel.Out {
					if left, right := regions(r, i); check(r, i, left, right) {
						return nil
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		return -1, fmt.Errorf("run %s: %w", k.Name(), err)
	}
	if guard != nil {
		return bad, fmt.Errorf("run %s: %w", k.Name(), guard)
	}
	return -1, nil
}

// readGuards copies the guard regions of output i of set back and finds
// the first byte that lost the pattern, as checkGuards does (device
// thread).
func (p *Problem) readGuards(vs *verifyState, set, i int) (int, bool, error) {
	size := p.bytes[i]
	total := guarded(size)
	right := total - GuardBytes - size
	if int64(len(vs.left)) < GuardBytes+right {
		vs.left = make([]byte, GuardBytes+right)
	}
	l, r := vs.left[:GuardBytes], vs.left[GuardBytes:GuardBytes+right]
	if err := p.b.drv.dtoh(l, p.bufs[set][i]); err != nil {
		return 0, false, err
	}
	if err := p.b.drv.dtoh(r, p.bufs[set][i]+devptr(GuardBytes+size)); err != nil {
		return 0, false, err
	}
	off, bad := guardRegions(l, r, size, p.op.Operands[i].DType.Size())
	return off, bad, nil
}

// guardRegions is checkGuards on the two guard regions alone: left holds
// bytes [0, GuardBytes) of the allocation, right those from GuardBytes+size
// to its end.
func guardRegions(left, right []byte, size int64, esize int) (int, bool) {
	elem := func(o int64) int {
		r := o - GuardBytes
		if r < 0 {
			return int((r - int64(esize) + 1) / int64(esize))
		}
		return int(r / int64(esize))
	}
	if o := firstLost(left, 0); o >= 0 {
		return elem(o), true
	}
	if j := firstLost(right, GuardBytes+size); j >= 0 {
		return elem(GuardBytes + size + j), true
	}
	return 0, false
}

// held returns the device buffer of output i in slot.
func (p *Problem) held(vs *verifyState, slot, i int) (devptr, error) {
	if i < 0 || i >= len(p.op.Operands) || p.op.Operands[i].Dir != kernel.Out {
		return 0, fmt.Errorf("operand %d is not an output of %s", i, p.op.Name)
	}
	s, ok := vs.slots[slot]
	if !ok {
		return 0, fmt.Errorf("slot %d holds no outputs", slot)
	}
	return s[i], nil
}

// grow makes *buf hold at least n bytes (device thread).
func (p *Problem) grow(buf *devptr, capacity *int64, n int64) error {
	if *capacity >= n && *buf != 0 {
		return nil
	}
	if *buf != 0 {
		_ = p.b.drv.free(*buf)
		*buf, *capacity = 0, 0
	}
	ptr, err := p.b.drv.alloc(max(n, 256))
	if err != nil {
		return err
	}
	*buf, *capacity = ptr, max(n, 256)
	return nil
}

// results launches a kernel that writes words of vs.res (initialised to
// init: one byte value per word) and copies them back (device thread).
func (p *Problem) results(vs *verifyState, init []byte, launch func() error) ([]uint64, error) {
	d, st := p.b.drv, p.b.stream
	if vs.res == 0 {
		ptr, err := d.alloc(64)
		if err != nil {
			return nil, err
		}
		vs.res = ptr
	}
	for w, v := range init {
		if err := d.do("cuMemsetD8Async", uintptr(vs.res+devptr(8*w)), uintptr(v), 8, st); err != nil {
			return nil, err
		}
	}
	if err := launch(); err != nil {
		return nil, err
	}
	buf := p.b.pinnedBytes(8 * len(init))
	if buf != nil {
		// One wait: the copy into pinned memory is queued behind the
		// kernel.
		if err := d.dtohAsync(buf, vs.res); err != nil {
			return nil, err
		}
		if err := d.do("cuStreamSynchronize", st); err != nil {
			return nil, err
		}
	} else {
		if err := d.do("cuStreamSynchronize", st); err != nil {
			return nil, err
		}
		buf = make([]byte, 8*len(init))
		if err := d.dtoh(buf, vs.res); err != nil {
			return nil, err
		}
	}
	out := make([]uint64, len(init))
	for w := range out {
		out[w] = binary.LittleEndian.Uint64(buf[8*w:])
	}
	return out, nil
}

// Diff finds the first differing element of output i of slots a and b at
// or after from (tf_diff).
func (p *Problem) Diff(ctx context.Context, a, b, i int, from int64) (int64, error) {
	vs, host := p.verifier(ctx)
	if host != nil {
		return host.Diff(ctx, a, b, i, from)
	}
	es := int64(p.op.Operands[i].DType.Size())
	var e int64 = -1
	err := p.b.w.do(ctx, func() error {
		pa, err := p.held(vs, a, i)
		if err != nil {
			return err
		}
		pb, err := p.held(vs, b, i)
		if err != nil {
			return err
		}
		n := p.bytes[i] / es
		if from >= n {
			return nil
		}
		r, err := p.results(vs, []byte{0xff}, func() error {
			return p.b.launchWords(p.b.verify.diff, p.b.gridFor(n-from), 256, uint64(pa), uint64(pb), uint64(n), uint64(es), uint64(from), uint64(vs.res))
		})
		if err == nil && r[0] != ^uint64(0) {
			e = int64(r[0])
		}
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("compare outputs: %w", err)
	}
	return e, nil
}

// RowHashes hashes the rows of output i of slot (tf_rowhash).
func (p *Problem) RowHashes(ctx context.Context, slot, i, rows int) ([]uint64, error) {
	vs, host := p.verifier(ctx)
	if host != nil {
		return host.RowHashes(ctx, slot, i, rows)
	}
	if rows <= 0 {
		return nil, nil
	}
	out := make([]uint64, rows)
	err := p.b.w.do(ctx, func() error {
		src, err := p.held(vs, slot, i)
		if err != nil {
			return err
		}
		if err := p.grow(&vs.out, &vs.outCap, int64(8*rows)); err != nil {
			return err
		}
		if err := p.b.launchWords(p.b.verify.rowhash, (rows+127)/128, 128, uint64(src), uint64(rows), uint64(p.bytes[i]/int64(rows)), uint64(vs.out)); err != nil {
			return err
		}
		if err := p.b.drv.do("cuStreamSynchronize", p.b.stream); err != nil {
			return err
		}
		buf := make([]byte, 8*rows)
		if err := p.b.drv.dtoh(buf, vs.out); err != nil {
			return err
		}
		for r := range out {
			out[r] = binary.LittleEndian.Uint64(buf[8*r:])
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("hash rows: %w", err)
	}
	return out, nil
}

// Specials scans output i of slot for all-ones exponents (tf_specials).
func (p *Problem) Specials(ctx context.Context, slot, i int) (backend.Specials, error) {
	vs, host := p.verifier(ctx)
	if host != nil {
		return host.Specials(ctx, slot, i)
	}
	s := backend.Specials{FirstPoison: -1, FirstNonFinite: -1}
	dt := p.op.Operands[i].DType
	if !dt.Float() {
		return s, nil
	}
	err := p.b.w.do(ctx, func() error {
		src, err := p.held(vs, slot, i)
		if err != nil {
			return err
		}
		n := p.bytes[i] / int64(dt.Size())
		if n == 0 {
			return nil
		}
		r, err := p.results(vs, []byte{0, 0, 0xff, 0xff}, func() error {
			return p.b.launchWords(p.b.verify.specials, p.b.gridFor(n), 256, uint64(src), uint64(n), uint64(dt.Code()), uint64(vs.res))
		})
		if err != nil {
			return err
		}
		s.Poison, s.NonFinite = int64(r[0]), int64(r[1])
		if r[2] != ^uint64(0) {
			s.FirstPoison = int64(r[2])
		}
		if r[3] != ^uint64(0) {
			s.FirstNonFinite = int64(r[3])
		}
		return nil
	})
	if err != nil {
		return s, fmt.Errorf("scan output: %w", err)
	}
	return s, nil
}

// Gather copies elements idx of output i of slot back (tf_gather).
func (p *Problem) Gather(ctx context.Context, slot, i int, idx []int) ([]byte, error) {
	vs, host := p.verifier(ctx)
	if host != nil {
		return host.Gather(ctx, slot, i, idx)
	}
	es := p.op.Operands[i].DType.Size()
	out := make([]byte, len(idx)*es)
	if len(idx) == 0 {
		return out, nil
	}
	n := p.bytes[i] / int64(es)
	words := make([]uint64, len(idx))
	for j, e := range idx {
		if e < 0 || int64(e) >= n {
			return nil, fmt.Errorf("gather: element %d of %s out of range (%d elements)", e, p.op.Operands[i].Name, n)
		}
		words[j] = uint64(e)
	}
	err := p.b.w.do(ctx, func() error {
		src, err := p.held(vs, slot, i)
		if err != nil {
			return err
		}
		if err := p.grow(&vs.idx, &vs.idxCap, int64(8*len(idx))); err != nil {
			return err
		}
		if err := p.grow(&vs.out, &vs.outCap, int64(len(out))); err != nil {
			return err
		}
		if err := htod(p.b.drv, vs.idx, words); err != nil {
			return err
		}
		if err := p.b.launchWords(p.b.verify.gather, p.b.gridFor(int64(len(idx))), 256, uint64(src), uint64(es), uint64(vs.idx), uint64(len(idx)), uint64(vs.out)); err != nil {
			return err
		}
		if err := p.b.drv.do("cuStreamSynchronize", p.b.stream); err != nil {
			return err
		}
		return p.b.drv.dtoh(out, vs.out)
	})
	if err != nil {
		return nil, fmt.Errorf("gather: %w", err)
	}
	return out, nil
}

// Free releases slot's buffers.
func (p *Problem) Free(slot int) {
	if p.vs == nil {
		return
	}
	if p.vs.host != nil {
		p.vs.host.Free(slot)
		return
	}
	s, ok := p.vs.slots[slot]
	if !ok {
		return
	}
	delete(p.vs.slots, slot)
	_ = p.b.w.do(context.Background(), func() error {
		for _, ptr := range s {
			_ = p.b.drv.free(ptr)
		}
		return nil
	})
}

// closeVerify frees the slots and buffers (device thread, from Close).
func (p *Problem) closeVerify() error {
	if p.vs == nil {
		return nil
	}
	var errs []error
	for _, s := range p.vs.slots {
		for _, ptr := range s {
			errs = append(errs, p.b.drv.free(ptr))
		}
	}
	for _, ptr := range []devptr{p.vs.res, p.vs.idx, p.vs.out} {
		errs = append(errs, p.b.drv.free(ptr))
	}
	p.vs.slots = nil
	return errors.Join(errs...)
}
