package cpu

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Temporary files in the compile cache are named
//
//	<key>.<pid>.<random>.c        the source handed to the compiler
//	<key>.<pid>.<random>.so.tmp   the compiler's output, renamed to <key>.so
//	<key>.log.<pid>.<random>.tmp  the compiler's log, renamed to <key>.log
//	<key>.<pid>.<random>.d        the compile's folder: the compiler's
//	                              output log and its own temporary files
//	                              (TMPDIR)
//
// and the .c file is locked (flock) while its compile runs. A compile killed
// with its process (SIGKILL runs no deferred clean-up) leaves them behind;
// cleanStale removes those whose process is gone.
var (
	tempRE = regexp.MustCompile(`^([0-9a-f]{64}(?:\.log)?)\.([0-9]+)\.([0-9]+)\.(c|so\.tmp|tmp|d)$`)
	// legacyTempRE: names of temporary files before they carried a pid.
	legacyTempRE = regexp.MustCompile(`^[0-9a-f]{64}(-[0-9]+\.(c|so\.tmp)|\.log-[0-9]+\.tmp)$`)
)

// legacyAge is how old a temporary file without a pid must be before
// cleanStale removes it (no compile takes an hour).
const legacyAge = time.Hour

// tempPrefix is the start of a temporary file's name for base (a cache key
// or a file name) in this process; os.CreateTemp adds the random part.
func tempPrefix(base string) string {
	return base + "." + strconv.Itoa(os.Getpid()) + "."
}

// cleanStale removes the temporary files that killed compiles left in dir:
// those whose process no longer runs and whose source is not locked by a
// live compile (a process in another pid namespace sharing the cache), and
// pid-less ones of earlier versions over an hour old. Errors are ignored:
// leftovers are never read, only untidy.
func cleanStale(dir string) {
	es, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	self := os.Getpid()
	for _, e := range es {
		name := e.Name()
		path := filepath.Join(dir, name)
		if m := tempRE.FindStringSubmatch(name); m != nil {
			pid, err := strconv.Atoi(m[2])
			if err != nil || pid == self || processAlive(pid) {
				continue
			}
			if m[4] != "c" {
				stem := strings.TrimSuffix(path, "."+m[4])
				if _, err := os.Lstat(stem + ".c"); err == nil {
					continue // goes with its source (below), if stale
				}
				os.RemoveAll(path)
				continue
			}
			if !tempUnlocked(path) {
				continue
			}
			os.Remove(strings.TrimSuffix(path, ".c") + ".so.tmp")
			os.RemoveAll(strings.TrimSuffix(path, ".c") + ".d")
			os.Remove(path)
			continue
		}
		if legacyTempRE.MatchString(name) {
			if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > legacyAge {
				os.Remove(path)
			}
		}
	}
}
