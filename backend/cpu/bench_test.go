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
	"github.com/tilefit/tilefit/builtin"
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
	fam := builtin.CPUGemmF16()
	s := dims(1024, 1024, 1024)
	op := gemmOp(false)
	sets := [][][]byte{op.GenInputs(1, s), op.GenInputs(2, s)}
	p, err := c.NewProblem(ctx, op, s, sets)
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()

	tiles := fam.Tiles()
	ks := make(map[string]backend.Kernel)
	for _, name := range tiles {
		prm, _ := fam.ParseTile(name)
		ks[name] = load(b, c, name, backendtest.Program(fam, nil, prm))
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

	want, err := runY(b, p, ks[fam.Reference])
	if err != nil {
		b.Fatal(err)
	}
	run := func(name string, k backend.Kernel, bitwise bool) {
		b.Run(name, func(b *testing.B) {
			got, err := runY(b, p, k)
			if err != nil {
				b.Fatal(err)
			}
			if r := verify.Check(op, s, sets[0], 2, got, 1, 4096); r.Err != nil {
				b.Fatalf("%s: %v", name, r.Err)
			}
			if m := verify.Bitwise(op.Operands[2], s, want, got); bitwise && m != nil {
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
	if vk, ok := vendor(b, c, op, s); ok {
		run(kernel.VendorOpenBLAS, vk, false)
	} else {
		b.Log("OpenBLAS not installed")
	}
}

func gflops(s kernel.Dims, d time.Duration) float64 {
	return builtin.GemmF16().FLOPs(s) / d.Seconds() / 1e9
}

// vendor loads the OpenBLAS baseline of gemm_f16, ok false when OpenBLAS is
// not installed.
func vendor(tb testing.TB, c *CPU, op *kernel.Operator, d kernel.Dims) (backend.Kernel, bool) {
	if b, err := c.openBLAS(); err != nil || b == nil {
		return nil, false
	}
	bl := builtin.OpenBLASGemmF16()
	plan, err := bl.Plan(op, d)
	if err != nil {
		tb.Fatal(err)
	}
	k, err := c.Load(context.Background(), bl.Name, backend.Artifact{}, plan)
	if err != nil {
		tb.Fatal(err)
	}
	return k, true
}

// BenchmarkStrata256 reports GFLOP/s at M = 256 on a few big shapes of the
// strata workload (DOMAIN.md) for a few tiles and OpenBLAS, fp32 output.
//
//	go test -run '^$' -bench Strata256 -benchtime 10x ./backend/cpu
func BenchmarkStrata256(b *testing.B) {
	c := newCPU(b, Options{})
	ctx := context.Background()
	fam := builtin.CPUGemmF16()
	shapes := []struct {
		name string
		n, k int
	}{{"Wqkv", 10240, 2560}, {"Wout", 2560, 6144}, {"hc_read", 324, 10240}, {"hc_up", 10240, 320}, {"W512", 512, 2560}}
	op := gemmOp(false)
	for _, sh := range shapes {
		s := dims(256, sh.n, sh.k)
		vk, vok := vendor(b, c, op, s)
		sets := [][][]byte{op.GenInputs(1, s), op.GenInputs(2, s)}
		p, err := c.NewProblem(ctx, op, s, sets)
		if err != nil {
			b.Fatal(err)
		}
		cands := map[string]backend.Kernel{}
		names := []string{"64_128_2", "128_128_2", "128_256_2", "32_256_2"}
		for _, name := range names {
			prm, _ := fam.ParseTile(name)
			cands[name] = load(b, c, name, backendtest.Program(fam, nil, prm))
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
