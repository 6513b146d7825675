package workload

import (
	"errors"
	"slices"
	"testing"
)

// TestParseMs: a --m value by the rules of a file's m list, every
// problem's line naming the flag (moved from internal/cli with ParseMs).
func TestParseMs(t *testing.T) {
	if ms, err := ParseMs("--m", "256, 1,37"); err != nil || !slices.Equal(ms, []int{256, 1, 37}) {
		t.Errorf("ParseMs: %v, %v", ms, err)
	}
	for in, want := range map[string]string{
		"256,abc": `--m: m[1]: "abc" is not a number (want token counts M in 1..1048576, separated by commas)`,
		"5,5":     "--m: m[1]: duplicate value 5 (also m[0])",
		"0,0":     "--m: m[0]: must be > 0, got 0\n--m: m[1]: must be > 0, got 0",
		"1,,2":    `--m: item 2 of "1,,2" is empty; separate the values by single commas`,
	} {
		_, err := ParseMs("--m", in)
		if err == nil || err.Error() != want {
			t.Errorf("ParseMs(%q): %v, want %q", in, err, want)
		}
	}
	var ve *ValidationError
	if _, err := ParseMs("--m", "0"); !errors.As(err, &ve) {
		t.Errorf("not a *ValidationError: %v", err)
	}
}
