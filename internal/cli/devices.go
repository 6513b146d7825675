package cli

import (
	"context"
	"io"

	"github.com/tilefit/tilefit/tune"
)

const devicesUsage = `Usage: tilefit devices [flags]

Lists the devices of every backend (cpu, cuda) — every GPU of the host,
with its ordinal (--device N) and UUID — with their compiler and driver; a
backend that is not available says why. With --measure (default
on), backends that can measure their ceilings (cuda: device-to-device copy
bandwidth and cuBLAS fp16 matmul rate on random data) do, and the readings
are stored in the database for reports. A device that warns about itself
(cpu: OpenBLAS chose kernels far weaker than the CPU, so its vendor column
understates OpenBLAS) lists the warning among its properties and again on
stderr.
`

func devicesVerb() verb {
	return verb{name: "devices", summary: "list devices and measure their ceilings", usage: devicesUsage,
		run: func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
			fs := newFlags("devices", devicesUsage, stdout)
			only := fs.String("backend", "", "only this backend")
			measure := fs.Bool("measure", true, "measure ceilings where the backend can, and store them")
			db := fs.String("db", "tilefit.db", "database for the measured ceilings (a SQLite file or a postgres:// URL)")
			if err := parse(fs, args); err != nil {
				return err
			}
			return tune.ListDevices(ctx, backendsFrom(ctx), tune.DevicesOptions{Only: *only, Measure: *measure, DB: *db}, stdout, stderr)
		}}
}
