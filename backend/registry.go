package backend

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// An Opener opens a backend on device ordinal device (the GPU of a CUDA
// host; a backend with one device refuses any ordinal but 0).
type Opener func(ctx context.Context, device int) (Backend, error)

// A Registry is the set of backends one tilefit binary knows, by name, in
// the order they were added: the binary builds it (tilefit.Builtin adds
// cpu and cuda) and every verb and worker process opens backends through
// it, so a program can add a backend of its own. The zero Registry is
// empty and ready to use.
type Registry struct {
	names []string
	open  map[string]Opener
}

// Add registers open under name. It refuses an empty name, a name with
// a comma, colon or space (names are listed in flags such as
// --tiles cuda:TILE), a nil opener and a name added before.
func (r *Registry) Add(name string, open Opener) error {
	switch {
	case name == "" || strings.ContainsAny(name, ",: \t"):
		return fmt.Errorf("backend name %q: want a non-empty word without commas, colons or spaces", name)
	case open == nil:
		return fmt.Errorf("backend %s: nil opener", name)
	case r.open[name] != nil:
		return fmt.Errorf("backend %s is registered twice", name)
	}
	if r.open == nil {
		r.open = map[string]Opener{}
	}
	r.names = append(r.names, name)
	r.open[name] = open
	return nil
}

// Names returns the registered names in the order they were added.
func (r *Registry) Names() []string {
	if r == nil {
		return nil
	}
	return slices.Clone(r.names)
}

// Opener returns the opener registered under name, or nil.
func (r *Registry) Opener(name string) Opener {
	if r == nil {
		return nil
	}
	return r.open[name]
}

// Check returns an error naming the known backends when name is not one
// of them.
func (r *Registry) Check(name string) error {
	if r.Opener(name) != nil {
		return nil
	}
	return fmt.Errorf("unknown backend %q (known: %s)", name, strings.Join(r.Names(), ", "))
}

// Open opens backend name on device ordinal device.
func (r *Registry) Open(ctx context.Context, name string, device int) (Backend, error) {
	if err := r.Check(name); err != nil {
		return nil, err
	}
	return r.open[name](ctx, device)
}
