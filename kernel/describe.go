package kernel

import (
	"fmt"
	"io"
	"strings"
)

// WriteFamilies lists the families of r on backend ("": every backend), as
// tilefit families prints them: each with its operator, vendor baselines,
// tile name, parameter spaces, reference tile and default sweep.
func (r *Registry) WriteFamilies(w io.Writer, backend string) {
	for _, f := range r.Families() {
		if backend != "" && f.Backend != backend {
			continue
		}
		fmt.Fprintf(w, "%s (backend %s, source %s)\n  %s\n", f.Name, f.Backend, f.SourceFile, f.Doc)
		fmt.Fprintf(w, "  operator: %s\n    %s\n", f.Operator.Signature(), f.Operator.Doc)
		var bls []string
		for _, b := range r.Baselines(f.Backend, f.Operator.Name) {
			bls = append(bls, b.Name)
		}
		if len(bls) > 0 {
			fmt.Fprintf(w, "  vendor baselines: %s\n", strings.Join(bls, ", "))
		}
		fmt.Fprintf(w, "  tile name: %s; reference tile %s\n", strings.Join(f.Positional, "_"), f.Reference)
		for _, p := range f.Params {
			fmt.Fprintf(w, "  %-8s values %-24s sweep %-20s %s\n", p.Name, ints(p.Values), ints(p.Sweep), p.Doc)
		}
		tiles := f.Tiles()
		fmt.Fprintf(w, "  default sweep: %d tiles: %s\n\n", len(tiles), strings.Join(tiles, " "))
	}
}

func ints(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ",")
}
