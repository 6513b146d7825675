// Package progress shows how far a long verb (sweep, scan, ab, select's
// confirmations) has come and estimates the time left: a bar on a
// terminal, one line per finished step otherwise. The estimate is a cost
// model fitted to the steps that did work (CostFit) or, until it exists,
// the steps' weights.
package progress

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/tilefit/tilefit/result"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// A Progress shows how far a long verb (sweep, scan, ab, select's
// confirmations) has come, with the time elapsed and an estimate of the
// time remaining. On a terminal it is a bar; otherwise (piped, redirected to
// a log) one line per finished step:
//
//	[3/10] Wqkv M=256 done (elapsed 12.3s, remaining ~28s)
//
// The estimate scales the time the steps that did work took by their
// weights: remaining ≈ (time of worked steps / their weight) × weight of the
// steps left. Steps skipped because their results were already stored take
// no time and teach the estimate nothing. Weights are a step's expected cost
// (e.g. a cell's FLOPs plus a constant); equal weights count steps. A
// sweep's cells also carry features (1, FLOPs, bytes moved): once as many
// cells as features did work, the estimate is the sum over the cells left
// of a cost model fitted to the worked cells (CostFit).
type Progress struct {
	mu      sync.Mutex // steps may finish on several executors at once
	w       io.Writer
	weights []float64
	totalW  float64
	now     func() time.Time
	start   time.Time
	last    time.Time
	done    int
	doneW   float64
	workW   float64
	work    time.Duration
	bar     *progressbar.ProgressBar
	// With features (newProgressFeatures) the estimate is a fitted cost
	// model once it exists (CostFit): leftF is the features' sum over the
	// steps not finished yet.
	fit   *CostFit
	leftF []float64
	// shown is the time left last shown, at shownAt (0 before any).
	shown   time.Duration
	shownAt time.Time
}

// NewFeatures is New whose estimate, once a few steps did
// work, comes from a cost model fitted on the steps' features (feats[i]
// for step i, e.g. 1, FLOPs and bytes of a cell; see CostFit); weights
// serve until then.
func NewFeatures(w io.Writer, verb string, weights []float64, feats [][]float64) *Progress {
	p := New(w, verb, weights)
	if p.fit = NewCostFit(feats); p.fit != nil {
		p.leftF = make([]float64, p.fit.Features())
		for _, v := range feats {
			for j := range p.leftF {
				p.leftF[j] += v[j]
			}
		}
	}
	return p
}

// New returns the progress of steps with the given weights (one per
// step, in order) written to w: a bar when w is a terminal, else lines.
func New(w io.Writer, verb string, weights []float64) *Progress {
	p := &Progress{w: w, weights: weights, now: time.Now}
	for _, x := range weights {
		p.totalW += x
	}
	p.start, p.last = p.now(), p.now()
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		p.bar = progressbar.NewOptions(len(weights), progressbar.OptionSetWriter(w), progressbar.OptionSetDescription(verb),
			progressbar.OptionShowCount(), progressbar.OptionSetPredictTime(false), progressbar.OptionShowElapsedTimeOnFinish(),
			progressbar.OptionClearOnFinish())
	}
	return p
}

// Bar reports whether p draws a bar (its writer is a terminal) rather
// than lines.
func (p *Progress) Bar() bool { return p.bar != nil }

// EqualWeights returns n weights of 1.
func EqualWeights(n int) []float64 {
	w := make([]float64, n)
	for i := range w {
		w[i] = 1
	}
	return w
}

// Step records the next step as finished: what names it ("Wqkv M=256"),
// state says how it ended ("done", "already stored", a verdict...), and
// skipped marks a step that did no work.
func (p *Progress) Step(what, state string, skipped bool) {
	p.mu.Lock()
	wt := 1.0
	if p.done < len(p.weights) {
		wt = p.weights[p.done]
	}
	p.mu.Unlock()
	p.StepWeighted(what, state, "", wt, nil, skipped)
}

// StepWeighted records a finished step of weight wt, for steps that finish
// in another order than their weights were given (cells spread over
// several devices); feats are its features (with NewFeatures);
// note, when not empty, ends the step's line (where the cell's time went).
func (p *Progress) StepWeighted(what, state, note string, wt float64, feats []float64, skipped bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	p.done++
	p.doneW += wt
	if !skipped {
		p.workW += wt
		p.work += now.Sub(p.last)
	}
	if p.fit != nil && len(feats) == p.fit.Features() {
		for j := range p.leftF {
			p.leftF[j] -= feats[j]
		}
		if !skipped {
			p.fit.Add(feats, now.Sub(p.last).Seconds())
		}
	}
	p.last = now
	elapsed := now.Sub(p.start)
	rest := p.remaining()
	if p.bar != nil {
		p.bar.Describe(fmt.Sprintf("%s (remaining %s)", what, rest))
		p.bar.Set(p.done)
		return
	}
	total := max(len(p.weights), p.done)
	fmt.Fprintf(p.w, "[%d/%d] %s %s (elapsed %s, remaining %s)%s\n", p.done, total, what, state, Duration(elapsed), rest, note)
}

// remaining formats the estimate of the time left: "~28s", "0s" when done,
// "unknown" before any step did work. The estimate shown is held steady
// (hold): one cell much slower or faster than the model expects moves it
// by a bounded factor from the countdown of the last one shown.
func (p *Progress) remaining() string {
	left := p.totalW - p.doneW
	switch {
	case left <= 0 || p.done >= len(p.weights):
		return "0s"
	case p.workW <= 0:
		return "unknown"
	}
	raw := time.Duration(float64(p.work) / p.workW * left)
	if secs, ok := p.fit.Predict(p.leftF); ok {
		raw = time.Duration(max(secs, 0) * float64(time.Second))
	}
	now := p.now()
	var countdown time.Duration
	if !p.shownAt.IsZero() {
		countdown = p.shown - now.Sub(p.shownAt)
	}
	p.shown, p.shownAt = hold(countdown, raw), now
	return "~" + Duration(p.shown)
}

// hold is the time left to show given the countdown of the last estimate
// shown (its value less the time since; ≤ 0 when there is none or it ran
// out) and a new raw estimate: the raw estimate while it stays within a
// factor 1.5 of the countdown; beyond, a jump, clamped to [countdown/2,
// 3·countdown] and taken three quarters of the way from the countdown (at
// most ×2.5 or ×⅝ per step). Estimates that jump (~7.5s, ~1m24s, ~10.1s
// from one cell to the next: a cell that did far more or less work than
// the model expects) read as a count down that follows a lasting change
// within a few cells.
func hold(countdown, raw time.Duration) time.Duration {
	if countdown <= 0 || (2*raw >= 2*countdown/3 && 2*raw <= 3*countdown) {
		return raw
	}
	target := min(max(raw, countdown/2), 3*countdown)
	return countdown + 3*(target-countdown)/4
}

// Duration rounds d for display: ms below a second, 0.1 s below a
// minute, whole seconds above.
func Duration(d time.Duration) string {
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

// CellWeight is a cell's expected cost for progress estimates: its FLOPs
// plus 1e8 (about what the fixed work of a cell costs, in FLOPs of a CPU).
func CellWeight(c result.Cell) float64 { return c.FLOPs() + 1e8 }

// CellFeatures are what a cell's time is fitted on (CostFit): a constant,
// its FLOPs (the kernels' work: most of a CPU cell) and the bytes its
// operator moves (inputs drawn and uploaded, outputs copied back and
// compared: most of a GPU cell).
func CellFeatures(c result.Cell) []float64 { return []float64{1, c.FLOPs(), c.Bytes} }

// ForCells is the progress of a sweep's cells (weights and features from
// CellWeight and CellFeatures).
func ForCells(w io.Writer, cells []result.Cell) *Progress {
	ws := make([]float64, len(cells))
	feats := make([][]float64, len(cells))
	for i, c := range cells {
		ws[i] = CellWeight(c)
		feats[i] = CellFeatures(c)
	}
	return NewFeatures(w, "sweep", ws, feats)
}
