package progress

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tilefit/tilefit/builtin"
	"github.com/tilefit/tilefit/kernel"
	"github.com/tilefit/tilefit/result"
)

// TestCostFit: durations that are a non-negative combination of the
// features are recovered exactly; a combination that would need a negative
// coefficient gets the best non-negative one.
func TestCostFit(t *testing.T) {
	feats := [][]float64{{1, 10, 100}, {1, 40, 20}, {1, 5, 300}, {1, 80, 80}, {1, 20, 10}}
	f := NewCostFit(feats)
	secs := func(v []float64) float64 { return 0.5 + 0.02*v[1] + 0.003*v[2] }
	if _, ok := f.Predict(feats[0]); ok {
		t.Error("a prediction before any step")
	}
	for _, v := range feats[:3] {
		f.Add(v, secs(v))
	}
	for _, v := range feats[3:] {
		got, ok := f.Predict(v)
		if !ok || math.Abs(got-secs(v)) > 1e-9 {
			t.Errorf("predict %v = %g (%v), want %g", v, got, ok, secs(v))
		}
	}
	// y = 2 − 0.01·x: the best fit with coefficients ≥ 0.
	g := NewCostFit([][]float64{{1, 0}, {1, 100}})
	g.Add([]float64{1, 0}, 2)
	g.Add([]float64{1, 100}, 1)
	if c := g.coef; c == nil || c[0] < 0 || c[1] < 0 {
		t.Errorf("coefficients %v, want non-negative", c)
	}
	if got, _ := g.Predict([]float64{1, 50}); math.Abs(got-1.5) > 1e-9 {
		t.Errorf("predict = %g, want 1.5 (the mean, constant only)", got)
	}
}

// TestProgressFitsH200Sweep replays the cells of a recorded H200 sweep
// (testdata/h200-sweep-times.txt: the cells' stored end times) through the
// progress display with a stopped clock, once with the fitted cost model
// and once with the FLOP weights alone: from the 10th cell on the fitted
// estimate of the time left is within 55% of the truth (it learns the
// per-cell constant only from the big shapes, which come first: its worst
// is 51%, under the small shapes' estimate), where the FLOP-weighted one is
// off by up to 86% (8 s "remaining" for 45), and its mean error is under
// half the weights' (0.31 against 0.70).
func TestProgressFitsH200Sweep(t *testing.T) {
	f, err := os.Open("testdata/h200-sweep-times.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cells []result.Cell
	var elapsed []float64
	op := builtin.GemmF16()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		var shape string
		var m, n, k int
		var el float64
		if _, err := fmt.Sscanf(line, "%s %d %d %d %g", &shape, &m, &n, &k, &el); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		cells = append(cells, result.NewCell(shape, op, kernel.Dims{"M": m, "N": n, "K": k}, 1))
		elapsed = append(elapsed, el)
	}
	if len(cells) != 65 {
		t.Fatalf("%d cells", len(cells))
	}
	total := elapsed[len(elapsed)-1]
	re := regexp.MustCompile(`remaining ~([0-9hms.]+)\)`)
	// replay returns the relative error of the estimate after each cell
	// from the 10th to the second last.
	replay := func(fitted bool) []float64 {
		var buf bytes.Buffer
		pr := ForCells(&buf, cells)
		if !fitted {
			pr.fit = nil
		}
		start := time.Date(2026, 12, 1, 1, 34, 0, 0, time.UTC)
		now := start
		pr.now = func() time.Time { return now }
		pr.start, pr.last = start, start
		var errs []float64
		for i, c := range cells {
			now = start.Add(time.Duration(elapsed[i] * float64(time.Second)))
			pr.StepWeighted(fmt.Sprintf("%s M=%d", c.Shape, c.M), "done", "", CellWeight(c), CellFeatures(c), false)
			if i+1 < 10 || i+1 == len(cells) {
				continue
			}
			out := strings.Split(strings.TrimSpace(buf.String()), "\n")
			m := re.FindStringSubmatch(out[len(out)-1])
			if m == nil {
				t.Fatalf("cell %d: no estimate in %q", i+1, out[len(out)-1])
			}
			est, err := time.ParseDuration(m[1])
			if err != nil {
				t.Fatal(err)
			}
			truth := total - elapsed[i]
			errs = append(errs, math.Abs(est.Seconds()-truth)/truth)
		}
		return errs
	}
	stats := func(e []float64) (mean, worst float64) {
		for _, x := range e {
			mean += x / float64(len(e))
			worst = max(worst, x)
		}
		return mean, worst
	}
	fm, fw := stats(replay(true))
	wm, ww := stats(replay(false))
	t.Logf("relative error of the time left, cells 10–64: fitted mean %.2f worst %.2f; FLOP weights mean %.2f worst %.2f", fm, fw, wm, ww)
	if fw > 0.55 {
		t.Errorf("fitted estimate off by up to %.0f%%, want ≤ 55%%", 100*fw)
	}
	if fm > wm/2 {
		t.Errorf("fitted mean error %.2f is not under half the weights' %.2f", fm, wm)
	}
}
