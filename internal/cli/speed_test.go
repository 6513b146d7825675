package cli

import (
	"testing"

	"github.com/tilefit/tilefit/tune"
)

// TestBackgroundCompiler: a cuda sweep of several operators in worker
// processes gets a background compiler (a worker on the first device);
// one operator, the cpu backend (whose timings share the cores),
// --isolate=false or --compile-ahead=false get none.
func TestBackgroundCompiler(t *testing.T) {
	for _, c := range []struct {
		backend   string
		isolate   bool
		operators int
		noAhead   bool
		want      bool
	}{
		{"cuda", true, 3, false, true},
		{"cuda", true, 1, false, false},
		{"cpu", true, 3, false, false},
		{"cuda", false, 3, false, false},
		{"cuda", true, 3, true, false},
	} {
		f := sweepFlags{backend: c.backend, isolate: c.isolate, ahead: !c.noAhead}
		got := f.backgroundCompiler(c.operators, []int{1})
		if (got != nil) != c.want {
			t.Errorf("%s isolate %v, %d operators, compile-ahead %v: compiler %v, want one: %v", c.backend, c.isolate, c.operators, !c.noAhead, got, c.want)
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
