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
// unchanged; lines that are not tables are kept as they are.
func alignTables(text string) string {
	lines := strings.Split(text, "\n")
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
