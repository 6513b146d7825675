package cli

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"

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
	if format != "csv" && report.Writer(format) == nil {
		return nil, fmt.Errorf("--format: want md, html, json, csv or benchfmt, got %q", format)
	}
	if format != "csv" && (o.tags != "" || o.append) {
		return nil, fmt.Errorf("--tags and --append are for --format csv")
	}
	if o.append && out == "" {
		return nil, fmt.Errorf("--append: name the CSV file to add to with --output")
	}
	if o.tags != "" {
		var err error
		if o.parsedTags, err = report.ParseTags(o.tags); err != nil {
			return nil, fmt.Errorf("--tags: %w", err)
		}
	}
	if format != "csv" {
		return report.Writer(format), nil
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
// whole, made at the first write (outpath.Lazy), so that a report refused
// before it writes (CSV columns that differ) leaves the folder as it was.
// With --append the existing file's header is read (an empty or missing
// file gets one) and the file's text goes before the new rows.
func (o *reportOutput) create(path string) (*outpath.Lazy, error) {
	f := &outpath.Lazy{Path: path, Label: "--output"}
	if o.append {
		var err error
		if o.header, f.Prefix, err = report.CSVAppend(path); err != nil {
			return nil, fmt.Errorf("--append: %w", err)
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
	base := "."
	if out != "" {
		base = filepath.Dir(out)
	}
	files, err := report.WritePlotsFor(o.plots, in, base)
	if err != nil {
		return nil, fmt.Errorf("--plots: %w", err)
	}
	return files, nil
}
