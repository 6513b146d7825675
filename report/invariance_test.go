package report

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tilefit/tilefit/builtin"
	"github.com/tilefit/tilefit/kernel"
	"github.com/tilefit/tilefit/result"
	"github.com/tilefit/tilefit/store"
)

var invProv = result.Provenance{Backend: "cuda", Device: "NVIDIA H200", Arch: "sm_90a", Compiler: "nvrtc 13.0",
	Flags: "--gpu-architecture=sm_90a -O3", Driver: "580.65.06", Family: "mma_f16", SourceHash: "a0b1c2d3e4f5a0b1",
	Operator: "gemm_f16", Types: "X=f16,W=f16,Y=f32"}

// invCell is a cell of shape name (N, K) at M whose tiles have the rows of
// rowsOf(tile, M) (nil: no rows, as a cell of an older tilefit).
func invCell(name string, n, k, m int, t0 time.Time, tiles []string, rowsOf func(tile string, m int) result.Hashes) result.CellResult {
	c := result.CellResult{Prov: invProv, Cell: result.NewCell(name, builtin.GemmF16(), kernel.Dims{"M": m, "N": n, "K": k}, 1),
		Reference: tiles[0], Seed: 42, Rounds: 6, Sets: 2, Started: t0, Finished: t0.Add(time.Second)}
	if rowsOf != nil {
		c.InputKey = name + "-w"
		c.InputRows = make(result.Hashes, m)
		for r := range c.InputRows {
			c.InputRows[r] = uint64(1000 + r)
		}
	}
	for i, tile := range tiles {
		cand := result.Candidate{Tile: tile, Family: "mma_f16", Status: result.OK, Bitwise: true, MaxErr: 0.1, Dispatches: 8,
			Samples: []float64{10 + float64(i), 10 + float64(i), 10 + float64(i), 10 + float64(i), 10 + float64(i), 10 + float64(i)}}
		if tile == "cublas" {
			cand.Family, cand.Vendor, cand.Bitwise = "", true, false
		}
		if rowsOf != nil {
			if h := rowsOf(tile, m); h != nil {
				cand.Rows = []result.RowHashes{{Operand: "Y", Hashes: h}}
			}
		}
		c.Candidates = append(c.Candidates, cand)
	}
	return c
}

// invFixture: hc_read at M 1, 37, 130 (tiles invariant; cublas changes 13
// rows of 38 — as a split-K that changes with M would), Wout at M 37, 130 (64_128_4 changes
// rows 3 and 9 at M=130, so the sweep failed it there), Wsg at one M, and
// Wold stored without row hashes.
func invFixture(t *testing.T) Input {
	t.Helper()
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	rows := func(salt uint64, change func(m, r int) bool) func(string, int) result.Hashes {
		return func(tile string, m int) result.Hashes {
			h := make(result.Hashes, m)
			for r := range h {
				h[r] = salt<<32 | uint64(r)
				if change != nil && change(m, r) {
					h[r] ^= 0xff
				}
			}
			return h
		}
	}
	var cells []result.CellResult
	tiles := []string{"64_64_2", "128_64_4", "cublas"}
	for i, m := range []int{1, 37, 130} {
		cublas := rows(1, func(m, r int) bool { return m == 130 && r%3 == 0 }) // rows 0, 3, …, 36 at M=130
		cells = append(cells, invCell("hc_read", 324, 10240, m, t0.Add(time.Duration(i)*time.Minute), tiles, func(tile string, m int) result.Hashes {
			if tile == "cublas" {
				return cublas(tile, m)
			}
			return rows(1, nil)(tile, m)
		}))
	}
	wout := []string{"64_64_2", "64_128_4", "cublas"}
	for i, m := range []int{37, 130} {
		c := invCell("Wout", 2560, 6144, m, t0.Add(time.Duration(10+i)*time.Minute), wout, func(tile string, m int) result.Hashes {
			if tile == "64_128_4" {
				return rows(2, func(m, r int) bool { return m == 130 && (r == 3 || r == 9) })(tile, m)
			}
			return rows(2, nil)(tile, m)
		})
		if m == 130 {
			bad := c.Find("64_128_4")
			bad.Status, bad.Samples, bad.Dispatches = result.ParityFailed, nil, 0
			bad.Detail = "not batch-invariant: 2 of 37 rows changed between M 37 and M=130 (first: row 3 of Y at M=37 differs from M=130)"
		}
		cells = append(cells, c)
	}
	cells = append(cells, invCell("Wsg", 1, 2560, 130, t0.Add(20*time.Minute), tiles, rows(3, nil)))
	for i, m := range []int{37, 130} {
		cells = append(cells, invCell("Wold", 640, 2560, m, t0.Add(time.Duration(30+i)*time.Minute), tiles, nil))
	}

	ctx := context.Background()
	s, err := store.Open(ctx, filepath.Join(t.TempDir(), "inv.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, c := range cells {
		if _, err := s.SaveCell(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	stored, err := s.Cells(ctx, store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(stored, cells) {
		t.Fatal("the invariance fixture does not round-trip through the store")
	}
	return Input{Title: "tilefit report: batch invariance", Cells: stored, Generated: t0.Add(time.Hour)}
}

func TestInvarianceGolden(t *testing.T) {
	in := invFixture(t)
	var md bytes.Buffer
	if err := Markdown(&md, in); err != nil {
		t.Fatal(err)
	}
	golden(t, "invariance.md.golden", md.Bytes())

	inv := build(in).Provenances[0].Invariance
	if inv.AllInvariant || inv.Tiles != 3 || inv.Changed != 1 || inv.Vendors["cublas"] != [2]int{1 + 13, 38 + 37} {
		t.Errorf("invariance %+v", inv)
	}
	want := "NOT BATCH-INVARIANT: 1 of 3 tiles changed rows across M (2 of 150 tile rows over 3 tiles × 2 shapes) — 64_128_4 on Wout (2 of 37 rows changed) · cublas 14 of 75 rows changed"
	if inv.Summary != want {
		t.Errorf("summary\n%q\nwant\n%q", inv.Summary, want)
	}
	byTile := map[string]TileInvariance{}
	for _, s := range inv.Shapes {
		for _, c := range s.Candidates {
			byTile[s.Shape+"/"+c.Tile] = c
		}
	}
	for k, w := range map[string]string{
		"hc_read/64_64_2": "invariant 0 of 38 rows changed", "hc_read/cublas": "changed 14 of 38 rows changed",
		"Wout/64_128_4": "changed 2 of 37 rows changed", "Wout/cublas": "invariant 0 of 37 rows changed",
		"Wsg/64_64_2": "n/a n/a: one M", "Wold/cublas": "n/a n/a: not recorded",
	} {
		if c := byTile[k]; c.Status+" "+c.Text != w {
			t.Errorf("%s: %q, want %q", k, c.Status+" "+c.Text, w)
		}
	}
	if f := byTile["Wout/64_128_4"].First; f == nil || *f != (RowChange{M: 37, Against: 130, Row: 3, Operand: "Y"}) {
		t.Errorf("first changed row %+v", f)
	}

	// JSON: the section's invariance and each compared cell candidate's.
	var js bytes.Buffer
	if err := JSON(&js, in); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Provenances []struct {
			Invariance Invariance `json:"invariance"`
			Cells      []struct {
				Shape      string
				M          int
				Candidates []struct {
					Tile       string
					Invariance *CellInvariance
				}
			}
		}
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if got := doc.Provenances[0].Invariance; !reflect.DeepEqual(got, inv) {
		t.Errorf("JSON invariance differs from the model:\n%+v\n%+v", got, inv)
	}
	cellInv := map[string]*CellInvariance{}
	for _, c := range doc.Provenances[0].Cells {
		for _, cand := range c.Candidates {
			cellInv[c.Shape+"/"+strconv.Itoa(c.M)+"/"+cand.Tile] = cand.Invariance
		}
	}
	for k, w := range map[string]*CellInvariance{
		"hc_read/37/cublas": {AgainstM: 130, Rows: 37, Changed: 13}, "hc_read/1/cublas": {AgainstM: 130, Rows: 1, Changed: 1},
		"hc_read/130/cublas": nil, "Wsg/130/64_64_2": nil, "Wout/37/64_128_4": {AgainstM: 130, Rows: 37, Changed: 2},
	} {
		if got := cellInv[k]; !reflect.DeepEqual(got, w) {
			t.Errorf("%s: %+v, want %+v", k, got, w)
		}
	}

	// CSV: the last two columns.
	var cb bytes.Buffer
	if err := CSV(&cb, in); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&cb).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	found := false
	for _, r := range recs[1:] {
		if r[col["shape"]] == "hc_read" && r[col["m"]] == "37" && r[col["Operation"]] == "cublas" {
			found = true
			if got := strings.Join(r[len(r)-2:], ","); got != "37,13" {
				t.Errorf("CSV hc_read M=37 cublas rows_compared,rows_changed = %s", got)
			}
		}
	}
	if !found {
		t.Error("CSV has no hc_read M=37 cublas row")
	}

	// The sweep's closing lines: parity, then invariance.
	if lines := strings.Split(ParityLine(in), "\n"); len(lines) != 2 || lines[1] != want {
		t.Errorf("ParityLine: %q", lines)
	}
}
