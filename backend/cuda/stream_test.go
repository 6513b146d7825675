package cuda

// GPU tests of gemm_stream (builtin/src/cuda/gemm_stream.cu) and of
// programmatic dependent launch; skipped without a GPU (and PDL without
// sm_90).

import (
	"context"
	"testing"

	"github.com/tilefit/tilefit/builtin"
	"github.com/tilefit/tilefit/kernel"
	"github.com/tilefit/tilefit/verify"
)

// TestStreamThroughPlan runs gemm_stream tiles through their Plan and
// requires every output bitwise equal to gemm_f16's reference tile (the
// swap-AB mma gives the same bits: one numerics class), fp32 and fp16 Y,
// on tails in M, N and K, K not a multiple of 8 (the unaligned loads) and
// M above MT (blocks in y); the rows of a smaller M (X a prefix) equal the
// larger M's first rows.
func TestStreamThroughPlan(t *testing.T) {
	b := testBackend(t)
	fam := builtin.CUDAGemmStream()
	tiles := []string{fam.Reference, "16_8_1", "64_16_4", "32_32_2", "128_8_8.stages4", "32_8_2.tk32.stages2"}
	if b.ccMajor >= 9 {
		tiles = append(tiles, "64_8_4.pdl1")
	}
	sameBitsAsGemmF16(t, b, fam, tiles, [][3]int{{37, 324, 2560}, {16, 200, 72}, {9, 48, 100}, {1, 1, 520}, {130, 250, 136}, {3, 4096, 1000}})
}

// sameBitsAsGemmF16 runs each tile of fam (loaded with the extra defines)
// on each shape (M, N, K), fp32 and fp16 Y, and requires its output bitwise
// equal to gemm_f16's reference tile's (checked itself against the float64
// reference first); then M 1 with X's first row must give row 0 of the
// larger M (batch invariance by prefix) for fam's reference tile.
func sameBitsAsGemmF16(t *testing.T, b *Backend, fam *kernel.Family, tiles []string, shapes [][3]int, extra ...string) {
	t.Helper()
	ctx := context.Background()
	ref := builtin.CUDAGemmF16()
	for _, f16 := range []bool{false, true} {
		op := gemmOp(f16)
		es := op.Operands[2].DType.Size()
		for _, s := range shapes {
			d := dims(s[0], s[1], s[2])
			p, sets := newProblem(t, b, op, d, 11)
			rk := load(ctx, t, b, ref, op, d, ref.Reference)
			want, err := runY(p, rk)
			rk.Close()
			if err != nil {
				t.Fatal(err)
			}
			if num := verify.Check(op, d, sets[0], 2, want, 3, 2000); num.Err != nil {
				t.Fatalf("reference %v: %v", s, num.Err)
			}
			for _, tile := range tiles {
				k := load(ctx, t, b, fam, op, d, tile, extra...)
				got, err := runY(p, k)
				k.Close()
				if err != nil {
					t.Fatalf("%s %v f16=%v: %v", tile, s, f16, err)
				}
				if n := diffCount(got, want, es); n != 0 {
					t.Errorf("%s %v f16=%v: %d elements differ from %s", tile, s, f16, n, ref.Reference)
				}
			}
			p.Close()
			// Batch invariance by prefix: M 1 with X's first row.
			d1 := dims(1, s[1], s[2])
			in := [][]byte{sets[0][0][:2*s[2]], sets[0][1]}
			p1, err := b.NewProblem(ctx, op, d1, [][][]byte{in})
			if err != nil {
				t.Fatal(err)
			}
			k := load(ctx, t, b, fam, op, d1, fam.Reference, extra...)
			got, err := runY(p1, k)
			k.Close()
			p1.Close()
			if err != nil {
				t.Fatal(err)
			}
			if n := diffCount(got, want[:len(got)], es); n != 0 {
				t.Errorf("%v f16=%v: M 1 differs from row 0 of M %d in %d elements", s, f16, s[0], n)
			}
		}
	}
}

// TestPDLSplitK: a split-K tile launched with programmatic dependent launch
// (both kernels) gives the bits of the same tile launched plainly, over
// many back-to-back calls (a reduce that read the partials before the
// partials kernel finished would differ).
func TestPDLSplitK(t *testing.T) {
	b := hopperBackend(t)
	ctx := context.Background()
	fam := builtin.CUDAGemmWgmma()
	op := gemmOp(false)
	d := dims(256, 324, 10240)
	p, _ := newProblem(t, b, op, d, 5)
	defer p.Close()
	plain := load(ctx, t, b, fam, op, d, "64_48_1.ksplit10")
	want, err := runY(p, plain)
	plain.Close()
	if err != nil {
		t.Fatal(err)
	}
	k := load(ctx, t, b, fam, op, d, "64_48_1.ksplit10.pdl1")
	defer k.Close()
	for i := 0; i < 3; i++ {
		if _, err := p.Time(ctx, k, 20, 0); err != nil {
			t.Fatal(err)
		}
		got, err := runY(p, k)
		if err != nil {
			t.Fatal(err)
		}
		if n := diffCount(got, want, 4); n != 0 {
			t.Fatalf("round %d: %d elements differ from the plain launch", i, n)
		}
	}
}

// TestWgmmaSwapThroughPlan: gemm_wgmma with SWAP 1 (the kernel computes
// Yᵀ = W·Xᵀ from swapped tensor maps and stores transposed) is bitwise equal
// to gemm_f16's reference, fp32 and fp16 Y, on small M and tails; a split
// swapped tile equals the unswapped tile of the same KSPLIT.
func TestWgmmaSwapThroughPlan(t *testing.T) {
	b := hopperBackend(t)
	ctx := context.Background()
	fam, ref := builtin.CUDAGemmWgmma(), builtin.CUDAGemmF16()
	for _, f16 := range []bool{false, true} {
		op := gemmOp(f16)
		es := op.Operands[2].DType.Size()
		for _, s := range [][3]int{{1, 4096, 1024}, {16, 324, 2560}, {37, 48, 640}, {130, 200, 72}, {1, 1, 2560}} {
			d := dims(s[0], s[1], s[2])
			p, _ := newProblem(t, b, op, d, 13)
			rk := load(ctx, t, b, ref, op, d, ref.Reference)
			want, err := runY(p, rk)
			rk.Close()
			if err != nil {
				t.Fatal(err)
			}
			for _, tile := range []string{"64_8_1.swap1", "64_16_1.swap1.pdl1", "128_32_2.swap1", "128_24_2.swap1.pingpong1"} {
				k := load(ctx, t, b, fam, op, d, tile)
				got, err := runY(p, k)
				k.Close()
				if err != nil {
					t.Fatalf("%s %v f16=%v: %v", tile, s, f16, err)
				}
				if n := diffCount(got, want, es); n != 0 {
					t.Errorf("%s %v f16=%v: %d elements differ from %s", tile, s, f16, n, ref.Reference)
				}
			}
			if s[2] >= 640 {
				var outs [][]byte
				for _, tile := range []string{"64_48_1.ksplit10", "64_8_1.swap1.ksplit10"} {
					k := load(ctx, t, b, fam, op, d, tile)
					got, err := runY(p, k)
					k.Close()
					if err != nil {
						t.Fatalf("%s %v: %v", tile, s, err)
					}
					outs = append(outs, got)
				}
				if n := diffCount(outs[1], outs[0], es); n != 0 {
					t.Errorf("%v f16=%v: swapped split-K differs from unswapped in %d elements", s, f16, n)
				}
			}
			p.Close()
		}
	}
}
