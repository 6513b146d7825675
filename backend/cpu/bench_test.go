package cpu

import (
	"context"
	"testing"
	"time"

	"github.com/tilefit/tilefit/backend"
	"github.com/tilefit/tilefit/backend/backendtest"
	"github.com/tilefit/tilefit/kernel"
	"github.com/tilefit/tilefit/verify"
)

// BenchmarkGEMM1024 reports GFLOP/s (2·M·N·K / time) at M = N = K = 1024,
// fp32 output, for the best tile of the family's default space (screened
// first: each tile timed for a few dispatches, the fastest kept), the
// reference tile, and OpenBLAS sgemm on fp32 copies of the same inputs.
//
//	go test -run '^$' -bench GEMM1024 -benchtime 100x ./backend/cpu
func BenchmarkGEMM1024(b *testing.B) {
	c := newCPU(b, Options{})
	ctx := context.Background()
	fam := kernel.CPUGemmF16()
	s := backend.Shape{M: 1024, N: 1024, K: 1024}
	sets := []backend.InputSet{verify.RandomInputs(1, s), verify.RandomInputs(2, s)}
	p, err := c.NewProblem(ctx, s, sets, false)
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()

	tiles := fam.Tiles()
	ks := make(map[string]backend.Kernel)
	for _, name := range tiles {
		prm, _ := fam.ParseTile(name)
		ks[name] = load(b, c, name, backendtest.Program(fam, prm, false))
	}
	// Screen: three rounds, each tile's best of them.
	best := map[string]time.Duration{}
	for round := 0; round < 3; round++ {
		for _, name := range tiles {
			d, err := p.Time(ctx, ks[name], 2, round%2)
			if err != nil {
				b.Fatal(err)
			}
			if old, ok := best[name]; !ok || d < old {
				best[name] = d
			}
		}
	}
	bestTile := fam.Reference
	for _, name := range tiles {
		if best[name] < best[bestTile] {
			bestTile = name
		}
	}
	b.Logf("screened %d tiles; best %s (%.1f GFLOP/s in screening)", len(tiles), bestTile, gflops(s, best[bestTile]))

	want, err := p.Run(ctx, ks[fam.Reference], 0)
	if err != nil {
		b.Fatal(err)
	}
	run := func(name string, k backend.Kernel, bitwise bool) {
		b.Run(name, func(b *testing.B) {
			got, err := p.Run(ctx, k, 0)
			if err != nil {
				b.Fatal(err)
			}
			if r := verify.Check(sets[0], s, got, false, 1, 4096); r.Err != nil {
				b.Fatalf("%s: %v", name, r.Err)
			}
			if m := verify.Bitwise(want, got, s, false); bitwise && m != nil {
				b.Fatalf("%s: %s", name, m)
			}
			if _, err := p.Time(ctx, k, 2, 0); err != nil { // warm-up
				b.Fatal(err)
			}
			b.ResetTimer()
			d, err := p.Time(ctx, k, b.N, 0)
			if err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			b.ReportMetric(gflops(s, d), "GFLOP/s")
		})
	}
	run("best="+bestTile, ks[bestTile], true)
	run("ref="+fam.Reference, ks[fam.Reference], true)
	if vk, ok, err := c.Vendor(ctx); err != nil {
		b.Fatal(err)
	} else if ok {
		run(kernel.VendorOpenBLAS, vk, false)
	} else {
		b.Log("OpenBLAS not installed")
	}
}

func gflops(s backend.Shape, d time.Duration) float64 {
	return 2 * float64(s.M) * float64(s.N) * float64(s.K) / d.Seconds() / 1e9
}
