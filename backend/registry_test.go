package backend

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
)

// TestRegistry: names in the order added, openers by name with their
// device ordinal, refusals for a bad or repeated name and a nil opener, and
// an unknown name refused with the known ones.
func TestRegistry(t *testing.T) {
	var r Registry
	var got []int
	open := func(name string) Opener {
		return func(ctx context.Context, device int) (Backend, error) {
			got = append(got, device)
			return nil, errors.New(name + " opened")
		}
	}
	for _, n := range []string{"zeta", "alpha"} {
		if err := r.Add(n, open(n)); err != nil {
			t.Fatal(err)
		}
	}
	if n := r.Names(); !slices.Equal(n, []string{"zeta", "alpha"}) {
		t.Errorf("Names() = %v, want [zeta alpha] (the order added)", n)
	}
	if _, err := r.Open(context.Background(), "alpha", 3); err == nil || err.Error() != "alpha opened" || !slices.Equal(got, []int{3}) {
		t.Errorf("Open(alpha, 3): %v, devices %v", err, got)
	}
	for _, bad := range []string{"", "a,b", "a:b", "a b"} {
		if err := r.Add(bad, open(bad)); err == nil {
			t.Errorf("Add(%q) accepted", bad)
		}
	}
	if err := r.Add("zeta", open("zeta")); err == nil {
		t.Error("a second zeta was accepted")
	}
	if err := r.Add("nil", nil); err == nil {
		t.Error("a nil opener was accepted")
	}
	if _, err := r.Open(context.Background(), "tpu", 0); err == nil || !strings.Contains(err.Error(), `unknown backend "tpu" (known: zeta, alpha)`) {
		t.Errorf("Open(tpu): %v", err)
	}
	var none *Registry
	if none.Opener("x") != nil || none.Names() != nil {
		t.Error("a nil registry knows a backend")
	}
}
