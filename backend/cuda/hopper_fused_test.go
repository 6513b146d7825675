package cuda

// GPU checks of the fused wgmma families (hc_up_wgmma, swiglu_wgmma, on the
// mainloop wgmma_core.cuh) against the mma.sync families they share a
// numerics class with, and of the fp16-intermediate vendor baselines; and a
// benchmark of the baselines' elementwise step against copy bandwidth.
// Skipped without an sm_90 device (docs/results/h200-hopper-fused/README.md).
//
// Environment:
//   TILEFIT_OUT              folder for the log (hopper-fused.log)
//   TILEFIT_FUSED_WATCHDOG   0: compile without WATCHDOG=1 (default on: a
//                            stuck barrier wait traps instead of hanging)

import (
	"context"
	"fmt"
	"math"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/tilefit/tilefit/backend"
	"github.com/tilefit/tilefit/backend/backendtest"
	"github.com/tilefit/tilefit/builtin"
	"github.com/tilefit/tilefit/kernel"
	"github.com/tilefit/tilefit/verify"
)

// fusedCase is one operator's check: the mma.sync reference family and
// tile, the wgmma family and its tiles, the shapes.
type fusedCase struct {
	ref     *kernel.Family
	refTile string
	fam     *kernel.Family
	tiles   []string
	fault   string // a tile compiled with FAULT=1, which must differ
	shapes  []kernel.Dims
}

func fusedCases() []fusedCase {
	hc, sw := builtin.CUDAHcUpWgmma(), builtin.CUDASwigluWgmma()
	return []fusedCase{
		{ref: builtin.CUDAHcUpF16(), refTile: "32_128_4.bound1", fam: hc,
			tiles: append(hc.Tiles(), "128_256_2.hsw0", "128_128_2.hsw0", "64_256_1.hsw0", "128_256_2.pdl1", "128_128_2.grid0", "128_256_2.stages2", "128_128_2.raster1",
				"128_128_2.mc1", "128_160_2.mc2.pdl1", "128_128_2.pingpong1.mc1", "64_160_1.mc1.grid0",
				// the staged epilogue: boxes of 8 (TD 40), 32 (TD 32) and 64 (TD 64) columns, with
				// mixed, PINGPONG, MC and the HPRE walk
				"128_160_2.epi1", "128_128_2.pingpong1.epi1", "128_256_2.epi1", "64_160_1.bound1.epi1", "128_160_2.mc1.epi1", "128_128_2.pingpong1.hpre1.epi1", "128_160_2.hbuf2.hpre1.epi1",
				// the wide tile (two wgmma halves of 160: 80 mix columns, 160-byte H rows), with
				// mixed, MC 1, one consumer; the H prefetch into L2 (HPF) on the wide and the
				// usual tiles, PINGPONG and MC included
				"128_320_2", "128_320_2.bound1", "128_320_2.mc1", "128_320_2.hpf1", "64_320_1.hpf1",
				"128_160_2.hpf1", "128_128_2.pingpong1.hpf1", "128_160_2.mc1.hpf1", "128_160_2.hbuf2.hpre1.hpf1",
				// the H tile in the stage ring (HRING): 1, 2 slots; with the wide tile, mixed,
				// MC, HPF, one consumer, the staged epilogue
				"128_320_2.hring1", "128_160_2.hring1", "128_128_2.hring1", "128_320_2.bound1.hring1", "128_320_2.hpf1.hring1.mc1",
				"128_160_2.hring1.mc1", "64_320_1.hring1", "128_160_2.epi1.hring1",
				// two CTAs per SM (MINB 2: one consumer, setmaxnreg 40/216, half the shared
				// memory): 2, 3, 4 stages, the grid of two per SM and one CTA per unit, the
				// barriers in the alignment slack (64_128_1 and the ring at 4 stages fill
				// 115712 bytes exactly), mixed, the staged epilogue, PDL, MC, HRING (all
				// passed on the H200, docs/results/h200-fused6; 64_256_1.minb2, which ptxas
				// could not compile in 128 registers, is refused by the rules now)
				"64_160_1.minb2.stages3.grid264", "64_160_1.minb2.stages3.grid0", "64_160_1.minb2.stages2.grid264",
				"64_128_1.minb2.stages4.grid264", "64_128_1.minb2.stages3.grid264", "64_160_1.minb2.hring1.stages4.grid264",
				"64_96_1.minb2.stages4.grid264", "64_160_1.bound1.minb2.stages3.grid264", "64_160_1.minb2.stages3.epi1.grid264",
				"64_160_1.minb2.stages3.pdl1.grid264", "64_160_1.minb2.stages3.mc1.grid264",
				// X resident (XRES: a stage only W; the second unit of a CTA with the same
				// tile row loads no X): two consumers, one, 7 stages (128_128_2), two H
				// buffers, mixed, the staged epilogue, HPF 2; grid 128 and raster 1 change the
				// tile row between a CTA's units at M 300 (the xempty wait before X is
				// overwritten); XRES 4 has no plan at K 320. HPF 2 (the next unit's H
				// prefetched after the unit's copies) alone and with two H buffers.
				"128_160_2.xres5", "128_128_2.xres5", "64_160_1.xres5", "128_160_2.hbuf2.hpre1.xres5", "128_160_2.bound1.xres5",
				"128_160_2.epi1.xres5", "128_160_2.hpf2.xres5", "128_160_2.grid128.xres5", "128_160_2.raster1.xres5",
				"128_128_2.grid128.hpf2.xres5", "128_160_2.xres4", "128_160_2.hpf2", "128_160_2.hbuf2.hpre1.hpf2", "128_128_2.hpf2",
				// the epilogue under the next unit's first k-blocks (OVL: two accumulator
				// sets): 1 and 2 k-blocks, 128- and 160-column tiles, one consumer, two H
				// buffers, mixed; grid 66 gives a CTA three units at M 300 (both sets in turn)
				"128_160_2.ovl1", "128_160_2.ovl2", "128_128_2.ovl1", "128_128_2.ovl2", "64_160_1.ovl1", "128_160_2.hbuf2.hpre1.ovl1",
				"128_160_2.bound1.ovl1", "128_160_2.grid66.ovl2", "128_128_2.grid66.ovl1", "128_160_2.hpf2.ovl1",
				// PDL 2: the first stages' W boxes copied before griddepcontrol.wait (one to
				// five of them on these shapes' K), with PINGPONG, HRING (the wide tile too),
				// the staged epilogue, one consumer, OVL, mixed, three units a CTA (grid 66
				// at M 300) and one CTA per unit; WPRE: only the first 1, 2 or 4 stages
				"128_160_2.pdl2", "128_128_2.pingpong1.pdl2", "128_160_2.hring1.pdl2", "128_320_2.hring1.pdl2", "128_160_2.epi1.pdl2",
				"64_160_1.pdl2", "128_160_2.ovl1.pdl2", "128_160_2.bound1.pdl2", "128_160_2.grid66.pdl2", "128_128_2.grid0.pdl2",
				"128_128_2.pingpong1.pdl2.wpre1", "128_128_2.pingpong1.pdl2.wpre2", "128_160_2.pdl2.wpre4", "128_128_2.pdl2.epi1.wpre2"),
			fault: "128_128_2",
			shapes: []kernel.Dims{{"M": 37, "S": 40, "K": 72}, {"M": 1, "S": 64, "K": 64}, {"M": 1025, "S": 320, "K": 320},
				{"M": 300, "S": 2560, "K": 320}}},
		{ref: builtin.CUDASwigluF16(), refTile: "64_64_4", fam: sw,
			tiles: append(sw.Tiles(), "128_160_2.pdl1", "128_128_2.pingpong1", "64_64_1.ksplit5", "128_160_2.grid0.ksplit20",
				"128_160_2.mc1.pdl1", "128_80_2.mc2", "64_64_1.mc1.ksplit5", "128_128_2.pingpong1.mc1",
				// the staged epilogue: boxes of 16 (TN 80, 48) and 64 (TN 64) columns; N 5 stores directly
				"128_160_2.epi1", "128_128_2.epi1", "64_96_1.pdl1.epi1", "128_128_2.pingpong1.epi1", "128_160_2.mc1.pdl1.epi1",
				// PDL 2: Wg's and Wu's boxes of the first stages before griddepcontrol.wait;
				// with split K (the act kernel after it), PINGPONG, the staged epilogue; WPRE
				"128_160_2.pdl2", "64_80_1.ksplit20.pdl2", "128_128_2.pingpong1.pdl2", "128_160_2.pdl2.epi1", "64_160_1.ksplit20.pdl2",
				"128_160_2.pdl2.wpre1", "64_80_1.ksplit20.pdl2.wpre2"),
			shapes: []kernel.Dims{{"M": 37, "N": 72, "K": 88}, {"M": 3, "N": 5, "K": 8}, {"M": 1025, "N": 640, "K": 512},
				{"M": 256, "N": 640, "K": 2560}}},
	}
}

type compiled struct {
	tile  string
	p     kernel.Params
	fam   *kernel.Family
	art   backend.Artifact
	err   error
	fault bool
}

// compileTiles compiles the tiles concurrently.
func compileTiles(ctx context.Context, b *Backend, cs []*compiled, extra []string) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for _, c := range cs {
		wg.Add(1)
		go func(c *compiled) {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			p, err := c.fam.ParseTile(c.tile)
			if err != nil {
				c.err = err
				return
			}
			c.p = p
			prog := backendtest.Program(c.fam, c.fam.Operator, p)
			if c.fam.Name != "hc_up_f16" && c.fam.Name != "swiglu_f16" {
				prog.Defines = append(prog.Defines, extra...)
			}
			if c.fault {
				prog.Defines = append(prog.Defines, "FAULT=1")
			}
			c.art, c.err = b.Compile(ctx, prog)
		}(c)
	}
	wg.Wait()
}

// checkResidency reports how many CTAs of an hc_up_wgmma tile's launch fit
// on one SM (cuOccupancyMaxActiveBlocksPerMultiprocessor with the launch's
// block and dynamic shared memory) and its registers a thread. A MINB 2
// tile must start with HcUpWgmmaRegs's registers (so the setmaxnreg
// targets fit the CTA's pool and setmaxnreg.inc cannot wait forever) and
// have two CTAs per SM; a MINB 1 tile one. False: not to be run.
func checkResidency(ctx context.Context, t *testing.T, lg *hopperLog, b *Backend, k *Kernel, tile string, p kernel.Params, l kernel.Launch) bool {
	const occ = "cuOccupancyMaxActiveBlocksPerMultiprocessor"
	n := new(int32)
	err := b.w.do(ctx, func() error {
		if !b.drv.has(occ) {
			if err := b.drv.resolve(nil, []string{occ}); err != nil || !b.drv.has(occ) {
				return fmt.Errorf("the driver has no %s", occ)
			}
		}
		return b.drv.do(occ, uintptr(unsafe.Pointer(n)), k.fns[0], uintptr(l.Block[0]), uintptr(l.Shared))
	})
	regs, local, _ := k.Resources()
	entry, prod, cons, maxnreg := builtin.HcUpWgmmaRegs(p)
	mb := builtin.HcUpWgmmaMinBlocks(p)
	lg.printf("%s: %d CTAs per SM (MINB %d), %d registers a thread (the bound's %d; setmaxnreg %v %d/%d), local %d, shared %d (%v)", tile, *n, mb, regs, entry, maxnreg, prod, cons, local, l.Shared, err)
	if err != nil {
		t.Errorf("%s: occupancy: %v", tile, err)
		return mb == 1
	}
	ok := true
	if mb == 2 && regs*l.Block[0] < (prod+p["CONSUMERS"]*cons)*128 {
		t.Errorf("%s: starts with %d registers a thread: the setmaxnreg targets %d/%d need %d for the CTA (not run: it would wait forever)", tile, regs, prod, cons, (prod+p["CONSUMERS"]*cons)*128)
		ok = false
	}
	if int(*n) < mb {
		t.Errorf("%s: %d CTAs per SM, MINB %d", tile, *n, mb)
	}
	if l.Cluster != [3]int{} {
		// How many of the tile's clusters fit at once: a persistent grid
		// of more CTAs than that runs its last clusters as a second wave.
		var nc int
		err := b.w.do(ctx, func() error {
			var err error
			nc, err = b.drv.maxActiveClusters(k.fns[0], l.Grid, l.Block, l.Shared, l.Cluster)
			return err
		})
		size := l.Cluster[0] * max(l.Cluster[1], 1) * max(l.Cluster[2], 1)
		lg.printf("%s: %d clusters of %v at once (%d CTAs; this launch's grid %v)", tile, nc, l.Cluster, nc*size, l.Grid)
		if err != nil || nc < 1 {
			t.Errorf("%s: cluster occupancy: %d clusters (%v)", tile, nc, err)
			ok = false
		}
	}
	if mb == 2 && local != 0 {
		t.Errorf("%s: %d bytes of local memory a thread (spills)", tile, local)
	}
	return ok
}

// firstDiff describes where two outputs of one operand first differ.
func firstDiff(o kernel.Operand, d kernel.Dims, a, b []byte) (int, string) {
	es := o.DType.Size()
	n, first := 0, -1
	for i := 0; i+es <= len(a) && i+es <= len(b); i += es {
		if string(a[i:i+es]) != string(b[i:i+es]) {
			if first < 0 {
				first = i / es
			}
			n++
		}
	}
	if n == 0 {
		return 0, ""
	}
	cols := d[o.Shape[len(o.Shape)-1]]
	return n, fmt.Sprintf("%d elements differ, first (row %d, column %d)", n, first/cols, first%cols)
}

// TestHopperFused: every tile of the fused wgmma families runs (with
// WATCHDOG=1) on poisoned, guarded outputs and is bitwise identical to the
// mma.sync reference tile of its class on every output both have (split-K
// classes: to their first tile), within the float64 bound; a FAULT=1 tile
// differs; the cuBLAS baselines are within the unfused bound.
func TestHopperFused(t *testing.T) {
	b := hopperBackend(t)
	ctx := context.Background()
	lg := newHopperLog(t, "hopper-fused.log")
	extra := []string{"WATCHDOG=1"}
	if os.Getenv("TILEFIT_FUSED_WATCHDOG") == "0" {
		extra = nil
	}
	only := os.Getenv("TILEFIT_FUSED_ONLY")
	for _, fc := range fusedCases() {
		if only != "" && only != fc.fam.Name {
			lg.printf("%s: skipped (TILEFIT_FUSED_ONLY=%s)", fc.fam.Name, only)
			continue
		}
		op := fc.fam.Operator
		cs := []*compiled{{tile: fc.refTile, fam: fc.ref}}
		for _, tl := range fc.tiles {
			cs = append(cs, &compiled{tile: tl, fam: fc.fam})
		}
		if fc.fault != "" {
			cs = append(cs, &compiled{tile: fc.fault, fam: fc.fam, fault: true})
		}
		t0 := time.Now()
		compileTiles(ctx, b, cs, extra)
		lg.printf("%s: compiled %d programs in %.1f s", fc.fam.Name, len(cs), time.Since(t0).Seconds())
		for _, c := range cs {
			if c.err != nil {
				t.Errorf("%s %s: %v", c.fam.Name, c.tile, c.err)
			} else if strings.Contains(c.art.Log, "warning") {
				lg.printf("%s %s: compiler: %s", c.fam.Name, c.tile, strings.TrimSpace(c.art.Log))
			}
		}
		bls := builtin.New().Baselines("cuda", op.Name)
		for _, d := range fc.shapes {
			p, sets := newProblem(t, b, op, d, 1, 2)
			refs := verify.NewRefs(op, d, sets[0], 7, 4096)
			var refOut [][]byte
			bases := map[string][][]byte{}
			basePres := map[string][]bool{}
			for _, c := range cs {
				if c.err != nil {
					continue
				}
				plan, err := c.fam.Plan(c.p, d)
				if err != nil {
					lg.printf("%v %s %s: no plan (%v)", d, c.fam.Name, c.tile, err)
					continue
				}
				k, err := b.Load(ctx, c.tile, c.art, plan)
				if err != nil {
					t.Errorf("%v %s: load: %v", d, c.tile, err)
					continue
				}
				if c.fam.Name == "hc_up_wgmma" {
					if !checkResidency(ctx, t, lg, b, k.(*Kernel), c.tile, c.p, plan.Launches[0]) {
						k.Close()
						continue
					}
				}
				out, err := p.Run(ctx, k, 0)
				var out2 [][]byte
				if err == nil {
					out2, err = p.Run(ctx, k, 1)
				}
				if err != nil {
					t.Errorf("%v %s %s: %v", d, c.fam.Name, c.tile, err)
					k.Close()
					if strings.Contains(err.Error(), "ILLEGAL") || strings.Contains(err.Error(), "LAUNCH_FAILED") || strings.Contains(err.Error(), "TRAP") {
						t.Fatalf("the context is lost after %s; stopping", c.tile)
					}
					continue
				}
				regs, local, smem := k.(*Kernel).Resources()
				k.Close()
				pres := make([]bool, len(op.Operands))
				for j, o := range op.Operands {
					pres[j] = o.Dir == kernel.Out && o.Present(c.p)
				}
				class := c.fam.Class(c.p)
				label := fmt.Sprintf("%v %s %s [%s] regs %d local %d smem %d", d, c.fam.Name, c.tile, class, regs, local, smem)
				if c.fault {
					n := 0
					for j, o := range op.Operands {
						if pres[j] {
							m, _ := firstDiff(o, d, out[j], refOut[j])
							n += m
						}
					}
					lg.printf("%s FAULT=1: %d elements differ from the reference", label, n)
					if n == 0 {
						t.Errorf("%s FAULT=1: no difference (the comparison sees nothing)", label)
					}
					continue
				}
				if refOut == nil {
					refOut = out
				}
				base, bp := bases[class], basePres[class]
				if base == nil && c.fam == fc.ref {
					base, bp = out, pres
				}
				if base == nil && class == fc.ref.Class(kernel.Params{"CHAIN": 0}) {
					base, bp = refOut, presentOf(op, fc.ref, fc.refTile)
				}
				if base == nil {
					bases[class], basePres[class] = out, pres
				}
				status := "ok"
				for j, o := range op.Operands {
					if !pres[j] {
						continue
					}
					if r := refs.Check(j, out[j]); r.Err != nil {
						t.Errorf("%s: %s", label, verify.Label(op, j, r.Err.Error()))
						status = "FLOAT64 FAIL"
					} else if r.Unwritten != 0 {
						t.Errorf("%s: %s: %d unwritten", label, o.Name, r.Unwritten)
					}
					if base != nil && bp[j] {
						if n, msg := firstDiff(o, d, out[j], base[j]); n > 0 {
							t.Errorf("%s: %s not bitwise equal to its class's base: %s", label, o.Name, msg)
							status = "DIFFERS"
						}
					}
					if verify.Bitwise(o, d, out[j], out2[j]) == nil {
						t.Errorf("%s: sets 0 and 1 gave the same %s", label, o.Name)
					}
				}
				lg.printf("%s: %s", label, status)
			}
			for _, bl := range bls {
				checkBaselineUnfused(ctx, t, lg, b, p, op, d, bl, sets[0])
			}
			p.Close()
		}
	}
}

// TestCuBLASLtGemm: the autotuned cuBLASLt baseline of gemm_f16 is within
// the float64 bound (fp32 and fp16 Y, odd and strata shapes) and is timed
// beside cublasGemmEx's default algorithm.
func TestCuBLASLtGemm(t *testing.T) {
	b := testBackend(t)
	ctx := context.Background()
	lg := newHopperLog(t, "hopper-fused.log")
	lt, blas := builtin.CuBLASLtGemmF16(), builtin.CuBLASGemmF16()
	for _, f16 := range []bool{false, true} {
		op := gemmOp(f16)
		for _, s := range [][3]int{{37, 48, 64}, {1, 2560, 2560}, {256, 10240, 2560}, {1983, 2560, 6144}} {
			d := dims(s[0], s[1], s[2])
			p, sets := newProblem(t, b, op, d, 1, 2)
			var times []time.Duration
			for _, bl := range []*kernel.Baseline{lt, blas} {
				plan, _ := bl.Plan(op, d)
				k, err := b.Load(ctx, bl.Name, backend.Artifact{}, plan)
				if err != nil {
					t.Fatalf("%s: %v", bl.Name, err)
				}
				out, err := p.Run(ctx, k, 0)
				if err != nil {
					t.Fatalf("%v %s: %v", d, bl.Name, err)
				}
				if r := verify.Check(op, d, sets[0], 2, out[2], 3, 4096); r.Err != nil {
					t.Errorf("%v f16=%v %s: %v", d, f16, bl.Name, r.Err)
				}
				dt, err := p.Time(ctx, k, 20, 0)
				if err != nil {
					t.Fatalf("%v %s: time: %v", d, bl.Name, err)
				}
				times = append(times, dt)
				k.Close()
			}
			key := ltKey{s[0], s[1], s[2], f16}
			pl := b.lt.handle.plans[key]
			lg.printf("%v f16=%v: cublaslt %.2f µs (%d algorithms timed, best %.2f µs in tuning), cublas %.2f µs", d, f16,
				times[0].Seconds()*1e6, pl.tried, pl.bestMs*1e3, times[1].Seconds()*1e6)
			p.Close()
		}
	}
}

// TestVendorChainGraph: the fused baselines' three-launch chain (two cuBLAS
// GEMMs and the elementwise pass) at M 256, a dispatch of ~12 µs on the
// GPU, is timed as a graph: the auto mode's threshold is per launch, so the
// host's launch cost of three launches does not decide it.
func TestVendorChainGraph(t *testing.T) {
	b := testBackend(t)
	ctx := context.Background()
	op := builtin.SwigluF16()
	d := kernel.Dims{"M": 256, "N": 640, "K": 2560}
	p, _ := newProblem(t, b, op, d, 1, 2)
	defer p.Close()
	for _, bl := range builtin.New().Baselines("cuda", op.Name) {
		plan, err := bl.Plan(op, d)
		if err != nil {
			t.Fatal(err)
		}
		art, err := b.Compile(ctx, backend.Program{Family: bl.Name, Source: bl.Source, Defines: op.TypeDefines()})
		if err != nil {
			t.Fatal(err)
		}
		k, err := b.Load(ctx, bl.Name, art, plan)
		if err != nil {
			t.Fatal(err)
		}
		dt, err := p.Time(ctx, k, 16, 0)
		if err != nil {
			t.Fatal(err)
		}
		mode := p.(*Problem).Mode(k)
		t.Logf("%s: %d launches, %.2f µs per call, mode %s", bl.Name, len(plan.Launches), dt.Seconds()*1e6, mode)
		if mode != TimingGraph {
			t.Errorf("%s: timed with %s, want %s", bl.Name, mode, TimingGraph)
		}
		k.Close()
	}
}

// presentOf is the present outputs of a tile.
func presentOf(op *kernel.Operator, fam *kernel.Family, tile string) []bool {
	p, _ := fam.ParseTile(tile)
	out := make([]bool, len(op.Operands))
	for j, o := range op.Operands {
		out[j] = o.Dir == kernel.Out && o.Present(p)
	}
	return out
}

// checkBaselineUnfused runs a vendor baseline and checks it against the
// bound it is held to (the unfused one when it keeps fp16 intermediates),
// logging its largest error against both bounds.
func checkBaselineUnfused(ctx context.Context, t *testing.T, lg *hopperLog, b *Backend, p backend.Problem, op *kernel.Operator, d kernel.Dims, bl *kernel.Baseline, in [][]byte) {
	plan, err := bl.Plan(op, d)
	if err != nil {
		t.Errorf("%v baseline %s: %v", d, bl.Name, err)
		return
	}
	var art backend.Artifact
	if bl.Source != "" {
		if art, err = b.Compile(ctx, backend.Program{Family: bl.Name, Source: bl.Source, Defines: op.TypeDefines()}); err != nil {
			t.Errorf("baseline %s: %v", bl.Name, err)
			return
		}
	}
	k, err := b.Load(ctx, bl.Name, art, plan)
	if err != nil {
		t.Errorf("baseline %s: %v", bl.Name, err)
		return
	}
	defer k.Close()
	out, err := p.Run(ctx, k, 0)
	if err != nil {
		t.Errorf("%v baseline %s: %v", d, bl.Name, err)
		return
	}
	for j, o := range op.Operands {
		if o.Dir != kernel.Out || (bl.Params != nil && !o.Present(bl.Params)) {
			continue
		}
		fused := verify.Check(op, d, in, j, out[j], 7, 4096)
		un := verify.Check(op.WithUnfusedBound(), d, in, j, out[j], 7, 4096)
		lg.printf("%v baseline %s %s: max err / fused bound %.3g, / unfused bound %.3g", d, bl.Name, o.Name, fused.MaxErr, un.MaxErr)
		if un.Err != nil {
			t.Errorf("%v baseline %s: %s", d, bl.Name, verify.Label(op, j, un.Err.Error()))
		}
	}
}

// elementwiseOp is an operator for timing one vendor elementwise kernel:
// inputs ins of shape shapeIn, output out of shape shapeOut, all fp16.
func elementwiseOp(name string, dims []string, ins []string, shapeIn []string, out string, shapeOut []string) *kernel.Operator {
	var ops []kernel.Operand
	for _, n := range ins {
		ops = append(ops, kernel.Operand{Name: n, Dir: kernel.In, DType: kernel.F16, Shape: shapeIn})
	}
	ops = append(ops, kernel.Operand{Name: out, Dir: kernel.Out, DType: kernel.F16, Shape: shapeOut})
	return &kernel.Operator{Name: name, Dims: dims, Operands: ops,
		FLOPs:     func(kernel.Dims) float64 { return 0 },
		Reference: func(*kernel.Operator, kernel.Dims, [][]byte, int, int) (float64, float64) { return 0, math.Inf(1) }}
}

// BenchmarkFusedVendorElementwise times the vendor baselines' elementwise
// steps (tilefit_hc_up_mix16, tilefit_swiglu_act16) at the strata shapes and
// a device-to-device copy of the same bytes (read + write), both over
// rotating buffers larger than L2, and reports GB/s and the ratio.
func BenchmarkFusedVendorElementwise(bm *testing.B) {
	b := testBackend(bm)
	ctx := context.Background()
	art, err := b.Compile(ctx, backend.Program{Family: "fused_vendor", Source: builtin.CUDAFusedVendorSource()})
	if err != nil {
		bm.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		op    *kernel.Operator
		d     kernel.Dims
		plan  kernel.Plan
		bytes int64
	}{
		hcMixCase(1983), hcMixCase(1024), swActCase(1983), swActCase(8192),
	} {
		bm.Run(c.name, func(bm *testing.B) {
			// Sets to exceed the L2 (60 MB) twice over.
			sets := int(max(2, min(16, (160<<20)/c.bytes+1)))
			var in [][][]byte
			for s := 0; s < sets; s++ {
				in = append(in, c.op.GenInputs(uint64(s+1), c.d))
			}
			p, err := b.NewProblem(ctx, c.op, c.d, in)
			if err != nil {
				bm.Fatal(err)
			}
			defer p.Close()
			k, err := b.Load(ctx, c.name, art, c.plan)
			if err != nil {
				bm.Fatal(err)
			}
			defer k.Close()
			var kt, ct time.Duration
			for i := 0; i < bm.N; i++ {
				dt, err := p.Time(ctx, k, 64, 0)
				if err != nil {
					bm.Fatal(err)
				}
				kt += dt
				cp, err := b.copyTime(ctx, c.bytes/2, sets, 64)
				if err != nil {
					bm.Fatal(err)
				}
				ct += cp
			}
			kt, ct = kt/time.Duration(bm.N), ct/time.Duration(bm.N)
			kgb := float64(c.bytes) / kt.Seconds() / 1e9
			cgb := float64(c.bytes) / ct.Seconds() / 1e9
			bm.ReportMetric(kt.Seconds()*1e6, "µs/call")
			bm.ReportMetric(kgb, "GB/s")
			bm.ReportMetric(cgb, "copyGB/s")
			bm.ReportMetric(kgb/cgb, "ofcopy")
			bm.Logf("%s: %d bytes, %.2f µs = %.0f GB/s; copy of the same bytes %.2f µs = %.0f GB/s; %.1f%% of copy", c.name, c.bytes,
				kt.Seconds()*1e6, kgb, ct.Seconds()*1e6, cgb, 100*kgb/cgb)
		})
	}
}

func hcMixCase(m int) struct {
	name  string
	op    *kernel.Operator
	d     kernel.Dims
	plan  kernel.Plan
	bytes int64
} {
	const s = 2560
	op := elementwiseOp("hc_up_mix16", []string{"M", "S"}, []string{"Y4", "H"}, []string{"M", "4", "S"}, "mixh", []string{"M", "S"})
	pl := kernel.Plan{Launches: []kernel.Launch{{Entry: "tilefit_hc_up_mix16", Grid: [3]int{builtin.ElementwiseGrid(m * s / 8), 1, 1}, Block: [3]int{256, 1, 1},
		Args: kernel.Args(kernel.Operands("Y4", "H", "mixh"), kernel.DimArgs("M", "S"))}}}
	return struct {
		name  string
		op    *kernel.Operator
		d     kernel.Dims
		plan  kernel.Plan
		bytes int64
	}{fmt.Sprintf("hc_up_mix16_M%d", m), op, kernel.Dims{"M": m, "S": s}, pl, int64(m) * s * (2*4*2 + 2)}
}

func swActCase(m int) struct {
	name  string
	op    *kernel.Operator
	d     kernel.Dims
	plan  kernel.Plan
	bytes int64
} {
	const n = 640
	op := elementwiseOp("swiglu_act16", []string{"M", "N"}, []string{"G", "U"}, []string{"M", "N"}, "h", []string{"M", "N"})
	pl := kernel.Plan{Launches: []kernel.Launch{{Entry: "tilefit_swiglu_act16", Grid: [3]int{builtin.ElementwiseGrid(m * n / 8), 1, 1}, Block: [3]int{256, 1, 1},
		Args: kernel.Args(kernel.Operands("G", "U", "h"), []kernel.Arg{{Kind: kernel.ArgInt, Value: int64(m * n)}})}}}
	return struct {
		name  string
		op    *kernel.Operator
		d     kernel.Dims
		plan  kernel.Plan
		bytes int64
	}{fmt.Sprintf("swiglu_act16_M%d", m), op, kernel.Dims{"M": m, "N": n}, pl, int64(m) * n * 3 * 2}
}

// copyTime is the mean time of n device-to-device copies of size bytes
// (cuMemcpyDtoDAsync), rotating over sets source/destination pairs.
func (b *Backend) copyTime(ctx context.Context, size int64, sets, n int) (time.Duration, error) {
	var dt time.Duration
	err := b.w.do(ctx, func() error {
		d, st := b.drv, b.stream
		var bufs []devptr
		defer func() {
			for _, p := range bufs {
				_ = d.free(p)
			}
		}()
		for i := 0; i < 2*sets; i++ {
			p, err := d.alloc(size)
			if err != nil {
				return err
			}
			bufs = append(bufs, p)
		}
		cp := func(i int) error {
			j := i % sets
			return d.do("cuMemcpyDtoDAsync_v2", uintptr(bufs[2*j+1]), uintptr(bufs[2*j]), uintptr(size), st)
		}
		for i := 0; i < sets; i++ {
			if err := cp(i); err != nil {
				return err
			}
		}
		if err := d.do("cuEventRecord", uintptr(b.evStart), st); err != nil {
			return err
		}
		for i := 0; i < n; i++ {
			if err := cp(i); err != nil {
				return err
			}
		}
		if err := d.do("cuEventRecord", uintptr(b.evEnd), st); err != nil {
			return err
		}
		if err := d.do("cuEventSynchronize", uintptr(b.evEnd)); err != nil {
			return err
		}
		ms, err := d.elapsedMs(b.evStart, b.evEnd)
		if err != nil {
			return err
		}
		dt = time.Duration(float64(ms) * 1e6 / float64(n))
		return nil
	})
	return dt, err
}
