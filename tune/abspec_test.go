package tune

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/tilefit/tilefit/result"
)

// TestABCost: an A/B of two source revisions over every tile says up front
// how many comparisons it runs and how long they may take; a short one is
// only announced, a long one (past ABLongRun) is refused unless allTiles
// (moved from internal/cli's TestABSourcesCostUpFront, which runs the verb).
func TestABCost(t *testing.T) {
	short := ABRun{Pairs: []ABPair{{Cell: result.Cell{Shape: "s", M: 1}, TileA: TileRef{Name: "x"}}, {Cell: result.Cell{Shape: "s", M: 2}, TileA: TileRef{Name: "x"}}}}
	var line bytes.Buffer
	if err := ABCost(&line, short, time.Second, false); err != nil || !strings.Contains(line.String(), "1 tile × 2 cells = 2 paired comparisons") {
		t.Errorf("short run: %v, %q", err, line.String())
	}
	if err := ABCost(io.Discard, short, time.Hour, true); err != nil {
		t.Errorf("--all-tiles: %v", err)
	}
	if err := ABCost(io.Discard, short, time.Hour, false); err == nil {
		t.Errorf("2 h without --all-tiles ran")
	}
	short.Reverse = true
	line.Reset()
	if err := ABCost(&line, short, time.Second, false); err != nil || !strings.Contains(line.String(), "1 tile × 2 cells = 4 paired comparisons") {
		t.Errorf("reversed: %v, %q", err, line.String())
	}
}
