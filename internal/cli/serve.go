package cli

import (
	"context"
	"fmt"
	"io"
	"net"

	"github.com/tilefit/tilefit/internal/serve"
	"github.com/tilefit/tilefit/store"
)

const serveUsage = `Usage: tilefit serve [flags]

Shows the runs stored in the database in a browser: "/" lists them (one per
provenance), "/run/KEY" is the HTML report of one, "/all" of every run. It
only reads the database (a sweep may write to it meanwhile: reload the page)
and listens on 127.0.0.1 only — the results are not for the network, and
there is no authentication. Ctrl-C stops it.
`

func serveVerb() verb {
	return verb{name: "serve", summary: "show the stored runs in a browser (127.0.0.1 only, read-only)", usage: serveUsage,
		run: func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
			fs := newFlags("serve", serveUsage, stdout)
			db := fs.String("db", "tilefit.db", "SQLite database file")
			addr := fs.String("addr", serve.Host+":8080", "address to listen on: 127.0.0.1:PORT (port 0 picks a free one)")
			if err := parse(fs, args); err != nil {
				return err
			}
			if fs.NArg() > 0 {
				return fmt.Errorf("unexpected argument %q (see: tilefit help serve)", fs.Arg(0))
			}
			host, port, err := serve.CheckAddr(*addr)
			if err != nil {
				return err
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
			fmt.Fprintf(stdout, "tilefit serve: http://%s/ (database %s, read-only; Ctrl-C stops)\n", ln.Addr(), *db)
			if err := serve.Run(ctx, ln, serve.Handler(st, registryFrom(ctx), stderr)); err != nil {
				return err
			}
			fmt.Fprintln(stdout, "tilefit serve: stopped")
			return nil
		}}
}
