package kernel

// This file is the operator contract (issue 9): what a family computes
// (its Operator: dimensions, operands, counts, inputs, reference) and how it
// is launched (Launch, decided by the family, never derived by a backend).
// Backends allocate operands, poison and guard outputs, build what a Launch
// asks for (pointers, dimensions, scratch buffers, tensor maps), launch and
// time. verify, measure, tune, store and report iterate over operands and
// dimensions.

import (
	"fmt"
	"sort"
	"strings"
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

// Size resolves a dimension name or integer literal.
func (d Dims) Size(name string) (int, error) {
	if v, ok := d[name]; ok {
		return v, nil
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
	// Operands in kernel-parameter order: inputs, then outputs.
	Operands []Operand
	// FLOPs is the floating-point operations of one call.
	FLOPs func(d Dims) float64
	// Bytes is the least bytes one call must move (each operand read or
	// written once), for GB/s and roofline floors.
	Bytes func(d Dims) float64
	// Inputs returns seeded random contents (never all zeros) for every
	// In operand, in Operands order, as little-endian element bytes.
	Inputs func(seed uint64, d Dims) [][]byte
	// Reference returns the float64 value of element i of output operand
	// out (an index into Operands) for inputs in, and the bound its
	// computed value must lie within (|got-want| <= bound).
	Reference func(d Dims, in [][]byte, out, i int) (want, bound float64)
}

// Operand returns the operand named name and its index.
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
	// Args are the kernel parameters in order.
	Args []Arg
}

// A Plan is everything a backend needs to run one candidate on one cell.
type Plan struct {
	Launches []Launch
	Scratch  []Scratch
}
