package tune

import "testing"

// TestScanRate: the size budget's estimate takes the slowest rate of the
// size before when it is below the vendor's peak (the reference tile runs
// far below it), else the peak, else the fastest rate seen.
func TestScanRate(t *testing.T) {
	for _, tc := range []struct {
		peak, slowest, fastest, want float64
		from                         string
	}{
		{1260, 150, 1600, 150, "the slowest rate measured at the size before"},
		{1, 5, 9, 1, "the vendor's measured peak"},
		{1260, 0, 0, 1260, "the vendor's measured peak"},
		{0, 80, 300, 80, "the slowest rate measured at the size before"},
		{0, 0, 300, 300, "the fastest rate measured at a smaller size"},
		{0, 0, 0, 0, ""},
	} {
		got, from := scanRate(tc.peak, tc.slowest, tc.fastest)
		if got != tc.want || from != tc.from {
			t.Errorf("scanRate(%g, %g, %g) = %g (%s), want %g (%s)", tc.peak, tc.slowest, tc.fastest, got, from, tc.want, tc.from)
		}
	}
}
