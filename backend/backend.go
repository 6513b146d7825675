// Package backend defines the small interface every device backend (cpu,
// cuda) implements, and the value types that cross it.
//
// The flow for one cell (an operator on fixed dimensions): Compile turns a
// Program (family source + -D defines) into an Artifact on disk; Load makes a
// Kernel of it and the family's Plan (the launch list: entries, grid, block,
// shared memory, cluster, kernel parameters); NewProblem allocates the
// operator's operands (from their shapes and element types), uploads the
// input sets and guards the outputs; Problem.Run runs a kernel once on
// poisoned outputs and returns every output operand; Problem.Time times
// back-to-back calls. A backend knows no family: it builds what the Plan
// asks for.
package backend

import (
	"context"
	"fmt"
	"time"

	"github.com/tilefit/tilefit/kernel"
)

// Device describes the device and toolchain that produce a result; every
// field but UUID, Memory and Props is part of a result's provenance.
type Device struct {
	Backend  string // "cpu" or "cuda"
	Name     string // e.g. "AMD EPYC (2 cores)", "NVIDIA H200"
	Arch     string // e.g. "x86_64 avx2 fma f16c", "sm_90a"
	Compiler string // compiler and version, e.g. "cc (Debian 12.2.0) 12.2.0", "nvrtc 13.0"
	Flags    string // compile flags
	Driver   string // driver version ("" on the CPU)
	Memory   int64  // bytes of device memory usable for buffers
	// UUID names the physical device ("GPU-8f0c…" for CUDA, as nvidia-smi
	// prints it; "cpu:HOST" for the CPU backend). It is recorded with each
	// result but is not part of the provenance: devices of one model share
	// a provenance, so their cells merge into one report.
	UUID string
	// Ordinal is the device's number in its backend (CUDA's device ordinal;
	// 0 on the CPU).
	Ordinal int
	// Count is how many devices the backend sees (the CUDA devices of the
	// host; 1 on the CPU), for --devices all.
	Count int
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

// A Kernel is a loaded candidate ready to dispatch: a family tile or a
// vendor baseline, with the launch list (kernel.Plan) it runs per call.
type Kernel interface {
	// Name is the tile name or vendor name.
	Name() string
	Close() error
}

// A Problem holds one cell's device buffers for an operator on fixed
// dimensions: Sets() input sets (every In operand, as given) and as many
// output sets (every Out operand), each output surrounded by guard regions.
// Scratch buffers a kernel's Plan asks for are allocated on its first
// dispatch (outside any timed region).
type Problem interface {
	Operator() *kernel.Operator
	Dims() kernel.Dims
	// Sets is the number of input/output sets.
	Sets() int
	// Run fills every output operand of set `set` with 0xFF bytes (and its
	// guards with a NaN pattern), runs k's launch list once on input set
	// `set`, waits, checks the guards and returns host copies of the
	// operands: out[i] holds operand i's bytes (little-endian elements of
	// its DType) for every Out operand, nil for inputs. A guard overwritten
	// is a *GuardError.
	Run(ctx context.Context, k Kernel, set int) ([][]byte, error)
	// Time runs k's launch list n times back to back, rotating over the
	// sets starting at set first, and returns the mean time per call.
	Time(ctx context.Context, k Kernel, n, first int) (time.Duration, error)
	Close() error
}

// A GuardError reports a write outside an output operand's buffer.
type GuardError struct {
	Operand string
	Offset  int // element offset relative to the operand's start (negative: before)
}

func (e *GuardError) Error() string {
	return fmt.Sprintf("wrote outside its output %s: guard element at offset %d changed", e.Operand, e.Offset)
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
	// Load makes a Kernel that runs plan (the family's launch list for one
	// cell's dimensions): the entries it names are found in artifact a (a
	// zero Artifact when every launch is a vendor routine). name is the
	// tile or vendor name. A plan the backend cannot run (an unknown vendor
	// routine, a library not installed, a kind of argument it does not
	// support) is an error here.
	Load(ctx context.Context, name string, a Artifact, plan kernel.Plan) (Kernel, error)
	// NewProblem allocates every operand of op on dims d and uploads the
	// input sets: sets[s] holds the In operands' bytes, in Operands order
	// (as op.Inputs returns them).
	NewProblem(ctx context.Context, op *kernel.Operator, d kernel.Dims, sets [][][]byte) (Problem, error)
	Close() error
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
