package backend

import (
	"strings"
	"testing"
)

func TestCapLog(t *testing.T) {
	s := strings.Repeat("é line\n", 1000)
	got := CapLog(s, 100)
	if !strings.HasPrefix(got, "é line\n") || len(got) > 150 || !strings.Contains(got, "more bytes not kept") {
		t.Errorf("CapLog: %q", got)
	}
	if CapLog("short", 100) != "short" {
		t.Error("a short log was changed")
	}
	if b := CapLog(strings.Repeat("é", 100), 51); !strings.HasPrefix(b, strings.Repeat("é", 25)+"…") {
		t.Errorf("cut inside a UTF-8 sequence: %q", b)
	}
}

// TestDiagnostics: what GCC, Clang and NVRTC say about a file the source
// included from outside its own files and headers is replaced by the
// file's name (issue 18 item 12); the rest is kept as it was.
func TestDiagnostics(t *testing.T) {
	own := OwnFiles("/cache/k.c", "/usr/include", "/usr/local/cuda/include")
	gcc := `In file included from /cache/k.c:2:
/etc/passwd:1:5: error: expected '=', ',', ';', 'asm' or '__attribute__' before ':' token
    1 | root:x:0:0:root:/root:/bin/bash
      |     ^
/cache/k.c:4:13: error: expected expression before ';' token
    4 | int after = ;
      |             ^
/usr/include/stdio.h:12:1: note: declared here
   12 | int printf(const char *, ...);
/usr/include/../../etc/shadow:3:1: error: unknown type name 'secret'
    3 | secret
cc1: some warnings being treated as errors
`
	got := Diagnostics(gcc, own)
	for _, bad := range []string{"root:x", "/root:/bin/bash", "'secret'", "    3 | secret"} {
		if strings.Contains(got, bad) {
			t.Errorf("%q survived:\n%s", bad, got)
		}
	}
	for _, keep := range []string{"In file included from /cache/k.c:2:", "/cache/k.c:4:13: error", "int after = ;", "/usr/include/stdio.h:12:1: note", "int printf", "cc1: some warnings",
		"/etc/passwd: 3 lines of compiler output about this file not shown", "/etc/shadow: 2 lines"} {
		if !strings.Contains(got, keep) {
			t.Errorf("%q lost:\n%s", keep, got)
		}
	}
	nvrtc := `gemm.cu(3): error: identifier "x" is undefined
    x = 1;
    ^
/etc/passwd(1): error: this declaration has no storage class or type specifier
  root:x:0:0:root:/root:/bin/bash
  ^
2 errors detected in the compilation of "gemm.cu".`
	got = Diagnostics(nvrtc, OwnFiles("gemm.cu", "/usr/local/cuda/include"))
	if strings.Contains(got, "root:x") || !strings.Contains(got, `gemm.cu(3): error: identifier "x"`) || !strings.Contains(got, "/etc/passwd: 3 lines") {
		t.Errorf("nvrtc:\n%s", got)
	}
	if got := CompilerLog("", "k.c", "", nil); got != "" {
		t.Errorf("empty log: %q", got)
	}
	if got := CompilerLog("/x/h.h:1:1: error: boom\n", "k.c", "", []string{"-I/x"}); !strings.Contains(got, "boom") {
		t.Errorf("a header under -I was hidden: %q", got)
	}
	// The parts a source's #line directives name (the built-in sources')
	// are its own; a name with a directory is not taken.
	text := "#line 1 \"common.h\"\nint a;\n#line 1 \"/etc/passwd\"\n#include \"/etc/passwd\"\n"
	log := "common.h:2:1: error: own line\n    2 | int b\n/etc/passwd:1:1: error: root:x:0:0\n"
	got = CompilerLog(log, "/cache/k.c", text, nil)
	if !strings.Contains(got, "common.h:2:1: error: own line") || strings.Contains(got, "root:x") {
		t.Errorf("#line names: %q", got)
	}
}
