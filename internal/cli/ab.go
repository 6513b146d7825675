package cli

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/tilefit/tilefit/internal/progress"
	"github.com/tilefit/tilefit/kernel"
	"github.com/tilefit/tilefit/report"
	"github.com/tilefit/tilefit/result"
	"github.com/tilefit/tilefit/stats"
	"github.com/tilefit/tilefit/tune"
)

const abUsage = `Usage: tilefit ab --a SPEC --b SPEC [flags]

Compares two sides, A and B, cell by cell (shape × M of the workload) in
paired interleaved rounds (order ABBA by round, rotating outputs, the same
inputs for both) and gives per cell the median ratio B/A, its interval,
the brackets, a verdict and whether A's and B's outputs are bitwise
identical; then the production-weighted totals Σ calls × µs per chunk for A
and B with the interval of their ratio. With --rounds auto (the default)
rounds are added until the cell's interval clears the ±1% band (faster /
slower) or lies inside it (tie), or the --budget runs out (undecided), with
the false-verdict rate held at 5% over all looks (docs/rounds.md); with
--rounds N, N rounds and a 95% interval (faster / slower; tie only inside the ±1% band, else undecided). A SPEC is

  tile:64_128_2     the family's built-in source at that tile
  policy:FILE       the tile a policy file (tilefit select) picks per cell
  source:FILE       an edited revision of the family source (tilefit
                    families source NAME prints the original); two source
                    sides are compared tile by tile: every tile of the
                    family's sweep, the tiles of --tiles, or --tiles ref (the
                    reference tile only). Against a side with a tile, the
                    source side runs the other side's tile.
  source:FILE@TILE  that revision at that tile: source and tile change
                    together ("old shipped → new shipped", e.g. --a
                    source:old.c@64_128_2 --b source:new.c@32_64_2). A file
                    whose name holds an '@' is taken whole when it exists.

--reverse runs the whole comparison a second time with the sides swapped
(B as A) and reports both runs and, per cell, whether the verdict holds
both ways (a verdict that flips with the sides came from the order, not
the code).

The same SPEC on both sides is an A/A calibration: the report gives this
machine's noise floor (interval half-width) and how many verdicts were
falsely faster or slower. Exits 0 whatever the verdicts, 1 when a cell could not be
compared (a side crashed, hung or failed verification: its status says so); 2 on a bad SPEC or a side
that does not compile. Nothing is stored.
`

func abVerb() verb {
	return verb{name: "ab", summary: "paired A/B of two tiles, policies or source revisions", usage: abUsage,
		run: func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
			fs := newFlags("ab", abUsage, stdout)
			var f sweepFlags
			f.register(newFlagSubset(fs.FlagSet, "vendor", "aa", "source", "db", "check"))
			deprecatedFlag(fs.FlagSet, stderr, "out", "out-type")
			fs.Lookup("tiles").Usage = "with two source: sides, the tiles to compare, comma-separated, or \"ref\" (default: the family's sweep)"
			// A verdict is what ab is for: adaptive rounds by default.
			f.rounds, fs.Lookup("rounds").DefValue = roundsAuto, roundsAuto
			specA := fs.String("a", "", "side A: tile:TILE, policy:FILE, source:FILE or source:FILE@TILE")
			specB := fs.String("b", "", "side B: tile:TILE, policy:FILE, source:FILE or source:FILE@TILE")
			format := fs.String("format", "md", "md or json")
			reverse := fs.Bool("reverse", false, "run the comparison again with the sides swapped and report both, and whether they agree")
			allTiles := fs.Bool("all-tiles", false, "with two source: sides and no --tiles, compare every tile of the family's sweep even when that may take longer than "+progress.Duration(abLongRun))
			if err := parse(fs, args); err != nil {
				return err
			}
			if fs.NArg() > 0 {
				return fmt.Errorf("unexpected arguments %q", fs.Args())
			}
			if *format != "md" && *format != "json" {
				return fmt.Errorf("--format: want md or json, got %q", *format)
			}
			given := f.tiles != ""
			run, cfg, err := abRunOf(ctx, &f, *specA, *specB)
			if err != nil {
				return err
			}
			run.Reverse = *reverse
			if !run.A.Fixed() && !run.B.Fixed() && !given {
				if err := abCost(stderr, run, f.budget, *allTiles); err != nil {
					return err
				}
			}
			ex := f.executor(ctx)
			defer ex.Close()
			if _, err := tune.CheckDevice(ctx, ex, cfg.Workload, registryFrom(ctx)); err != nil {
				return err
			}
			dev, err := ex.Device(ctx)
			if err != nil {
				return err
			}
			run.Device = dev.Name
			var weights []float64
			for range 1 + btoi(run.Reverse) {
				for _, p := range run.Pairs {
					weights = append(weights, progress.CellWeight(p.Cell))
				}
			}
			prog := progress.New(stderr, "ab", weights)
			run.Step = func(what, summary string) { prog.Step(what, summary, false) }
			rep, err := tune.RunAB(ctx, ex, run)
			var ie *tune.ABInterrupted
			if errors.As(err, &ie) {
				fmt.Fprintf(stderr, "\n%v\n", err)
				return &exitError{code: ExitInterrupted, err: errors.New("")}
			}
			if err != nil {
				return err
			}
			if *format == "json" {
				b, err := json.MarshalIndent(rep, "", "  ")
				if err != nil {
					return err
				}
				if _, err = stdout.Write(append(b, '\n')); err != nil {
					return err
				}
			} else if err := report.ABMarkdown(stdout, rep); err != nil {
				return err
			}
			return notMeasuredAB(rep)
		}}
}

// notMeasuredAB is the failure of a comparison with cells it could not
// measure (a side crashed, hung or failed verification: the table's status
// says which), nil when every cell was compared.
func notMeasuredAB(rep result.ABReport) error {
	var missing []string
	for _, r := range []*result.ABReport{&rep, rep.Reversed} {
		if r == nil {
			continue
		}
		for _, c := range r.Cells {
			if c.Status != "ok" {
				missing = append(missing, fmt.Sprintf("%s M=%d: %s", c.Shape, c.M, c.Status))
			}
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return failuresError("%d cells were not compared: %s", len(missing), strings.Join(missing, "; "))
}

// abLongRun is the longest an A/B of two source revisions over every tile
// may take at most before it needs --all-tiles.
const abLongRun = 30 * time.Minute

// abCost says up front what an A/B of two source revisions over every tile
// of the family's sweep (no --tiles) costs at most — every pair of tiles
// and cells timed until its comparison decides or the per-cell --budget
// runs out — and refuses it when that exceeds abLongRun unless allTiles.
func abCost(stderr io.Writer, run tune.ABRun, budget time.Duration, allTiles bool) error {
	pairs := len(run.Pairs) * (1 + btoi(run.Reverse))
	worst := time.Duration(pairs) * budget
	tiles := map[string]bool{}
	cells := map[string]bool{}
	for _, p := range run.Pairs {
		tiles[p.TileA.Name] = true
		cells[fmt.Sprintf("%s/%d", p.Cell.Shape, p.Cell.M)] = true
	}
	what := fmt.Sprintf("%d %s × %d %s = %d paired %s", len(tiles), plural(len(tiles), "tile", "tiles"), len(cells), plural(len(cells), "cell", "cells"),
		pairs, plural(pairs, "comparison", "comparisons"))
	fmt.Fprintf(stderr, "ab: two source revisions over every tile of the family's sweep: %s, each up to the --budget %s of rounds: up to %s (name tiles with --tiles, or --tiles ref for the reference tile only)\n",
		what, progress.Duration(budget), progress.Duration(worst))
	if worst > abLongRun && !allTiles {
		return fmt.Errorf("two source: sides without --tiles compare %s, up to %s at --budget %s: name the tiles to compare with --tiles (--tiles ref: the reference tile), or give --all-tiles to run them all",
			what, progress.Duration(worst), progress.Duration(budget))
	}
	return nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// abRunOf turns ab's flags and sides into the comparison to run: the
// operator's families and cells, the sides parsed, the pairs of tiles.
func abRunOf(ctx context.Context, f *sweepFlags, specA, specB string) (tune.ABRun, tune.Config, error) {
	refOnly := f.tiles == "ref"
	if refOnly {
		f.tiles = ""
	}
	cfg, err := f.config(ctx, registryFrom(ctx))
	if err != nil {
		return tune.ABRun{}, cfg, err
	}
	fam := cfg.Families[0] // the reference family of the operator (or the first of --family)
	a, err := parseABSpec(ctx, "--a", specA, cfg.Families, f.backend)
	if err != nil {
		return tune.ABRun{}, cfg, err
	}
	b, err := parseABSpec(ctx, "--b", specB, cfg.Families, f.backend)
	if err != nil {
		return tune.ABRun{}, cfg, err
	}
	bothSource := !a.Fixed() && !b.Fixed()
	if (f.tiles != "" || refOnly) && !bothSource {
		return tune.ABRun{}, cfg, errors.New("--tiles applies only when both sides are source: specs without a tile (source:FILE)")
	}
	// Two source sides: the tiles of the edited family, parsed once.
	var tiles []tune.TileRef
	names := fam.Tiles()
	switch {
	case refOnly:
		names = []string{fam.Reference}
	case cfg.Tiles != nil:
		names = cfg.Tiles
	}
	for _, n := range names {
		t, err := tune.ResolveTile([]*kernel.Family{fam}, n)
		if err != nil {
			return tune.ABRun{}, cfg, fmt.Errorf("--tiles: %w", err)
		}
		if !slices.ContainsFunc(tiles, func(u tune.TileRef) bool { return u.Name == t.Name }) {
			tiles = append(tiles, t)
		}
	}
	op, err := fam.Operator.Typed(cfg.Types)
	if err != nil {
		return tune.ABRun{}, cfg, err
	}
	cells, err := tune.CellsOf(cfg.Workload, op)
	if err != nil {
		return tune.ABRun{}, cfg, err
	}
	return tune.ABRun{A: a, B: b, Family: fam, Pairs: tune.ABPairs(a, b, cfg.Families, cells, tiles),
		Options:    tune.ABOptions{Seed: cfg.Seed, Types: cfg.Types, Measure: cfg.Measure, MaxSamples: cfg.MaxSamples},
		Stats:      stats.DefaultOptions(),
		Sequential: sequentialOf(cfg.Measure),
		Backend:    f.backend, Workload: cfg.Workload.Name, Ms: cfg.Workload.Ms}, cfg, nil
}

// parseABSpec parses SPEC (see abUsage) for the families fams of an
// operator (fams[0] first: its tiles are named bare, others "family/tile").
func parseABSpec(ctx context.Context, flagName, s string, fams []*kernel.Family, be string) (tune.ABSpec, error) {
	kind, arg, ok := strings.Cut(s, ":")
	if s == "" {
		return tune.ABSpec{}, fmt.Errorf("%s: missing; want tile:TILE, policy:FILE or source:FILE[@TILE]", flagName)
	}
	if !ok || arg == "" {
		return tune.ABSpec{}, fmt.Errorf("%s %q: want tile:TILE, policy:FILE or source:FILE[@TILE]", flagName, s)
	}
	sp := tune.ABSpec{Raw: s, Kind: kind}
	switch kind {
	case tune.ABTile:
		t, err := tune.ResolveTile(fams, arg)
		if err != nil {
			return sp, fmt.Errorf("%s: %w", flagName, err)
		}
		sp.Tile = t
		sp.Key = "tile:" + t.Name
	case tune.ABPolicy:
		p, data, err := readPolicy(ctx, arg)
		if err != nil {
			return sp, fmt.Errorf("%s: %w", flagName, err)
		}
		if err := tune.CheckPolicyFamilies(p, fams, be); err != nil {
			return sp, fmt.Errorf("%s: policy %s %w", flagName, arg, err)
		}
		tiles, err := tune.PolicyTiles(p, fams)
		if err != nil {
			return sp, fmt.Errorf("%s: policy %s: %w", flagName, arg, err)
		}
		sp.Policy, sp.Tiles = &p, tiles
		sp.Key = "policy:" + hashOf(data)
	case tune.ABSource:
		file, tile, err := splitSourceTile(flagName, arg, fams)
		if err != nil {
			return sp, err
		}
		src, err := readSource(ctx, flagName, file)
		if err != nil {
			return sp, err
		}
		sp.Source, sp.Tile = src, tile
		sp.Key = "source:" + hashOf([]byte(src)) + "@" + tile.Name
	default:
		return sp, fmt.Errorf("%s %q: unknown kind %q; want tile:TILE, policy:FILE or source:FILE[@TILE]", flagName, s, kind)
	}
	return sp, nil
}

func hashOf(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// splitSourceTile splits the argument of a source: spec, FILE or
// FILE@TILE ("old shipped → new shipped": a revision and its tile), at the
// last '@'. A file whose own name holds an '@' is taken whole when it
// exists; otherwise the part after the '@' must be a tile of fams (see
// tune.ResolveTile).
func splitSourceTile(flagName, arg string, fams []*kernel.Family) (file string, tile tune.TileRef, err error) {
	i := strings.LastIndex(arg, "@")
	if i < 0 {
		return arg, tune.TileRef{}, nil
	}
	if _, err := os.Stat(arg); err == nil {
		return arg, tune.TileRef{}, nil
	}
	file, t := arg[:i], arg[i+1:]
	if file == "" || t == "" {
		return "", tune.TileRef{}, fmt.Errorf("%s source:%s: want source:FILE or source:FILE@TILE", flagName, arg)
	}
	if tile, err = tune.ResolveTile(fams, t); err != nil {
		return "", tune.TileRef{}, fmt.Errorf("%s source:%s: %w", flagName, arg, err)
	}
	return file, tile, nil
}
