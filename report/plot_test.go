package report

import (
	"bytes"
	"encoding/xml"
	"image"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tilefit/tilefit/result"
)

// checkSVG parses b as XML and checks that its root is an <svg> element
// with a width and height and that it draws paths and text.
func checkSVG(t *testing.T, name string, b []byte) {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(b))
	var root *xml.StartElement
	paths, texts := 0, 0
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s: not valid XML: %v", name, err)
		}
		if se, ok := tok.(xml.StartElement); ok {
			if root == nil {
				se := se.Copy()
				root = &se
			}
			switch se.Name.Local {
			case "path":
				paths++
			case "text":
				texts++
			}
		}
	}
	if root == nil || root.Name.Local != "svg" {
		t.Fatalf("%s: root element is not <svg>", name)
	}
	attrs := map[string]string{}
	for _, a := range root.Attr {
		attrs[a.Name.Local] = a.Value
	}
	if attrs["width"] == "" || attrs["height"] == "" || attrs["viewBox"] == "" {
		t.Errorf("%s: <svg> lacks width, height or viewBox: %v", name, attrs)
	}
	if paths < 10 || texts < 5 {
		t.Errorf("%s: only %d paths and %d texts", name, paths, texts)
	}
}

// inkFraction returns the fraction of pixels in r that differ clearly from
// the background colour bg.
func inkFraction(img image.Image, r image.Rectangle, bg [3]uint32) float64 {
	ink, all := 0, 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			d := absDiff(cr>>8, bg[0]) + absDiff(cg>>8, bg[1]) + absDiff(cb>>8, bg[2])
			if d > 48 {
				ink++
			}
			all++
		}
	}
	if all == 0 {
		return 0
	}
	return float64(ink) / float64(all)
}

func absDiff(a, b uint32) uint32 {
	if a > b {
		return a - b
	}
	return b - a
}

// checkPNG decodes b and checks its size and that it is not blank.
func checkPNG(t *testing.T, name string, b []byte, f Figure) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s: not a PNG: %v", name, err)
	}
	// vgimg draws at 96 dpi by default.
	wantW, wantH := int(math.Ceil(f.Width.Dots(96))), int(math.Ceil(f.Height.Dots(96)))
	if sz := img.Bounds().Size(); abs(sz.X-wantW) > 1 || abs(sz.Y-wantH) > 1 {
		t.Errorf("%s: %v pixels, want %dx%d", name, sz, wantW, wantH)
	}
	if frac := inkFraction(img, img.Bounds(), [3]uint32{255, 255, 255}); frac < 0.01 {
		t.Errorf("%s: only %.4f of the pixels are drawn", name, frac)
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func TestFiguresOfFixture(t *testing.T) {
	doc := build(fixtureInput(t))
	cpu, cuda := doc.Provenances[0], doc.Provenances[1]
	var names []string
	for _, f := range Figures(cpu) {
		names = append(names, f.Name)
	}
	// The CPU device has no recorded ceilings; three shapes of data.
	if want := "chunk ratio W512-gflops Wout-gflops Walbe-gflops"; strings.Join(names, " ") != want {
		t.Errorf("CPU figures %q, want %q", strings.Join(names, " "), want)
	}
	for _, f := range Figures(cpu) {
		svg, err := f.Bytes("svg")
		if err != nil {
			t.Fatal(err)
		}
		checkSVG(t, f.Name+".svg", svg)
		p, err := f.Bytes("png")
		if err != nil {
			t.Fatal(err)
		}
		checkPNG(t, f.Name+".png", p, f)
	}
	if _, err := Figures(cpu)[0].Bytes("pdf"); err == nil {
		t.Error("an unknown format rendered")
	}

	// The shape chart: reference, the tiles fastest at some M, the vendor.
	lc := ShapeChart(cpu, "Wout", 2560, 6144, GFLOPs)
	var series []string
	for _, s := range lc.Series {
		series = append(series, s.Name)
	}
	if want := "reference 64_64_2|64_128_2 (fastest at 2 M)|openblas"; strings.Join(series, "|") != want {
		t.Errorf("Wout series %q, want %q", strings.Join(series, "|"), want)
	}
	// GFLOP/s of the vendor at M=256: 2·256·2560·6144 / 67306.93 µs.
	if got, want := lc.Series[2].Y[0], 2*256*2560*6144/(67306.93*1e3); math.Abs(got-want) > 0.01 {
		t.Errorf("openblas GFLOP/s at M=256 = %v, want %v", got, want)
	}
	us := ShapeChart(cpu, "Wout", 2560, 6144, Micros)
	if math.Abs(us.Series[0].Y[1]-785416.26) > 0.01 || !us.LogY {
		t.Errorf("µs chart: %v (log %v)", us.Series[0].Y, us.LogY)
	}

	// The CUDA device's ceilings give a roofline floor for the chunk: the
	// provenance's share (Wout) whole, the device's whole chunk partial
	// (the workload's W512 has no cell there).
	// Wout M=256: FLOPs 2·256·2560·6144 at 771 TFLOP/s vs bytes at 4210 GB/s.
	c := cuda.Cells[0]
	want := 48 * math.Max(c.FLOPs/771e12, c.Bytes/4210e9) * 1e6 / 1000
	if f := cuda.Totals[0]; c.Bytes == 0 || f.partial[colFloor] || math.Abs(float64(f.FloorMs)-want) > 1e-9 || !f.FloorOverBest.valid() {
		t.Errorf("section floor %v (partial %v, /best %v), want %v whole", f.FloorMs, f.partial[colFloor], f.FloorOverBest, want)
	}
	if f := doc.Chunks[1].Totals[0]; !doc.Chunks[1].Floor || !f.partial[colFloor] || math.Abs(float64(f.FloorMs)-want) > 1e-9 || f.FloorOverBest.valid() {
		t.Errorf("device chunk floor %v (partial %v, /best %v), want %v partial, no ratio", f.FloorMs, f.partial[colFloor], f.FloorOverBest, want)
	}
	if cpu.Totals[0].FloorMs.valid() || doc.Chunks[0].Floor {
		t.Error("a floor without ceilings")
	}
}

// A heat map's colours: a faster tile is bluer than a slower one, and a
// cell without a time is grey.
func TestRatioHeatmapColours(t *testing.T) {
	t0 := time.Unix(0, 0).UTC()
	in := Input{Cells: []result.CellResult{
		row("A", 1, t0, ok("ref", 10, 10, 10), ok("fast", 5, 5, 5), ok("slow", 20, 20, 20)),
		row("A", 2, t0, ok("ref", 10, 10, 10), ok("fast", 5, 5, 5), result.Candidate{Tile: "slow", Status: result.Crashed}),
	}}
	sec := build(in).Provenances[0]
	f, ok := RatioHeatmap(sec)
	if !ok {
		t.Fatal("no heat map")
	}
	b, err := f.Bytes("png")
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	// Find the dominant colours of the image: blue (fast), red (slow),
	// near white (ref = 1) and grey (missing) must all be present.
	var blue, red, grey bool
	bnd := img.Bounds()
	for y := bnd.Min.Y; y < bnd.Max.Y; y++ {
		for x := bnd.Min.X; x < bnd.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			r, g, bl = r>>8, g>>8, bl>>8
			switch {
			case bl > r+80 && bl > g+30:
				blue = true
			case r > bl+80 && r > g+60:
				red = true
			case r == 80 && g == 80 && bl == 80:
				grey = true
			}
		}
	}
	if !blue || !red || !grey {
		t.Errorf("heat map colours: blue %v red %v grey %v", blue, red, grey)
	}
}

func TestWritePlots(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "plots")
	files, err := WritePlots(dir, fixtureInput(t))
	if err != nil {
		t.Fatal(err)
	}
	// CPU: chunk, ratio, 3 shapes; CUDA: chunk, ratio, 1 shape.
	if len(files) != 8 {
		t.Fatalf("%d figures written, want 8: %+v", len(files), files)
	}
	for _, pf := range files {
		for _, format := range PlotFormats {
			path := pf.Paths[format]
			if !strings.HasPrefix(filepath.Base(path), pf.Key+"-"+pf.Name+".") {
				t.Errorf("file %s is not named KEY-NAME", path)
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if len(b) < 1000 {
				t.Errorf("%s: %d bytes", path, len(b))
			}
			switch format {
			case "svg":
				checkSVG(t, path, b)
			case "png":
				if _, err := png.Decode(bytes.NewReader(b)); err != nil {
					t.Errorf("%s: %v", path, err)
				}
			}
		}
	}
}
