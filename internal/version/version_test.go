package version

import (
	"runtime/debug"
	"strings"
	"testing"
)

// TestText (moved from internal/cli's TestVersionText, which keeps the
// verb's part).
func TestText(t *testing.T) {
	bi := &debug.BuildInfo{GoVersion: "go1.26.8", Path: "github.com/tilefit/tilefit/cmd/tilefit",
		Main: debug.Module{Path: "github.com/tilefit/tilefit", Version: "v0.4.0"},
		Settings: []debug.BuildSetting{{Key: "GOOS", Value: "linux"}, {Key: "GOARCH", Value: "amd64"},
			{Key: "vcs.revision", Value: "856dd58c0ffee"}, {Key: "vcs.time", Value: "2026-11-30T12:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	want := "tilefit v0.4.0 (module github.com/tilefit/tilefit)\nrevision 856dd58c0ffee (2026-11-30T12:00:00Z, modified)\ngo1.26.8 linux/amd64\n"
	if got := Text(bi, true); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	bi.Main.Version, bi.Settings = "(devel)", nil
	if got := Text(bi, true); !strings.HasPrefix(got, "tilefit (devel) (module github.com/tilefit/tilefit)\nrevision unknown (built without VCS information)\ngo1.26.8 ") {
		t.Errorf("devel build: %q", got)
	}
	if got := Text(nil, false); !strings.HasPrefix(got, "tilefit (no build information)\n") {
		t.Errorf("no build info: %q", got)
	}
}
