package cli

import (
	"github.com/tilefit/tilefit/measure"
)

// roundsAuto is --rounds auto, the default of ab and select (where a
// verdict is the output); sweep keeps 12 fixed rounds by default, because
// with dozens of tiles some tile near the reference keeps every cell going
// until its budget (docs/rounds.md).
const roundsAuto = measure.RoundsAuto

// roundsUsage is the --rounds flag's help.
const roundsUsage = "paired rounds: auto (added in batches until each comparison is decided or --budget runs out; see docs/rounds.md) or a fixed number ≥ 2"
