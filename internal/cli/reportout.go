package cli

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/tilefit/tilefit/internal/outpath"
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

// create starts the --output file: a temporary file renamed over it when
// whole (see outpath), made at the first write, so that a report refused
// before it writes (CSV columns that differ) leaves the folder as it was.
// With --append the existing file's header is read (an empty or missing
// file gets one) and the file's text goes before the new rows.
func (o *reportOutput) create(path string) (*reportFile, error) {
	rf := &reportFile{path: path}
	if !o.append {
		return rf, nil
	}
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("--append: %w", err)
	}
	header, err := csv.NewReader(bytes.NewReader(old)).Read()
	switch {
	case err == io.EOF:
		// Empty: write the header as for a new file.
	case err != nil:
		return nil, fmt.Errorf("--append: %s is not a CSV file with a header: %w", path, err)
	default:
		o.header = header
		// The rows go after what is there; a last line without its
		// newline gets one first.
		if old[len(old)-1] != '\n' {
			old = append(old, '\n')
		}
		rf.prefix = old
	}
	return rf, nil
}

// A reportFile is the --output file being written (reportOutput.create).
type reportFile struct {
	path   string
	prefix []byte
	f      *outpath.File
}

func (r *reportFile) Write(p []byte) (int, error) {
	if r.f == nil {
		if err := r.open(); err != nil {
			return 0, err
		}
	}
	return r.f.Write(p)
}

func (r *reportFile) open() error {
	f, err := outpath.Create(r.path, 0o644)
	if err != nil {
		return fmt.Errorf("--output: %w", err)
	}
	if _, err := f.Write(r.prefix); err != nil {
		f.Abort()
		return fmt.Errorf("--output: %w", err)
	}
	r.f = f
	return nil
}

// Commit puts the file in place (an empty report too).
func (r *reportFile) Commit() error {
	if r.f == nil {
		if err := r.open(); err != nil {
			return err
		}
	}
	return r.f.Commit()
}

// Abort drops what was written; the old file stays.
func (r *reportFile) Abort() {
	if r.f != nil {
		r.f.Abort()
	}
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
