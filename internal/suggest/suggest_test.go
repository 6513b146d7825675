package suggest

import "testing"

func TestClosest(t *testing.T) {
	// Moved from internal/cli's TestFlagTypoSuggestions.
	if d := Distance("workolad", "workload"); d != 1 {
		t.Errorf("a swap of two letters is one edit, got %d", d)
	}
	names := []string{"sweep", "select", "scan", "report", "rounds", "format"}
	for typo, want := range map[string]string{"swep": "sweep", "selct": "select", "sacn": "scan", "rouns": "rounds", "fromat": "format",
		"zzzzzz": "", "sc": "", "scxx": ""} {
		if got := Closest(names, typo); got != want {
			t.Errorf("Closest(%q) = %q, want %q", typo, got, want)
		}
	}
}
