package report

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/tilefit/tilefit/result"
)

func scanRow(ref string, cands ...result.Candidate) result.CellResult {
	return result.CellResult{Reference: ref, Candidates: cands}
}

func cand(tile string, st result.Status, vendor, bitwise bool, us ...float64) result.Candidate {
	return result.Candidate{Tile: tile, Status: st, Vendor: vendor, Bitwise: bitwise, Samples: us}
}

// TestScanCell: the latest row's candidate wins; the vendor and the best
// family tile are told apart; failures and non-bitwise tiles are counted;
// the A/A twin is left out.
func TestScanCell(t *testing.T) {
	const flops = 2e9 // 2 GFLOP a call: 1000 µs is 2 GFLOP/s... ×1000 = 2000 GFLOP/s at 1 µs
	rows := []result.CellResult{
		scanRow("64_128_2", cand("64_128_2", result.OK, false, true, 1000, 1100, 900), cand("32_64_2", result.OK, false, true, 500, 500, 500),
			cand("openblas", result.OK, true, false, 800, 800), cand("64_128_2", result.OK, false, true, 1)),
		scanRow("64_128_2", cand("64_128_2", result.OK, false, true, 700), cand("16_32_1", result.ParityFailed, false, false),
			cand("128_64_2", result.OK, false, false, 400)),
	}
	rows[0].Candidates[3].AA = true
	r := ScanCell("cpu", rows, flops)
	if r.Status != ScanOK || r.Candidates != 5 || r.Failed != 1 || r.NotBitwise != 1 {
		t.Errorf("counts: %+v", r)
	}
	if r.Best != "128_64_2" || r.BestUs != 400 || math.Abs(float64(r.BestGFLOPs)-5000) > 1e-9 {
		t.Errorf("best %s %v µs %v GFLOP/s; want 128_64_2 400 µs 5000", r.Best, r.BestUs, r.BestGFLOPs)
	}
	if r.VendorUs != 800 || math.Abs(float64(r.VendorGFLOPs)-2500) > 1e-9 {
		t.Errorf("vendor %v µs %v GFLOP/s", r.VendorUs, r.VendorGFLOPs)
	}
	if math.Abs(float64(r.ReferenceGFLOPs)-2e9/(700*1e3)) > 1e-9 {
		t.Errorf("reference rate %v: the later row's 700 µs should win", r.ReferenceGFLOPs)
	}
	if e := ScanCell("cpu", nil, flops); e.VendorGFLOPs.Valid() || e.BestGFLOPs.Valid() || e.Best != "" {
		t.Errorf("empty cell: %+v", e)
	}
}

func TestScanRoofAndLabels(t *testing.T) {
	// 256³: 2·256³ FLOPs over 8·256² bytes = 64 FLOP/byte.
	fl, by := 2*math.Pow(256, 3), 8*math.Pow(256, 2)
	if r := ScanRoof(fl, by, 1000, 10); r != 640 {
		t.Errorf("bandwidth-bound roof %v, want 640", r)
	}
	if r := ScanRoof(fl, by, 100, 10); r != 100 {
		t.Errorf("peak-bound roof %v, want 100", r)
	}
	if r := ScanRoof(fl, by, NoRate, 10); r.Valid() {
		t.Errorf("roof without a peak %v", r)
	}
	if SizeLabel(8, 8, 8) != "8³" || SizeLabel(1, 2, 3) != "1×2×3" {
		t.Error("labels")
	}
}

func testScan() Scan {
	s := Scan{Operator: "gemm_f16", Doc: "Y = X·Wᵀ", Types: "X=f16,W=f16,Y=f32", DB: "t.db",
		Backends: []ScanBackend{{Backend: "cpu", Device: "c|pu", Families: "gemm_f16", Vendor: "openblas", CopyGBps: 20, PeakGFLOPs: 100},
			{Backend: "cuda", Device: "H200", Families: "gemm_f16,gemm_wgmma", Vendor: "cublas", CopyGBps: NoRate, PeakGFLOPs: NoRate}}}
	for _, n := range []int{64, 4096} {
		f, b := 2*math.Pow(float64(n), 3), 8*math.Pow(float64(n), 2)
		cpu := ScanResult{Backend: "cpu", Status: ScanOK, VendorGFLOPs: 50, BestGFLOPs: 60, Best: "64_128_2", RoofGFLOPs: ScanRoof(f, b, 100, 20), Candidates: 3}
		if n == 4096 {
			cpu = ScanResult{Backend: "cpu", Status: ScanSkipped, Note: "estimated 9m exceeds --size-budget 5m", VendorGFLOPs: NoRate, BestGFLOPs: NoRate, RoofGFLOPs: 100}
		}
		gpu := ScanResult{Backend: "cuda", Status: ScanOK, VendorGFLOPs: 700000, BestGFLOPs: 650000, Best: "gemm_wgmma/128_256_2", RoofGFLOPs: NoRate, Candidates: 71, Failed: 1}
		s.Sizes = append(s.Sizes, ScanSize{M: n, N: n, K: n, FLOPs: f, Bytes: b, Results: []ScanResult{cpu, gpu}})
	}
	return s
}

func TestScanMarkdownAndJSON(t *testing.T) {
	var b bytes.Buffer
	if err := ScanMarkdown(&b, testScan()); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, want := range []string{
		"| size M×N×K | cpu openblas | cpu best | cpu tile   | cpu roof | cuda cublas | cuda best | cuda tile              | cuda roof |",
		"| 64³        |         50.0 |     60.0 | `64_128_2` |      100 |      700000 |    650000 | `gemm_wgmma/128_256_2` |         — |",
		"| 4096³      |      skipped |        — | —          |      100 |",
		"| cpu     | c\\|pu  |", "100 (openblas)",
		"- cpu 4096³: skipped estimated 9m exceeds --size-budget 5m\n",
		"- cuda 64³: 1 of 71 candidates failed (tilefit report --db t.db lists them)\n",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md)
		}
	}
	b.Reset()
	if err := ScanJSON(&b, testScan()); err != nil {
		t.Fatal(err)
	}
	js := b.String()
	for _, want := range []string{`"schema": "tilefit.scan/v1"`, `"copy_gbps": null`, `"vendor_gflops": 700000`, `"status": "skipped"`} {
		if !strings.Contains(js, want) {
			t.Errorf("JSON lacks %q:\n%s", want, js)
		}
	}
}

// TestScanChart: a best and a vendor series per backend, the bandwidth
// roof up to 1.5× the peak, the peaks as levels; the figure renders.
func TestScanChart(t *testing.T) {
	lc := ScanChart(testScan())
	if !lc.LogX || !lc.LogY || lc.XLabel != "size M = N = K" || len(lc.Series) != 6 || len(lc.Levels) != 1 {
		t.Fatalf("chart %+v", lc)
	}
	roof := lc.Series[2]
	// cpu at 64³: 16 FLOP/byte × 20 GB/s = 320 > 1.5 × 100: cut; 4096³ too.
	if !strings.Contains(roof.Name, "cpu copy 20 GB/s") || !math.IsNaN(roof.Y[0]) || !math.IsNaN(roof.Y[1]) {
		t.Errorf("cpu roof %+v", roof)
	}
	if best := lc.Series[0]; best.Y[0] != 60 || !math.IsNaN(best.Y[1]) {
		t.Errorf("cpu best %+v: a skipped size is a gap", best)
	}
	svg, err := lc.Figure("scan-gflops").Bytes("svg")
	if err != nil || !bytes.Contains(svg, []byte("cuda best tile")) {
		t.Errorf("svg: %v", err)
	}
}

// TestScanVendorWarning: a backend whose device warns about its vendor
// library has the warning as a note (before the sizes' notes) and in the
// JSON; a backend without one has neither.
func TestScanVendorWarning(t *testing.T) {
	const w = "vendor baseline openblas: OpenBLAS 0.3.21 chose its Prescott kernels on a CPU with avx512f"
	s := testScan()
	s.Backends[0].VendorWarning = w
	var b bytes.Buffer
	if err := ScanMarkdown(&b, s); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	note := "- cpu: " + w + "\n"
	if i, j := strings.Index(md, note), strings.Index(md, "- cpu 4096³: skipped"); i < 0 || j < 0 || i > j {
		t.Errorf("Markdown lacks the note %q before the sizes' notes:\n%s", note, md)
	}
	if strings.Contains(md, "- cuda: ") {
		t.Errorf("a note for cuda, which has no vendor warning:\n%s", md)
	}
	b.Reset()
	if err := ScanJSON(&b, s); err != nil {
		t.Fatal(err)
	}
	if js := b.String(); strings.Count(js, `"vendor_warning"`) != 1 || !strings.Contains(js, `"vendor_warning": "`+w+`"`) {
		t.Errorf("JSON: want one vendor_warning %q:\n%s", w, js)
	}
	b.Reset()
	if err := ScanJSON(&b, testScan()); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "vendor_warning") {
		t.Errorf("JSON without a warning has vendor_warning:\n%s", b.String())
	}
}
