package cpu

import (
	"context"
	"fmt"
	"sort"
	"strings"
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
	sorted := append([]string(nil), tiles...)
	sort.Slice(sorted, func(i, j int) bool { return best[sorted[i]] < best[sorted[j]] })
	var tab strings.Builder
	for _, name := range sorted {
		fmt.Fprintf(&tab, "\n  %-10s %6.1f GFLOP/s", name, gflops(s, best[name]))
	}
	b.Logf("screened %d tiles (best of 3 × 2 dispatches); best %s:%s", len(tiles), bestTile, tab.String())

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

// BenchmarkStrata256 reports GFLOP/s at M = 256 on a few big shapes of the
// strata workload (DOMAIN.md) for a few tiles and OpenBLAS, fp32 output.
//
//	go test -run '^$' -bench Strata256 -benchtime 10x ./backend/cpu
func BenchmarkStrata256(b *testing.B) {
	c := newCPU(b, Options{})
	ctx := context.Background()
	fam := kernel.CPUGemmF16()
	shapes := []struct {
		name string
		n, k int
	}{{"Wqkv", 10240, 2560}, {"Wout", 2560, 6144}, {"hc_read", 324, 10240}, {"hc_up", 10240, 320}, {"W512", 512, 2560}}
	vk, vok, err := c.Vendor(ctx)
	if err != nil {
		b.Fatal(err)
	}
	for _, sh := range shapes {
		s := backend.Shape{M: 256, N: sh.n, K: sh.k}
		sets := []backend.InputSet{verify.RandomInputs(1, s), verify.RandomInputs(2, s)}
		p, err := c.NewProblem(ctx, s, sets, false)
		if err != nil {
			b.Fatal(err)
		}
		cands := map[string]backend.Kernel{}
		names := []string{"64_128_2", "128_128_2", "128_256_2", "32_256_2"}
		for _, name := range names {
			prm, _ := fam.ParseTile(name)
			cands[name] = load(b, c, name, backendtest.Program(fam, prm, false))
		}
		if vok {
			names = append(names, kernel.VendorOpenBLAS)
			cands[kernel.VendorOpenBLAS] = vk
		}
		for _, name := range names {
			k := cands[name]
			b.Run(sh.name+"/"+name, func(b *testing.B) {
				if _, err := p.Time(ctx, k, 1, 0); err != nil {
					b.Fatal(err)
				}
				b.ResetTimer()
				d, err := p.Time(ctx, k, b.N, 0)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(gflops(s, d), "GFLOP/s")
			})
		}
		p.Close()
	}
}
