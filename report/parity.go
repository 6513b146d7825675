package report

import (
	"fmt"
	"strings"
)

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

// DecisionsLine counts the verdicts of every cell's comparison with its
// reference tile over the provenances of in, in one line: "decisions
// against the reference: 467 comparisons — 80 faster, 40 slower, 25 tie,
// 322 undecided (…)". "" when nothing was compared.
func DecisionsLine(in Input) string {
	doc := build(in)
	var d Decisions
	for _, sec := range doc.Provenances {
		s := sec.Decisions
		d.Comparisons += s.Comparisons
		d.Faster += s.Faster
		d.Slower += s.Slower
		d.Tie += s.Tie
		d.Undecided += s.Undecided
	}
	if d.Comparisons == 0 {
		return ""
	}
	line := fmt.Sprintf("decisions against the reference: %d %s — %d faster, %d slower, %d tie, %d undecided",
		d.Comparisons, plural(d.Comparisons, "comparison", "comparisons"), d.Faster, d.Slower, d.Tie, d.Undecided)
	if d.Undecided > 0 {
		line += " (the rounds ended first: more rounds could decide them; tilefit select confirms its picks with adaptive rounds)"
	}
	return line
}

// SelectCommands are the tilefit select commands that turn the sweep of
// in (each provenance: one operator's families) into policies and
// selector code: db and workload as the sweep was given them, one
// --emit-dir per operator when there are several.
func SelectCommands(in Input, db, workload string) []string {
	doc := build(in)
	var out []string
	for _, sec := range doc.Provenances {
		pv := sec.Provenance
		dir := "tileselect"
		if len(doc.Provenances) > 1 {
			op := pv.Operator
			if op == "" {
				op = "gemm_f16"
			}
			dir += "/" + op
		}
		cmd := "tilefit select --db " + shellQuote(db) + " --backend " + shellQuote(pv.Backend)
		if workload != "" {
			cmd += " --workload " + shellQuote(workload)
		}
		cmd += " --provenance " + sec.Key + " --emit go,c,cpp,json --emit-dir " + shellQuote(dir)
		out = append(out, cmd)
	}
	return out
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=@,+", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
