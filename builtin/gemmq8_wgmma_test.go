package builtin

import (
	"math"
	"strings"
	"testing"

	. "github.com/tilefit/tilefit/kernel"
	"github.com/x448/float16"
)

// TestQ8WgmmaPlan checks gemm_q8_wgmma's plan: launch geometry, shared
// memory and stages (the source's NST), the arguments in the kernel's order,
// the int8 tensor map, and the shapes it refuses.
func TestQ8WgmmaPlan(t *testing.T) {
	f := CUDAGemmQ8Wgmma()
	d := Dims{"M": 1000, "N": 2560, "K": 2560, "G": 32}
	for _, tc := range []struct {
		tile          string
		grid, threads int
		stages        int
		shared        int
	}{
		// stage = (BM + BN)·128 + BN·64 bytes; stages as fit in 227 KiB
		// beside 256 + 1024 bytes, at most 10.
		{"128_128_2", 132, 384, 5, 5*(256*128+128*64) + 1280},
		{"128_256_2", 8 * 10, 384, 3, 3*(384*128+256*64) + 1280},
		{"64_128_1", 132, 256, 7, 7*(192*128+128*64) + 1280},
		{"64_64_1", 132, 256, 10, 10*(128*128+64*64) + 1280},
		{"128_128_2.grid0", 8 * 20, 384, 5, 5*(256*128+128*64) + 1280},
		{"128_128_2.stages2", 132, 384, 2, 2*(256*128+128*64) + 1280},
	} {
		p, err := f.ParseTile(tc.tile)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Restrict(p); err != nil {
			t.Fatalf("%s: %v", tc.tile, err)
		}
		if st := Q8WgmmaStages(p); st != tc.stages {
			t.Errorf("%s: %d stages, want %d", tc.tile, st, tc.stages)
		}
		pl, err := f.Plan(p, d)
		if err != nil {
			t.Fatal(err)
		}
		l := pl.Launches[0]
		if len(pl.Launches) != 1 || l.Entry != Q8WgmmaEntry || l.Grid != [3]int{tc.grid, 1, 1} || l.Block != [3]int{tc.threads, 1, 1} || l.Shared != tc.shared {
			t.Errorf("%s: launch %s grid %v block %v shared %d, want grid %d block %d shared %d", tc.tile, l.Entry, l.Grid, l.Block, l.Shared, tc.grid, tc.threads, tc.shared)
		}
		if l.Shared > CUDAMaxSharedBytes {
			t.Errorf("%s: %d bytes of shared memory", tc.tile, l.Shared)
		}
		var names []string
		for _, a := range l.Args {
			names = append(names, a.Name)
		}
		if got := strings.Join(names, ","); got != "X,Wq,scales,Y,M,N,K,G" {
			t.Errorf("%s: args %s", tc.tile, got)
		}
		wq := l.Args[1].Map
		if wq.DType != I8 || wq.Dims[0] != 2560 || wq.Dims[1] != 2560 || wq.Strides[0] != 2560 || wq.Box[0] != 64 || wq.Box[1] != p["BN"] || wq.Swizzle != 0 {
			t.Errorf("%s: Wq map %+v", tc.tile, *wq)
		}
		if x := l.Args[0].Map; x.DType != F16 || x.Box[1] != p["BM"] || x.Swizzle != 3 {
			t.Errorf("%s: X map %+v", tc.tile, *x)
		}
	}
	p, _ := f.ParseTile("128_128_2.debug1")
	pl, _ := f.Plan(p, d)
	if a := pl.Launches[0].Args[4]; a.Kind != ArgOperand || a.Name != "wdq" {
		t.Errorf("DEBUG=1: argument 4 is %+v, want wdq", a)
	}
	p, _ = f.ParseTile("128_128_2")
	for _, bad := range []Dims{{"M": 4, "N": 64, "K": 72, "G": 8}, {"M": 4, "N": 64, "K": 64, "G": 8}, {"M": 4, "N": 64, "K": 40, "G": 40}, {"M": 4, "N": 64, "K": 100, "G": 32}} {
		if _, err := f.Plan(p, bad); err == nil {
			t.Errorf("%v: planned (want refused: K %% 16, G %% 16, G | K)", bad)
		}
	}
}

// TestQ8WgmmaRestrict checks the tiles gemm_q8_wgmma refuses.
func TestQ8WgmmaRestrict(t *testing.T) {
	f := CUDAGemmQ8Wgmma()
	for tile, ok := range map[string]bool{
		"128_128_2": true, "128_256_2.pregs72": true, "64_48_1": true, "128_128_2.pingpong1": true, "256_128_2": true,
		"128_40_2":           false, // BN not a multiple of 16
		"64_128_2":           false, // BM not a multiple of 64·CONSUMERS
		"128_128_1.pregs56":  false, // no setmaxnreg with one consumer
		"128_128_2.stages12": false,
	} {
		p, err := f.ParseTile(tile)
		if err != nil {
			if ok {
				t.Errorf("%s: %v", tile, err)
			}
			continue
		}
		if err := f.Restrict(p); (err == nil) != ok {
			t.Errorf("%s: Restrict %v, want ok=%v", tile, err, ok)
		}
	}
	for _, tl := range f.Tiles() {
		p, _ := f.ParseTile(tl)
		if f.Class(p) != CUDAGemmQ8F16().Class(p) {
			t.Errorf("%s: class %q, want gemm_q8_f16's %q", tl, f.Class(p), CUDAGemmQ8F16().Class(p))
		}
	}
	for pr, want := range map[int]int{40: 232, 56: 224, 72: 216, 88: 208} {
		if got := Q8WgmmaConsumerRegs(pr); got != want || 128*pr+256*got > 65536 {
			t.Errorf("PREGS %d: consumers %d, want %d", pr, got, want)
		}
	}
}

// TestQ8WgmmaDequantOrder checks, for every int8 q and every fp16 scale s,
// that the two dequantisations of gemm_q8_wgmma give DequantQ8's bits: CVT 0
// (fp32 product, one round to fp16) by construction, and CVT 1's steps as
// IEEE arithmetic — the magic-number conversion (fp16 bits 0x6400 | (q+128)
// minus 1152) is q exactly, and fp16 multiplication rounds the exact product
// q·s once, to nearest even: the float64 product (exact: 8 + 11 bits) rounded
// to fp16 directly.
func TestQ8WgmmaDequantOrder(t *testing.T) {
	for q := -128; q < 128; q++ {
		v := float16.Frombits(0x6400 | uint16(uint8(q)^0x80)).Float32()
		if v-1152 != float32(q) || float16.Fromfloat32(v-1152).Float32() != float32(q) {
			t.Fatalf("q=%d: magic conversion gives %v", q, v-1152)
		}
	}
	bad := 0
	for s := 0; s < 1<<16; s++ {
		sf := float64(float16.Frombits(uint16(s)).Float32())
		if math.IsNaN(sf) {
			continue
		}
		for q := -128; q < 128; q++ {
			exact := float64(q) * sf // exact in float64
			if math.IsNaN(exact) {   // 0·∞: NaN either way
				if w := DequantQ8(int8(q), uint16(s)); w&0x7c00 != 0x7c00 || w&0x3ff == 0 {
					t.Errorf("q=%d s=%#04x: DequantQ8 %#04x, want a NaN", q, s, w)
				}
				continue
			}
			got := f16RoundFloat64(exact)
			if want := DequantQ8(int8(q), uint16(s)); got != want && !(got&0x7fff == 0 && want&0x7fff == 0 && q == 0) {
				if bad++; bad < 5 {
					t.Errorf("q=%d s=%#04x: fp16(q·s) = %#04x, DequantQ8 %#04x", q, s, got, want)
				}
			}
		}
	}
}

// f16RoundFloat64 rounds x to fp16, to nearest even, from float64 (no
// intermediate fp32: the fp16 multiplier's single rounding).
func f16RoundFloat64(x float64) uint16 {
	// x = q·s has at most 19 significant bits, so float32(x) is exact and
	// the rounding below is the only one; checked here, not assumed.
	if !math.IsInf(x, 0) && float64(float32(x)) != x {
		panic("product not exact in fp32")
	}
	return float16.Fromfloat32(float32(x)).Bits()
}
