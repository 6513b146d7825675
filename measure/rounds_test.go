package measure

import (
	"testing"
)

func TestRoundsFlag(t *testing.T) {
	for _, tc := range []struct {
		in   string
		auto bool
		n    int
		bad  bool
	}{{"auto", true, 0, false}, {"12", false, 12, false}, {"2", false, 2, false}, {"1", false, 0, true}, {"x", false, 0, true}, {"", false, 0, true}} {
		mo, err := OptionsFor(tc.in, 0, 0)
		switch {
		case tc.bad:
			if err == nil {
				t.Errorf("--rounds %q accepted", tc.in)
			}
		case err != nil || mo.Auto != tc.auto || (!tc.auto && mo.Rounds != tc.n):
			t.Errorf("--rounds %q: %+v, %v", tc.in, mo, err)
		}
	}
}
