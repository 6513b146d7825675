package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/tilefit/tilefit/kernel"
	"github.com/tilefit/tilefit/report"
	"github.com/tilefit/tilefit/store"
	"github.com/tilefit/tilefit/tune"
)

const serveUsage = `Usage: tilefit serve [flags]

Shows the runs stored in the database in a browser: "/" lists them (one per
provenance), "/run/KEY" is the HTML report of one, "/all" of every run. It
only reads the database (a sweep may write to it meanwhile: reload the page)
and listens on 127.0.0.1 only — the results are not for the network, and
there is no authentication. Ctrl-C stops it.
`

// serveHost is the only host serve listens on.
const serveHost = "127.0.0.1"

func serveVerb() verb {
	return verb{name: "serve", summary: "show the stored runs in a browser (127.0.0.1 only, read-only)", usage: serveUsage,
		run: func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
			fs := newFlags("serve", serveUsage, stdout)
			db := fs.String("db", "tilefit.db", "SQLite database file")
			addr := fs.String("addr", serveHost+":8080", "address to listen on: 127.0.0.1:PORT (port 0 picks a free one)")
			if err := parse(fs, args); err != nil {
				return err
			}
			if fs.NArg() > 0 {
				return fmt.Errorf("unexpected argument %q (see: tilefit help serve)", fs.Arg(0))
			}
			host, port, err := net.SplitHostPort(*addr)
			if err != nil {
				return fmt.Errorf("--addr: want %s:PORT, got %q", serveHost, *addr)
			}
			if host != serveHost {
				return fmt.Errorf("--addr: serve listens on %s only (the results are not for the network, and there is no authentication); got host %q", serveHost, host)
			}
			st, err := store.OpenReadOnly(ctx, *db)
			if err != nil {
				return err
			}
			defer st.Close()
			var lc net.ListenConfig
			ln, err := lc.Listen(ctx, "tcp", net.JoinHostPort(host, port))
			if err != nil {
				return fmt.Errorf("--addr: %w", err)
			}
			srv := &http.Server{Handler: serveHandler(st, registryFrom(ctx), stderr), ReadHeaderTimeout: 10 * time.Second}
			fmt.Fprintf(stdout, "tilefit serve: http://%s/ (database %s, read-only; Ctrl-C stops)\n", ln.Addr(), *db)
			done := make(chan error, 1)
			go func() { done <- srv.Serve(ln) }()
			select {
			case err := <-done:
				return fmt.Errorf("serve: %w", err)
			case <-ctx.Done():
			}
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			srv.Shutdown(sctx)
			if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
				return fmt.Errorf("serve: %w", err)
			}
			fmt.Fprintln(stdout, "tilefit serve: stopped")
			return nil
		}}
}

// serveHandler answers GET (and HEAD) requests for the index, one run and
// every run; it never writes to st. reg derives the numerics classes of an
// old database's candidates (tune.LoadReport), which notes is told once.
func serveHandler(st *store.Store, reg *kernel.Registry, notes io.Writer) http.Handler {
	mux := http.NewServeMux()
	page := func(w http.ResponseWriter, r *http.Request, render func(io.Writer) error) {
		var b bytes.Buffer
		if err := render(&b); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		// The page carries its own style and script and loads nothing.
		w.Header().Set("Content-Security-Policy", "default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Write(b.Bytes())
	}
	var noted sync.Once // the note on classes of an old database, said once
	input := func(r *http.Request, f store.Filter) (report.Input, error) {
		in, note, err := tune.LoadReport(r.Context(), st, f, nil, reg)
		if note != "" {
			noted.Do(func() { fmt.Fprintln(notes, note) })
		}
		in.Title = "tilefit: " + st.Path()
		return in, err
	}
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		page(w, r, func(out io.Writer) error {
			in, err := input(r, store.Filter{})
			if err != nil {
				return err
			}
			return report.HTMLIndex(out, in, func(key string) string { return "run/" + key })
		})
	})
	mux.HandleFunc("GET /all", func(w http.ResponseWriter, r *http.Request) {
		page(w, r, func(out io.Writer) error {
			in, err := input(r, store.Filter{})
			if err != nil {
				return err
			}
			return report.HTML(out, in)
		})
	})
	mux.HandleFunc("GET /run/{key}", func(w http.ResponseWriter, r *http.Request) {
		key := r.PathValue("key")
		in, err := input(r, store.Filter{ProvKey: key})
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		if len(in.Cells) == 0 {
			http.Error(w, fmt.Sprintf("no run with provenance key %q in %s", key, st.Path()), http.StatusNotFound)
			return
		}
		in.Title = "tilefit run " + key
		page(w, r, func(out io.Writer) error { return report.HTML(out, in) })
	})
	return mux
}
