package cli

import (
	"testing"

	"github.com/tilefit/tilefit/tune"
)

// TestBackgroundCompiler: a cuda sweep of several operators in worker
// processes gets a background compiler (a worker on the first device);
// one operator, the cpu backend (whose timings share the cores) or
// --isolate=false get none.
func TestBackgroundCompiler(t *testing.T) {
	for _, c := range []struct {
		backend   string
		isolate   bool
		operators int
		want      bool
	}{
		{"cuda", true, 3, true},
		{"cuda", true, 1, false},
		{"cpu", true, 3, false},
		{"cuda", false, 3, false},
	} {
		f := sweepFlags{backend: c.backend, isolate: c.isolate}
		got := f.backgroundCompiler(c.operators, []int{1})
		if (got != nil) != c.want {
			t.Errorf("%s isolate %v, %d operators: compiler %v, want one: %v", c.backend, c.isolate, c.operators, got, c.want)
			continue
		}
		if got == nil {
			continue
		}
		if _, ok := got.(*tune.Worker); !ok {
			t.Errorf("%s: the background compiler is a %T, want a worker process (niced)", c.backend, got)
		}
		got.Close()
	}
}
