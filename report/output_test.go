package report

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestParseTags(t *testing.T) {
	tags, err := ParseTags(" gpu = h200 ,run=3")
	if err != nil || !slices.Equal(tags, []Tag{{"gpu", "h200"}, {"run", "3"}}) {
		t.Errorf("ParseTags: %v, %v", tags, err)
	}
	for in, want := range map[string]string{"a": `want k=v,k2=v2, got "a"`, "=1": `want k=v,k2=v2, got "=1"`, "a=1,a=2": `"a" given twice`} {
		if _, err := ParseTags(in); err == nil || err.Error() != want {
			t.Errorf("ParseTags(%q): %v, want %q", in, err, want)
		}
	}
}

// TestCSVAppend: a missing or empty file gets a header; an existing one
// gives its header, and its text (with a last newline) goes first.
func TestCSVAppend(t *testing.T) {
	dir := t.TempDir()
	if h, p, err := CSVAppend(filepath.Join(dir, "none.csv")); err != nil || h != nil || p != nil {
		t.Errorf("missing file: %v %q %v", h, p, err)
	}
	path := filepath.Join(dir, "a.csv")
	os.WriteFile(path, []byte("x,y\n1,2"), 0o644)
	h, p, err := CSVAppend(path)
	if err != nil || !slices.Equal(h, []string{"x", "y"}) || string(p) != "x,y\n1,2\n" {
		t.Errorf("existing file: %v %q %v", h, p, err)
	}
	os.WriteFile(path, []byte("a,\"b\n"), 0o644)
	if _, _, err := CSVAppend(path); err == nil || !strings.Contains(err.Error(), "is not a CSV file with a header") {
		t.Errorf("broken file: %v", err)
	}
}
