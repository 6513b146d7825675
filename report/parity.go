package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/tilefit/tilefit/result"
)

// SweepSummary writes what a sweep found, over every operator at once:
// the parity and batch-invariance lines of each operator's headline input
// (heads, one per provenance), the verdicts against the reference
// (undecided counted), with withReport the Markdown report of in (the
// whole workload's chunk), and what to do next: the tilefit select
// commands for database db and workload wl.
//
// The model of in is built once for all of them (its chunk totals'
// bootstrap intervals took ~0.7 s a build for the 65 strata cells).
func SweepSummary(w io.Writer, in Input, heads []Input, withReport bool, db, wl string) error {
	var lines []string
	for _, head := range heads {
		lines = append(lines, ParityLine(head))
	}
	fmt.Fprintln(w, strings.Join(lines, "\n"))
	doc := build(in)
	if line := decisionsLine(doc); line != "" {
		fmt.Fprintln(w, capitalizeFirst(line)+".")
	}
	if withReport {
		fmt.Fprintln(w)
		if err := markdownDoc(w, doc, in.Plots); err != nil {
			return err
		}
	}
	cmds := selectCommands(doc, db, wl)
	if len(cmds) == 0 {
		return nil
	}
	what := "Next: pick the tiles to ship, confirm them on this device in adaptive rounds, and emit the selector"
	if len(cmds) > 1 {
		what += fmt.Sprintf(" (%d operators: one policy each)", len(cmds))
	}
	fmt.Fprintf(w, "\n%s:\n\n", what)
	for _, c := range cmds {
		fmt.Fprintf(w, "    %s\n", c)
	}
	return nil
}

// capitalizeFirst upper-cases the first byte of an ASCII line.
func capitalizeFirst(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}

// NotMeasured writes which cells of a sweep's plan were not measured, and
// why (nothing when every cell was), as a Markdown table.
func NotMeasured(w io.Writer, missing []result.Missing) {
	if len(missing) == 0 {
		return
	}
	fmt.Fprintf(w, "\nNot measured: %d cells of the plan (nothing of them is stored; the same command tries them again):\n\n| shape | M | why |\n|---|---:|---|\n", len(missing))
	esc := strings.NewReplacer("|", `\|`, "\n", " ", "\r", " ", "<", "&lt;")
	for _, m := range missing {
		fmt.Fprintf(w, "| %s | %d | %s |\n", esc.Replace(m.Cell.Shape), m.Cell.M, esc.Replace(m.Why))
	}
}

// CompileFailures counts the results of the tiles of in (not the vendor
// baselines) when every one failed to compile, with the first compiler
// message (its first line, at most 300 bytes); 0 when any tile compiled.
func CompileFailures(in Input) (failed int, first string) {
	for _, c := range in.Cells {
		for _, cand := range c.Candidates {
			if cand.Vendor {
				continue
			}
			if cand.Status != result.CompileFailed {
				return 0, "" // some tile compiled: the failures are in the report
			}
			failed++
			if first == "" {
				first = FailureLine(cand.Detail, 300)
			}
		}
	}
	return failed, first
}

// ParityLine returns the parity summary of in, one line per provenance
// ("ALL BITWISE: 32 tiles × 5 shapes × 3 M (...)"), as printed at the end
// of a sweep.
func ParityLine(in Input) string {
	doc := buildWith(in, false)
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
func DecisionsLine(in Input) string { return decisionsLine(build(in)) }

// decisionsLine is DecisionsLine of a built model.
func decisionsLine(doc Document) string {
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
	return selectCommands(build(in), db, workload)
}

// selectCommands is SelectCommands of a built model.
func selectCommands(doc Document, db, workload string) []string {
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
