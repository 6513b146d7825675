// Package backend defines the small interface every device backend (cpu,
// cuda) implements, and the value types that cross it.
//
// The flow for one cell (shape N×K at token count M): Compile turns a
// Program (family source + -D defines) into an Artifact on disk; Load makes a
// Kernel of it; NewProblem uploads input sets (X M×K, W N×K fp16) and
// allocates poisoned, guarded outputs; Problem.Run runs a kernel once and
// returns its output; Problem.Time times back-to-back dispatches.
package backend

import (
	"context"
	"fmt"
	"time"
)

// Device describes the device and toolchain that produce a result; every
// field is part of a result's provenance.
type Device struct {
	Backend  string // "cpu" or "cuda"
	Name     string // e.g. "AMD EPYC (2 cores)", "NVIDIA H200"
	Arch     string // e.g. "x86_64 avx2 fma f16c", "sm_90a"
	Compiler string // compiler and version, e.g. "cc (Debian 12.2.0) 12.2.0", "nvrtc 13.0"
	Flags    string // compile flags
	Driver   string // driver version ("" on the CPU)
	Memory   int64  // bytes of device memory usable for buffers
	// Props holds further facts (SMs, L2 bytes, cores, measured ceilings).
	Props map[string]string
}

// A Program is one compilation unit: a family source and its defines.
type Program struct {
	Family string
	// Source is the full source text.
	Source string
	// Defines are NAME=VALUE pairs passed as -D, in a stable order.
	Defines []string
}

// An Artifact is a compiled Program cached on disk.
type Artifact struct {
	// Key hashes everything that produced the artifact: source, defines,
	// compiler and version, flags, target.
	Key string
	// Path is the artifact file (.so on the CPU, .cubin on CUDA).
	Path string
	// Log is the compiler's output (warnings).
	Log string
	// Elapsed is the compile time; 0 when served from the cache.
	Elapsed time.Duration
	Cached  bool
}

// A CompileError is a failed compilation; Log holds the compiler output.
type CompileError struct {
	Program string
	Log     string
	Err     error
}

func (e *CompileError) Error() string {
	return fmt.Sprintf("compile %s: %v\n%s", e.Program, e.Err, e.Log)
}

func (e *CompileError) Unwrap() error { return e.Err }

// A Shape is the size of one GEMM: Y[M,N] = X[M,K]·W[N,K]ᵀ.
type Shape struct{ M, N, K int }

// InputSet is one set of inputs as fp16 bit patterns: X is M×K, W is N×K,
// both row-major.
type InputSet struct {
	X, W []uint16
}

// A Kernel is a loaded candidate ready to dispatch.
type Kernel interface {
	// Name is the tile name or vendor name.
	Name() string
	Close() error
}

// A Problem holds one cell's device buffers: len(sets) input sets and as
// many output buffers, each output surrounded by guard regions.
type Problem interface {
	Shape() Shape
	// Sets is the number of input/output sets.
	Sets() int
	// Run fills output buffer set with 0xFF bytes (and its guards with
	// NaN), dispatches k once on input set `set`, waits, checks the guards
	// and returns a host copy of the output (M·N elements, 4 bytes each for
	// fp32, 2 for fp16, little-endian). A guard overwritten is a *GuardError.
	Run(ctx context.Context, k Kernel, set int) ([]byte, error)
	// Time dispatches k n times back to back, rotating over the sets
	// starting at set first, and returns the mean time per dispatch.
	Time(ctx context.Context, k Kernel, n, first int) (time.Duration, error)
	Close() error
}

// A GuardError reports a write outside the output buffer.
type GuardError struct {
	Offset int // element offset relative to the output start (negative: before)
}

func (e *GuardError) Error() string {
	return fmt.Sprintf("wrote outside its output: guard element at offset %d changed", e.Offset)
}

// Backend is the interface every device backend implements. All methods
// take ctx first; errors are wrapped with the operation's context.
type Backend interface {
	// Name is "cpu" or "cuda".
	Name() string
	Device(ctx context.Context) (Device, error)
	// Compile compiles p (or finds it in the disk cache). A compiler
	// failure is a *CompileError.
	Compile(ctx context.Context, p Program) (Artifact, error)
	// Load loads a compiled artifact; p gives the defines the backend
	// derives launch geometry from. name is the tile name.
	Load(ctx context.Context, name string, p Program, a Artifact) (Kernel, error)
	// NewProblem allocates buffers for s and uploads the input sets.
	// outF16 selects fp16 output instead of fp32.
	NewProblem(ctx context.Context, s Shape, sets []InputSet, outF16 bool) (Problem, error)
	Close() error
}

// Vendor is an optional capability: the vendor library as a candidate
// (OpenBLAS sgemm on the CPU, cuBLAS on CUDA). ok is false when the library
// is not installed.
type Vendor interface {
	Vendor(ctx context.Context) (k Kernel, ok bool, err error)
}

// Sensor is an optional capability: a short reading of the device's state
// (e.g. "sm_mhz=1980 temp_c=41"), taken once per timing round so that
// throttled rounds show in the stored results.
type Sensor interface {
	Reading(ctx context.Context) (string, error)
}

// Ceilings is an optional capability: measured device ceilings, e.g.
// "copy_gbps" (device-to-device copy, bytes read + written per second) and
// "vendor_tflops" (vendor fp16 matmul on random data), as display strings.
type Ceilings interface {
	Ceilings(ctx context.Context) (map[string]string, error)
}
