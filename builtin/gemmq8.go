package builtin

import (
	_ "embed"
	"encoding/binary"
	"fmt"
	. "github.com/tilefit/tilefit/kernel"
	"math"
	"math/rand/v2"

	"github.com/x448/float16"
)

//go:embed src/cpu/gemm_q8_f16.c
var cpuGemmQ8Source string

//go:embed src/cuda/gemm_q8_f16.cu
var cudaGemmQ8Source string

// DequantQ8 is the dequantisation of gemm_q8_f16, the definition the CPU and
// CUDA sources compute bit for bit: the fp16 bit pattern of
//
//	fp16_rn((float)q · (float)s)
//
// for an int8 weight q and its group's fp16 scale s (bit pattern). Both
// factors are exact in fp32 and their product needs at most 8 + 11 = 19
// significant bits, so the fp32 product is exact and the one rounding is to
// fp16, to nearest, ties to even (subnormals kept, overflow to ±Inf).
func DequantQ8(q int8, s uint16) uint16 {
	return float16.Fromfloat32(float32(q) * float16.Frombits(s).Float32()).Bits()
}

// GemmQ8F16 returns the operator gemm_q8_f16, a GEMM on int8 weights with one
// fp16 scale per group of G consecutive k (G a dimension, default 32):
//
//	W[n,k] = DequantQ8(Wq[n,k], scales[n, k/G])   (fp16)
//	Y[M,N] = X[M,K]·W[N,K]ᵀ                        (fp32)
//
// X [M,K] fp16, Wq [N,K] i8, scales [N,K/G] fp16 (K a multiple of G); Y
// [M,N] fp32; with DEBUG=1 also wdq [N,K] fp16, the dequantised weights as
// the kernel used them, checked exactly (bound 0) against DequantQ8.
//
// Reference: Y = Σ_k x·w in float64 over the Go dequantisation, bound the
// GEMM's K·2⁻²⁴·2·Σ_k|x·w|, probabilistic bound LikelyGamma(K)·Σ_k|x·w|.
// Exact check: q8Exact.
//
// Inputs: X uniform in [−1, 1) (fp16, no zeros); Wq uniform in [−127, 127]
// without 0; a group's scale has a random sign and a magnitude uniform in
// [2⁻⁹, 2⁻⁶), except one group in eight whose scale is a random fp16 below
// 2⁻¹² (subnormals included), so that products land in fp16's subnormal
// range and the dequantisation's rounding is exercised there too.
func GemmQ8F16() *Operator {
	return &Operator{
		Name:     "gemm_q8_f16",
		Doc:      "Y[M,N] = X[M,K]·W[N,K]ᵀ, W = fp16(Wq·scale) dequantised in the kernel; X fp16, Wq[N,K] i8, scales[N,K/G] fp16 (group G along K); Y fp32 (+ wdq[N,K] fp16 with DEBUG=1)",
		Dims:     []string{"M", "N", "K", "G"},
		Defaults: Dims{"G": 32},
		Operands: []Operand{
			{Name: "X", Dir: In, DType: F16, Shape: []string{"M", "K"}},
			{Name: "Wq", Dir: In, DType: I8, Shape: []string{"N", "K"}},
			{Name: "scales", Dir: In, DType: F16, Shape: []string{"N", "K/G"}},
			{Name: "Y", Dir: Out, DType: F32, Shape: []string{"M", "N"}},
			{Name: "wdq", Dir: Out, DType: F16, Shape: []string{"N", "K"}, When: "DEBUG"},
		},
		FLOPs: func(d Dims) float64 { return 2 * float64(d["M"]) * float64(d["N"]) * float64(d["K"]) },
		Bytes: func(_ *Operator, d Dims) float64 {
			m, n, k := float64(d["M"]), float64(d["N"]), float64(d["K"])
			g := float64(dimOr(d, "G", 32))
			return 2*m*k + n*k + 2*n*k/g + 4*m*n
		},
		Inputs: q8Inputs,
		ReferenceBounds: func(_ *Operator, d Dims, in [][]byte, out, i int) RefValue {
			k, g := d["K"], dimOr(d, "G", 32)
			if out == 4 { // wdq: exactly the Go dequantisation
				n, kk := i/k, i%k
				return RefValue{Want: float64(float16.Frombits(q8Weight(in, n, kk, k, g)).Float32())}
			}
			n := d["N"]
			m, c := i/n, i%n
			var sum, mag float64
			for kk := 0; kk < k; kk++ {
				p := f16At(in[0], m*k+kk) * float64(float16.Frombits(q8Weight(in, c, kk, k, g)).Float32())
				sum += p
				mag += math.Abs(p)
			}
			return RefValue{Want: sum, Bound: gemmBound(k, mag), Likely: gemmLikely(k, mag)}
		},
		Exact:     q8Exact,
		CheckDims: checkQ8Dims,
	}
}

// q8Weight is the dequantised W[n,k] (fp16 bits) of inputs in.
func q8Weight(in [][]byte, n, k, K, G int) uint16 {
	q := int8(in[1][n*K+k])
	s := binary.LittleEndian.Uint16(in[2][2*(n*(K/G)+k/G):])
	return DequantQ8(q, s)
}

// q8Inputs draws X and Wq as UniformInputs does (one PCG generator seeded
// with seed) and the scales from a second generator (seed, q8ScaleStream).
func q8Inputs(o *Operator, seed uint64, d Dims) [][]byte {
	xw := UniformInputs(o.Operands[:2], seed, d)
	r := rand.New(rand.NewPCG(seed, q8ScaleStream))
	n, k, g := d["N"], d["K"], dimOr(d, "G", 32)
	groups := 0
	if g > 0 {
		groups = n * (k / g)
	}
	sc := make([]byte, 2*groups)
	for i := 0; i < groups; i++ {
		var h uint16
		if r.IntN(8) == 0 {
			h = uint16(1 + r.IntN(0x0c00-1)) // below 2^-12, subnormals included
		} else {
			mag := math.Ldexp(1, -9) * math.Pow(8, r.Float64()) // [2^-9, 2^-6)
			h = float16.Fromfloat32(float32(mag)).Bits()
		}
		if r.IntN(2) == 0 {
			h |= 0x8000
		}
		binary.LittleEndian.PutUint16(sc[2*i:], h)
	}
	return [][]byte{xw[0], xw[1], sc}
}

// q8ScaleStream is the second PCG word of gemm_q8_f16's scale generator.
const q8ScaleStream = 0x51a1e5c0ffee1234

func q8Args(p Params) []Arg {
	ops := Operands("X", "Wq", "scales", "Y")
	if p["DEBUG"] != 0 {
		ops = append(ops, Operands("wdq")...)
	}
	return Args(ops, DimArgs("M", "N", "K", "G"))
}

// checkQ8Dims refuses dimensions the kernels cannot run: G must divide K.
func checkQ8Dims(d Dims) error {
	k, g := d["K"], dimOr(d, "G", 32)
	if g <= 0 || k%g != 0 {
		return &DimError{Dims: []string{"K", "G"}, Msg: fmt.Sprintf("gemm_q8_f16: K=%d is not a multiple of the group size G=%d", k, g)}
	}
	return nil
}

var debugParam = Param{Name: "DEBUG", Values: []int{0, 1}, Sweep: []int{0},
	Doc: "1: also write the dequantised weights (operand wdq), for the exact dequantisation check"}

// CPUGemmQ8F16 returns the CPU family gemm_q8_f16 (src/cpu/gemm_q8_f16.c on
// the shared core src/cpu/fused_common.c): a task dequantises its TN rows of
// W panel by panel (DequantQ8's definition) into the packed fp32 panel and
// runs the core's fmaf chains.
//
// Entry: int tilefit_gemm_q8(void **ptrs, const int64_t *args),
// ptrs = {X, Wq, scales, Y, wdq (DEBUG=1)}, args = {M, N, K, G}.
func CPUGemmQ8F16() *Family {
	return &Family{
		Name:       "gemm_q8_f16",
		Backend:    "cpu",
		Doc:        "int8 weights × fp16 group scales dequantised to fp16 while packing, fp32 FMA chains (k ascending), fp32 Y; TM×TN blocks over THREADS threads",
		Source:     cpuFusedSource(cpuGemmQ8Source, "gemm_q8_f16.c"),
		SourceFile: "gemm_q8_f16.c",
		Params: []Param{
			{Name: "TM", Values: []int{16, 32, 64, 128}, Sweep: []int{16, 32, 64}, Doc: "rows of Y per task"},
			{Name: "TN", Values: []int{32, 64, 128, 256}, Sweep: []int{32, 64, 128}, Doc: "columns of Y per task"},
			{Name: "THREADS", Values: []int{1, 2, 4, 8}, Sweep: []int{1, 2}, Doc: "threads per call"},
			{Name: "TK", Values: []int{64, 128, 256, 512}, Sweep: []int{256}, Doc: "K step of the packed panels"},
			debugParam,
			tailParam,
		},
		Positional: []string{"TM", "TN", "THREADS"},
		Reference:  "32_64_2",
		Restrict:   checkTail,
		Operator:   GemmQ8F16(),
		Plan: func(p Params, d Dims) (Plan, error) {
			if err := checkQ8Dims(d); err != nil {
				return Plan{}, err
			}
			return Plan{Launches: []Launch{{Entry: "tilefit_gemm_q8", Args: q8Args(p)}}}, nil
		},
	}
}

// CUDAGemmQ8F16 returns the CUDA family gemm_q8_f16 (src/cuda/gemm_q8_f16.cu
// on the shared core src/cuda/fused_common.cu): X through the core's cp.async
// pipeline; W loaded as int8 (8 bytes per chunk of 8 k), dequantised
// (DequantQ8's definition) and stored as fp16 into the same shared-memory
// stages; mma.sync m16n8k16 in ascending k16 steps.
//
// Kernel: tilefit_gemm_q8(X, Wq, scales, Y, [wdq], long long M, N, K, G);
// grid RowBlocks(M, TM, TAIL)·ceil(N/TN) blocks of WARPS·32 threads; dynamic
// shared memory STAGES·(TM+TN)·TK·2 bytes.
func CUDAGemmQ8F16() *Family {
	return &Family{
		Name:       "gemm_q8_f16",
		Backend:    "cuda",
		Doc:        "int8 weights × fp16 group scales dequantised to fp16 into shared memory, mma.sync m16n8k16 (k ascending in 16s), fp32 Y",
		Source:     cudaFusedSource("#define NQ 16\n#define NACC 1", cudaGemmQ8Source, "gemm_q8_f16.cu"),
		SourceFile: "gemm_q8_f16.cu",
		Params: []Param{
			{Name: "TM", Values: []int{16, 32, 64, 128}, Sweep: []int{16, 32, 64, 128}, Doc: "rows of Y per block"},
			{Name: "TN", Values: []int{32, 64, 128, 256}, Sweep: []int{32, 64, 128, 256}, Doc: "columns of Y per block"},
			{Name: "WARPS", Values: []int{1, 2, 4, 8}, Sweep: []int{1, 2, 4, 8}, Doc: "warps per block"},
			{Name: "TK", Values: []int{32, 64}, Sweep: []int{32}, Doc: "K step per pipeline stage"},
			{Name: "STAGES", Values: []int{3, 2, 4}, Sweep: []int{3}, Doc: "pipeline stages"},
			debugParam,
			tailParam,
		},
		Positional: []string{"TM", "TN", "WARPS"},
		Reference:  "64_128_4",
		Restrict: func(p Params) error {
			return checkFusedCUDA(p, 16, 1, false, q8Shared(p))
		},
		Operator: GemmQ8F16(),
		Plan: func(p Params, d Dims) (Plan, error) {
			if err := checkQ8Dims(d); err != nil {
				return Plan{}, err
			}
			grid := RowBlocks(d["M"], p["TM"], p["TAIL"]) * ceilDiv(d["N"], p["TN"])
			return Plan{Launches: []Launch{{
				Entry:  "tilefit_gemm_q8",
				Grid:   [3]int{max(grid, 1), 1, 1},
				Block:  [3]int{p["WARPS"] * 32, 1, 1},
				Shared: q8Shared(p),
				Args:   q8Args(p),
			}}}, nil
		},
	}
}

func q8Shared(p Params) int { return p["STAGES"] * (p["TM"] + p["TN"]) * p["TK"] * 2 }
