package tune

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/tilefit/tilefit/internal/input"
	"github.com/tilefit/tilefit/kernel"
	"github.com/tilefit/tilefit/measure"
	"github.com/tilefit/tilefit/workload"
)

// A sweep's configuration is built in three steps, each refusing its own
// bad input in the order a user meets it: SweepOperators (which operators
// of the workload the sweep tunes), OutTypes (--out-type), then, after the
// caller has read the edited source, Configs (one Config per operator).

// SweepOperators returns the operators of w's shapes in order of first
// appearance; with families listed (--family, given as familyFlag), only
// the operators they compute, and an error when they compute none.
func SweepOperators(w workload.Workload, listed []*kernel.Family, familyFlag string) ([]string, error) {
	var ops []string
	for _, s := range w.Shapes {
		if !slices.Contains(ops, s.Operator()) {
			ops = append(ops, s.Operator())
		}
	}
	if len(listed) == 0 {
		return ops, nil
	}
	var keep []string
	for _, op := range ops {
		for _, fam := range listed {
			if fam.Operator.Name == op && !slices.Contains(keep, op) {
				keep = append(keep, op)
			}
		}
	}
	if len(keep) == 0 {
		return nil, fmt.Errorf("--family %s computes none of the workload's operators (%s)", familyFlag, strings.Join(ops, ", "))
	}
	return keep, nil
}

// TileOperators narrows ops (SweepOperators) by --tiles when no --family
// was given: FAMILY/TILE names a tile of one family, which computes one
// operator, so a multi-operator workload (the strata preset: gemm_f16,
// hc_up_f16, swiglu_f16) sweeps each named tile with its own operator —
// Configs routes every tile to the operator whose families include it —
// and, when every tile names its family, only the operators those
// families compute (as --family would). A bare TILE is a tile of each
// operator's first family and keeps every operator. A FAMILY that names no
// family of backend, or one of an operator that is not in the workload, is
// an error that says so.
func TileOperators(reg *kernel.Registry, backend string, ops, tiles []string) ([]string, error) {
	if len(tiles) == 0 {
		return ops, nil
	}
	keep := map[string]bool{}
	bare := false
	for _, t := range tiles {
		fam, _, ok := strings.Cut(t, "/")
		if !ok {
			bare = true
			continue
		}
		f, err := reg.Lookup(backend, fam)
		if err != nil {
			return nil, fmt.Errorf("--tiles %s: %w", t, err)
		}
		if !slices.Contains(ops, f.Operator.Name) {
			return nil, fmt.Errorf("--tiles %s: family %s computes operator %s, which none of the swept shapes uses (%s)", t, fam, f.Operator.Name, strings.Join(ops, ", "))
		}
		keep[f.Operator.Name] = true
	}
	if bare {
		return ops, nil
	}
	var out []string
	for _, op := range ops {
		if keep[op] {
			out = append(out, op)
		}
	}
	return out, nil
}

// operatorTiles is the part of --tiles that belongs to an operator whose
// families are fams: its bare tiles and the FAMILY/TILE ones of its
// families; a FAMILY/TILE of another operator's family (reg knows it on
// backend) is that operator's. What is left for CandidatesOf to refuse (a
// family not registered, or not in this sweep) stays. Tiles given but none
// of them this operator's: an empty, non-nil list (the reference tile and
// the vendors only, never the default sweep).
func operatorTiles(reg *kernel.Registry, backend string, fams []*kernel.Family, tiles []string) []string {
	if tiles == nil {
		return nil
	}
	out := []string{}
	for _, t := range tiles {
		if fam, _, ok := strings.Cut(t, "/"); ok && !slices.ContainsFunc(fams, func(f *kernel.Family) bool { return f.Name == fam }) {
			if f, err := reg.Lookup(backend, fam); err == nil && f.Operator.Name != fams[0].Operator.Name {
				continue
			}
		}
		out = append(out, t)
	}
	return out
}

// OutTypes returns the operand types --out-type out asks for: nil for f32
// (every operator's own types), Y in f16 for f16.
func OutTypes(out string) (map[string]kernel.DType, error) {
	switch out {
	case "f32":
		return nil, nil
	case "f16":
		return map[string]kernel.DType{"Y": kernel.F16}, nil
	}
	return nil, fmt.Errorf("--out-type: want f32 or f16, got %q", out)
}

// ConfigOptions are what a sweep's flags ask for, checked and read: the
// settings every operator's Config shares.
type ConfigOptions struct {
	Backend string
	// Listed are the families --family names (nil: every registered family
	// of each operator on Backend).
	Listed   []*kernel.Family
	Workload workload.Workload
	Tiles    []string
	// OutType is --out-type as given and Types its operand types
	// (OutTypes): applied to the operators that have an output Y.
	OutType string
	Types   map[string]kernel.DType
	// Source is the edited family source ("" none), read from SourceName.
	Source, SourceName string
	// Isolate: candidates run in a worker process, whose messages must
	// hold the source (CheckFrames).
	Isolate                     bool
	Vendor, AA, Race, Laplacian bool
	// ConstWeights: --const-weights (Config.ConstWeights).
	ConstWeights bool
	Seed         uint64
	MaxSamples   int
	Measure      measure.Options
}

// Configs returns one Config per operator of ops (SweepOperators): each
// runs that operator's shapes with its families on the backend (the listed
// ones that compute it, or every registered family of it) and, with
// Vendor, its vendor baselines. note says which operators --out-type
// applied to ("" for f32).
func Configs(reg *kernel.Registry, ops []string, o ConfigOptions) (cfgs []Config, note string, err error) {
	var applied, kept []string // the operators --out-type applies to, and the others
	for _, opName := range ops {
		cfg, ok, err := operatorConfig(reg, opName, o)
		if err != nil {
			return nil, "", err
		}
		if o.Types != nil {
			if ok {
				applied = append(applied, opName)
			} else {
				kept = append(kept, opName+" ("+outputsText(cfg.Families[0].Operator)+")")
			}
		}
		cfgs = append(cfgs, cfg)
	}
	if o.Types == nil {
		return cfgs, "", nil
	}
	if len(applied) == 0 {
		return nil, "", fmt.Errorf("--out-type %s: no operator of the workload has an output operand Y (%s)", o.OutType, strings.Join(kept, "; "))
	}
	note = fmt.Sprintf("--out-type %s: applied to the output Y of %s", o.OutType, strings.Join(applied, ", "))
	if len(kept) > 0 {
		note += "; " + strings.Join(kept, ", ") + plural(len(kept), " has no operand Y and keeps its", " have no operand Y and keep their") + " own output types"
	}
	return cfgs, note, nil
}

// operatorConfig is the Config of operator opName; typed says whether
// o.Types applies to it (it has an output operand Y).
func operatorConfig(reg *kernel.Registry, opName string, o ConfigOptions) (cfg Config, typed bool, err error) {
	var fams []*kernel.Family
	if len(o.Listed) > 0 {
		for _, fam := range o.Listed {
			if fam.Operator.Name == opName {
				fams = append(fams, fam)
			}
		}
	} else {
		fams = reg.Of(o.Backend, opName)
	}
	if len(fams) == 0 {
		return cfg, false, fmt.Errorf("no %s family computes operator %s (of the workload's shapes)", o.Backend, opName)
	}
	cfg = Config{Families: fams, Workload: o.Workload, AA: o.AA, Seed: o.Seed, MaxSamples: o.MaxSamples, Measure: o.Measure, Source: o.Source,
		Laplacian: o.Laplacian, NoRace: !o.Race}
	if o.Source != "" {
		cfg.SourceName = o.SourceName
	}
	if o.Vendor {
		cfg.Baselines = reg.Baselines(o.Backend, opName)
	}
	if o.Types != nil {
		if _, _, ok := fams[0].Operator.Operand("Y"); ok {
			if _, err := fams[0].Operator.Typed(o.Types); err != nil {
				return cfg, false, fmt.Errorf("--out-type: %w", err)
			}
			cfg.Types, typed = o.Types, true
		}
	}
	cfg.Tiles = operatorTiles(reg, o.Backend, fams, o.Tiles)
	cfg.ConstWeights = o.ConstWeights
	cands, err := CandidatesFor(fams, cfg.Tiles, cfg.ConstWeights)
	if err != nil {
		return cfg, false, err
	}
	if o.Source != "" && o.Isolate {
		if err := CheckFrames("--source", o.SourceName, o.Source, len(cands)+2); err != nil {
			return cfg, false, err
		}
	}
	if o.Source != "" && len(fams) > 1 {
		return cfg, false, fmt.Errorf("--source: the edited source replaces one family; name it with --family (operator %s has %d)", opName, len(fams))
	}
	return cfg, typed, nil
}

// outputsText lists an operator's output operands with their types: "h
// f16" or "mixh f16, mixed f32".
func outputsText(op *kernel.Operator) string {
	var parts []string
	for _, o := range op.Operands {
		if o.Dir == kernel.Out {
			parts = append(parts, o.Name+" "+o.DType.String())
		}
	}
	return "outputs " + strings.Join(parts, ", ")
}

// CheckFrames refuses, up front, a source that the worker process could not
// be sent: every candidate's compile request and cell job carries the
// source (JSON-encoded), and one message to the worker holds at most
// MaxFrame bytes. flag and path name the source in the message.
func CheckFrames(flag, path, src string, candidates int) error {
	enc, err := json.Marshal(src)
	if err != nil {
		return fmt.Errorf("%s: %w", flag, err)
	}
	if need := int64(len(enc)) * int64(candidates); need > MaxFrame*9/10 {
		return fmt.Errorf("%s: source file %s is %s (%s as sent to the worker process), and %d candidates take %s, over the worker's %s message limit: pass fewer --tiles or --isolate=false",
			flag, path, input.Bytes(int64(len(src))), input.Bytes(int64(len(enc))), candidates, input.Bytes(need), input.Bytes(MaxFrame))
	}
	return nil
}

// plural is one for n == 1, else many.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
