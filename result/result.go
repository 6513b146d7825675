// Package result holds the value types a sweep produces and the store
// persists: provenance, cells, and per-candidate outcomes (successes and
// failures alike — a failure is a value with a Status, never a panic).
package result

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tilefit/tilefit/kernel"
)

// Status is a candidate's outcome in one cell.
type Status string

// The statuses. Only OK candidates are timed.
const (
	OK Status = "ok"
	// CompileFailed: the compiler rejected the candidate (Detail: log).
	CompileFailed Status = "compile"
	// ParityFailed: output not bitwise equal to the reference tile, or two
	// runs differed (Detail: first differing index, expected, actual).
	ParityFailed Status = "parity"
	// NumericFailed: an element unwritten, NaN, outside the error bound
	// against the float64 reference, or a write outside the output.
	NumericFailed Status = "numeric"
	// Crashed: the worker process died (Detail: signal or driver error).
	Crashed Status = "crashed"
	// Timeout: the launch watchdog expired.
	Timeout Status = "timeout"
	// Skipped: not run (e.g. failed twice before).
	Skipped Status = "skipped"
)

// Provenance is everything that produced a result; Key hashes it.
type Provenance struct {
	Backend  string `json:"backend"`
	Device   string `json:"device"`
	Arch     string `json:"arch"`
	Compiler string `json:"compiler"`
	Flags    string `json:"flags"`
	Driver   string `json:"driver"`
	// Family is the family of the cell's candidates, or several joined by
	// "," when a cell holds candidates of several families of the operator.
	Family     string `json:"family"`
	SourceHash string `json:"source_hash"` // hex sha256 of the family source (sources, in Family order)
	// Operator is the operator the cells compute, e.g. "gemm_f16".
	Operator string `json:"operator"`
	// Types are the operator's operand element types,
	// "X=f16,W=f16,Y=f32" (kernel.Operator.Types).
	Types string `json:"types"`
	// Legacy marks a provenance stored before operators (schema 1): its
	// Key is the one computed then (from the fp16-output flag).
	Legacy bool `json:"legacy,omitempty"`
}

// OutF16 reports whether operand Y is fp16 (gemm_f16's output choice).
func (p Provenance) OutF16() bool { return strings.Contains(","+p.Types+",", ",Y=f16,") }

// Key is a short stable hash of p (16 hex digits). Provenance written before
// operators existed (tilefit ≤ schema 1) kept the key computed then.
func (p Provenance) Key() string {
	h := sha256.New()
	if p.Legacy {
		fmt.Fprintf(h, "%s\x00%s\x00%s\x00%s\x00%s\x00%s\x00%s\x00%s\x00%v",
			p.Backend, p.Device, p.Arch, p.Compiler, p.Flags, p.Driver, p.Family, p.SourceHash, p.OutF16())
		return hex.EncodeToString(h.Sum(nil))[:16]
	}
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00%s\x00%s\x00%s\x00%s\x00%s\x00op %s\x00%s",
		p.Backend, p.Device, p.Arch, p.Compiler, p.Flags, p.Driver, p.Family, p.SourceHash, p.Operator, p.Types)
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// SourceHash is the hex sha256 of a source text.
func SourceHash(src string) string {
	s := sha256.Sum256([]byte(src))
	return hex.EncodeToString(s[:])
}

// Cell is one shape of an operator at one token count M, called Calls times
// per chunk. Dims holds every dimension (M included); N and K repeat the
// gemm-like dimensions (0 when the operator has none) for displays and
// selectors. Flop and Bytes are the operator's counts for one call (its
// FLOPs and MovedBytes on Dims), recorded so that GFLOP/s, GB/s and
// roofline floors need no operator to compute.
type Cell struct {
	Shape string      `json:"shape"`
	Op    string      `json:"op,omitempty"`
	Dims  kernel.Dims `json:"dims,omitempty"`
	N     int         `json:"n"`
	K     int         `json:"k"`
	M     int         `json:"m"`
	Calls int         `json:"calls"`
	Flop  float64     `json:"flop,omitempty"`
	Bytes float64     `json:"bytes,omitempty"`
}

// A Missing is a cell of a sweep's plan that could not be measured, and
// why (the last failure of its executor or worker).
type Missing struct {
	Cell Cell
	Why  string
}

// NewCell makes the cell of shape name of operator op on dims d (M among
// them), with op's counts.
func NewCell(name string, op *kernel.Operator, d kernel.Dims, calls int) Cell {
	return Cell{Shape: name, Op: op.Name, Dims: d, N: d["N"], K: d["K"], M: d["M"], Calls: calls,
		Flop: op.FLOPs(d), Bytes: op.MovedBytes(d)}
}

// FLOPs is the floating-point operations of one call (the operator's
// count; 2·M·N·K for a cell recorded without one).
func (c Cell) FLOPs() float64 {
	if c.Flop > 0 {
		return c.Flop
	}
	return 2 * float64(c.M) * float64(c.N) * float64(c.K)
}

// DimsOrGemm returns c.Dims, or M, N, K for a cell recorded without them.
func (c Cell) DimsOrGemm() kernel.Dims {
	if len(c.Dims) > 0 {
		return c.Dims
	}
	return kernel.Dims{"M": c.M, "N": c.N, "K": c.K}
}

// Candidate is one candidate's outcome in a cell.
type Candidate struct {
	// Tile is the display name: the tile name, prefixed "family/" when the
	// cell holds candidates of several families and this one is not the
	// first's; or the vendor baseline's name.
	Tile string `json:"tile"`
	// Family is the candidate's family ("" for vendor baselines).
	Family string `json:"family,omitempty"`
	Params string `json:"params,omitempty"` // kernel.Params.String(); "" for vendors
	// Class is the candidate's numerics class (its family's Numerics of
	// its parameters) as the sweep recorded it: tiles of one class must be
	// bitwise equal. "" for vendor baselines and for candidates stored
	// before the store kept classes (readers then derive it, see
	// tune.FillClasses).
	Class  string `json:"class,omitempty"`
	Vendor bool   `json:"vendor,omitempty"`
	// AA marks the A/A twin of the reference tile (same kernel timed as a
	// second candidate, to calibrate the noise floor).
	AA     bool   `json:"aa,omitempty"`
	Status Status `json:"status"`
	Detail string `json:"detail,omitempty"`
	// Bitwise: output bitwise equal to the reference tile's.
	Bitwise bool `json:"bitwise"`
	// MaxErr is max |y−ref| / bound over the checked elements (pass ≤ 1).
	MaxErr float64 `json:"max_err"`
	// CompileSeconds is the compile time (0 when cached).
	CompileSeconds float64 `json:"compile_seconds"`
	// Dispatches is D, the back-to-back dispatches per sample.
	Dispatches int `json:"dispatches"`
	// Samples holds µs per call, one per round, in round order; sample i of
	// every candidate of the cell comes from the same round (paired).
	Samples []float64 `json:"samples_us"`
	// LeftAt is, for a candidate the race took out of the timing rounds
	// (measure.Options.Race: confirmed slower than the cell's best tile by
	// the race margin), the pairs after which it left — its Samples are
	// that prefix; 0 for a candidate timed to the end.
	LeftAt int `json:"left_at,omitempty"`
	// Resources are what the backend reports of the loaded kernel, keyed
	// by the Res* names (registers per thread, local bytes per thread,
	// shared memory per block); nil when the backend does not know them.
	Resources map[string]int `json:"resources,omitempty"`
	// Rows holds, for a candidate that passed verification, the row hashes
	// of every output operand whose leading dimension is M (in operand
	// order): what the batch-invariance check compares across the M cells
	// of a shape. Nil for other candidates and cells stored before
	// schema 3.
	Rows []RowHashes `json:"rows,omitempty"`
}

// Resource names of Candidate.Resources.
const (
	// ResRegs is the registers per thread of the first compiled launch.
	ResRegs = "regs"
	// ResLocalBytes is the local memory per thread (register spills and
	// local arrays) of the first compiled launch.
	ResLocalBytes = "local_bytes"
	// ResSharedBytes is the largest dynamic shared memory per block of any
	// launch.
	ResSharedBytes = "smem_bytes"
)

// CellResult is one measured cell.
type CellResult struct {
	Prov       Provenance  `json:"provenance"`
	Cell       Cell        `json:"cell"`
	Reference  string      `json:"reference"`
	Seed       uint64      `json:"seed"`
	Rounds     int         `json:"rounds"`
	Sets       int         `json:"sets"`
	Started    time.Time   `json:"started"`
	Finished   time.Time   `json:"finished"`
	Candidates []Candidate `json:"candidates"`
	// Clocks optionally holds per-round device readings ("sm_mhz=1980 temp_c=41").
	Clocks []string `json:"clocks,omitempty"`
	// InputKey identifies the inputs that do not lead with M (a hash of
	// their bytes, verify.InputRows) and InputRows holds one hash per row
	// over the inputs that do: two cells of a shape are compared row by row
	// only when their keys are equal and their input rows agree on the
	// common prefix (the smaller M's inputs are a prefix of the larger's).
	// Empty for cells stored before schema 3.
	InputKey  string `json:"input_key,omitempty"`
	InputRows Hashes `json:"input_rows,omitempty"`
	// DeviceID names the physical device that measured the cell (a CUDA
	// device's UUID, "GPU-…"; the CPU backend's host); "" when not
	// recorded. It is not part of the provenance: devices of one model
	// share a provenance, and their cells merge into one report. Every
	// candidate of a cell ran on this one device.
	DeviceID string `json:"device_id,omitempty"`
	// Phases is where the cell's wall time went, in order ("inputs 0.4s,
	// load 0.1s, verify 1.2s, time 0.8s"): shown in the sweep's progress
	// lines, not stored.
	Phases string `json:"phases,omitempty"`
	// Warnings are problems of the cell that failed no candidate (no exact
	// check for the operator, a vendor off the exact answer): printed by
	// the sweep, not stored.
	Warnings []string `json:"warnings,omitempty"`
}

// ErrLeaseLost is returned when a worker no longer holds the lease of a
// cell it claimed (it expired and another worker took the cell): the cell's
// result is not saved by this worker.
var ErrLeaseLost = errors.New("the lease on the cell was lost (it expired and another worker took the cell)")

// Find returns the candidate named tile, or nil.
func (c *CellResult) Find(tile string) *Candidate {
	for i := range c.Candidates {
		if c.Candidates[i].Tile == tile {
			return &c.Candidates[i]
		}
	}
	return nil
}

// A DeviceRecord holds measured facts about a device, e.g. ceilings such as
// "copy_gbps" or "vendor_tflops", keyed by backend and device name.
type DeviceRecord struct {
	Backend  string
	Name     string
	Props    map[string]string
	Measured time.Time
}
