package cli

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/tilefit/tilefit/report"
)

// reportOutput holds the report verb's output flags beyond --format and
// --output: the plots folder and the CSV tags and append mode.
type reportOutput struct {
	plots  string
	tags   string
	append bool

	parsedTags []report.Tag
	header     []string // the existing file's header, with --append
}

func (o *reportOutput) flags(fs *flagSet) {
	fs.StringVar(&o.plots, "plots", "", "write the figures as SVG and PNG into this folder (the Markdown links them)")
	fs.StringVar(&o.tags, "tags", "", "CSV: leading columns of the same value in every row, as k=v,k2=v2")
	fs.BoolVar(&o.append, "append", false, "CSV: add rows to the --output file (its header must hold every column) instead of replacing it")
}

// writer checks the output flags against the format and returns the
// report writer.
func (o *reportOutput) writer(format, out string) (func(io.Writer, report.Input) error, error) {
	plain := map[string]func(io.Writer, report.Input) error{
		"md": report.Markdown, "html": report.HTML, "json": report.JSON, "benchfmt": report.Benchfmt,
	}
	if format != "csv" && plain[format] == nil {
		return nil, fmt.Errorf("--format: want md, html, json, csv or benchfmt, got %q", format)
	}
	if format != "csv" && (o.tags != "" || o.append) {
		return nil, fmt.Errorf("--tags and --append are for --format csv")
	}
	if o.append && out == "" {
		return nil, fmt.Errorf("--append: name the CSV file to add to with --output")
	}
	if o.tags != "" {
		seen := map[string]bool{}
		for _, kv := range strings.Split(o.tags, ",") {
			k, v, ok := strings.Cut(kv, "=")
			k = strings.TrimSpace(k)
			if !ok || k == "" {
				return nil, fmt.Errorf("--tags: want k=v,k2=v2, got %q", kv)
			}
			if seen[k] {
				return nil, fmt.Errorf("--tags: %q given twice", k)
			}
			seen[k] = true
			o.parsedTags = append(o.parsedTags, report.Tag{Key: k, Value: strings.TrimSpace(v)})
		}
	}
	if format != "csv" {
		return plain[format], nil
	}
	return func(w io.Writer, in report.Input) error {
		err := report.CSVWith(w, in, report.CSVOptions{Tags: o.parsedTags, Header: o.header})
		switch {
		case errors.Is(err, report.ErrCSVColumns):
			return fmt.Errorf("--append: %w; write a new file or drop --append", err)
		case errors.Is(err, report.ErrCSVTag):
			return fmt.Errorf("--tags: %w", err)
		}
		return err
	}, nil
}

// create opens the --output file: replaced, or with --append opened for
// appending after its header (an empty or missing file gets one).
func (o *reportOutput) create(path string) (*os.File, error) {
	if !o.append {
		f, err := os.Create(path)
		if err != nil {
			return nil, fmt.Errorf("--output: %w", err)
		}
		return f, nil
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("--output: %w", err)
	}
	header, err := csv.NewReader(f).Read()
	switch {
	case err == io.EOF:
		// Empty: write the header as for a new file.
	case err != nil:
		f.Close()
		return nil, fmt.Errorf("--append: %s is not a CSV file with a header: %w", path, err)
	default:
		o.header = header
	}
	if o.header != nil {
		// The rows go after what is there; a last line without its
		// newline gets one first.
		end, err := f.Seek(-1, io.SeekEnd)
		if err == nil {
			last := make([]byte, 1)
			if _, err = f.ReadAt(last, end); err == nil && last[0] != '\n' {
				_, err = f.WriteAt([]byte("\n"), end+1)
			}
		}
		if err == nil {
			_, err = f.Seek(0, io.SeekEnd)
		}
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("--append: %s: %w", path, err)
		}
	}
	return f, nil
}

// writePlots writes the figures into --plots (when given) and returns
// them with paths relative to the report's folder (the --output file's, or
// the working directory for stdout), as the Markdown links them.
func (o *reportOutput) writePlots(in report.Input, out string) ([]report.PlotFile, error) {
	if o.plots == "" {
		return nil, nil
	}
	files, err := report.WritePlots(o.plots, in)
	if err != nil {
		return nil, fmt.Errorf("--plots: %w", err)
	}
	base := "."
	if out != "" {
		base = filepath.Dir(out)
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
