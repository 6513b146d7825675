package report

import (
	"bytes"
	"encoding/json"
	"math"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tilefit/tilefit/kernel"
	"github.com/tilefit/tilefit/result"
)

var prov = result.Provenance{Backend: "cpu", Device: "d", Family: "f", SourceHash: "abc", Operator: "gemm_f16", Types: "X=f16,W=f16,Y=f32"}

func ok(tile string, us ...float64) result.Candidate {
	return result.Candidate{Tile: tile, Status: result.OK, Bitwise: true, Dispatches: 8, Samples: us}
}

func row(shape string, m int, t time.Time, cands ...result.Candidate) result.CellResult {
	return result.CellResult{
		Prov: prov, Cell: result.Cell{Shape: shape, N: 10, K: 20, M: m, Calls: 3},
		Reference: "ref", Rounds: 3, Sets: 2, Started: t, Finished: t.Add(time.Second), Candidates: cands,
	}
}

func TestMergeLatestWins(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	doc := build(Input{Cells: []result.CellResult{
		row("A", 4, t0, ok("ref", 10, 10, 10), ok("x", 5, 5, 5), result.Candidate{Tile: "y", Status: result.Crashed}),
		row("A", 4, t0.Add(time.Hour), ok("ref", 12, 12, 12), ok("y", 3, 3, 3)),
	}})
	if len(doc.Provenances) != 1 || len(doc.Provenances[0].Cells) != 1 {
		t.Fatalf("want 1 section with 1 merged cell, got %+v", doc.Provenances)
	}
	sec := doc.Provenances[0]
	c := sec.Cells[0]
	if c.ReferenceUs != 12 || c.Best != "y" || c.BestUs != 3 || len(c.Runs) != 2 {
		t.Errorf("merged cell: ref %v best %s %v runs %d", c.ReferenceUs, c.Best, c.BestUs, len(c.Runs))
	}
	if got := c.find("x", false); got == nil || got.Run != 0 || got.RatioToReference != num(5.0/12) {
		t.Errorf("x = %+v", got)
	}
	if len(sec.Failures) != 0 {
		t.Errorf("the retried crash is still a failure: %+v", sec.Failures)
	}
	if want := []string{"y", "x", "ref"}; strings.Join(c.Fastest, ",") != strings.Join(want, ",") {
		t.Errorf("fastest = %v, want %v", c.Fastest, want)
	}
	// No workload: every shape is in the chunk, with its stored calls.
	if tot := sec.Totals[0]; !tot.Complete || tot.ReferenceMs != num(3*12.0/1000) || tot.BestMs != num(3*3.0/1000) {
		t.Errorf("totals = %+v", tot)
	}
}

func TestParitySummary(t *testing.T) {
	t0 := time.Unix(0, 0).UTC()
	vendor := result.Candidate{Tile: "blas", Vendor: true, Status: result.OK, MaxErr: 0.5, Samples: []float64{1}}
	twin := ok("ref", 1)
	twin.AA, twin.Bitwise = true, false // never counted
	cases := []struct {
		cells []result.CellResult
		all   bool
		want  string
	}{
		{[]result.CellResult{row("A", 1, t0, ok("ref", 1), ok("x", 1), vendor, twin), row("B", 2, t0, ok("ref", 1), ok("x", 1))},
			true, "ALL BITWISE: 2 tiles × 2 shapes × 2 M"},
		{[]result.CellResult{row("A", 1, t0, ok("ref", 1), result.Candidate{Tile: "x", Status: result.Timeout})},
			true, "ALL BITWISE: 1 tile × 1 shape × 1 M (1 not checked: 1 timeout)"},
		{[]result.CellResult{row("A", 1, t0, ok("ref", 1), result.Candidate{Tile: "x", Status: result.OK, Samples: []float64{1}})},
			false, "NOT ALL BITWISE: 1 of 2 checked candidates differ from the reference — x on A M=1 (not bitwise); 1 bitwise equal across 1 tile × 1 shape × 1 M"},
		{[]result.CellResult{row("A", 1, t0, result.Candidate{Tile: "ref", Status: result.CompileFailed})},
			false, "NOT ALL BITWISE: no candidate was checked (1 not checked: 1 compile)"},
	}
	for _, tc := range cases {
		sec := build(Input{Cells: tc.cells}).Provenances[0]
		if sec.Parity.Summary != tc.want || sec.Parity.AllBitwise != tc.all {
			t.Errorf("summary = %q (all %v), want %q (all %v)", sec.Parity.Summary, sec.Parity.AllBitwise, tc.want, tc.all)
		}
	}
}

func TestNonBitwiseMarkedAndEscaped(t *testing.T) {
	t0 := time.Unix(0, 0).UTC()
	nb := ok("x", 1)
	nb.Bitwise = false
	bad := result.Candidate{Tile: "z", Status: result.CompileFailed, Detail: "\n  error: a|b\nmore", MaxErr: math.NaN()}
	in := Input{Cells: []result.CellResult{row("A|B", 1, t0, ok("ref", 2), nb, bad)}}
	var b bytes.Buffer
	if err := Markdown(&b, in); err != nil {
		t.Fatal(err)
	}
	md := regexp.MustCompile(` +`).ReplaceAllString(b.String(), " ") // tables are padded
	for _, want := range []string{"| `x` † | 1.00 |", `| A\|B | 10 | 20 | 1 |`, "| `z` | compile | error: a\\|b |"} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md)
		}
	}
	b.Reset()
	if err := JSON(&b, in); err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("JSON with NaN max_err does not parse: %v", err)
	}
	if !strings.Contains(b.String(), `"max_err": null`) {
		t.Error("NaN max_err is not null in JSON")
	}
}

func TestEmpty(t *testing.T) {
	var b bytes.Buffer
	in := Input{Generated: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	if err := Markdown(&b, in); err != nil {
		t.Fatal(err)
	}
	if want := "# tilefit report\n\nGenerated 2025-01-01 00:00:00 UTC from 0 stored cell runs.\n\nNo results.\n"; b.String() != want {
		t.Errorf("empty Markdown = %q, want %q", b.String(), want)
	}
	b.Reset()
	if err := JSON(&b, in); err != nil || !strings.Contains(b.String(), `"provenances": []`) {
		t.Errorf("empty JSON = %s, %v", b.String(), err)
	}
	b.Reset()
	if err := CSV(&b, in); err != nil || b.String() != "Problem,Provider,Operation,Status,Disposition,prov_key,backend,device,family,operator,types,shape,m,n,k,calls,aa,bitwise,"+
		"samples,Runtime,runtime_min_ms,runtime_max_ms,Bytes,Flops,Flops/Byte,GB/s,GFLOPs,ratio_to_reference,ratio_lo,ratio_hi,verdict,max_err,regs,local_bytes,smem_bytes,rows_compared,rows_changed\n" {
		t.Errorf("empty CSV = %q, %v", b.String(), err)
	}
}

func TestMedianDoesNotMutate(t *testing.T) {
	xs := []float64{3, 1, 2, 4}
	if m := median(xs); m != 2.5 {
		t.Errorf("median = %v", m)
	}
	if xs[0] != 3 || xs[3] != 4 {
		t.Errorf("median sorted its input: %v", xs)
	}
}

// TestNText: the per-cell table's N column shows an operator's own
// dimensions when it has no N (hc_up_f16's S), N otherwise.
func TestNText(t *testing.T) {
	for _, tc := range []struct {
		n    int
		d    kernel.Dims
		want string
	}{
		{640, kernel.Dims{"M": 256, "N": 640, "K": 2560}, "640"},
		{640, nil, "640"},
		{0, kernel.Dims{"M": 256, "S": 2560, "K": 320}, "S=2560"},
		{8, kernel.Dims{"M": 1, "N": 8, "K": 64, "G": 32}, "8"},
	} {
		if got := nText(tc.n, tc.d); got != tc.want {
			t.Errorf("nText(%d, %v) = %q, want %q", tc.n, tc.d, got, tc.want)
		}
	}
}
