package report

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/tilefit/tilefit/result"
)

// ScanSchemaID identifies the JSON document of tilefit scan.
const ScanSchemaID = "tilefit.scan/v1"

// A Scan is the size study of tilefit scan: per problem size and backend,
// the GFLOP/s of the vendor library and of the fastest tile of the
// family's sweep, beside each device's measured ceilings.
type Scan struct {
	Schema string `json:"schema"`
	// Operator and Types are the operator scanned and its operand types.
	Operator string        `json:"operator"`
	Doc      string        `json:"doc"`
	Types    string        `json:"types"`
	DB       string        `json:"db"`
	Backends []ScanBackend `json:"backends"`
	Sizes    []ScanSize    `json:"sizes"`
	// Plots are the chart files written (--plots), linked from the
	// Markdown with the paths given.
	Plots []PlotFile `json:"-"`
}

// NotMeasured lists the sizes of the scan that could not be measured
// (ScanNotRun; their notes say why) as "BACKEND SIZE"; nil when every size
// was measured or skipped by its budget.
func (s Scan) NotMeasured() []string {
	var missing []string
	for _, sz := range s.Sizes {
		for _, r := range sz.Results {
			if r.Status == ScanNotRun {
				missing = append(missing, r.Backend+" "+SizeLabel(sz.M, sz.N, sz.K))
			}
		}
	}
	return missing
}

// A ScanBackend is one backend of a scan: its device, the provenance its
// cells are stored under, and the device's measured ceilings.
type ScanBackend struct {
	Backend    string `json:"backend"`
	Device     string `json:"device"`
	Provenance string `json:"provenance"`
	Families   string `json:"families"`
	// Vendor is the vendor candidate's name ("" when NoRate ran).
	Vendor string `json:"vendor"`
	// VendorWarning is what the device says about its vendor library
	// (e.g. OpenBLAS running kernels far below the CPU: its column
	// understates the vendor); "" when nothing.
	VendorWarning string `json:"vendor_warning,omitempty"`
	// CopyGBps is the copy bandwidth (bytes read + written per second,
	// GB/s) and PeakGFLOPs the vendor matmul rate, from the device's
	// ceilings (NaN when not measured); Measured is when.
	CopyGBps   Rate      `json:"copy_gbps"`
	PeakGFLOPs Rate      `json:"peak_gflops"`
	Measured   time.Time `json:"measured"`
}

// A ScanSize is one problem size and its result on every backend (in
// Backends order).
type ScanSize struct {
	M       int          `json:"m"`
	N       int          `json:"n"`
	K       int          `json:"k"`
	FLOPs   float64      `json:"flops"`
	Bytes   float64      `json:"bytes"`
	Results []ScanResult `json:"results"`
}

// Scan result states.
const (
	ScanOK      = "ok"      // measured (now or before)
	ScanSkipped = "skipped" // over the size budget, or beyond the device's memory
	ScanNotRun  = "not run" // the sweep could not run the cell (see Note)
)

// A ScanResult is one size on one backend.
type ScanResult struct {
	Backend string `json:"backend"`
	Status  string `json:"status"`
	Note    string `json:"note,omitempty"`
	// VendorUs and VendorGFLOPs are the vendor's median µs per call and
	// its rate; BestUs, BestGFLOPs those of the fastest tile, Best.
	VendorUs        Rate   `json:"vendor_us"`
	VendorGFLOPs    Rate   `json:"vendor_gflops"`
	Best            string `json:"best"`
	BestUs          Rate   `json:"best_us"`
	BestGFLOPs      Rate   `json:"best_gflops"`
	Reference       string `json:"reference"`
	ReferenceGFLOPs Rate   `json:"reference_gflops"`
	// RoofGFLOPs is min(peak, FLOPs/bytes × copy bandwidth) from the
	// backend's ceilings (NaN without them).
	RoofGFLOPs Rate `json:"roof_gflops"`
	// Candidates counts the candidates stored for the cell; Failed those
	// that failed; NotBitwise the timed tiles not bitwise equal to the
	// reference tile.
	Candidates int `json:"candidates"`
	Failed     int `json:"failed"`
	NotBitwise int `json:"not_bitwise"`
}

// ScanCell summarises the stored rows of one cell (one provenance; a later
// row's candidate replaces an earlier one of the same tile) as a ScanResult
// of status ScanOK, rates from flops per call.
func ScanCell(backend string, rows []result.CellResult, flops float64) ScanResult {
	r := ScanResult{Backend: backend, Status: ScanOK, VendorUs: NoRate, VendorGFLOPs: NoRate, BestUs: NoRate, BestGFLOPs: NoRate,
		ReferenceGFLOPs: NoRate, RoofGFLOPs: NoRate}
	latest := map[string]result.Candidate{}
	var order []string
	for _, row := range rows {
		r.Reference = row.Reference
		for _, c := range row.Candidates {
			if c.AA {
				continue
			}
			if _, ok := latest[c.Tile]; !ok {
				order = append(order, c.Tile)
			}
			latest[c.Tile] = c
		}
	}
	rate := func(us float64) Rate {
		if us > 0 && !math.IsNaN(us) {
			return Rate(flops / (us * 1e3))
		}
		return NoRate
	}
	for _, tile := range order {
		c := latest[tile]
		r.Candidates++
		if c.Status != result.OK {
			r.Failed++
			continue
		}
		us := median(finiteOf(c.Samples))
		switch {
		case len(finiteOf(c.Samples)) == 0:
		case c.Vendor:
			if !r.VendorUs.Valid() || Rate(us) < r.VendorUs {
				r.VendorUs, r.VendorGFLOPs = Rate(us), rate(us)
			}
		default:
			if !c.Bitwise {
				r.NotBitwise++
			}
			if !r.BestUs.Valid() || Rate(us) < r.BestUs {
				r.Best, r.BestUs, r.BestGFLOPs = tile, Rate(us), rate(us)
			}
			if tile == r.Reference {
				r.ReferenceGFLOPs = rate(us)
			}
		}
	}
	return r
}

func finiteOf(xs []float64) []float64 {
	var out []float64
	for _, x := range xs {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			out = append(out, x)
		}
	}
	return out
}

// ScanRoof is the roofline bound in GFLOP/s of a call of flops and bytes
// on a device of peak GFLOP/s and copy bandwidth GB/s: min(peak,
// flops/bytes × bandwidth); NaN when a ceiling is missing.
func ScanRoof(flops, bytes float64, peak, copyGBps Rate) Rate {
	if !peak.Valid() || !copyGBps.Valid() || peak <= 0 || copyGBps <= 0 || bytes <= 0 {
		return NoRate
	}
	return Rate(math.Min(float64(peak), flops/bytes*float64(copyGBps)))
}

// A Rate is a GFLOP/s, GB/s or µs value of a scan; NaN (NoRate) when there
// is none, which JSON encodes as null.
type Rate float64

// NoRate is a missing Rate.
var NoRate = Rate(math.NaN())

// Valid reports whether x is a value (not NaN or infinite).
func (x Rate) Valid() bool { return !math.IsNaN(float64(x)) && !math.IsInf(float64(x), 0) }

// MarshalJSON encodes a missing value as null.
func (x Rate) MarshalJSON() ([]byte, error) { return num(x).MarshalJSON() }

// SizeLabel names a size: "1024³" when M = N = K, else "M×N×K".
func SizeLabel(m, n, k int) string {
	if m == n && n == k {
		return fmt.Sprintf("%d³", m)
	}
	return fmt.Sprintf("%d×%d×%d", m, n, k)
}

// fmtRate formats GFLOP/s with three or four significant digits; "—" for
// a missing value.
func fmtRate(x Rate) string {
	switch {
	case !x.Valid():
		return "—"
	case x >= 100:
		return fmt.Sprintf("%.0f", float64(x))
	case x >= 10:
		return fmt.Sprintf("%.1f", float64(x))
	}
	return fmt.Sprintf("%.2f", float64(x))
}

// ScanMarkdown writes s as Markdown (tables padded for a terminal): the
// ceilings, one table with a row per size and, per backend, the vendor's
// and the best tile's GFLOP/s, the best tile and the roof; then the notes
// (a vendor library the device warns about, skipped sizes, failures) and
// the plots.
func ScanMarkdown(w io.Writer, s Scan) error {
	var buf strings.Builder
	bw := bufio.NewWriter(&buf)
	fmt.Fprintf(bw, "# tilefit scan: GFLOP/s by problem size\n\n")
	fmt.Fprintf(bw, "Operator %s (%s), operand types %s. GFLOP/s = FLOPs per call / median time per call over the paired rounds. Per backend: the vendor library; the fastest tile measured at that size (the family's sweep, or the tiles given; every tile proven bitwise equal to the reference tile and checked against a float64 reference before it was timed); the roof min(vendor peak, FLOPs/bytes × copy bandwidth) from the device's measured ceilings. Database %s.\n\n",
		s.Operator, s.Doc, s.Types, s.DB)
	fmt.Fprintln(bw, "| backend | device | families | copy GB/s | vendor peak GFLOP/s | ceilings measured |")
	fmt.Fprintln(bw, "|---|---|---|---:|---:|---|")
	for _, b := range s.Backends {
		when := "—"
		if !b.Measured.IsZero() {
			when = b.Measured.UTC().Format("2006-01-02 15:04 UTC")
		}
		peak := fmtRate(b.PeakGFLOPs)
		if b.Vendor != "" && b.PeakGFLOPs.Valid() {
			peak += " (" + b.Vendor + ")"
		}
		fmt.Fprintf(bw, "| %s | %s | %s | %s | %s | %s |\n", b.Backend, mdCell(b.Device), b.Families, fmtRate(b.CopyGBps), peak, when)
	}
	fmt.Fprint(bw, "\n| size M×N×K |")
	align := "|---|"
	for _, b := range s.Backends {
		v := b.Vendor
		if v == "" {
			v = "vendor"
		}
		fmt.Fprintf(bw, " %s %s | %s best | %s tile | %s roof |", b.Backend, v, b.Backend, b.Backend, b.Backend)
		align += "---:|---:|---|---:|"
	}
	fmt.Fprintf(bw, "\n%s\n", align)
	var notes []string
	for _, b := range s.Backends {
		if b.VendorWarning != "" {
			notes = append(notes, fmt.Sprintf("%s: %s", b.Backend, b.VendorWarning))
		}
	}
	for _, sz := range s.Sizes {
		fmt.Fprintf(bw, "| %s |", SizeLabel(sz.M, sz.N, sz.K))
		for i, r := range sz.Results {
			if r.Status != ScanOK {
				fmt.Fprintf(bw, " %s | — | — | %s |", r.Status, fmtRate(r.RoofGFLOPs))
			} else {
				tile := "—"
				if r.Best != "" {
					tile = "`" + r.Best + "`"
				}
				fmt.Fprintf(bw, " %s | %s | %s | %s |", fmtRate(r.VendorGFLOPs), fmtRate(r.BestGFLOPs), tile, fmtRate(r.RoofGFLOPs))
			}
			be := s.Backends[i].Backend
			if r.Note != "" {
				notes = append(notes, fmt.Sprintf("%s %s: %s %s", be, SizeLabel(sz.M, sz.N, sz.K), r.Status, r.Note))
			}
			if r.Failed > 0 {
				notes = append(notes, fmt.Sprintf("%s %s: %d of %d candidates failed (tilefit report --db %s lists them)", be, SizeLabel(sz.M, sz.N, sz.K), r.Failed, r.Candidates, s.DB))
			}
			if r.NotBitwise > 0 {
				notes = append(notes, fmt.Sprintf("%s %s: %d timed tiles not bitwise equal to the reference tile", be, SizeLabel(sz.M, sz.N, sz.K), r.NotBitwise))
			}
		}
		fmt.Fprintln(bw)
	}
	if len(notes) > 0 {
		fmt.Fprintln(bw)
		for _, n := range notes {
			fmt.Fprintf(bw, "- %s\n", mdCell(n))
		}
	}
	for _, pf := range s.Plots {
		svg, png := filepath.ToSlash(pf.Paths["svg"]), filepath.ToSlash(pf.Paths["png"])
		fmt.Fprintf(bw, "\n![%s](%s) ([PNG](%s))\n", mdAlt(pf.Title), mdLink(svg), mdLink(png))
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	_, err := io.WriteString(w, alignTables(buf.String()))
	return err
}

// mdCell escapes a table cell.
func mdCell(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ")
}

// ScanJSON writes s as indented JSON (missing rates are null).
func ScanJSON(w io.Writer, s Scan) error {
	s.Schema = ScanSchemaID
	if s.Backends == nil {
		s.Backends = []ScanBackend{}
	}
	if s.Sizes == nil {
		s.Sizes = []ScanSize{}
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// SortSizes orders sizes by FLOPs (then M, N, K), smallest first.
func SortSizes(sizes []ScanSize) {
	sort.SliceStable(sizes, func(i, j int) bool {
		a, b := sizes[i], sizes[j]
		if a.FLOPs != b.FLOPs {
			return a.FLOPs < b.FLOPs
		}
		if a.M != b.M {
			return a.M < b.M
		}
		if a.N != b.N {
			return a.N < b.N
		}
		return a.K < b.K
	})
}
