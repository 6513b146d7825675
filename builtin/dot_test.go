package builtin

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

// TestDotF16x8MatchesPortable: the vector path (dotF16x8, amd64 with AVX2
// and F16C) gives the portable loop's sums to float64 rounding (K·2⁻⁵²·Σ|x·w|:
// both are float64 sums of the same exact products in other orders) on fp16
// values of every finite magnitude, exactly on integers (every partial sum
// exact), and the same Inf/NaN where an input is infinite; DotF16 with a
// tail (K not a multiple of 8) adds the two paths' parts.
func TestDotF16x8MatchesPortable(t *testing.T) {
	if !haveDotF16x8 {
		t.Skip("no AVX2/F16C here: DotF16 runs the portable loop alone")
	}
	rg := rand.New(rand.NewPCG(11, 12))
	ints := map[int]uint16{} // the fp16 bits of the integers −32 … 32
	for h := 0; h < 1<<16; h++ {
		if v := f16Table[h]; v == float32(int(v)) && v >= -32 && v <= 32 && (v != 0 || h == 0) {
			ints[int(v)] = uint16(h)
		}
	}
	enc := func(v []uint16) []byte {
		b := make([]byte, 2*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint16(b[2*i:], x)
		}
		return b
	}
	draw := func(k int, kind string) []byte {
		v := make([]uint16, k)
		for i := range v {
			switch kind {
			case "int":
				v[i] = ints[rg.IntN(65)-32]
			default:
				for {
					v[i] = uint16(rg.Uint32())
					if v[i]&0x7c00 != 0x7c00 {
						break
					}
				}
			}
		}
		if kind == "inf" {
			v[rg.IntN(k)] = 0x7c00
		}
		return enc(v)
	}
	for _, k := range []int{8, 16, 24, 64, 1000, 1003, 10240, 10247} {
		for _, kind := range []string{"any", "int", "inf"} {
			a, b := draw(k, kind), draw(k, "any")
			if kind == "int" {
				b = draw(k, "int")
			}
			ps, pm := dotF16From(a, b, 0, k)
			ds, dm := DotF16(a, b, 0, 0, k)
			tol := float64(k) * math.Ldexp(1, -52) * pm
			switch {
			case kind == "inf":
				if math.IsNaN(ds) != math.IsNaN(ps) || math.IsInf(ds, 0) != math.IsInf(ps, 0) || !math.IsInf(dm, 1) {
					t.Errorf("K %d, an infinite input: DotF16 %v, %v; portable %v, %v", k, ds, dm, ps, pm)
				}
			case kind == "int" && (ds != ps || dm != pm):
				t.Errorf("K %d integers: DotF16 %v, %v; portable %v, %v (want equal)", k, ds, dm, ps, pm)
			case math.Abs(ds-ps) > tol || math.Abs(dm-pm) > tol:
				t.Errorf("K %d: DotF16 %v, %v; portable %v, %v (tolerance %g)", k, ds, dm, ps, pm, tol)
			}
			if k%8 == 0 {
				vs, vm := dotF16x8(&a[0], &b[0], k)
				if kind != "inf" && (math.Abs(vs-ps) > tol || math.Abs(vm-pm) > tol) {
					t.Errorf("K %d: dotF16x8 %v, %v; portable %v, %v", k, vs, vm, ps, pm)
				}
			}
		}
	}
}
