package workload

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// FuzzParse checks that Parse never panics, that every failure is a
// *ValidationError with at least one well-formed problem, and that every
// success validates and survives a round trip through the file format.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"name: x\nm: [256, 1983]\nshapes:\n  - {name: Wqkv, n: 10240, k: 2560, calls: 37}\n",
		"m: 7\nshapes: [{name: a, n: 1, k: 1}]\n",
		"x-a: &a {n: 1, k: 2}\nm: [1]\nshapes: [{<<: *a, name: b}, {<<: [*a], name: c, k: 3}]\n",
		"m: [1\n",
		"\tm: 1",
		"m: [1]\nshapes: [&a {<<: *a}]\n",
		"m: [0x10, 1_0, -1]\nshapes: [{name: a, n: 99999999999999999999, k: 1}]\n",
		"---\n---\n",
		"",
	} {
		f.Add([]byte(seed))
	}
	opt := Options{MaxBytes: 1 << 30}
	f.Fuzz(func(t *testing.T, data []byte) {
		w, err := Parse("fuzz.yaml", data, opt)
		if err != nil {
			var ve *ValidationError
			if !errors.As(err, &ve) || len(ve.Problems) == 0 {
				t.Fatalf("error %T without problems: %v", err, err)
			}
			for _, p := range ve.Problems {
				if p.File != "fuzz.yaml" || p.Msg == "" || p.Line < 0 {
					t.Fatalf("malformed problem %#v", p)
				}
			}
			return
		}
		if err := w.Validate(opt); err != nil {
			t.Fatalf("parsed workload does not validate: %v\ninput: %q", err, data)
		}
		if !slices.IsSorted(w.Ms) {
			t.Fatalf("Ms not sorted: %v", w.Ms)
		}
		// Round trip: write the workload back as YAML and parse it again.
		w2, err := Parse("fuzz.yaml", []byte(format(w)), opt)
		if err != nil {
			t.Fatalf("round trip: %v\nfile:\n%s", err, format(w))
		}
		if fmt.Sprint(w) != fmt.Sprint(w2) {
			t.Fatalf("round trip changed %+v into %+v", w, w2)
		}
	})
}

// format writes w in the file format.
func format(w Workload) string {
	var b strings.Builder
	fmt.Fprintf(&b, "name: %q\nm: [", w.Name)
	for i, m := range w.Ms {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprint(&b, m)
	}
	b.WriteString("]\nshapes:\n")
	for _, s := range w.Shapes {
		fmt.Fprintf(&b, "  - {name: %q, n: %d, k: %d, calls: %d}\n", s.Name, s.N, s.K, s.Calls)
	}
	return b.String()
}
