package tune

import (
	"context"
	"strconv"
	"strings"
	"testing"
)

// TestPhasesNameTheReferenceWait: a swept cell's phases (its progress line) say how long the
// verify phase waited for the float64 reference ("verify/ref 0.00s", a part
// of verify, right after it, no longer than it), every entry "name secs"
// as docs/results/h200-verify/verify-share.py reads them.
func TestPhasesNameTheReferenceWait(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	var cells []Progress
	progress := func(p Progress) {
		if !p.Skipped {
			cells = append(cells, p)
		}
	}
	if _, err := Sweep(ctx, testConfig(), NewLocal(func(context.Context) (backendT, error) { return newFake(), nil }, nil), st, progress); err != nil {
		t.Fatal(err)
	}
	if len(cells) == 0 {
		t.Fatal("no cells swept")
	}
	for _, c := range cells {
		secs := map[string]float64{}
		var names []string
		for _, part := range strings.Split(c.Phases, ", ") {
			i := strings.LastIndexByte(part, ' ')
			if i < 0 || !strings.HasSuffix(part, "s") {
				t.Fatalf("%s M=%d: phase %q is not \"name secs\" (%s)", c.Cell.Shape, c.Cell.M, part, c.Phases)
			}
			v, err := strconv.ParseFloat(part[i+1:len(part)-1], 64)
			if err != nil {
				t.Fatalf("%s M=%d: phase %q: %v", c.Cell.Shape, c.Cell.M, part, err)
			}
			names = append(names, part[:i])
			secs[part[:i]] = v
		}
		at := -1
		for k, n := range names {
			if n == "verify/ref" {
				at = k
			}
		}
		if at < 1 || names[at-1] != "verify" || secs["verify/ref"] > secs["verify"] {
			t.Errorf("%s M=%d: phases %q: want verify/ref right after verify and no longer", c.Cell.Shape, c.Cell.M, c.Phases)
		}
	}
}
