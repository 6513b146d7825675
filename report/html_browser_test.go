package report

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/tilefit/tilefit/builtin"
	"github.com/tilefit/tilefit/result"
	"github.com/tilefit/tilefit/store"
)

// chromiumNames are the executables the browser test looks for, in order;
// $TILEFIT_CHROMIUM names another.
var chromiumNames = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome", "headless-shell"}

// findChromium returns the path of a Chromium, or "" with what was tried.
func findChromium() (string, string) {
	if p := os.Getenv("TILEFIT_CHROMIUM"); p != "" {
		if path, err := exec.LookPath(p); err == nil {
			return path, ""
		}
		return "", "$TILEFIT_CHROMIUM=" + p + " is not an executable"
	}
	for _, n := range chromiumNames {
		if path, err := exec.LookPath(n); err == nil {
			return path, ""
		}
	}
	return "", "none of " + strings.Join(chromiumNames, ", ") + " is on the PATH"
}

// requireChromium returns the Chromium to test in, or skips the test
// (fails it when $TILEFIT_REQUIRE_CHROMIUM is set: CI installs Chromium).
func requireChromium(t *testing.T) string {
	t.Helper()
	exe, why := findChromium()
	if exe == "" && os.Getenv("TILEFIT_REQUIRE_CHROMIUM") != "" {
		t.Fatalf("TILEFIT_REQUIRE_CHROMIUM is set and there is no Chromium: %s", why)
	}
	if exe == "" {
		t.Skipf("SKIPPED: no Chromium to test the HTML report in (%s). Install it (Debian: apt-get install chromium) or set TILEFIT_CHROMIUM; .ci/run installs it.", why)
	}
	return exe
}

// TestHTMLInChromium loads the fixture's HTML report in a headless
// Chromium and checks what a reader sees (checkInChromium): the page loads
// without console errors or exceptions, a table sorts when its header is
// clicked (both directions, rows whole, empty cells last), and every plot
// is drawn — its screenshot has the image's size and ink inside the plot's
// box, with the heat map's blue and red.
func TestHTMLInChromium(t *testing.T) {
	exe := requireChromium(t)
	in := fixtureInput(t)
	checkInChromium(t, exe, in, pageWant{
		verdict:  "NOT ALL BITWISE",
		key:      build(in).Provenances[0].Key, // the CPU's
		chunk:    "chunk-0",                    // the CPU's whole chunk
		chunkMs:  []string{"256", "1983"},
		cellRows: 6,
		slowest:  "Wout",
		plots:    8,
		heatHues: true,
	})
}

// TestHTMLInChromiumH200 loads the HTML report of the recorded H200 run
// (docs/results/h200-final, what `tilefit report --db final.sqlite
// --format html` writes) in a headless Chromium and runs the same checks on
// its page: the verdict of one numerics class per family, the per-chunk
// table's five M, a per-cell table that sorts, and every plot drawn.
func TestHTMLInChromiumH200(t *testing.T) {
	exe := requireChromium(t)
	// Opening a SQLite file may create -shm/-wal files beside it: open a
	// copy, never the repository's file.
	src, err := os.ReadFile(filepath.Join("..", "docs", "results", "h200-final", "final.sqlite"))
	if err != nil {
		t.Fatalf("the recorded H200 database: %v", err)
	}
	db := filepath.Join(t.TempDir(), "final.sqlite")
	if err := os.WriteFile(db, src, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	st, err := store.OpenReadOnly(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// The recorded database predates stored numerics classes: derive
	// them as tilefit report does (tune.LoadReport).
	cells, err := st.Cells(ctx, store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if n := result.FillClasses(cells, builtin.New().ClassOf); n == 0 {
		t.Fatal("the recorded database has stored classes; this test is for one without")
	}
	in := FromCells(cells, nil)
	if in.Devices, err = st.Devices(ctx); err != nil {
		t.Fatal(err)
	}
	doc := build(in)
	if len(doc.Provenances) != 1 {
		t.Fatalf("%d provenances in the recorded H200 database, want 1", len(doc.Provenances))
	}
	sec := doc.Provenances[0]
	if p := sec.Provenance; p.Backend != "cuda" || p.Device != "NVIDIA H200" {
		t.Fatalf("the recorded run is %s on %s", p.Backend, p.Device)
	}
	if sec.Device == nil {
		t.Errorf("the device record (measured ceilings) was not loaded")
	}
	checkInChromium(t, exe, in, pageWant{
		verdict:    "ALL BITWISE within each numerics class",
		key:        sec.Key,
		chunk:      "chunk-0",
		chunkMs:    []string{"256", "512", "1024", "1983", "2048"},
		invariance: 13,
		cellRows:   13 * 5, // 13 shapes × 5 M
		plots:      2 + 13, // per-chunk bars, the ratio heat map, GFLOP/s by M of each shape
		heatHues:   true,
	})
}

// pageWant is what checkInChromium expects of one report's page beyond
// what every page must pass.
type pageWant struct {
	verdict    string   // the first verdict's prefix
	key        string   // the provenance whose tables are checked
	chunk      string   // the id of the chunk table checked
	chunkMs    []string // its M column, top to bottom
	invariance int      // rows of the batch-invariance table (0: none expected)
	cellRows   int      // rows of its per-cell table
	slowest    string   // the shape of the slowest "fastest (µs)" cell; "" leaves it unchecked
	plots      int      // figures on the page
	heatHues   bool     // the ratio heat map shows blue (faster) and red (slower) cells
}

// checkInChromium writes in's HTML report, loads it in the headless
// Chromium exe and checks it: no console errors or exceptions; the first
// verdict and the per-chunk table; the per-cell table of want.key sorts by
// "fastest (µs)" ascending then descending, moving rows whole; the
// candidates table sorts empty cells last; every plot is drawn at its size
// with ink and colour inside its box.
func checkInChromium(t *testing.T, exe string, in Input, want pageWant) {
	var page bytes.Buffer
	if err := HTML(&page, in); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(path, page.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}

	// Generous: CI is a loaded 2-core machine. Nothing below waits on a
	// clock except this overall limit.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe),
		chromedp.NoSandbox, // CI runs as root, where Chromium's sandbox refuses to start
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.WindowSize(1400, 1000),
	)
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	defer acancel()
	bctx, bcancel := chromedp.NewContext(actx)
	defer bcancel()

	var mu sync.Mutex
	var problems []string
	if err := chromedp.Listen(bctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch ev := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeAssert || ev.Type == runtime.ConsoleAPICalledTypeWarning {
				var args []string
				for _, a := range ev.Args {
					args = append(args, string(a.Value)+a.Description)
				}
				problems = append(problems, fmt.Sprintf("console.%s: %s", ev.Type, strings.Join(args, " ")))
			}
		case *runtime.EventExceptionThrown:
			d := ev.ExceptionDetails
			msg := d.Text
			if d.Exception != nil {
				msg += " " + d.Exception.Description
			}
			problems = append(problems, fmt.Sprintf("exception at %d:%d: %s", d.LineNumber, d.ColumnNumber, msg))
		case *log.EventEntryAdded:
			if ev.Entry.Level == log.EntryLevelError || ev.Entry.Level == log.EntryLevelWarning {
				problems = append(problems, fmt.Sprintf("browser log %s (%s): %s %s", ev.Entry.Level, ev.Entry.Source, ev.Entry.Text, ev.Entry.URL))
			}
		}
	}); err != nil {
		t.Fatalf("start Chromium %s: %v", exe, err)
	}
	if err := chromedp.Do(bctx, chromedp.Navigate("file://"+path), chromedp.WaitReady(chromedp.CSS("body"))); err != nil {
		t.Fatalf("load the page: %v", err)
	}
	eval := func(js string) any {
		t.Helper()
		v, err := chromedp.Run(bctx, chromedp.Evaluate[any](js))
		if err != nil {
			t.Fatalf("evaluate %s: %v", js, err)
		}
		return v
	}
	strs := func(v any) []string {
		t.Helper()
		var out []string
		for _, x := range v.([]any) {
			out = append(out, fmt.Sprint(x))
		}
		return out
	}
	// Wait until every image has decoded (no sleeping: ask the browser).
	if _, err := chromedp.Run(bctx, chromedp.Evaluate[any](`Promise.all(Array.from(document.images).map(i => i.decode()))`,
		chromedp.EvalAwaitPromise)); err != nil {
		t.Fatalf("images do not decode: %v", err)
	}

	// The verdict and the per-chunk table come first.
	if got := eval(`document.querySelector("section.provenance p.verdict").textContent`); !strings.HasPrefix(fmt.Sprint(got), want.verdict) {
		t.Errorf("first verdict = %q, want it to start with %q", got, want.verdict)
	}
	chunk := "#" + want.chunk
	if got := eval(`document.querySelector("` + chunk + ` thead th").textContent`); got != "M" {
		t.Errorf("the per-chunk table's first column is %q, want M", got)
	}
	if got := strs(eval(`Array.from(document.querySelectorAll("` + chunk + ` tbody tr")).map(r => r.cells[0].textContent)`)); !slices.Equal(got, want.chunkMs) {
		t.Errorf("per-chunk rows by M: %q, want %q", got, want.chunkMs)
	}
	checkSections(t, eval, strs, chunk, want)

	// Sorting: click "fastest (µs)" of the per-cell table.
	table := "#cells-" + want.key
	col := func() []float64 {
		t.Helper()
		v := eval(`Array.from(document.querySelectorAll("` + table + ` tbody tr")).map(r => r.cells[7].getAttribute("data-sort"))`)
		var out []float64
		for _, x := range v.([]any) {
			f, err := strconv.ParseFloat(fmt.Sprint(x), 64)
			if err != nil {
				t.Fatalf("sort value %v: %v", x, err)
			}
			out = append(out, f)
		}
		return out
	}
	// rows are the per-cell table's rows, each as its cells' sort keys,
	// in a canonical order: sorting must move rows whole.
	rows := func() []string {
		t.Helper()
		r := strs(eval(`Array.from(document.querySelectorAll("` + table + ` tbody tr")).map(r => Array.from(r.cells).map(c => c.getAttribute("data-sort")).join("\t"))`))
		slices.Sort(r)
		return r
	}
	header := chromedp.CSS(table + " thead th:nth-child(8)")
	if got := eval(`document.querySelector("` + table + ` thead th:nth-child(8)").textContent`); got != "fastest (µs)" {
		t.Fatalf("column 8 is %q", got)
	}
	before, beforeRows := col(), rows()
	if len(before) != want.cellRows {
		t.Errorf("%d rows in the per-cell table, want %d", len(before), want.cellRows)
	}
	if slices.IsSorted(before) {
		t.Fatalf("the column is already sorted: %v", before)
	}
	if err := chromedp.Do(bctx, chromedp.Click(header)); err != nil {
		t.Fatal(err)
	}
	asc := col()
	if !slices.IsSorted(asc) || len(asc) != len(before) {
		t.Errorf("after one click: %v, want ascending %v", asc, before)
	}
	if got := eval(`document.querySelector("` + table + ` thead th:nth-child(8)").getAttribute("aria-sort")`); got != "ascending" {
		t.Errorf("aria-sort = %v", got)
	}
	if err := chromedp.Do(bctx, chromedp.Click(header)); err != nil {
		t.Fatal(err)
	}
	desc := col()
	slices.Reverse(desc)
	if !slices.Equal(desc, asc) {
		t.Errorf("after a second click: %v, want descending", col())
	}
	// The rows moved whole: every row is still there, cell for cell, and
	// the shape column follows the sort.
	if !slices.Equal(rows(), beforeRows) {
		t.Errorf("sorting changed the rows' contents")
	}
	if want.slowest != "" {
		if got := eval(`document.querySelector("` + table + ` tbody tr").cells[0].textContent`); got != want.slowest {
			t.Errorf("slowest fastest tile's row starts with %q, want %s", got, want.slowest)
		}
	}
	// Text columns sort too, and empty cells stay last: the "median µs"
	// column of every candidate (a failed one has none).
	cands := "#candidates-" + want.key
	if err := chromedp.Do(bctx, chromedp.Click(chromedp.CSS(`details.candidates summary`)),
		chromedp.Click(chromedp.CSS(cands+" thead th:nth-child(6)"))); err != nil {
		t.Fatal(err)
	}
	med := eval(`Array.from(document.querySelectorAll("` + cands + ` tbody tr")).map(r => r.cells[5].getAttribute("data-sort") || "")`).([]any)
	lastValued := -1
	for i, x := range med {
		if x != "" {
			lastValued = i
		}
	}
	for i := 0; i < lastValued; i++ {
		if med[i] == "" {
			t.Errorf("an empty median sorts before a value: %v", med)
			break
		}
	}

	// Plots: every figure is drawn at its size, with ink inside its box.
	figs := eval(`Array.from(document.querySelectorAll("img.plot")).map(i => [i.closest("figure").id, i.naturalWidth, i.naturalHeight, i.getBoundingClientRect().width, i.getBoundingClientRect().height])`).([]any)
	if len(figs) != want.plots {
		t.Fatalf("%d plots on the page, want %d", len(figs), want.plots)
	}
	for _, f := range figs {
		v := f.([]any)
		id := v[0].(string)
		nw, nh, bw, bh := v[1].(float64), v[2].(float64), v[3].(float64), v[4].(float64)
		if nw < 300 || nh < 200 || bw < 300 || bh < 200 {
			t.Errorf("%s: natural %vx%v, shown %vx%v", id, nw, nh, bw, bh)
			continue
		}
		shot, err := chromedp.Run(bctx, chromedp.Screenshot(chromedp.CSS("#"+id+" img")))
		if err != nil {
			t.Fatalf("screenshot %s: %v", id, err)
		}
		img, err := png.Decode(bytes.NewReader(shot))
		if err != nil {
			t.Fatalf("screenshot %s: %v", id, err)
		}
		sz := img.Bounds().Size()
		if math.Abs(float64(sz.X)-bw) > 2 || math.Abs(float64(sz.Y)-bh) > 2 {
			t.Errorf("%s: screenshot %v, the image's box is %.0fx%.0f", id, sz, bw, bh)
		}
		// Inside the plot area (the box less its margins for the title,
		// the axes and the legend): enough non-white pixels, and coloured
		// ones — the data (lines, points, bars, heat map cells) is drawn
		// in colour, axes, grid and text in greys.
		inner := image.Rect(sz.X/8, sz.Y/16, sz.X*5/8, sz.Y*7/8).Add(img.Bounds().Min)
		ink := inkFraction(img, inner, [3]uint32{255, 255, 255})
		chroma := chromaFraction(img, inner)
		t.Logf("%s: %dx%d, %.3f of the plot area drawn, %.4f in colour", id, sz.X, sz.Y, ink, chroma)
		if ink < 0.01 || chroma < 0.0005 {
			t.Errorf("%s: %.4f of the plot area drawn, %.4f in colour", id, ink, chroma)
		}
		if strings.HasSuffix(id, "-ratio") {
			blue, red := hues(img, img.Bounds())
			t.Logf("%s: blue cells %v, red cells %v", id, blue, red)
			if want.heatHues && (!blue || !red) {
				t.Errorf("%s: heat map without blue (%v) or red (%v) cells", id, blue, red)
			}
		}
		if os.Getenv("TILEFIT_KEEP_SHOTS") != "" {
			os.WriteFile(filepath.Join(os.Getenv("TILEFIT_KEEP_SHOTS"), id+".png"), shot, 0o644)
		}
	}
	if dir := os.Getenv("TILEFIT_KEEP_SHOTS"); dir != "" {
		full, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
		if err == nil {
			os.WriteFile(filepath.Join(dir, "page.png"), full, 0o644)
		}
	}

	// A last round trip, so that every event of the actions above has
	// been delivered, then no console errors.
	eval(`1`)
	mu.Lock()
	defer mu.Unlock()
	if len(problems) > 0 {
		t.Errorf("the page logged problems:\n%s", strings.Join(problems, "\n"))
	}
}

// chromaFraction returns the fraction of the pixels in r of img that are
// clearly coloured (not white, black or grey).
func chromaFraction(img image.Image, r image.Rectangle) float64 {
	n, all := 0, 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			hi, lo := max(cr, cg, cb)>>8, min(cr, cg, cb)>>8
			if hi-lo > 40 {
				n++
			}
			all++
		}
	}
	if all == 0 {
		return 0
	}
	return float64(n) / float64(all)
}

// hues reports whether r of img holds clearly blue and clearly red pixels.
func hues(img image.Image, r image.Rectangle) (blue, red bool) {
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			cr, cg, cb = cr>>8, cg>>8, cb>>8
			if cb > cr+80 && cb > cg+30 {
				blue = true
			}
			if cr > cb+80 && cr > cg+60 {
				red = true
			}
		}
	}
	return blue, red
}

// checkSections checks what the page carries beside the Markdown's tables:
// the chunk's ratios with their intervals and verdicts, the per-cell
// comparisons', the decisions section with its undecided count and the
// batch-invariance section (its table where rows were hashed).
func checkSections(t *testing.T, eval func(string) any, strs func(any) []string, chunk string, want pageWant) {
	t.Helper()
	// The chunk's ratios carry their intervals and verdicts, as in the
	// Markdown: "0.912 [0.905, 0.920] faster".
	interval := regexp.MustCompile(`^[0-9]+\.[0-9]{3} \[[0-9]+\.[0-9]{3}, [0-9]+\.[0-9]{3}\] (faster|slower|tie|undecided)$`)
	heads := strs(eval(`Array.from(document.querySelectorAll("` + chunk + ` thead th")).map(h => h.textContent)`))
	ratioCol := slices.Index(heads, "best/reference")
	if ratioCol < 0 {
		t.Fatalf("the chunk table has no best/reference column: %q", heads)
	}
	for _, got := range strs(eval(`Array.from(document.querySelectorAll("` + chunk + ` tbody tr")).map(r => r.cells[` + strconv.Itoa(ratioCol) + `].textContent)`)) {
		if !interval.MatchString(got) {
			t.Errorf("chunk best/reference %q, want a ratio with its interval and verdict", got)
		}
	}
	// So do the per-cell comparisons.
	cellHeads := strs(eval(`Array.from(document.querySelectorAll("#cells-` + want.key + ` thead th")).map(h => h.textContent)`))
	vs := slices.Index(cellHeads, "fastest ×reference")
	if vs < 0 {
		t.Fatalf("the per-cell table has no fastest ×reference column: %q", cellHeads)
	}
	withInterval := 0
	for _, got := range strs(eval(`Array.from(document.querySelectorAll("#cells-` + want.key + ` tbody tr")).map(r => r.cells[` + strconv.Itoa(vs) + `].textContent)`)) {
		if interval.MatchString(got) {
			withInterval++
		}
	}
	if withInterval == 0 {
		t.Errorf("no per-cell comparison shows its interval and verdict")
	}
	// The decisions section: the verdict counts, undecided among them.
	if got := fmt.Sprint(eval(`(document.getElementById("decision-counts-` + want.key + `") || {}).textContent || ""`)); !strings.Contains(got, "undecided") || !strings.Contains(got, "comparisons") {
		t.Errorf("decisions section: %q", got)
	}
	if got := eval(`document.getElementById("decisions-` + want.key + `") !== null`); got != true {
		t.Errorf("no decisions heading")
	}
	// The batch-invariance section: its table where rows were hashed, its
	// summary always.
	if want.invariance > 0 {
		if got := eval(`document.querySelectorAll("#invariance-table-` + want.key + ` tbody tr").length`); got != float64(want.invariance) {
			t.Errorf("batch-invariance table: %v rows, want %d", got, want.invariance)
		}
	}
	if got := fmt.Sprint(eval(`document.querySelector("#prov-` + want.key + `").textContent`)); !strings.Contains(got, "INVARIAN") {
		t.Errorf("the section lacks the batch-invariance summary")
	}
}
