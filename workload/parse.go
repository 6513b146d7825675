package workload

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"github.com/tilefit/tilefit/internal/suggest"
	"io"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v3"

	"github.com/tilefit/tilefit/builtin"
	"github.com/tilefit/tilefit/kernel"
)

var (
	topKeys   = []string{"name", "m", "shapes"}
	shapeKeys = []string{"name", "n", "k", "calls", "op"}
)

// shapeKeysFor lists the keys a shape may have: the fixed ones, then the
// lower-case name of every dimension (other than M, N, K) of the registry's
// operators.
func shapeKeysFor(reg *kernel.Registry) []string {
	keys := append([]string(nil), shapeKeys...)
	seen := map[string]bool{}
	for _, f := range reg.Families() {
		for _, d := range f.Operator.Dims {
			k := strings.ToLower(d)
			if k != "m" && !slices.Contains(keys, k) && !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	return keys
}

// Limits that keep alias and merge-key expansion from turning a small file
// into a large amount of work.
const (
	maxMergeDepth = 8
	maxVisits     = 1 << 18
	maxProblems   = 1000
)

// Parse reads a workload from YAML data (format in the package doc) and
// validates it against opt. filename is used in messages and, without a name
// key, for the workload's name (the file's base name without extension).
//
// Any problem, from a YAML syntax error to a shape over the memory budget,
// makes Parse return a *ValidationError listing every problem found, in file
// order, as "FILE:LINE: FIELD: message". The Ms of a parsed workload are
// sorted ascending. Parse never panics.
func Parse(filename string, data []byte, opt Options) (Workload, error) {
	if opt.Operators == nil {
		opt.Operators = builtin.New()
	}
	p := &parser{file: filename, lines: map[string]int{}, cols: map[string]int{}, skip: map[string]bool{}, shapeKeys: shapeKeysFor(opt.Operators)}
	w, ok := p.parse(data)
	if ok {
		p.probs = append(p.probs, check(w, opt, filename, p.lines, p.skip)...)
	}
	if len(p.probs) > 0 {
		// File order: by line, then by column for flow content on one line.
		slices.SortStableFunc(p.probs, func(a, b Problem) int {
			return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(lookup(p.cols, a.Field), lookup(p.cols, b.Field)))
		})
		if n := len(p.probs) - maxProblems; n > 0 {
			p.probs = append(p.probs[:maxProblems:maxProblems], Problem{File: filename, Msg: fmt.Sprintf("and %d more problems", n)})
		}
		return Workload{}, &ValidationError{Problems: p.probs}
	}
	slices.Sort(w.Ms)
	return w, nil
}

// A parser walks one YAML document. lines and cols map field paths
// ("shapes[1].n") to their positions; skip marks paths whose problems were
// already reported, so that the value rules in check do not report them again.
type parser struct {
	file   string
	probs  []Problem
	lines  map[string]int
	cols   map[string]int
	skip   map[string]bool
	visits int  // mappings, keys and merge items walked so far
	tooBig bool // visits went over maxVisits; the walk was abandoned
	seen   map[Problem]bool
	// shapeLine is the line of the shape being walked, 0 outside shapes.
	shapeLine int
	// shapeKeys are the keys a shape may have (shapeKeysFor).
	shapeKeys []string
}

// visit counts one step of the walk and reports whether the walk may go on.
func (p *parser) visit(line int) bool {
	if p.tooBig {
		return false
	}
	if p.visits++; p.visits > maxVisits {
		p.tooBig = true
		if p.shapeLine > 0 {
			line = p.shapeLine
		}
		p.add(line, "", "too much to walk after expanding aliases and merge keys (over %d steps)", maxVisits)
		return false
	}
	return true
}

// at records where field is: the position of node n.
func (p *parser) at(field string, n *yaml.Node) {
	p.lines[field] = n.Line
	p.cols[field] = n.Column
}

// add records a problem once; a problem met again through an alias is not
// repeated.
func (p *parser) add(line int, field, format string, args ...any) {
	prob := Problem{File: p.file, Line: line, Field: field, Msg: fmt.Sprintf(format, args...)}
	if p.seen == nil {
		p.seen = map[Problem]bool{}
	}
	if !p.seen[prob] {
		p.seen[prob] = true
		p.probs = append(p.probs, prob)
	}
}

// parse returns the workload and whether the document was whole enough for
// the value rules to run on it.
func (p *parser) parse(data []byte) (Workload, bool) {
	if len(data) > MaxFileBytes {
		p.add(0, "", "file is over the %s limit for a workload file", formatBytes(MaxFileBytes))
		return Workload{}, false
	}
	if !utf8.Valid(data) {
		p.add(0, "", "file is not UTF-8 text")
		return Workload{}, false
	}
	root, second, err := decode(data)
	if err != nil {
		line, msg := syntaxError(err, data)
		p.add(line, "", "syntax error: %s", msg)
		return Workload{}, false
	}
	if root == nil {
		p.add(0, "", "file is empty; want a mapping with keys %s", strings.Join(topKeys, ", "))
		return Workload{}, false
	}
	if second != nil {
		p.add(second.Line, "", "a second YAML document starts here; a workload file holds one")
	}
	line := root.Line
	root = deref(root)
	if root.Kind != yaml.MappingNode {
		p.add(line, "", "want a mapping with keys %s, got %s", strings.Join(topKeys, ", "), describe(root))
		return Workload{}, false
	}

	var w Workload
	got := map[string]bool{}
	for _, e := range p.entries(root, "", topKeys, 0) {
		if p.tooBig {
			break
		}
		got[e.key] = true
		p.lines[e.key], p.cols[e.key] = e.line, e.col
		switch e.key {
		case "name":
			s, ok := p.str(e.val, "name", e.line)
			if !ok {
				p.skip["name"] = true
			}
			w.Name = s
		case "m":
			w.Ms = p.ms(e.val, e.line)
		case "shapes":
			w.Shapes = p.shapes(e.val, e.line)
		}
	}
	if p.tooBig {
		return Workload{}, false
	}
	if !got["name"] {
		w.Name = defaultName(p.file)
	}
	for _, key := range []string{"m", "shapes"} {
		if !got[key] {
			p.add(line, key, "required key is missing")
			p.skip[key] = true
		}
	}
	return w, true
}

// decode parses the first YAML document of data and returns its root node
// (nil if there is none) and the root of a second, non-empty document if the
// data holds one.
func decode(data []byte) (root, second *yaml.Node, err error) {
	defer func() {
		if r := recover(); r != nil {
			root, second, err = nil, nil, fmt.Errorf("yaml: the YAML parser failed: %v", r)
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil, nil
		}
		return nil, nil, err
	}
	var doc2 yaml.Node
	if err := dec.Decode(&doc2); err != nil && !errors.Is(err, io.EOF) {
		return nil, nil, err
	}
	if r := docRoot(&doc2); r != nil && !isNull(deref(r)) {
		second = r
	}
	return docRoot(&doc), second, nil
}

func docRoot(doc *yaml.Node) *yaml.Node {
	if doc.Kind == yaml.DocumentNode && len(doc.Content) > 0 {
		return doc.Content[0]
	}
	if doc.Kind == 0 || doc.Kind == yaml.DocumentNode {
		return nil
	}
	return doc
}

var (
	// bigIntRE matches integers the YAML library resolves to floats because
	// they do not fit in 64 bits.
	bigIntRE     = regexp.MustCompile(`^[-+]?[0-9][0-9_]*$`)
	yamlLineRE   = regexp.MustCompile(`(?s)^yaml: line (\d+): (.*)$`)
	yamlAnchorRE = regexp.MustCompile(`^unknown anchor '(.*)' referenced$`)
)

// parserProblems are the messages of the YAML library's parser (as opposed to
// its scanner). The library reports their line zero-based.
var parserProblems = []string{
	"did not find expected <stream-start>",
	"did not find expected <document start>",
	"found undefined tag handle",
	"did not find expected node content",
	"did not find expected '-' indicator",
	"did not find expected key",
	"did not find expected ',' or ']'",
	"did not find expected ',' or '}'",
	"found duplicate %YAML directive",
	"found incompatible YAML document",
	"found duplicate %TAG directive",
}

// syntaxError splits a yaml error into its one-based line and message. The
// library leaves out the line for problems on the first line, reports
// parser problems zero-based and gives no line for unknown anchors; this
// makes up for all three.
func syntaxError(err error, data []byte) (int, string) {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 0
	if m := yamlLineRE.FindStringSubmatch(err.Error()); m != nil {
		if l, err := strconv.Atoi(m[1]); err == nil {
			line, msg = l, m[2]
		}
	}
	if slices.Contains(parserProblems, msg) {
		line++
	}
	if m := yamlAnchorRE.FindStringSubmatch(msg); m != nil {
		if i := bytes.Index(data, []byte("*"+m[1])); i >= 0 {
			return 1 + bytes.Count(data[:i], []byte("\n")), msg
		}
	}
	if msg == "control characters are not allowed" {
		if i := bytes.IndexFunc(data, func(r rune) bool {
			return r < 0x20 && r != '\t' && r != '\n' && r != '\r' || r == 0x7f
		}); i >= 0 {
			return 1 + bytes.Count(data[:i], []byte("\n")), msg
		}
	}
	return max(line, 1), msg
}

// An entry is one key of a mapping, after merge keys are applied.
type entry struct {
	key  string
	line int
	col  int
	val  *yaml.Node
}

// entries returns the allowed keys of mapping n in order, reporting unknown
// keys, keys given twice and keys that are not scalars. Keys from merge keys
// (<<: *base) come after explicit ones and never override them.
func (p *parser) entries(n *yaml.Node, path string, allowed []string, depth int) []entry {
	var out, merged []entry
	seen := map[string]int{}
	if !p.visit(n.Line) {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if !p.visit(n.Content[i].Line) {
			return nil
		}
		k, v := n.Content[i], n.Content[i+1]
		kd := deref(k)
		if kd.Kind != yaml.ScalarNode {
			p.add(k.Line, path, "keys must be plain names, got %s", describe(kd))
			continue
		}
		if kd.ShortTag() == "!!merge" {
			merged = append(merged, p.merge(v, path, allowed, depth+1)...)
			continue
		}
		key := kd.Value
		if path == "" && strings.HasPrefix(key, "x-") {
			continue // a place for anchors, ignored
		}
		field := joinField(path, key)
		if _, ok := p.lines[field]; !ok {
			p.at(field, k)
		}
		if !slices.Contains(allowed, key) {
			p.add(k.Line, field, "unknown key; allowed keys: %s%s", strings.Join(allowed, ", "), didYouMean(key, allowed))
			continue
		}
		if first, dup := seen[key]; dup {
			p.add(k.Line, field, "key given twice (first on line %d)", first)
			continue
		}
		seen[key] = k.Line
		out = append(out, entry{key: key, line: k.Line, col: k.Column, val: v})
	}
	for _, e := range merged {
		if _, ok := seen[e.key]; !ok {
			seen[e.key] = e.line
			out = append(out, e)
		}
	}
	return out
}

// merge returns the entries a merge key's value brings in: one mapping or a
// list of mappings, earlier ones taking precedence.
func (p *parser) merge(v *yaml.Node, path string, allowed []string, depth int) []entry {
	field := joinField(path, "<<")
	if depth > maxMergeDepth {
		p.add(v.Line, field, "merge keys nested more than %d deep (does an anchor merge itself?)", maxMergeDepth)
		return nil
	}
	d := deref(v)
	switch d.Kind {
	case yaml.MappingNode:
		return p.entries(d, path, allowed, depth)
	case yaml.SequenceNode:
		var out []entry
		for _, item := range d.Content {
			if !p.visit(item.Line) {
				return nil
			}
			m := deref(item)
			if m.Kind != yaml.MappingNode {
				p.add(item.Line, field, "want a mapping to merge, got %s", describe(m))
				continue
			}
			out = append(out, p.entries(m, path, allowed, depth)...)
		}
		return out
	}
	p.add(v.Line, field, "want a mapping or a list of mappings to merge, got %s", describe(d))
	return nil
}

// ms reads the m key: a list of integers, or one integer.
func (p *parser) ms(v *yaml.Node, line int) []int {
	d := deref(v)
	switch {
	case d.Kind == yaml.SequenceNode && len(d.Content) > MaxMs:
		p.add(line, "m", "%s", tooManyMs(len(d.Content)))
		p.skip["m"] = true
		return nil
	case d.Kind == yaml.SequenceNode:
		ms := make([]int, len(d.Content))
		for i, e := range d.Content {
			path := fmt.Sprintf("m[%d]", i)
			p.at(path, e)
			m, ok := p.int(e, path, e.Line)
			if !ok {
				p.skip[path] = true
			}
			ms[i] = m
		}
		return ms
	case d.Kind == yaml.ScalarNode && d.ShortTag() == "!!int":
		p.lines["m[0]"], p.cols["m[0]"] = line, d.Column
		m, ok := p.int(d, "m", line)
		if !ok {
			p.skip["m"] = true
			return nil
		}
		return []int{m}
	}
	p.add(line, "m", "want a list of integers, got %s", describe(d))
	p.skip["m"] = true
	return nil
}

// shapes reads the shapes key: a list of mappings.
func (p *parser) shapes(v *yaml.Node, line int) []Shape {
	d := deref(v)
	if d.Kind != yaml.SequenceNode {
		p.add(line, "shapes", "want a list of shapes, got %s", describe(d))
		p.skip["shapes"] = true
		return nil
	}
	if len(d.Content) > MaxShapes {
		// Refused before walking: the message names the real limit.
		p.add(line, "shapes", "%s", tooManyShapes(len(d.Content)))
		p.skip["shapes"] = true
		return nil
	}
	out := make([]Shape, len(d.Content))
	for i, e := range d.Content {
		path := fmt.Sprintf("shapes[%d]", i)
		p.at(path, e)
		m := deref(e)
		if m.Kind != yaml.MappingNode {
			p.add(e.Line, path, "want a mapping with keys %s, got %s", strings.Join(p.shapeKeys, ", "), describe(m))
			p.skip[path] = true
			continue
		}
		s := Shape{Calls: 1}
		got := map[string]bool{}
		p.shapeLine = e.Line
		entries := p.entries(m, path, p.shapeKeys, 0)
		p.shapeLine = 0
		for _, f := range entries {
			field := path + "." + f.key
			p.lines[field], p.cols[field] = f.line, f.col
			got[f.key] = true
			var ok bool
			switch f.key {
			case "name":
				s.Name, ok = p.str(f.val, field, f.line)
			case "n":
				s.N, ok = p.int(f.val, field, f.line)
			case "k":
				s.K, ok = p.int(f.val, field, f.line)
			case "calls":
				s.Calls, ok = p.int(f.val, field, f.line)
			case "op":
				s.Op, ok = p.str(f.val, field, f.line)
			default: // a dimension of some operator
				var v int
				if v, ok = p.int(f.val, field, f.line); ok {
					if s.Dims == nil {
						s.Dims = map[string]int{}
					}
					s.Dims[strings.ToUpper(f.key)] = v
				}
			}
			if !ok {
				p.skip[field] = true
			}
		}
		if p.tooBig {
			return nil
		}
		if s.N != 0 || got["n"] {
			if s.Dims == nil {
				s.Dims = map[string]int{}
			}
			s.Dims["N"] = s.N
		}
		if s.K != 0 || got["k"] {
			if s.Dims == nil {
				s.Dims = map[string]int{}
			}
			s.Dims["K"] = s.K
		}
		for _, key := range []string{"name"} {
			if !got[key] {
				p.add(e.Line, path+"."+key, "required key is missing")
				p.skip[path+"."+key] = true
			}
		}
		out[i] = s
	}
	return out
}

// str reads a name: any scalar but null, taken as written.
func (p *parser) str(v *yaml.Node, field string, line int) (string, bool) {
	d := deref(v)
	if d.Kind != yaml.ScalarNode || isNull(d) {
		p.add(line, field, "want a string, got %s", describe(d))
		return "", false
	}
	return d.Value, true
}

// int reads an integer scalar that fits in an int.
func (p *parser) int(v *yaml.Node, field string, line int) (int, bool) {
	d := deref(v)
	if d.Kind == yaml.ScalarNode && d.ShortTag() == "!!float" && bigIntRE.MatchString(d.Value) {
		p.add(line, field, "want an integer, got %s, which does not fit in %d bits", clip(d.Value), strconv.IntSize)
		return 0, false
	}
	if d.Kind != yaml.ScalarNode || d.ShortTag() != "!!int" {
		p.add(line, field, "want an integer, got %s", describe(d))
		return 0, false
	}
	var n int64
	if err := d.Decode(&n); err != nil || n < math.MinInt || n > math.MaxInt {
		p.add(line, field, "want an integer, got %s, which does not fit in %d bits", clip(d.Value), strconv.IntSize)
		return 0, false
	}
	return int(n), true
}

// deref follows aliases. A cycle or a dangling alias gives an empty node.
func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode; i++ {
		if i > 16 {
			return &yaml.Node{}
		}
		n = n.Alias
	}
	if n == nil {
		return &yaml.Node{}
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// describe says what a value is, for "want X, got Y" messages.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch tag := n.ShortTag(); tag {
		case "!!str":
			return "string " + quote(n.Value)
		case "!!int":
			return "integer " + clip(n.Value)
		case "!!float":
			return "float " + clip(n.Value)
		case "!!bool":
			return "boolean " + clip(n.Value)
		case "!!null":
			if n.Value == "" {
				return "an empty value"
			}
			return "null"
		case "!!timestamp":
			return "timestamp " + quote(n.Value)
		case "!!binary":
			return "binary data"
		default:
			return quote(n.Value) + " tagged " + tag
		}
	}
	return "nothing"
}

// clip shortens text that is not quoted.
func clip(s string) string {
	if len(s) > 40 {
		return quote(s)
	}
	return s
}

// joinField appends key to a field path, quoting keys that are not plain
// names.
func joinField(path, key string) string {
	if key == "" || strings.ContainsFunc(key, func(r rune) bool { return !nameRune(r) && r != '<' }) {
		key = quote(key)
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

// didYouMean returns ` (did you mean "x"?)` for an unknown key close to an
// allowed one (suggest.Closest, case-insensitive), or "".
func didYouMean(key string, allowed []string) string {
	if len(key) > 32 {
		return ""
	}
	lower := strings.ToLower(key)
	best := suggest.Closest(allowed, lower)
	if slices.Contains(allowed, lower) {
		best = lower // a key in the wrong case
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// defaultName is a workload's name when its file gives none: the file's base
// name without extension, made valid.
func defaultName(file string) string {
	base := filepath.Base(file)
	base = strings.TrimSuffix(base, filepath.Ext(base))
	if s := sanitizeName(base); s != "" && base != "." {
		return s
	}
	return "workload"
}
