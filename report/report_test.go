package report

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tilefit/tilefit/builtin"
	"github.com/tilefit/tilefit/kernel"
	"github.com/tilefit/tilefit/result"
	"github.com/tilefit/tilefit/store"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// fixtureInput stores testdata/fixture.json in a fresh database, reads it
// back as the report command would, and returns the report input.
func fixtureInput(t *testing.T) Input {
	t.Helper()
	b, err := os.ReadFile("testdata/fixture.json")
	if err != nil {
		t.Fatal(err)
	}
	var cells []result.CellResult
	if err := json.Unmarshal(b, &cells); err != nil {
		t.Fatal(err)
	}
	// The fixture's cells are gemm_f16 cells: give them the operator's
	// dimensions and counts, as a sweep records them.
	for i := range cells {
		c := &cells[i]
		op, err := builtin.GemmF16().Typed(map[string]kernel.DType{"Y": map[bool]kernel.DType{false: kernel.F32, true: kernel.F16}[c.Prov.OutF16()]})
		if err != nil {
			t.Fatal(err)
		}
		c.Cell = result.NewCell(c.Cell.Shape, op, kernel.Dims{"M": c.Cell.M, "N": c.Cell.N, "K": c.Cell.K}, c.Cell.Calls)
	}
	ctx := context.Background()
	s, err := store.Open(ctx, filepath.Join(t.TempDir(), "fixture.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, c := range cells {
		if _, err := s.SaveCell(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.SaveDevice(ctx, store.DeviceRecord{
		Backend: "cuda", Name: "NVIDIA H200",
		Props:    map[string]string{"copy_gbps": "4210", "vendor_tflops": "771", "sms": "132"},
		Measured: time.Date(2025, 11, 29, 18, 0, 0, 0, time.UTC),
	}); err != nil {
		t.Fatal(err)
	}
	stored, err := s.Cells(ctx, store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(stored, cells) {
		t.Fatal("the fixture does not round-trip through the store")
	}
	devs, err := s.Devices(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return Input{
		Title: "tilefit report: fixture",
		// Walbe is left out on purpose: it must still appear, after the
		// listed shapes, with the calls stored in its cells.
		Shapes: []Shape{
			{Name: "W512", N: 512, K: 2560, Calls: 119},
			{Name: "Wout", N: 2560, K: 6144, Calls: 48},
		},
		Cells:     stored,
		Generated: time.Date(2025, 11, 30, 8, 15, 0, 0, time.UTC),
		Devices:   devs,
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file; run go test ./report -update and review the diff\n--- got ---\n%s", name, got)
	}
}

func TestGolden(t *testing.T) {
	in := fixtureInput(t)
	for _, tc := range []struct {
		name  string
		write func(*bytes.Buffer, Input) error
	}{
		{"report.md.golden", func(b *bytes.Buffer, in Input) error { return Markdown(b, in) }},
		{"report.json.golden", func(b *bytes.Buffer, in Input) error { return JSON(b, in) }},
		{"report.csv.golden", func(b *bytes.Buffer, in Input) error { return CSV(b, in) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := tc.write(&b, in); err != nil {
				t.Fatal(err)
			}
			golden(t, tc.name, b.Bytes())
			// Deterministic: a second rendering is identical.
			var b2 bytes.Buffer
			if err := tc.write(&b2, in); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(b.Bytes(), b2.Bytes()) {
				t.Error("two renderings differ")
			}
		})
	}
}

// TestMeasuredOnDevices: the runs' device UUIDs (a sweep over several GPUs
// of one model) are named with their counts, in Markdown, HTML and JSON.
func TestMeasuredOnDevices(t *testing.T) {
	in := fixtureInput(t)
	if len(in.Cells) < 3 {
		t.Fatalf("fixture has %d cells", len(in.Cells))
	}
	for i := range in.Cells {
		in.Cells[i].DeviceID = "GPU-aaaa"
		if i%3 == 2 {
			in.Cells[i].DeviceID = "GPU-bbbb"
		}
	}
	var md, html, js bytes.Buffer
	if err := Markdown(&md, in); err != nil {
		t.Fatal(err)
	}
	if err := HTML(&html, in); err != nil {
		t.Fatal(err)
	}
	if err := JSON(&js, in); err != nil {
		t.Fatal(err)
	}
	// The fixture's cells belong to several provenances: each section
	// names the devices of its own runs, first seen first.
	for name, b := range map[string]*bytes.Buffer{"markdown": &md, "html": &html} {
		for _, want := range []string{"measured on", "GPU-aaaa (", "GPU-bbbb ("} {
			if !strings.Contains(b.String(), want) {
				t.Errorf("%s does not name the devices: no %q", name, want)
			}
		}
	}
	var got struct {
		Provenances []struct {
			Devices []DeviceRuns `json:"devices"`
		} `json:"provenances"`
	}
	if err := json.Unmarshal(js.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	runs := map[string]int{}
	for _, p := range got.Provenances {
		for _, d := range p.Devices {
			runs[d.ID] += d.Runs
		}
	}
	if nb := len(in.Cells) / 3; runs["GPU-aaaa"] != len(in.Cells)-nb || runs["GPU-bbbb"] != nb {
		t.Errorf("JSON devices count %v runs, want GPU-aaaa %d, GPU-bbbb %d", runs, len(in.Cells)-nb, nb)
	}
	// Without device IDs (older databases) there is no such row.
	plain := fixtureInput(t)
	md.Reset()
	if err := Markdown(&md, plain); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(md.String(), "measured on") {
		t.Error("a report without device IDs has a 'measured on' row")
	}
}
