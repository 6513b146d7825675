package cuda

// GPU test of gemm_decode (builtin/src/cuda/decode.cu); skipped without a
// GPU or below sm_90.

import (
	"context"
	"testing"

	"github.com/tilefit/tilefit/builtin"
)

// TestDecodeThroughPlan runs gemm_decode tiles (compiled with WATCHDOG=1,
// so a stuck ring traps) through their Plan and requires every output
// bitwise equal to gemm_f16's reference tile (one numerics class), fp32 and
// fp16 Y, on tails in M, N and K (K % 16 == 8, the last stage short, N not a
// multiple of BN), M above 16 (blocks in y), one to three n8 groups per
// warp, rings that wrap many times, PDL 1 and 2, PF (W prefetched into the
// L2, at entry and rolling), XM (X boxes of min(M, 16) rows: M 1, 3, 7, 9,
// 16 and above), LD, LP (W's L2 promotion), PG (prefetch.global.L2 with
// W's address as an extra argument), five warps of one n8 group
// (40_5), XG (X's A fragments loaded by the consumers, with PDL 1 and 2,
// with PG's argument before X's), XA (PDL 2's preloaded stages with X
// copied by cp.async: K tails, M past 16, PRE, PG's argument before X's),
// XS (X in its own slots, 2 to 3 per group, as many as STAGES, above 16
// stages, PDL 0, 1 and 2), ER (a stage released before the next is waited
// for: TK 256 and 64, with XS), MB (blocks of 1, 2, 4 and 8 token rows,
// swizzled and unswizzled X boxes, with XA and PRE);
// and the rows of M 1 (X a prefix) equal the larger M's
// first row.
func TestDecodeThroughPlan(t *testing.T) {
	b := testBackend(t)
	if b.ccMajor < 9 {
		t.Skip("gemm_decode needs sm_90")
	}
	fam := builtin.CUDAGemmDecode()
	tiles := []string{fam.Reference, "8_1", "16_2.tk64.stages2", "24_1.tk128", "96_4.tk128.stages3", "64_8.tk512.stages2", "32_4.pdl1", "32_4.pdl2.stages2",
		"32_4.pf8.xm1", "64_4.tk128.stages8.pdl1.pf16.xm1.ld1", "16_2.tk64.stages2.pdl2.pf4.xm1", "24_1.tk128.pf128", "32_4.pf4.lp0", "64_4.tk128.stages8.pdl1.lp2.xm1", "32_4.lp1", "40_5.tk128.stages4",
		"32_4.pg8", "64_4.tk128.stages8.pdl2.pg16.xm1", "24_1.tk128.stages3.pg64", "64_4.tk128.stages8.pdl1.lp2",
		"32_4.xg1", "64_4.tk128.stages12.pdl2.xg1", "16_2.tk64.stages2.xg2", "24_1.tk128.pdl1.pg8.xg1", "96_4.tk128.stages3.pdl1.xg2",
		"64_4.tk128.stages8.pdl2.lp2.pre2", "32_4.pdl2.pre1",
		"64_4.tk128.stages8.pdl2.xa1", "32_4.pdl2.stages2.xa1", "16_2.tk64.stages2.pdl2.xa1", "64_4.tk128.stages8.pdl2.pg16.xa1", "32_4.pdl2.pre1.xa1",
		"32_4.xs2", "32_4.pdl2.stages2.xs2", "16_2.tk64.stages3.pdl1.xs3", "64_4.tk128.stages12.pdl2.lp2.xs2", "24_1.tk128.stages18.pdl2.xs2",
		"32_4.er1", "16_2.tk64.stages2.er1", "64_4.tk128.stages8.pdl2.lp2.er1", "24_1.tk128.stages3.pdl1.xs3.er1",
		"32_4.mb8", "64_4.tk128.stages8.pdl2.lp2.mb1", "16_2.tk64.stages2.mb2", "24_1.tk128.stages3.pdl1.mb4", "64_4.tk128.stages12.pdl2.xa1.er1.mb8", "32_4.pdl2.stages2.xa1.mb1", "16_2.tk64.stages4.pdl2.pre2.xa1.mb4"}
	sameBitsAsGemmF16(t, b, fam, tiles, [][3]int{{37, 324, 2560}, {16, 200, 72}, {9, 48, 104}, {1, 1, 520}, {130, 250, 136}, {3, 4096, 1000}, {7, 2560, 6144}}, "WATCHDOG=1")
	// WR 1 (a stage's W one 3-D copy, row by row) needs K % 64 == 0: K
	// tails of one box in a two- or four-box stage (192, 320), N tails,
	// M past 16, PDL 2 with XA and MB.
	wr := []string{"32_4.wr1", "64_4.tk128.stages8.pdl1.lp2.wr1", "16_2.tk128.stages2.wr1", "40_5.tk128.stages4.pdl2.xa1.er1.wr1", "64_4.tk128.stages12.pdl2.xa1.er1.mb8.wr1", "24_1.tk512.stages2.pdl1.wr1"}
	sameBitsAsGemmF16(t, b, fam, wr, [][3]int{{37, 324, 2560}, {16, 200, 192}, {1, 1, 320}, {130, 250, 128}, {3, 4096, 1024}, {7, 2560, 6144}}, "WATCHDOG=1")
}

// TestDecodeMapsValid (no GPU): the tensor maps of every default tile and
// of the test's tiles pass the host's TMA rules on the decode shapes and on
// tails (M 1, N 1, K 8, M above 16).
func TestDecodeMapsValid(t *testing.T) {
	fam := builtin.CUDAGemmDecode()
	tiles := append(fam.Tiles(), "8_1", "16_2.tk64.stages2", "24_1.tk128", "96_4.tk128.stages3", "64_8.tk512.stages2", "128_4.tk128")
	for _, tile := range tiles {
		p, err := fam.ParseTile(tile)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range [][3]int{{1, 4096, 4096}, {7, 2560, 6144}, {16, 8192, 8192}, {1, 1, 8}, {37, 324, 2560}, {1983, 2560, 6144}} {
			if !fam.FitsShape(p, dims(s[0], s[1], s[2])) && p["KSPLIT"] > 0 {
				continue // a split tile whose chunks do not tile K: its Plan refuses (TestDecodeSplit)
			}
			pl, err := fam.Plan(p, dims(s[0], s[1], s[2]))
			if err != nil {
				t.Fatalf("%s %v: %v", tile, s, err)
			}
			for _, a := range pl.Launches[0].Args {
				if a.Map != nil {
					if err := ValidateTensorMap(a.Map); err != nil {
						t.Errorf("%s %v: %v", tile, s, err)
					}
				}
			}
		}
	}
}

// decodeSplitCases are the split-K tiles of TestDecodeSplitThroughPlan
// with the gemm_wgmma tile of the same class (partials and a reduce) that
// they must equal bitwise, and the shapes (M, N, K) they run on.
var decodeSplitCases = []struct {
	tile, ref string
	shapes    [][3]int
}{
	{"32_4.ksplit16.kw4.stages8", "128_64_2.ksplit16", [][3]int{{1, 4096, 4096}, {16, 200, 4096}, {37, 324, 4096}}},
	{"16_4.ksplit24.kw2.pdl2", "128_64_2.ksplit24", [][3]int{{7, 2560, 6144}, {1, 48, 3072}}},
	{"24_2.ksplit10.kw2.tk128.stages4", "128_64_2.ksplit10", [][3]int{{9, 250, 2560}, {130, 100, 1280}}},
	{"32_8.ksplit16.kw4.stages8", "128_64_2.ksplit16", [][3]int{{3, 1000, 8192}}},
	{"32_8.ksplit16.kw4.tk128.stages16.pdl1.pf64.xm1", "128_64_2.ksplit16", [][3]int{{1, 4096, 4096}, {7, 4096, 4096}, {16, 200, 4096}, {20, 100, 4096}}},
	{"32_8.ksplit16.kw4.tk128.stages8.pdl2.pf16.xm1.ld1", "128_64_2.ksplit16", [][3]int{{1, 4096, 4096}, {5, 300, 8192}}},
	{"32_8.ksplit16.kw4.tk128.stages16.pdl1.lp2.xm1", "128_64_2.ksplit16", [][3]int{{1, 4096, 4096}, {7, 4096, 4096}, {16, 4096, 4096}, {37, 100, 8192}}},
	{"32_16.ksplit16.kw4.tk128.stages16.pdl1.lp2", "128_64_2.ksplit16", [][3]int{{1, 4096, 4096}, {7, 4096, 4096}, {16, 4096, 4096}, {37, 100, 4096}}},
	{"64_16.ksplit16.kw4.tk128.stages8.pdl1.lp2", "128_64_2.ksplit16", [][3]int{{1, 4096, 4096}, {16, 200, 4096}}},
	{"40_10.ksplit24.kw2.tk128.stages4.xm1", "128_64_2.ksplit24", [][3]int{{7, 200, 6144}, {1, 2560, 6144}}},
	{"32_8.ksplit16.kw4.tk128.stages16.pdl1.pg24", "128_64_2.ksplit16", [][3]int{{1, 4096, 4096}, {16, 200, 4096}}},
	{"32_8.ksplit16.kw4.tk128.stages16.pdl1.lp2", "128_64_2.ksplit16", [][3]int{{7, 4096, 4096}, {16, 1000, 8192}}},
	{"32_8.ksplit16.kw4.tk128.stages16.pdl2.lp2.xg1", "128_64_2.ksplit16", [][3]int{{1, 4096, 4096}, {7, 4096, 4096}, {16, 200, 4096}, {37, 100, 4096}}},
	{"32_8.ksplit16.kw4.stages12.pdl2.lp2.xg2", "128_64_2.ksplit16", [][3]int{{1, 4096, 4096}, {16, 4096, 4096}, {5, 300, 8192}}},
	{"32_8.ksplit16.kw4.tk128.stages16.pdl1.lp2.xg1", "128_64_2.ksplit16", [][3]int{{7, 4096, 4096}, {20, 100, 4096}}},
	// PRE: PDL 2 copying the W of the first 4 (of 16) stages before the wait
	{"32_8.ksplit16.kw4.tk128.stages16.pdl2.lp2.pre4", "128_64_2.ksplit16", [][3]int{{1, 4096, 4096}, {16, 200, 4096}, {37, 100, 4096}}},
	// XA: the preloaded stages' X by cp.async, the whole first fill and PRE 4
	{"32_8.ksplit16.kw4.tk128.stages16.pdl2.lp2.xa1", "128_64_2.ksplit16", [][3]int{{1, 4096, 4096}, {7, 4096, 4096}, {16, 200, 4096}, {37, 100, 4096}}},
	{"32_8.ksplit16.kw4.tk128.stages16.pdl2.lp2.pre4.xa1", "128_64_2.ksplit16", [][3]int{{16, 4096, 4096}, {5, 300, 8192}}},
	// XS: X in its own slots, 20 and 24 W stages, KW 4 and 2, PDL 1 and 2
	{"32_8.ksplit16.kw4.tk128.stages20.pdl2.lp2.xs2", "128_64_2.ksplit16", [][3]int{{1, 4096, 4096}, {7, 4096, 4096}, {16, 200, 4096}, {37, 100, 4096}}},
	{"32_8.ksplit16.kw2.tk128.stages24.pdl2.lp2.xs2", "128_64_2.ksplit16", [][3]int{{16, 4096, 4096}, {5, 300, 8192}}},
	{"32_8.ksplit16.kw4.tk128.stages16.pdl1.lp2.xs3", "128_64_2.ksplit16", [][3]int{{7, 4096, 4096}, {20, 100, 4096}}},
	// ER: a stage released before the warp waits for its next one
	{"32_8.ksplit16.kw4.tk128.stages16.pdl2.lp2.xa1.er1", "128_64_2.ksplit16", [][3]int{{1, 4096, 4096}, {16, 4096, 4096}, {37, 100, 4096}}},
	{"32_8.ksplit16.kw4.tk128.stages20.pdl2.lp2.xs2.er1", "128_64_2.ksplit16", [][3]int{{7, 4096, 4096}, {16, 200, 4096}}},
	{"32_8.ksplit16.kw4.stages8.pdl1.lp2.er1", "128_64_2.ksplit16", [][3]int{{7, 4096, 4096}, {5, 300, 8192}}},
	// MB: blocks of 8, 2 and 1 token rows (M 16 and 37: two to 37 blocks in y)
	{"32_8.ksplit16.kw4.tk128.stages20.pdl2.lp2.xa1.er1.mb8", "128_64_2.ksplit16", [][3]int{{1, 4096, 4096}, {7, 4096, 4096}, {16, 200, 4096}, {37, 100, 4096}}},
	{"32_8.ksplit16.kw4.tk128.stages24.pdl2.lp2.xa1.er1.mb1", "128_64_2.ksplit16", [][3]int{{1, 4096, 4096}, {3, 300, 8192}, {37, 100, 4096}}},
	{"32_8.ksplit16.kw4.tk128.stages16.pdl1.lp2.mb2", "128_64_2.ksplit16", [][3]int{{7, 4096, 4096}, {16, 200, 4096}}},
	// WR: a stage's W as one 3-D copy, with and without MB
	{"32_8.ksplit16.kw4.tk128.stages16.pdl2.lp2.xa1.er1.mb8.wr1", "128_64_2.ksplit16", [][3]int{{1, 4096, 4096}, {7, 4096, 4096}, {16, 200, 4096}, {37, 100, 4096}}},
	{"32_8.ksplit16.kw4.tk128.stages16.pdl2.lp2.xa1.er1.wr1", "128_64_2.ksplit16", [][3]int{{1, 4096, 4096}, {16, 4096, 4096}, {5, 300, 8192}}},
}

// decodeClusterCases are TestDecodeClusterThroughPlan's tiles (KC > 1:
// a row block's chunks spread over a cluster, reduced in rank 0's shared
// memory) with the gemm_wgmma tile of their class and their shapes: KC 2,
// 3 and 4, KW 1, 2 and 4, 5 n8 groups a warp (BN 40), PDL 2, M 1 (one
// partial row), 7, 16, and above 16 (blocks in y, the last one short);
// PF, XM and LD on clusters of 2 and 3; ten consumer warps (40_10: two
// chunks side by side, five warps of one n8 group each); XA on clusters
// of 2; XG on clusters
// of 2 and 4; XS on clusters of 2 (BN 64 and 40, 12 to 18 stages); ER
// with XA and XS on clusters of 2; RV on clusters of 2 and 3; MB (blocks
// of 8, 4 and 1 token rows) on clusters of 2 and 3, with and without RV.
var decodeClusterCases = []struct {
	tile, ref string
	shapes    [][3]int
}{
	{"40_2.ksplit8.kw2.kc2.tk128.stages4", "128_64_2.ksplit8", [][3]int{{1, 2560, 6144}, {7, 2560, 6144}, {16, 200, 2048}, {37, 324, 4096}}},
	{"40_2.ksplit24.kw2.kc2.tk128.stages4.pdl2", "128_64_2.ksplit24", [][3]int{{1, 2560, 6144}, {16, 2560, 6144}, {9, 100, 6144}}},
	{"64_8.ksplit8.kw4.kc3.tk64.stages8", "128_64_2.ksplit8", [][3]int{{7, 2560, 6144}, {20, 130, 6144}}},
	{"32_4.ksplit16.kw2.kc2.stages4", "128_64_2.ksplit16", [][3]int{{1, 4096, 4096}, {16, 96, 4096}}},
	{"32_2.ksplit8.kc4.tk128.stages4", "128_64_2.ksplit8", [][3]int{{3, 64, 2048}, {1, 100, 4096}}},
	{"40_2.ksplit24.kw2.kc2.tk128.stages6.pdl1.pf64.xm1.ld1", "128_64_2.ksplit24", [][3]int{{1, 2560, 6144}, {7, 2560, 6144}, {16, 2560, 6144}, {20, 130, 6144}, {7, 2560, 6144}}},
	{"40_4.ksplit8.kw4.kc3.tk64.stages8.pdl1.pf8.xm1", "128_64_2.ksplit8", [][3]int{{16, 2560, 6144}, {3, 2560, 6144}}},
	{"40_2.ksplit24.kw2.kc2.tk128.stages8.pdl1.lp2.xm1", "128_64_2.ksplit24", [][3]int{{16, 2560, 6144}, {20, 130, 6144}, {1, 2560, 6144}, {7, 2560, 6144}}},
	{"40_10.ksplit24.kw2.kc2.tk128.stages8.pdl1", "128_64_2.ksplit24", [][3]int{{16, 2560, 6144}, {20, 130, 6144}, {7, 2560, 6144}}},
	{"40_10.ksplit24.kw2.kc2.tk128.stages8.pdl1.lp2", "128_64_2.ksplit24", [][3]int{{1, 2560, 6144}, {16, 2560, 6144}}},
	{"40_10.ksplit24.kw2.kc2.tk128.stages8.pdl2.pg16.xm1", "128_64_2.ksplit24", [][3]int{{20, 130, 6144}, {1, 2560, 6144}, {7, 2560, 6144}}},
	{"40_10.ksplit24.kw2.kc2.tk128.stages16.pdl2.lp2.xg1", "128_64_2.ksplit24", [][3]int{{1, 2560, 6144}, {16, 2560, 6144}, {20, 130, 6144}, {7, 2560, 6144}}},
	{"40_10.ksplit24.kw2.kc2.stages10.pdl1.lp2.xg2", "128_64_2.ksplit24", [][3]int{{16, 2560, 6144}, {1, 2560, 6144}}},
	{"32_2.ksplit8.kc4.tk128.stages4.xg1", "128_64_2.ksplit8", [][3]int{{3, 64, 2048}, {1, 100, 4096}}},
	{"40_10.ksplit24.kw2.kc2.tk128.stages8.pdl2.lp2.pre2", "128_64_2.ksplit24", [][3]int{{1, 2560, 6144}, {16, 2560, 6144}, {20, 130, 6144}}},
	{"40_10.ksplit24.kw2.kc2.tk128.stages8.pdl2.lp2.xa1", "128_64_2.ksplit24", [][3]int{{1, 2560, 6144}, {7, 2560, 6144}, {16, 2560, 6144}, {20, 130, 6144}}},
	{"40_10.ksplit24.kw2.kc2.tk128.stages8.pdl2.lp2.pre4.xa1", "128_64_2.ksplit24", [][3]int{{16, 2560, 6144}, {1, 2560, 6144}}},
	{"40_10.ksplit24.kw2.kc2.tk128.stages12.pdl2.lp2.xa1", "128_64_2.ksplit24", [][3]int{{1, 2560, 6144}, {16, 2560, 6144}, {37, 200, 6144}}},
	{"64_8.ksplit16.kw2.kc2.tk128.stages12.pdl2.lp2.xs2", "128_64_2.ksplit16", [][3]int{{1, 4096, 4096}, {16, 4096, 4096}, {20, 130, 4096}}},
	{"40_10.ksplit24.kw2.kc2.tk128.stages18.pdl2.lp2.xs2", "128_64_2.ksplit24", [][3]int{{1, 2560, 6144}, {7, 2560, 6144}, {16, 2560, 6144}, {20, 130, 6144}}},
	{"40_10.ksplit24.kw2.kc2.tk128.stages16.pdl1.lp2.xs3", "128_64_2.ksplit24", [][3]int{{16, 2560, 6144}, {1, 2560, 6144}}},
	{"40_10.ksplit24.kw2.kc2.tk128.stages12.pdl2.lp2.xa1.er1", "128_64_2.ksplit24", [][3]int{{1, 2560, 6144}, {16, 2560, 6144}, {20, 130, 6144}}},
	{"40_10.ksplit24.kw2.kc2.tk128.stages18.pdl2.lp2.xs3.er1", "128_64_2.ksplit24", [][3]int{{7, 2560, 6144}, {16, 2560, 6144}}},
	{"64_8.ksplit16.kw2.kc2.tk128.stages10.pdl2.lp2.xa1.er1", "128_64_2.ksplit16", [][3]int{{1, 4096, 4096}, {7, 4096, 4096}, {16, 4096, 4096}, {20, 130, 4096}, {7, 300, 8192}}},
	// RV: the partials in the fragments' order, two floats a remote store
	{"64_8.ksplit16.kw2.kc2.tk128.stages10.pdl2.lp2.xa1.er1.rv1", "128_64_2.ksplit16", [][3]int{{1, 4096, 4096}, {7, 4096, 4096}, {16, 4096, 4096}, {20, 130, 4096}}},
	{"40_10.ksplit24.kw2.kc2.tk128.stages12.pdl2.lp2.xa1.er1.rv1", "128_64_2.ksplit24", [][3]int{{1, 2560, 6144}, {7, 2560, 6144}, {16, 2560, 6144}, {20, 130, 6144}}},
	{"64_8.ksplit8.kw4.kc3.tk64.stages8.rv1", "128_64_2.ksplit8", [][3]int{{7, 2560, 6144}, {20, 130, 6144}, {1, 100, 6144}}},
	// MB on clusters: 8 and 1 rows a block, RV and the row-ordered partials
	{"40_10.ksplit24.kw2.kc2.tk128.stages18.pdl2.lp2.xa1.er1.mb8", "128_64_2.ksplit24", [][3]int{{1, 2560, 6144}, {7, 2560, 6144}, {16, 2560, 6144}, {20, 130, 6144}}},
	{"40_10.ksplit24.kw2.kc2.tk128.stages20.pdl2.lp2.xa1.er1.mb1", "128_64_2.ksplit24", [][3]int{{1, 2560, 6144}, {3, 2560, 6144}, {20, 130, 6144}}},
	{"64_8.ksplit16.kw2.kc2.tk128.stages10.pdl2.lp2.xa1.er1.rv1.mb8", "128_64_2.ksplit16", [][3]int{{1, 4096, 4096}, {7, 4096, 4096}, {16, 4096, 4096}, {20, 130, 4096}}},
	{"64_8.ksplit16.kw2.kc2.tk128.stages12.pdl2.lp2.xa1.er1.mb1", "128_64_2.ksplit16", [][3]int{{1, 4096, 4096}, {5, 4096, 4096}, {20, 130, 4096}}},
	{"64_8.ksplit8.kw4.kc3.tk64.stages8.mb4", "128_64_2.ksplit8", [][3]int{{7, 2560, 6144}, {20, 130, 6144}, {1, 100, 6144}}},
	// WR on clusters: Wout's XA tile, the 64_8 RV tile
	{"40_10.ksplit24.kw2.kc2.tk128.stages12.pdl2.lp2.xa1.er1.wr1", "128_64_2.ksplit24", [][3]int{{1, 2560, 6144}, {7, 2560, 6144}, {16, 2560, 6144}, {20, 130, 6144}}},
	{"64_8.ksplit16.kw2.kc2.tk128.stages10.pdl2.lp2.xa1.er1.rv1.wr1", "128_64_2.ksplit16", [][3]int{{1, 4096, 4096}, {16, 4096, 4096}, {20, 130, 4096}}},
}

// TestDecodeSplitThroughPlan: gemm_decode's KSPLIT tiles (WATCHDOG=1) give
// the bits of gemm_wgmma's tile of the same split class, fp32 and fp16 Y,
// on tails in M and N, M above 16, 2 to 8 chunks, KW 2 and 4.
func TestDecodeSplitThroughPlan(t *testing.T) {
	sameBitsAsWgmmaSplit(t, decodeSplitCases)
}

// TestDecodeClusterThroughPlan: the cluster tiles (KC > 1, WATCHDOG=1)
// give the bits of gemm_wgmma's tile of the same split class, fp32 and
// fp16 Y (decodeClusterCases), and M 1 with X's first row gives row 0 of
// the larger M (batch invariance by prefix: the partials of M 1 hold one
// row, those of M 16 sixteen).
func TestDecodeClusterThroughPlan(t *testing.T) {
	sameBitsAsWgmmaSplit(t, decodeClusterCases)
	b := testBackend(t)
	ctx := context.Background()
	fam := builtin.CUDAGemmDecode()
	for _, f16 := range []bool{false, true} {
		op := gemmOp(f16)
		es := op.Operands[2].DType.Size()
		for _, c := range decodeClusterCases {
			s := c.shapes[len(c.shapes)-1]
			d := dims(s[0], s[1], s[2])
			p, sets := newProblem(t, b, op, d, 17)
			k := load(ctx, t, b, fam, op, d, c.tile, "WATCHDOG=1")
			want, err := runY(p, k)
			k.Close()
			p.Close()
			if err != nil {
				t.Fatalf("%s %v: %v", c.tile, s, err)
			}
			d1 := dims(1, s[1], s[2])
			p1, err := b.NewProblem(ctx, op, d1, [][][]byte{{sets[0][0][:2*s[2]], sets[0][1]}})
			if err != nil {
				t.Fatal(err)
			}
			k = load(ctx, t, b, fam, op, d1, c.tile, "WATCHDOG=1")
			got, err := runY(p1, k)
			k.Close()
			p1.Close()
			if err != nil {
				t.Fatal(err)
			}
			if n := diffCount(got, want[:len(got)], es); n != 0 {
				t.Errorf("%s %v f16=%v: M 1 differs from row 0 of M %d in %d elements", c.tile, s, f16, s[0], n)
			}
		}
	}
}

// sameBitsAsWgmmaSplit runs each case's gemm_decode tile (WATCHDOG=1) and
// its gemm_wgmma reference on its shapes, fp32 and fp16 Y, and requires the
// same bits.
func sameBitsAsWgmmaSplit(t *testing.T, cases []struct {
	tile, ref string
	shapes    [][3]int
}) {
	t.Helper()
	b := testBackend(t)
	if b.ccMajor < 9 {
		t.Skip("gemm_decode needs sm_90")
	}
	ctx := context.Background()
	fam, wg := builtin.CUDAGemmDecode(), builtin.CUDAGemmWgmma()
	for _, f16 := range []bool{false, true} {
		op := gemmOp(f16)
		es := op.Operands[2].DType.Size()
		for _, c := range cases {
			for _, s := range c.shapes {
				d := dims(s[0], s[1], s[2])
				p, _ := newProblem(t, b, op, d, 13)
				rk := load(ctx, t, b, wg, op, d, c.ref)
				want, err := runY(p, rk)
				rk.Close()
				if err != nil {
					t.Fatalf("%s %v: %v", c.ref, s, err)
				}
				k := load(ctx, t, b, fam, op, d, c.tile, "WATCHDOG=1")
				got, err := runY(p, k)
				k.Close()
				p.Close()
				if err != nil {
					t.Fatalf("%s %v f16=%v: %v", c.tile, s, f16, err)
				}
				if n := diffCount(got, want, es); n != 0 {
					t.Errorf("%s %v f16=%v: %d elements differ from gemm_wgmma/%s", c.tile, s, f16, n, c.ref)
				}
			}
		}
	}
}

// TestDecodeSplitCases (no GPU): the split and cluster cases name valid
// tiles of one class with their reference, and every shape passes both
// Plans.
func TestDecodeSplitCases(t *testing.T) {
	fam, wg := builtin.CUDAGemmDecode(), builtin.CUDAGemmWgmma()
	for _, c := range append(decodeSplitCases[:len(decodeSplitCases):len(decodeSplitCases)], decodeClusterCases...) {
		p, err := fam.ParseTile(c.tile)
		if err != nil {
			t.Fatal(err)
		}
		q, err := wg.ParseTile(c.ref)
		if err != nil {
			t.Fatal(err)
		}
		if fam.Class(p) != wg.Class(q) {
			t.Errorf("%s: class %s, %s: %s", c.tile, fam.Class(p), c.ref, wg.Class(q))
		}
		for _, s := range c.shapes {
			if _, err := fam.Plan(p, dims(s[0], s[1], s[2])); err != nil {
				t.Errorf("%s %v: %v", c.tile, s, err)
			}
			if _, err := wg.Plan(q, dims(s[0], s[1], s[2])); err != nil {
				t.Errorf("%s %v: %v", c.ref, s, err)
			}
		}
	}
}
