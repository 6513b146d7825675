package measure

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/tilefit/tilefit/stats"
)

// RoundsAuto is --rounds auto: rounds are added until each comparison is
// decided (Options.Auto).
const RoundsAuto = "auto"

// MaxRounds bounds --rounds N (issue 18: every count flag is bounded).
const MaxRounds = 1 << 16

// OptionsFor builds the timing protocol from --rounds, --dispatches and
// --budget: "auto" turns on the sequential rule (Options.Auto), a number
// fixes the rounds (cut to fit the budget, to at least 6) as before.
func OptionsFor(rounds string, dispatches int, budget time.Duration) (Options, error) {
	mo := DefaultOptions()
	mo.Dispatches, mo.Budget = dispatches, budget
	if strings.TrimSpace(rounds) == RoundsAuto {
		mo.Auto = true
		mo.Sequential = stats.DefaultSequentialOptions()
		return mo, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(rounds))
	if err != nil || n < 2 {
		return mo, fmt.Errorf("--rounds: want auto or a number ≥ 2, got %q", rounds)
	}
	if n > MaxRounds {
		return mo, fmt.Errorf("--rounds: at most %d rounds, got %d (auto adds rounds until the comparisons are decided)", MaxRounds, n)
	}
	mo.Rounds = n
	mo.MinRounds = min(mo.MinRounds, n)
	return mo, nil
}

// SequentialRule returns the rule a measurement with o was stopped by, nil
// for fixed rounds.
func (o Options) SequentialRule() *stats.SequentialOptions {
	if !o.Auto {
		return nil
	}
	s := o.Sequential
	if s == (stats.SequentialOptions{}) {
		s = stats.DefaultSequentialOptions()
	}
	return &s
}
