package cuda

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/tilefit/tilefit/internal/dl"
)

// A lib is one dlopened shared library and the symbols resolved from it.
type lib struct {
	name   string // what was opened (soname or path)
	handle uintptr
	syms   map[string]uintptr // read-only after open
}

// openLib dlopens the first of candidates that loads: sonames first, then
// files matching the glob patterns (newest name first). The error lists
// every attempt.
func openLib(what string, sonames []string, globs []string) (*lib, error) {
	var tried []string
	for _, n := range sonames {
		h, err := dl.Open(n, purego.RTLD_NOW|purego.RTLD_GLOBAL)
		if err == nil {
			return &lib{name: n, handle: h, syms: map[string]uintptr{}}, nil
		}
		tried = append(tried, fmt.Sprintf("%s: %v", n, err))
	}
	for _, g := range globs {
		ms, _ := filepath.Glob(g)
		sort.Sort(sort.Reverse(sort.StringSlice(ms)))
		for _, p := range ms {
			h, err := dl.Open(p, purego.RTLD_NOW|purego.RTLD_GLOBAL)
			if err == nil {
				return &lib{name: p, handle: h, syms: map[string]uintptr{}}, nil
			}
			tried = append(tried, fmt.Sprintf("%s: %v", p, err))
		}
	}
	return nil, fmt.Errorf("%s not found (%s)", what, strings.Join(tried, "; "))
}

// resolve looks up every name in required (an error lists the missing ones)
// and every name in optional (missing ones are left out).
func (l *lib) resolve(required, optional []string) error {
	var missing []string
	for _, n := range required {
		p, err := dl.Sym(l.handle, n)
		if err != nil || p == 0 {
			missing = append(missing, n)
			continue
		}
		l.syms[n] = p
	}
	for _, n := range optional {
		if p, err := dl.Sym(l.handle, n); err == nil && p != 0 {
			l.syms[n] = p
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s lacks %s", l.name, strings.Join(missing, ", "))
	}
	return nil
}

func (l *lib) has(name string) bool { _, ok := l.syms[name]; return ok }

// call calls the C function name with integer/pointer arguments and returns
// its integer result (the status code of every API used here). Pointers
// converted to uintptr in the argument list are moved to the heap and kept
// alive for the call (go:uintptrescapes, as purego.SyscallN).
//
//go:uintptrescapes
func (l *lib) call(name string, args ...uintptr) uintptr {
	p, ok := l.syms[name]
	if !ok {
		panic("cuda: symbol not resolved: " + name)
	}
	r, _, _ := purego.SyscallN(p, args...)
	return r
}

// cuda toolkit library folders: $CUDA_HOME, $CUDA_PATH, /usr/local/cuda.
func toolkitDirs() []string {
	var dirs []string
	for _, env := range []string{"CUDA_HOME", "CUDA_PATH"} {
		if d := os.Getenv(env); d != "" {
			dirs = append(dirs, d)
		}
	}
	return append(dirs, "/usr/local/cuda")
}

func toolkitGlobs(pattern string) []string {
	var g []string
	for _, d := range toolkitDirs() {
		g = append(g, filepath.Join(d, "lib64", pattern), filepath.Join(d, "targets", "x86_64-linux", "lib", pattern))
	}
	return g
}

// cString returns s as a NUL-terminated byte slice.
func cString(s string) []byte {
	b := make([]byte, len(s)+1)
	copy(b, s)
	return b
}

// goString copies the NUL-terminated C string at p (nil gives "").
func goString(p *byte) string {
	if p == nil {
		return ""
	}
	var b []byte
	for i := 0; i < 1<<16; i++ {
		c := *(*byte)(unsafe.Add(unsafe.Pointer(p), i))
		if c == 0 {
			break
		}
		b = append(b, c)
	}
	return string(b)
}

// cStrings is a C array of C strings (char**) that keeps its strings alive.
type cStrings struct {
	bufs [][]byte
	ptrs []uintptr
}

func newCStrings(ss []string) *cStrings {
	c := &cStrings{}
	for _, s := range ss {
		b := cString(s)
		c.bufs = append(c.bufs, b)
		c.ptrs = append(c.ptrs, uintptr(unsafe.Pointer(&b[0])))
	}
	return c
}
