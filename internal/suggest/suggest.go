// Package suggest finds what a user probably meant: the known name closest
// to a mistyped one (a verb, a flag).
package suggest

import "sort"

// Closest returns the name of names closest to name when it is a likely
// typo (none for names of one or two letters, at most one edit for three or
// four, two for longer ones; a swap of two neighbouring letters is one
// edit), else "". Ties go to the alphabetically first name.
func Closest(names []string, name string) string {
	names = append([]string(nil), names...)
	sort.Strings(names)
	best, bestD := "", 3
	limit := 2
	switch {
	case len(name) <= 2:
		return ""
	case len(name) <= 4:
		limit = 1
	}
	for _, n := range names {
		if d := Distance(name, n); d <= limit && d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

// Distance is the optimal-string-alignment distance between a and b:
// insertions, deletions, substitutions and swaps of two adjacent letters
// each count one.
func Distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}
