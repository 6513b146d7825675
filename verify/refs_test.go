package verify

import (
	"encoding/binary"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/tilefit/tilefit/builtin"
	"github.com/tilefit/tilefit/kernel"
)

// TestRefsValuesAreEachElements: a Refs computes its sampled elements in
// index order (inOrder), not the sample's; every value it holds must still
// be the reference of the element at that position of the sample, for a
// drawn sample (random order) and for a whole output (in order already).
func TestRefsValuesAreEachElements(t *testing.T) {
	s := shape{M: 37, N: 53, K: 24}
	in := randomInputs(11, s).bytes()
	for _, f16 := range []bool{false, true} {
		op := gemmOp(f16)
		for _, max := range []int{300, 1 << 20} {
			r := NewRefs(op, dimsOf(s), in, 4, max)
			n := s.M * s.N
			rv := r.values(2, n)
			if max < n && slicesSorted(rv.idx) {
				t.Fatalf("max %d: the sample is in index order; the test needs a shuffled one", max)
			}
			for j, i := range rv.idx {
				v := op.RefBounds(dimsOf(s), in, 2, i)
				if rv.want[j] != v.Want || rv.bound[j] != v.Bound || rv.likely[j] != v.Likely {
					t.Fatalf("f16 %v max %d: position %d (element %d) holds %v/%v/%v, its reference is %v/%v/%v",
						f16, max, j, i, rv.want[j], rv.bound[j], rv.likely[j], v.Want, v.Bound, v.Likely)
				}
			}
		}
	}
}

// TestExactRefsValuesAreEachElements is TestRefsValuesAreEachElements for
// the exact answers.
func TestExactRefsValuesAreEachElements(t *testing.T) {
	op := gemmOp(false)
	d := kernel.Dims{"M": 41, "N": 29, "K": 40}
	ex, drawn, err := ExactInputs(op, d, 5)
	if err != nil {
		t.Fatal(err)
	}
	in := make([][]byte, len(drawn))
	for i, dr := range drawn {
		in[i] = dr.Bytes()
	}
	r := NewExactRefs(op, d, ex, in, 8, 400)
	ev, err := r.values(2)
	if err != nil {
		t.Fatal(err)
	}
	if slicesSorted(ev.idx) {
		t.Fatal("the sample is in index order; the test needs a shuffled one")
	}
	for j, i := range ev.idx {
		if w := r.Want(2, i); ev.want[j] != w {
			t.Fatalf("position %d (element %d) holds %v, its exact value is %v", j, i, ev.want[j], w)
		}
	}
}

func slicesSorted(v []int) bool {
	for i := 1; i < len(v); i++ {
		if v[i] < v[i-1] {
			return false
		}
	}
	return true
}

// TestDotF16IsAFloat64Sum: builtin.DotF16 (the float64 reference's inner
// loop, four partial sums) is within float64 rounding of the exact sum of
// the products — K·2⁻⁵³·Σ|x·w| — and its Σ|x·w| likewise, for every K
// from 0 to 9 (the loop's tails) and long ones, offsets included, on fp16
// values of every magnitude (subnormals to 65504) and on integers, where
// every partial sum is exact and so must the result be.
func TestDotF16IsAFloat64Sum(t *testing.T) {
	rg := rand.New(rand.NewPCG(3, 4))
	anyF16 := func() uint16 {
		for {
			h := uint16(rg.Uint32())
			if h&0x7c00 != 0x7c00 { // finite
				return h
			}
		}
	}
	enc := func(v []uint16) []byte {
		b := make([]byte, 2*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint16(b[2*i:], x)
		}
		return b
	}
	for _, k := range []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 63, 1000, 10240} {
		for _, ints := range []bool{false, true} {
			const off = 3
			a, b := make([]uint16, k+off), make([]uint16, k+2*off)
			for i := range a {
				a[i] = anyF16()
				if ints {
					a[i] = f16bits(float32(rg.IntN(17) - 8))
				}
			}
			for i := range b {
				b[i] = anyF16()
				if ints {
					b[i] = f16bits(float32(rg.IntN(17) - 8))
				}
			}
			sum, mag := builtin.DotF16(enc(a), enc(b), off, 2*off, k)
			es, em := new(big.Float).SetPrec(2000), new(big.Float).SetPrec(2000)
			for j := 0; j < k; j++ {
				p := new(big.Float).SetPrec(2000).Mul(big.NewFloat(f16val(a[off+j])), big.NewFloat(f16val(b[2*off+j])))
				es.Add(es, p)
				em.Add(em, p.Abs(p))
			}
			want, _ := es.Float64()
			wmag, _ := em.Float64()
			tol := float64(k) * math.Ldexp(1, -53) * wmag
			if ints {
				tol = 0
			}
			if math.Abs(sum-want) > tol || math.Abs(mag-wmag) > tol {
				t.Errorf("K %d ints %v: DotF16 = %v, Σ|·| %v; exact %v, %v (tolerance %g)", k, ints, sum, mag, want, wmag, tol)
			}
		}
	}
}

func f16val(h uint16) float64 {
	b := []byte{byte(h), byte(h >> 8)}
	return kernel.F16.Decode(b, 0)
}

// TestDotF16DoesNotAllocate: the reference's inner loop runs 65,536 times
// a check and allocates nothing (after the move to builtin, a copy of the
// 256 KiB fp16 table per call made the references of a smoke sweep 40×
// slower).
func TestDotF16DoesNotAllocate(t *testing.T) {
	const k = 64
	a, b := make([]byte, 2*k), make([]byte, 2*k)
	for i := range a {
		a[i], b[i] = byte(i), byte(3*i)
	}
	if n := testing.AllocsPerRun(20, func() { builtin.DotF16(a, b, 0, 0, k) }); n != 0 {
		t.Errorf("DotF16 allocates %v times a call", n)
	}
}
