package dl

import (
	"strings"
	"testing"

	"github.com/ebitengine/purego"
)

// TestOpenErrorIsNamed: a failed dlopen must say which file, every time,
// even with goroutines hopping threads around it.
func TestOpenErrorIsNamed(t *testing.T) {
	done := make(chan struct{})
	for i := 0; i < 4; i++ {
		go func() {
			for {
				select {
				case <-done:
					return
				default:
					Open("libtilefit-nope-other.so", purego.RTLD_NOW)
				}
			}
		}()
	}
	defer close(done)
	for i := 0; i < 200; i++ {
		_, err := Open("libtilefit-nope.so.7", purego.RTLD_NOW)
		if err == nil || !strings.Contains(err.Error(), "libtilefit-nope.so.7") {
			t.Fatalf("dlopen error %v does not name the library", err)
		}
	}
}
