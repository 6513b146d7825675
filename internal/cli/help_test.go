package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestHelpOnStdout: "tilefit help VERB" prints every verb's usage and flags
// on stdout (so it can be paged), exit 0.
func TestHelpOnStdout(t *testing.T) {
	for _, v := range verbs() {
		var out, errb bytes.Buffer
		code := Run(context.Background(), []string{"help", v.name}, &out, &errb)
		if code != ExitOK || !strings.Contains(out.String(), "Usage: tilefit "+v.name) || !strings.Contains(out.String(), "Flags:") {
			t.Errorf("help %s: exit %d, stdout %q, stderr %q", v.name, code, out.String(), errb.String())
		}
	}
}
