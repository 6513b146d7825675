package workload

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"

	"github.com/tilefit/tilefit/internal/input"
	"github.com/tilefit/tilefit/kernel"
)

// Limits on sizes that a workload may ask for. Larger values are rejected as
// absurd before anything is allocated.
const (
	// MaxDim is the largest N or K a shape may have (1<<24).
	MaxDim = 1 << 24
	// MaxM is the largest token count M a workload may ask for (1<<20).
	MaxM = 1 << 20
	// MaxFileBytes is the largest workload file Parse and Load accept.
	MaxFileBytes = 4 << 20
	// MaxNameLen is the longest name, in bytes, a shape or workload may have.
	MaxNameLen = 64
	// MaxShapes is the most shapes a workload may list (every shape is
	// swept at every M, so a workload near the limit is already days of
	// work).
	MaxShapes = 10000
	// MaxMs is the most token counts M a workload may list.
	MaxMs = 4096
)

// A Shape is one operator call of a workload (by default gemm_f16,
// Y[M,N] = X[M,K]·W[N,K]ᵀ), called Calls times per chunk. M is not part of
// the shape; it comes from the workload.
type Shape struct {
	// Name identifies the shape within its workload (letters, digits, '_',
	// '-' and '.'), e.g. "Wqkv".
	Name string
	// Op names the operator (file key "op"); "" means DefaultOp.
	Op string
	// N is the number of output columns (rows of the weight matrix W), 0
	// when the operator has no dimension N.
	N int
	// K is the reduction length, shared by X and W (0 when the operator has
	// no dimension K).
	K int
	// Dims holds every dimension the shape gives except M, by the
	// operator's (upper-case) names, N and K included: file keys are their
	// lower-case names ("s: 2560" gives S).
	Dims map[string]int
	// Calls is how many times the shape runs per chunk; at least 1. Files
	// that omit it get 1.
	Calls int
}

// A Workload is a named list of shapes and the token counts M to tune them
// for. Workloads returned by this package have Ms sorted ascending and free of
// duplicates.
type Workload struct {
	Name   string
	Shapes []Shape
	Ms     []int
}

// DefaultOp is the operator of a shape that names none.
const DefaultOp = "gemm_f16"

// Operator is the shape's operator name (Op, or DefaultOp).
func (s Shape) Operator() string {
	if s.Op == "" {
		return DefaultOp
	}
	return s.Op
}

// At returns the shape's dimensions at token count m (M plus Dims; N and K
// from the fields when Dims lacks them).
func (s Shape) At(m int) kernel.Dims {
	d := kernel.Dims{"M": m}
	for k, v := range s.Dims {
		d[k] = v
	}
	if _, ok := d["N"]; !ok && s.N != 0 {
		d["N"] = s.N
	}
	if _, ok := d["K"]; !ok && s.K != 0 {
		d["K"] = s.K
	}
	return d
}

// Options are the limits a workload is validated against.
type Options struct {
	// Operators resolves a shape's operator (its dimensions, defaults and
	// operand sizes); nil means builtin.New().
	Operators *kernel.Registry
	// MaxBytes is the memory budget for one cell's buffers (see BufferBytes):
	// a shape whose buffers at its largest M need more is rejected. Zero or
	// less means no limit.
	MaxBytes int64
}

// BufferBytes is the memory one run of shape s at token count m needs: the
// bytes of every operand of op (for gemm_f16 with fp32 Y: X m×K fp16 + W N×K
// fp16 + Y m×N fp32 = 2mK + 2NK + 4mN). It never overflows: a result beyond
// math.MaxInt64 saturates at math.MaxInt64. Dimensions ≤ 0 count as zero.
func BufferBytes(op *kernel.Operator, s Shape, m int) int64 {
	d := s.At(m)
	for _, n := range op.Dims {
		if _, ok := d[n]; !ok {
			d[n] = op.Defaults[n]
		}
	}
	var total uint64
	for _, o := range op.Operands {
		n := uint64(o.DType.Size())
		for _, dim := range o.Shape {
			v, err := d.Size(dim)
			if err != nil {
				v = 0
			}
			n = mulSat(n, nonNeg(v), 1)
		}
		total = addSat(total, n)
	}
	if total > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(total)
}

func nonNeg(v int) uint64 {
	if v < 0 {
		return 0
	}
	return uint64(v)
}

// mulSat multiplies its arguments, saturating at math.MaxUint64.
func mulSat(vs ...uint64) uint64 {
	p := uint64(1)
	for _, v := range vs {
		hi, lo := bits.Mul64(p, v)
		if hi != 0 {
			// A zero factor later still makes the product zero.
			if slices.Contains(vs, 0) {
				return 0
			}
			return math.MaxUint64
		}
		p = lo
	}
	return p
}

func addSat(a, b uint64) uint64 {
	s, carry := bits.Add64(a, b, 0)
	if carry != 0 {
		return math.MaxUint64
	}
	return s
}

// Shape returns the shape named name, and whether there is one.
func (w Workload) Shape(name string) (Shape, bool) {
	for _, s := range w.Shapes {
		if s.Name == name {
			return s, true
		}
	}
	return Shape{}, false
}

// WithMs returns a copy of w whose token counts are ms, sorted ascending.
// The values follow the rules of a workload file's m list: at least one and
// at most MaxMs of them, each in 1..MaxM, none given twice; otherwise the
// error is a *ValidationError naming each bad value as m[i] (its index in
// ms) with the same wording as for a file. WithMs does not check the memory
// budget: call Validate on the result for that.
func (w Workload) WithMs(ms []int) (Workload, error) {
	if probs := checkMs(ms, "", nil, nil); len(probs) > 0 {
		return Workload{}, &ValidationError{Problems: probs}
	}
	out := Workload{
		Name:   w.Name,
		Shapes: slices.Clone(w.Shapes),
		Ms:     slices.Clone(ms),
	}
	slices.Sort(out.Ms)
	return out, nil
}

// ParseMs parses the value of flag (--m): token counts separated by
// commas, by the rules of a workload file's m list (each in 1..MaxM, none
// twice) and with the same wording, each problem's line prefixed with
// flag.
func ParseMs(flag, s string) ([]int, error) {
	items, err := input.SplitList(flag, s)
	if err != nil {
		return nil, err
	}
	ms := make([]int, len(items))
	for i, it := range items {
		m, err := strconv.Atoi(it)
		switch {
		case errors.Is(err, strconv.ErrRange):
			return nil, fmt.Errorf("%s: m[%d]: %s is out of range: M must be in 1..%d", flag, i, it, MaxM)
		case err != nil:
			return nil, fmt.Errorf("%s: m[%d]: %q is not a number (want token counts M in 1..%d, separated by commas)", flag, i, it, MaxM)
		}
		ms[i] = m
	}
	if _, err := (Workload{}).WithMs(ms); err != nil {
		return nil, flagProblems(flag, err)
	}
	return ms, nil
}

// flagProblems prefixes every line of a validation error with the flag.
func flagProblems(flag string, err error) error {
	var ve *ValidationError
	if !errors.As(err, &ve) {
		return fmt.Errorf("%s: %w", flag, err)
	}
	lines := make([]string, len(ve.Problems))
	for i, p := range ve.Problems {
		lines[i] = flag + ": " + p.String()
	}
	return &flagError{msg: strings.Join(lines, "\n"), err: err}
}

type flagError struct {
	msg string
	err error
}

func (e *flagError) Error() string { return e.msg }
func (e *flagError) Unwrap() error { return e.err }

// PresetNames returns the names of the built-in workloads, sorted:
// "decode" (three large weight matrices at M 1, 7 and 16), "smoke" (a few
// small odd-sized shapes for quick runs and tests) and "strata" (the 13
// production shapes of DOMAIN.md).
func PresetNames() []string {
	names := make([]string, 0, len(presets))
	for name := range presets {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// Preset returns the built-in workload called name. Each call returns fresh
// slices, so callers may modify the result.
func Preset(name string) (Workload, error) {
	mk, ok := presets[name]
	if !ok {
		return Workload{}, fmt.Errorf("unknown preset %q; presets: %s", name, strings.Join(PresetNames(), ", "))
	}
	return mk(), nil
}

var presets = map[string]func() Workload{
	"decode": decodeWorkload,
	"smoke":  smoke,
	"strata": strata,
}

// decodeWorkload is token generation: a few tokens (M 1, 7, 16) against weight
// matrices large enough that a call is a stream of the weights — square
// 4096 and 8192 and the strata model's output projection Wout (N 2560,
// K 6144). Its measure is the weights' bytes per second against the
// device's copy bandwidth.
func decodeWorkload() Workload {
	return Workload{
		Name: "decode",
		Shapes: []Shape{
			{Name: "sq4096", N: 4096, K: 4096, Calls: 1},
			{Name: "Wout", N: 2560, K: 6144, Calls: 1},
			{Name: "sq8192", N: 8192, K: 8192, Calls: 1},
		},
		Ms: []int{1, 7, 16},
	}
}

// strata is one 48-layer chunk of the production model (DOMAIN.md): eleven
// plain GEMMs (gemm_f16) and the engine's two fused operators — hc_up as
// hc_up_f16 (4 streams of S = 2560 columns, K = 320, 96 calls) and the
// shared expert's gate/up projection as swiglu_f16 (N 640, K 2560, 48 calls:
// each fused call replaces the 2 × 48 separate gate and up GEMMs that the
// 96-call Wshgu row of DOMAIN.md counts). A sweep runs the operators one
// after another; the plain shapes keep their cells and seeds.
func strata() Workload {
	return Workload{
		Name: "strata",
		Shapes: []Shape{
			{Name: "hc_read", N: 324, K: 10240, Calls: 96},
			{Name: "Wqkv", N: 10240, K: 2560, Calls: 37},
			{Name: "Wz", N: 6144, K: 2560, Calls: 36},
			{Name: "Wout", N: 2560, K: 6144, Calls: 48},
			{Name: "Wq", N: 12288, K: 2560, Calls: 12},
			{Name: "Wpv", N: 2560, K: 2560, Calls: 1},
			{Name: "Wshgu", Op: "swiglu_f16", N: 640, K: 2560, Calls: 48},
			{Name: "Wshd", N: 2560, K: 640, Calls: 48},
			{Name: "W512", N: 512, K: 2560, Calls: 119},
			{Name: "Wik", N: 128, K: 2560, Calls: 12},
			{Name: "Walbe", N: 48, K: 2560, Calls: 72},
			{Name: "Wsg", N: 1, K: 2560, Calls: 48},
			{Name: "hc_up", Op: "hc_up_f16", K: 320, Dims: map[string]int{"S": 2560}, Calls: 96},
		},
		Ms: []int{256, 512, 1024, 1983, 2048},
	}
}

// smoke is small enough for a full sweep on a 2-core CPU in seconds, and odd
// enough to exercise tails: N = 1 and 48, K not a multiple of 8, M not a
// multiple of 16. Every GEMM is at most ~18 MFLOP.
func smoke() Workload {
	return Workload{
		Name: "smoke",
		Shapes: []Shape{
			{Name: "sg", N: 1, K: 520, Calls: 48},
			{Name: "albe", N: 48, K: 520, Calls: 72},
			{Name: "oddk", N: 200, K: 100, Calls: 36},
			{Name: "wide", N: 250, K: 136, Calls: 12},
			{Name: "longk", N: 68, K: 1000, Calls: 96},
		},
		Ms: []int{1, 37, 130},
	}
}

// Load reads and parses the workload file at path (see Parse). Problems in the
// file come back as a *ValidationError naming path; a file that cannot be read
// gives an error wrapping the os error.
func Load(path string, opt Options) (Workload, error) {
	return LoadContext(context.Background(), path, opt)
}

// LoadContext is Load with a context: only a regular file is read (a FIFO,
// directory or device is refused before it is opened, so nothing blocks),
// and the read gives up when ctx is cancelled.
func LoadContext(ctx context.Context, path string, opt Options) (Workload, error) {
	data, err := input.ReadFile(ctx, path, input.File{What: "workload file", Limit: MaxFileBytes})
	if errors.Is(err, input.ErrTooLarge) {
		return Workload{}, &ValidationError{Problems: []Problem{{File: path, Msg: fmt.Sprintf("file is over the %s limit for a workload file", formatBytes(MaxFileBytes))}}}
	}
	if err != nil {
		return Workload{}, err
	}
	return Parse(path, data, opt)
}

// Open returns the workload spec names: a preset if spec is one of
// PresetNames, or else the file at path spec (see Load). Write "./smoke" for a
// file that shares a preset's name. A preset is validated against opt too.
func Open(spec string, opt Options) (Workload, error) {
	return OpenContext(context.Background(), spec, opt)
}

// OpenContext is Open with a context for reading a file (see LoadContext).
func OpenContext(ctx context.Context, spec string, opt Options) (Workload, error) {
	if spec == "" {
		return Workload{}, fmt.Errorf("no workload given; want a preset (%s) or a YAML file", strings.Join(PresetNames(), ", "))
	}
	if mk, ok := presets[spec]; ok {
		w := mk()
		if probs := check(w, opt, "preset "+spec, nil, nil); len(probs) > 0 {
			return Workload{}, &ValidationError{Problems: probs}
		}
		return w, nil
	}
	w, err := LoadContext(ctx, spec, opt)
	if err != nil && errors.Is(err, fs.ErrNotExist) {
		return Workload{}, fmt.Errorf("workload %q is not a preset (%s), and %w",
			spec, strings.Join(PresetNames(), ", "), err)
	}
	return w, err
}

// Validate checks w against the rules a workload file must meet (see the
// package doc) and opt's memory budget. Its error is a *ValidationError whose
// problems name fields without file or line, e.g. "shapes[1].n: must be > 0,
// got -4". Ms need not be sorted.
func (w Workload) Validate(opt Options) error {
	if probs := check(w, opt, "", nil, nil); len(probs) > 0 {
		return &ValidationError{Problems: probs}
	}
	return nil
}
