package kernel

// This file holds what the fused families (hc_up_f16, swiglu_f16,
// gemm_q8_f16; hcup.go, swiglu.go, gemmq8.go) share: the GEMM core each
// source is built on (src/cpu/fused_common.c, src/cuda/fused_common.cu),
// the row-tail block count, the CUDA warp layout and register estimate, and
// the fp16 helpers of their inputs and references.

import (
	_ "embed"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/x448/float16"
)

//go:embed src/cpu/fused_common.c
var cpuFusedCommon string

//go:embed src/cuda/fused_common.cu
var cudaFusedCommon string

// fusedSource is the text a fused family compiles: its prelude (defines the
// core needs, e.g. NQ and NACC on CUDA), the shared core, then the family's
// own source, with #line directives so that compiler messages name the
// right file and line.
func fusedSource(prelude, common, commonFile, src, srcFile string) string {
	return prelude + "\n#line 1 \"" + commonFile + "\"\n" + common + "\n#line 1 \"" + srcFile + "\"\n" + src
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

// ---- fp16 helpers of inputs and references ----

// fusedPCGIncrement is the second PCG word of the fused operators' inputs
// (the one verify.RandomInputs uses, so X is the same for the same seed).
const fusedPCGIncrement = 0x9e3779b97f4a7c15

// randF16 returns n fp16 elements (little-endian bytes) drawn uniformly from
// [-1, 1) and rounded to fp16; values that round to ±0 are drawn again.
func randF16(r *rand.Rand, n int) []byte {
	b := make([]byte, 2*n)
	for i := 0; i < n; i++ {
		for {
			h := float16.Fromfloat32(float32(2*r.Float64() - 1)).Bits()
			if h&0x7fff != 0 {
				binary.LittleEndian.PutUint16(b[2*i:], h)
				break
			}
		}
	}
	return b
}

// f16At is the value of fp16 element i of b.
func f16At(b []byte, i int) float64 {
	return float64(float16.Frombits(binary.LittleEndian.Uint16(b[2*i:])).Float32())
}

// dotRows returns Σ_{k<K} a[ai·K+k]·b[bi·K+k] and Σ|a·b| in float64 over fp16
// rows (each product of two fp16 values is exact in float64).
func dotRows(a, b []byte, ai, bi, k int) (sum, mag float64) {
	for j := 0; j < k; j++ {
		p := f16At(a, ai*k+j) * f16At(b, bi*k+j)
		sum += p
		mag += math.Abs(p)
	}
	return sum, mag
}

// The error-bound constants of the fused references (the same model as
// verify's GEMM bound).
const (
	// fusedSafety is c in the GEMM bound γ = K·2⁻²⁴·c.
	fusedSafety = 2.0
	// u32 is the fp32 unit roundoff 2⁻²⁴.
	u32 = 1.0 / (1 << 24)
	// u16 is the fp16 unit roundoff 2⁻¹¹.
	u16 = 1.0 / (1 << 11)
	// halfSub16 is half the smallest fp16 subnormal, 2⁻²⁵.
	halfSub16 = 1.0 / (1 << 25)
	// tinyF32 absorbs fp32 results in the subnormal range (2⁻¹²⁶).
	tinyF32 = 1.0 / (1 << 126)
)

// gemmBound is the bound of one fp32 accumulation over k terms of
// magnitude sum mag: k·2⁻²⁴·2·mag.
func gemmBound(k int, mag float64) float64 { return float64(k) * u32 * fusedSafety * mag }

// f16Bound widens an fp32 bound b of a value v for rounding to fp16.
func f16Bound(v, b float64) float64 { return b + u16*(math.Abs(v)+b) + halfSub16 }
