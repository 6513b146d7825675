package report

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestFailureDetailKeepsFirstDifference: the failure table's detail, cut to
// 100 runes, keeps the first differing element (issue 8: it was cut off).
func TestFailureDetailKeepsFirstDifference(t *testing.T) {
	for _, detail := range []string{
		"error 1.23e+03 × the bound (|y−ref| = 0.0625, bound 5.08e-05 = 2560·2⁻²⁴·1·Σ|x·w|): first difference at [1982,10239] (index 20305919): want 1.25 (0x3fa00000), got 1.3125 (0x3fa80000)",
		"differs from 64_128_2.tk128.kc8.unroll4: first difference at [1982,10239] (index 20305919): want 1.25 (0x3fa00000), got NaN (0xffffffff)\nsecond line",
		"element never written (still poison): " + strings.Repeat("x", 90) + " first difference at [1,2] (index 12): want 1 (0x3f800000), got NaN (0xffffffff)",
	} {
		got := firstLine(detail, 100)
		if n := utf8.RuneCountInString(got); n > 100 {
			t.Errorf("%d runes: %q", n, got)
		}
		i := strings.Index(detail, "first difference at")
		want := detail[i : i+strings.Index(detail[i:], ")")+1]
		if !strings.Contains(got, want) {
			t.Errorf("cut detail %q lost %q", got, want)
		}
	}
	if got := firstLine("short detail\nmore", 100); got != "short detail" {
		t.Errorf("short: %q", got)
	}
	if got := firstLine(strings.Repeat("y", 150), 100); utf8.RuneCountInString(got) != 100 || !strings.HasSuffix(got, "…") {
		t.Errorf("long: %q", got)
	}
}

// TestCutAtWordBoundary: a detail cut to fit a table cell ends at a word
// boundary, never mid-word (issue 19: "got 0x4150a3d8 (1…").
func TestCutAtWordBoundary(t *testing.T) {
	line := "first difference at index 130817 (row 255, col 257): expected 0x4150a3d7 (13.04), got 0x4150a3d8 (13.040001)"
	got := firstLine(line, 100)
	if !strings.HasSuffix(got, "…") || utf8.RuneCountInString(got) > 100 {
		t.Fatalf("cut %q", got)
	}
	head := strings.TrimSuffix(got, "…")
	if !strings.HasPrefix(line, head) || line[len(head)] != ' ' {
		t.Errorf("cut %q mid-word (the next character is %q, want a space)", got, line[len(head)])
	}
	// A single word longer than the room is cut where it must be.
	if got := cut(strings.Repeat("z", 50), 10); got != strings.Repeat("z", 9)+"…" {
		t.Errorf("one long word: %q", got)
	}
}
