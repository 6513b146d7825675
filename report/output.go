package report

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Writer returns the writer of format: md, html, json or benchfmt (csv
// takes options: CSVWith); nil for another format.
func Writer(format string) func(io.Writer, Input) error {
	return map[string]func(io.Writer, Input) error{
		"md": Markdown, "html": HTML, "json": JSON, "benchfmt": Benchfmt,
	}[format]
}

// ParseTags parses CSV tags "k=v,k2=v2" (keys trimmed and distinct,
// values trimmed).
func ParseTags(s string) ([]Tag, error) {
	var tags []Tag
	seen := map[string]bool{}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(kv, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, fmt.Errorf("want k=v,k2=v2, got %q", kv)
		}
		if seen[k] {
			return nil, fmt.Errorf("%q given twice", k)
		}
		seen[k] = true
		tags = append(tags, Tag{Key: k, Value: strings.TrimSpace(v)})
	}
	return tags, nil
}

// CSVAppend reads the CSV file at path that rows are to be appended to:
// its header (CSVOptions.Header; none for a missing or empty file, which
// gets one) and its text, which goes before the new rows (with a newline
// added when its last line has none).
func CSVAppend(path string) (header []string, prefix []byte, err error) {
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, nil, err
	}
	header, err = csv.NewReader(bytes.NewReader(old)).Read()
	switch {
	case err == io.EOF:
		return nil, nil, nil // empty: the header is written as for a new file
	case err != nil:
		return nil, nil, fmt.Errorf("%s is not a CSV file with a header: %w", path, err)
	}
	if old[len(old)-1] != '\n' {
		old = append(old, '\n')
	}
	return header, old, nil
}

// WritePlotsFor writes the figures of in into dir (WritePlots) and returns
// them with paths relative to base, the folder of the report that links
// them (a path that cannot be made relative is kept).
func WritePlotsFor(dir string, in Input, base string) ([]PlotFile, error) {
	files, err := WritePlots(dir, in)
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		for format, p := range f.Paths {
			if rel, err := relPath(base, p); err == nil {
				f.Paths[format] = rel
			}
		}
	}
	return files, nil
}

// relPath is target relative to base, both made absolute first.
func relPath(base, target string) (string, error) {
	ab, err := filepath.Abs(base)
	if err != nil {
		return "", err
	}
	at, err := filepath.Abs(target)
	if err != nil {
		return "", err
	}
	return filepath.Rel(ab, at)
}
