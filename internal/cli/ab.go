package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/tilefit/tilefit/internal/progress"
	"github.com/tilefit/tilefit/report"
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
			allTiles := fs.Bool("all-tiles", false, "with two source: sides and no --tiles, compare every tile of the family's sweep even when that may take longer than "+progress.Duration(tune.ABLongRun))
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
				if err := tune.ABCost(stderr, run, f.budget, *allTiles); err != nil {
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
			prog := progress.New(stderr, "ab", run.Weights())
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
			write := report.ABMarkdown
			if *format == "json" {
				write = report.ABJSON
			}
			if err := write(stdout, rep); err != nil {
				return err
			}
			if missing := rep.NotCompared(); len(missing) > 0 {
				return failuresError("%d cells were not compared: %s", len(missing), strings.Join(missing, "; "))
			}
			return nil
		}}
}

// abRunOf turns ab's flags and sides into the comparison to run
// (tune.ABRunOf): the operator's config, the sides parsed.
func abRunOf(ctx context.Context, f *sweepFlags, specA, specB string) (tune.ABRun, tune.Config, error) {
	given := f.tiles != ""
	refOnly := f.tiles == "ref"
	if refOnly {
		f.tiles = ""
	}
	cfg, err := f.config(ctx, registryFrom(ctx))
	if err != nil {
		return tune.ABRun{}, cfg, err
	}
	a, err := tune.ParseABSpec(ctx, "--a", specA, cfg.Families, f.backend)
	if err != nil {
		return tune.ABRun{}, cfg, err
	}
	b, err := tune.ParseABSpec(ctx, "--b", specB, cfg.Families, f.backend)
	if err != nil {
		return tune.ABRun{}, cfg, err
	}
	run, err := tune.ABRunOf(cfg, a, b, given, refOnly, f.backend)
	return run, cfg, err
}
