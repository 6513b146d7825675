package verify

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/x448/float16"

	"github.com/tilefit/tilefit/kernel"
)

// LaplacianMin is the smallest magnitude of an X element drawn by
// LaplacianInputs (2⁻¹²): every such fp16 value is a multiple of 2⁻²², which
// is what makes the check exact in fp32 (see LaplacianInputs).
const LaplacianMin = 1.0 / (1 << 12)

// The Laplacian check is an analytic known-answer test of a plain GEMM
// operator (kernel.Operator.Gemm) on a square cell (N = K): W is the
// periodic 1-D Laplacian and Y = X·Wᵀ must be each row's cyclic second
// difference, exactly, whatever the tile, the K blocking, the order of
// accumulation or the library. It needs no float64 reference and no bound:
// anyone can check an element by hand.

// LaplacianApplies returns nil when the Laplacian check applies to operator
// op on dimensions d, else why not: op must declare itself a plain GEMM
// (Operator.Gemm) of fp16 X and W (X[M,K], W[N,K]) with an fp32 or fp16
// output Y[M,N] and no other operand, and the cell must be square (N = K).
func LaplacianApplies(op *kernel.Operator, d kernel.Dims) error {
	g := op.Gemm
	if g == nil {
		return fmt.Errorf("operator %s does not declare itself a plain GEMM (kernel.Operator.Gemm)", op.Name)
	}
	x, _, okx := op.Operand(g.X)
	w, _, okw := op.Operand(g.W)
	y, _, oky := op.Operand(g.Y)
	switch {
	case !okx || !okw || !oky:
		return fmt.Errorf("operator %s: GEMM operands %s, %s, %s not all declared", op.Name, g.X, g.W, g.Y)
	case len(op.Operands) != 3:
		return fmt.Errorf("operator %s has %d operands; a plain GEMM has 3", op.Name, len(op.Operands))
	case x.Dir != kernel.In || w.Dir != kernel.In || y.Dir != kernel.Out:
		return fmt.Errorf("operator %s: %s and %s must be inputs and %s the output", op.Name, g.X, g.W, g.Y)
	case x.DType != kernel.F16 || w.DType != kernel.F16:
		return fmt.Errorf("operator %s: the Laplacian check needs fp16 %s and %s, not %s and %s", op.Name, g.X, g.W, x.DType, w.DType)
	case y.DType != kernel.F32 && y.DType != kernel.F16:
		return fmt.Errorf("operator %s: the Laplacian check needs an fp32 or fp16 %s, not %s", op.Name, g.Y, y.DType)
	case len(x.Shape) != 2 || len(w.Shape) != 2 || len(y.Shape) != 2 ||
		x.Shape[1] != w.Shape[1] || y.Shape[0] != x.Shape[0] || y.Shape[1] != w.Shape[0]:
		return fmt.Errorf("operator %s: operands %s%v, %s%v, %s%v are not shaped as Y[M,N] = X[M,K]·W[N,K]ᵀ", op.Name, g.X, x.Shape, g.W, w.Shape, g.Y, y.Shape)
	}
	m, errM := d.Size(x.Shape[0])
	n, errN := d.Size(w.Shape[0])
	k, errK := d.Size(x.Shape[1])
	switch {
	case errM != nil || errN != nil || errK != nil:
		return fmt.Errorf("dimensions %v: %v", d, firstErr(errM, errN, errK))
	case m <= 0 || n <= 0 || k <= 0:
		return fmt.Errorf("dimensions %v: sizes must be positive", d)
	case n != k:
		return fmt.Errorf("the cell is not square (N = %d, K = %d): the Laplacian W is N×N", n, k)
	}
	return nil
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// laplacianDims returns M and N (= K) of a cell the check applies to.
func laplacianDims(op *kernel.Operator, d kernel.Dims) (m, n int) {
	x, _, _ := op.Operand(op.Gemm.X)
	m, _ = d.Size(x.Shape[0])
	n, _ = d.Size(x.Shape[1])
	return m, n
}

// LaplacianW returns the coefficient W[r,c] of the periodic 1-D Laplacian
// of size n: 2 on the diagonal, −1 on the two cyclic neighbours
// (c = r−1 and c = r+1 modulo n); coefficients that fall on the same
// element add up (n = 2: W = [[2, −2], [−2, 2]]; n = 1: W = [[0]]).
func LaplacianW(n, r, c int) float64 {
	w := 0.0
	if c == r {
		w += 2
	}
	if c == (r+n-1)%n {
		w--
	}
	if c == (r+1)%n {
		w--
	}
	return w
}

// LaplacianInputs returns the inputs of the Laplacian check of op on d, in
// Operands order (X, W): W the periodic 1-D Laplacian of size N = K
// (LaplacianW, exactly representable in fp16), X random fp16 drawn from a
// PCG seeded with seed: uniform in (−1, 1) rounded to fp16 and drawn again
// while |x| < LaplacianMin (2⁻¹²) or |x| ≥ 1. Then Y = X·Wᵀ is, exactly,
//
//	Y[m,n] = 2·X[m,n] − X[m,n−1] − X[m,n+1]   (column indices modulo N)
//
// in fp32 whatever the order the K products are accumulated in. Why:
//
//   - Every x is a multiple of 2⁻²²: an fp16 normal number of exponent
//     e ≥ −12 has 11 significant bits, so its last bit is 2^(e−10) ≥ 2⁻²².
//   - Every product x·w has w ∈ {0, ±1, ±2}: it is 0, ±x or ±2x, exact in
//     fp32 (and in the fp16×fp16 products of tensor cores, which are exact
//     anyway), a multiple of 2⁻²².
//   - A row of W has at most three non-zero coefficients, |w| summing to 4,
//     so every partial sum the kernel can form — in ascending k, in any
//     permutation, split into K blocks, split-K partials added in any order,
//     or a tensor core's group of products added to its accumulator — is
//     the sum of a subset of at most three non-zero products plus zeros: a
//     multiple of 2⁻²² of magnitude below 4, i.e. j·2⁻²² with |j| < 2²⁴,
//     which fp32's 24-bit significand holds exactly. No addition and no FMA
//     ever rounds. The many zero terms (N − 3 of them per element) add
//     ±0 and change no non-zero sum; when the sum is zero its sign may
//     depend on the order, so the check compares values (+0 = −0), not bits.
//   - Hardware that aligns the addends of a multi-term sum to the largest
//     exponent and truncates what falls below its window (tensor cores do)
//     loses nothing as long as the window holds 24 bits: the largest
//     product is below 2·1, so the window reaches down to at most 2⁻²².
//   - An fp16 Y is the exact value rounded once to fp16 (round to nearest
//     even), which the check expects.
//
// Without the lower limit the claim is false: 2·(1−2⁻¹¹) − 2⁻²⁴ (an fp16
// subnormal) needs 25 significant bits and rounds in fp32 (TestLaplacianExact
// shows it).
func LaplacianInputs(op *kernel.Operator, seed uint64, d kernel.Dims) ([][]byte, error) {
	if err := LaplacianApplies(op, d); err != nil {
		return nil, err
	}
	m, n := laplacianDims(op, d)
	r := rand.New(rand.NewPCG(seed, pcgIncrement))
	x := make([]byte, 2*m*n)
	for i := 0; i < m*n; i++ {
		for {
			h := float16.Fromfloat32(float32(2*r.Float64() - 1))
			if a := math.Abs(float64(h.Float32())); a >= LaplacianMin && a < 1 {
				binary.LittleEndian.PutUint16(x[2*i:], h.Bits())
				break
			}
		}
	}
	w := make([]byte, 2*n*n)
	for row := 0; row < n; row++ {
		for c := 0; c < n; c++ {
			if v := LaplacianW(n, row, c); v != 0 {
				binary.LittleEndian.PutUint16(w[2*(row*n+c):], float16.Fromfloat32(float32(v)).Bits())
			}
		}
	}
	out := make([][]byte, 0, 2)
	for _, o := range op.Operands {
		switch o.Name {
		case op.Gemm.X:
			out = append(out, x)
		case op.Gemm.W:
			out = append(out, w)
		}
	}
	return out, nil
}

// LaplacianWant returns the exact value element (row, col) of Y must hold
// for the inputs in of LaplacianInputs: 2·X[row,col] − X[row,col−1] −
// X[row,col+1], column indices modulo N (exact in float64), rounded to Y's
// element type.
func LaplacianWant(op *kernel.Operator, d kernel.Dims, in [][]byte, row, col int) float64 {
	_, n := laplacianDims(op, d)
	x := in[0]
	if op.Operands[0].Name != op.Gemm.X {
		x = in[1]
	}
	at := func(c int) float64 { return kernel.F16.Decode(x, row*n+(c+n)%n) }
	y, _, _ := op.Operand(op.Gemm.Y)
	return y.DType.Round(2*at(col) - at(col-1) - at(col+1))
}

// CheckLaplacian compares output Y (got: its bytes) of a run on the inputs
// in of LaplacianInputs with the exact answer on every element. It returns
// nil when every value is equal (+0 and −0 count as equal), else the first
// element that differs (an element never written still holds the poison
// NaN and differs); an error when the check does not apply or got is short.
func CheckLaplacian(op *kernel.Operator, d kernel.Dims, in [][]byte, got []byte) (*Mismatch, error) {
	if err := LaplacianApplies(op, d); err != nil {
		return nil, err
	}
	m, n := laplacianDims(op, d)
	y, _, _ := op.Operand(op.Gemm.Y)
	dt := y.DType
	if len(got) < m*n*dt.Size() {
		return nil, fmt.Errorf("output %s has %d bytes, want %d (%d×%d elements of %d bytes)", y.Name, len(got), m*n*dt.Size(), m, n, dt.Size())
	}
	for row := 0; row < m; row++ {
		for col := 0; col < n; col++ {
			i := row*n + col
			want := LaplacianWant(op, d, in, row, col)
			if g := dt.Decode(got, i); g != want {
				return mismatch(y, d, i, want, g, roundBits(dt, want), dt.Bits(got, i)), nil
			}
		}
	}
	return nil, nil
}
