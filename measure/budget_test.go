package measure

import (
	"testing"
	"time"
)

// TestPlanBudgetCutsASample (issue 18 item 3): --dispatches 1099511627776
// made one sample 2⁴⁰ calls long, past any budget. The budget cuts D so
// that MinRounds rounds fit in it.
func TestPlanBudgetCutsASample(t *testing.T) {
	o := DefaultOptions()
	o.Dispatches = 1 << 40
	o.Budget = 30 * time.Second
	est := []time.Duration{time.Millisecond, 2 * time.Millisecond}
	d, rounds := Plan(est, o)
	var perRound time.Duration
	for i := range d {
		perRound += time.Duration(d[i]) * est[i]
	}
	if time.Duration(o.MinRounds)*perRound > o.Budget || rounds < o.MinRounds {
		t.Errorf("D %v, %d rounds: %s per round, past the %s budget", d, rounds, perRound, o.Budget)
	}
	if d[0] < 1000 {
		t.Errorf("D %v: cut more than the budget needs", d)
	}
	// A D that fits is kept.
	o.Dispatches = 5
	if d, _ := Plan(est, o); d[0] != 5 {
		t.Errorf("D %v, want 5", d)
	}
	// No budget, no cut; a kernel slower than the budget still runs once.
	o.Budget = 0
	if d, _ := Plan(est, o); d[0] != 5 {
		t.Errorf("no budget: D %v", d)
	}
	o.Budget, o.Dispatches = time.Millisecond, 64
	if d, _ := Plan([]time.Duration{time.Second}, o); d[0] != 1 {
		t.Errorf("slow kernel: D %v, want 1", d)
	}
}
