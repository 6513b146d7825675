// Package tune runs a plan of cells: compile every candidate, verify each
// against the reference tile and a float64 reference, time the survivors
// with the paired protocol, and store each finished cell in its own
// transaction. Candidates run in a worker process (see Worker) so that a
// crash or a hang costs only that candidate; failures are values.
package tune

import (
	"context"
	"fmt"
	"time"

	"github.com/tilefit/tilefit/backend"
	"github.com/tilefit/tilefit/kernel"
	"github.com/tilefit/tilefit/measure"
	"github.com/tilefit/tilefit/result"
)

// A JobCandidate is one candidate of a CellJob. A non-empty Status marks a
// candidate that already failed (at compile time, or by crashing in an
// earlier attempt); it is reported as is and not run.
type JobCandidate struct {
	// Tile is the display name (see result.Candidate.Tile).
	Tile   string `json:"tile"`
	Family string `json:"family,omitempty"`
	// Params is the tile's assignment, parsed once (CandidatesOf, ABCell)
	// and carried as such; nil for a vendor baseline.
	Params kernel.Params `json:"params,omitempty"`
	Vendor bool          `json:"vendor,omitempty"`
	AA     bool          `json:"aa,omitempty"`
	// FromSpace marks a tile of its family's default sweep (not named by
	// --tiles, not the reference): the sweep leaves it out of the cells of
	// a shape the family says it does not fit (kernel.Family.Fits).
	FromSpace bool `json:"-"`
	// Class is the numerics class (kernel.Family.Numerics): candidates of
	// one class must be bitwise equal on every output.
	Class    string           `json:"class,omitempty"`
	Program  backend.Program  `json:"program"`
	Artifact backend.Artifact `json:"artifact"`
	// Plan is the launch list on the cell's dims (made by the parent: the
	// family owns its launch).
	Plan kernel.Plan `json:"plan"`
	// Present lists, per operand, whether it exists for this candidate
	// (kernel.Operand.When); nil means every operand.
	Present []bool `json:"present,omitempty"`
	// F16Intermediate marks a vendor baseline that keeps its GEMM results
	// in fp16 between kernels (kernel.Baseline.F16Intermediate): it is
	// checked against the operator's unfused bound (Operator.Unfused).
	F16Intermediate bool          `json:"f16_intermediate,omitempty"`
	Status          result.Status `json:"status,omitempty"`
	Detail          string        `json:"detail,omitempty"`
	// CompileSeconds is carried into the result.
	CompileSeconds float64 `json:"compile_seconds,omitempty"`
}

// A CellJob is everything needed to run one cell.
type CellJob struct {
	Cell      result.Cell `json:"cell"`
	Reference string      `json:"reference"`
	Seed      uint64      `json:"seed"`
	// Operator and Types name the operator and its operand types
	// (kernel.Operator.Types); the executor resolves them in its registry.
	Operator   string          `json:"operator"`
	Types      string          `json:"types"`
	Candidates []JobCandidate  `json:"candidates"`
	Measure    measure.Options `json:"measure"`
	// MaxSamples bounds the elements checked against the float64
	// reference (see verify.Check).
	MaxSamples int `json:"max_samples"`
	// MaxSets caps the rotating input/output sets.
	MaxSets int `json:"max_sets"`
	// MemBudget caps the bytes of all sets together (0: device memory/2).
	MemBudget int64 `json:"mem_budget"`
	// AllowDiff records a bitwise difference from the reference without
	// failing the candidate (A/B of source revisions: did the numerics
	// change?); numerical checks still apply.
	AllowDiff bool `json:"allow_diff,omitempty"`
	// Laplacian runs the Laplacian known-answer check after verification
	// (square cells of a plain GEMM operator; see laplacianCheck).
	Laplacian bool `json:"laplacian,omitempty"`
	// Trace adds the verify and time phases' parts to the cell's phases
	// (sweep --trace): "verify/keep", "verify/diff", "verify/numeric",
	// "verify/hash", "time/warmup", "time/gpu" (the timed dispatches' own
	// time: the rest of the phase is the host's).
	Trace bool `json:"trace,omitempty"`
}

// An Event reports progress from inside a cell, so that a parent process can
// run a watchdog and know which candidate was running when a worker died.
type Event struct {
	// Cand is the index in CellJob.Candidates; -1 for the cell's own
	// steps (phase "inputs": drawing the input sets and allocating them).
	Cand int `json:"cand"`
	// Phase is "inputs", "load", "verify" or "time".
	Phase string `json:"phase"`
	// Expect is the expected duration of the step (0 when unknown).
	Expect time.Duration `json:"expect"`
}

// A CandidateFailure is returned when a candidate's failure leaves the
// device in an unknown state (a crash, a hang, a device error): the cell is
// run again without it, after the device (or worker) is restarted.
type CandidateFailure struct {
	Cand   int
	Status result.Status
	Detail string
}

func (e *CandidateFailure) Error() string {
	return fmt.Sprintf("candidate %d %s: %s", e.Cand, e.Status, e.Detail)
}

// CompileResult is the outcome of compiling one Program.
type CompileResult struct {
	Artifact backend.Artifact `json:"artifact"`
	// Err is the failure ("" on success); Log the compiler output.
	Err string `json:"err,omitempty"`
	Log string `json:"log,omitempty"`
}

// An Executor runs the device-side steps, in this process (Local) or in a
// worker process (Worker).
type Executor interface {
	Device(ctx context.Context) (backend.Device, error)
	Compile(ctx context.Context, progs []backend.Program) ([]CompileResult, error)
	// RunCell runs one cell; candidates that crash or hang come back with
	// their Status set, and the rest of the cell still runs.
	RunCell(ctx context.Context, job CellJob) (result.CellResult, error)
	Close() error
}

// resolveOperator finds job's operator in reg with its operand types.
func resolveOperator(reg *kernel.Registry, job CellJob) (*kernel.Operator, error) {
	op, err := reg.Operator(job.Operator)
	if err != nil {
		return nil, err
	}
	types, err := parseTypesFull(job.Types)
	if err != nil {
		return nil, err
	}
	// Only operands with a choice of types are set; the rest must match.
	choose := map[string]kernel.DType{}
	for name, t := range types {
		o, _, ok := op.Operand(name)
		if !ok {
			return nil, fmt.Errorf("operator %s has no operand %s", op.Name, name)
		}
		if len(o.DTypes) > 0 {
			choose[name] = t
		} else if o.DType != t {
			return nil, fmt.Errorf("operand %s of %s is %s, the job says %s", name, op.Name, o.DType, t)
		}
	}
	return op.Typed(choose)
}

func parseTypesFull(s string) (map[string]kernel.DType, error) { return kernel.ParseTypes(s) }
