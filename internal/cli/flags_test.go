package cli

import (
	"bytes"
	"context"
	"flag"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestJoinBoolWords(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.Bool("vendor", true, "")
	fs.Bool("aa", true, "")
	fs.String("tiles", "", "")
	for _, tc := range []struct{ in, want []string }{
		{[]string{"--vendor", "false", "--tiles", "a"}, []string{"--vendor=false", "--tiles", "a"}},
		{[]string{"-aa", "true"}, []string{"-aa=true"}},
		{[]string{"--tiles", "true", "--vendor", "x"}, []string{"--tiles", "true", "--vendor", "x"}},
		{[]string{"--tiles", "--vendor", "false"}, []string{"--tiles", "--vendor", "false"}}, // --vendor is --tiles' value
		{[]string{"--", "--vendor", "false"}, []string{"--", "--vendor", "false"}},
		{[]string{"--vendor=true", "false"}, []string{"--vendor=true", "false"}},
		{[]string{"--vendor", "False"}, []string{"--vendor", "False"}},
		{[]string{"pos", "--vendor"}, []string{"pos", "--vendor"}},
	} {
		in := slices.Clone(tc.in)
		if got := joinBoolWords(fs, in); !slices.Equal(got, tc.want) {
			t.Errorf("joinBoolWords(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if !slices.Equal(in, tc.in) {
			t.Errorf("joinBoolWords modified its argument %q", tc.in)
		}
	}
}

// TestBoolFlagWord: "--vendor false" turns the vendor off and leaves no
// positional argument behind.
func TestBoolFlagWord(t *testing.T) {
	fs := newFlags("sweep", "", io.Discard)
	var f sweepFlags
	f.register(fs)
	if err := parse(fs, []string{"--vendor", "false", "--aa", "false", "--isolate", "true"}); err != nil {
		t.Fatal(err)
	}
	if f.vendor || f.aa || !f.isolate || fs.NArg() != 0 {
		t.Errorf("vendor %v aa %v isolate %v, positional %q", f.vendor, f.aa, f.isolate, fs.Args())
	}
}

func TestFlagTypoSuggestions(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"sweep", "--workolad", "smoke"}, "tilefit sweep: unknown flag --workolad; did you mean --workload? (see: tilefit help sweep)\n"},
		{[]string{"sweep", "--rouns", "3"}, "tilefit sweep: unknown flag --rouns; did you mean --rounds? (see: tilefit help sweep)\n"},
		{[]string{"report", "--fromat", "json"}, "tilefit report: unknown flag --fromat; did you mean --format? (see: tilefit help report)\n"},
		{[]string{"select", "--baselin", "p.json"}, "tilefit select: unknown flag --baselin; did you mean --baseline? (see: tilefit help select)\n"},
		{[]string{"sweep", "--zzzzzz"}, "tilefit sweep: unknown flag --zzzzzz (see: tilefit help sweep)\n"},
		{[]string{"sweep", "-x"}, "tilefit sweep: unknown flag --x (see: tilefit help sweep)\n"},
	} {
		var stdout, stderr bytes.Buffer
		if code := Run(context.Background(), tc.args, &stdout, &stderr); code != ExitUsage || stderr.String() != tc.want {
			t.Errorf("%q: exit %d, stderr %q, want %q", tc.args, code, stderr.String(), tc.want)
		}
	}
}

// TestDeprecatedOut: --out still works where it meant something, with a
// warning naming the new flag.
func TestDeprecatedOut(t *testing.T) {
	dir := t.TempDir()
	if err := tilefitDB("ok.db")(dir); err != nil {
		t.Fatal(err)
	}
	db, out := filepath.Join(dir, "ok.db"), filepath.Join(dir, "r.md")
	var stdout, stderr bytes.Buffer
	if code := Run(context.Background(), []string{"report", "--db", db, "--out", out}, &stdout, &stderr); code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if want := "tilefit report: warning: --out is deprecated; use --output " + out + "\n"; stderr.String() != want {
		t.Errorf("stderr %q, want %q", stderr.String(), want)
	}
	if b, err := os.ReadFile(out); err != nil || !strings.Contains(string(b), "# tilefit report") {
		t.Errorf("report not written through the deprecated flag: %v %q", err, b)
	}
	stderr.Reset()
	code := Run(context.Background(), []string{"sweep", "--out", "bf16"}, &stdout, &stderr)
	want := "tilefit sweep: warning: --out is deprecated; use --out-type bf16\ntilefit sweep: --out-type: want f32 or f16, got \"bf16\"\n"
	if code != ExitUsage || stderr.String() != want {
		t.Errorf("sweep --out bf16: exit %d, stderr %q, want %q", code, stderr.String(), want)
	}
	fs := newFlags("select", "", io.Discard)
	var sf selectFlags
	sf.register(fs)
	deprecatedFlag(fs.FlagSet, io.Discard, "out", "policy-out")
	if err := parse(fs, []string{"--out", "p.json"}); err != nil || sf.out != "p.json" {
		t.Errorf("select --out: %v, policy file %q", err, sf.out)
	}
}

func TestVersionText(t *testing.T) {
	// The verb and --version print the same, from this binary.
	var a, b, e bytes.Buffer
	if Run(context.Background(), []string{"version"}, &a, &e) != ExitOK || Run(context.Background(), []string{"--version"}, &b, &e) != ExitOK {
		t.Fatalf("version failed: %s", e.String())
	}
	if a.String() != b.String() || !strings.HasPrefix(a.String(), "tilefit ") || !strings.Contains(a.String(), "\ngo1.") {
		t.Errorf("tilefit version %q, --version %q", a.String(), b.String())
	}
	if Run(context.Background(), []string{"version", "extra"}, &a, &e) != ExitUsage {
		t.Error("tilefit version extra accepted")
	}
}
