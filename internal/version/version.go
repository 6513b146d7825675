// Package version says what a tilefit binary knows about its build: the
// module version, the VCS revision and the Go toolchain.
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// Text formats what a binary knows about its build:
//
//	tilefit v0.3.0 (module github.com/tilefit/tilefit)
//	revision 856dd58c… (2026-11-30T12:00:00Z, modified)
//	go1.26.8 linux/amd64
//
// A binary built from a checkout (go build, go run) has module version
// "(devel)"; the revision lines come from the VCS stamp Go records (absent
// with -buildvcs=false or outside a repository).
func Text(bi *debug.BuildInfo, ok bool) string {
	var b strings.Builder
	if !ok || bi == nil {
		fmt.Fprintf(&b, "tilefit (no build information)\n%s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
		return b.String()
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	path := bi.Main.Path
	if path == "" {
		path = bi.Path
	}
	fmt.Fprintf(&b, "tilefit %s (module %s)\n", v, path)
	set := map[string]string{}
	for _, s := range bi.Settings {
		set[s.Key] = s.Value
	}
	if rev := set["vcs.revision"]; rev != "" {
		var extra []string
		if t := set["vcs.time"]; t != "" {
			extra = append(extra, t)
		}
		if set["vcs.modified"] == "true" {
			extra = append(extra, "modified")
		}
		fmt.Fprintf(&b, "revision %s", rev)
		if len(extra) > 0 {
			fmt.Fprintf(&b, " (%s)", strings.Join(extra, ", "))
		}
		b.WriteByte('\n')
	} else {
		b.WriteString("revision unknown (built without VCS information)\n")
	}
	goos, goarch := set["GOOS"], set["GOARCH"]
	if goos == "" {
		goos, goarch = runtime.GOOS, runtime.GOARCH
	}
	fmt.Fprintf(&b, "%s %s/%s\n", bi.GoVersion, goos, goarch)
	return b.String()
}
