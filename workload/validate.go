package workload

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/tilefit/tilefit/builtin"
	"github.com/tilefit/tilefit/kernel"
)

// A Problem is one thing wrong with a workload. File and Line are empty for a
// Workload validated in memory; Field is a path such as "shapes[1].n" or "m[2]",
// empty for problems of the file as a whole (e.g. YAML syntax errors).
type Problem struct {
	File  string
	Line  int
	Field string
	Msg   string
}

// String formats p as "FILE:LINE: FIELD: message", leaving out the parts that
// are empty.
func (p Problem) String() string {
	var b strings.Builder
	switch {
	case p.File != "" && p.Line > 0:
		fmt.Fprintf(&b, "%s:%d: ", p.File, p.Line)
	case p.File != "":
		fmt.Fprintf(&b, "%s: ", p.File)
	case p.Line > 0:
		fmt.Fprintf(&b, "line %d: ", p.Line)
	}
	if p.Field != "" {
		b.WriteString(p.Field)
		b.WriteString(": ")
	}
	b.WriteString(p.Msg)
	return b.String()
}

// A ValidationError lists every problem found in a workload, in file order.
type ValidationError struct {
	Problems []Problem
}

// Error returns the problems, one per line.
func (e *ValidationError) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// lineFunc returns the line of a field path, 0 if unknown.
type lineFunc func(path string) int

// check applies the value rules to w. lines maps field paths to file lines
// (nil without a file); skip lists paths already reported by the parser, whose
// values are placeholders and must not be reported again.
func check(w Workload, opt Options, file string, lines map[string]int, skip map[string]bool) []Problem {
	if opt.Operators == nil {
		opt.Operators = builtin.New()
	}
	var probs []Problem
	lineOf := func(path string) int { return lookup(lines, path) }
	add := func(field, format string, args ...any) {
		probs = append(probs, Problem{File: file, Line: lineOf(field), Field: field, Msg: fmt.Sprintf(format, args...)})
	}
	also := func(path string) string {
		if l := lineOf(path); l > 0 {
			return fmt.Sprintf("%s on line %d", path, l)
		}
		return path
	}

	if !skip["name"] {
		if msg := checkName(w.Name); msg != "" {
			add("name", "%s", msg)
		}
	}

	// Ms: the largest valid M sets the memory each shape needs.
	maxM := 0
	if !skip["m"] {
		probs = append(probs, checkMs(w.Ms, file, lines, skip)...)
		for i, m := range w.Ms {
			if !skip[fmt.Sprintf("m[%d]", i)] && checkM(m) == "" {
				maxM = max(maxM, m)
			}
		}
	}

	if !skip["shapes"] {
		if len(w.Shapes) == 0 {
			add("shapes", "want at least one shape")
		}
		if len(w.Shapes) > MaxShapes {
			add("shapes", "%s", tooManyShapes(len(w.Shapes)))
		}
		firstName := map[string]int{}
		for i, s := range w.Shapes {
			path := fmt.Sprintf("shapes[%d]", i)
			if skip[path] {
				continue
			}
			if !skip[path+".name"] {
				if msg := checkName(s.Name); msg != "" {
					add(path+".name", "%s", msg)
				} else if j, dup := firstName[s.Name]; dup {
					add(path+".name", "duplicate name %q (also %s)", s.Name, also(fmt.Sprintf("shapes[%d].name", j)))
				} else {
					firstName[s.Name] = i
				}
			}
			dimsOK := true
			op, err := opt.Operators.Operator(s.Operator())
			if err != nil {
				if !skip[path+".op"] {
					add(path+".op", "%v", err)
				}
				dimsOK = false
			}
			if op != nil {
				for _, name := range op.Dims[1:] {
					key := strings.ToLower(name)
					v, given := s.Dims[name]
					if !given && name == "N" && s.N != 0 {
						v, given = s.N, true
					}
					if !given && name == "K" && s.K != 0 {
						v, given = s.K, true
					}
					switch {
					case skip[path+"."+key]:
						dimsOK = false
					case !given:
						if _, def := op.Defaults[name]; !def {
							add(path+"."+key, "required key is missing (operator %s)", op.Name)
							dimsOK = false
						}
					default:
						if msg := checkDim(v); msg != "" {
							add(path+"."+key, "%s", msg)
							dimsOK = false
						}
					}
				}
				for name := range s.Dims {
					if !slices.Contains(op.Dims, name) && !skip[path+"."+strings.ToLower(name)] {
						add(path+"."+strings.ToLower(name), "operator %s has no dimension %s (dimensions: %s)", op.Name, name, strings.Join(op.Dims, ", "))
						dimsOK = false
					}
				}
			}
			if dimsOK && op != nil && op.CheckDims != nil {
				if err := op.CheckDims(withDefaults(op, s.At(1))); err != nil {
					add(dimField(path, s, err), "%v", err)
					dimsOK = false
				}
			}
			if !skip[path+".calls"] && s.Calls < 1 {
				add(path+".calls", "must be >= 1, got %d", s.Calls)
			}
			if dimsOK && maxM > 0 && opt.MaxBytes > 0 {
				if need := BufferBytes(op, s, maxM); need > opt.MaxBytes {
					a, b := sizePair(need, opt.MaxBytes)
					add(path, "buffers for M=%d need %s, over the %s budget", maxM, a, b)
				}
			}
		}
	}
	return probs
}

// checkMs applies the rules of the m list (at least one value, at most
// MaxMs, each in 1..MaxM, no value twice) to ms; the file and lines are for
// messages (nil without a file), skip lists values already reported.
func checkMs(ms []int, file string, lines map[string]int, skip map[string]bool) []Problem {
	var probs []Problem
	add := func(field, format string, args ...any) {
		probs = append(probs, Problem{File: file, Line: lookup(lines, field), Field: field, Msg: fmt.Sprintf(format, args...)})
	}
	if len(ms) == 0 {
		add("m", "want at least one M value")
	}
	if len(ms) > MaxMs {
		add("m", "%s", tooManyMs(len(ms)))
		return probs
	}
	first := map[int]int{}
	for i, m := range ms {
		path := fmt.Sprintf("m[%d]", i)
		if skip[path] {
			continue
		}
		if msg := checkM(m); msg != "" {
			add(path, "%s", msg)
			continue
		}
		if j, dup := first[m]; dup {
			also := fmt.Sprintf("m[%d]", j)
			if l := lookup(lines, also); l > 0 {
				also = fmt.Sprintf("%s on line %d", also, l)
			}
			add(path, "duplicate value %d (also %s)", m, also)
			continue
		}
		first[m] = i
	}
	return probs
}

func tooManyShapes(n int) string {
	return fmt.Sprintf("%d shapes, over the limit of %d shapes per workload (every shape is swept at every M; split the workload)", n, MaxShapes)
}

func tooManyMs(n int) string {
	return fmt.Sprintf("%d M values, over the limit of %d per workload", n, MaxMs)
}

// lookup returns the value m holds for path or, failing that, for the
// nearest enclosing path ("shapes[1].n" → "shapes[1]" → "shapes"); 0 if none.
func lookup(m map[string]int, path string) int {
	for path != "" {
		if v, ok := m[path]; ok {
			return v
		}
		i := strings.LastIndexAny(path, ".[")
		if i < 0 {
			break
		}
		path = path[:i]
	}
	return 0
}

func checkM(m int) string {
	switch {
	case m <= 0:
		return fmt.Sprintf("must be > 0, got %d", m)
	case m > MaxM:
		return fmt.Sprintf("must be <= %d (1<<20), got %d", MaxM, m)
	}
	return ""
}

func checkDim(v int) string {
	switch {
	case v <= 0:
		return fmt.Sprintf("must be > 0, got %d", v)
	case v > MaxDim:
		return fmt.Sprintf("must be <= %d (1<<24), got %d", MaxDim, v)
	}
	return ""
}

// checkName enforces names that are safe in reports, CSV, file names, SQL and
// generated code: 1..MaxNameLen bytes of letters, digits, '_', '-' and '.'.
func checkName(s string) string {
	if s == "" {
		return "must not be empty"
	}
	if len(s) > MaxNameLen {
		return fmt.Sprintf("must be at most %d bytes, got %d", MaxNameLen, len(s))
	}
	for _, r := range s {
		if !nameRune(r) {
			return fmt.Sprintf("may hold only letters, digits, '_', '-' and '.', got %s", quote(s))
		}
	}
	return ""
}

func nameRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.'
}

// sanitizeName turns s into a valid name, or "" if nothing is left.
func sanitizeName(s string) string {
	b := []rune(s)
	for i, r := range b {
		if !nameRune(r) {
			b[i] = '_'
		}
	}
	out := string(b)
	if len(out) > MaxNameLen {
		out = out[:MaxNameLen]
	}
	if strings.Trim(out, "_") == "" {
		return ""
	}
	return out
}

// quote quotes s for a message, shortened if long.
func quote(s string) string {
	const max = 40
	if len(s) > max {
		r := []rune(s)
		if len(r) > max {
			return strconv.Quote(string(r[:max])) + "..."
		}
	}
	return strconv.Quote(s)
}

// sizePair formats a need and a budget in binary units; when both round to
// the same text the exact byte counts follow, so the message never reads
// "need 1.0 GiB, over the 1.0 GiB budget" without saying by how much.
func sizePair(need, budget int64) (string, string) {
	a, b := formatBytes(need), formatBytes(budget)
	if a == b {
		a = fmt.Sprintf("%s (%d bytes)", a, need)
		b = fmt.Sprintf("%s (%d bytes)", b, budget)
	}
	return a, b
}

// formatBytes formats n with one decimal in B, KiB, MiB, GiB, TiB, PiB or EiB.
func formatBytes(n int64) string {
	if n < 1024 {
		return fmt.Sprintf("%d B", n)
	}
	units := []string{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	v := float64(n) / 1024
	u := 0
	for v >= 1023.95 && u < len(units)-1 { // 1023.95 would print as 1024.0
		v /= 1024
		u++
	}
	return fmt.Sprintf("%.1f %s", v, units[u])
}

// withDefaults fills in the dimensions of op that d lacks from its
// defaults.
func withDefaults(op *kernel.Operator, d kernel.Dims) kernel.Dims {
	for _, n := range op.Dims {
		if _, ok := d[n]; !ok {
			if v, def := op.Defaults[n]; def {
				d[n] = v
			}
		}
	}
	return d
}

// dimField is the field a broken dimension rule (err, from CheckDims) is
// reported at: the last dimension it names that the shape gives, else the
// shape itself.
func dimField(path string, s Shape, err error) string {
	var de *kernel.DimError
	if !errors.As(err, &de) {
		return path
	}
	for i := len(de.Dims) - 1; i >= 0; i-- {
		name := de.Dims[i]
		_, given := s.Dims[name]
		if given || name == "N" && s.N != 0 || name == "K" && s.K != 0 {
			return path + "." + strings.ToLower(name)
		}
	}
	return path
}
