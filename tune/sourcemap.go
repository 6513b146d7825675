package tune

import (
	"regexp"
	"strconv"
	"strings"
)

// lineDirective matches a C/CUDA "#line N "file"" directive.
var lineDirective = regexp.MustCompile(`^\s*#\s*line\s+([0-9]+)\s+"([^"]+)"`)

// A lineSegment is the stretch of a source file that a #line directive
// renames: physical lines from, from+1, … (1-based) are line at, at+1, …
// of file.
type lineSegment struct {
	file     string
	at, from int
	to       int // the last physical line of the stretch
}

// MapSourceLines rewrites the positions a compiler reports in message
// (cc's "gemm_f16.c:372:5:", NVRTC's "gemm_f16.cu(372):") from the files
// the #line directives of src name to the lines of src itself, the file
// the user edited, named name: "broken.c:440:5:". An edited copy of
// `tilefit families source` keeps the built-in #line directives, so
// without this the compiler points into the built-in file. Positions of
// files src does not name, and messages without positions, are kept.
func MapSourceLines(message, src, name string) string {
	var segs []lineSegment
	lines := strings.Split(src, "\n")
	for i, l := range lines {
		m := lineDirective.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		if n := len(segs); n > 0 {
			segs[n-1].to = i // the directive's own line ends the stretch before it
		}
		at, _ := strconv.Atoi(m[1])
		segs = append(segs, lineSegment{file: m[2], at: at, from: i + 2, to: len(lines)})
	}
	if len(segs) == 0 {
		return message
	}
	mapLine := func(file string, n int) (int, bool) {
		for _, s := range segs {
			if s.file == file && n >= s.at && n-s.at+s.from <= s.to {
				return n - s.at + s.from, true
			}
		}
		return 0, false
	}
	replace := func(re *regexp.Regexp, format func(n int) string) {
		message = re.ReplaceAllStringFunc(message, func(pos string) string {
			m := re.FindStringSubmatch(pos)
			n, err := strconv.Atoi(m[2])
			if err != nil {
				return pos
			}
			if p, ok := mapLine(m[1], n); ok {
				return format(p)
			}
			return pos
		})
	}
	replace(ccPosition, func(n int) string { return name + ":" + strconv.Itoa(n) + ":" })
	replace(nvrtcPosition, func(n int) string { return name + "(" + strconv.Itoa(n) + ")" })
	return message
}

// The positions compilers report: cc "file:line:" and NVRTC "file(line)".
var (
	ccPosition    = regexp.MustCompile(`([A-Za-z0-9_.+/-]+):([0-9]+):`)
	nvrtcPosition = regexp.MustCompile(`([A-Za-z0-9_.+/-]+)\(([0-9]+)\)`)
)
