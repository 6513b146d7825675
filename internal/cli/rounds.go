package cli

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/tilefit/tilefit/measure"
	"github.com/tilefit/tilefit/stats"
)

// roundsAuto is --rounds auto, the default of ab and select (where a
// verdict is the output); sweep keeps 12 fixed rounds by default, because
// with dozens of tiles some tile near the reference keeps every cell going
// until its budget (docs/rounds.md).
const roundsAuto = "auto"

// maxRounds bounds --rounds N (issue 18: every count flag is bounded).
const maxRounds = 1 << 16

// roundsUsage is the --rounds flag's help.
const roundsUsage = "paired rounds: auto (added in batches until each comparison is decided or --budget runs out; see docs/rounds.md) or a fixed number ≥ 2"

// measureOptions builds the timing protocol from --rounds, --dispatches and
// --budget: "auto" turns on the sequential rule (measure.Options.Auto), a
// number fixes the rounds (cut to fit the budget, to at least 6) as before.
func measureOptions(rounds string, dispatches int, budget time.Duration) (measure.Options, error) {
	mo := measure.DefaultOptions()
	mo.Dispatches, mo.Budget = dispatches, budget
	if strings.TrimSpace(rounds) == roundsAuto {
		mo.Auto = true
		mo.Sequential = stats.DefaultSequentialOptions()
		return mo, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(rounds))
	if err != nil || n < 2 {
		return mo, fmt.Errorf("--rounds: want auto or a number ≥ 2, got %q", rounds)
	}
	if n > maxRounds {
		return mo, fmt.Errorf("--rounds: at most %d rounds, got %d (auto adds rounds until the comparisons are decided)", maxRounds, n)
	}
	mo.Rounds = n
	mo.MinRounds = min(mo.MinRounds, n)
	return mo, nil
}

// sequentialOf returns the rule a measurement with mo was stopped by, nil
// for fixed rounds.
func sequentialOf(mo measure.Options) *stats.SequentialOptions {
	if !mo.Auto {
		return nil
	}
	s := mo.Sequential
	if s == (stats.SequentialOptions{}) {
		s = stats.DefaultSequentialOptions()
	}
	return &s
}
