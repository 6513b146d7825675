package cli

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// A progress shows how far a long verb (sweep, scan, ab, select's
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
// of a cost model fitted to the worked cells (costFit).
type progress struct {
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
	// model once it exists (costFit): leftF is the features' sum over the
	// steps not finished yet.
	fit   *costFit
	leftF []float64
}

// newProgressFeatures is newProgress whose estimate, once a few steps did
// work, comes from a cost model fitted on the steps' features (feats[i]
// for step i, e.g. 1, FLOPs and bytes of a cell; see costFit); weights
// serve until then.
func newProgressFeatures(w io.Writer, verb string, weights []float64, feats [][]float64) *progress {
	p := newProgress(w, verb, weights)
	if p.fit = newCostFit(feats); p.fit != nil {
		p.leftF = make([]float64, p.fit.k)
		for _, v := range feats {
			for j := range p.leftF {
				p.leftF[j] += v[j]
			}
		}
	}
	return p
}

// newProgress returns the progress of steps with the given weights (one per
// step, in order) written to w: a bar when w is a terminal, else lines.
func newProgress(w io.Writer, verb string, weights []float64) *progress {
	p := &progress{w: w, weights: weights, now: time.Now}
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

// equalWeights returns n weights of 1.
func equalWeights(n int) []float64 {
	w := make([]float64, n)
	for i := range w {
		w[i] = 1
	}
	return w
}

// step records the next step as finished: what names it ("Wqkv M=256"),
// state says how it ended ("done", "already stored", a verdict...), and
// skipped marks a step that did no work.
func (p *progress) step(what, state string, skipped bool) {
	p.mu.Lock()
	wt := 1.0
	if p.done < len(p.weights) {
		wt = p.weights[p.done]
	}
	p.mu.Unlock()
	p.stepWeighted(what, state, "", wt, nil, skipped)
}

// stepWeighted records a finished step of weight wt, for steps that finish
// in another order than their weights were given (cells spread over
// several devices); feats are its features (with newProgressFeatures);
// note, when not empty, ends the step's line (where the cell's time went).
func (p *progress) stepWeighted(what, state, note string, wt float64, feats []float64, skipped bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	p.done++
	p.doneW += wt
	if !skipped {
		p.workW += wt
		p.work += now.Sub(p.last)
	}
	if p.fit != nil && len(feats) == p.fit.k {
		for j := range p.leftF {
			p.leftF[j] -= feats[j]
		}
		if !skipped {
			p.fit.add(feats, now.Sub(p.last).Seconds())
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
	fmt.Fprintf(p.w, "[%d/%d] %s %s (elapsed %s, remaining %s)%s\n", p.done, total, what, state, fmtDuration(elapsed), rest, note)
}

// remaining formats the estimate of the time left: "~28s", "0s" when done,
// "unknown" before any step did work.
func (p *progress) remaining() string {
	left := p.totalW - p.doneW
	switch {
	case left <= 0 || p.done >= len(p.weights):
		return "0s"
	case p.workW <= 0:
		return "unknown"
	}
	if secs, ok := p.fit.predict(p.leftF); ok {
		return "~" + fmtDuration(time.Duration(max(secs, 0)*float64(time.Second)))
	}
	return "~" + fmtDuration(time.Duration(float64(p.work)/p.workW*left))
}

// fmtDuration rounds d for display: ms below a second, 0.1 s below a
// minute, whole seconds above.
func fmtDuration(d time.Duration) string {
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}
