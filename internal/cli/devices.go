package cli

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/tilefit/tilefit/backend"
	"github.com/tilefit/tilefit/store"
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
			bes := backendsFrom(ctx)
			if *only != "" {
				if err := bes.Check(*only); err != nil {
					return err
				}
			}
			var st *store.Store
			for _, name := range bes.Names() {
				if *only != "" && name != *only {
					continue
				}
				b, err := bes.Open(ctx, name, 0)
				if err != nil {
					fmt.Fprintf(stdout, "%s: not available: %v\n", name, err)
					continue
				}
				d, err := b.Device(ctx)
				if err != nil {
					fmt.Fprintf(stdout, "%s: not available: %v\n", name, err)
					b.Close()
					continue
				}
				printDevice(stdout, d)
				if c, ok := b.(backend.Ceilings); ok && *measure {
					ceil, err := c.Ceilings(ctx)
					if err != nil {
						fmt.Fprintf(stdout, "  ceilings: %v\n", err)
					} else {
						printProps(stdout, "  measured ", ceil)
						if st == nil {
							if st, err = store.Open(ctx, *db); err != nil {
								b.Close()
								return err
							}
							defer st.Close()
						}
						rec := store.DeviceRecord{Backend: d.Backend, Name: d.Name, Props: ceil, Measured: time.Now().UTC()}
						if err := st.SaveDevice(ctx, rec); err != nil {
							b.Close()
							return err
						}
					}
				}
				b.Close()
				printWarnings(stderr, d)
				// The other devices of the backend (GPUs of the host).
				for i := 1; i < d.Count; i++ {
					bi, err := bes.Open(ctx, name, i)
					if err != nil {
						fmt.Fprintf(stdout, "%s device %d: not available: %v\n", name, i, err)
						continue
					}
					di, err := bi.Device(ctx)
					bi.Close()
					if err != nil {
						fmt.Fprintf(stdout, "%s device %d: not available: %v\n", name, i, err)
						continue
					}
					printDevice(stdout, di)
					printWarnings(stderr, di)
				}
			}
			return nil
		}}
}

func printDevice(w io.Writer, d backend.Device) {
	fmt.Fprintf(w, "%s: %s\n", d.Backend, d.Name)
	if d.UUID != "" {
		fmt.Fprintf(w, "  device   %d of %d, %s\n", d.Ordinal, max(d.Count, 1), d.UUID)
	}
	fmt.Fprintf(w, "  arch     %s\n  compiler %s\n  flags    %s\n", d.Arch, d.Compiler, d.Flags)
	if d.Driver != "" {
		fmt.Fprintf(w, "  driver   %s\n", d.Driver)
	}
	if d.Memory > 0 {
		fmt.Fprintf(w, "  memory   %.1f GiB\n", float64(d.Memory)/(1<<30))
	}
	printProps(w, "  ", d.Props)
}

// printWarnings writes what a device says is wrong with it (Props ending
// "_warning", e.g. the CPU's openblas_warning when OpenBLAS runs kernels far
// below the CPU), one "warning: BACKEND: …" line each, in key order.
func printWarnings(w io.Writer, d backend.Device) {
	keys := make([]string, 0, len(d.Props))
	for k := range d.Props {
		if strings.HasSuffix(k, "_warning") && d.Props[k] != "" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(w, "warning: %s: %s\n", d.Backend, d.Props[k])
	}
}

func printProps(w io.Writer, prefix string, props map[string]string) {
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(w, "%s%s = %s\n", prefix, k, props[k])
	}
}
