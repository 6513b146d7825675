// Package result holds the value types a sweep produces and the store
// persists: provenance, cells, and per-candidate outcomes (successes and
// failures alike — a failure is a value with a Status, never a panic).
package result

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"
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
	Backend    string `json:"backend"`
	Device     string `json:"device"`
	Arch       string `json:"arch"`
	Compiler   string `json:"compiler"`
	Flags      string `json:"flags"`
	Driver     string `json:"driver"`
	Family     string `json:"family"`
	SourceHash string `json:"source_hash"` // hex sha256 of the family source
	OutF16     bool   `json:"out_f16"`
}

// Key is a short stable hash of p (16 hex digits).
func (p Provenance) Key() string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00%s\x00%s\x00%s\x00%s\x00%s\x00%v",
		p.Backend, p.Device, p.Arch, p.Compiler, p.Flags, p.Driver, p.Family, p.SourceHash, p.OutF16)
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// SourceHash is the hex sha256 of a source text.
func SourceHash(src string) string {
	s := sha256.Sum256([]byte(src))
	return hex.EncodeToString(s[:])
}

// Cell is one shape at one token count M: Y[M,N] = X[M,K]·W[N,K]ᵀ, called
// Calls times per chunk.
type Cell struct {
	Shape string `json:"shape"`
	N     int    `json:"n"`
	K     int    `json:"k"`
	M     int    `json:"m"`
	Calls int    `json:"calls"`
}

// FLOPs is 2·M·N·K.
func (c Cell) FLOPs() float64 { return 2 * float64(c.M) * float64(c.N) * float64(c.K) }

// Candidate is one candidate's outcome in a cell.
type Candidate struct {
	Tile   string `json:"tile"`
	Params string `json:"params,omitempty"` // kernel.Params.String(); "" for vendors
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
}

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
}

// Find returns the candidate named tile, or nil.
func (c *CellResult) Find(tile string) *Candidate {
	for i := range c.Candidates {
		if c.Candidates[i].Tile == tile {
			return &c.Candidates[i]
		}
	}
	return nil
}
