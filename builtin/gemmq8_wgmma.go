package builtin

import (
	_ "embed"
	"fmt"
	. "github.com/tilefit/tilefit/kernel"
)

//go:embed src/cuda/gemm_q8_wgmma.cu
var cudaGemmQ8WgmmaSource string

// Q8WgmmaEntry is gemm_q8_wgmma's kernel symbol.
const Q8WgmmaEntry = "tilefit_gemm_q8_wgmma"

// gemm_q8_wgmma's constants (src/cuda/gemm_q8_wgmma.cu has the same).
const (
	// q8WgmmaConverters are the producer warpgroup's threads that
	// dequantise (warps 1..3; thread 0 issues the TMA copies).
	q8WgmmaConverters = 96
	// q8WgmmaAuxBars are the family's own mbarriers, a raw barrier per
	// stage: 10, the least count whose stages the barrier area also holds
	// (MAX_ST = (256 − 16 − 8·10)/16 = 10).
	q8WgmmaAuxBars = 10
	// q8WgmmaItemK is the k of one converting item (16 int8, one scale).
	q8WgmmaItemK = 16
	// q8WgmmaPregs is PREGS's default (the source's too).
	q8WgmmaPregs = 72
)

// q8WgmmaGeo is gemm_q8_wgmma's geometry: a stage is X's BM rows and the
// fp16 B operand's BN rows (gemm_wgmma's stage) plus BN·64 bytes of raw
// int8 rows; a raw barrier per stage.
func q8WgmmaGeo(p Params) wgmmaGeo {
	return wgmmaGeo{stage: wgmmaStageBytes(p) + p["BN"]*WgmmaBK, auxBars: q8WgmmaAuxBars}
}

// q8WgmmaPrelude sets the core's producer hooks for gemm_q8_wgmma (the
// same geometry as q8WgmmaGeo): the raw area after each stage, X's bytes
// alone on the full barrier, which also counts the 96 converting threads'
// arrivals, the convert walk, the raw barriers and the register split.
const q8WgmmaPrelude = `#ifndef PREGS
#define PREGS 72
#endif
#define WG_STAGE_EXTRA (BN * 64)
#define WG_FULL_TX (BM * 128)
#define WG_FULL_COUNT 97
#define WG_CONVERT 1
#define WG_AUX_BARS 10
#define WG_PRODUCER_REGS PREGS
#define Q8_CREGS ((((65536 - 128 * (PREGS)) / 256) / 8) * 8)
#define WG_CONSUMER_REGS (Q8_CREGS < 232 ? Q8_CREGS : 232)`

// Q8WgmmaConsumerRegs is the consumers' setmaxnreg target when the producer
// warpgroup keeps pregs registers a thread (two consumers): the most, a
// multiple of 8 and at most 232, with 128·pregs + 256·that ≤ 65536.
func Q8WgmmaConsumerRegs(pregs int) int { return min(232, (65536-128*pregs)/256/8*8) }

// CUDAGemmQ8Wgmma returns the CUDA family gemm_q8_wgmma (sm_90a): the
// operator gemm_q8_f16 on the Hopper mainloop (src/cuda/wgmma_core.cuh). X
// comes by TMA as in gemm_wgmma; Wq's int8 rows (BN × 64 bytes a stage) come
// by TMA into a raw area of the stage, and the producer warpgroup's warps
// 1..3 dequantise them (DequantQ8's arithmetic; CVT 1 in fp16x2, CVT 0 in
// fp32, the same bits) into the 128-byte swizzled fp16 B operand, then
// arrive on the stage's full barrier; the consumers run gemm_wgmma's k
// loop (acc = 0, k16 steps ascending) and store fp32 Y. Numerics class
// gemm_q8_f16: the mma.sync family's, whose W is the same fp16 values and
// whose reduction order is the same.
//
// Needs K % 16 == 0 (TMA's 16-byte int8 rows) and G % 16 == 0 (an item of
// 16 k has one scale); the Plan refuses other shapes.
//
// Kernel: tilefit_gemm_q8_wgmma(tmX, tmWq, scales, Y, [wdq], M, N, K, G) on
// a persistent grid of min(GRID, tiles) CTAs of (CONSUMERS+1)·128 threads.
func CUDAGemmQ8Wgmma() *Family {
	params := []Param{
		{Name: "BM", Values: []int{128, 64, 256}, Sweep: []int{128, 64}, Doc: "rows of Y per tile (a multiple of 64·CONSUMERS)"},
		{Name: "BN", Values: []int{128, 256, 64, 96, 160, 192, 224, 32, 48, 80, 112}, Sweep: []int{256, 128, 160, 96, 64}, Doc: "columns of Y per tile (a multiple of 16: the raw int8 rows fill 1024-byte blocks)"},
		{Name: "CONSUMERS", Values: []int{2, 1}, Sweep: []int{2, 1}, Doc: "consumer warpgroups (each owns BM/CONSUMERS rows)"},
		{Name: "PINGPONG", Values: []int{0, 1}, Sweep: []int{0, 1}, Doc: "1: the two consumers own alternate whole tiles (one's epilogue overlaps the other's k loop)"},
		{Name: "CVT", Values: []int{1, 0}, Sweep: []int{1}, Doc: "dequantisation: 1 two k at a time in fp16x2 (magic-number int8 → fp16, mul.rn.f16x2), 0 per element in fp32 (cvt, mul.rn.f32, cvt.rn.f16); the same bits"},
		{Name: "PREGS", Values: []int{72, 40, 56, 88}, Sweep: []int{72}, Doc: "registers a producer-warpgroup thread keeps after setmaxnreg (two consumers): the converting warps' budget, the consumers get Q8WgmmaConsumerRegs of it; 72 (the default): no spills, 40 (the core's default) spilled 88–336 bytes and ran 1.8x slower on the H200 (docs/results/h200-q8h); one consumer runs without setmaxnreg and keeps the default"},
		{Name: "QCH", Values: []int{6, 2, 12}, Sweep: []int{6}, Doc: "items (16 k of a row) whose raw int8 loads a converting thread issues together before converting them: more overlap their latency, at 4 registers each"},
		debugParam,
	}
	common := wgmmaCommonParams()
	for _, c := range common {
		if c.Name != "MC" {
			params = append(params, c)
		}
	}
	return &Family{
		Name:       "gemm_q8_wgmma",
		Backend:    "cuda",
		Doc:        "gemm_q8_f16 on the Hopper mainloop (sm_90a): X and Wq's int8 rows by TMA, the producer warpgroup's other warps dequantise into the swizzled fp16 stage, wgmma m64nBNk16 (k ascending in 16s), fp32 Y; needs K % 16 == 0, G % 16 == 0",
		Source:     joinSource(q8WgmmaPrelude, wgmmaCore(), srcFile{"gemm_q8_wgmma.cu", cudaGemmQ8WgmmaSource}),
		SourceFile: "gemm_q8_wgmma.cu",
		Params:     params,
		Positional: []string{"BM", "BN", "CONSUMERS"},
		Reference:  "128_128_2",
		Restrict:   q8WgmmaRestrict,
		Operator:   GemmQ8F16(),
		Plan:       q8WgmmaPlan,
		// One class with the mma.sync family gemm_q8_f16 (its name).
		Numerics: func(Params) string { return "gemm_q8_f16" },
	}
}

func q8WgmmaRestrict(p Params) error {
	if err := wgmmaCheck(p, q8WgmmaGeo(p)); err != nil {
		return err
	}
	if bn := p["BN"]; bn%16 != 0 {
		return fmt.Errorf("BN = %d is not a multiple of 16 (the raw int8 rows of a stage fill 1024-byte blocks)", bn)
	}
	if cv := p["CVT"]; cv != 0 && cv != 1 {
		return fmt.Errorf("CVT = %d (want 0 or 1)", cv)
	}
	switch pr := p["PREGS"]; {
	case pr < 24 || pr > 256 || pr%8 != 0:
		return fmt.Errorf("PREGS = %d (want a multiple of 8 in 24..256)", pr)
	case p["CONSUMERS"] == 1 && pr != q8WgmmaPregs:
		return fmt.Errorf("PREGS = %d: one consumer runs without setmaxnreg (leave PREGS at %d)", pr, q8WgmmaPregs)
	case p["QCH"] < 1:
		return fmt.Errorf("QCH = %d (want ≥ 1)", p["QCH"])
	case Q8WgmmaConsumerRegs(pr) < wgmmaAccumulators(p)+64:
		return fmt.Errorf("PREGS = %d leaves the consumers %d registers, too few for %d accumulators", pr, Q8WgmmaConsumerRegs(pr), wgmmaAccumulators(p))
	}
	return nil
}

// Q8WgmmaSharedBytes is a gemm_q8_wgmma block's dynamic shared memory.
func Q8WgmmaSharedBytes(p Params) int { return q8WgmmaGeo(p).shared(p) }

// Q8WgmmaStages is gemm_q8_wgmma's pipeline depth (the source's NST).
func Q8WgmmaStages(p Params) int { return q8WgmmaGeo(p).stages(p) }

// q8WgmmaPlan is one launch of tilefit_gemm_q8_wgmma(tmX, tmWq, scales, Y,
// [wdq], M, N, K, G): tmX over X (gemm_wgmma's map, box {64, BM}), tmWq over
// Wq as bytes (dims {K, N}, row stride K, box {64, BN}, unswizzled).
func q8WgmmaPlan(p Params, d Dims) (Plan, error) {
	if err := checkQ8Dims(d); err != nil {
		return Plan{}, err
	}
	m, n, k, g := d["M"], d["N"], d["K"], dimOr(d, "G", 32)
	if m < 1 || n < 1 || k < 1 {
		return Plan{}, fmt.Errorf("gemm_q8_wgmma needs M, N, K ≥ 1 for its tensor maps; got %d, %d, %d", m, n, k)
	}
	if k%q8WgmmaItemK != 0 || g%q8WgmmaItemK != 0 {
		return Plan{}, fmt.Errorf("gemm_q8_wgmma needs K %% 16 == 0 (TMA's 16-byte int8 rows) and G %% 16 == 0 (one scale per item of 16 k); K = %d, G = %d", k, g)
	}
	wq := &TensorMap{Buffer: "Wq", DType: I8, Dims: []int64{int64(k), int64(n)}, Strides: []int64{int64(k)},
		Box: []int{WgmmaBK, p["BN"]}, Swizzle: 0, L2Promotion: 3}
	args := []Arg{
		{Kind: ArgTensorMap, Name: "X", Map: wgmmaMap("X", m, k, p["BM"])},
		{Kind: ArgTensorMap, Name: "Wq", Map: wq},
		{Kind: ArgOperand, Name: "scales"},
		{Kind: ArgOperand, Name: "Y"},
	}
	if p["DEBUG"] != 0 {
		args = append(args, Arg{Kind: ArgOperand, Name: "wdq"})
	}
	args = append(args, DimArgs("M", "N", "K", "G")...)
	return Plan{Launches: []Launch{{
		Entry:  Q8WgmmaEntry,
		Grid:   [3]int{wgmmaGrid(p, ceilDiv(m, p["BM"])*ceilDiv(n, p["BN"])), 1, 1},
		Block:  [3]int{WgmmaThreads(p), 1, 1},
		Shared: Q8WgmmaSharedBytes(p),
		PDL:    p["PDL"] == 1,
		Args:   args,
	}}}, nil
}
