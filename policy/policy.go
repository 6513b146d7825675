// Package policy holds tile selection policies: for each shape of a
// workload, a piecewise choice of tile over the token count M ("128_64_4
// below M 1504, else 64_128_4"), the evidence behind every choice, the
// synthesis of a policy from a sweep (Select), its decision table
// (Markdown), and the selector code an engine calls (EmitGo, EmitC,
// EmitJSON).
//
// # File format (version 2; version 1 files are read too)
//
// A policy is a JSON object (docs/ab-select.md has an example):
//
//	version     2
//	family      kernel family, e.g. "gemm_f16", or the families of a
//	            sweep over several, comma-separated ("gemm_f16,gemm_wgmma";
//	            the first one's tiles are named bare, the others'
//	            "family/tile")
//	backend     "cpu" or "cuda"
//	operator    the operator the tiles compute (optional)
//	dims        the operator's dimensions other than M, in its order
//	            (["N", "K"]): what selectors look a shape up by (optional)
//	provenance  the sweep's provenance key (result.Provenance.Key), "" for
//	            a hand-written policy
//	sweep       the sweep's provenance in full (optional)
//	workload    the workload name (optional)
//	swept       when the last swept cell finished, RFC 3339 (optional)
//	baseline    what the policy departs from, in words
//	default     the tile for shapes without rules ("" = none: Lookup fails)
//	options     how it was selected (require_bitwise, min_gain, ...)
//	shapes      per shape: {shape, n, k, dims, calls, class, rules: [{tile, below}]}
//	tiles       every tile named: {name, family, class, params} (optional)
//	batch_invariance  whether outputs keep their bits whatever M (optional)
//	cells       per measured cell, the Decision that explains its tile
//
// Rules are ordered: the first rule whose "below" is greater than M (or
// that has no "below", which only the last rule may lack) gives the tile.
package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/tilefit/tilefit/kernel"
	"github.com/tilefit/tilefit/result"
	"github.com/tilefit/tilefit/stats"
)

// Version is the policy file format version this package writes; it
// reads versions 1 and 2 (version 2 added operator, dims, tiles, classes
// and batch_invariance, all optional).
const Version = 2

// MaxFileBytes is the largest policy file Load accepts (16 MiB).
const MaxFileBytes = 16 << 20

// A Policy picks a tile for every (shape, M) of a family on a backend and
// records why.
type Policy struct {
	Version int `json:"version"`
	// Family is the family of the tiles, or the families of a sweep over
	// several, comma-separated (the first is the reference family).
	Family  string `json:"family"`
	Backend string `json:"backend"`
	// Operator is the operator the tiles compute ("" when not recorded).
	Operator string `json:"operator,omitempty"`
	// Dims are the operator's dimensions other than M, in its order
	// (["N", "K"]); nil for a policy that does not record them (a shape is
	// then known by N and K).
	Dims []string `json:"dims,omitempty"`
	// Provenance is the key of the sweep the policy was selected from
	// ("" for a hand-written or uniform policy).
	Provenance string `json:"provenance"`
	// Sweep is that sweep's provenance in full.
	Sweep    *result.Provenance `json:"sweep,omitempty"`
	Workload string             `json:"workload,omitempty"`
	// Swept is when the last swept cell finished (RFC 3339, UTC); it is the
	// only time a policy carries, so that generated code is reproducible.
	Swept string `json:"swept,omitempty"`
	// Baseline describes the policy this one departs from.
	Baseline string `json:"baseline"`
	// Default is the tile for shapes without rules; "" means none.
	Default string   `json:"default,omitempty"`
	Options *Options `json:"options,omitempty"`
	Shapes  []Shape  `json:"shapes"`
	// Tiles describes every tile the rules and the default name: family,
	// numerics class and parameters, as the sweep recorded them.
	Tiles []Tile `json:"tiles,omitempty"`
	// Invariance says whether the engine's outputs keep their bits whatever
	// M under this policy, and why (nil: not recorded).
	Invariance *Invariance `json:"batch_invariance,omitempty"`
	// Cells records, for every measured cell, why it got its tile.
	Cells []Decision `json:"cells,omitempty"`
}

// A Tile describes one tile a policy names.
type Tile struct {
	// Name is the tile's name in the rules.
	Name string `json:"name"`
	// Family is the kernel family it is a tile of.
	Family string `json:"family"`
	// Class is its numerics class (kernel.Family.Numerics): tiles of one
	// class compute the same bits.
	Class string `json:"class,omitempty"`
	// Params are its compile-time parameters (kernel.Params).
	Params kernel.Params `json:"params"`
}

// Invariance records whether a policy keeps the engine's outputs
// batch-invariant: the bits of a row do not depend on M. That holds when
// every shape's rules use tiles of one numerics class (parity within a
// class makes them compute the same bits in every cell) and each of those
// tiles computes a row the same whatever M (the sweep's batch-invariance
// check compares every tile's output rows across the M of a shape).
type Invariance struct {
	// BatchInvariant: every shape stays in one class and no tile of its
	// rules failed the check.
	BatchInvariant bool `json:"batch_invariant"`
	// Checked lists the shapes whose tiles' rows the sweep compared across
	// at least two M; Unchecked those it could not (one M swept, or cells
	// stored before row hashes): invariance there rests on the class alone.
	Checked   []string `json:"checked,omitempty"`
	Unchecked []string `json:"unchecked,omitempty"`
	// Excluded lists the tiles left out of a shape because their rows
	// changed with M.
	Excluded []Excluded `json:"excluded,omitempty"`
	// MixedClasses lists shapes whose rules use tiles of several classes
	// (a baseline policy can bring that in); such a shape is not
	// batch-invariant.
	MixedClasses []string `json:"mixed_classes,omitempty"`
}

// An Excluded tile failed the batch-invariance check on a shape.
type Excluded struct {
	Shape  string `json:"shape"`
	Tile   string `json:"tile"`
	Detail string `json:"detail"`
}

// TileInfo returns the description of tile name, or false.
func (p *Policy) TileInfo(name string) (Tile, bool) {
	for _, t := range p.Tiles {
		if t.Name == name {
			return t, true
		}
	}
	return Tile{}, false
}

// Families returns the policy's families (Family split at commas).
func (p *Policy) Families() []string { return strings.Split(p.Family, ",") }

// Options record how a policy was selected.
type Options struct {
	RequireBitwise bool    `json:"require_bitwise"`
	Confirmed      bool    `json:"confirmed"`
	MinGain        float64 `json:"min_gain"`
	MaxRegress     float64 `json:"max_regress"`
	Confidence     float64 `json:"confidence"`
	// MaxRules caps the rules per shape (0: no cap).
	MaxRules int `json:"max_rules,omitempty"`
	// ThresholdRule names the rule that placed thresholds between measured
	// M values ("baseline-keeps-gaps", see ThresholdRule).
	ThresholdRule string `json:"threshold_rule"`
	// Rounds is "auto" when the verdicts come from the sequential rule
	// (adaptive rounds, docs/rounds.md); "" for fixed rounds.
	Rounds string `json:"rounds,omitempty"`
}

// A Shape is one shape's piecewise choice over M.
type Shape struct {
	Shape string `json:"shape"`
	N     int    `json:"n,omitempty"`
	K     int    `json:"k,omitempty"`
	// Dims are the shape's dimensions other than M (N and K included), for
	// operators with more than N and K.
	Dims  kernel.Dims `json:"dims,omitempty"`
	Calls int         `json:"calls,omitempty"`
	// Class is the numerics class of the tiles of its rules ("" when not
	// recorded, or when they mix classes).
	Class string `json:"class,omitempty"`
	Rules []Rule `json:"rules"`
}

// DimsOf returns the shape's size in each of names ("N", "K", …): from
// Dims, else N and K; false when a dimension is unknown.
func (s Shape) DimsOf(names []string) ([]int, bool) {
	out := make([]int, len(names))
	for i, n := range names {
		v, ok := s.Dims[n]
		if !ok {
			switch n {
			case "N":
				v, ok = s.N, s.N > 0
			case "K":
				v, ok = s.K, s.K > 0
			}
		}
		if !ok {
			return nil, false
		}
		out[i] = v
	}
	return out, true
}

// A Rule chooses Tile for M < Below; Below 0 (only on the last rule) means
// every M not taken by an earlier rule.
type Rule struct {
	Tile  string `json:"tile"`
	Below int    `json:"below,omitempty"`
}

// A Decision explains one measured cell's tile. Times are µs per call.
type Decision struct {
	Shape string `json:"shape"`
	N     int    `json:"n"`
	K     int    `json:"k"`
	M     int    `json:"m"`
	Calls int    `json:"calls"`
	// Class is the numerics class of Chosen ("" when not recorded).
	Class string `json:"class,omitempty"`
	// Baseline is the baseline policy's tile for the cell.
	Baseline string `json:"baseline"`
	// Best is the fastest admitted candidate of the sweep ("" if none).
	Best string `json:"best,omitempty"`
	// SweepRatio is Best's ratio to Baseline in the sweep, the median
	// per-round ratio of their paired samples (the report's ratio to the
	// reference; median(Best)/median(Baseline) when they were not timed in
	// the same rounds): the candidate's apparent gain, biased low by
	// picking the luckiest of many (0 when the baseline was not swept).
	SweepRatio float64 `json:"sweep_ratio,omitempty"`
	// Confirmed: Best was re-measured against Baseline in a fresh paired
	// round; else the Outcome comes from the sweep's own paired samples
	// (or is empty when Best is the baseline).
	Confirmed bool `json:"confirmed"`
	// Outcome is Best against Baseline (stats.Compare): the median per-pair
	// ratio Best/Baseline, its interval, the seeds' brackets, the verdict
	// (faster, slower, tie, undecided; "" when nothing was compared), the
	// pairs, and warnings of the comparison and of the decision.
	stats.Outcome
	// Bitwise: Best's output is bitwise equal to the reference tile's (in
	// the sweep) and to the baseline's (in the confirmation).
	Bitwise bool `json:"bitwise"`
	// BaselineUS and BestUS are the medians of BaselineSamples and
	// BestSamples.
	BaselineUS float64 `json:"baseline_us,omitempty"`
	BestUS     float64 `json:"best_us,omitempty"`
	// BaselineSamples and BestSamples are the paired samples the verdict
	// rests on (confirmation, or sweep).
	BaselineSamples []float64 `json:"baseline_samples_us,omitempty"`
	BestSamples     []float64 `json:"best_samples_us,omitempty"`
	// Vendor and VendorUS show the vendor library beside (never chosen).
	Vendor   string  `json:"vendor,omitempty"`
	VendorUS float64 `json:"vendor_us,omitempty"`
	// Chosen is the policy's tile for the cell.
	Chosen string `json:"chosen"`
	// Reason says why, in words.
	Reason string `json:"reason"`
}

// Uniform returns the policy that picks tile for every shape and M, e.g.
// the family's reference tile everywhere (the default baseline).
func Uniform(family, backend, tile string) Policy {
	return Policy{Version: Version, Family: family, Backend: backend, Baseline: "none", Default: tile, Shapes: []Shape{}}
}

// Lookup returns the tile p picks for shape at token count m: the first
// rule of the shape whose Below is 0 or greater than m, or p.Default for a
// shape without rules. ok is false when neither gives a tile.
func (p *Policy) Lookup(shape string, m int) (tile string, ok bool) {
	for i := range p.Shapes {
		s := &p.Shapes[i]
		if s.Shape != shape {
			continue
		}
		for _, r := range s.Rules {
			if r.Below == 0 || m < r.Below {
				return r.Tile, true
			}
		}
		return "", false
	}
	if p.Default != "" {
		return p.Default, true
	}
	return "", false
}

// Shape returns the rules of shape, or nil.
func (p *Policy) Shape(shape string) *Shape {
	for i := range p.Shapes {
		if p.Shapes[i].Shape == shape {
			return &p.Shapes[i]
		}
	}
	return nil
}

// Validate checks p: the version, the family and backend, names made of
// letters, digits and "_.-" (so that generated code needs no escaping
// beyond quotes), unique shapes, and rules whose thresholds increase
// strictly and whose last rule (only) has no threshold.
func (p *Policy) Validate() error {
	var probs []string
	add := func(format string, a ...any) { probs = append(probs, fmt.Sprintf(format, a...)) }
	if p.Version != 1 && p.Version != Version {
		add("version %d not supported (this tilefit reads versions 1 and %d)", p.Version, Version)
	}
	if p.Family == "" {
		add("family missing")
	}
	if p.Backend == "" {
		add("backend missing")
	}
	if p.Default != "" && !safeTile(p.Default) {
		add("default: tile %q has characters outside [A-Za-z0-9_.-/]", p.Default)
	}
	tiles := map[string]bool{}
	for i, t := range p.Tiles {
		if !safeTile(t.Name) {
			add("tiles[%d]: tile %q missing or has characters outside [A-Za-z0-9_.-/]", i, t.Name)
		}
		if tiles[t.Name] {
			add("tiles[%d]: tile %q described twice", i, t.Name)
		}
		tiles[t.Name] = true
		for k := range t.Params {
			if !cIdent(k) {
				add("tiles[%d] (%s): parameter %q is not an identifier", i, t.Name, k)
			}
		}
	}
	described := func(name string) bool { return len(p.Tiles) == 0 || tiles[name] }
	if p.Default != "" && !described(p.Default) {
		add("default: tile %q is not described in tiles", p.Default)
	}
	for i, d := range p.Dims {
		if !safeName(d) || d == "M" {
			add("dims[%d]: %q is not a dimension name other than M", i, d)
		}
	}
	seen := map[string]bool{}
	for i, s := range p.Shapes {
		at := fmt.Sprintf("shapes[%d]", i)
		switch {
		case s.Shape == "":
			add("%s: shape name missing", at)
		case !safeName(s.Shape):
			add("%s: shape %q has characters outside [A-Za-z0-9_.-]", at, s.Shape)
		case seen[s.Shape]:
			add("%s: shape %q appears twice", at, s.Shape)
		}
		seen[s.Shape] = true
		if len(s.Rules) == 0 {
			add("%s (%s): no rules", at, s.Shape)
		}
		prev := 0
		for j, r := range s.Rules {
			rat := fmt.Sprintf("%s (%s).rules[%d]", at, s.Shape, j)
			if !safeTile(r.Tile) {
				add("%s: tile %q missing or has characters outside [A-Za-z0-9_.-/]", rat, r.Tile)
			}
			if !described(r.Tile) {
				add("%s: tile %q is not described in tiles", rat, r.Tile)
			}
			last := j == len(s.Rules)-1
			switch {
			case last && r.Below != 0:
				add("%s: the last rule must have no \"below\" (it covers every larger M)", rat)
			case !last && r.Below <= prev:
				add("%s: \"below\" %d must be > %d (thresholds increase; only the last rule has none)", rat, r.Below, prev)
			}
			if !last {
				prev = r.Below
			}
		}
	}
	if len(probs) > 0 {
		return errors.New(strings.Join(probs, "; "))
	}
	return nil
}

// cIdent reports whether s is a C (and Go) identifier.
func cIdent(s string) bool {
	for i, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return s != ""
}

// safeTile is safeName allowing one "/" (a tile "family/tile").
func safeTile(s string) bool {
	fam, tile, ok := strings.Cut(s, "/")
	if !ok {
		return safeName(s)
	}
	return safeName(fam) && safeName(tile)
}

func safeName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '.' || r == '-') {
			return false
		}
	}
	return true
}

// Parse decodes and validates a policy file's contents; unknown fields are
// errors (a misspelt "below" must not silently vanish).
func Parse(data []byte) (Policy, error) {
	var p Policy
	data, err := upgradeSweep(data)
	if err != nil {
		return Policy{}, fmt.Errorf("decode: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return Policy{}, fmt.Errorf("decode: %w", err)
	}
	if dec.More() {
		return Policy{}, errors.New("decode: data after the policy object")
	}
	if err := p.Validate(); err != nil {
		return Policy{}, err
	}
	return p, nil
}

// upgradeSweep rewrites the recorded provenance of a policy written before
// operators (its "sweep" has "out_f16" instead of "operator" and "types")
// into today's form: a GEMM's operand types, marked legacy, so that an old
// policy file still loads (its "provenance" key is kept as written).
// Anything else is left for the strict decoder.
func upgradeSweep(data []byte) ([]byte, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil || top["sweep"] == nil {
		return data, nil // the strict decoder reports it
	}
	var sweep map[string]json.RawMessage
	if err := json.Unmarshal(top["sweep"], &sweep); err != nil {
		return data, nil
	}
	raw, ok := sweep["out_f16"]
	if !ok {
		return data, nil
	}
	var f16 bool
	if err := json.Unmarshal(raw, &f16); err != nil {
		return nil, fmt.Errorf("sweep.out_f16: %w", err)
	}
	delete(sweep, "out_f16")
	if _, ok := sweep["types"]; !ok {
		types := "X=f16,W=f16,Y=f32"
		if f16 {
			types = "X=f16,W=f16,Y=f16"
		}
		sweep["types"], _ = json.Marshal(types)
		sweep["operator"], _ = json.Marshal("gemm_f16")
		sweep["legacy"], _ = json.Marshal(true)
	}
	var err error
	if top["sweep"], err = json.Marshal(sweep); err != nil {
		return nil, err
	}
	return json.Marshal(top)
}

// Load reads and validates the policy file at path.
func Load(path string) (Policy, error) {
	f, err := os.Open(path)
	if err != nil {
		return Policy{}, fmt.Errorf("policy: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return Policy{}, fmt.Errorf("policy %s: %w", path, err)
	}
	if len(data) > MaxFileBytes {
		return Policy{}, fmt.Errorf("policy %s: larger than %d bytes", path, MaxFileBytes)
	}
	p, err := Parse(data)
	if err != nil {
		return Policy{}, fmt.Errorf("policy %s: %w", path, err)
	}
	return p, nil
}

// Write writes p as indented JSON with a final newline.
func Write(w io.Writer, p Policy) error {
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return fmt.Errorf("encode policy: %w", err)
	}
	b = append(b, '\n')
	_, err = w.Write(b)
	return err
}

// Save writes p to path (atomically: a temporary file renamed over path).
func Save(path string, p Policy) error {
	var buf bytes.Buffer
	if err := Write(&buf, p); err != nil {
		return err
	}
	return writeFileAtomic(path, buf.Bytes())
}

// writeFileAtomic writes data to a temporary file beside path and renames
// it over path.
func writeFileAtomic(path string, data []byte) error {
	dir, base := filepath.Dir(path), filepath.Base(path)
	f, err := os.CreateTemp(dir, "."+base+".tmp*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Chmod(tmp, 0o644); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
