// Package policy holds tile selection policies: for each shape of a
// workload, a piecewise choice of tile over the token count M ("128_64_4
// below M 1504, else 64_128_4"), the evidence behind every choice, the
// synthesis of a policy from a sweep (Select), its decision table
// (Markdown), and the selector code an engine calls (EmitGo, EmitC,
// EmitJSON).
//
// # File format (version 1)
//
// A policy is a JSON object (docs/ab-select.md has an example):
//
//	version     1
//	family      kernel family, e.g. "gemm_f16"
//	backend     "cpu" or "cuda"
//	provenance  the sweep's provenance key (result.Provenance.Key), "" for
//	            a hand-written policy
//	sweep       the sweep's provenance in full (optional)
//	workload    the workload name (optional)
//	swept       when the last swept cell finished, RFC 3339 (optional)
//	baseline    what the policy departs from, in words
//	default     the tile for shapes without rules ("" = none: Lookup fails)
//	options     how it was selected (require_bitwise, min_gain, ...)
//	shapes      per shape: {shape, n, k, calls, rules: [{tile, below}]}
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

	"github.com/tilefit/tilefit/result"
)

// Version is the policy file format version this package reads and writes.
const Version = 1

// MaxFileBytes is the largest policy file Load accepts (16 MiB).
const MaxFileBytes = 16 << 20

// A Policy picks a tile for every (shape, M) of a family on a backend and
// records why.
type Policy struct {
	Version int    `json:"version"`
	Family  string `json:"family"`
	Backend string `json:"backend"`
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
	// Cells records, for every measured cell, why it got its tile.
	Cells []Decision `json:"cells,omitempty"`
}

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
	Calls int    `json:"calls,omitempty"`
	Rules []Rule `json:"rules"`
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
	// Baseline is the baseline policy's tile for the cell.
	Baseline string `json:"baseline"`
	// Best is the fastest admitted candidate of the sweep ("" if none).
	Best string `json:"best,omitempty"`
	// SweepRatio is median(Best)/median(Baseline) in the sweep: the
	// candidate's apparent gain, biased low by picking the luckiest of many
	// (0 when the baseline was not swept).
	SweepRatio float64 `json:"sweep_ratio,omitempty"`
	// Confirmed: Best was re-measured against Baseline in a fresh paired
	// round; else Ratio..Verdict come from the sweep's own paired samples
	// (or are empty when Best is the baseline).
	Confirmed bool `json:"confirmed"`
	// Ratio is the median per-pair ratio Best/Baseline, [Lo, Hi] its
	// confidence interval, BracketLo/Hi the seeds' brackets.
	Ratio     float64 `json:"ratio,omitempty"`
	Lo        float64 `json:"lo,omitempty"`
	Hi        float64 `json:"hi,omitempty"`
	BracketLo float64 `json:"bracket_lo,omitempty"`
	BracketHi float64 `json:"bracket_hi,omitempty"`
	// Verdict is faster, slower or tie ("" when nothing was compared), or
	// undecided (adaptive rounds whose budget ran out).
	Verdict string `json:"verdict,omitempty"`
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
	Reason   string   `json:"reason"`
	Warnings []string `json:"warnings,omitempty"`
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
	if p.Version != Version {
		add("version %d not supported (this tilefit reads version %d)", p.Version, Version)
	}
	if p.Family == "" {
		add("family missing")
	}
	if p.Backend == "" {
		add("backend missing")
	}
	if p.Default != "" && !safeName(p.Default) {
		add("default: tile %q has characters outside [A-Za-z0-9_.-]", p.Default)
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
			if !safeName(r.Tile) {
				add("%s: tile %q missing or has characters outside [A-Za-z0-9_.-]", rat, r.Tile)
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
