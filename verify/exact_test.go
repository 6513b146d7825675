package verify

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/tilefit/tilefit/builtin"
	"github.com/tilefit/tilefit/kernel"
)

// strataK are the K of the strata preset, and the check's limits.
var strataK = []int{320, 640, 2560, 6144, 10240}

// accumulations returns the fp32 results of summing terms (exact
// float64 products) the ways a kernel may: an ascending FMA chain, a
// descending one, a random permutation, random K blocks summed apart and
// added in random order (split-K), and a truncating adder that aligns 16
// products and the accumulator to the largest exponent with a 24-bit window
// (tensor cores). ok is false when some step was not exact.
func accumulations(r *rand.Rand, terms []float64) (sums []float32, ok bool) {
	ok = true
	chain := func(order []int) float32 {
		var acc float32
		for _, k := range order {
			v := terms[k] + float64(acc)
			acc = float32(v)
			ok = ok && float64(acc) == v
		}
		return acc
	}
	n := len(terms)
	asc := make([]int, n)
	for i := range asc {
		asc[i] = i
	}
	desc := make([]int, n)
	for i := range desc {
		desc[i] = n - 1 - i
	}
	perm := r.Perm(n)
	sums = append(sums, chain(asc), chain(desc), chain(perm))
	// split-K: random chunk bounds, each chunk a chain, partials added in
	// a random order.
	var parts []float64
	for lo := 0; lo < n; {
		hi := min(n, lo+1+r.IntN(max(n/3, 1)))
		parts = append(parts, float64(chain(asc[lo:hi])))
		lo = hi
	}
	var acc float32
	for _, j := range r.Perm(len(parts)) {
		v := parts[j] + float64(acc)
		acc = float32(v)
		ok = ok && float64(acc) == v
	}
	sums = append(sums, acc)
	// truncating aligned adder, 16 products at a time plus the accumulator
	acc = 0
	for lo := 0; lo < n; lo += 16 {
		add := append([]float64{float64(acc)}, terms[lo:min(n, lo+16)]...)
		s, exact := alignedSum(add, 24)
		ok = ok && exact && float64(float32(s)) == s
		acc = float32(s)
	}
	sums = append(sums, acc)
	return sums, ok
}

// gemmTerms returns the products x[m,k]·w[c,k] of fp16 operands.
func gemmTerms(x, w []byte, m, c, k int) []float64 {
	t := make([]float64, k)
	for j := range t {
		t[j] = kernel.F16.Decode(x, m*k+j) * kernel.F16.Decode(w, c*k+j)
	}
	return t
}

// TestExactGemmAnyOrder checks gemmExact's claim for fp32 and fp16 Y at the
// strata K and at the largest K of each amplitude: on its inputs every
// way of accumulating is exact and gives Want, bit for bit after the
// rounding to Y's type; and dropping the last term changes the value.
func TestExactGemmAnyOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, yt := range []kernel.DType{kernel.F32, kernel.F16} {
		op, _ := builtin.GemmF16().Typed(map[string]kernel.DType{"Y": yt})
		for _, k := range append(strataK, 1, 3, 100003) {
			d := kernel.Dims{"M": 3, "N": 5, "K": k}
			ex, drawn, err := ExactInputs(op, d, 7)
			if err != nil {
				t.Fatal(err)
			}
			in := Materialize(drawn)
			refs := NewExactRefs(op, d, ex, in, 1, 1<<20)
			seen := 0
			for i := 0; i < 15; i++ {
				terms := gemmTerms(in[0], in[1], i/5, i%5, k)
				sums, ok := accumulations(r, terms)
				if !ok {
					t.Fatalf("Y=%s K=%d element %d: a partial sum was not exact in fp32", yt, k, i)
				}
				want := refs.Want(2, i)
				for _, s := range sums {
					if got := yt.Round(float64(s)); got != want {
						t.Fatalf("Y=%s K=%d element %d: an accumulation gave %v, Want %v", yt, k, i, got, want)
					}
				}
				if yt.Round(float64(sums[0])-terms[k-1]) != want {
					seen++
				}
			}
			if seen < 15 && (yt == kernel.F32 || seen < 12) {
				t.Errorf("Y=%s K=%d: dropping the last term showed in %d of 15 elements", yt, k, seen)
			}
		}
	}
}

// TestExactAmplitudes pins the integer ranges of gemm_f16's exact inputs
// (the doc comment of builtin.gemmExact quotes them) and the limits: K up to
// 2²⁴ − 1 has an exact check, 2²⁴ (the workload's largest K) does not, and
// says why.
func TestExactAmplitudes(t *testing.T) {
	for _, c := range []struct {
		k   int
		f16 bool
		max int
	}{{320, false, 8}, {10240, false, 8}, {262143, false, 8}, {262144, false, 7}, {320, true, 6}, {640, true, 5}, {2560, true, 3}, {6144, true, 2}, {10240, true, 2}, {1<<24 - 1, false, 1}} {
		yt := kernel.F32
		if c.f16 {
			yt = kernel.F16
		}
		op, _ := builtin.GemmF16().Typed(map[string]kernel.DType{"Y": yt})
		ex, _, err := ExactInputs(op, kernel.Dims{"M": 1, "N": 1, "K": c.k}, 1)
		if err != nil || ex.Draws[0].Max != c.max {
			t.Errorf("K=%d Y=%s: %+v, %v; want integers up to %d", c.k, yt, ex, err, c.max)
		}
	}
	for _, op := range []*kernel.Operator{builtin.GemmF16(), builtin.GemmQ8F16(), builtin.HcUpF16(), builtin.SwigluF16()} {
		d := kernel.Dims{"M": 1, "N": 32, "S": 8, "K": 1 << 24, "G": 32}
		dd, _ := op.Resolve(pick(op, d))
		if _, _, err := ExactInputs(op, dd, 1); err == nil || !strings.Contains(err.Error(), "2²⁴") {
			t.Errorf("%s at K 2²⁴: %v, want a refusal naming the limit", op.Name, err)
		}
	}
}

// pick keeps the dimensions of d that op has.
func pick(op *kernel.Operator, d kernel.Dims) kernel.Dims {
	out := kernel.Dims{}
	for _, n := range op.Dims {
		if v, ok := d[n]; ok {
			out[n] = v
		}
	}
	return out
}

// TestExactQ8AnyOrder: gemm_q8_f16's exact inputs dequantise without
// rounding (wdq = q·s exactly), every accumulation of Y is exact and gives
// Want, and a dropped term shows.
func TestExactQ8AnyOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	op := builtin.GemmQ8F16()
	for _, k := range []int{32, 320, 2560, 10240, 32736} {
		d := kernel.Dims{"M": 2, "N": 3, "K": k, "G": 32}
		ex, drawn, err := ExactInputs(op, d, 9)
		if err != nil {
			t.Fatal(err)
		}
		in := Materialize(drawn)
		refs := NewExactRefs(op, d, ex, in, 1, 1<<20)
		for c := 0; c < 3; c++ {
			for kk := 0; kk < k; kk += 97 {
				q := float64(int8(in[1][c*k+kk]))
				s := kernel.F16.Decode(in[2], c*(k/32)+kk/32)
				if got := refs.Want(4, c*k+kk); got != q*s {
					t.Fatalf("K=%d wdq[%d,%d] = %v, want q·s = %v exactly", k, c, kk, got, q*s)
				}
			}
		}
		for i := 0; i < 6; i++ {
			m, c := i/3, i%3
			terms := make([]float64, k)
			for kk := range terms {
				terms[kk] = kernel.F16.Decode(in[0], m*k+kk) * float64(int8(in[1][c*k+kk])) * kernel.F16.Decode(in[2], c*(k/32)+kk/32)
			}
			sums, ok := accumulations(r, terms)
			if !ok {
				t.Fatalf("K=%d element %d: a partial sum was not exact in fp32", k, i)
			}
			for _, s := range sums {
				if float64(s) != refs.Want(3, i) {
					t.Fatalf("K=%d element %d: %v, Want %v", k, i, s, refs.Want(3, i))
				}
			}
			if float64(sums[0])-terms[k-1] == refs.Want(3, i) {
				t.Errorf("K=%d element %d: a dropped term did not show", k, i)
			}
		}
	}
}

// TestExactHcUpAnyOrder: hc_up's four accumulators and the stated epilogue
// (s = y₀·h₀, three FMAs, ·¼) are exact in fp32 on its exact inputs, mixed
// is Want exactly and mixh Want rounded once.
func TestExactHcUpAnyOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, k := range []int{1, 320, 10240} {
		for _, bound := range []bool{false, true} {
			op := builtin.HcUpF16()
			s := 5
			d := kernel.Dims{"M": 2, "S": s, "K": k}
			ex, drawn, err := ExactInputs(op, d, 11)
			if err != nil {
				t.Fatal(err)
			}
			in := Materialize(drawn)
			refs := NewExactRefs(op, d, ex, in, 1, 1<<20)
			out := 3
			if bound {
				out = 4
			}
			for i := 0; i < 2*s; i++ {
				tt, dd := i/s, i%s
				var ys [4][]float32
				for c := 0; c < 4; c++ {
					var ok bool
					ys[c], ok = accumulations(r, gemmTerms(in[0], in[1], tt, c*s+dd, k))
					if !ok {
						t.Fatalf("K=%d: an accumulation was not exact", k)
					}
				}
				for w := range ys[0] {
					h := func(c int) float32 { return float32(kernel.F16.Decode(in[2], (tt*4+c)*s+dd)) }
					acc := ys[0][w] * h(0)
					for c := 1; c < 4; c++ {
						v := float64(ys[c][w])*float64(h(c)) + float64(acc)
						acc = float32(v)
						if float64(acc) != v {
							t.Fatalf("K=%d: the epilogue rounded", k)
						}
					}
					mix := float64(acc * 0.25)
					if got := op.Operands[out].DType.Round(mix); got != refs.Want(out, i) {
						t.Fatalf("K=%d %s element %d: %v, Want %v", k, op.Operands[out].Name, i, got, refs.Want(out, i))
					}
				}
			}
		}
	}
}

// TestExactSwigluSaturates: on swiglu's exact inputs every gate is at
// least 32 (silu(g) = g/(1+e^−g) = g in fp32, even with an exponential off
// by a factor of two), both accumulations are exact, and Want is
// fp16(fp32(g·u)); a term dropped from both GEMMs shows in nearly every
// element.
func TestExactSwigluSaturates(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	op := builtin.SwigluF16()
	for _, k := range []int{1, 5, 31, 320, 640, 2560, 10240} {
		d := kernel.Dims{"M": 3, "N": 7, "K": k}
		ex, drawn, err := ExactInputs(op, d, 13)
		if err != nil {
			t.Fatal(err)
		}
		in := Materialize(drawn)
		refs := NewExactRefs(op, d, ex, in, 1, 1<<20)
		shown := 0
		for i := 0; i < 21; i++ {
			m, c := i/7, i%7
			gt, ut := gemmTerms(in[0], in[1], m, c, k), gemmTerms(in[0], in[2], m, c, k)
			gs, ok1 := accumulations(r, gt)
			us, ok2 := accumulations(r, ut)
			if !ok1 || !ok2 {
				t.Fatalf("K=%d: an accumulation was not exact", k)
			}
			for w := range gs {
				g, u := gs[w], us[w]
				if g < 32 {
					t.Fatalf("K=%d element %d: gate %v < 32", k, i, g)
				}
				for _, f := range []float64{0.5, 1, 2} { // an exponential off by up to 2×
					e := float32(f * math.Exp(-float64(g)))
					if s := g / (1 + e); s != g {
						t.Fatalf("K=%d: silu(%v) = %v in fp32, not the identity", k, g, s)
					}
				}
				if got := kernel.F16.Round(float64(g * u)); got != refs.Want(3, i) {
					t.Fatalf("K=%d element %d: %v, Want %v", k, i, got, refs.Want(3, i))
				}
			}
			g2, u2 := float64(gs[0])-gt[k-1], float64(us[0])-ut[k-1]
			if kernel.F16.Round(float64(float32(g2)*float32(u2))) != refs.Want(3, i) {
				shown++
			}
		}
		if shown < 19 {
			t.Errorf("K=%d: a dropped term showed in %d of 21 elements", k, shown)
		}
	}
}

// TestExactDrawsRepresentable: every built-in operator's exact inputs hold
// the values their Draw names (no rounding in the element type) at the
// strata K and at the check's largest K.
func TestExactDrawsRepresentable(t *testing.T) {
	for _, op := range []*kernel.Operator{builtin.GemmF16(), builtin.GemmQ8F16(), builtin.HcUpF16(), builtin.SwigluF16()} {
		for _, k := range append(strataK, 1, 32, 1<<19) {
			if op.Name == "gemm_q8_f16" && k%32 != 0 {
				continue
			}
			d, err := op.Resolve(pick(op, kernel.Dims{"M": 2, "N": 4, "S": 4, "K": k}))
			if err != nil {
				t.Fatal(err)
			}
			ex, drawn, err := ExactInputs(op, d, 1)
			if err != nil {
				t.Fatalf("%s K=%d: %v", op.Name, k, err)
			}
			for j, dr := range drawn {
				b := dr.Bytes()
				for e := 0; e < dr.Elems; e++ {
					v := math.Abs(dr.DType.Decode(b, e))
					dw := ex.Draws[j]
					var ok bool
					switch dw.Kind {
					case kernel.DrawInt:
						q := v / math.Ldexp(1, dw.Lo)
						ok = q == math.Trunc(q) && q >= 1 && q <= float64(dw.Max)
					case kernel.DrawPow2:
						fr, ee := math.Frexp(v)
						ok = fr == 0.5 && ee-1 >= dw.Lo && ee-1 <= dw.Hi
					}
					if !ok {
						t.Fatalf("%s K=%d operand %d element %d = %v: not a value of %+v", op.Name, k, j, e, v, dw)
					}
				}
			}
		}
	}
}

// TestExactRefsSampled: CheckSampled on gathered elements agrees with
// Check on the whole output; a one-element change is found, a zero's sign
// is not a difference.
func TestExactRefsSampled(t *testing.T) {
	op := builtin.GemmF16()
	d := kernel.Dims{"M": 40, "N": 30, "K": 64}
	ex, drawn, err := ExactInputs(op, d, 3)
	if err != nil {
		t.Fatal(err)
	}
	in := Materialize(drawn)
	refs := NewExactRefs(op, d, ex, in, 5, 200)
	good := make([]byte, 4*40*30)
	for i := 0; i < 1200; i++ {
		putF32(good, i, float32(refs.Want(2, i)))
	}
	gather := func(out []byte) []byte {
		idx, _ := refs.Indices(2)
		g := make([]byte, 4*len(idx))
		for j, i := range idx {
			copy(g[4*j:], out[4*i:4*i+4])
		}
		return g
	}
	if m, err := refs.CheckSampled(2, gather(good)); m != nil || err != nil {
		t.Fatalf("good output: %v, %v", m, err)
	}
	if m, err := refs.Check(2, good); m != nil || err != nil {
		t.Fatalf("good output, every element: %v, %v", m, err)
	}
	bad := append([]byte(nil), good...)
	last := 1199 // the last row and column are always sampled
	putF32(bad, last, float32(refs.Want(2, last))+1)
	if m, _ := refs.CheckSampled(2, gather(bad)); m == nil || m.Index != last {
		t.Errorf("changed element: %v", m)
	}
	// Check keeps the whole answer after the first call: a later output
	// (another tile on the same inputs) is still compared element by element.
	mid := 617 // not in the sample of 200
	bad2 := append([]byte(nil), good...)
	putF32(bad2, mid, float32(refs.Want(2, mid))-2)
	if m, _ := refs.Check(2, bad2); m == nil || m.Index != mid {
		t.Errorf("Check after a first call: changed element %d: %v", mid, m)
	}
	if m, _ := refs.Check(2, good); m != nil {
		t.Errorf("Check, the good output again: %v", m)
	}
	if !SameValue(kernel.F32, 0, 0x80000000) || SameValue(kernel.F32, 0, 1) || !SameValue(kernel.F16, 0x8000, 0) || SameValue(kernel.I8, 0, 0x80) {
		t.Error("SameValue: ±0 must agree, other bits not")
	}
}

func putF32(b []byte, i int, v float32) {
	u := math.Float32bits(v)
	b[4*i], b[4*i+1], b[4*i+2], b[4*i+3] = byte(u), byte(u>>8), byte(u>>16), byte(u>>24)
}

// truncate32 rounds v toward zero to a float32.
func truncate32(v float64) float32 {
	f := float32(v)
	if math.Abs(float64(f)) > math.Abs(v) {
		f = math.Nextafter32(f, 0)
	}
	return f
}

// TestLikelyBoundHolds: on the random check's inputs (uniform in [−1, 1))
// the error of an fp32 accumulation stays within the probabilistic bound
// (kernel.LikelyGamma) for round-to-nearest chains and for a chain that
// truncates every addition (biased errors, the model's worst departure),
// while dropping the last term leaves it in most elements at every strata
// K — what the worst-case bound cannot see at large K.
func TestLikelyBoundHolds(t *testing.T) {
	op := builtin.GemmF16()
	for _, k := range strataK {
		d := kernel.Dims{"M": 8, "N": 16, "K": k}
		in := op.GenInputs(uint64(k), d)
		refs := NewRefs(op, d, in, 1, 1<<20)
		over, worstOver := 0, 0
		maxRN, maxTrunc := 0.0, 0.0
		for i := 0; i < 128; i++ {
			terms := gemmTerms(in[0], in[1], i/16, i%16, k)
			var rn, tr float32
			for _, p := range terms {
				rn = float32(float64(rn) + p)
				tr = truncate32(float64(tr) + p)
			}
			v := op.RefBounds(d, in, 2, i)
			maxRN = max(maxRN, math.Abs(float64(rn)-v.Want)/v.Likely)
			maxTrunc = max(maxTrunc, math.Abs(float64(tr)-v.Want)/v.Likely)
			dropped := float64(rn) - terms[k-1]
			if math.Abs(dropped-v.Want) > v.Likely {
				over++
			}
			if math.Abs(dropped-v.Want) > v.Bound {
				worstOver++
			}
		}
		if maxRN > 1 || maxTrunc > 1 {
			t.Errorf("K=%d: error %.3g (nearest) and %.3g (truncating) of the probabilistic bound, want ≤ 1", k, maxRN, maxTrunc)
		}
		if over < 128/3 {
			t.Errorf("K=%d: a dropped last term exceeded the probabilistic bound in %d of 128 elements", k, over)
		}
		t.Logf("K=%d: max error %.3f (nearest), %.3f (truncating) of the probabilistic bound; dropped term outside it in %d/128 elements, outside the worst-case bound in %d/128",
			k, maxRN, maxTrunc, over, worstOver)
		_ = refs
	}
}
