package cli

import (
	"context"
	"fmt"
	"io"
)

const familiesUsage = `Usage: tilefit families [--backend B]
       tilefit families source NAME [--backend B]

Lists the kernel families with the operator each computes (its dimensions,
operands with element type and shape, and formula), their parameter spaces,
default sweep and reference tile, and the vendor baselines of each
operator; "source NAME" prints a family's source so that you can copy and
edit it, then tune the edited revision with "tilefit sweep --source FILE"
(same parameters) or compare it with "tilefit ab --a source:... --b source:...".
The source printed is the whole text the backend compiles: for a built-in
family that shares helpers with others (gemm_f16, gemm_stream, the fused
families) the shared files come first, each after a #line directive naming
it, then the family's own file; an edited copy given to --source or source:
replaces all of that text, so it compiles on its own.
`

func familiesVerb() verb {
	return verb{name: "families", summary: "list kernel families, or print a family's source", usage: familiesUsage,
		run: func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
			fs := newFlags("families", familiesUsage, stdout)
			be := fs.String("backend", "", "only this backend's families (source: default cpu)")
			if err := parse(fs, args); err != nil {
				return err
			}
			if *be != "" {
				// An unknown backend is refused, not listed as no families.
				if err := backendsFrom(ctx).Check(*be); err != nil {
					return fmt.Errorf("--backend: %w", err)
				}
			}
			rest := fs.Args()
			if len(rest) > 0 && rest[0] == "source" {
				sub := newFlags("families source", familiesUsage, stdout)
				sbe := sub.String("backend", *be, "backend")
				if err := parse(sub, rest[1:]); err != nil {
					return err
				}
				if sub.NArg() != 1 {
					return fmt.Errorf("source: want one family name, got %d arguments", sub.NArg())
				}
				b := *sbe
				if b == "" {
					b = "cpu"
				}
				f, err := registryFrom(ctx).Lookup(b, sub.Arg(0))
				if err != nil {
					return err
				}
				_, err = io.WriteString(stdout, f.Source)
				return err
			}
			if len(rest) > 0 {
				return fmt.Errorf("unexpected arguments %q", rest)
			}
			registryFrom(ctx).WriteFamilies(stdout, *be)
			return nil
		}}
}
