package report

import "strings"

// ParityLine returns the parity summary of in, one line per provenance
// ("ALL BITWISE: 32 tiles × 5 shapes × 3 M (...)"), as printed at the end
// of a sweep.
func ParityLine(in Input) string {
	doc := build(in)
	var lines []string
	for _, sec := range doc.Provenances {
		lines = append(lines, sec.Parity.Summary, sec.Invariance.Summary)
	}
	if len(lines) == 0 {
		return "NOT ALL BITWISE: no cells"
	}
	return strings.Join(lines, "\n")
}
