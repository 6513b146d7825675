package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/tilefit/tilefit/internal/outpath"
	"github.com/tilefit/tilefit/policy"
	"github.com/tilefit/tilefit/store"
	"github.com/tilefit/tilefit/tune"
	"github.com/tilefit/tilefit/workload"
)

const reportUsage = `Usage: tilefit report [flags]

Writes the report of the cells stored in the database: provenance, per shape
× M the reference tile, the three fastest tiles and the vendor baseline,
per-chunk totals, the parity summary, kernel resources and the failures.

Formats (--format):
  md        Markdown, tables padded for a terminal (default)
  html      one self-contained page: plots inline, sortable tables
  json      for scripts (docs/report-json.md)
  csv       CUTLASS-profiler style: a column per dimension and parameter,
            Runtime in ms, GB/s, GFLOPs; --tags k=v,... adds leading
            columns, --append adds rows to an existing --output file
  benchfmt  the Go benchmark format, one line per sample: compare two
            runs with benchstat old.txt new.txt

--plots DIR writes the figures (per-chunk bars, the ratio heat map,
GFLOP/s by M per shape) as SVG and PNG into DIR; the Markdown links them.
`

func reportVerb() verb {
	return verb{name: "report", summary: "write the report of a database (Markdown, HTML, JSON, CSV, benchfmt, plots)", usage: reportUsage,
		run: func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
			fs := newFlags("report", reportUsage, stdout)
			db := fs.String("db", "tilefit.db", "database: a SQLite file or a postgres:// URL")
			format := fs.String("format", "md", "md, html, json, csv or benchfmt")
			out := fs.String("output", "", "file to write the report to (default stdout)")
			deprecatedFlag(fs.FlagSet, stderr, "out", "output")
			wl := fs.String("workload", "", "restrict to a preset or workload file's shapes and M (and take calls from it)")
			be := fs.String("backend", "", "only results of this backend")
			fam := fs.String("family", "", "only results of this family")
			polFile := fs.String("policy", "", "append this policy's decision table (tilefit select; --format md only)")
			var ro reportOutput
			ro.flags(fs)
			if err := parse(fs, args); err != nil {
				return err
			}
			if fs.NArg() > 0 {
				return fmt.Errorf("unexpected arguments %q", fs.Args())
			}
			write, err := ro.writer(*format, *out)
			if err != nil {
				return err
			}
			var pol *policy.Policy
			if *polFile != "" {
				if *format != "md" {
					return fmt.Errorf("--policy: the decision table is Markdown; use --format md")
				}
				p, _, err := readPolicy(ctx, *polFile)
				if err != nil {
					return fmt.Errorf("--policy: %w", err)
				}
				pol = &p
			}
			if *out != "" {
				// Refused before the database is opened.
				if di, err := os.Stat(filepath.Dir(*out)); err != nil || !di.IsDir() {
					return fmt.Errorf("--output: directory %s does not exist", filepath.Dir(*out))
				}
			}
			// No output may land on what the report reads (issue 18).
			prot := []outpath.Protected{outpath.Database(*db), outpath.Input("the policy file", *polFile), outpath.Input("the workload file", *wl)}
			if err := outpath.Check("--output", *out, prot...); err != nil {
				return err
			}
			if err := outpath.Check("--plots", ro.plots, prot...); err != nil {
				return err
			}
			var w *workload.Workload
			if *wl != "" {
				x, err := workload.OpenContext(ctx, *wl, workload.Options{})
				if err != nil {
					return err
				}
				w = &x
			}
			st, err := store.OpenReadOnly(ctx, *db)
			if err != nil {
				return err
			}
			defer st.Close()
			in, note, err := tune.LoadReport(ctx, st, store.Filter{Backend: *be, Family: *fam}, w, registryFrom(ctx))
			if err != nil {
				return err
			}
			if note != "" {
				fmt.Fprintln(stderr, note)
			}
			if in.Plots, err = ro.writePlots(in, *out); err != nil {
				return err
			}
			dst := stdout
			var file *outpath.Lazy // the --output file, renamed into place when whole
			if *out != "" {
				f, err := ro.create(*out)
				if err != nil {
					return err // named --output or --append
				}
				defer f.Abort()
				dst, file = f, f
			}
			if err := write(dst, in); err != nil {
				return err
			}
			if pol != nil {
				fmt.Fprintln(dst)
				if err := policy.Markdown(dst, *pol); err != nil {
					return err
				}
			}
			if file != nil {
				if err := file.Commit(); err != nil {
					return fmt.Errorf("--output: %w", err)
				}
			}
			return nil
		}}
}
