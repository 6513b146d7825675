package report

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/tilefit/tilefit/builtin"
	"github.com/tilefit/tilefit/kernel"
	"github.com/tilefit/tilefit/result"
)

// classesFixture is a sweep of both CUDA gemm_f16 families on two shapes
// at M 256 and 2048: on hc_read a split-K wgmma tile (its own numerics
// class, not bitwise equal to the reference) is far faster; on Wout the
// fastest tile at M 256 is a main-class tile whose rows changed with M
// (the sweep failed it at 2048), so Wout's one class keeps the reference.
func classesFixture(t *testing.T) []result.CellResult {
	t.Helper()
	mma, wg := builtin.CUDAGemmF16(), builtin.CUDAGemmWgmma()
	prov := result.Provenance{Backend: "cuda", Device: "NVIDIA H200", Arch: "sm_90", Compiler: "nvrtc 13.0", Family: "gemm_f16,gemm_wgmma",
		SourceHash: strings.Repeat("cd", 32), Operator: "gemm_f16", Types: "X=f16,W=f16,Y=f32"}
	type tc struct {
		fam  *kernel.Family
		tile string
		us   float64
		bad  string
	}
	var cells []result.CellResult
	add := func(shape string, n, k, m, calls int, cs ...tc) {
		t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC).Add(time.Duration(len(cells)) * time.Minute)
		c := result.CellResult{Prov: prov, Cell: result.Cell{Shape: shape, N: n, K: k, M: m, Calls: calls}, Reference: mma.Reference, Rounds: 12, Sets: 2, Started: t0, Finished: t0.Add(time.Second)}
		for _, x := range cs {
			p, err := x.fam.ParseTile(x.tile)
			if err != nil {
				t.Fatal(err)
			}
			name := x.tile
			if x.fam == wg {
				name = "gemm_wgmma/" + x.tile
			}
			cand := result.Candidate{Tile: name, Family: x.fam.Name, Params: p.String(), Class: x.fam.Class(p), Status: result.OK, Dispatches: 4, Bitwise: x.fam.Class(p) == "gemm_f16"}
			if x.bad != "" {
				cand.Status, cand.Detail, cand.Bitwise = result.ParityFailed, x.bad, false
			} else {
				for i := range 12 {
					cand.Samples = append(cand.Samples, x.us*(1+0.2*math.Sin(float64(i)))*(1+0.002*math.Cos(float64(i)*3+x.us)))
				}
			}
			c.Candidates = append(c.Candidates, cand)
		}
		vendor := result.Candidate{Tile: "cublas", Vendor: true, Status: result.OK, Dispatches: 4}
		for i := range 12 {
			vendor.Samples = append(vendor.Samples, 0.8*cs[0].us*(1+0.2*math.Sin(float64(i))))
		}
		c.Candidates = append(c.Candidates, vendor)
		cells = append(cells, c)
	}
	for _, m := range []int{256, 2048} {
		u := float64(m) / 10
		add("hc_read", 324, 10240, m, 96, tc{mma, mma.Reference, u, ""}, tc{wg, "128_64_1", 0.9 * u, ""}, tc{wg, "128_64_1.ksplit16", 0.4 * u, ""})
		bad := ""
		if m == 2048 {
			bad = "not batch-invariant: 3 of 256 rows changed between M 256 and M=2048 (first: row 1 of Y at M=256 differs from M=2048)"
		}
		add("Wout", 2560, 6144, m, 48, tc{mma, mma.Reference, u, ""}, tc{mma, "64_128_4", 0.5 * u, bad}, tc{wg, "128_256_2", 0.95 * u, ""})
	}
	return cells
}

func TestReportNumericsClasses(t *testing.T) {
	in := Input{Cells: classesFixture(t), Generated: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}
	doc := build(in)
	sec := doc.Provenances[0]
	if len(sec.Classes) != 2 || sec.Classes[0].Name != "gemm_f16" || sec.Classes[1].Name != "gemm_f16/splitk1024" {
		t.Fatalf("classes %+v", sec.Classes)
	}
	if c := sec.Classes[0]; c.Tiles != 4 || c.Reference != "the reference tile 128_128_4" || strings.Join(c.Families, ",") != "gemm_f16,gemm_wgmma" {
		t.Errorf("main class %+v", c)
	}
	if c := sec.Classes[1]; c.Tiles != 1 || c.Reference != "its first verified tile in each cell" {
		t.Errorf("split-K class %+v", c)
	}
	// Parity is judged within each class: the split-K tile (not bitwise
	// equal to the reference, equal within its class) is not a difference;
	// the tile that failed batch invariance is.
	if d := sec.Parity.Differ; len(d) != 1 || d[0].Tile != "64_128_4" || !strings.Contains(sec.Parity.Summary, "differ from their numerics class's reference") {
		t.Errorf("parity %+v", sec.Parity)
	}
	ok := build(Input{Cells: classesFixture(t)[:1], Generated: in.Generated}).Provenances[0]
	if !ok.Parity.AllBitwise || !strings.HasPrefix(ok.Parity.Summary, "ALL BITWISE within each numerics class (gemm_f16, gemm_f16/splitk1024): 3 tiles") {
		t.Errorf("hc_read alone: parity %+v", ok.Parity)
	}
	classes := map[string]string{}
	for _, sc := range sec.ShapeClasses {
		classes[sc.Shape] = sc.Class
	}
	if classes["hc_read"] != "gemm_f16/splitk1024" || classes["Wout"] != "gemm_f16" {
		t.Errorf("shape classes %+v", sec.ShapeClasses)
	}
	for _, c := range sec.Cells {
		switch {
		case c.Shape == "hc_read" && (c.OneClass == nil || c.OneClass.Tile != "gemm_wgmma/128_64_1.ksplit16"):
			t.Errorf("hc_read M=%d one class %+v", c.M, c.OneClass)
		case c.Shape == "Wout" && (c.OneClass == nil || c.OneClass.Tile != "gemm_wgmma/128_256_2"):
			t.Errorf("Wout M=%d one class %+v; want the wgmma tile (64_128_4 changed rows)", c.M, c.OneClass)
		case c.Shape == "Wout" && c.M == 256 && c.Best != "64_128_4":
			t.Errorf("Wout M=256 best per cell %s; want 64_128_4 (best per cell is any OK tile)", c.Best)
		}
		if b := c.BestByClass["gemm_f16/splitk1024"]; c.Shape == "hc_read" && b.Tile != "gemm_wgmma/128_64_1.ksplit16" {
			t.Errorf("hc_read best of the split-K class %+v", b)
		}
	}
	for _, tot := range sec.Totals {
		// Per cell: hc_read split-K 0.4, Wout wgmma 0.95 (at M 2048 also
		// the best per cell); cublas is 0.8 of the reference.
		want := (96*0.4 + 48*0.95) / (96 + 48.0)
		o := tot.OneClassOverReference
		if o == nil || math.Abs(o.Ratio-want) > 0.01 || o.Verdict != "faster" {
			t.Errorf("M=%d one class / reference %+v; want ≈ %.3f faster", tot.M, o, want)
		}
		if v := tot.VendorVsOneClass["cublas"]; v == nil || math.Abs(v.Ratio-0.8/want) > 0.02 {
			t.Errorf("M=%d cublas / one class %+v; want ≈ %.3f", tot.M, v, 0.8/want)
		}
		if ms := tot.ClassMs["gemm_f16/splitk1024"]; !ms.valid() || !tot.partial["class gemm_f16/splitk1024"] {
			t.Errorf("M=%d split-K class ms %v partial %v; want a partial sum (Wout has no split-K tile)", tot.M, ms, tot.partial)
		}
	}
	var md bytes.Buffer
	if err := Markdown(&md, in); err != nil {
		t.Fatal(err)
	}
	out := md.String()
	for _, want := range []string{"### Numerics classes", "| `gemm_f16/splitk1024` |", "one class per shape", "cublas/one class",
		"† not bitwise equal to its numerics class's reference", "`gemm_wgmma/128_64_1.ksplit16` "} {
		if !strings.Contains(out, want) {
			t.Errorf("Markdown lacks %q", want)
		}
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "| hc_read ") && strings.Contains(line, "†") {
			t.Errorf("a hc_read tile is marked † (not bitwise), though the split-K tile is bitwise within its class:\n%s", line)
		}
	}
	golden(t, "classes.md.golden", md.Bytes())
}

// TestTotalsNotSummedMedians: a tile that left the adaptive rounds after
// the machine's quiet first rounds has a low raw median; summed medians
// would make it look 36 % faster, the paired total gives its true 10 %.
func TestTotalsNotSummedMedians(t *testing.T) {
	prov := result.Provenance{Backend: "cpu", Device: "d", Family: "gemm_f16", SourceHash: "ab", Operator: "gemm_f16", Types: "X=f16,W=f16,Y=f32"}
	level := func(i int) float64 {
		if i < 12 {
			return 100
		}
		return 140
	}
	c := result.CellResult{Prov: prov, Cell: result.Cell{Shape: "s", N: 8, K: 8, M: 8, Calls: 10}, Reference: "64_64_2", Rounds: 48, Sets: 1,
		Started: time.Unix(0, 0), Finished: time.Unix(1, 0)}
	ref := result.Candidate{Tile: "64_64_2", Status: result.OK, Bitwise: true, Dispatches: 1}
	fast := result.Candidate{Tile: "32_64_2", Status: result.OK, Bitwise: true, Dispatches: 1}
	for i := range 48 {
		ref.Samples = append(ref.Samples, level(i)*(1+0.001*math.Sin(float64(i))))
		if i < 12 {
			fast.Samples = append(fast.Samples, 0.9*level(i)*(1+0.001*math.Cos(float64(i))))
		}
	}
	c.Candidates = []result.Candidate{ref, fast}
	doc := build(Input{Cells: []result.CellResult{c}, Generated: time.Unix(2, 0)})
	tot := doc.Provenances[0].Totals[0]
	if o := tot.BestVsReference; o == nil || math.Abs(o.Ratio-0.9) > 0.005 || math.Abs(float64(tot.BestOverReference)-0.9) > 0.005 {
		t.Errorf("best/reference %v %+v; want the paired 0.9 (summed medians: %.2f)", tot.BestOverReference, o, 90/140.0)
	}
	if want := 10 * 140 * 0.9 / 1000; math.Abs(float64(tot.BestMs)-want) > 0.02 {
		t.Errorf("best ms %v; want ≈ %.3f", tot.BestMs, want)
	}
}
