package progress

import (
	"bytes"
	"testing"
	"time"
)

// TestProgressLines: piped progress prints one line per step with the
// elapsed time and an estimate of the rest from the weighted steps that did
// work (a skipped step teaches nothing).
func TestProgressLines(t *testing.T) {
	var buf bytes.Buffer
	p := New(&buf, "x", []float64{1, 1, 2, 4})
	clock := time.Unix(0, 0)
	p.now = func() time.Time { return clock }
	p.start, p.last = clock, clock
	p.Step("a", "already stored", true)
	clock = clock.Add(2 * time.Second)
	p.Step("b", "done", false) // 2 s for weight 1: 6 weight left → 12 s
	clock = clock.Add(6 * time.Second)
	p.Step("c", "done", false) // 8 s for weight 3: 4 left → 10.7 s raw; held from the countdown 12 − 6 = 6 s (a jump past ×1.5): ~9.5 s
	clock = clock.Add(8 * time.Second)
	p.Step("d", "done", false)
	clock = clock.Add(time.Second)
	p.Step("e", "extra", false) // more steps than weights: the total grows
	want := `[1/4] a already stored (elapsed 0s, remaining unknown)
[2/4] b done (elapsed 2s, remaining ~12s)
[3/4] c done (elapsed 8s, remaining ~9.5s)
[4/4] d done (elapsed 16s, remaining 0s)
[5/5] e extra (elapsed 17s, remaining 0s)
`
	if buf.String() != want {
		t.Errorf("got\n%s\nwant\n%s", buf.String(), want)
	}
}

// TestRemainingHeld: raw estimates that jump from one cell to the next
// (issue 19: ~7.5s → ~1m24s → ~10.1s) are shown as a steady count down,
// and a lasting change is followed within a few cells.
func TestRemainingHeld(t *testing.T) {
	s := time.Second
	shown, at := time.Duration(0), 0*s
	step := func(now, raw time.Duration) time.Duration {
		var countdown time.Duration
		if shown > 0 {
			countdown = shown - (now - at)
		}
		shown, at = hold(countdown, raw), now
		return shown
	}
	got := []time.Duration{step(0, 7500*time.Millisecond), step(1*s, 84*s), step(2*s, 10100*time.Millisecond)}
	for i := 1; i < len(got); i++ {
		if r := float64(got[i]) / float64(got[i-1]); r > 2.5 || r < 0.5 {
			t.Errorf("shown %v: step %d moves ×%.2f", got, i, r)
		}
	}
	// A lasting change: the raw estimate stays at 10 minutes; the shown
	// one reaches it within a few cells.
	shown, at = 10*s, 0
	now := 0 * s
	for i := 0; i < 8; i++ {
		now += s
		step(now, 600*s)
	}
	if shown < 300*s {
		t.Errorf("after 8 cells at a raw 10 min the estimate shows %v", shown)
	}
	if hold(0, 42*s) != 42*s {
		t.Error("without a countdown the raw estimate is shown")
	}
}
