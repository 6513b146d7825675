package builtin

// The fused operators on the Hopper mainloop (src/cuda/wgmma_core.cuh):
// hc_up_wgmma (hc_up_f16 with its 4-stream mix as the epilogue) and
// swiglu_wgmma (swiglu_f16 as one dual-B GEMM with SwiGLU as the epilogue).
// Each is its operator, a producer (which TMA boxes make a stage), an
// epilogue and a Plan; the mainloop is gemm_wgmma's. Their epilogue
// arithmetic is epilogue_common.cuh's, the text the mma.sync families run,
// and their accumulators are reduced in the mma.sync core's order, so they
// share those families' numerics classes.

import (
	_ "embed"
	"fmt"
	. "github.com/tilefit/tilefit/kernel"
	"strings"
)

//go:embed src/cuda/hc_up_wgmma.cu
var cudaHcUpWgmmaSource string

//go:embed src/cuda/swiglu_wgmma.cu
var cudaSwigluWgmmaSource string

// Entry points of the fused wgmma families.
const (
	HcUpWgmmaEntry      = "tilefit_hc_up_wgmma"
	SwigluWgmmaEntry    = "tilefit_swiglu_wgmma"
	SwigluWgmmaActEntry = "tilefit_swiglu_wgmma_act"
)

// hcWgmmaAuxBars are hc_up_wgmma's own mbarriers: hfull[2], hempty[2]
// (XRES adds xempty); hcWgmmaMaxXRes is the most k-blocks XRES keeps.
const (
	hcWgmmaAuxBars = 4
	hcWgmmaMaxXRes = 8
	// hcWgmmaOvlMaxAcc: the most accumulators of OVL's two sets per
	// consumer thread (two of 128_160_2's 80; the consumer has 232
	// registers after setmaxnreg).
	hcWgmmaOvlMaxAcc = 160
)

// wgmmaCommonParams are the core's parameters every wgmma family has beside
// BM, BN and CONSUMERS: the pipeline, the walk, the grid and PDL.
func wgmmaCommonParams(pdlSweep ...int) []Param {
	if len(pdlSweep) == 0 {
		pdlSweep = []int{0}
	}
	return []Param{
		{Name: "STAGES", Values: []int{0, 2, 3, 4, 5, 6, 8}, Sweep: []int{0}, Doc: "shared-memory pipeline stages of BK = 64 (0: as many as fit)"},
		{Name: "RASTER", Values: []int{0, 1}, Sweep: []int{0}, Doc: "tile order: 0 GROUP tile rows at a time, 1 GROUP tile columns at a time"},
		{Name: "GROUP", Values: []int{8, 1, 2, 4, 16, 32}, Sweep: []int{8}, Doc: "tile rows (RASTER 0) or columns (RASTER 1) per group"},
		{Name: "GRID", Values: []int{132, 0, 66, 264, 128}, Sweep: []int{132}, Doc: "CTAs of the persistent grid (at most one per unit; 0: one per unit); 132 is the H200's SM count"},
		{Name: "PDL", Values: []int{0, 1}, Sweep: pdlSweep, Doc: "1: programmatic dependent launch (the launch and prologue overlap the previous kernel's tail; griddepcontrol in the kernels)"},
		wgmmaMCParam(),
		wgmmaEpiParam(),
	}
}

// hcWgmmaGeo is hc_up_wgmma's shared-memory geometry: stages of BM rows of X
// and BN rows of W (four boxes), NHB H buffers of BM·BN fp16 (2 with
// PINGPONG), and with EPI 1 the staging tiles of mixh's BN/4 columns.
func hcWgmmaGeo(p Params) wgmmaGeo {
	nhb := 1
	if p["PINGPONG"] == 1 || p["HBUF"] == 2 {
		nhb = 2
	}
	if p["HRING"] == 1 {
		nhb = 0 // the H tile rides in the ring
	}
	stage, aux := wgmmaStageBytes(p), hcWgmmaAuxBars
	xres := p["XRES"] * p["BM"] * WgmmaBK * 2
	if p["XRES"] > 0 {
		// X resident after the H buffers: a stage is only the W rows, and
		// xempty is a fifth barrier.
		stage, aux = p["BN"]*WgmmaBK*2, hcWgmmaAuxBars+1
	}
	return wgmmaGeo{stage: stage, extra: nhb*p["BM"]*p["BN"]*2 + xres, epi: wgmmaEpiBytes(p, p["BN"]/4), auxBars: aux}
}

// HcUpWgmmaXResBytes is the shared memory of XRES's resident X (XRES
// k-blocks of BM rows × 64 fp16; 0 without XRES).
func HcUpWgmmaXResBytes(p Params) int { return p["XRES"] * p["BM"] * WgmmaBK * 2 }

// hcWgmmaPrelude defines the core's WG_EXTRA_BYTES, WG_AUX_BARS and
// WG_EPI_N for hc_up_wgmma (the same as hcWgmmaGeo), with XRES n the core's
// WG_A_RES (X resident after the H buffers, at WG_A_RES_OFF; a stage is
// only W) and WG_STAGE_TX (a stage expects X's bytes too where the producer
// loads them) and a fifth barrier of its own (xempty), with HRING 1 the
// core's WG_UNIT_SLOTS (hcWgmmaRing: the H tile's ring slots, HC_HPS stream
// boxes each, and no H buffer), and for a tile wider
// than wgmma's 256 columns (BN 320: four streams of 80 mix columns) the
// core's WG_MMA_N (two halves of BN/2 columns; the family's source adds
// wgmma_part, hcWgmmaPart) and WG_MAX_ACC (hcWgmmaWideAcc accumulators per
// consumer thread); always WG_PRELOAD (its producer has stage_const, the W
// boxes, and stage_rest, X: PDL 2).
const hcWgmmaPrelude = "#define WG_PRELOAD 1\n#ifndef HBUF\n#define HBUF 1\n#endif\n#ifndef HRING\n#define HRING 0\n#endif\n#ifndef XRES\n#define XRES 0\n#endif\n#ifndef OVL\n#define OVL 0\n#endif\n#define WG_OVL (OVL)\n" +
	"#define WG_EXTRA_BYTES (((HRING) ? 0 : ((PINGPONG) || (HBUF) == 2 ? 2 : 1) * BM * BN * 2) + (XRES) * BM * 128)\n#define WG_AUX_BARS ((XRES) ? 5 : 4)\n#define WG_EPI_N (BN / 4)\n" +
	"#if XRES\n#define WG_A_RES (XRES)\n#define WG_A_RES_OFF (((PINGPONG) || (HBUF) == 2 ? 2 : 1) * BM * BN * 2)\n#define WG_STAGE_TX(prod, w, kb) ((prod).stage_tx())\n#endif\n" +
	"#if BN > 256\n#define WG_MMA_N (BN / 2)\n#define WG_MAX_ACC 160\n#endif\n" +
	hcWgmmaMinbPrelude +
	"#if HRING\n#define HC_HPS ((((BM) + (BN)) * 256 / ((BM) * (BN))) < 4 ? (((BM) + (BN)) * 256 / ((BM) * (BN))) : 4)\n#define WG_UNIT_SLOTS ((4 + HC_HPS - 1) / HC_HPS)\n#endif\n"

// MINB 2 (two CTAs per SM): the setmaxnreg targets of its one consumer and
// producer, the registers a thread starts with, and the shared memory one
// CTA may take.
const (
	// HcUpWgmmaMinb2ProducerRegs and HcUpWgmmaMinb2ConsumerRegs are the
	// setmaxnreg targets of MINB 2 (one consumer): (40 + 216)·128 = 32768
	// registers, the CTA's half of the SM's 65536.
	HcUpWgmmaMinb2ProducerRegs = 40
	HcUpWgmmaMinb2ConsumerRegs = 216
	// HcUpWgmmaMinb2Shared is the most dynamic shared memory a CTA may take
	// with two on an H200 SM: (228 KiB − 2 × 1 KiB reserved per CTA) / 2.
	HcUpWgmmaMinb2Shared = (228<<10 - 2<<10) / 2
	// hcSMRegisters is the register file of an SM (32-bit registers).
	hcSMRegisters = 65536
	// hcWgmmaMinb2MaxAcc is the most accumulators a MINB 2 consumer thread
	// may hold. Measured (docs/results/h200-fused6): ptxas refused
	// 64_256_1.minb2 (128 accumulators) with "Insufficient registers (128)
	// to compile instruction ... register target of 154 or higher": it
	// allocates the consumer's code within the 128 registers the block
	// starts with, not setmaxnreg's 216, and the wgmma needs its
	// accumulators + hcWgmmaWgmmaRegs. So at most 128 − 26 = 102, in tiles:
	// BN ≤ 192 with 64 rows (64_160_1, 80 accumulators, compiled with no
	// spills; BN 192 was not compiled on the device).
	hcWgmmaMinb2MaxAcc = 102
	hcWgmmaWgmmaRegs   = 154 - 128
)

// hcWgmmaMinbPrelude defines MINB (1 by default) and, for MINB 2, the
// core's WG_SETMAXNREG with one consumer and its targets (the constants
// above; TestHcUpWgmmaMinb checks the text).
const hcWgmmaMinbPrelude = "#ifndef MINB\n#define MINB 1\n#endif\n#if MINB == 2\n#define WG_SETMAXNREG 1\n#define WG_PRODUCER_REGS 40\n#define WG_CONSUMER_REGS 216\n#endif\n"

// HcUpWgmmaMinBlocks is the tile's MINB: the CTAs per SM its launch bound
// asks for (1 when unset).
func HcUpWgmmaMinBlocks(p Params) int { return max(p["MINB"], 1) }

// HcUpWgmmaRegs is the register budget of a tile: the registers a thread
// starts with (the launch bound's 65536 / (threads·MINB), down to a
// multiple of 8; at most 255, the most a thread may have), and with
// setmaxnreg (two consumers, or MINB 2) the producer's and consumers'
// targets; maxnreg false: no setmaxnreg (one consumer, MINB 1).
func HcUpWgmmaRegs(p Params) (entry, producer, consumer int, maxnreg bool) {
	nt := WgmmaThreads(p)
	entry = min(hcSMRegisters/(nt*HcUpWgmmaMinBlocks(p))/8*8, 255)
	switch {
	case HcUpWgmmaMinBlocks(p) == 2:
		return entry, HcUpWgmmaMinb2ProducerRegs, HcUpWgmmaMinb2ConsumerRegs, true
	case p["CONSUMERS"] > 1:
		return entry, 40, 232, true
	}
	return entry, 0, 0, false
}

// hcWgmmaShared is the dynamic shared memory of a tile's launch: the core's
// layout (hcWgmmaGeo), and with MINB 2 without the 256 bytes the core adds
// beside the 1024-byte alignment slack (its barriers sit in the slack when
// the dynamic shared memory starts on a 1024-byte boundary; the kernel
// traps if it does not).
func hcWgmmaShared(p Params) int {
	b := hcWgmmaGeo(p).shared(p)
	if HcUpWgmmaMinBlocks(p) == 2 {
		b -= wgmmaBarBytes
	}
	return b
}

// hcWgmmaMinb2Stages is the most stages a MINB 2 tile fits beside its own
// bytes (H buffers, staging tiles) in HcUpWgmmaMinb2Shared.
func hcWgmmaMinb2Stages(p Params) int {
	g := hcWgmmaGeo(p)
	return min(g.maxStages(), (HcUpWgmmaMinb2Shared-wgmmaAlign-g.extra-g.epi)/g.stage)
}

// hcWgmmaPart is the wgmma_part the prelude's WG_MMA_N needs: the m64n160k16
// wrapper, compiled only for the wide tile.
func hcWgmmaPart() string {
	return wgmmaPartWrapper(hcWgmmaWideBN/2, fmt.Sprintf("BN > 256 && WG_MMA_N == %d", hcWgmmaWideBN/2))
}

// hcWgmmaWideBN is hc_up_wgmma's one tile width past 256 (two wgmma halves
// of 160): at M 512 a 128×320 tile makes 4 × 32 = 128 units, one per CTA on
// the H200's 132 SMs, where 128×160 makes 256 (two per CTA).
const (
	hcWgmmaWideBN  = 320
	hcWgmmaWideAcc = 160
)

// wgmmaPartWrapper is the core's generated m64nNk16 wrapper (wgmmaOps) for
// one N, renamed wgmma_part (the core's WG_MMA_N hook) with u64 spelt out
// (it precedes the core) and compiled only where cond holds.
func wgmmaPartWrapper(n int, cond string) string {
	ops := wgmmaOps()
	begin := fmt.Sprintf("#if BN == %d\n", n)
	i := strings.Index(ops, begin)
	if i < 0 {
		panic(fmt.Sprintf("wgmmaOps has no wrapper for N = %d", n))
	}
	body := ops[i+len(begin):]
	body = body[:strings.Index(body, "#endif\n")]
	body = strings.Replace(body, "void wgmma(float *d, u64 da, u64 db)", "void wgmma_part(float *d, unsigned long long da, unsigned long long db)", 1)
	return "#if " + cond + "\n" + body + "#endif\n"
}

// CUDAHcUpWgmma returns the CUDA family hc_up_wgmma (sm_90a): the operator
// hc_up_f16 on the Hopper mainloop. A tile is BM rows × BN/4 mix columns;
// each stage holds X's BM rows and the four streams' W rows (four TMA boxes,
// rows c·S + d0 + [0, BN/4)), so one wgmma m64nBNk16 computes all four
// streams of the tile's mix columns and the epilogue mixes them in
// registers (mix4 of epilogue_common.cuh, the mma.sync family's arithmetic,
// on accumulators reduced in its order): numerics class hc_up_f16, bitwise
// equal to that family's tiles. The producer loads each unit's H tile by TMA
// into shared memory (overlapping the k loop; HBUF=2 double-buffers it and
// loads it a unit ahead); mixh is stored as
// fp16 pairs, BOUND=1 adds the fp32 mixed. Needs K % 8 == 0 and S % 8 == 0
// (TMA row strides); the Plan refuses other shapes.
//
// Kernel: tilefit_hc_up_wgmma(tmX, tmW, tmH, mixh, [mixed], M, S, K) on a
// persistent grid of min(GRID, tiles) CTAs of (CONSUMERS+1)·128 threads.
func CUDAHcUpWgmma() *Family {
	params := []Param{
		{Name: "BM", Values: []int{128, 64, 256}, Sweep: []int{128, 64}, Doc: "rows of mix per tile (a multiple of 64·CONSUMERS)"},
		{Name: "BN", Values: []int{256, 128, 160, 64, 96, 192, 224, 32, hcWgmmaWideBN}, Sweep: []int{128, 160}, Doc: "columns of Y4 per tile: four streams of BN/4 mix columns (a multiple of 32; 160 balances the 132 SMs at M 256 and 1024; 320, two wgmma halves of 160 with 64 rows per consumer, makes one unit per CTA at M 512, but measured slower there than 128_160_2's two: 10.7 µs with HRING, 13.2 without, against 9.5)"},
		{Name: "CONSUMERS", Values: []int{2, 1}, Sweep: []int{2, 1}, Doc: "consumer warpgroups (each owns BM/CONSUMERS rows)"},
		{Name: "PINGPONG", Values: []int{0, 1}, Sweep: []int{0, 1}, Doc: "1: the two consumers own alternate whole tiles (one's epilogue overlaps the other's k loop; an H buffer each); at most 128 accumulators a consumer: 128_160_2.pingpong1 (160, built and measured in docs/results/h200-fused8, then removed) was bitwise and unserialised but slower at every M (10.95 µs at M 512 against 128_160_2's 9.51: its two H buffers leave 4 stages)"},
		{Name: "BOUND", Values: []int{0, 1}, Sweep: []int{0, 1}, Doc: "1: also write the fp32 mix (operand mixed)"},
		{Name: "HBUF", Values: []int{1, 2}, Sweep: []int{1}, Doc: "H buffers in shared memory: 1, loaded as the unit's k loop starts; 2, loaded before the unit's stages (overlapping the previous unit's k loop too); PINGPONG always has 2"},
		{Name: "HPRE", Values: []int{0, 1}, Sweep: []int{0}, Doc: "1 (two H buffers: PINGPONG or HBUF=2): unit 0's H tile after its stages, a later unit's before its stages where its buffer needs no wait (every unit with HBUF=2, the second with PINGPONG): the second H tile overlaps the first unit's k loop"},
		{Name: "HSW", Values: []int{1, 0}, Sweep: []int{1}, Doc: "1: H tiles swizzled in shared memory where their rows are 32, 64 or 128 bytes (BN 64, 128, 256; other rows are conflict-free or nearly so unswizzled); 0: never"},
		{Name: "HRING", Values: []int{0, 1}, Sweep: []int{0}, Doc: "1 (HBUF 1, no PINGPONG or HPRE): each unit's H tile rides in the stage ring after the unit's k-blocks (ceil(4/boxes per stage) slots of its own, filled as the ring has room, released by the epilogue) instead of an H buffer, whose bytes become stages; never changes the bits"},
		{Name: "MINB", Values: []int{1, 2}, Sweep: []int{1}, Doc: "CTAs per SM the launch bound asks for: 2 (one consumer, an explicit STAGES that fits two CTAs' shared memory, GRID 264 or 0 to fill them) compiles __launch_bounds__(NT, 2) with setmaxnreg targets producer 40 / consumer 216 (half the register file), so one CTA's prologue and epilogue overlap the other's k loop; never changes the bits. Two CTAs were resident on the H200 (occupancy 2, ncu: 1 wave of 264) but every MINB 2 tile was slower than the cell's best: at M 512 64_160_1.hring1.minb2.stages4.grid264 10.76 µs and 64_160_1.minb2.stages3.grid264 11.10 against 128_160_2's 9.46 (64_160_1 MINB 1: 10.97), at M 1983 64_128_1.minb2.stages4.grid264 33.95 against 128_128_2.pingpong1's 29.58 (docs/results/h200-fused6): not swept"},
		{Name: "HPF", Values: []int{0, 1, 2}, Sweep: []int{0}, Doc: "1: the producer prefetches each unit's H tile into L2 (cp.async.bulk.prefetch.tensor) before the unit's stages, so an H tile loaded after them (HBUF 1: a CTA's second unit waits for the first's epilogue) comes from L2; never changes the bits. Measured slower on the H200 (128_160_2 at M 512: 13.6 µs against 9.5; the prefetch holds up the unit's stage copies): not swept. 2 (no MC): the CTA's next unit's H tile, prefetched after this unit's stages and H load; measured slower too (128_160_2.hpf2 at M 512: 11.50 µs against 9.46, M 1024 23.53 against 19.75; docs/results/h200-fused7): not swept"},
		{Name: "OVL", Values: []int{0, 1, 2}, Sweep: []int{0}, Doc: "n > 0 (no PINGPONG, HRING, MC, XRES, EPI, MINB 2): each consumer keeps two accumulator sets and issues the CTA's next unit's first n k-blocks into the other set before a unit's epilogue, so the epilogue runs while the tensor cores work on the next unit (the core's WG_OVL); 2·(rows per consumer/64)·BN/2 accumulators at most 160; never changes the bits. Measured slower: in docs/results/h200-fused7 ptxas serialised every wgmma of the kernel (C7518: a wait it inserted on the consumer's divergent exit path, where the next unit's group might still be outstanding; the core now waits there itself); unserialised (one DEPBAR gsb0 1 per k-block) still slower, 128_160_2.ovl1 10.08 µs at M 512 against 9.49, because the epilogue now waits for the next unit's first stage, whose data is rarely there at the end of a k loop (docs/results/h200-fused8): not swept"},
		{Name: "XRES", Values: []int{0, 5, 4, 6}, Sweep: []int{0}, Doc: "n > 0 (no PINGPONG, HRING or MC; K ≤ 64·n, the Plan refuses more): X's BM rows × K resident in shared memory after the H buffers, a stage only the W rows; a CTA's unit with the same tile row as its previous one loads no X (at M 512, 128-row tiles on 132 CTAs: every second unit); the producer waits for the consumers' k loop (xempty) before a new tile row overwrites X; never changes the bits. Measured a tie at M 512 (128_160_2.xres5 9.47 µs against 128_160_2's 9.46) and slower at M 1024 (20.69 against 19.75, the tile row changes there) (docs/results/h200-fused7): not swept"},
	}
	return &Family{
		Name:       "hc_up_wgmma",
		Backend:    "cuda",
		Doc:        "hc_up with its fused 4-stream epilogue on the Hopper mainloop (sm_90a): wgmma m64nBNk16 (k ascending in 16s) over TMA stages of X and the four streams' W rows, 1 producer + CONSUMERS consumer warpgroups, persistent grid; H by TMA into shared memory overlapping the k loop, the mix in registers; needs K % 8 == 0, S % 8 == 0",
		Source:     cudaWgmmaFusedSource(hcWgmmaPrelude+hcWgmmaPart(), cudaHcUpWgmmaSource, "hc_up_wgmma.cu"),
		SourceFile: "hc_up_wgmma.cu",
		Params:     append(params, wgmmaPDL(wgmmaCommonParams(0, 1))...),
		Positional: []string{"BM", "BN", "CONSUMERS"},
		Reference:  "128_128_2",
		Restrict:   hcWgmmaRestrict,
		// The staged epilogue for mixh (EPI 1): only 128_128_2.epi1 won
		// cells on the H200 (M 2048, and within 0.3 % at 1983); the EPI 1
		// twins of 128_160_2 and 128_128_2.pingpong1 were 10–25 % slower
		// than those tiles (fewer stages with K = 320; 16-byte box rows at
		// BN 160), 64_160_1.epi1 and 128_160_2.hbuf2.hpre1.epi1 never near
		// a cell's best (docs/results/h200-epi).
		// Not in the defaults: HRING 1 (the H tile in the stage ring) on
		// 128_128_2 was 3–4 % faster than 128_128_2 from M 512 up and the
		// fastest median at M 2048 (29.99 µs against 128_128_2.pingpong1's
		// 30.05, a tie) in docs/results/h200-fused5; Extra holds only the
		// staged-epilogue twins (TestWgmmaEpiFits).
		Extra: []string{"128_128_2.epi1"},
		// With --const-weights (PDL 2: the first stages' W before
		// griddepcontrol.wait), the three fastest PDL 2 tiles of
		// docs/results/h200-fused9: 128_128_2.pingpong1.pdl2 at M 512
		// (0.958 of 128_160_2 in the same rounds), 128_128_2.pdl2.epi1 from
		// M 1024 up (0.819–0.826), 128_160_2.pdl2 (0.990 at M 512); and
		// 128_160_2.pdl2.wpre2 (the first two stages' W only), 0.906 of
		// 128_160_2.pdl2 at M 256, the cell's fastest (docs/results/
		// h200-decode8 call 6; WPRE was 4–10 % slower at M 512).
		ConstWeights:        []string{"128_128_2.pingpong1.pdl2", "128_128_2.pdl2.epi1", "128_160_2.pdl2", "128_160_2.pdl2.wpre2"},
		AssumesConstWeights: pdl2,
		Operator:            HcUpF16(),
		Plan:                hcWgmmaPlan,
		// One class with the mma.sync family hc_up_f16 (whose class is its
		// name): the same accumulator bits, the same mix4.
		Numerics: func(Params) string { return "hc_up_f16" },
	}
}

// wgmmaPDL2Doc is PDL 2's doc, for every family whose producer has
// stage_const and stage_rest (the core's WG_PRELOAD).
const wgmmaPDL2Doc = "2 (no MC): also copy the weight rows of the CTA's first stages (as many as the ring holds) before the wait, the activations after it — valid only when the kernel before does not write the weights (constant during inference: --const-weights); never changes the bits"

// wgmmaPDL gives a fused family's PDL parameter the value 2 (not swept):
// the weights of the ring's first fill are copied before
// griddepcontrol.wait (the core's WG_PRELOAD), and adds WPRE (PDL 2's
// first n stages only; wgmmaCheck refuses it without PDL 2).
func wgmmaPDL(common []Param) []Param {
	for i := range common {
		if common[i].Name == "PDL" {
			common[i].Values = []int{0, 1, 2}
			common[i].Doc = "1: programmatic dependent launch (the launch and prologue overlap the previous kernel's tail; griddepcontrol in the kernels); " + wgmmaPDL2Doc
		}
	}
	return append(common, Param{Name: "WPRE", Values: []int{0, 1, 2, 4}, Sweep: []int{0}, Doc: "with PDL 2: the stages whose weight rows are copied before the wait (0: as many as the ring holds; n: the first n), so that the activations of the first stage, copied after the wait, queue behind fewer preloaded bytes (gemm_decode's PRE); never changes the bits"})
}

func hcWgmmaRestrict(p Params) error {
	if p["PDL"] == 2 && p["XRES"] != 0 {
		return fmt.Errorf("PDL=2 copies the first stages' W boxes before the wait into the stages, X's resident rows after it in another place: needs XRES 0")
	}
	// A wide tile (BN > 256) is checked by the core's rules as its wgmma
	// halves (BN/2 columns each) with its own geometry, then by its own
	// accumulator budget.
	q := p
	if bn := p["BN"]; bn > 256 {
		if bn != hcWgmmaWideBN {
			return fmt.Errorf("BN = %d: past 256 only %d (two wgmma halves of %d)", bn, hcWgmmaWideBN, hcWgmmaWideBN/2)
		}
		q = p.Clone()
		q["BN"] = bn / 2
		if p["EPI"] != 0 {
			return fmt.Errorf("BN = %d stores mixh directly (EPI 0): its two stages beside the H buffer leave no room worth staging", bn)
		}
		if acc := wgmmaConsumerRows(p) / 64 * bn / 2; acc > hcWgmmaWideAcc {
			return fmt.Errorf("BN = %d: %d fp32 accumulators per consumer thread ((rows per consumer/64)·BN/2), more than %d (64 rows per consumer)", bn, acc, hcWgmmaWideAcc)
		}
	}
	if err := wgmmaCheck(q, hcWgmmaGeo(p)); err != nil {
		return err
	}
	if err := hcWgmmaMinbRestrict(p); err != nil {
		return err
	}
	if h := p["HPF"]; h < 0 || h > 2 {
		return fmt.Errorf("HPF = %d (want 0, 1 or 2)", h)
	}
	if p["HPF"] == 2 && p["MC"] != 0 {
		return fmt.Errorf("HPF=2 prefetches the CTA's next unit's H tile by the walk without clusters: needs MC 0")
	}
	switch o := p["OVL"]; {
	case o < 0 || o > 2:
		return fmt.Errorf("OVL = %d (want 0, 1 or 2)", o)
	case o > 0 && (p["PINGPONG"] != 0 || p["HRING"] != 0 || p["MC"] != 0 || p["XRES"] != 0 || p["EPI"] != 0 || HcUpWgmmaMinBlocks(p) != 1):
		return fmt.Errorf("OVL=%d overlaps a unit's epilogue with the next unit's k loop in one consumer: needs PINGPONG 0, HRING 0, MC 0, XRES 0 (the next unit's X could wait for this epilogue), EPI 0, MINB 1", o)
	case o > 0 && 2*wgmmaConsumerRows(p)/64*p["BN"]/2 > hcWgmmaOvlMaxAcc:
		return fmt.Errorf("OVL=%d: two accumulator sets of %d, more than %d per consumer thread", o, wgmmaConsumerRows(p)/64*p["BN"]/2, hcWgmmaOvlMaxAcc)
	}
	switch x := p["XRES"]; {
	case x < 0 || x > hcWgmmaMaxXRes:
		return fmt.Errorf("XRES = %d (want 0..%d k-blocks)", x, hcWgmmaMaxXRes)
	case x > 0 && (p["PINGPONG"] != 0 || p["HRING"] != 0 || p["MC"] != 0):
		return fmt.Errorf("XRES=%d keeps one X tile resident for the CTA's consecutive units: needs PINGPONG 0, HRING 0, MC 0", x)
	}
	switch r := p["HRING"]; {
	case r != 0 && r != 1:
		return fmt.Errorf("HRING = %d (want 0 or 1)", r)
	case r == 1 && (p["PINGPONG"] != 0 || p["HBUF"] != 1 || p["HPRE"] != 0):
		return fmt.Errorf("HRING=1 puts the H tile in the stage ring: needs PINGPONG 0, HBUF 1, HPRE 0")
	case r == 1:
		if _, slots := hcWgmmaRing(p); hcWgmmaGeo(p).stages(p) < slots {
			return fmt.Errorf("HRING=1: %d stages hold fewer than the H tile's %d slots", hcWgmmaGeo(p).stages(p), slots)
		}
	}
	bn := p["BN"]
	if bn%32 != 0 {
		return fmt.Errorf("BN = %d is not a multiple of 32 (four streams of a multiple of 8 mix columns)", bn)
	}
	if p["PINGPONG"] == 1 && p["HBUF"] != 1 {
		return fmt.Errorf("PINGPONG=1 has an H buffer per consumer: leave HBUF at 1")
	}
	if hp := p["HPRE"]; hp != 0 && hp != 1 {
		return fmt.Errorf("HPRE = %d (want 0 or 1)", hp)
	}
	if p["HPRE"] == 1 && p["PINGPONG"] != 1 && p["HBUF"] != 2 {
		return fmt.Errorf("HPRE=1 needs two H buffers (PINGPONG=1 or HBUF=2)")
	}
	return nil
}

// hcWgmmaMinbRestrict refuses a MINB 2 tile that cannot have two CTAs on an
// SM: two consumers (384 threads start at 80 registers; after the
// producer's 40 a consumer thread keeps 96, too few beside 80 or more
// accumulators and the mix), more than hcWgmmaMinb2MaxAcc accumulators
// (ptxas cannot compile their wgmma in 128 registers: BN 256 and the wide
// tile), STAGES 0 (as many as fit one CTA's 227 KiB), or shared memory
// past HcUpWgmmaMinb2Shared.
func hcWgmmaMinbRestrict(p Params) error {
	mb := p["MINB"]
	if mb == 0 || mb == 1 {
		return nil
	}
	if mb != 2 {
		return fmt.Errorf("MINB = %d (want 1 or 2)", mb)
	}
	if c := p["CONSUMERS"]; c != 1 {
		return fmt.Errorf("MINB 2 needs CONSUMERS 1: %d consumers make %d threads, which start at %d registers with two CTAs per SM (too few for the accumulators beside the producer)", c, WgmmaThreads(p), hcSMRegisters/(2*WgmmaThreads(p))/8*8)
	}
	if acc := wgmmaConsumerRows(p) / 64 * p["BN"] / 2; acc > hcWgmmaMinb2MaxAcc {
		return fmt.Errorf("MINB 2: BN = %d has %d accumulators per consumer thread, more than %d: ptxas compiles the kernel within the %d registers a thread starts with, and a wgmma of n accumulators needs about n + %d (64_256_1: \"Insufficient registers (128)\", 154 needed)", p["BN"], acc, hcWgmmaMinb2MaxAcc, hcSMRegisters/(2*WgmmaThreads(p))/8*8, hcWgmmaWgmmaRegs)
	}
	most := hcWgmmaMinb2Stages(p)
	if p["STAGES"] == 0 {
		return fmt.Errorf("MINB 2: give STAGES (0 means as many as fit one CTA's %d bytes; at most %d fit two CTAs per SM)", CUDAMaxSharedBytes, most)
	}
	if b := hcWgmmaShared(p); b > HcUpWgmmaMinb2Shared {
		return fmt.Errorf("MINB 2: %d stages take %d bytes of shared memory per CTA, more than the %d two CTAs per SM allow (at most %d stages)", p["STAGES"], b, HcUpWgmmaMinb2Shared, most)
	}
	return nil
}

// HcUpWgmmaHSwizzle is the TMA swizzle code of hc_up_wgmma's H tiles: rows
// of BN/4 fp16 = BN/2 bytes, swizzled over that span (1: 32 B, 2: 64 B,
// 3: 128 B) with HSW=1, none (0) otherwise.
func HcUpWgmmaHSwizzle(p Params) int {
	if p["HSW"] != 1 {
		return 0
	}
	switch p["BN"] / 2 {
	case 32:
		return 1
	case 64:
		return 2
	case 128:
		return 3
	}
	return 0
}

// hcWgmmaRing is HRING 1's layout of a unit's H tile in the stage ring (the
// prelude's HC_HPS and WG_UNIT_SLOTS): hps stream boxes of BM × BN/4 fp16
// per slot, as many as a stage of (BM + BN)·128 bytes holds, at most 4, in
// slots = ceil(4 / hps) slots.
func hcWgmmaRing(p Params) (hps, slots int) {
	hps = min(4, (p["BM"]+p["BN"])*256/(p["BM"]*p["BN"]))
	return hps, ceilDiv(4, hps)
}

// hcWgmmaPlan is one launch of tilefit_hc_up_wgmma(tmX, tmW, tmH, mixh,
// [mixed], M, S, K): tmX over X (box {64, BM}), tmW over W as [4S, K] (box
// {64, BN/4}), tmH over H as {S, 4, M} (box {BN/4, 1, BM}).
func hcWgmmaPlan(p Params, d Dims) (Plan, error) {
	m, s, k := d["M"], d["S"], d["K"]
	if m < 1 || s < 1 || k < 1 {
		return Plan{}, fmt.Errorf("hc_up_wgmma needs M, S, K ≥ 1 for its tensor maps; got %d, %d, %d", m, s, k)
	}
	if k%8 != 0 || s%8 != 0 {
		return Plan{}, fmt.Errorf("hc_up_wgmma needs K %% 8 == 0 and S %% 8 == 0 (TMA row strides of a multiple of 16 bytes); K = %d, S = %d", k, s)
	}
	if x := p["XRES"]; x > 0 && ceilDiv(k, WgmmaBK) > x {
		return Plan{}, fmt.Errorf("hc_up_wgmma XRES=%d holds K ≤ %d resident; K = %d", x, x*WgmmaBK, k)
	}
	td := p["BN"] / 4
	grid, cluster := wgmmaWalk(p, ceilDiv(m, p["BM"]), ceilDiv(s, td), 1)
	bx, _ := wgmmaBoxes(p) // MC 1 shares W by streams, its box stays BN/4
	h := &TensorMap{Buffer: "H", DType: F16, Dims: []int64{int64(s), 4, int64(m)}, Strides: []int64{int64(s) * 2, int64(s) * 8},
		Box: []int{td, 1, p["BM"]}, Swizzle: HcUpWgmmaHSwizzle(p), L2Promotion: 3}
	args := []Arg{
		{Kind: ArgTensorMap, Name: "X", Map: wgmmaMap("X", m, k, bx)},
		{Kind: ArgTensorMap, Name: "W", Map: wgmmaMap("W", 4*s, k, td)},
		{Kind: ArgTensorMap, Name: "H", Map: h},
	}
	if p["EPI"] == 1 {
		args = append(args, Arg{Kind: ArgTensorMap, Name: "mixh", Map: wgmmaEpiMap("mixh", p, m, s, td)})
	}
	args = append(args, Arg{Kind: ArgOperand, Name: "mixh"})
	if p["BOUND"] != 0 {
		args = append(args, Arg{Kind: ArgOperand, Name: "mixed"})
	}
	args = append(args, DimArgs("M", "S", "K")...)
	return Plan{Launches: []Launch{{
		Entry:   HcUpWgmmaEntry,
		Grid:    [3]int{grid, 1, 1},
		Cluster: cluster,
		Block:   [3]int{WgmmaThreads(p), 1, 1},
		Shared:  hcWgmmaShared(p),
		PDL:     p["PDL"] >= 1,
		Args:    args,
	}}}, nil
}

// swigluWgmmaGeo is swiglu_wgmma's: stages of BM rows of X and BN/2 rows of
// each weight, and with EPI 1 the staging tiles of h's BN/2 columns.
func swigluWgmmaGeo(p Params) wgmmaGeo {
	return wgmmaGeo{stage: wgmmaStageBytes(p), epi: wgmmaEpiBytes(p, p["BN"]/2)}
}

// swigluWgmmaPrelude defines the core's WG_EPI_N for swiglu_wgmma: a tile's
// BN/2 output columns.
const swigluWgmmaPrelude = "#define WG_EPI_N (BN / 2)\n#define WG_PRELOAD 1"

// CUDASwigluWgmma returns the CUDA family swiglu_wgmma (sm_90a): the
// operator swiglu_f16 as one dual-B GEMM on the Hopper mainloop. A tile is
// BM rows × BN/2 output columns; each stage holds X's BM rows, then BN/2
// rows of Wg and the same BN/2 rows of Wu (three TMA boxes), so one wgmma
// m64nBNk16 computes g and u of the tile's columns into one accumulator set
// and the thread holding g of a column holds its u: SwiGLU in registers
// (act of epilogue_common.cuh, the mma.sync family's arithmetic, on
// accumulators reduced in its order): numerics class "fused", bitwise equal
// to swiglu_f16's fused tiles. KSPLIT > 0 splits K into chunks of 64·KSPLIT
// (set by K, never by M): chunk partials of g and u go to fp32 scratch and a
// second kernel adds them in chunk order and applies act — class
// "fused/splitkC", C = 64·KSPLIT, every tile of one C bitwise equal and
// batch-invariant. Needs K % 8 == 0.
//
// Kernels: tilefit_swiglu_wgmma(tmX, tmWg, tmWu, h | P, M, N, K) on a
// persistent grid of min(GRID, units) CTAs; with KSPLIT > 0 then
// tilefit_swiglu_wgmma_act(P, h, M, N, chunks).
func CUDASwigluWgmma() *Family {
	params := []Param{
		{Name: "BM", Values: []int{128, 64, 256}, Sweep: []int{128, 64}, Doc: "rows of h per tile (a multiple of 64·CONSUMERS)"},
		{Name: "BN", Values: []int{160, 128, 256, 80, 64, 96, 192, 224, 32, 48}, Sweep: []int{160, 128, 80, 64}, Doc: "columns of the dual GEMM per tile: BN/2 of g and the same BN/2 of u (a multiple of 16)"},
		{Name: "CONSUMERS", Values: []int{2, 1}, Sweep: []int{2, 1}, Doc: "consumer warpgroups (each owns BM/CONSUMERS rows)"},
		{Name: "PINGPONG", Values: []int{0, 1}, Sweep: []int{0}, Doc: "1: the two consumers own alternate whole tiles"},
		{Name: "KSPLIT", Values: []int{0, 10, 20, 5, 40}, Sweep: []int{0, 20}, Doc: "K chunk in k-blocks of 64 (0: K not split): chunk partials of g and u into fp32 scratch, a second kernel adds them in chunk order and applies SwiGLU; numerics class fused/splitkC with C = 64·KSPLIT"},
	}
	return &Family{
		Name:       "swiglu_wgmma",
		Backend:    "cuda",
		Doc:        "SwiGLU as one dual-B GEMM on the Hopper mainloop (sm_90a): each stage holds X's rows and the same rows of Wg and Wu, one wgmma m64nBNk16 (k ascending in 16s) computes g and u, silu(g)·u in registers; KSPLIT > 0: K chunks (fixed by K) into fp32 scratch + a reduce-and-act kernel; needs K % 8 == 0",
		Source:     cudaWgmmaFusedSource(swigluWgmmaPrelude, cudaSwigluWgmmaSource, "swiglu_wgmma.cu"),
		SourceFile: "swiglu_wgmma.cu",
		Params:     append(params, wgmmaPDL(wgmmaCommonParams(0, 1))...),
		Positional: []string{"BM", "BN", "CONSUMERS"},
		Reference:  "128_160_2",
		Restrict:   swigluWgmmaRestrict,
		// The staged epilogue for h (EPI 1) where it won on the H200:
		// 128_160_2.pdl1.epi1 at M 2048 (2.4 % faster than its EPI 0
		// twin), 64_80_1.pdl1.epi1 in the fused class at M 256 and 512
		// (docs/results/h200-epi); 128_80_2 and 128_128_2's twins lost.
		Extra: []string{"128_160_2.pdl1.epi1", "64_80_1.pdl1.epi1"},
		// With --const-weights: PDL 2 with only the first two stages'
		// weights before the wait, 0.987 of the whole first fill and of
		// PDL 1 at M 1983, 0.985 at M 2048, in the same 24 rounds
		// (docs/results/h200-decode8 call 6); the whole first fill tied
		// PDL 1 (h200-fused9 call 2).
		ConstWeights:        []string{"128_160_2.pdl2.wpre2"},
		Operator:            SwigluF16(),
		Plan:                swigluWgmmaPlan,
		Numerics:            SwigluWgmmaNumerics,
		AssumesConstWeights: pdl2,
	}
}

// SwigluWgmmaNumerics is the numerics class of a swiglu_wgmma tile: "fused"
// (swiglu_f16's fused class) when K is not split, "fused/splitkC" with C =
// 64·KSPLIT otherwise.
func SwigluWgmmaNumerics(p Params) string {
	if ks := p["KSPLIT"]; ks > 0 {
		return fmt.Sprintf("fused/splitk%d", ks*WgmmaBK)
	}
	return "fused"
}

func swigluWgmmaRestrict(p Params) error {
	if err := wgmmaCheck(p, swigluWgmmaGeo(p)); err != nil {
		return err
	}
	if bn := p["BN"]; bn%16 != 0 {
		return fmt.Errorf("BN = %d is not a multiple of 16 (g and u of a multiple of 8 columns)", bn)
	}
	if p["KSPLIT"] < 0 {
		return fmt.Errorf("KSPLIT = %d (want ≥ 0)", p["KSPLIT"])
	}
	if p["EPI"] == 1 && p["KSPLIT"] > 0 {
		return fmt.Errorf("EPI 1 stages h: with KSPLIT > 0 the kernel writes fp32 partials")
	}
	return nil
}

// swigluWgmmaPlan is tilefit_swiglu_wgmma(tmX, tmWg, tmWu, out, M, N, K)
// (tmX box {64, BM}, tmWg and tmWu box {64, BN/2}); out is h, or with
// KSPLIT > 0 the fp32 scratch P [chunks][M][2N], followed by
// tilefit_swiglu_wgmma_act(P, h, M, N, chunks).
func swigluWgmmaPlan(p Params, d Dims) (Plan, error) {
	m, n, k := d["M"], d["N"], d["K"]
	if m < 1 || n < 1 || k < 1 {
		return Plan{}, fmt.Errorf("swiglu_wgmma needs M, N, K ≥ 1 for its tensor maps; got %d, %d, %d", m, n, k)
	}
	if k%8 != 0 {
		return Plan{}, fmt.Errorf("swiglu_wgmma needs K %% 8 == 0 (TMA row strides of a multiple of 16 bytes); K = %d", k)
	}
	tn := p["BN"] / 2
	chunks := WgmmaChunks(p, k)
	grid, cluster := wgmmaWalk(p, ceilDiv(m, p["BM"]), ceilDiv(n, tn), chunks)
	bx, _ := wgmmaBoxes(p) // MC 1 shares the weights by box (Wg, Wu), whose boxes stay BN/2
	out := Arg{Kind: ArgOperand, Name: "h"}
	split := p["KSPLIT"] > 0
	if split {
		if int64(m)*int64(n) >= 1<<31 {
			return Plan{}, fmt.Errorf("swiglu_wgmma with KSPLIT needs M·N < 2^31 (32-bit indices of its reduce kernel); M·N = %d", int64(m)*int64(n))
		}
		out = Arg{Kind: ArgScratch, Name: "P"}
	}
	args := []Arg{
		{Kind: ArgTensorMap, Name: "X", Map: wgmmaMap("X", m, k, bx)},
		{Kind: ArgTensorMap, Name: "Wg", Map: wgmmaMap("Wg", n, k, tn)},
		{Kind: ArgTensorMap, Name: "Wu", Map: wgmmaMap("Wu", n, k, tn)},
	}
	if p["EPI"] == 1 {
		args = append(args, Arg{Kind: ArgTensorMap, Name: "h", Map: wgmmaEpiMap("h", p, m, n, tn)})
	}
	args = append(args, out, Arg{Kind: ArgDim, Name: "M"}, Arg{Kind: ArgDim, Name: "N"}, Arg{Kind: ArgDim, Name: "K"})
	pl := Plan{Launches: []Launch{{
		Entry:   SwigluWgmmaEntry,
		Grid:    [3]int{grid, 1, 1},
		Cluster: cluster,
		Block:   [3]int{WgmmaThreads(p), 1, 1},
		Shared:  swigluWgmmaGeo(p).shared(p),
		PDL:     p["PDL"] >= 1,
		Args:    args,
	}}}
	if split {
		work := m * n
		if n%4 == 0 {
			work /= 4
		}
		pl.Scratch = []Scratch{{Name: "P", DType: F32, Elems: chunks * m * 2 * n}}
		pl.Launches = append(pl.Launches, Launch{
			Entry: SwigluWgmmaActEntry,
			Grid:  [3]int{ElementwiseGrid(work), 1, 1},
			Block: [3]int{256, 1, 1},
			PDL:   p["PDL"] >= 1,
			Args: []Arg{
				{Kind: ArgScratch, Name: "P"}, {Kind: ArgOperand, Name: "h"},
				{Kind: ArgDim, Name: "M"}, {Kind: ArgDim, Name: "N"}, {Kind: ArgInt, Value: int64(chunks)},
			},
		})
	}
	return pl, nil
}

// ElementwiseGrid is the grid of a grid-stride elementwise kernel of
// 256-thread blocks over work items: one item per thread up to 8 blocks per
// SM of the H200's 132 (enough resident warps to keep memory busy), at
// least 1.
func ElementwiseGrid(work int) int { return max(1, min(ceilDiv(work, 256), 132*8)) }
