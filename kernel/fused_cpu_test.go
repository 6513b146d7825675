package kernel_test

// A small harness of the operator contract on the CPU, independent of the
// backends: it compiles a fused family's source with cc (backend/cpu's
// default flags), loads it with dlopen (purego), allocates every present
// operand (outputs poisoned with 0xFF and surrounded by guard bytes) and the
// plan's scratch buffers, runs the plan's launches in order with the CPU
// convention int ENTRY(void **ptrs, const int64_t *args), and returns the
// outputs. The tests sweep the families' tiles on small shapes: bitwise
// within each numerics class, the float64 reference on every element of
// every output, planted faults caught, the dequantisation bit for bit.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/ebitengine/purego"
	"github.com/x448/float16"

	"github.com/tilefit/tilefit/backend/cpu"
	"github.com/tilefit/tilefit/internal/dl"
	"github.com/tilefit/tilefit/kernel"
)

const guardBytes = 64

// harness compiles and caches shared objects in one temporary directory.
type harness struct {
	dir string
	mu  sync.Mutex
	so  map[string]string // hash of source+defines → .so path
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("the CPU harness runs on Linux")
	}
	if _, err := exec.LookPath("cc"); err != nil {
		t.Skip("no C compiler")
	}
	return &harness{dir: t.TempDir(), so: map[string]string{}}
}

// compile returns the shared object of fam's source with p's defines and
// extra ones.
func (h *harness) compile(fam *kernel.Family, p kernel.Params, extra ...string) (string, error) {
	defs := append(kernel.Defines(p), extra...)
	sum := sha256.Sum256([]byte(fam.Source + "\x00" + strings.Join(defs, " ")))
	key := hex.EncodeToString(sum[:8])
	h.mu.Lock()
	if so, ok := h.so[key]; ok {
		h.mu.Unlock()
		return so, nil
	}
	h.mu.Unlock()
	so := filepath.Join(h.dir, key+".so")
	args := append([]string{}, cpu.DefaultFlags...)
	for _, d := range defs {
		args = append(args, "-D"+d)
	}
	args = append(args, "-x", "c", "-o", so, "-", "-lm")
	cmd := exec.CommandContext(context.Background(), "cc", args...)
	cmd.Stdin = strings.NewReader(fam.Source)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("cc %s %s: %v\n%s", fam.Name, strings.Join(defs, " "), err, out)
	}
	h.mu.Lock()
	h.so[key] = so
	h.mu.Unlock()
	return so, nil
}

type entryFunc func(ptrs, args unsafe.Pointer) int32

// result is one run's outputs by operand name (absent operands missing).
type result map[string][]byte

// run executes fam's plan for p on dims d with inputs in (Operator.Inputs
// order) and returns the present outputs. A guard byte overwritten, a
// non-zero return or a failed load is an error.
func (h *harness) run(fam *kernel.Family, p kernel.Params, d kernel.Dims, in [][]byte, extra ...string) (result, error) {
	so, err := h.compile(fam, p, extra...)
	if err != nil {
		return nil, err
	}
	handle, err := dl.Open(so, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		return nil, err
	}
	defer purego.Dlclose(handle)
	plan, err := fam.Plan(p, d)
	if err != nil {
		return nil, err
	}
	op := fam.Operator
	bufs := map[string][]byte{} // the operand or scratch region, inside its guarded allocation
	alloc := map[string][]byte{}
	ii := 0
	for _, o := range op.Operands {
		if o.Dir == kernel.In {
			bufs[o.Name] = in[ii]
			ii++
			continue
		}
		if !o.Present(p) {
			continue
		}
		n, err := d.Elems(o.Shape)
		if err != nil {
			return nil, err
		}
		a := bytes.Repeat([]byte{0xFF}, n*o.DType.Size()+2*guardBytes)
		alloc[o.Name] = a
		bufs[o.Name] = a[guardBytes : guardBytes+n*o.DType.Size()]
	}
	for _, s := range plan.Scratch {
		bufs["scratch:"+s.Name] = make([]byte, s.Elems*s.DType.Size()+8)
	}
	for _, l := range plan.Launches {
		sym, err := dl.Sym(handle, l.Entry)
		if err != nil {
			return nil, err
		}
		var fn entryFunc
		purego.RegisterFunc(&fn, sym)
		var ptrs []unsafe.Pointer
		var args []int64
		for _, a := range l.Args {
			switch a.Kind {
			case kernel.ArgOperand, kernel.ArgScratch:
				name := a.Name
				if a.Kind == kernel.ArgScratch {
					name = "scratch:" + name
				}
				b, ok := bufs[name]
				if !ok {
					return nil, fmt.Errorf("launch %s: no buffer %s", l.Entry, name)
				}
				if len(b) == 0 {
					b = make([]byte, 1)
				}
				ptrs = append(ptrs, unsafe.Pointer(&b[0]))
			case kernel.ArgDim:
				v, err := d.Size(a.Name)
				if err != nil {
					return nil, err
				}
				args = append(args, int64(v))
			case kernel.ArgInt:
				args = append(args, a.Value)
			default:
				return nil, fmt.Errorf("launch %s: argument kind %d on the CPU", l.Entry, a.Kind)
			}
		}
		ptrs = append(ptrs, nil)
		args = append(args, 0)
		if rc := fn(unsafe.Pointer(&ptrs[0]), unsafe.Pointer(&args[0])); rc != 0 {
			return nil, fmt.Errorf("%s returned %d", l.Entry, rc)
		}
		runtime.KeepAlive(bufs)
		runtime.KeepAlive(ptrs)
	}
	out := result{}
	for name, a := range alloc {
		for i := 0; i < guardBytes; i++ {
			if a[i] != 0xFF || a[len(a)-1-i] != 0xFF {
				return nil, fmt.Errorf("%s: a guard byte of %s changed", fam.TileName(p), name)
			}
		}
		out[name] = bufs[name]
	}
	return out, nil
}

// checkReference checks every element of every output in r against the
// operator's float64 reference: written (not the poison pattern), finite,
// within the bound. It returns the first failure.
func checkReference(op *kernel.Operator, d kernel.Dims, in [][]byte, r result) error {
	for oi, o := range op.Operands {
		b, ok := r[o.Name]
		if !ok {
			continue
		}
		n, _ := d.Elems(o.Shape)
		for i := 0; i < n; i++ {
			var got float64
			switch o.DType {
			case kernel.F16:
				bits := binary.LittleEndian.Uint16(b[2*i:])
				if bits == 0xFFFF {
					return fmt.Errorf("%s[%d] unwritten", o.Name, i)
				}
				got = f16(bits)
			case kernel.F32:
				bits := binary.LittleEndian.Uint32(b[4*i:])
				if bits == 0xFFFFFFFF {
					return fmt.Errorf("%s[%d] unwritten", o.Name, i)
				}
				got = float64(math.Float32frombits(bits))
			default:
				return fmt.Errorf("%s: unexpected output type %s", o.Name, o.DType)
			}
			want, bound := op.Reference(d, in, oi, i)
			if math.IsNaN(got) || math.IsInf(got, 0) || math.Abs(got-want) > bound {
				return fmt.Errorf("%s[%d] = %g, want %g ± %g", o.Name, i, got, want, bound)
			}
		}
	}
	return nil
}

// firstDiff compares the outputs present in both a and b byte for byte.
func firstDiff(a, b result) error {
	for name, x := range a {
		y, ok := b[name]
		if !ok {
			continue
		}
		if !bytes.Equal(x, y) {
			for i := range x {
				if x[i] != y[i] {
					return fmt.Errorf("%s differs at byte %d", name, i)
				}
			}
		}
	}
	return nil
}

func f16(bits uint16) float64 { return float64(float16.Frombits(bits).Float32()) }

func f16Bits(v float32) uint16 { return float16.Fromfloat32(v).Bits() }

// A fusedCase is one family on one shape.
type fusedCase struct {
	fam  *kernel.Family
	dims kernel.Dims
}

func fusedCases() []fusedCase {
	return []fusedCase{
		{kernel.CPUHcUpF16(), kernel.Dims{"M": 37, "S": 40, "K": 72}},
		{kernel.CPUHcUpF16(), kernel.Dims{"M": 1, "S": 17, "K": 9}},
		{kernel.CPUSwigluF16(), kernel.Dims{"M": 37, "N": 72, "K": 88}},
		{kernel.CPUSwigluF16(), kernel.Dims{"M": 3, "N": 5, "K": 7}},
		{kernel.CPUGemmQ8F16(), kernel.Dims{"M": 37, "N": 72, "K": 96, "G": 32}},
		{kernel.CPUGemmQ8F16(), kernel.Dims{"M": 5, "N": 9, "K": 30, "G": 3}},
	}
}

// tilesOf is the default sweep plus every valid row-tail variant.
func tilesOf(fam *kernel.Family) []kernel.Params {
	var out []kernel.Params
	for _, p := range fam.Space() {
		out = append(out, p)
		for _, tail := range []int{16, 32} {
			q := p.Clone()
			q["TAIL"] = tail
			if fam.Validate(q) == nil && p["THREADS"] == 2 {
				out = append(out, q)
			}
		}
	}
	return out
}

// compileAll compiles every tile first, two at a time.
func compileAll(t *testing.T, h *harness, fam *kernel.Family, tiles []kernel.Params) {
	t.Helper()
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2)
	errs := make([]error, len(tiles))
	for i, p := range tiles {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			_, errs[i] = h.compile(fam, p)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestFusedCPUSweeps runs every tile of every fused CPU family (and the
// row-tail variants) on small shapes, including M not a multiple of any TM:
// within each numerics class every output is bitwise equal to the class's
// first tile's, and every element of every output passes the float64
// reference.
func TestFusedCPUSweeps(t *testing.T) {
	h := newHarness(t)
	for _, c := range fusedCases() {
		t.Run(c.fam.Name+"/"+c.dims.String(), func(t *testing.T) {
			op := c.fam.Operator
			in := op.Inputs(7, c.dims)
			tiles := tilesOf(c.fam)
			compileAll(t, h, c.fam, tiles)
			first := map[string]result{} // numerics class → the first tile's outputs
			firstTile := map[string]string{}
			for _, p := range tiles {
				r, err := h.run(c.fam, p, c.dims, in)
				if err != nil {
					t.Fatalf("%s: %v", c.fam.TileName(p), err)
				}
				if err := checkReference(op, c.dims, in, r); err != nil {
					t.Fatalf("%s: reference: %v", c.fam.TileName(p), err)
				}
				class := ""
				if c.fam.Numerics != nil {
					class = c.fam.Numerics(p)
				}
				if f, ok := first[class]; !ok {
					first[class], firstTile[class] = r, c.fam.TileName(p)
				} else if err := firstDiff(f, r); err != nil {
					t.Errorf("%s vs %s (class %q): %v", c.fam.TileName(p), firstTile[class], class, err)
				}
				// The bound variant's fp32 output also agrees with the
				// fp16 one: mixh = fp16(mixed).
				if mixed, ok := r["mixed"]; ok {
					for i := 0; i < len(mixed)/4; i++ {
						v := math.Float32frombits(binary.LittleEndian.Uint32(mixed[4*i:]))
						if got, want := binary.LittleEndian.Uint16(r["mixh"][2*i:]), f16Bits(v); got != want {
							t.Fatalf("%s: mixh[%d] = %#04x, fp16(mixed) = %#04x", c.fam.TileName(p), i, got, want)
						}
					}
				}
			}
			t.Logf("%d tiles, classes %v", len(tiles), keys(firstTile))
		})
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k, v := range m {
		out = append(out, fmt.Sprintf("%q (first %s)", k, v))
	}
	return out
}

// TestFusedCPUScalarPath: the portable C conversions (TILEFIT_SCALAR) give
// the same bits as F16C.
func TestFusedCPUScalarPath(t *testing.T) {
	h := newHarness(t)
	for _, c := range fusedCases()[:5:5] {
		p, _ := c.fam.ParseTile(c.fam.Reference)
		in := c.fam.Operator.Inputs(3, c.dims)
		a, err := h.run(c.fam, p, c.dims, in)
		if err != nil {
			t.Fatal(err)
		}
		b, err := h.run(c.fam, p, c.dims, in, "TILEFIT_SCALAR=1")
		if err != nil {
			t.Fatal(err)
		}
		if err := firstDiff(a, b); err != nil {
			t.Errorf("%s: scalar path: %v", c.fam.Name, err)
		}
	}
}

// TestFusedCPUFaults: planted faults in hc_up's fused epilogue are caught —
// a stream skipped (FAULT=1) by the bitwise comparison and by the float64
// reference, the fp32 output left unwritten (FAULT=2, BOUND=1) as unwritten
// elements; a wrong group boundary in gemm_q8's dequantisation (FAULT=1) by
// the exact dequantisation check and the reference.
func TestFusedCPUFaults(t *testing.T) {
	h := newHarness(t)
	fam := kernel.CPUHcUpF16()
	d := kernel.Dims{"M": 37, "S": 40, "K": 72}
	in := fam.Operator.Inputs(11, d)
	p, _ := fam.ParseTile(fam.Reference) // BOUND=1
	good, err := h.run(fam, p, d, in)
	if err != nil {
		t.Fatal(err)
	}
	skip, err := h.run(fam, p, d, in, "FAULT=1")
	if err != nil {
		t.Fatal(err)
	}
	if firstDiff(good, skip) == nil {
		t.Error("FAULT=1 (stream 3 skipped): bitwise equal to the reference tile")
	}
	if err := checkReference(fam.Operator, d, in, skip); err == nil {
		t.Error("FAULT=1 (stream 3 skipped): passes the float64 reference")
	} else {
		t.Logf("FAULT=1 caught: %v", err)
	}
	unwritten, err := h.run(fam, p, d, in, "FAULT=2")
	if err != nil {
		t.Fatal(err)
	}
	if err := checkReference(fam.Operator, d, in, unwritten); err == nil || !strings.Contains(err.Error(), "mixed[0] unwritten") {
		t.Errorf("FAULT=2 (mixed unwritten): %v", err)
	} else {
		t.Logf("FAULT=2 caught: %v", err)
	}
	if bytes.Equal(good["mixed"], unwritten["mixed"]) || !bytes.Equal(good["mixh"], unwritten["mixh"]) {
		t.Error("FAULT=2 should change mixed only")
	}

	q8 := kernel.CPUGemmQ8F16()
	dq := kernel.Dims{"M": 9, "N": 40, "K": 96, "G": 32}
	qin := q8.Operator.Inputs(5, dq)
	qp, _ := q8.ParseTile(q8.Reference)
	qp["DEBUG"] = 1
	bad, err := h.run(q8, qp, dq, qin, "FAULT=1")
	if err != nil {
		t.Fatal(err)
	}
	if err := checkReference(q8.Operator, dq, qin, bad); err == nil {
		t.Error("gemm_q8 FAULT=1 (wrong group boundary): passes the reference")
	} else {
		t.Logf("gemm_q8 FAULT=1 caught: %v", err)
	}
}

// TestQ8DequantBitwise: the dequantised operand the kernel used (DEBUG=1
// writes it) equals kernel.DequantQ8 bit for bit, for inputs whose scales
// put products in fp16's subnormal range too; and the GEMM output of the
// DEBUG tile equals the plain tile's.
func TestQ8DequantBitwise(t *testing.T) {
	h := newHarness(t)
	fam := kernel.CPUGemmQ8F16()
	subAll := 0
	for _, d := range []kernel.Dims{{"M": 3, "N": 70, "K": 256, "G": 32}, {"M": 2, "N": 9, "K": 60, "G": 12}} {
		in := fam.Operator.Inputs(9, d)
		p, _ := fam.ParseTile("16_32_2")
		plain, err := h.run(fam, p, d, in)
		if err != nil {
			t.Fatal(err)
		}
		p["DEBUG"] = 1
		r, err := h.run(fam, p, d, in)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(plain["Y"], r["Y"]) {
			t.Errorf("%v: DEBUG=1 changes Y", d)
		}
		n, k, g := d["N"], d["K"], d["G"]
		sub := 0
		for row := 0; row < n; row++ {
			for kk := 0; kk < k; kk++ {
				i := row*k + kk
				q := int8(in[1][i])
				s := binary.LittleEndian.Uint16(in[2][2*(row*(k/g)+kk/g):])
				want := kernel.DequantQ8(q, s)
				if got := binary.LittleEndian.Uint16(r["wdq"][2*i:]); got != want {
					t.Fatalf("%v: wdq[%d,%d] = %#04x, DequantQ8(%d, %#04x) = %#04x", d, row, kk, got, q, s, want)
				}
				if want&0x7c00 == 0 && want&0x3ff != 0 {
					sub++
				}
			}
		}
		subAll += sub
		t.Logf("%v: %d weights bitwise equal to DequantQ8, %d of them subnormal", d, n*k, sub)
	}
	if subAll == 0 {
		t.Error("no subnormal dequantised weight: the inputs do not exercise fp16's subnormal range")
	}
}

// TestFusedSwigluWaysAgree reports whether the fused and chain classes
// happen to be bitwise equal on the CPU (they are not required to be), and
// checks both against the reference.
func TestFusedSwigluWaysAgree(t *testing.T) {
	h := newHarness(t)
	fam := kernel.CPUSwigluF16()
	d := kernel.Dims{"M": 20, "N": 48, "K": 40}
	in := fam.Operator.Inputs(2, d)
	p, _ := fam.ParseTile("16_32_2")
	fused, err := h.run(fam, p, d, in)
	if err != nil {
		t.Fatal(err)
	}
	p["CHAIN"] = 1
	chain, err := h.run(fam, p, d, in)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []result{fused, chain} {
		if err := checkReference(fam.Operator, d, in, r); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("fused vs chain on the CPU: bitwise equal = %v", firstDiff(fused, chain) == nil)
}
