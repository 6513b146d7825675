package workload

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"github.com/tilefit/tilefit/builtin"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

// goldenBudget is the memory budget every golden file is parsed with.
const goldenBudget = 1 << 30

// render prints a parsed workload for a golden file.
func render(w Workload) string {
	var b strings.Builder
	fmt.Fprintf(&b, "ok: name=%s m=%v\n", w.Name, w.Ms)
	for i, s := range w.Shapes {
		fmt.Fprintf(&b, "shapes[%d]: name=%s n=%d k=%d calls=%d\n", i, s.Name, s.N, s.K, s.Calls)
	}
	return b.String()
}

// TestGolden loads every testdata/*.yaml file and compares the outcome (the
// parsed workload or the error text) with testdata/*.golden. Run with
// -update to rewrite the golden files.
func TestGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 20 {
		t.Fatalf("found only %d testdata/*.yaml files", len(files))
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".yaml")
		t.Run(name, func(t *testing.T) {
			w, err := Load(file, Options{MaxBytes: goldenBudget})
			var got string
			if err != nil {
				var ve *ValidationError
				if !errors.As(err, &ve) {
					t.Fatalf("error is %T, want *ValidationError: %v", err, err)
				}
				if len(ve.Problems) == 0 {
					t.Fatal("ValidationError without problems")
				}
				got = err.Error() + "\n"
			} else {
				if !strings.HasPrefix(name, "ok_") {
					t.Errorf("%s parsed without error; files that should parse are named ok_*", file)
				}
				if err := w.Validate(Options{MaxBytes: goldenBudget}); err != nil {
					t.Errorf("parsed workload does not validate: %v", err)
				}
				got = render(w)
			}
			if strings.HasPrefix(name, "ok_") && err != nil {
				t.Errorf("%s should parse: %v", file, err)
			}
			golden := strings.TrimSuffix(file, ".yaml") + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("%s:\ngot:\n%s\nwant:\n%s", file, got, want)
			}
		})
	}
}

// TestProblemFormat pins the message format others rely on.
func TestProblemFormat(t *testing.T) {
	for _, tc := range []struct {
		p    Problem
		want string
	}{
		{Problem{File: "bad.yaml", Line: 7, Field: "shapes[1].n", Msg: "must be > 0, got -4"}, "bad.yaml:7: shapes[1].n: must be > 0, got -4"},
		{Problem{Field: "shapes[1].n", Msg: "must be > 0, got -4"}, "shapes[1].n: must be > 0, got -4"},
		{Problem{File: "bad.yaml", Line: 3, Msg: "syntax error: x"}, "bad.yaml:3: syntax error: x"},
		{Problem{File: "bad.yaml", Msg: "file is empty"}, "bad.yaml: file is empty"},
		{Problem{Line: 2, Field: "m", Msg: "x"}, "line 2: m: x"},
	} {
		if got := tc.p.String(); got != tc.want {
			t.Errorf("got %q, want %q", got, tc.want)
		}
	}
	e := &ValidationError{Problems: []Problem{{Field: "a", Msg: "b"}, {Field: "c", Msg: "d"}}}
	if got, want := e.Error(), "a: b\nc: d"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

// TestSpecExample checks the exact message quoted in the package's brief.
func TestSpecExample(t *testing.T) {
	src := "# bad\nname: bad\nm: [256]\nshapes:\n  - {name: a, n: 1, k: 1}\n  - name: b\n    n: -4\n    k: 1\n"
	_, err := Parse("bad.yaml", []byte(src), Options{})
	if got, want := fmt.Sprint(err), "bad.yaml:7: shapes[1].n: must be > 0, got -4"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	// Without a file name, lines are still given.
	_, err = Parse("", []byte(src), Options{})
	if got, want := fmt.Sprint(err), "line 7: shapes[1].n: must be > 0, got -4"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestValidate(t *testing.T) {
	w := Workload{
		Name: "mem",
		Shapes: []Shape{
			{Name: "Wq", N: 12288, K: 2560, Calls: 12},
			{Name: "Wq", N: -4, K: 1 << 25, Calls: 0},
			{Name: "x y", N: 96000, K: 2560, Calls: 1},
		},
		Ms: []int{2048, 0, 2048, MaxM + 1},
	}
	want := strings.Join([]string{
		"m[1]: must be > 0, got 0",
		"m[2]: duplicate value 2048 (also m[0])",
		"m[3]: must be <= 1048576 (1<<20), got 1048577",
		`shapes[1].name: duplicate name "Wq" (also shapes[0].name)`,
		"shapes[1].n: must be > 0, got -4",
		"shapes[1].k: must be <= 16777216 (1<<24), got 33554432",
		"shapes[1].calls: must be >= 1, got 0",
		`shapes[2].name: may hold only letters, digits, '_', '-' and '.', got "x y"`,
		"shapes[2]: buffers for M=2048 need 1.2 GiB, over the 1.0 GiB budget",
	}, "\n")
	err := w.Validate(Options{MaxBytes: 1 << 30})
	if got := fmt.Sprint(err); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	var ve *ValidationError
	if !errors.As(err, &ve) || len(ve.Problems) != 9 || ve.Problems[0].Line != 0 || ve.Problems[0].File != "" {
		t.Errorf("problems = %#v", ve)
	}

	if err := (Workload{}).Validate(Options{}); fmt.Sprint(err) != "name: must not be empty\nm: want at least one M value\nshapes: want at least one shape" {
		t.Errorf("empty workload: %v", err)
	}
	// No budget: any size within the limits passes.
	big := Workload{Name: "big", Shapes: []Shape{{Name: "a", N: MaxDim, K: MaxDim, Calls: 1}}, Ms: []int{MaxM}}
	if err := big.Validate(Options{}); err != nil {
		t.Errorf("no budget: %v", err)
	}
	if err := big.Validate(Options{MaxBytes: -1}); err != nil {
		t.Errorf("negative budget means none: %v", err)
	}
}

func TestPresets(t *testing.T) {
	if got := PresetNames(); !slices.Equal(got, []string{"decode", "smoke", "strata"}) {
		t.Fatalf("PresetNames() = %v", got)
	}
	for _, name := range PresetNames() {
		w, err := Preset(name)
		if err != nil {
			t.Fatal(err)
		}
		if w.Name != name {
			t.Errorf("preset %s is named %q", name, w.Name)
		}
		if err := w.Validate(Options{MaxBytes: 1 << 30}); err != nil {
			t.Errorf("preset %s: %v", name, err)
		}
		if !slices.IsSorted(w.Ms) {
			t.Errorf("preset %s: Ms not sorted: %v", name, w.Ms)
		}
	}

	dw, _ := Preset("decode")
	var dshapes []string
	for _, sh := range dw.Shapes {
		dshapes = append(dshapes, fmt.Sprintf("%s %d×%d %s", sh.Name, sh.N, sh.K, sh.Operator()))
	}
	if got := strings.Join(dshapes, ", "); got != "sq4096 4096×4096 gemm_f16, Wout 2560×6144 gemm_f16, sq8192 8192×8192 gemm_f16" || !slices.Equal(dw.Ms, []int{1, 7, 16}) {
		t.Errorf("decode preset: %s at M %v", got, dw.Ms)
	}

	s, _ := Preset("strata")
	if len(s.Shapes) != 13 {
		t.Errorf("strata has %d shapes, want 13", len(s.Shapes))
	}
	calls := 0
	var names []string
	for _, sh := range s.Shapes {
		calls += sh.Calls
		names = append(names, sh.Name)
	}
	// 721 calls of 13 GEMMs, less the 48 calls the fused SwiGLU saves
	// (one swiglu_f16 call per gate+up pair).
	if calls != 673 {
		t.Errorf("strata calls sum to %d, want 673", calls)
	}
	ops := map[string]string{}
	for _, sh := range s.Shapes {
		ops[sh.Name] = sh.Operator()
	}
	if ops["hc_up"] != "hc_up_f16" || ops["Wshgu"] != "swiglu_f16" || ops["Wqkv"] != "gemm_f16" {
		t.Errorf("strata operators %v", ops)
	}
	if up, _ := s.Shape("hc_up"); up.At(1983).String() != "K=320,M=1983,S=2560" || up.Calls != 96 {
		t.Errorf("hc_up dims %v, calls %d", up.At(1983), up.Calls)
	}
	if sg, _ := s.Shape("Wshgu"); sg.At(7).String() != "K=2560,M=7,N=640" || sg.Calls != 48 {
		t.Errorf("Wshgu dims %v, calls %d", sg.At(7), sg.Calls)
	}
	wantNames := []string{"hc_read", "Wqkv", "Wz", "Wout", "Wq", "Wpv", "Wshgu", "Wshd", "W512", "Wik", "Walbe", "Wsg", "hc_up"}
	if !slices.Equal(names, wantNames) {
		t.Errorf("strata shapes %v, want %v", names, wantNames)
	}
	if !slices.Equal(s.Ms, []int{256, 512, 1024, 1983, 2048}) {
		t.Errorf("strata Ms %v", s.Ms)
	}
	if sh, ok := s.Shape("Wout"); !ok || sh.Name != "Wout" || sh.N != 2560 || sh.K != 6144 || sh.Calls != 48 {
		t.Errorf("Shape(Wout) = %+v, %v", sh, ok)
	}
	if _, ok := s.Shape("nope"); ok {
		t.Error("Shape(nope) found something")
	}

	sm, _ := Preset("smoke")
	var n1, n48, oddK bool
	for _, sh := range sm.Shapes {
		n1 = n1 || sh.N == 1
		n48 = n48 || sh.N == 48
		oddK = oddK || sh.K%8 != 0
		for _, m := range sm.Ms {
			if flop := 2 * m * sh.N * sh.K; flop > 20e6 {
				t.Errorf("smoke %s at M=%d is %d FLOP, over 20 MFLOP", sh.Name, m, flop)
			}
		}
	}
	if !n1 || !n48 || !oddK {
		t.Errorf("smoke lacks N=1 (%v), N=48 (%v) or K not a multiple of 8 (%v)", n1, n48, oddK)
	}
	for _, m := range sm.Ms {
		if m%16 == 0 {
			t.Errorf("smoke M=%d is a multiple of 16", m)
		}
	}

	// Each call returns fresh slices.
	sm.Shapes[0].N = 999
	sm.Ms[0] = 999
	again, _ := Preset("smoke")
	if again.Shapes[0].N == 999 || again.Ms[0] == 999 {
		t.Error("Preset returned shared slices")
	}

	_, err := Preset("llama")
	if err == nil || !strings.Contains(err.Error(), `unknown preset "llama"; presets: decode, smoke, strata`) {
		t.Errorf("Preset(llama) error = %v", err)
	}
}

func TestOpen(t *testing.T) {
	w, err := Open("strata", Options{})
	if err != nil || w.Name != "strata" || len(w.Shapes) != 13 {
		t.Fatalf("Open(strata) = %v, %v", w.Name, err)
	}

	dir := t.TempDir()
	path := filepath.Join(dir, "mine.yaml")
	if err := os.WriteFile(path, []byte("m: [64, 32]\nshapes: [{name: a, n: 8, k: 8, calls: 2}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err = Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := Workload{Name: "mine", Shapes: []Shape{{Name: "a", N: 8, K: 8, Dims: map[string]int{"N": 8, "K": 8}, Calls: 2}}, Ms: []int{32, 64}}
	if fmt.Sprint(w) != fmt.Sprint(want) {
		t.Errorf("Open(file) = %+v, want %+v", w, want)
	}

	// A preset name wins over a file of that name; ./name reaches the file.
	t.Chdir(dir)
	if err := os.WriteFile("smoke", []byte("name: file\nm: [1]\nshapes: [{name: a, n: 1, k: 1}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if w, err := Open("smoke", Options{}); err != nil || w.Name != "smoke" {
		t.Errorf("Open(smoke) = %q, %v; want the preset", w.Name, err)
	}
	if w, err := Open("./smoke", Options{}); err != nil || w.Name != "file" {
		t.Errorf("Open(./smoke) = %q, %v; want the file", w.Name, err)
	}

	// A preset is checked against the budget too.
	_, err = Open("strata", Options{MaxBytes: 100 << 20})
	var ve *ValidationError
	if !errors.As(err, &ve) || !strings.HasPrefix(err.Error(), "preset strata: shapes[1]: buffers for M=2048 need 140.0 MiB, over the 100.0 MiB budget") {
		t.Errorf("Open(strata, 100 MiB) = %v", err)
	}

	_, err = Open("nosuch", Options{})
	if err == nil || !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), `workload "nosuch" is not a preset (decode, smoke, strata)`) {
		t.Errorf("Open(nosuch) = %v", err)
	}
	if _, err := Open("", Options{}); err == nil || !strings.Contains(err.Error(), "no workload given") {
		t.Errorf("Open(\"\") = %v", err)
	}
	if _, err := Open(dir, Options{}); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("Open(dir) = %v", err)
	}
	// A syntax error from a file is a ValidationError naming the file.
	if err := os.WriteFile("bad.yaml", []byte("m: [1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open("bad.yaml", Options{}); !errors.As(err, &ve) || !strings.HasPrefix(err.Error(), "bad.yaml:2: syntax error: ") {
		t.Errorf("Open(bad.yaml) = %v", err)
	}
}

func TestLoadTooLarge(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.yaml")
	data := []byte("# " + strings.Repeat("x", MaxFileBytes) + "\n")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(path, Options{})
	if got, want := fmt.Sprint(err), path+": file is over the 4.0 MiB limit for a workload file"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	_, err = Parse("x.yaml", []byte("m: [1]\nshapes: [{name: a, n: 1, k: 1}]\n\xff"), Options{})
	if got, want := fmt.Sprint(err), "x.yaml: file is not UTF-8 text"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestWithMs(t *testing.T) {
	w, _ := Preset("smoke")
	in := []int{512, 37, 1}
	got, err := w.WithMs(in)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Ms, []int{1, 37, 512}) {
		t.Errorf("Ms = %v", got.Ms)
	}
	if !slices.Equal(in, []int{512, 37, 1}) {
		t.Error("WithMs changed its argument")
	}
	if !slices.Equal(w.Ms, []int{1, 37, 130}) {
		t.Error("WithMs changed the receiver")
	}
	got.Shapes[0].N = 7
	if w.Shapes[0].N == 7 {
		t.Error("WithMs shares the shapes slice")
	}

	_, err = w.WithMs([]int{256, 0, -3, MaxM + 1})
	want := "m[1]: must be > 0, got 0\nm[2]: must be > 0, got -3\nm[3]: must be <= 1048576 (1<<20), got 1048577"
	var ve *ValidationError
	if !errors.As(err, &ve) || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
	if _, err := w.WithMs(nil); fmt.Sprint(err) != "m: want at least one M value" {
		t.Errorf("WithMs(nil) = %v", err)
	}
}

func TestBufferBytes(t *testing.T) {
	for _, tc := range []struct {
		s    Shape
		m    int
		want int64
	}{
		{Shape{N: 1, K: 1}, 1, 8},
		{Shape{N: 2560, K: 6144}, 1983, 2*1983*6144 + 2*2560*6144 + 4*1983*2560},
		{Shape{N: 12288, K: 2560}, 2048, 2*2048*2560 + 2*12288*2560 + 4*2048*12288},
		{Shape{N: 0, K: 5}, 3, 30},
		{Shape{N: -1, K: -1}, -1, 0},
		{Shape{N: math.MaxInt, K: 1}, 1, math.MaxInt64},
		{Shape{N: 1 << 40, K: 1 << 40}, 1 << 40, math.MaxInt64},
		{Shape{N: math.MaxInt, K: math.MaxInt}, 0, math.MaxInt64},
	} {
		if got := BufferBytes(builtin.GemmF16(), tc.s, tc.m); got != tc.want {
			t.Errorf("BufferBytes(%+v, %d) = %d, want %d", tc.s, tc.m, got, tc.want)
		}
	}
	// 2·2^31·2^31 = 2^63 overflows int64 by one: saturates.
	if got := BufferBytes(builtin.GemmF16(), Shape{N: 1 << 31, K: 1 << 31}, 0); got != math.MaxInt64 {
		t.Errorf("2^63 bytes = %d, want MaxInt64", got)
	}
	if got := mulSat(1<<40, 1<<40, 0); got != 0 {
		t.Errorf("mulSat with a late zero = %d", got)
	}
}

func TestFormatBytes(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		want string
	}{
		{0, "0 B"}, {1023, "1023 B"}, {1024, "1.0 KiB"}, {1536, "1.5 KiB"},
		{1<<20 - 1, "1.0 MiB"}, {1 << 30, "1.0 GiB"}, {1288490188, "1.2 GiB"},
		{math.MaxInt64, "8.0 EiB"},
	} {
		if got := formatBytes(tc.n); got != tc.want {
			t.Errorf("formatBytes(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}

func TestDefaultName(t *testing.T) {
	for in, want := range map[string]string{
		"models/llama.yaml": "llama",
		"my model.yml":      "my_model",
		"":                  "workload",
		"/":                 "workload",
		".yaml":             "workload",
		"a.b.yaml":          "a.b",
	} {
		if got := defaultName(in); got != want {
			t.Errorf("defaultName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestAliasExpansion checks that merge keys fanning out through anchors (a
// "billion laughs" file) are cut off quickly with one clear problem.
func TestAliasExpansion(t *testing.T) {
	src := "x-a: &a {k: 1}\n"
	prev := "a"
	for i := range 7 {
		name := string(rune('b' + i))
		src += "x-" + name + ": &" + name + " {<<: [" + strings.Repeat("*"+prev+", ", 30) + "]}\n"
		prev = name
	}
	src += "m: [1]\nshapes: [{<<: *" + prev + ", name: a, n: 1}]\n"
	start := time.Now()
	_, err := Parse("laughs.yaml", []byte(src), Options{})
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %v", d)
	}
	want := "laughs.yaml:10: too much to walk after expanding aliases and merge keys (over 262144 steps)"
	if fmt.Sprint(err) != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

// TestManyProblems checks that a file with very many problems reports the
// first maxProblems of them and a count of the rest.
func TestManyProblems(t *testing.T) {
	src := "m: [1]\nshapes:\n" + strings.Repeat("  - {name: a, n: 1, k: 0}\n", 1200)
	_, err := Parse("many.yaml", []byte(src), Options{})
	var ve *ValidationError
	if !errors.As(err, &ve) || len(ve.Problems) != maxProblems+1 {
		t.Fatalf("got %d problems", len(ve.Problems))
	}
	if got, want := ve.Problems[maxProblems].String(), "many.yaml: and 1399 more problems"; got != want {
		t.Errorf("last problem %q, want %q", got, want)
	}
}

// TestOperatorShapes: a shape names its operator (default gemm_f16) and its
// dimensions are checked against the operator's, with file lines.
func TestOperatorShapes(t *testing.T) {
	w, err := Parse("w.yaml", []byte("m: [16]\nshapes:\n  - {name: a, op: gemm_f16, n: 8, k: 4}\n"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s := w.Shapes[0]; s.Operator() != "gemm_f16" || s.At(16).String() != "K=4,M=16,N=8" {
		t.Errorf("shape %+v at 16: %v", s, s.At(16))
	}
	if got := BufferBytes(builtin.GemmF16(), w.Shapes[0], 16); got != 2*16*4+2*8*4+4*16*8 {
		t.Errorf("BufferBytes = %d", got)
	}
	for _, tc := range []struct{ yaml, want string }{
		{"m: [16]\nshapes:\n  - {name: a, op: nope, n: 8, k: 4}\n", `w.yaml:3: shapes[0].op: unknown operator "nope" (known: gemm_f16, gemm_q8_f16, hc_up_f16, swiglu_f16)`},
		{"m: [16]\nshapes:\n  - {name: a, n: 8}\n", "w.yaml:3: shapes[0].k: required key is missing (operator gemm_f16)"},
		// Issue 18 item 10: the operator's own dimension rules are
		// validation too (they were "cell not run", swept 0 cells, exit 0).
		{"m: [1]\nshapes:\n  - {name: q, op: gemm_q8_f16, n: 8,\n     k: 64, g: 24}\n", "w.yaml:4: shapes[0].g: gemm_q8_f16: K=64 is not a multiple of the group size G=24"},
		{"m: [1]\nshapes:\n  - {name: q, op: gemm_q8_f16, n: 8, k: 48}\n", "w.yaml:3: shapes[0].k: gemm_q8_f16: K=48 is not a multiple of the group size G=32"},
	} {
		_, err := Parse("w.yaml", []byte(tc.yaml), Options{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err = %v, want %s", tc.yaml, err, tc.want)
		}
	}
}

// TestWithMsDuplicateLikeFile: --m 5,5 (WithMs) is refused by the same rule
// and with the same wording as m: [5, 5] in a workload file (issue 8).
func TestWithMsDuplicateLikeFile(t *testing.T) {
	w, _ := Preset("smoke")
	_, err := w.WithMs([]int{5, 5})
	if got, want := fmt.Sprint(err), "m[1]: duplicate value 5 (also m[0])"; got != want {
		t.Errorf("WithMs(5, 5) = %q, want %q", got, want)
	}
	_, ferr := Parse("w.yaml", []byte("m: [5, 5]\nshapes: [{name: a, n: 8, k: 8}]\n"), Options{})
	if got, want := fmt.Sprint(ferr), "w.yaml:1: m[1]: duplicate value 5 (also m[0] on line 1)"; got != want {
		t.Errorf("file m: [5, 5] = %q, want %q", got, want)
	}
}

func TestWithMsLimit(t *testing.T) {
	w, _ := Preset("smoke")
	many := make([]int, MaxMs+1)
	for i := range many {
		many[i] = i + 1
	}
	if _, err := w.WithMs(many); !strings.Contains(fmt.Sprint(err), fmt.Sprintf("over the limit of %d", MaxMs)) {
		t.Errorf("WithMs of %d values = %v", len(many), err)
	}
}

// TestTooManyShapesNamesTheLimit: a 60,000-shape workload is refused with
// the shapes-per-workload limit, not a message about aliases (issue 8).
func TestTooManyShapesNamesTheLimit(t *testing.T) {
	var b strings.Builder
	b.WriteString("name: big\nm: [16]\nshapes:\n")
	for i := 0; i < 60000; i++ {
		fmt.Fprintf(&b, "  - {name: s%d, n: 8, k: 8, calls: 1}\n", i)
	}
	_, err := Parse("big.yaml", []byte(b.String()), Options{})
	want := "big.yaml:3: shapes: 60000 shapes, over the limit of 10000 shapes per workload"
	if !strings.HasPrefix(fmt.Sprint(err), want) {
		t.Errorf("got %v\nwant prefix %q", err, want)
	}
	if strings.Contains(fmt.Sprint(err), "too much to walk") {
		t.Errorf("message still blames aliases: %v", err)
	}
}

func TestTooManyMs(t *testing.T) {
	var ms strings.Builder
	ms.WriteString("m: [")
	for i := 1; i <= MaxMs+1; i++ {
		fmt.Fprintf(&ms, "%d,", i)
	}
	ms.WriteString("]\nshapes: [{name: a, n: 8, k: 8}]\n")
	_, err := Parse("ms.yaml", []byte(ms.String()), Options{})
	if want := fmt.Sprintf("ms.yaml:1: m: %d M values, over the limit of %d per workload", MaxMs+1, MaxMs); fmt.Sprint(err) != want {
		t.Errorf("got %v, want %q", err, want)
	}
}

// TestLoadRefusesNonRegular: a FIFO without a writer, a directory and a
// device are refused at once with a message saying what they are; nothing
// blocks (issue 8).
func TestLoadRefusesNonRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "w.fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	for path, want := range map[string]string{
		fifo:        "is a named pipe (FIFO), not a regular file",
		dir:         "is a directory, not a regular file",
		"/dev/null": "is a character device, not a regular file",
	} {
		done := make(chan error, 1)
		go func() {
			_, err := Load(path, Options{})
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), path) {
				t.Errorf("Load(%s) = %v, want %q", path, err, want)
			}
		case <-time.After(time.Minute):
			// Unblock the hung open so the test binary can exit.
			if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				f.Close()
			}
			t.Fatalf("Load(%s) blocked", path)
		}
	}
}

func TestLoadContextCancelled(t *testing.T) {
	dir := t.TempDir()
	// A cancelled context stops a read before it starts.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := LoadContext(ctx, filepath.Join(dir, "none.yaml"), Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled Load = %v", err)
	}
}
