package stats_test

import (
	"fmt"

	"github.com/tilefit/tilefit/stats"
)

// Twelve paired rounds on a drifting machine: absolute times swing by 30 %,
// B is about 3 % faster in every round, and round 4 caught a spike on B.
func ExamplePaired() {
	a := []float64{100.0, 108.2, 121.5, 129.8, 118.1, 104.3, 95.2, 88.7, 92.4, 99.6, 111.0, 117.3}
	b := []float64{97.1, 104.9, 117.6, 126.1, 158.0, 101.3, 92.2, 86.1, 89.8, 96.4, 107.8, 113.6}
	c, err := stats.Paired(a, b, stats.DefaultOptions())
	if err != nil {
		panic(err)
	}
	fmt.Printf("median %.3f, interval [%.3f, %.3f], brackets [%.3f, %.3f]: %s\n",
		c.Median, c.Lo, c.Hi, c.BracketLo, c.BracketHi, c.Verdict)
	fmt.Println(c.Warnings)
	u, _ := stats.Unpaired(a, b, stats.DefaultOptions())
	fmt.Printf("ignoring the pairing: [%.3f, %.3f]: %s\n", u.Lo, u.Hi, u.Verdict)
	// Output:
	// median 0.971, interval [0.969, 0.971], brackets [0.968, 0.971]: faster
	// [left out 1 spiked pair of 12 (log-ratio more than 5 robust SDs from the median)]
	// ignoring the pairing: [0.868, 1.102]: undecided
}
