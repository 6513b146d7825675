// Package servetest holds the small measured cells the serve tests (of
// internal/serve and of the CLI's serve command) store and render.
package servetest

import (
	"time"

	"github.com/tilefit/tilefit/builtin"
	"github.com/tilefit/tilefit/kernel"
	"github.com/tilefit/tilefit/result"
)

// Prov is the provenance of Cell's cells.
var Prov = result.Provenance{Backend: "cpu", Device: "Test CPU", Arch: "x86-64", Compiler: "cc 1", Flags: "-O3",
	Family: "gemm_f16", SourceHash: result.SourceHash("src"), Operator: "gemm_f16", Types: "X=f16,W=f16,Y=f32"}

// Cell is a small measured cell of shape s at M=m: two bitwise tiles,
// six rounds, the second tile 10% slower.
func Cell(s string, m int) result.CellResult {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).Add(time.Duration(m) * time.Second)
	c := result.CellResult{Prov: Prov, Cell: result.NewCell(s, builtin.GemmF16(), kernel.Dims{"M": m, "N": 64, "K": 64}, 1),
		Reference: "64_128_2", Seed: 1, Rounds: 6, Sets: 1, Started: t0, Finished: t0.Add(time.Second)}
	for i, tile := range []string{"64_128_2", "32_64_2"} {
		cand := result.Candidate{Tile: tile, Status: result.OK, Bitwise: true, Dispatches: 4}
		for r := 0; r < 6; r++ {
			cand.Samples = append(cand.Samples, 10+float64(i)+0.01*float64(r))
		}
		c.Candidates = append(c.Candidates, cand)
	}
	return c
}
