package kernel

import (
	"fmt"
	"sort"
	"strings"
)

// Builtin returns the built-in families of every backend, fresh values each
// call (families hold no global state).
func Builtin() []*Family {
	fs := []*Family{CPUGemmF16()}
	if f := cudaFamily(); f != nil {
		fs = append(fs, f)
	}
	return fs
}

// Lookup returns the built-in family name for backend.
func Lookup(backend, name string) (*Family, error) {
	var names []string
	for _, f := range Builtin() {
		if f.Backend != backend {
			continue
		}
		if f.Name == name {
			return f, nil
		}
		names = append(names, f.Name)
	}
	sort.Strings(names)
	return nil, fmt.Errorf("unknown family %q for backend %s (known: %s)", name, backend, strings.Join(names, ", "))
}
