package layout

import (
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/tilefit/tilefit"

// root is the module's root directory (this package is internal/layout).
func root(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		t.Fatal(err)
	}
	return dir
}

// imports returns the module packages pkg imports in its non-test files,
// with cgo on and off (a file behind either build constraint counts).
func imports(t *testing.T, dir, pkg string) []string {
	t.Helper()
	seen := map[string]bool{}
	for _, cgo := range []bool{false, true} {
		ctx := build.Default
		ctx.CgoEnabled = cgo
		p, err := ctx.ImportDir(filepath.Join(dir, filepath.FromSlash(strings.TrimPrefix(pkg, module))), 0)
		if err != nil {
			t.Fatalf("%s: %v", pkg, err)
		}
		for _, imp := range p.Imports {
			if imp == module || strings.HasPrefix(imp, module+"/") {
				seen[imp] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for imp := range seen {
		out = append(out, imp)
	}
	sort.Strings(out)
	return out
}

// deps returns the module packages pkg depends on, transitively, itself
// excluded, each with the chain of imports that reaches it from pkg.
func deps(t *testing.T, dir, pkg string) map[string][]string {
	t.Helper()
	via := map[string][]string{}
	queue := []string{pkg}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, imp := range imports(t, dir, p) {
			if _, ok := via[imp]; ok || imp == pkg {
				continue
			}
			via[imp] = append(append([]string(nil), via[p]...), imp)
			queue = append(queue, imp)
		}
	}
	return via
}

// TestKernelIsTheContract checks that package kernel imports no other
// package of the module (the built-in catalogue included) and declares no
// operators, families or baselines of its own: no package-level function
// returning an *Operator, *Family or *Baseline, and no embedded source.
func TestKernelIsTheContract(t *testing.T) {
	dir := root(t)
	if d := deps(t, dir, module+"/kernel"); len(d) > 0 {
		for p, chain := range d {
			t.Errorf("kernel depends on %s (kernel → %s): the contract must stand alone", p, strings.Join(chain, " → "))
		}
	}
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(dir, "kernel", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for _, cg := range f.Comments {
			for _, c := range cg.List {
				if strings.HasPrefix(c.Text, "//go:embed") {
					t.Errorf("%s: kernel embeds a source (%s): sources belong to package builtin", fset.Position(c.Pos()), c.Text)
				}
			}
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || fn.Type.Results == nil {
				continue
			}
			for _, r := range fn.Type.Results.List {
				if star, ok := r.Type.(*ast.StarExpr); ok {
					if id, ok := star.X.(*ast.Ident); ok && slices.Contains([]string{"Operator", "Family", "Baseline"}, id.Name) {
						t.Errorf("%s: kernel.%s returns a *%s: built-in declarations belong to package builtin", fset.Position(fn.Pos()), fn.Name.Name, id.Name)
					}
				}
			}
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "kernel", "src")); err == nil {
		t.Errorf("kernel/src exists: the C and CUDA sources belong to builtin/src")
	}
}

// TestBuiltinOnlyNeedsKernel checks that the catalogue is written against
// the contract alone: package builtin imports no module package but kernel.
func TestBuiltinOnlyNeedsKernel(t *testing.T) {
	got := imports(t, root(t), module+"/builtin")
	if want := []string{module + "/kernel"}; !slices.Equal(got, want) {
		t.Errorf("builtin imports %v of the module, want only %v", got, want)
	}
}

// TestStoreReadsWithoutTheCatalogue checks that the packages that store and
// read results decode a Dims or Params from kernel without the built-in
// catalogue: none of them depends on package builtin, directly or not.
func TestStoreReadsWithoutTheCatalogue(t *testing.T) {
	dir := root(t)
	for _, pkg := range []string{"store", "policy", "result", "stats", "verify"} {
		if chain, ok := deps(t, dir, module+"/"+pkg)[module+"/builtin"]; ok {
			t.Errorf("%s depends on the catalogue: %s → %s", pkg, pkg, strings.Join(chain, " → "))
		}
	}
}
