package cli

import (
	"context"
	"fmt"
	"io"
	"runtime/debug"

	"github.com/tilefit/tilefit/internal/version"
)

const versionUsage = `Usage: tilefit version

Prints tilefit's module version, the VCS revision it was built from (with
its time, and "modified" when the working tree had uncommitted changes), and
the Go toolchain. "tilefit --version" prints the same.
`

func versionVerb() verb {
	return verb{name: "version", summary: "print the version and VCS revision of this binary", usage: versionUsage,
		run: func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
			fs := newFlags("version", versionUsage, stdout)
			if err := parse(fs, args); err != nil {
				return err
			}
			if fs.NArg() > 0 {
				return fmt.Errorf("unexpected arguments %q", fs.Args())
			}
			bi, ok := debug.ReadBuildInfo()
			_, err := io.WriteString(stdout, version.Text(bi, ok))
			return err
		}}
}
