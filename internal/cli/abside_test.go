package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tilefit/tilefit/result"
)

// TestABSourceAndTile: a side may change source and tile together
// (source:FILE@TILE, "old shipped → new shipped"): each side runs its own
// revision at its own tile; a free source: side runs the other side's tile;
// the same revision at the same tile on both sides is an A/A run.
func TestABSourceAndTile(t *testing.T) {
	needCC(t)
	dir := t.TempDir()
	abSources(t, dir)
	orig, same := filepath.Join(dir, "orig.c"), filepath.Join(dir, "same.c")
	run := func(a, b string) result.ABReport {
		t.Helper()
		code, out, stderr := abRun(t, "ab", "--a", a, "--b", b, "--m", "37", "--rounds", "4", "--isolate=false", "--format", "json")
		if code != 0 {
			t.Fatalf("ab %s %s: exit %d\n%s", a, b, code, stderr)
		}
		var rep result.ABReport
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatal(err)
		}
		return rep
	}
	rep := run("source:"+orig+"@64_128_1", "source:"+same+"@32_64_1")
	if rep.AA || len(rep.Cells) == 0 {
		t.Fatalf("report %+v", rep)
	}
	for _, c := range rep.Cells {
		if c.TileA != "64_128_1" || c.TileB != "32_64_1" || c.Status != "ok" || !c.Bitwise {
			t.Errorf("%s M=%d: tiles %s vs %s, %s, bitwise %v; want 64_128_1 vs 32_64_1, ok, bitwise", c.Shape, c.M, c.TileA, c.TileB, c.Status, c.Bitwise)
		}
	}
	// A free source: side runs the other side's tile.
	for _, c := range run("source:"+orig, "source:"+same+"@32_64_1").Cells {
		if c.TileA != "32_64_1" || c.TileB != "32_64_1" {
			t.Errorf("free side: tiles %s vs %s, want 32_64_1 on both", c.TileA, c.TileB)
		}
	}
	// Against a tile: side, each side its own tile.
	for _, c := range run("source:"+orig+"@16_64_1", "tile:64_128_1").Cells {
		if c.TileA != "16_64_1" || c.TileB != "64_128_1" {
			t.Errorf("source@tile vs tile: tiles %s vs %s", c.TileA, c.TileB)
		}
	}
	if rep := run("source:"+orig+"@64_128_1", "source:"+orig+"@64_128_1"); !rep.AA {
		t.Error("the same revision at the same tile is not taken for A/A")
	}
	if rep := run("source:"+orig+"@64_128_1", "source:"+orig+"@32_64_1"); rep.AA {
		t.Error("the same revision at two tiles taken for A/A")
	}
	// A file whose name holds an '@' is taken whole.
	at := filepath.Join(dir, "v2@home.c")
	src, _ := os.ReadFile(orig)
	os.WriteFile(at, src, 0o644)
	for _, c := range run("source:"+at, "tile:64_128_1").Cells {
		if c.TileA != "64_128_1" || c.Status != "ok" {
			t.Errorf("file with '@': %+v", c)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"ab", "--a", "source:" + orig + "@64_96_1", "--b", "tile:64_128_1"}, "TN=96 not allowed"},
		{[]string{"ab", "--a", "source:" + orig + "@", "--b", "tile:64_128_1"}, "want source:FILE or source:FILE@TILE"},
		{[]string{"ab", "--a", "source:" + orig + "@64_128_1", "--b", "source:" + same, "--tiles", "ref"}, "--tiles applies only when both sides are source: specs without a tile"},
	} {
		if code, _, stderr := abRun(t, c.args...); code != ExitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", c.args, code, stderr, c.want)
		}
	}
}

// TestABReverse: --reverse runs the comparison again with the sides
// swapped and reports both runs and whether they agree.
func TestABReverse(t *testing.T) {
	needCC(t)
	code, out, stderr := abRun(t, "ab", "--a", "tile:64_128_1", "--b", "tile:32_64_1", "--m", "37", "--workload", "smoke",
		"--rounds", "4", "--isolate=false", "--reverse", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	var rep result.ABReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Reversed == nil || rep.Reversed.A != "tile:32_64_1" || rep.Reversed.B != "tile:64_128_1" || len(rep.Reversed.Cells) != len(rep.Cells) ||
		len(rep.Agreement) != len(rep.Cells) || len(rep.Cells) == 0 {
		t.Fatalf("reversed %+v, agreement %+v", rep.Reversed, rep.Agreement)
	}
	for i, c := range rep.Reversed.Cells {
		if c.TileA != "32_64_1" || c.TileB != "64_128_1" || c.Shape != rep.Cells[i].Shape {
			t.Errorf("reversed cell %d: %s %s vs %s", i, c.Shape, c.TileA, c.TileB)
		}
		g := rep.Agreement[i]
		if c.Status == "ok" && (g.ReversedRatio <= 0 || g.ReversedRatio != 1/c.Ratio) {
			t.Errorf("agreement %d: reversed ratio %v, want 1/%v", i, g.ReversedRatio, c.Ratio)
		}
	}
	// Two passes of progress, the second marked.
	if n := strings.Count(stderr, "reversed: "); n != len(rep.Cells) {
		t.Errorf("%d reversed progress lines, want %d:\n%s", n, len(rep.Cells), stderr)
	}
	if !regexp.MustCompile(`\[` + "1/" + `\d+\] `).MatchString(stderr) {
		t.Errorf("no progress lines:\n%s", stderr)
	}

	code, md, stderr := abRun(t, "ab", "--a", "tile:64_128_1", "--b", "tile:32_64_1", "--m", "37", "--workload", "smoke",
		"--rounds", "4", "--isolate=false", "--reverse")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	for _, want := range []string{"# tilefit ab\n", "# tilefit ab, reversed: the same comparison with the sides swapped\n",
		"A = `tile:32_64_1`, B = `tile:64_128_1`", "## Reversed: Production-weighted totals", "# Forward against reversed",
		"| B/A forward | interval | B/A reversed |", "compared cells give the same verdict both ways"} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md)
		}
	}
}
