// Package dl wraps purego's dlopen and dlsym so that each call and the
// dlerror it reads on failure run on one locked OS thread: dlerror is per
// thread, and a goroutine that moved between the two would report an empty
// or foreign error.
package dl

import (
	"runtime"

	"github.com/ebitengine/purego"
)

// Open is purego.Dlopen(path, mode) on a locked OS thread.
func Open(path string, mode int) (uintptr, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return purego.Dlopen(path, mode)
}

// Sym is purego.Dlsym(h, name) on a locked OS thread.
func Sym(h uintptr, name string) (uintptr, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return purego.Dlsym(h, name)
}
