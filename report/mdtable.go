package report

import (
	"regexp"
	"strings"

	"github.com/rivo/uniseg"
)

// separatorRow matches a Markdown table's delimiter row: | --- | ---: |.
var separatorRow = regexp.MustCompile(`^\|(\s*:?-+:?\s*\|)+\s*$`)

// alignTables pads every Markdown table of text so that its columns line up
// in a terminal: each cell padded to its column's display width (wide and
// combining characters counted as a terminal shows them), numbers
// right-aligned where the delimiter row says so. The rendered Markdown is
// unchanged; lines that are not tables are kept as they are, except that
// in every line raw HTML is neutralised (escapeTags): a string from the
// database ("<script>" as a device name) is shown as text, never markup.
func alignTables(text string) string {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = escapeTags(l)
	}
	for i := 0; i+1 < len(lines); i++ {
		if !strings.HasPrefix(lines[i], "|") || !separatorRow.MatchString(lines[i+1]) {
			continue
		}
		end := i + 2
		for end < len(lines) && strings.HasPrefix(lines[end], "|") {
			end++
		}
		alignTable(lines[i:end])
		i = end - 1
	}
	return strings.Join(lines, "\n")
}

// alignTable rewrites the lines of one table (header, delimiter, rows) in
// place.
func alignTable(lines []string) {
	rows := make([][]string, len(lines))
	cols := 0
	for i, l := range lines {
		rows[i] = splitRow(l)
		cols = max(cols, len(rows[i]))
	}
	align := make([]byte, cols) // 'l', 'r' or 'c'
	for j := range align {
		align[j] = 'l'
		if j < len(rows[1]) {
			d := rows[1][j]
			switch {
			case strings.HasPrefix(d, ":") && strings.HasSuffix(d, ":"):
				align[j] = 'c'
			case strings.HasSuffix(d, ":"):
				align[j] = 'r'
			}
		}
	}
	width := make([]int, cols)
	for i, r := range rows {
		if i == 1 {
			continue
		}
		for j, c := range r {
			width[j] = max(width[j], uniseg.StringWidth(c))
		}
	}
	for j := range width {
		width[j] = max(width[j], 3)
	}
	for i, r := range rows {
		var b strings.Builder
		b.WriteString("|")
		for j := 0; j < cols; j++ {
			c := ""
			if j < len(r) {
				c = r[j]
			}
			b.WriteString(" ")
			if i == 1 {
				b.WriteString(delimiter(align[j], width[j]))
			} else {
				b.WriteString(pad(c, width[j], align[j]))
			}
			b.WriteString(" |")
		}
		lines[i] = b.String()
	}
}

// splitRow splits a table line into its trimmed cells, on the pipes that
// are not escaped (\|).
func splitRow(line string) []string {
	line = strings.TrimSpace(line)
	line = strings.TrimPrefix(line, "|")
	var cells []string
	var cur strings.Builder
	for i := 0; i < len(line); i++ {
		switch {
		case line[i] == '\\' && i+1 < len(line) && line[i+1] == '|':
			cur.WriteString(`\|`)
			i++
		case line[i] == '|':
			cells = append(cells, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(line[i])
		}
	}
	if rest := strings.TrimSpace(cur.String()); rest != "" {
		cells = append(cells, rest)
	}
	return cells
}

func delimiter(align byte, w int) string {
	switch align {
	case 'r':
		return strings.Repeat("-", w-1) + ":"
	case 'c':
		return ":" + strings.Repeat("-", w-2) + ":"
	}
	return strings.Repeat("-", w)
}

func pad(s string, w int, align byte) string {
	n := w - uniseg.StringWidth(s)
	if n <= 0 {
		return s
	}
	switch align {
	case 'r':
		return strings.Repeat(" ", n) + s
	case 'c':
		return strings.Repeat(" ", n/2) + s + strings.Repeat(" ", n-n/2)
	}
	return s + strings.Repeat(" ", n)
}

// escapeTags writes the '<' that would open raw HTML in Markdown (before a
// letter, '/', '!' or '?': a tag, a comment, a declaration) as "&lt;",
// outside code spans (where Markdown shows text as it is); "r < m" is
// left alone.
func escapeTags(line string) string {
	if !strings.Contains(line, "<") {
		return line
	}
	var b strings.Builder
	for i := 0; i < len(line); {
		if line[i] == '`' {
			n := 0
			for i+n < len(line) && line[i+n] == '`' {
				n++
			}
			if end := closingTicks(line, i+n, n); end >= 0 {
				b.WriteString(line[i : end+n])
				i = end + n
				continue
			}
			b.WriteString(line[i : i+n])
			i += n
			continue
		}
		if line[i] == '<' && i+1 < len(line) {
			c := line[i+1]
			if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '/' || c == '!' || c == '?' {
				b.WriteString("&lt;")
				i++
				continue
			}
		}
		b.WriteByte(line[i])
		i++
	}
	return b.String()
}

// closingTicks returns the index of the next run of exactly n backticks in
// s from i (the end of a code span), or -1.
func closingTicks(s string, i, n int) int {
	for i < len(s) {
		if s[i] != '`' {
			i++
			continue
		}
		j := i
		for j < len(s) && s[j] == '`' {
			j++
		}
		if j-i == n {
			return i
		}
		i = j
	}
	return -1
}
