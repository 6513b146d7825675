package verify

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/x448/float16"

	"github.com/tilefit/tilefit/builtin"
	"github.com/tilefit/tilefit/kernel"
)

// f32 rounds v to float32 and says whether that was exact.
func f32(v float64) (float32, bool) {
	r := float32(v)
	return r, float64(r) == v
}

// product returns x[row,k]·W[col,k] for the Laplacian inputs.
func laplacianTerms(in [][]byte, n, row, col int) []float64 {
	t := make([]float64, n)
	for k := 0; k < n; k++ {
		t[k] = kernel.F16.Decode(in[0], row*n+k) * kernel.F16.Decode(in[1], col*n+k)
	}
	return t
}

// sumFMA adds terms in the order given as an fp32 FMA chain from acc and
// fails the test when a step is not exact in fp32.
func sumFMA(t *testing.T, acc float32, terms []float64, order []int) float32 {
	t.Helper()
	for _, k := range order {
		// The product of an fp16 value by 0, ±1 or ±2 is exact in
		// float64, and so is its sum with an fp32 value: this is the
		// exact FMA result, which must be an fp32 value.
		v, ok := f32(terms[k] + float64(acc))
		if !ok {
			t.Fatalf("partial sum %v + %v = %v is not exact in fp32", acc, terms[k], terms[k]+float64(acc))
		}
		acc = v
	}
	return acc
}

// alignedSum models an adder that aligns its addends to the largest
// exponent and truncates each to a window of bits below it (tensor cores'
// multi-term adds): it returns the truncated sum and whether any addend
// lost a bit.
func alignedSum(addends []float64, window int) (float64, bool) {
	maxExp := math.MinInt
	for _, a := range addends {
		if a != 0 {
			_, e := math.Frexp(a) // a = f·2^e, 0.5 ≤ |f| < 1
			maxExp = max(maxExp, e-1)
		}
	}
	if maxExp == math.MinInt {
		return 0, true
	}
	lsb := math.Ldexp(1, maxExp-window+1)
	sum, exact := 0.0, true
	for _, a := range addends {
		q := math.Trunc(a/lsb) * lsb
		exact = exact && q == a
		sum += q
	}
	return sum, exact
}

// TestLaplacianExact checks the claim of LaplacianInputs' doc comment: for
// inputs it draws, every partial sum of every output element — in
// ascending k, in random permutations, in random K blocks whose partials
// are added in random order, and through a truncating 24-bit aligned adder
// of 16 products plus the accumulator — is exact in fp32 and ends at
// LaplacianWant.
func TestLaplacianExact(t *testing.T) {
	op := builtin.GemmF16()
	rg := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{1, 2, 3, 5, 16, 17, 64, 333} {
		d := kernel.Dims{"M": 6, "N": n, "K": n}
		in, err := LaplacianInputs(op, uint64(n), d)
		if err != nil {
			t.Fatal(err)
		}
		for row := 0; row < 6; row++ {
			for col := 0; col < n; col++ {
				terms := laplacianTerms(in, n, row, col)
				want := LaplacianWant(op, d, in, row, col)
				asc := make([]int, n)
				for k := range asc {
					asc[k] = k
				}
				if got := sumFMA(t, 0, terms, asc); float64(got) != want {
					t.Fatalf("n=%d [%d,%d]: ascending chain %v, want %v", n, row, col, got, want)
				}
				for trial := 0; trial < 4; trial++ {
					perm := rg.Perm(n)
					if got := sumFMA(t, 0, terms, perm); float64(got) != want {
						t.Fatalf("n=%d [%d,%d]: permuted chain %v, want %v", n, row, col, got, want)
					}
					// Random K blocks (split-K), partials added in random order.
					var partials []float32
					for k := 0; k < n; {
						b := 1 + rg.IntN(n-k)
						partials = append(partials, sumFMA(t, 0, terms, asc[k:k+b]))
						k += b
					}
					rg.Shuffle(len(partials), func(i, j int) { partials[i], partials[j] = partials[j], partials[i] })
					pt := make([]float64, len(partials))
					for i, p := range partials {
						pt[i] = float64(p)
					}
					idx := make([]int, len(pt))
					for i := range idx {
						idx[i] = i
					}
					if got := sumFMA(t, 0, pt, idx); float64(got) != want {
						t.Fatalf("n=%d [%d,%d]: split-K %v, want %v", n, row, col, got, want)
					}
				}
				// A truncating aligned adder: 16 products plus the accumulator per step.
				acc := 0.0
				for k := 0; k < n; k += 16 {
					group := append([]float64{acc}, terms[k:min(k+16, n)]...)
					s, exact := alignedSum(group, 24)
					if !exact {
						t.Fatalf("n=%d [%d,%d]: the aligned adder truncated an addend of %v", n, row, col, group)
					}
					v, ok := f32(s)
					if !ok {
						t.Fatalf("n=%d [%d,%d]: aligned sum %v not exact in fp32", n, row, col, s)
					}
					acc = float64(v)
				}
				if acc != want {
					t.Fatalf("n=%d [%d,%d]: aligned adder %v, want %v", n, row, col, acc, want)
				}
			}
		}
	}
}

// TestLaplacianNeedsTheLowerLimit shows why LaplacianInputs draws no
// |x| < 2⁻¹²: with an fp16 subnormal in X the ascending fp32 chain rounds.
func TestLaplacianNeedsTheLowerLimit(t *testing.T) {
	x := []float64{math.Ldexp(1, -24), 1 - math.Ldexp(1, -11), 0.5}
	// Element 1 of the row: −x0 + 2·x1 − x2, in ascending k.
	terms := []float64{-x[0], 2 * x[1], -x[2]}
	exact := terms[0] + terms[1] + terms[2]
	var acc float32
	rounded := false
	for _, p := range terms {
		s := float64(acc) + p
		acc = float32(s)
		rounded = rounded || float64(acc) != s
	}
	if !rounded || float64(acc) == exact {
		t.Fatalf("expected the fp32 chain to round (got %v, exact %v)", acc, exact)
	}
}

func TestLaplacianInputs(t *testing.T) {
	op := builtin.GemmF16()
	d := kernel.Dims{"M": 40, "N": 7, "K": 7}
	a, err := LaplacianInputs(op, 3, d)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := LaplacianInputs(op, 3, d)
	c, _ := LaplacianInputs(op, 4, d)
	if !slices.Equal(a[0], b[0]) || !slices.Equal(a[1], b[1]) {
		t.Error("the same seed gave different inputs")
	}
	if slices.Equal(a[0], c[0]) {
		t.Error("different seeds gave the same X")
	}
	if !slices.Equal(a[1], c[1]) {
		t.Error("W depends on the seed")
	}
	if len(a[0]) != 2*40*7 || len(a[1]) != 2*7*7 {
		t.Fatalf("sizes %d, %d", len(a[0]), len(a[1]))
	}
	for i := 0; i < 40*7; i++ {
		if v := math.Abs(kernel.F16.Decode(a[0], i)); v < LaplacianMin || v >= 1 {
			t.Fatalf("X[%d] = %v outside [2⁻¹², 1)", i, v)
		}
	}
	// W: 2 on the diagonal, −1 on the cyclic neighbours, 0 elsewhere.
	for r := 0; r < 7; r++ {
		for col := 0; col < 7; col++ {
			want := 0.0
			switch {
			case r == col:
				want = 2
			case col == (r+1)%7 || col == (r+6)%7:
				want = -1
			}
			if got := kernel.F16.Decode(a[1], r*7+col); got != want {
				t.Errorf("W[%d,%d] = %v, want %v", r, col, got, want)
			}
		}
	}
	// Small N: coefficients that meet add up.
	for _, tc := range []struct {
		n    int
		want []float64
	}{{1, []float64{0}}, {2, []float64{2, -2, -2, 2}}} {
		in, err := LaplacianInputs(op, 1, kernel.Dims{"M": 1, "N": tc.n, "K": tc.n})
		if err != nil {
			t.Fatal(err)
		}
		got := Decode(in[1], kernel.F16)
		if !slices.Equal(got, tc.want) {
			t.Errorf("N=%d: W = %v, want %v", tc.n, got, tc.want)
		}
	}
}

// chainY computes Y = X·Wᵀ as an ascending fp32 chain, as the families do.
func chainY(in [][]byte, m, n int, dt kernel.DType) []byte {
	out := make([]byte, m*n*dt.Size())
	for r := 0; r < m; r++ {
		for c := 0; c < n; c++ {
			var acc float32
			for k := 0; k < n; k++ {
				acc = float32(math.FMA(kernel.F16.Decode(in[0], r*n+k), kernel.F16.Decode(in[1], c*n+k), float64(acc)))
			}
			if dt == kernel.F16 {
				binary.LittleEndian.PutUint16(out[2*(r*n+c):], float16.Fromfloat32(acc).Bits())
			} else {
				binary.LittleEndian.PutUint32(out[4*(r*n+c):], math.Float32bits(acc))
			}
		}
	}
	return out
}

func TestCheckLaplacian(t *testing.T) {
	for _, dt := range []kernel.DType{kernel.F32, kernel.F16} {
		op, err := builtin.GemmF16().Typed(map[string]kernel.DType{"Y": dt})
		if err != nil {
			t.Fatal(err)
		}
		d := kernel.Dims{"M": 9, "N": 12, "K": 12}
		in, err := LaplacianInputs(op, 5, d)
		if err != nil {
			t.Fatal(err)
		}
		y := chainY(in, 9, 12, dt)
		if m, err := CheckLaplacian(op, d, in, y); err != nil || m != nil {
			t.Fatalf("%s: exact chain: %v, %v", dt, m, err)
		}
		// The float64 reference agrees with the analytic answer.
		for i := 0; i < 9*12; i += 7 {
			ref, _ := op.Ref(d, in, 2, i)
			if want := LaplacianWant(op, d, in, i/12, i%12); dt.Round(ref) != want {
				t.Fatalf("%s: element %d: reference %v, analytic %v", dt, i, ref, want)
			}
		}
		// One element off by one unit in the last place.
		bad := slices.Clone(y)
		if dt == kernel.F16 {
			bad[2*50]++
		} else {
			bad[4*50]++
		}
		m, err := CheckLaplacian(op, d, in, bad)
		if err != nil || m == nil || m.Index != 50 || m.Row != 4 || m.Col != 2 {
			t.Fatalf("%s: off by one ulp at 50: %v, %v", dt, m, err)
		}
		// An element never written (poison NaN).
		bad = slices.Clone(y)
		for j := 0; j < dt.Size(); j++ {
			bad[dt.Size()*100+j] = PoisonByte
		}
		if m, _ := CheckLaplacian(op, d, in, bad); m == nil || m.Index != 100 || !strings.Contains(m.String(), "NaN") {
			t.Fatalf("%s: unwritten element: %v", dt, m)
		}
		if _, err := CheckLaplacian(op, d, in, y[:len(y)-1]); err == nil {
			t.Errorf("%s: short output accepted", dt)
		}
	}
}

func TestLaplacianApplies(t *testing.T) {
	op := builtin.GemmF16()
	if err := LaplacianApplies(op, kernel.Dims{"M": 3, "N": 4, "K": 5}); err == nil || !strings.Contains(err.Error(), "not square") {
		t.Errorf("non-square cell: %v", err)
	}
	plain := *op
	plain.Gemm = nil
	if err := LaplacianApplies(&plain, kernel.Dims{"M": 3, "N": 4, "K": 4}); err == nil || !strings.Contains(err.Error(), "plain GEMM") {
		t.Errorf("operator without Gemm: %v", err)
	}
	extra := *op
	extra.Operands = append(slices.Clone(op.Operands), kernel.Operand{Name: "B", Dir: kernel.In, DType: kernel.F32, Shape: []string{"N"}})
	if err := LaplacianApplies(&extra, kernel.Dims{"M": 3, "N": 4, "K": 4}); err == nil {
		t.Error("an operator with a fourth operand accepted")
	}
	if _, err := LaplacianInputs(op, 1, kernel.Dims{"M": 3, "N": 4, "K": 5}); err == nil {
		t.Error("LaplacianInputs on a non-square cell")
	}
}
