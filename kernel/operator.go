package kernel

// This file is the operator contract (issue 9): what a family computes
// (its Operator: dimensions, operands, counts, inputs, reference) and how it
// is launched (Launch, decided by the family, never derived by a backend).
// Backends allocate operands, poison and guard outputs, build what a Launch
// asks for (pointers, dimensions, scratch buffers, tensor maps), launch and
// time. verify, measure, tune, store and report iterate over operands and
// dimensions.

import (
	"encoding/binary"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/x448/float16"
)

// A DType is an element type. It owns its size in bytes, its name, its
// C/CUDA type name and its decoding to float64.
type DType uint8

// The element types.
const (
	F16  DType = iota + 1 // IEEE binary16, stored as its bit pattern
	BF16                  // bfloat16, stored as its bit pattern
	F32                   // IEEE binary32
	I8                    // signed 8-bit integer (quantised weights)
)

var dtypeInfo = map[DType]struct {
	name, ctype, cudaType string
	size                  int
}{
	F16:  {"f16", "uint16_t", "unsigned short", 2},
	BF16: {"bf16", "uint16_t", "unsigned short", 2},
	F32:  {"f32", "float", "float", 4},
	I8:   {"i8", "int8_t", "signed char", 1},
}

// String is the type's short name: f16, bf16, f32, i8.
func (d DType) String() string {
	if i, ok := dtypeInfo[d]; ok {
		return i.name
	}
	return fmt.Sprintf("dtype(%d)", uint8(d))
}

// Size is the bytes per element.
func (d DType) Size() int { return dtypeInfo[d].size }

// CType is the C type name an element is read and written as.
func (d DType) CType() string { return dtypeInfo[d].ctype }

// CUDAType is the CUDA type name an element is read and written as.
func (d DType) CUDAType() string { return dtypeInfo[d].cudaType }

// ParseDType parses a short name (f16, bf16, f32, i8).
func ParseDType(s string) (DType, error) {
	for d, i := range dtypeInfo {
		if i.name == s {
			return d, nil
		}
	}
	return 0, fmt.Errorf("unknown element type %q (known: f16, bf16, f32, i8)", s)
}

// Dir says whether an operand is read or written by the kernel.
type Dir uint8

// Operand directions.
const (
	In  Dir = iota + 1 // read only; uploaded from the generated inputs
	Out                // written; poisoned with 0xFF bytes and guarded
)

// An Operand is one buffer of an operator.
type Operand struct {
	Name  string
	Dir   Dir
	DType DType
	// DTypes, when set, are the element types a user may choose for this
	// operand (DType, the default, among them); the choice is made per
	// sweep (Operator.Typed), never per tile, and reaches the family source
	// as the define NAME_DTYPE=<code> (DType.Code).
	DTypes []DType
	// Shape lists dimension names, outermost first; the operand is dense
	// and row-major, its element count the product of the dimensions (a
	// name may be an integer literal, e.g. "4").
	Shape []string
	// When, if set, names a parameter that must be non-zero for the
	// operand to exist (e.g. hc_up's fp32 "mixed" output exists only in
	// the BOUND=1 variant); an absent operand is neither allocated nor
	// compared.
	When string
}

// Dims gives each dimension of an operator its size.
type Dims map[string]int

// Size resolves a dimension name, an integer literal, or a quotient "A/B" of
// two of them that must divide exactly (e.g. "K/G", the quantisation groups
// along K).
func (d Dims) Size(name string) (int, error) {
	if v, ok := d[name]; ok {
		return v, nil
	}
	if a, b, ok := strings.Cut(name, "/"); ok {
		x, err := d.Size(a)
		if err != nil {
			return 0, err
		}
		y, err := d.Size(b)
		if err != nil {
			return 0, err
		}
		if y <= 0 || x%y != 0 {
			return 0, fmt.Errorf("dimension %s: %s=%d is not a multiple of %s=%d", name, a, x, b, y)
		}
		return x / y, nil
	}
	var v int
	if _, err := fmt.Sscanf(name, "%d", &v); err == nil && fmt.Sprint(v) == name {
		return v, nil
	}
	return 0, fmt.Errorf("dimension %q not given", name)
}

// Elems is the element count of an operand of shape shape.
func (d Dims) Elems(shape []string) (int, error) {
	n := 1
	for _, s := range shape {
		v, err := d.Size(s)
		if err != nil {
			return 0, err
		}
		n *= v
	}
	return n, nil
}

// String formats d as "K=2560,M=256,N=640" with names sorted.
func (d Dims) String() string {
	keys := make([]string, 0, len(d))
	for k := range d {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%s=%d", k, d[k])
	}
	return b.String()
}

// ParseDims parses Dims.String's format, "K=2560,M=256,N=640".
func ParseDims(s string) (Dims, error) {
	d := Dims{}
	for _, part := range strings.Split(s, ",") {
		if part == "" {
			continue
		}
		n, v, ok := strings.Cut(part, "=")
		var x int
		if _, err := fmt.Sscanf(v, "%d", &x); !ok || err != nil || n == "" {
			return nil, fmt.Errorf("dimensions %q: bad entry %q", s, part)
		}
		d[n] = x
	}
	return d, nil
}

// An Operator is what a family computes, independent of how.
type Operator struct {
	// Name identifies the operator, e.g. "gemm_f16", "hc_up_f16"; it is
	// part of every result's provenance.
	Name string
	// Doc is the formula with shapes, e.g. "Y[M,N] = X[M,K]·W[N,K]ᵀ".
	Doc string
	// Dims are the dimension names, M first (the token count a selector
	// switches on), then the shape's own (N, K, S, G, ...).
	Dims []string
	// Defaults gives dimensions a workload shape may leave out (e.g. the
	// quantisation group G=32).
	Defaults Dims
	// CheckDims, when set, refuses dimensions the operator's kernels
	// cannot run beyond each being a positive size (gemm_q8_f16: G divides
	// K). Workload validation applies it to every shape (with M = 1,
	// defaults filled in), so that such a shape is a workload error at its
	// file line, not a cell that cannot run. Its error may be a *DimError
	// naming the dimensions at fault.
	CheckDims func(d Dims) error
	// Operands in kernel-parameter order: inputs, then outputs.
	Operands []Operand
	// FLOPs is the floating-point operations of one call.
	FLOPs func(d Dims) float64
	// Bytes is the least bytes one call must move, for GB/s and roofline
	// floors; nil means every operand read or written once (SetBytes).
	Bytes func(o *Operator, d Dims) float64
	// Inputs returns seeded random contents (never all zeros) for every
	// In operand, in Operands order, as little-endian element bytes. o is
	// the operator with its chosen operand types (see Typed). The contents
	// must be prefix-consistent in M (the first dimension): for one seed,
	// an operand whose leading dimension is M has the same first m rows
	// for every M ≥ m, and every other operand is the same for every M
	// (UniformInputs is; the sweep's batch-invariance check relies on it
	// and reports "inputs differ" where it does not hold). Sets are drawn
	// on several goroutines at once: it must not keep state between calls.
	Inputs func(o *Operator, seed uint64, d Dims) [][]byte
	// Reference returns the float64 value of element i of output operand
	// out (an index into o.Operands) for inputs in, and the bound its
	// computed value must lie within (|got-want| <= bound). o is the
	// operator with its chosen operand types (an fp16 output has a wider
	// bound than an fp32 one). It is called from several goroutines at
	// once (verify.Refs shares the elements out over the cores): it must
	// not write to in or to state shared between calls.
	Reference func(o *Operator, d Dims, in [][]byte, out, i int) (want, bound float64)
	// ReferenceBounds, when set, replaces Reference (which may then be
	// nil): the same value and worst-case bound, and a second,
	// probabilistic bound (RefValue.Likely) that a correct kernel's error
	// stays within with overwhelming probability under a stated model of
	// its rounding errors — one that grows like √K where the worst case
	// grows like K, so that a lost term shows on random data too. The same
	// rules as Reference apply (pure, safe for concurrent use).
	ReferenceBounds func(o *Operator, d Dims, in [][]byte, out, i int) RefValue
	// Exact, when set, declares the operator's exact known-answer check
	// on dimensions d (see Exact; verify.NewExactRefs runs it): inputs
	// drawn as small integers (scaled by powers of two where needed) on
	// which every correct kernel computes one known number per output
	// element. Nil means the operator declares none: a sweep says so in a
	// warning and its cells are verified by the float64 reference and
	// bitwise parity only. An error means the check does not reach this
	// cell (e.g. K so large that no integer inputs keep every partial sum
	// exact); the sweep warns the same way.
	Exact func(o *Operator, d Dims) (*Exact, error)
	// Unfused, when set, is the reference of the operator's unfused
	// composition as an engine runs it between kernels: every GEMM result
	// rounded to fp16, then the epilogue — the vendor baselines of the fused
	// operators (Baseline.F16Intermediate). The same value as Reference, a
	// bound widened by the fp16 roundings carried through the epilogue; the
	// fused candidates are still checked against Reference's.
	Unfused func(o *Operator, d Dims, in [][]byte, out, i int) (want, bound float64)
	// Gemm, when set, declares the operator a plain GEMM over the named
	// operands and nothing else (no epilogue, no other operand):
	// Y[M,N] = X[M,K]·W[N,K]ᵀ. Analytic known-answer checks apply to it
	// (verify.Laplacian, tilefit sweep --check laplacian).
	Gemm *GemmOperands
}

// WithUnfusedBound returns o checked as its unfused composition: a copy
// whose Reference is Unfused (o itself when it has none).
func (o *Operator) WithUnfusedBound() *Operator {
	if o.Unfused == nil {
		return o
	}
	q := *o
	unfused := o.Unfused
	q.Reference = unfused
	// The unfused bound replaces both of ReferenceBounds' bounds: the
	// probabilistic model is not claimed for the fp16 roundings between
	// kernels (they are not independent of the values), so Likely = Bound.
	q.ReferenceBounds = func(o *Operator, d Dims, in [][]byte, out, i int) RefValue {
		w, b := unfused(o, d, in, out, i)
		return RefValue{Want: w, Bound: b, Likely: b}
	}
	return &q
}

// Operand returns the operand named name and its index.
// A DimError is a dimension rule an operator's CheckDims found broken:
// Dims are the dimensions involved, the one to change last.
type DimError struct {
	Dims []string
	Msg  string
}

func (e *DimError) Error() string { return e.Msg }

func (o *Operator) Operand(name string) (Operand, int, bool) {
	for i, op := range o.Operands {
		if op.Name == name {
			return op, i, true
		}
	}
	return Operand{}, -1, false
}

// Present reports whether operand op exists for assignment p (see
// Operand.When).
func (op Operand) Present(p Params) bool { return op.When == "" || p[op.When] != 0 }

// ArgKind says what one kernel parameter is.
type ArgKind uint8

// Kernel parameter kinds.
const (
	ArgOperand   ArgKind = iota + 1 // device pointer to an operand (Arg.Name)
	ArgScratch                      // device pointer to a scratch buffer (Arg.Name)
	ArgDim                          // int64 dimension value (Arg.Name)
	ArgInt                          // int64 constant (Arg.Value)
	ArgTensorMap                    // CUDA tensor map over an operand (Arg.Map), built on the host
)

// An Arg is one kernel parameter.
type Arg struct {
	Kind  ArgKind
	Name  string     // operand, scratch or dimension name
	Value int64      // ArgInt
	Map   *TensorMap // ArgTensorMap
}

// A TensorMap describes a TMA descriptor (cuTensorMapEncodeTiled) over an
// operand or scratch buffer; sizes are innermost first.
type TensorMap struct {
	Buffer string // operand or scratch name
	DType  DType
	// Dims are the global sizes in elements, innermost first.
	Dims []int64
	// Strides are the byte strides of dimensions 1.. (len(Dims)-1 values).
	Strides []int64
	// Box is the shared-memory box in elements, innermost first.
	Box []int
	// Swizzle: 0 none, 1 32 B, 2 64 B, 3 128 B (CUtensorMapSwizzle).
	Swizzle int
	// L2Promotion: 0 none, 1 64 B, 2 128 B, 3 256 B.
	L2Promotion int
}

// A Scratch is a device buffer a launch list needs between launches (a
// chain's intermediate, split-K partials); not compared, not timed apart.
type Scratch struct {
	Name  string
	DType DType
	Elems int
	// Zero asks for the buffer to be zeroed before every call (as part of
	// the timed work).
	Zero bool
}

// A Launch is one kernel launch of a call. A call is a list of launches
// (one, or a chain run in order and timed as one candidate).
type Launch struct {
	// Entry is the kernel's symbol: a __global__ function name on CUDA, an
	// exported C function on the CPU (CPU convention:
	// int ENTRY(void **ptrs, const int64_t *args) with ptrs holding the
	// pointer arguments and args the integer arguments, each in Args
	// order; a non-zero return is a failure).
	Entry string
	// Grid and Block are the CUDA launch shape (unused on the CPU).
	Grid, Block [3]int
	// Shared is the dynamic shared memory in bytes (CUDA).
	Shared int
	// Cluster is the thread-block cluster shape; zero means none (CUDA).
	Cluster [3]int
	// PDL launches with programmatic stream serialisation (CUDA, sm_90):
	// the launch may begin before the previous kernel in the stream has
	// finished, so the kernel must run griddepcontrol.wait before it
	// touches memory that kernel writes (or reads).
	PDL bool
	// Vendor, when set, names a vendor-library routine the backend runs
	// instead of a compiled entry (Entry is then ignored): see VendorGemm.
	// It lets a vendor baseline (kernel.Baseline) be a launch list, e.g.
	// the vendor GEMM followed by a compiled elementwise kernel.
	Vendor string
	// Args are the kernel parameters in order.
	Args []Arg
}

// A Plan is everything a backend needs to run one candidate on one cell.
type Plan struct {
	Launches []Launch
	Scratch  []Scratch
}

// Vendor-library routines a Launch may name (Launch.Vendor). Each backend
// implements them with its vendor library (OpenBLAS on the CPU, cuBLAS on
// CUDA) or fails the load with a clear error when the library is missing.
const (
	// VendorGemm computes C[M,N] = A[M,K]·B[N,K]ᵀ, row-major, A and B fp16,
	// fp32 accumulation, C fp32 or fp16 (the element type of C's buffer).
	// Args: A, B, C (operands or scratch buffers), then dims M, N, K.
	VendorGemm = "gemm"
	// VendorGemmLt is VendorGemm through cuBLASLt with its own autotuning
	// (CUDA only): the heuristic's top algorithms are timed on the
	// problem's buffers when the kernel is bound and the fastest is kept
	// per shape. Args as VendorGemm.
	VendorGemmLt = "gemm_lt"
)

// Code is the number a family source sees for d in a NAME_DTYPE define:
// 1 f16, 2 bf16, 3 f32, 4 i8 (the DType values).
func (d DType) Code() int { return int(d) }

// Decode returns element i of b (little-endian elements of type d) as a
// float64 (exact for every type here).
func (d DType) Decode(b []byte, i int) float64 {
	switch d {
	case F16:
		return float64(f16Table[uint16(b[2*i])|uint16(b[2*i+1])<<8])
	case BF16:
		return float64(math.Float32frombits(uint32(uint16(b[2*i])|uint16(b[2*i+1])<<8) << 16))
	case F32:
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
	case I8:
		return float64(int8(b[i]))
	}
	return math.NaN()
}

// Bits returns the bit pattern of element i of b.
func (d DType) Bits(b []byte, i int) uint64 {
	switch d.Size() {
	case 1:
		return uint64(b[i])
	case 2:
		return uint64(binary.LittleEndian.Uint16(b[2*i:]))
	case 4:
		return uint64(binary.LittleEndian.Uint32(b[4*i:]))
	case 8:
		return binary.LittleEndian.Uint64(b[8*i:])
	}
	return 0
}

// Float reports whether d is a floating-point type (NaN and ±Inf exist).
func (d DType) Float() bool { return d == F16 || d == BF16 || d == F32 }

// Round rounds v to the nearest value of type d (ties to even) and returns
// it as a float64, e.g. to turn a float64 reference into the value an fp16
// output should hold.
func (d DType) Round(v float64) float64 {
	switch d {
	case F16:
		return float64(float16.Fromfloat32(float32(v)).Float32())
	case BF16:
		b := math.Float32bits(float32(v))
		b += 0x7fff + (b>>16)&1
		return float64(math.Float32frombits(b &^ 0xffff))
	case F32:
		return float64(float32(v))
	}
	return v
}

// f16Table holds the float32 value of every fp16 bit pattern.
var f16Table = func() *[1 << 16]float32 {
	var t [1 << 16]float32
	for i := range t {
		t[i] = float16.Frombits(uint16(i)).Float32()
	}
	return &t
}()

// F16Values returns a copy of the float32 value of every fp16 bit pattern
// (index: the pattern), for references that decode fp16 in their inner
// loop.
func F16Values() [1 << 16]float32 { return *f16Table }

// Typed returns a copy of o with the element types of operands chosen
// (name → type), each checked against the operand's DTypes. An empty map
// returns o's defaults.
func (o *Operator) Typed(types map[string]DType) (*Operator, error) {
	q := *o
	q.Operands = append([]Operand(nil), o.Operands...)
	for name, t := range types {
		_, i, ok := q.Operand(name)
		if !ok {
			return nil, fmt.Errorf("operator %s has no operand %q", o.Name, name)
		}
		op := q.Operands[i]
		allowed := op.DTypes
		if len(allowed) == 0 {
			allowed = []DType{op.DType}
		}
		found := false
		for _, a := range allowed {
			found = found || a == t
		}
		if !found {
			return nil, fmt.Errorf("operand %s of %s may be %s, not %s", name, o.Name, dtypeList(allowed), t)
		}
		q.Operands[i].DType = t
	}
	return &q, nil
}

// ParseTypes parses "Y=f16,Z=f32" (or "" for the defaults) into operand
// types for Typed.
func ParseTypes(s string) (map[string]DType, error) {
	out := map[string]DType{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		n, v, ok := strings.Cut(part, "=")
		if !ok {
			return nil, fmt.Errorf("operand type %q: want NAME=TYPE", part)
		}
		t, err := ParseDType(strings.TrimSpace(v))
		if err != nil {
			return nil, err
		}
		out[strings.TrimSpace(n)] = t
	}
	return out, nil
}

// Types formats the element types of every operand, "X=f16,W=f16,Y=f32"
// (Operands order): with the operator name, what a stored cell records.
func (o *Operator) Types() string {
	parts := make([]string, len(o.Operands))
	for i, op := range o.Operands {
		parts[i] = op.Name + "=" + op.DType.String()
	}
	return strings.Join(parts, ",")
}

// TypeDefines returns NAME_DTYPE=<code> for every operand whose type is a
// choice (Operand.DTypes), in Operands order: the compile-time defines that
// tell a family source the chosen types.
func (o *Operator) TypeDefines() []string {
	var out []string
	for _, op := range o.Operands {
		if len(op.DTypes) > 0 {
			out = append(out, fmt.Sprintf("%s_DTYPE=%d", op.Name, op.DType.Code()))
		}
	}
	return out
}

// Signature formats o as one line: name, dims, operands with type and shape.
// e.g. "gemm_f16(M,N,K): X[M,K] f16 in, W[N,K] f16 in, Y[M,N] f32|f16 out".
func (o *Operator) Signature() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s(%s):", o.Name, strings.Join(o.Dims, ","))
	for i, op := range o.Operands {
		if i > 0 {
			b.WriteByte(',')
		}
		dir := "in"
		if op.Dir == Out {
			dir = "out"
		}
		t := op.DType.String()
		if len(op.DTypes) > 0 {
			t = dtypeList(op.DTypes)
		}
		fmt.Fprintf(&b, " %s[%s] %s %s", op.Name, strings.Join(op.Shape, ","), t, dir)
		if op.When != "" {
			fmt.Fprintf(&b, " (when %s)", op.When)
		}
	}
	return b.String()
}

func dtypeList(ts []DType) string {
	s := make([]string, len(ts))
	for i, t := range ts {
		s[i] = t.String()
	}
	return strings.Join(s, "|")
}

// Resolve completes given dimensions with o's Defaults and checks that
// every dimension of o is given and positive, and no unknown one is.
func (o *Operator) Resolve(given Dims) (Dims, error) {
	d := Dims{}
	for k, v := range o.Defaults {
		d[k] = v
	}
	for k, v := range given {
		known := false
		for _, n := range o.Dims {
			known = known || n == k
		}
		if !known {
			return nil, fmt.Errorf("operator %s has no dimension %s (dimensions: %s)", o.Name, k, strings.Join(o.Dims, ", "))
		}
		d[k] = v
	}
	for _, n := range o.Dims {
		v, ok := d[n]
		if !ok {
			return nil, fmt.Errorf("operator %s needs dimension %s", o.Name, n)
		}
		if v <= 0 {
			return nil, fmt.Errorf("operator %s: dimension %s = %d, want > 0", o.Name, n, v)
		}
	}
	return d, nil
}

// OperandBytes is the byte size of operand i on dims d.
func (o *Operator) OperandBytes(i int, d Dims) (int64, error) {
	n, err := d.Elems(o.Operands[i].Shape)
	if err != nil {
		return 0, fmt.Errorf("operand %s: %w", o.Operands[i].Name, err)
	}
	return int64(n) * int64(o.Operands[i].DType.Size()), nil
}

// MovedBytes is the least bytes one call moves (Bytes, or SetBytes).
func (o *Operator) MovedBytes(d Dims) float64 {
	if o.Bytes != nil {
		return o.Bytes(o, d)
	}
	return float64(o.SetBytes(d))
}

// GenInputs returns o's seeded inputs on d (Inputs, or UniformInputs).
func (o *Operator) GenInputs(seed uint64, d Dims) [][]byte {
	if o.Inputs != nil {
		return o.Inputs(o, seed, d)
	}
	return UniformInputs(o.Operands, seed, d)
}

// Ref is o.Reference(o, d, in, out, i) (or ReferenceBounds' value and
// worst-case bound).
func (o *Operator) Ref(d Dims, in [][]byte, out, i int) (want, bound float64) {
	if o.ReferenceBounds != nil {
		r := o.ReferenceBounds(o, d, in, out, i)
		return r.Want, r.Bound
	}
	return o.Reference(o, d, in, out, i)
}

// RefBounds is o.ReferenceBounds(o, d, in, out, i), or Reference's value
// and bound with no probabilistic bound (Likely 0) when the operator
// declares only Reference.
func (o *Operator) RefBounds(d Dims, in [][]byte, out, i int) RefValue {
	if o.ReferenceBounds != nil {
		return o.ReferenceBounds(o, d, in, out, i)
	}
	w, b := o.Reference(o, d, in, out, i)
	return RefValue{Want: w, Bound: b}
}

// SetBytes is the bytes of every operand together: one input/output set.
func (o *Operator) SetBytes(d Dims) int64 {
	var t int64
	for i := range o.Operands {
		b, _ := o.OperandBytes(i, d)
		t += b
	}
	return t
}

// InputIndices returns the indices of o's input operands, in order.
func (o *Operator) InputIndices() []int {
	var out []int
	for i, op := range o.Operands {
		if op.Dir == In {
			out = append(out, i)
		}
	}
	return out
}

// pcgIncrement is the second PCG word of UniformInputs' first operand.
const pcgIncrement = 0x9e3779b97f4a7c15

// InputStream is the second PCG word of the generator UniformInputs draws
// operand i of its list from: pcgIncrement for the first, a SplitMix64
// mix of pcgIncrement+i for the others (distinct, well-spread streams).
func InputStream(i int) uint64 {
	if i == 0 {
		return pcgIncrement
	}
	z := uint64(pcgIncrement) + uint64(i)*0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// UniformInputs draws every input operand of ops with the counter-based
// generator (UniformDrawn: key DrawKey(seed, InputStream(i)) for the
// operand at index i of ops; DrawUniform: floating-point elements on the
// grid j·2⁻²³ of [−1, 1) rounded to the type, never zero; i8 elements
// uniformly from [−127, 127] without 0). The same seed and dims always give
// the same bytes, on the host and on a device that draws them itself
// (backend.Drawer).
//
// The inputs are prefix-consistent in M (what the batch-invariance check
// needs): element e of an operand depends on its key and e only, so an
// operand without M is the same for every M, and the first m rows of an
// operand whose leading dimension is M are the same for every M ≥ m.
//
// (Before issue 17 the operands were PCG streams from math/rand/v2; the
// bits of every cell's inputs changed with the counter-based generator.)
func UniformInputs(ops []Operand, seed uint64, d Dims) [][]byte {
	var out [][]byte
	for oi, op := range ops {
		if op.Dir != In {
			continue
		}
		out = append(out, UniformOperand(op, oi, seed, d))
	}
	return out
}

// UniformOperand draws input operand op, at index oi of its operator's
// operands, as UniformInputs does: its bytes depend on seed, oi, its type
// and its element count only (so a sweep may keep an operand without M for
// every M of a shape, and the rows of an operand led by M for every
// smaller M).
func UniformOperand(op Operand, oi int, seed uint64, d Dims) []byte {
	return UniformDrawn(op, oi, seed, d).Bytes()
}

// Operands returns ArgOperand arguments for names, in order.
func Operands(names ...string) []Arg {
	out := make([]Arg, len(names))
	for i, n := range names {
		out[i] = Arg{Kind: ArgOperand, Name: n}
	}
	return out
}

// DimArgs returns ArgDim arguments for names, in order.
func DimArgs(names ...string) []Arg {
	out := make([]Arg, len(names))
	for i, n := range names {
		out[i] = Arg{Kind: ArgDim, Name: n}
	}
	return out
}

// Args concatenates argument lists.
func Args(lists ...[]Arg) []Arg {
	var out []Arg
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// GemmOperands names the operands of a plain GEMM operator
// (Operator.Gemm): Y[M,N] = X[M,K]·W[N,K]ᵀ, X and W inputs, Y the output,
// each row-major with the shapes shown.
type GemmOperands struct {
	X, W, Y string
}
