package tune

import "testing"

// TestMapSourceLines: positions in the files an edited source's #line
// directives name are mapped to the lines of the edited file itself, for
// cc's and NVRTC's formats; other files and plain text are kept.
func TestMapSourceLines(t *testing.T) {
	src := "/* a header */\n#line 1 \"f16_common.h\"\nint a;\nint b;\n#line 1 \"gemm_f16.c\"\nint c;\nint d = ;\n"
	// Physical lines: 3 is f16_common.h:1, 4 is f16_common.h:2, 6 is
	// gemm_f16.c:1, 7 is gemm_f16.c:2.
	for _, tc := range []struct{ in, want string }{
		{"gemm_f16.c:2:9: error: expected expression", "broken.c:7:9: error: expected expression"},
		{"f16_common.h:2:1: warning: x", "broken.c:4:1: warning: x"},
		{"gemm_f16.c(2): error: expected an expression", "broken.c(7): error: expected an expression"},
		{"In file included from other.h:3:1:", "In file included from other.h:3:1:"},
		{"gemm_f16.c:99:1: error: past the end", "gemm_f16.c:99:1: error: past the end"},
		{"compile gemm_f16[TM=16]: exit status 1\ngemm_f16.c: In function 'f':\ngemm_f16.c:1:1: note", "compile gemm_f16[TM=16]: exit status 1\ngemm_f16.c: In function 'f':\nbroken.c:6:1: note"},
	} {
		if got := MapSourceLines(tc.in, src, "broken.c"); got != tc.want {
			t.Errorf("MapSourceLines(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := MapSourceLines("x.c:1:1: error", "int x;\n", "broken.c"); got != "x.c:1:1: error" {
		t.Errorf("a source without #line directives: %q", got)
	}
}
