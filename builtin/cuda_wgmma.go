package builtin

import (
	_ "embed"
	"fmt"
	. "github.com/tilefit/tilefit/kernel"
)

//go:embed src/cuda/wgmma_core.cuh
var cudaWgmmaCore string

//go:embed src/cuda/gemm_wgmma.cu
var cudaGemmWgmmaSource string

// wgmmaCore is src/cuda/wgmma_core.cuh, the Hopper mainloop every wgmma
// family is built on (TMA producer, mbarrier ring, consumer warpgroups,
// persistent grouped walk, PDL, split K; its epilogue a hook).
func wgmmaCore() srcFile { return srcFile{"wgmma_core.cuh", cudaWgmmaCore} }

// gemm_wgmma constants (builtin/src/cuda/gemm_wgmma.cu has the same).
const (
	// WgmmaBK is the K per pipeline stage: 64 fp16 = 128 bytes, one
	// 128-byte swizzle row.
	WgmmaBK = 64
	// wgmmaBarBytes is the shared memory before the stages (mbarriers);
	// wgmmaAlign the slack to put the stages on a 1024-byte boundary.
	wgmmaBarBytes = 256
	wgmmaAlign    = 1024
	// WgmmaMaxAccumulators is the most fp32 accumulators a consumer thread
	// holds (MW·BN/2): with 232 registers after setmaxnreg, 128 leave room
	// for addresses and descriptors.
	WgmmaMaxAccumulators = 128
	// WgmmaMaxFoldRegisters is the most fp32 registers of accumulators and
	// folded sums a KFOLD consumer thread holds (2·MW·BN/2).
	WgmmaMaxFoldRegisters = 168
	// WgmmaEntry is the kernel's symbol.
	WgmmaEntry = "tilefit_gemm_wgmma"
)

// CUDAGemmWgmma returns the CUDA family gemm_wgmma (sm_90a): Y[M,N] =
// X[M,K]·W[N,K]ᵀ with X (M×K) and W (N×K) row-major fp16 and Y row-major
// fp32 or fp16 (Y_DTYPE), fp32 accumulation with wgmma.mma_async
// m64nBNk16 on operands that TMA copies into 128-byte swizzled shared memory
// through a STAGES-deep full/empty mbarrier pipeline; one producer
// warpgroup and CONSUMERS consumer warpgroups (setmaxnreg), a persistent
// grid of GRID CTAs walking BM×BN tiles in a grouped order (RASTER, GROUP).
//
// Every output element is reduced as acc = 0; acc = mma(acc, 16 k) for
// k = 0, 16, 32, ... < K, K never split: the order of gemm_f16, so tiles of
// both families are expected to be bitwise equal (one numerics class), and
// every tile's rows do not depend on M (batch invariance).
//
// TMA needs row strides that are multiples of 16 bytes: K % 8 == 0; the
// Plan refuses other shapes.
//
// SWAP 1 runs the kernel on the transposed problem (Yᵀ = W·Xᵀ: BM weight
// rows × BN tokens per tile, stored transposed) for small M; PDL 1 launches
// every kernel of the call with programmatic dependent launch. Neither
// changes the numerics class.
func CUDAGemmWgmma() *Family {
	return &Family{
		Name:       "gemm_wgmma",
		Backend:    "cuda",
		Doc:        "Y[M,N] = X[M,K]·W[N,K]^T, fp16 in, fp32 accumulate, sm_90a: wgmma m64nBNk16 (k ascending in 16s) on TMA-loaded 128-byte swizzled stages, STAGES-deep mbarrier pipeline, 1 producer + CONSUMERS consumer warpgroups (setmaxnreg), persistent grid of GRID CTAs in a grouped tile order; needs K % 8 == 0",
		Source:     joinSource(gemmWgmmaPrelude, wgmmaCore(), srcFile{"gemm_wgmma.cu", cudaGemmWgmmaSource}),
		SourceFile: "gemm_wgmma.cu",
		Params: []Param{
			{Name: "BM", Values: []int{128, 64, 256}, Sweep: []int{128, 64}, Doc: "rows of Y per tile (a multiple of 64·CONSUMERS)"},
			{Name: "BN", Values: wgmmaBNValues(), Sweep: []int{256, 128, 192, 160, 96, 64, 48}, Doc: "columns of Y per tile (wgmma N: a multiple of 8 up to 256; 96 fills the 132 SMs at M 256 on the N 2560 shapes; 24 is left to the split-K extras, its plain tiles never won a strata cell on the H200)"},
			{Name: "CONSUMERS", Values: []int{2, 1}, Sweep: []int{2, 1}, Doc: "consumer warpgroups (each owns BM/CONSUMERS rows)"},
			{Name: "PINGPONG", Values: []int{0, 1}, Sweep: []int{0, 1}, Doc: "1: each of the two consumers owns whole BM×BN tiles, alternate ones, taking turns on the tensor cores (one's epilogue overlaps the other's k loop)"},
			{Name: "STAGES", Values: []int{0, 2, 3, 4, 5, 6, 7, 8, 10, 12, 15}, Sweep: []int{0}, Doc: "shared-memory pipeline stages of BK = 64 (0: as many as fit, at most 15)"},
			{Name: "KSPLIT", Values: []int{0, 4, 8, 10, 16, 20, 24, 40, 48, 80}, Sweep: []int{0}, Doc: "K chunk in k-blocks of 64 (0: K not split): each chunk's fp32 partial starts from zero, a second kernel adds the partials in chunk order; numerics class gemm_f16/splitkC with C = 64·KSPLIT"},
			{Name: "KFOLD", Values: []int{0, 1}, Sweep: []int{0}, Doc: "1 (with KSPLIT > 0): a CTA computes a tile's K chunks one after another, each from zero, and adds them in chunk order in registers: the split-K class's bits in one kernel, no partials (for large M)"},
			{Name: "RASTER", Values: []int{0, 1}, Sweep: []int{0}, Doc: "tile order: 0 GROUP tile rows at a time, 1 GROUP tile columns at a time"},
			{Name: "GROUP", Values: []int{8, 1, 2, 4, 16, 32}, Sweep: []int{8}, Doc: "tile rows (RASTER 0) or columns (RASTER 1) per group"},
			{Name: "GRID", Values: []int{132, 0, 66, 264, 128}, Sweep: []int{132}, Doc: "CTAs of the persistent grid (at most one per tile; 0: one per tile); 132 is the H200's SM count"},
			{Name: "PDL", Values: []int{0, 1, 2}, Sweep: []int{0}, Doc: "1: programmatic dependent launch (every launch may overlap the previous kernel's tail; griddepcontrol in the kernels); " + wgmmaPDL2Doc},
			{Name: "SWAP", Values: []int{0, 1}, Sweep: []int{0}, Doc: "1: swap AB for small M: the kernel computes Yᵀ = W·Xᵀ (BM weight rows × BN tokens per tile) and stores transposed"},
			wgmmaMCParam(),
			// The default sweep has every tile with and without the staged
			// epilogue, and wgmmaFits times one of the two per shape (so a
			// cell has as many candidates as before): on the H200 each
			// EPI 1 tile beat its EPI 0 twin in the geomean of 21 strata
			// cells (Wshd 1983: 13.0 µs against 19.9; docs/results/h200-epi).
			wgmmaEpiParam(0, 1),
		},
		Positional: []string{"BM", "BN", "CONSUMERS"},
		Reference:  "128_128_2",
		Restrict:   wgmmaRestrict,
		Extra:      wgmmaExtraTiles(),
		Fits:       wgmmaFits,
		Operator:   GemmF16(),
		Plan:       wgmmaPlan,
		Numerics:   WgmmaNumerics,
		// PDL 2 (the weights of the ring's first fill before the wait)
		// joins the sweep only by name or --const-weights: the tiles whose
		// PDL 2 twin was faster in most of the 55 strata cells, fp16 Y
		// (docs/results/h200-fused9 call 2, median per-round ratio to the
		// twin: 128_160_2, 128_192_2, 128_256_2 with EPI 1 0.967, 0.950,
		// 0.963 of their twins without PDL, faster in 51, 53, 48 cells;
		// 64_64_1.ksplit20 0.965 of its PDL 1 twin, faster in 50);
		// 64_96_1's lost (1.091) and 64_24_1's tied (1.004).
		ConstWeights:        []string{"128_160_2.pdl2.epi1", "128_192_2.pdl2.epi1", "128_256_2.pdl2.epi1", "64_64_1.ksplit20.pdl2"},
		AssumesConstWeights: pdl2,
	}
}

// WgmmaNumericsClass is the numerics class of every gemm_wgmma tile: the
// class of the mma.sync family gemm_f16 (its family name), because both
// reduce every output element in the same order (acc = 0, k16 steps
// ascending, K never split). Measured on the H200 (docs/results/h200-wgmma/README.md):
// every gemm_wgmma tile tried was bitwise equal to gemm_f16's reference tile
// on every shape and M, so a selector may mix the two families per shape
// and stay batch-invariant.
const WgmmaNumericsClass = "gemm_f16"

// WgmmaNumerics is the numerics class of tile p: WgmmaNumericsClass when K
// is not split; with KSPLIT > 0, "gemm_f16/splitkC" where C = 64·KSPLIT is
// the chunk of K: every output element is the fp32 sum, in chunk order, of
// partials that each start from zero and add their k16 steps in ascending
// order, so tiles of one chunk size give the same bits (and the bits do not
// depend on M), tiles of different chunk sizes do not.
func WgmmaNumerics(p Params) string {
	if ks := p["KSPLIT"]; ks > 0 {
		return fmt.Sprintf("%s/splitk%d", WgmmaNumericsClass, ks*WgmmaBK)
	}
	return WgmmaNumericsClass
}

// wgmmaExtraTiles are the split-K and PDL tiles the default sweep adds to
// the product of the Sweep lists (measured on the H200 in
// docs/results/h200-kern): for each skinny strata shape, one split-K class
// whose tiles are the fastest at small M (partials and a reduce, PDL) and
// its KFOLD twins (the same bits in one kernel) for large M, so that the
// class is worth choosing at every M.
func wgmmaExtraTiles() []string {
	return []string{
		// chunk 2560 (hc_read: N 324, K 10240, 4 chunks)
		"64_48_1.ksplit40.pdl1", "64_112_1.ksplit40.pdl1", "128_96_2.ksplit40.kfold1", "128_48_2.pingpong1.ksplit40.kfold1", "128_48_1.ksplit40.kfold1",
		// chunk 640 (K 2560, N ≤ 128: Walbe, Wsg, Wik; 4 chunks)
		"64_8_1.ksplit10.pdl1", "64_24_1.ksplit10.pdl1", "64_48_1.ksplit10.pdl1", "64_64_1.ksplit10.pdl1", "64_48_1.ksplit10.kfold1",
		// chunk 1280 (K 2560, W512; 2 chunks)
		"64_64_1.ksplit20.pdl1", "64_128_1.ksplit20.kfold1", "64_64_1.ksplit20.kfold1",
		// K not split, PDL (the short N 2560 shapes at small M)
		"64_96_1.pdl1", "64_96_2.pingpong1.pdl1",
		// cluster pairs sharing the weight rows by TMA multicast (the wide
		// shapes at large M: Wqkv, Wz, Wq; Wshd; docs/results/h200-kern2)
		"128_128_2.pingpong1.mc1", "64_160_2.pingpong1.mc1",
		// the staged-epilogue twins of the KFOLD, PDL and MC extras, which
		// wgmmaFits times instead of them where the output rows are 16-byte
		// aligned (docs/results/h200-epi: the MC pairs 0.91 and 0.89 of the
		// reference against 0.95 without, geomean of 21 strata cells); the
		// hc_read KFOLD tiles (N 324) have none
		"64_48_1.ksplit10.kfold1.epi1", "64_128_1.ksplit20.kfold1.epi1", "64_64_1.ksplit20.kfold1.epi1",
		"64_96_1.pdl1.epi1", "64_96_2.pingpong1.pdl1.epi1", "128_128_2.pingpong1.mc1.epi1", "64_160_2.pingpong1.mc1.epi1",
	}
}

// Split-K tiles of the default sweep fit a shape when its N is at most
// wgmmaSplitMaxN (wider shapes fill the SMs with tiles alone and pay for
// the partials) and K makes 2 to wgmmaSplitMaxChunks chunks.
const (
	wgmmaSplitMaxN      = 1024
	wgmmaSplitMaxChunks = 8
)

// wgmmaMCMinN is the least N on which the default sweep times an MC tile:
// the wide shapes, whose many tiles pair up; on the skinny ones the pairs
// measured 1.1–2x slower than their best tiles (docs/results/h200-kern2).
const wgmmaMCMinN = 2048

// wgmmaFits reports whether default-sweep tile p is worth timing on dims d:
// an MC tile only on N ≥ wgmmaMCMinN; any other tile that does not split K
// always; a split-K tile (KSPLIT > 0, with or without KFOLD) only on a
// shape of N ≤ wgmmaSplitMaxN whose K makes 2 to wgmmaSplitMaxChunks
// chunks. And of a tile with a staged-epilogue twin, one of the two
// (wgmmaEpiFits). N and K only, never M: a shape has a split-K class at
// every M or at none.
func wgmmaFits(p Params, d Dims) bool {
	if !wgmmaEpiFits(p, d, wgmmaRestrict) {
		return false
	}
	if p["MC"] > 0 && d["N"] < wgmmaMCMinN {
		return false
	}
	if p["KSPLIT"] <= 0 {
		return true
	}
	ch := WgmmaChunks(p, d["K"])
	return d["N"] <= wgmmaSplitMaxN && ch >= 2 && ch <= wgmmaSplitMaxChunks
}

// wgmmaEpiFits picks one of a default-sweep tile and its staged-epilogue
// twin for a shape whose output has n = d[col] columns: the EPI 1 tile when
// the rows are 16-byte aligned fp16 (n % 8 == 0: its kernels stage), else
// the EPI 0 one; an EPI 0 tile whose twin is not a valid tile (restrict
// refuses it: split-K partials, SWAP) always fits. (For an fp32 Y the two
// are the same program: an fp32 Y is never staged and its ring keeps EPI
// 0's stages.)
func wgmmaEpiFits(p Params, d Dims, restrict func(Params) error, col ...string) bool {
	c := "N"
	if len(col) > 0 {
		c = col[0]
	}
	aligned := d[c]%8 == 0
	if p["EPI"] == 1 {
		return aligned
	}
	if !aligned {
		return true
	}
	twin := p.Clone()
	twin["EPI"] = 1
	return restrict(twin) != nil
}

// WgmmaReduceEntry is the split-K reduce kernel's symbol.
const WgmmaReduceEntry = "tilefit_gemm_wgmma_reduce"

func wgmmaBNValues() []int {
	var v []int
	for n := 8; n <= 256; n += 8 {
		v = append(v, n)
	}
	return v
}

// wgmmaGeo is what a wgmma family adds to the core's shared-memory layout
// (wgmma_core.cuh): the bytes of one stage, its own bytes after the stages
// (WG_EXTRA_BYTES), the staged epilogue's (EPI_BYTES) and its own mbarriers
// (WG_AUX_BARS). epiOpt: some programs of the tile do not stage (gemm_wgmma
// with fp32 Y: WG_EPI_USED 0) and lay out the stages without epi.
type wgmmaGeo struct {
	stage, extra, epi, auxBars int
	epiOpt                     bool
}

// gemmGeo is gemm_wgmma's: a stage of BM rows of X and BN rows of W, and
// with EPI 1 the staging tiles of BN columns, which only an fp16 Y uses
// (epiOpt: an fp32 program reserves none and keeps EPI 0's stages).
func gemmGeo(p Params) wgmmaGeo {
	return wgmmaGeo{stage: wgmmaStageBytes(p), epi: wgmmaEpiBytes(p, p["BN"]), epiOpt: true}
}

// gemmWgmmaPrelude tells the core that gemm_wgmma stages only an fp16 Y
// (Y_DTYPE 1; the gemm_f16 operator passes Y_DTYPE, 3 by default).
const gemmWgmmaPrelude = "#ifndef Y_DTYPE\n#define Y_DTYPE 3\n#endif\n#define WG_EPI_USED (Y_DTYPE == 1)\n#define WG_PRELOAD 1"

// maxStages is the most stages whose barriers fit beside the core's two
// turn barriers and the family's own (the source's MAX_ST).
func (g wgmmaGeo) maxStages() int {
	return min(WgmmaMaxStages, (wgmmaBarBytes-16-8*g.auxBars)/16)
}

// stages is the pipeline depth: STAGES, or when it is 0 as many stages as
// fit in CUDAMaxSharedBytes beside the barriers, the slack and the family's
// own bytes, at most maxStages (the source's NST).
func (g wgmmaGeo) stages(p Params) int {
	return g.stagesBeside(p, g.extra+g.epi)
}

// stagesBeside is the pipeline depth beside own bytes of the block's own.
func (g wgmmaGeo) stagesBeside(p Params, own int) int {
	if s := p["STAGES"]; s > 0 {
		return s
	}
	if g.stage <= 0 {
		return 0
	}
	return min(g.maxStages(), (CUDAMaxSharedBytes-wgmmaBarBytes-wgmmaAlign-own)/g.stage)
}

// shared is the dynamic shared memory of a block: the stages, the family's
// bytes and the staging tiles; with epiOpt the larger of that and the
// layout without staging (a program that does not stage has as many
// stages as fit beside the family's bytes alone).
func (g wgmmaGeo) shared(p Params) int {
	b := g.stages(p)*g.stage + g.extra + g.epi
	if g.epiOpt && g.epi > 0 {
		b = max(b, g.stagesBeside(p, g.extra)*g.stage+g.extra)
	}
	return b + wgmmaBarBytes + wgmmaAlign
}

// WgmmaSharedBytes is the dynamic shared memory of a gemm_wgmma block:
// WgmmaStages(p)·(BM+BN)·64·2 bytes of stages, plus the barriers and the
// slack that puts the stages on a 1024-byte boundary.
func WgmmaSharedBytes(p Params) int { return gemmGeo(p).shared(p) }

func wgmmaStageBytes(p Params) int { return (p["BM"] + p["BN"]) * WgmmaBK * 2 }

// WgmmaMaxStages is the most stages the barrier area holds.
const WgmmaMaxStages = 15

// WgmmaStages is the pipeline depth of p: STAGES, or when it is 0 as many
// stages as fit in CUDAMaxSharedBytes, at most WgmmaMaxStages (the source
// computes the same).
func WgmmaStages(p Params) int { return gemmGeo(p).stages(p) }

// WgmmaThreads is the block size: (CONSUMERS + 1) warpgroups of 128.
func WgmmaThreads(p Params) int { return (p["CONSUMERS"] + 1) * 128 }

func wgmmaRestrict(p Params) error {
	if err := wgmmaCheck(p, gemmGeo(p)); err != nil {
		return err
	}
	if p["KSPLIT"] < 0 {
		return fmt.Errorf("KSPLIT = %d (want ≥ 0)", p["KSPLIT"])
	}
	if kf := p["KFOLD"]; kf != 0 && kf != 1 {
		return fmt.Errorf("KFOLD = %d (want 0 or 1)", kf)
	}
	if p["KFOLD"] == 1 {
		if p["KSPLIT"] == 0 {
			return fmt.Errorf("KFOLD 1 needs KSPLIT > 0 (it folds the K chunks of a split-K class)")
		}
		// The folded sum is a second accumulator set.
		if acc := 2 * wgmmaAccumulators(p); acc > WgmmaMaxFoldRegisters {
			return fmt.Errorf("KFOLD doubles the accumulators: %d fp32 per consumer thread, more than %d", acc, WgmmaMaxFoldRegisters)
		}
	}
	if sw := p["SWAP"]; sw != 0 && sw != 1 {
		return fmt.Errorf("SWAP = %d (want 0 or 1)", sw)
	}
	if p["EPI"] == 1 {
		if p["SWAP"] == 1 {
			return fmt.Errorf("EPI 1 stages row-major tiles of Y: SWAP 1 (a transposed store) has none")
		}
		if wgmmaPartials(p) {
			return fmt.Errorf("EPI 1 stages fp16 Y: split-K partials (KSPLIT > 0 without KFOLD) write fp32 scratch")
		}
	}
	return nil
}

// wgmmaCheck checks what the core (wgmma_core.cuh) requires of every wgmma
// family's tile: warpgroups, tile sizes, accumulators, stages and shared
// memory (with the family's geometry g), the walk and PDL.
func wgmmaCheck(p Params, g wgmmaGeo) error {
	if w := p["WPRE"]; w != 0 && p["PDL"] != 2 {
		return fmt.Errorf("WPRE = %d needs PDL 2 (it bounds the stages whose weights are copied before the wait)", w)
	}
	bm, bn, c := p["BM"], p["BN"], p["CONSUMERS"]
	if c < 1 || c > 2 {
		return fmt.Errorf("CONSUMERS = %d (want 1 or 2)", c)
	}
	pp := p["PINGPONG"]
	if pp != 0 && pp != 1 {
		return fmt.Errorf("PINGPONG = %d (want 0 or 1)", pp)
	}
	if pp == 1 && c != 2 {
		return fmt.Errorf("PINGPONG needs CONSUMERS = 2")
	}
	rows := bm / c // rows of a tile per consumer
	if pp == 1 {
		rows = bm
	}
	if bm%64 != 0 || rows%64 != 0 || bm > 256 {
		return fmt.Errorf("BM = %d is not a multiple of 64·CONSUMERS = %d up to 256", bm, 64*c)
	}
	if bn%8 != 0 || bn < 8 || bn > 256 {
		return fmt.Errorf("BN = %d is not a multiple of 8 in 8..256", bn)
	}
	if acc := wgmmaAccumulators(p); acc > WgmmaMaxAccumulators {
		return fmt.Errorf("%d fp32 accumulators per consumer thread ((rows per consumer/64)·BN/2), more than %d", acc, WgmmaMaxAccumulators)
	}
	if st, most := g.stages(p), g.maxStages(); st < 2 || st > most {
		return fmt.Errorf("STAGES = %d (want 2..%d, or 0: as many as fit)", st, most)
	}
	if b := g.shared(p); b > CUDAMaxSharedBytes {
		return fmt.Errorf("shared memory %d stages·%d + %d = %d bytes exceeds %d", g.stages(p), g.stage, g.extra+g.epi+wgmmaBarBytes+wgmmaAlign, b, CUDAMaxSharedBytes)
	}
	if gr := p["GROUP"]; gr < 1 {
		return fmt.Errorf("GROUP = %d (want ≥ 1)", gr)
	}
	if r := p["RASTER"]; r != 0 && r != 1 {
		return fmt.Errorf("RASTER = %d (want 0 or 1)", r)
	}
	if p["GRID"] < 0 {
		return fmt.Errorf("GRID = %d (want ≥ 0)", p["GRID"])
	}
	switch pdl := p["PDL"]; {
	case pdl < 0 || pdl > 2:
		return fmt.Errorf("PDL = %d (want 0, 1 or 2)", pdl)
	case pdl == 2 && p["MC"] != 0:
		return fmt.Errorf("PDL=2 copies the first stages' weights before the wait, whole and into the CTA's own stages: needs MC 0")
	}
	if e := p["EPI"]; e != 0 && e != 1 {
		return fmt.Errorf("EPI = %d (want 0 or 1)", e)
	}
	switch mc := p["MC"]; {
	case mc < 0 || mc > 2:
		return fmt.Errorf("MC = %d (want 0, 1 or 2)", mc)
	case mc == 1 && bn%16 != 0:
		return fmt.Errorf("MC 1 multicasts halves of the BN rows in 1024-byte swizzle atoms: BN = %d is not a multiple of 16", bn)
	case mc > 0 && p["GRID"]%2 != 0:
		return fmt.Errorf("MC %d launches clusters of two CTAs: GRID = %d is odd", mc, p["GRID"])
	}
	return nil
}

// wgmmaMCParam is the core's cluster multicast parameter (MC in
// wgmma_core.cuh), shared by every wgmma family.
func wgmmaMCParam() Param {
	return Param{Name: "MC", Values: []int{0, 1, 2}, Sweep: []int{0}, Doc: "cluster of two CTAs sharing an operand by TMA multicast: 1, tile rows 2p and 2p+1 share the weight (B) rows, each CTA loading half; 2, tile columns 2q and 2q+1 share the X (A) rows; 0, no cluster. Never changes the bits. All 66 clusters of a 132-CTA grid are resident at once on the H200 (cuOccupancyMaxActiveClusters), yet hc_up tiles with MC were 7–25 % slower at M 256–1024 than without (docs/results/h200-fused8)"}
}

// wgmmaWalk is the persistent grid and cluster shape of a launch over a
// tm × tn grid of tiles with chunks units per tile: wgmmaGrid's without MC;
// with MC the pair grid (tile rows, MC 1, or columns, MC 2, halved) is
// walked by clusters of two CTAs, so the grid is twice min(GRID/2, pair
// units) (all of them when GRID is 0).
func wgmmaWalk(p Params, tm, tn, chunks int) (grid int, cluster [3]int) {
	switch p["MC"] {
	case 1:
		tm = ceilDiv(tm, 2)
	case 2:
		tn = ceilDiv(tn, 2)
	default:
		return wgmmaGrid(p, tm*tn*chunks), [3]int{}
	}
	pairs := tm * tn * chunks
	g := pairs
	if gr := p["GRID"] / 2; gr > 0 && gr < pairs {
		g = gr
	}
	return 2 * max(g, 1), [3]int{2, 1, 1}
}

// wgmmaBoxes are the TMA box rows of the kernel's first (BM) and second (BN)
// operand: the shared operand of an MC pair is loaded in halves.
func wgmmaBoxes(p Params) (a, b int) {
	a, b = p["BM"], p["BN"]
	switch p["MC"] {
	case 1:
		b /= 2
	case 2:
		a /= 2
	}
	return a, b
}

// wgmmaAccumulators is the fp32 accumulators of a consumer thread:
// (rows per consumer / 64)·BN/2, where a consumer owns BM/CONSUMERS rows of
// a tile, or all BM with PINGPONG.
func wgmmaAccumulators(p Params) int {
	return wgmmaConsumerRows(p) / 64 * p["BN"] / 2
}

// wgmmaConsumerRows is the rows of a tile one consumer owns (the source's
// WGM): BM/CONSUMERS, or all BM with PINGPONG.
func wgmmaConsumerRows(p Params) int {
	if p["PINGPONG"] == 1 {
		return p["BM"]
	}
	return p["BM"] / max(p["CONSUMERS"], 1)
}

// wgmmaEpiParam is the core's staged-epilogue parameter (EPI in
// wgmma_core.cuh), shared by every wgmma family; sweep is its Sweep list.
func wgmmaEpiParam(sweep ...int) Param {
	if len(sweep) == 0 {
		sweep = []int{0}
	}
	return Param{Name: "EPI", Values: []int{0, 1}, Sweep: sweep, Doc: "1: staged epilogue: each consumer writes its fp16 tile into shared memory (swizzled, conflict free) and one thread sends it out with TMA bulk tensor stores that overlap the next tile's k loop (fp16 outputs whose rows are multiples of 16 bytes; others store as 0); costs CONSUMERS·rows·columns·2 bytes of the stage ring. Never changes the bits"}
}

// WgmmaEpiBoxCols is the columns of one box of the staged epilogue over a
// tile of cols fp16 columns (the source's EPI_BOXC): the widest of 64, 32,
// 16 that divides cols, else 8 (cols is a multiple of 8).
func WgmmaEpiBoxCols(cols int) int {
	for _, c := range []int{64, 32, 16} {
		if cols%c == 0 {
			return c
		}
	}
	return 8
}

// WgmmaEpiSwizzle is the TMA swizzle code of those boxes, whose rows are
// 2·WgmmaEpiBoxCols bytes: 3 (128 B), 2 (64 B), 1 (32 B), 0 (16-byte rows,
// conflict free unswizzled).
func WgmmaEpiSwizzle(cols int) int {
	switch WgmmaEpiBoxCols(cols) {
	case 64:
		return 3
	case 32:
		return 2
	case 16:
		return 1
	}
	return 0
}

// wgmmaEpiBytes is the shared memory of the staged epilogue (EPI 1) over
// tiles of cols fp16 columns: a staging tile per consumer of its rows ×
// cols (the source's EPI_BYTES; a multiple of 1024, the rows being a
// multiple of 64); 0 with EPI 0.
func wgmmaEpiBytes(p Params, cols int) int {
	if p["EPI"] != 1 {
		return 0
	}
	return max(p["CONSUMERS"], 1) * wgmmaConsumerRows(p) * cols * 2
}

// wgmmaEpiMap is the staged epilogue's tensor map over the fp16 output buf
// of rows × n (dims {n, rows}, box {WgmmaEpiBoxCols(cols), rows per
// consumer}, swizzled over the box rows). When n % 8 != 0 the rows are not
// 16-byte aligned and TMA cannot store them: the kernels test the same and
// store directly, and the map is a placeholder of one 16-byte row that no
// instruction reads.
func wgmmaEpiMap(buf string, p Params, rows, n, cols int) *TensorMap {
	if n%8 != 0 {
		return &TensorMap{Buffer: buf, DType: F16, Dims: []int64{8, 1}, Strides: []int64{16}, Box: []int{8, 1}}
	}
	return &TensorMap{Buffer: buf, DType: F16, Dims: []int64{int64(n), int64(rows)}, Strides: []int64{int64(n) * 2},
		Box: []int{WgmmaEpiBoxCols(cols), wgmmaConsumerRows(p)}, Swizzle: WgmmaEpiSwizzle(cols)}
}

// wgmmaGrid is the persistent grid over units work units: GRID CTAs, at
// most one per unit (all units when GRID is 0), at least 1.
func wgmmaGrid(p Params, units int) int {
	grid := units
	if g := p["GRID"]; g > 0 && g < units {
		grid = g
	}
	return max(grid, 1)
}

// wgmmaMap is a tensor map over fp16 rows of k elements of operand buf
// (dims {k, rows}, row stride 2k bytes), box {64, box}, 128-byte swizzle,
// 256-byte L2 promotion: a stage's slice of a K-major operand.
func wgmmaMap(buf string, rows, k, box int) *TensorMap {
	return &TensorMap{Buffer: buf, DType: F16, Dims: []int64{int64(k), int64(rows)}, Strides: []int64{int64(k) * 2},
		Box: []int{WgmmaBK, box}, Swizzle: 3, L2Promotion: 3}
}

// WgmmaTiles is the number of BM×BN tiles of an M×N output.
func WgmmaTiles(p Params, m, n int) int {
	return ((m + p["BM"] - 1) / p["BM"]) * ((n + p["BN"] - 1) / p["BN"])
}

// WgmmaMaps returns the tensor maps of X (M×K) and W (N×K): dims {K, rows},
// row stride K·2 bytes, box {64, BM} and {64, BN}, 128-byte swizzle, 256-byte
// L2 promotion. K must be a multiple of 8 (16-byte rows).
func WgmmaMaps(p Params, m, n, k int) (x, w *TensorMap, err error) {
	if k%8 != 0 {
		return nil, nil, fmt.Errorf("gemm_wgmma needs K %% 8 == 0 (TMA row strides of a multiple of 16 bytes); K = %d", k)
	}
	if m < 1 || n < 1 || k < 1 {
		return nil, nil, fmt.Errorf("gemm_wgmma needs M, N, K ≥ 1 for its tensor maps; got %d, %d, %d", m, n, k)
	}
	mk := func(buf string, rows, box int) *TensorMap { return wgmmaMap(buf, rows, k, box) }
	ba, bb := wgmmaBoxes(p)
	if p["SWAP"] == 1 {
		// The kernel's first operand (BM rows) is W, its second (BN rows) X.
		return mk("W", n, ba), mk("X", m, bb), nil
	}
	return mk("X", m, ba), mk("W", n, bb), nil
}

// WgmmaChunks is the number of K chunks of p on K: ceil(ceil(K/64)/KSPLIT),
// 1 when K is not split.
func WgmmaChunks(p Params, k int) int {
	ks := p["KSPLIT"]
	if ks <= 0 {
		return 1
	}
	return max(1, ((k+WgmmaBK-1)/WgmmaBK+ks-1)/ks)
}

// wgmmaPartials reports whether p writes split-K partials to scratch and
// reduces them in a second launch: KSPLIT > 0 without KFOLD.
func wgmmaPartials(p Params) bool { return p["KSPLIT"] > 0 && p["KFOLD"] != 1 }

// wgmmaPlan is one launch of tilefit_gemm_wgmma(tmX, tmW, Y, M, N, K) on
// min(GRID, units) CTAs (all units when GRID is 0; a unit is a tile and a K
// chunk) of (CONSUMERS+1)·128 threads with WgmmaSharedBytes of dynamic
// shared memory. With KSPLIT > 0 the kernel writes S = WgmmaChunks fp32
// partials to the scratch buffer P (S·M·N floats) and a second launch,
// tilefit_gemm_wgmma_reduce(P, Y, M, N, S), adds them into Y; with KFOLD 1
// too, one launch over the tiles adds the chunks in registers instead.
func wgmmaPlan(p Params, d Dims) (Plan, error) {
	m, n, k := d["M"], d["N"], d["K"]
	x, w, err := WgmmaMaps(p, m, n, k)
	if err != nil {
		return Plan{}, err
	}
	chunks := WgmmaChunks(p, k)
	split := wgmmaPartials(p)
	if !split {
		chunks = 1 // KFOLD: a unit is a whole tile
	}
	km, kn := "M", "N" // the kernel's M and N
	if p["SWAP"] == 1 {
		m, n, km, kn = n, m, "N", "M"
	}
	grid, cluster := wgmmaWalk(p, ceilDiv(m, p["BM"]), ceilDiv(n, p["BN"]), chunks)
	out := Arg{Kind: ArgOperand, Name: "Y"}
	if split {
		out = Arg{Kind: ArgScratch, Name: "P"}
	}
	args := []Arg{
		{Kind: ArgTensorMap, Name: "X", Map: x},
		{Kind: ArgTensorMap, Name: "W", Map: w},
	}
	if p["EPI"] == 1 {
		// The staged epilogue's map over Y (fp16; an fp32 Y is stored
		// directly, the map unused).
		args = append(args, Arg{Kind: ArgTensorMap, Name: "Y", Map: wgmmaEpiMap("Y", p, m, n, p["BN"])})
	}
	args = append(args, out, Arg{Kind: ArgDim, Name: km}, Arg{Kind: ArgDim, Name: kn}, Arg{Kind: ArgDim, Name: "K"})
	pl := Plan{Launches: []Launch{{
		Entry:   WgmmaEntry,
		Grid:    [3]int{grid, 1, 1},
		Cluster: cluster,
		Block:   [3]int{WgmmaThreads(p), 1, 1},
		Shared:  WgmmaSharedBytes(p),
		PDL:     p["PDL"] >= 1,
		Args:    args,
	}}}
	if split {
		mn := m * n
		pl.Scratch = []Scratch{{Name: "P", DType: F32, Elems: chunks * mn}}
		pl.Launches = append(pl.Launches, Launch{
			Entry: WgmmaReduceEntry,
			Grid:  [3]int{max(1, min((mn+255)/256, 132*8)), 1, 1},
			Block: [3]int{256, 1, 1},
			PDL:   p["PDL"] >= 1,
			Args: []Arg{
				{Kind: ArgScratch, Name: "P"}, {Kind: ArgOperand, Name: "Y"},
				{Kind: ArgDim, Name: "M"}, {Kind: ArgDim, Name: "N"}, {Kind: ArgInt, Value: int64(chunks)},
			},
		})
	}
	return pl, nil
}
