package cli

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/tilefit/tilefit/internal/outpath"
	"github.com/tilefit/tilefit/store"
)

const dbUsage = `Usage: tilefit db copy --from DB --to DB

Moves runs between databases: a SQLite file and a PostgreSQL server
(postgres://USER@HOST/DB; ?search_path=SCHEMA picks a schema), either way.
copy copies every provenance, cell, candidate, sample and device record of
--from into --to (created when missing), keeping each cell's device and
provenance key. It is idempotent: a cell --to already holds is not copied
again, so copying twice, or back, changes nothing, and an interrupted copy
goes on when run again. --from is only read. Leases of running sweeps are
not copied.
`

func dbVerb() verb {
	return verb{name: "db", summary: "copy runs between a SQLite file and a PostgreSQL server", usage: dbUsage,
		run: func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
			fs := newFlags("db", dbUsage, stdout)
			from := fs.String("from", "", "database to copy from: a SQLite file or a postgres:// URL")
			to := fs.String("to", "", "database to copy into (created when missing)")
			if err := parse(fs, args); err != nil {
				return err
			}
			switch {
			case fs.NArg() == 0:
				return errors.New("name an action: tilefit db copy --from DB --to DB")
			case fs.Arg(0) != "copy":
				return fmt.Errorf("unknown action %q (known: copy)", fs.Arg(0))
			case fs.NArg() > 1:
				return fmt.Errorf("copy: unexpected arguments %q", fs.Args()[1:])
			case *from == "" || *to == "":
				return errors.New("copy needs both --from DB and --to DB")
			case store.SameDatabase(*from, *to):
				return fmt.Errorf("copy: --from and --to name the same database (%s)", *from)
			}
			if err := outpath.Check("--to", *to, outpath.Protected{What: "the database --from", Path: *from, Sides: true}); err != nil {
				return err
			}
			src, err := store.OpenReadOnly(ctx, *from)
			if err != nil {
				return err
			}
			defer src.Close()
			dst, err := store.OpenLocked(ctx, *to)
			if err != nil {
				return err
			}
			defer dst.Close()
			st, err := store.Copy(ctx, dst, src)
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "copied %d cells (%d candidates, %d samples) and %d device records from %s to %s; %d cells were there already\n",
				st.Cells, st.Candidates, st.Samples, st.Devices, src.Path(), dst.Path(), st.Present)
			return nil
		}}
}
