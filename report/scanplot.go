package report

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
)

// ScanChart is the scan's GFLOP/s-by-size chart (log–log): per backend the
// vendor library (dashed) and the best tile (solid) at every size measured,
// the bandwidth roof FLOPs/bytes × copy bandwidth (dashed, where the
// ceilings were measured, up to 1.5× the vendor peak), and each vendor peak
// as a level. X is the size
// N of square sizes (M = N = K), else the cube root of M·N·K.
func ScanChart(s Scan) LineChart {
	square := true
	for _, sz := range s.Sizes {
		square = square && sz.M == sz.N && sz.N == sz.K
	}
	x := func(sz ScanSize) float64 {
		if square {
			return float64(sz.N)
		}
		return math.Cbrt(float64(sz.M) * float64(sz.N) * float64(sz.K))
	}
	lc := LineChart{Title: "GFLOP/s by problem size: " + s.Operator, XLabel: "size M = N = K", YLabel: "GFLOP/s", LogX: true, LogY: true}
	if !square {
		lc.XLabel = "size ∛(M·N·K)"
	}
	for i, b := range s.Backends {
		var xs, vendor, best, roof []float64
		for _, sz := range s.Sizes {
			xs = append(xs, x(sz))
			v, bt := math.NaN(), math.NaN()
			if i < len(sz.Results) && sz.Results[i].Status == ScanOK {
				v, bt = float64(sz.Results[i].VendorGFLOPs), float64(sz.Results[i].BestGFLOPs)
			}
			vendor, best = append(vendor, v), append(best, bt)
			r := math.NaN()
			if b.CopyGBps.Valid() && sz.Bytes > 0 {
				r = sz.FLOPs / sz.Bytes * float64(b.CopyGBps)
				// Far above the peak the bandwidth bounds nothing: the
				// line stops there instead of stretching the axis.
				if b.PeakGFLOPs.Valid() && r > 1.5*float64(b.PeakGFLOPs) {
					r = math.NaN()
				}
			}
			roof = append(roof, r)
		}
		vname := b.Vendor
		if vname == "" {
			vname = "vendor"
		}
		lc.Series = append(lc.Series,
			Series{Name: b.Backend + " best tile", X: xs, Y: best},
			Series{Name: b.Backend + " " + vname, X: xs, Y: vendor, Dashed: true},
			Series{Name: fmt.Sprintf("%s copy %.4g GB/s × FLOP/byte", b.Backend, float64(b.CopyGBps)), X: xs, Y: roof, Dashed: true})
		if b.PeakGFLOPs.Valid() {
			lc.Levels = append(lc.Levels, Level{Name: fmt.Sprintf("%s %s peak %.4g GFLOP/s", b.Backend, vname, float64(b.PeakGFLOPs)), Y: float64(b.PeakGFLOPs)})
		}
	}
	return lc
}

// WriteScanPlots writes the scan's chart into dir (made if missing) as
// scan-gflops.svg and .png.
func WriteScanPlots(dir string, s Scan) ([]PlotFile, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("plots: %w", err)
	}
	f := ScanChart(s).Figure("scan-gflops")
	pf := PlotFile{Name: f.Name, Title: f.Title, Paths: map[string]string{}}
	for _, format := range PlotFormats {
		b, err := f.Bytes(format)
		if err != nil {
			return nil, err
		}
		path := filepath.Join(dir, f.Name+"."+format)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			return nil, fmt.Errorf("plots: %w", err)
		}
		pf.Paths[format] = path
	}
	return []PlotFile{pf}, nil
}
