package tune

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/tilefit/tilefit/backend"
	"github.com/tilefit/tilefit/store"
)

// DevicesOptions choose what ListDevices lists and measures.
type DevicesOptions struct {
	// Only lists this backend alone ("": every backend).
	Only string
	// Measure has the backends that can measure their ceilings
	// (backend.Ceilings) do, and stores them in database DB (opened at
	// the first reading).
	Measure bool
	DB      string
}

// ListDevices lists on out the devices of the backends of bes — every
// device of each, the first with its measured ceilings — and says on warn
// what a device warns about itself; a backend that does not open here says
// why on out.
func ListDevices(ctx context.Context, bes *backend.Registry, o DevicesOptions, out, warn io.Writer) error {
	if o.Only != "" {
		if err := bes.Check(o.Only); err != nil {
			return err
		}
	}
	var st *store.Store
	for _, name := range bes.Names() {
		if o.Only != "" && name != o.Only {
			continue
		}
		b, err := bes.Open(ctx, name, 0)
		if err != nil {
			fmt.Fprintf(out, "%s: not available: %v\n", name, err)
			continue
		}
		d, err := b.Device(ctx)
		if err != nil {
			fmt.Fprintf(out, "%s: not available: %v\n", name, err)
			b.Close()
			continue
		}
		backend.WriteDevice(out, d)
		if c, ok := b.(backend.Ceilings); ok && o.Measure {
			ceil, err := c.Ceilings(ctx)
			if err != nil {
				fmt.Fprintf(out, "  ceilings: %v\n", err)
			} else {
				backend.WriteProps(out, "  measured ", ceil)
				if st == nil {
					if st, err = store.Open(ctx, o.DB); err != nil {
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
		backend.WriteWarnings(warn, d)
		// The other devices of the backend (GPUs of the host).
		for i := 1; i < d.Count; i++ {
			bi, err := bes.Open(ctx, name, i)
			if err != nil {
				fmt.Fprintf(out, "%s device %d: not available: %v\n", name, i, err)
				continue
			}
			di, err := bi.Device(ctx)
			bi.Close()
			if err != nil {
				fmt.Fprintf(out, "%s device %d: not available: %v\n", name, i, err)
				continue
			}
			backend.WriteDevice(out, di)
			backend.WriteWarnings(warn, di)
		}
	}
	return nil
}
