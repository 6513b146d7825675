package backend

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"unicode/utf8"
)

// MaxLog is the most of a compiler's output a backend keeps for one
// program (CompilerLog): the first errors say what went wrong, and a
// source that is not C (UTF-16, say) makes megabytes of the same error.
const MaxLog = 16 << 10

// CompilerLog is what a backend keeps of a compiler's log for a program
// compiled from the source file named src, whose text is text, with the
// options opts: the diagnostics about src (and the files its #line
// directives name by a bare name, as the built-in sources name their
// parts: "gemm_f16.c"), about the headers under the -I directories of opts
// and under dirs (the compiler's own headers), and of any other file only
// its name (see Diagnostics); capped at MaxLog bytes.
//
// A source can #include any file the process can read ("/etc/passwd"),
// and compilers quote the lines they fail on: without this the file's
// lines would be stored in candidate rows, shown by report and serve, and
// copied into a shared store.
func CompilerLog(log, src, text string, opts []string, dirs ...string) string {
	if log == "" {
		return ""
	}
	named := lineNames(text)
	for i, o := range opts {
		switch {
		case o == "-I" && i+1 < len(opts):
			dirs = append(dirs, opts[i+1])
		case strings.HasPrefix(o, "-I") && len(o) > 2:
			dirs = append(dirs, o[2:])
		}
	}
	own := OwnFiles(src, dirs...)
	return CapLog(Diagnostics(log, func(path string) bool { return named[path] || own(path) }), MaxLog)
}

// reLine is a #line directive with a file name.
var reLine = regexp.MustCompile(`(?m)^[ \t]*#[ \t]*line[ \t]+[0-9]+[ \t]+"([^"/\\]+)"`)

// lineNames returns the bare file names (no directory) the #line
// directives of text give its own lines. A name with a directory is not
// taken: an #include of that path would be reported under the same name.
func lineNames(text string) map[string]bool {
	out := map[string]bool{}
	for _, m := range reLine.FindAllStringSubmatch(text, -1) {
		out[m[1]] = true
	}
	return out
}

// OwnFiles returns a test for Diagnostics: a path is the program's own when
// it names src or a file under one of dirs (after cleaning, relative paths
// taken from the working directory, and after resolving symbolic links
// where the file exists).
func OwnFiles(src string, dirs ...string) func(path string) bool {
	abs := func(p string) string {
		if !filepath.IsAbs(p) {
			if wd, err := os.Getwd(); err == nil {
				p = filepath.Join(wd, p)
			}
		}
		return filepath.Clean(p)
	}
	var roots []string
	for _, d := range dirs {
		if d != "" {
			roots = append(roots, abs(d))
			if r, err := filepath.EvalSymlinks(d); err == nil {
				roots = append(roots, abs(r))
			}
		}
	}
	srcAbs := abs(src)
	under := func(p string) bool {
		if p == srcAbs || p == filepath.Clean(src) {
			return true
		}
		for _, r := range roots {
			if rel, err := filepath.Rel(r, p); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				return true
			}
		}
		return false
	}
	return func(path string) bool {
		if path == src {
			return true
		}
		p := abs(path)
		if !under(p) {
			return false
		}
		// A link under an allowed directory to a file outside it is not
		// the kernel's.
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return under(abs(r))
		}
		return true
	}
}

// Diagnostic locations, as GCC and Clang (FILE:LINE: or FILE:LINE:COL:,
// "In file included from FILE:LINE", "from FILE:LINE") and NVRTC
// (FILE(LINE): ) write them.
var (
	reLocGCC      = regexp.MustCompile(`^(?:In file included from |\s+from )?([^\s:][^:]*):(\d+)(?::\d+)?[:,]`)
	reLocNVRTC    = regexp.MustCompile(`^([^\s(][^(]*)\((\d+)\): `)
	reFileContext = regexp.MustCompile(`^([^\s:][^:]*): (?:In (?:function|member function|constructor|destructor|instantiation|lambda)|At (?:top level|global scope))`)
	// reToolLine is a line about no file: the compiler's programs speaking
	// for themselves, and the summaries at the end.
	reToolLine = regexp.MustCompile(`^(?:(?:cc1|cc1plus|collect2|ld|ld\.\w+|as|lto-wrapper|gcc|cc|clang|g\+\+|c\+\+|nvcc|ptxas)(?:-[\w.]+)?: |compilation terminated\.|\d+ errors? detected in the compilation of |\d+ (?:warnings?|errors?)(?: and \d+ (?:warnings?|errors?))? generated\.)`)
)

// Diagnostics keeps what a compiler said about the program's own files
// (own reports which those are) and replaces everything it said about any
// other file — a located diagnostic and the lines that follow it, quoting
// the file — by one line naming the file. Lines about no file ("cc1: …",
// "collect2: …", "compilation terminated.") are kept.
func Diagnostics(log string, own func(path string) bool) string {
	if log == "" {
		return log
	}
	lines := strings.SplitAfter(log, "\n")
	var b strings.Builder
	hidden := map[string]int{}
	var order []string
	foreign := "" // the file the current diagnostic is about, when not the program's
	for _, l := range lines {
		path := ""
		text := strings.TrimRight(l, "\r\n")
		if m := reLocGCC.FindStringSubmatch(text); m != nil {
			path = m[1]
		} else if m := reLocNVRTC.FindStringSubmatch(text); m != nil {
			path = m[1]
		} else if m := reFileContext.FindStringSubmatch(text); m != nil {
			path = m[1]
		}
		switch {
		case path != "":
			foreign = ""
			if !own(path) {
				foreign = filepath.Clean(path)
			}
		case reToolLine.MatchString(text):
			foreign = ""
		}
		if foreign == "" {
			b.WriteString(l)
			continue
		}
		if hidden[foreign] == 0 {
			order = append(order, foreign)
		}
		hidden[foreign]++
	}
	out := b.String()
	for _, f := range order {
		if out != "" && !strings.HasSuffix(out, "\n") {
			out += "\n"
		}
		out += fmt.Sprintf("%s: %d lines of compiler output about this file not shown (it is not the program's source or one of the kernel's headers)\n", f, hidden[f])
	}
	if !strings.HasSuffix(log, "\n") {
		out = strings.TrimSuffix(out, "\n")
	}
	return out
}

// CapLog keeps the first n bytes of s (at a line end where one is near,
// and never inside a UTF-8 sequence) and says how much was left out.
func CapLog(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	if nl := strings.LastIndexByte(s[:cut], '\n'); nl >= cut/2 {
		cut = nl + 1
	}
	return s[:cut] + fmt.Sprintf("… (%d more bytes not kept)", len(s)-cut)
}
