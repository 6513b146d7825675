package cli

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/tilefit/tilefit/workload"
)

// mdLink matches a Markdown link or image target: [text](target).
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestDocLinks: README.md and every Markdown file under docs/ and
// examples/ link only to files inside this repository that exist (a reader
// of a clone, or of the repository on the web, can follow each), and name
// no path outside it (../shared, the developers' folder).
func TestDocLinks(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	files := []string{filepath.Join(root, "README.md")}
	for _, dir := range []string{"docs", "examples"} {
		filepath.WalkDir(filepath.Join(root, dir), func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
				files = append(files, p)
			}
			return nil
		})
	}
	links := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, f)
		if strings.Contains(string(b), "../shared") {
			t.Errorf("%s names ../shared, which exists only in the developers' checkout", rel)
		}
		for _, m := range mdLink.FindAllStringSubmatch(string(b), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "#") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			target, _, _ = strings.Cut(target, "#")
			p := filepath.Clean(filepath.Join(filepath.Dir(f), target))
			links++
			if r, err := filepath.Rel(root, p); err != nil || strings.HasPrefix(r, "..") {
				t.Errorf("%s links to %s, outside the repository", rel, m[1])
				continue
			}
			if _, err := os.Stat(p); err != nil {
				t.Errorf("%s links to %s, which does not exist", rel, m[1])
				continue
			}
			if _, frag, ok := strings.Cut(m[1], "#"); ok && strings.HasSuffix(p, ".md") && !hasAnchor(t, p, frag) {
				t.Errorf("%s links to %s, but %s has no heading for #%s", rel, m[1], filepath.Base(p), frag)
			}
		}
		for _, m := range mdLink.FindAllStringSubmatch(string(b), -1) {
			if frag, ok := strings.CutPrefix(m[1], "#"); ok && !hasAnchor(t, f, frag) {
				t.Errorf("%s links to %s, which is not a heading of its own", rel, m[1])
			}
		}
	}
	if links < 5 {
		t.Errorf("found only %d links in %d files; is the pattern broken?", links, len(files))
	}
}

// repoPath matches a path of this repository named in prose or a script
// ("docs/results/h200-final/README.md", "examples/gemmbias").
var repoPath = regexp.MustCompile(`(?:^|[\s(\[` + "`" + `'"=:])((?:docs|examples|deploy)/[A-Za-z0-9_.+/-]*[A-Za-z0-9_/])`)

// TestDocPaths: the repository paths the documentation and the results'
// scripts name in their text (not only as links: "bash
// docs/results/h200-final4/h200-final4.sh", "see docs/rounds.md") exist,
// so that moving a file shows every reference to it. Recorded outputs
// (reports, logs and JSON a command wrote, beside a study's README) are
// what they were and are not checked.
func TestDocPaths(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, f := range []string{"README.md"} {
		files = append(files, filepath.Join(root, f))
	}
	filepath.WalkDir(filepath.Join(root, "docs"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(filepath.Join(root, "docs", "results"), p)
		inStudy := !strings.HasPrefix(rel, "..") && strings.Contains(rel, string(filepath.Separator))
		switch {
		case strings.HasSuffix(p, ".sh"), strings.HasSuffix(p, ".py"):
			files = append(files, p)
		case strings.HasSuffix(p, ".md") && (!inStudy || filepath.Base(p) == "README.md"):
			files = append(files, p)
		}
		return nil
	})
	named := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, f)
		for _, m := range repoPath.FindAllStringSubmatch(string(b), -1) {
			p := strings.TrimRight(m[1], "./")
			if strings.ContainsAny(p, "*{$") {
				continue // a pattern, not a path
			}
			named++
			if _, err := os.Stat(filepath.Join(root, p)); err != nil {
				t.Errorf("%s names %s, which does not exist", rel, p)
			}
		}
	}
	if named < 20 {
		t.Errorf("found only %d repository paths in %d files; is the pattern broken?", named, len(files))
	}
}

// hasAnchor reports whether the Markdown file path has a heading whose
// GitHub anchor is frag (lower case, spaces to hyphens, punctuation but
// hyphens and underscores dropped).
func hasAnchor(t *testing.T, path, frag string) bool {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		h := strings.TrimLeft(line, "#")
		if h == line || !strings.HasPrefix(h, " ") {
			continue
		}
		if anchorOf(strings.TrimSpace(h)) == frag {
			return true
		}
	}
	return false
}

// anchorOf is the GitHub anchor of a heading's text.
func anchorOf(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// TestReadmePresets: the README describes the smoke preset as it is: each
// shape with its N and K, and its M (issue 19: the description was wrong).
func TestReadmePresets(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(b)), " ")
	i := strings.Index(text, "`smoke` is ")
	if i < 0 {
		t.Fatal("the README does not describe the smoke preset")
	}
	desc := text[i:min(len(text), i+400)]
	w, err := workload.Preset("smoke")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range w.Shapes {
		if want := fmt.Sprintf("%s (N %d, K %d)", s.Name, s.N, s.K); !strings.Contains(desc, want) {
			t.Errorf("the README's smoke description lacks %q: %s", want, desc)
		}
	}
	ms := make([]string, len(w.Ms))
	for i, m := range w.Ms {
		ms[i] = strconv.Itoa(m)
	}
	if want := "at M " + strings.Join(ms[:len(ms)-1], ", ") + " and " + ms[len(ms)-1]; !strings.Contains(desc, want) {
		t.Errorf("the README's smoke description lacks %q: %s", want, desc)
	}
}
