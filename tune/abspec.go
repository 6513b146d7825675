package tune

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/tilefit/tilefit/internal/input"
	"github.com/tilefit/tilefit/internal/progress"
	"github.com/tilefit/tilefit/kernel"
	"github.com/tilefit/tilefit/policy"
	"github.com/tilefit/tilefit/stats"
)

// MaxSourceBytes is the largest kernel source file tilefit reads (--source,
// source: specs). The built-in sources are about 15 KiB.
const MaxSourceBytes = 1 << 20

// ReadSource reads an edited family source named by flag (e.g. "--source",
// "--a"): a regular file of at most MaxSourceBytes that holds more than
// white space. Every verb refuses the same files with the same messages.
func ReadSource(ctx context.Context, flag, path string) (string, error) {
	b, err := input.ReadFile(ctx, path, input.File{What: "source file", Limit: MaxSourceBytes, Text: true})
	if err != nil {
		return "", fmt.Errorf("%s: %w", flag, err)
	}
	if strings.TrimSpace(string(b)) == "" {
		return "", fmt.Errorf("%s: source file %s is empty", flag, path)
	}
	return string(b), nil
}

// ParseABSpec parses side flagName's spec s — tile:TILE, policy:FILE,
// source:FILE or source:FILE@TILE — for the families fams of an operator
// (fams[0] first: its tiles are named bare, others "family/tile") on
// backend be, reading the files it names (policy.ReadFile, ReadSource; ctx
// cancels a read).
func ParseABSpec(ctx context.Context, flagName, s string, fams []*kernel.Family, be string) (ABSpec, error) {
	kind, arg, ok := strings.Cut(s, ":")
	if s == "" {
		return ABSpec{}, fmt.Errorf("%s: missing; want tile:TILE, policy:FILE or source:FILE[@TILE]", flagName)
	}
	if !ok || arg == "" {
		return ABSpec{}, fmt.Errorf("%s %q: want tile:TILE, policy:FILE or source:FILE[@TILE]", flagName, s)
	}
	sp := ABSpec{Raw: s, Kind: kind}
	switch kind {
	case ABTile:
		t, err := ResolveTile(fams, arg)
		if err != nil {
			return sp, fmt.Errorf("%s: %w", flagName, err)
		}
		sp.Tile = t
		sp.Key = "tile:" + t.Name
	case ABPolicy:
		p, data, err := policy.ReadFile(ctx, arg)
		if err != nil {
			return sp, fmt.Errorf("%s: %w", flagName, err)
		}
		if err := CheckPolicyFamilies(p, fams, be); err != nil {
			return sp, fmt.Errorf("%s: policy %s %w", flagName, arg, err)
		}
		tiles, err := PolicyTiles(p, fams)
		if err != nil {
			return sp, fmt.Errorf("%s: policy %s: %w", flagName, arg, err)
		}
		sp.Policy, sp.Tiles = &p, tiles
		sp.Key = "policy:" + hashOf(data)
	case ABSource:
		file, tile, err := splitSourceTile(flagName, arg, fams)
		if err != nil {
			return sp, err
		}
		src, err := ReadSource(ctx, flagName, file)
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
// ResolveTile).
func splitSourceTile(flagName, arg string, fams []*kernel.Family) (file string, tile TileRef, err error) {
	i := strings.LastIndex(arg, "@")
	if i < 0 {
		return arg, TileRef{}, nil
	}
	if _, err := os.Stat(arg); err == nil {
		return arg, TileRef{}, nil
	}
	file, t := arg[:i], arg[i+1:]
	if file == "" || t == "" {
		return "", TileRef{}, fmt.Errorf("%s source:%s: want source:FILE or source:FILE@TILE", flagName, arg)
	}
	if tile, err = ResolveTile(fams, t); err != nil {
		return "", TileRef{}, fmt.Errorf("%s source:%s: %w", flagName, arg, err)
	}
	return file, tile, nil
}

// ABRunOf is the comparison of sides a and b over cfg (one operator's
// config: its families, workload, types and timing) on backend be: the
// operator's cells and the pairs of tiles. Two source sides without a tile
// compare the tiles of cfg.Tiles (default: the first family's sweep), or
// with refOnly its reference tile only; tilesGiven says --tiles was given,
// which only two such sides take.
func ABRunOf(cfg Config, a, b ABSpec, tilesGiven, refOnly bool, be string) (ABRun, error) {
	fam := cfg.Families[0] // the reference family of the operator (or the first of --family)
	bothSource := !a.Fixed() && !b.Fixed()
	if (tilesGiven || refOnly) && !bothSource {
		return ABRun{}, errors.New("--tiles applies only when both sides are source: specs without a tile (source:FILE)")
	}
	// Two source sides: the tiles of the edited family, parsed once.
	var tiles []TileRef
	names := fam.Tiles()
	switch {
	case refOnly:
		names = []string{fam.Reference}
	case cfg.Tiles != nil:
		names = cfg.Tiles
	}
	for _, n := range names {
		t, err := ResolveTile([]*kernel.Family{fam}, n)
		if err != nil {
			return ABRun{}, fmt.Errorf("--tiles: %w", err)
		}
		if !slices.ContainsFunc(tiles, func(u TileRef) bool { return u.Name == t.Name }) {
			tiles = append(tiles, t)
		}
	}
	op, err := fam.Operator.Typed(cfg.Types)
	if err != nil {
		return ABRun{}, err
	}
	cells, err := CellsOf(cfg.Workload, op)
	if err != nil {
		return ABRun{}, err
	}
	return ABRun{A: a, B: b, Family: fam, Pairs: ABPairs(a, b, cfg.Families, cells, tiles),
		Options:    ABOptions{Seed: cfg.Seed, Types: cfg.Types, Measure: cfg.Measure, MaxSamples: cfg.MaxSamples},
		Stats:      stats.DefaultOptions(),
		Sequential: cfg.Measure.SequentialRule(),
		Backend:    be, Workload: cfg.Workload.Name, Ms: cfg.Workload.Ms}, nil
}

// ABLongRun is the longest an A/B of two source revisions over every tile
// may take at most before it needs --all-tiles.
const ABLongRun = 30 * time.Minute

// ABCost says on w, up front, what an A/B of two source revisions over
// every tile of the family's sweep (no --tiles) costs at most — every pair
// of tiles and cells timed until its comparison decides or the per-cell
// budget runs out — and refuses it when that exceeds ABLongRun unless
// allTiles.
func ABCost(w io.Writer, run ABRun, budget time.Duration, allTiles bool) error {
	pairs := len(run.Pairs) * run.Passes()
	worst := time.Duration(pairs) * budget
	tiles := map[string]bool{}
	cells := map[string]bool{}
	for _, p := range run.Pairs {
		tiles[p.TileA.Name] = true
		cells[fmt.Sprintf("%s/%d", p.Cell.Shape, p.Cell.M)] = true
	}
	what := fmt.Sprintf("%d %s × %d %s = %d paired %s", len(tiles), plural(len(tiles), "tile", "tiles"), len(cells), plural(len(cells), "cell", "cells"),
		pairs, plural(pairs, "comparison", "comparisons"))
	fmt.Fprintf(w, "ab: two source revisions over every tile of the family's sweep: %s, each up to the --budget %s of rounds: up to %s (name tiles with --tiles, or --tiles ref for the reference tile only)\n",
		what, progress.Duration(budget), progress.Duration(worst))
	if worst > ABLongRun && !allTiles {
		return fmt.Errorf("two source: sides without --tiles compare %s, up to %s at --budget %s: name the tiles to compare with --tiles (--tiles ref: the reference tile), or give --all-tiles to run them all",
			what, progress.Duration(worst), progress.Duration(budget))
	}
	return nil
}

// Passes is how many times the run compares its pairs: 2 with Reverse.
func (r ABRun) Passes() int {
	if r.Reverse {
		return 2
	}
	return 1
}

// Weights are the progress weights of the run's comparisons, in order
// (progress.CellWeight of each pair's cell, every pass).
func (r ABRun) Weights() []float64 {
	var weights []float64
	for range r.Passes() {
		for _, p := range r.Pairs {
			weights = append(weights, progress.CellWeight(p.Cell))
		}
	}
	return weights
}
