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
	p.Step("c", "done", false) // 8 s for weight 3: 4 left → ~10.7 s
	clock = clock.Add(8 * time.Second)
	p.Step("d", "done", false)
	clock = clock.Add(time.Second)
	p.Step("e", "extra", false) // more steps than weights: the total grows
	want := `[1/4] a already stored (elapsed 0s, remaining unknown)
[2/4] b done (elapsed 2s, remaining ~12s)
[3/4] c done (elapsed 8s, remaining ~10.7s)
[4/4] d done (elapsed 16s, remaining 0s)
[5/5] e extra (elapsed 17s, remaining 0s)
`
	if buf.String() != want {
		t.Errorf("got\n%s\nwant\n%s", buf.String(), want)
	}
}
