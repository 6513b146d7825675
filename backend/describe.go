package backend

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

// WriteDevice writes d as tilefit devices lists it: name, ordinal and
// UUID, arch, compiler, flags, driver, memory and its properties.
func WriteDevice(w io.Writer, d Device) {
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
	WriteProps(w, "  ", d.Props)
}

// WriteWarnings writes what a device says is wrong with it (Props ending
// "_warning", e.g. the CPU's openblas_warning when OpenBLAS runs kernels far
// below the CPU), one "warning: BACKEND: …" line each, in key order.
func WriteWarnings(w io.Writer, d Device) {
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

// WriteProps writes props, one "PREFIXkey = value" line each, in key
// order.
func WriteProps(w io.Writer, prefix string, props map[string]string) {
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(w, "%s%s = %s\n", prefix, k, props[k])
	}
}
