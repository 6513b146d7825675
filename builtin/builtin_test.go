package builtin

import (
	"strings"
	"testing"

	"github.com/tilefit/tilefit/kernel"
)

// TestRegister checks that Register fills a registry the caller built with
// every built-in family and baseline, refuses to register them twice, and
// that every registry gets its own copies (no state shared between two).
func TestRegister(t *testing.T) {
	r, err := kernel.NewRegistry()
	if err != nil {
		t.Fatal(err)
	}
	if err := Register(r); err != nil {
		t.Fatal(err)
	}
	if got, want := len(r.Families()), len(Families()); got != want || got == 0 {
		t.Fatalf("Register added %d families, want %d", got, want)
	}
	for _, f := range Families() {
		if _, err := r.Lookup(f.Backend, f.Name); err != nil {
			t.Errorf("%s/%s not registered: %v", f.Backend, f.Name, err)
		}
	}
	for _, b := range Baselines() {
		found := false
		for _, g := range r.Baselines(b.Backend, b.Operator) {
			found = found || g.Name == b.Name
		}
		if !found {
			t.Errorf("baseline %s/%s of %s not registered", b.Backend, b.Name, b.Operator)
		}
	}
	if err := Register(r); err == nil || !strings.Contains(err.Error(), "registered twice") {
		t.Errorf("second Register: %v, want a family registered twice", err)
	}

	a, b := New(), New()
	fa, err := a.Lookup("cuda", "gemm_wgmma")
	if err != nil {
		t.Fatal(err)
	}
	fb, err := b.Lookup("cuda", "gemm_wgmma")
	if err != nil {
		t.Fatal(err)
	}
	if fa == fb || fa.Operator == fb.Operator {
		t.Errorf("two registries share a family or operator value")
	}
	fa.Source += "// edited"
	if fb.Source == fa.Source {
		t.Errorf("editing one registry's family changed the other's")
	}
}
