package builtin

// This file holds what the fused families (hc_up_f16, swiglu_f16,
// gemm_q8_f16; hcup.go, swiglu.go, gemmq8.go) share: the GEMM core each
// source is built on (src/cpu/fused_common.c, src/cuda/fused_common.cu;
// each after the helpers it shares with gemm_f16, see source.go), the
// row-tail block count, the CUDA warp layout and register estimate, and
// the fp16 helpers of their inputs and references.

import (
	_ "embed"
	"fmt"
	. "github.com/tilefit/tilefit/kernel"
	"math"
)

//go:embed src/cpu/fused_common.c
var cpuFusedCommon string

//go:embed src/cuda/fused_common.cu
var cudaFusedCommon string

//go:embed src/cuda/epilogue_common.cuh
var cudaEpilogueCommon string

// epilogueCommon is src/cuda/epilogue_common.cuh: the fused operators'
// epilogue arithmetic (mix4, act) and its fp32 helpers, the one text every
// CUDA candidate of hc_up_f16 and swiglu_f16 runs (mma.sync, wgmma, the
// vendor baselines' elementwise kernels).
func epilogueCommon() srcFile { return srcFile{"epilogue_common.cuh", cudaEpilogueCommon} }

// cpuFusedSource is the text a fused CPU family compiles: f16_common.h,
// the shared core fused_common.c, then the family's own source src (file
// name file), joined by joinSource.
func cpuFusedSource(src, file string) string {
	return joinSource("", f16Common(), srcFile{"fused_common.c", cpuFusedCommon}, srcFile{file, src})
}

// cudaFusedSource is the text a fused CUDA family compiles: its prelude
// (defines the core needs: NQ and NACC), ptx_common.cuh, the epilogues'
// arithmetic epilogue_common.cuh, the shared core fused_common.cu, then the
// family's own source src (file name file).
func cudaFusedSource(prelude, src, file string) string {
	return joinSource(prelude, ptxCommon(), epilogueCommon(), srcFile{"fused_common.cu", cudaFusedCommon}, srcFile{file, src})
}

// cudaWgmmaFusedSource is the text a fused wgmma family compiles: its
// prelude (the core's WG_EXTRA_BYTES and WG_AUX_BARS), the mainloop
// wgmma_core.cuh, epilogue_common.cuh, then the family's own source.
func cudaWgmmaFusedSource(prelude, src, file string) string {
	return joinSource(prelude, wgmmaCore(), epilogueCommon(), srcFile{file, src})
}

// RowBlocks is the number of block rows over M rows with TM-row tiles: with
// tail > 0 (and tail < tm) and M % tm ≠ 0, the last, partial row of tm-row
// blocks is replaced by ceil((M % tm) / tail) blocks of tail rows (the
// row-tail trimming of the fused sources, row_blocks() in their core).
func RowBlocks(m, tm, tail int) int {
	if tail <= 0 || tail >= tm || m%tm == 0 {
		return (m + tm - 1) / tm
	}
	return m/tm + (m%tm+tail-1)/tail
}

// tailParam is the row-tail parameter of the fused families.
var tailParam = Param{Name: "TAIL", Values: []int{0, 16, 32}, Sweep: []int{0},
	Doc: "rows of the last row of blocks when M % TM ≠ 0 (0: a TM-row tile)"}

func checkTail(p Params) error {
	if t := p["TAIL"]; t != 0 && t >= p["TM"] {
		return fmt.Errorf("TAIL=%d must be smaller than TM=%d (or 0)", t, p["TM"])
	}
	return nil
}

// FusedWarpLayout is the WM×WN = warps layout of the fused CUDA sources
// (pick_layout in fused_common.cu) over a bm×tn block tile: warp tiles with
// rows a multiple of 16 and columns a multiple of nq, the most square one,
// ties to the larger WM; ok is false when none exists.
func FusedWarpLayout(bm, tn, warps, nq int) (wm, wn int, ok bool) {
	best := 1 << 30
	for m := warps; m >= 1; m /= 2 {
		n := warps / m
		if m*n != warps || bm%(m*16) != 0 || tn%(n*nq) != 0 {
			continue
		}
		if s := log2Ratio(bm/m, tn/n); s < best {
			best, wm, wn, ok = s, m, n, true
		}
	}
	return wm, wn, ok
}

// fusedRegs estimates the registers per thread a fused CUDA tile holds in
// its main loop: nacc accumulator sets of 4·MI·NI fp32, plus double-buffered
// fragments, 2·(4·MI + nacc·4·NP) (ldmatrix) or, in the register-only
// variant, 2·(4·MI + 2·NI) plus its 64-bit row pointers 2·(2·MI + NI);
// MI = wtm/16, NI = wtn/8, NP = wtn/16. Above CUDAMaxFragmentRegs ptxas
// spilled (NVRTC 11.8, sm_90: the register-only 64×64 warp tile, 255
// registers and 92 bytes of spills).
func fusedRegs(wtm, wtn, nacc int, reg bool) int {
	mi, ni, np := wtm/16, wtn/8, wtn/16
	if reg {
		return nacc*4*mi*ni + 2*(4*mi+2*ni) + 2*(2*mi+ni)
	}
	return nacc*4*mi*ni + 2*(4*mi+nacc*4*np)
}

// checkFusedCUDA checks the CUDA restrictions of a fused tile: a warp layout
// for the TM-row tile and for the TAIL-row tile, registers, shared memory.
func checkFusedCUDA(p Params, nq, nacc int, reg bool, smem int) error {
	if err := checkTail(p); err != nil {
		return err
	}
	tiles := []int{p["TM"]}
	if t := p["TAIL"]; t > 0 {
		tiles = append(tiles, t)
	}
	for _, bm := range tiles {
		wm, wn, ok := FusedWarpLayout(bm, p["TN"], p["WARPS"], nq)
		if !ok {
			return fmt.Errorf("no layout of %d warps splits %d×%d into warp tiles of 16 rows × %d columns", p["WARPS"], bm, p["TN"], nq)
		}
		if r := fusedRegs(bm/wm, p["TN"]/wn, nacc, reg); r > CUDAMaxFragmentRegs {
			return fmt.Errorf("warp tile %d×%d (%d sets) needs %d accumulator and fragment registers per thread, more than %d",
				bm/wm, p["TN"]/wn, nacc, r, CUDAMaxFragmentRegs)
		}
	}
	if smem > CUDAMaxSharedBytes {
		return fmt.Errorf("shared memory %d bytes exceeds %d", smem, CUDAMaxSharedBytes)
	}
	return nil
}

// dimOr returns d[name], or def when d lacks it.
func dimOr(d Dims, name string, def int) int {
	if v, ok := d[name]; ok {
		return v
	}
	return def
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// ---- helpers of the references ----

// f16At is the value of fp16 element i of b.
func f16At(b []byte, i int) float64 { return F16.Decode(b, i) }

// tinyF32 absorbs fp32 results in the subnormal range (2⁻¹²⁶) in the fused
// references' bounds.
const tinyF32 = 1.0 / (1 << 126)

// gemmBound is the bound of one fp32 accumulation over k terms of magnitude
// sum mag, gemm_f16's: k·2⁻²⁴·2·mag.
func gemmBound(k int, mag float64) float64 { return float64(k) * UnitF32 * GemmSafety * mag }

// f16Bound widens an fp32 bound b of a value v for the rounding to fp16.
func f16Bound(v, b float64) float64 { return b + UnitF16*(math.Abs(v)+b) + HalfSubF16 }
