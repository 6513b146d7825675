package cuda

import (
	"sync"
	"unsafe"
)

// maxIdleModules is how many loaded modules no Kernel uses the backend
// keeps (the oldest idle one is unloaded past it): a sweep's candidates
// are the same artifacts in every cell of an operator (~100–130 on the
// strata workload), so each is loaded once, not once a cell.
const maxIdleModules = 1024

// modules are the CUDA modules a backend has loaded, by artifact file
// (its name holds the artifact's key), shared by the Kernels loaded from
// them: a module stays loaded after its kernels close, until the backend
// closes or it is the oldest of more than maxIdleModules idle ones. (Each
// cell loaded and unloaded every candidate's module: 2.2 s of load phases
// over the strata sweep on the H200, and the first launch of each
// function in a freshly loaded module pays the driver's lazy loading in
// the verify phase.)
type modules struct {
	mu    sync.Mutex
	byKey map[string]*module
	tick  uint64
}

// A module is one loaded CUBIN: its functions by entry name, the dynamic
// shared memory limit set on each (the largest any plan asked for), and
// how many open Kernels use it.
type module struct {
	key   string
	mod   uintptr
	fns   map[string]uintptr
	smem  map[uintptr]int
	attrs map[uintptr][2]int // registers, local bytes
	refs  int
	used  uint64 // tick of the last release
}

// acquire returns the loaded module of key, or loads image (device thread)
// and records it; the caller holds a reference until release.
func (b *Backend) acquire(key string, image []byte) (*module, error) {
	ms := &b.mods
	ms.mu.Lock()
	defer ms.mu.Unlock()
	if m, ok := ms.byKey[key]; ok {
		m.refs++
		return m, nil
	}
	mod := new(uintptr)
	if err := b.drv.do("cuModuleLoadData", uintptr(unsafe.Pointer(mod)), uintptr(unsafe.Pointer(&image[0]))); err != nil {
		return nil, err
	}
	if ms.byKey == nil {
		ms.byKey = map[string]*module{}
	}
	m := &module{key: key, mod: *mod, fns: map[string]uintptr{}, smem: map[uintptr]int{}, attrs: map[uintptr][2]int{}, refs: 1}
	ms.byKey[key] = m
	return m, nil
}

// release drops a reference to m and unloads the oldest idle modules past
// maxIdleModules (device thread).
func (b *Backend) release(m *module) error {
	ms := &b.mods
	ms.mu.Lock()
	defer ms.mu.Unlock()
	m.refs--
	ms.tick++
	m.used = ms.tick
	return b.evictLocked(maxIdleModules)
}

// discard unloads m at once (device thread): a module whose functions or
// attributes could not be set up is not kept.
func (b *Backend) discard(m *module) {
	ms := &b.mods
	ms.mu.Lock()
	defer ms.mu.Unlock()
	delete(ms.byKey, m.key)
	b.drv.call("cuModuleUnload", m.mod)
}

// evictLocked unloads idle modules, oldest first, until at most keep are
// idle (device thread, ms.mu held).
func (b *Backend) evictLocked(keep int) error {
	ms := &b.mods
	for {
		var idle []*module
		for _, m := range ms.byKey {
			if m.refs <= 0 {
				idle = append(idle, m)
			}
		}
		if len(idle) <= keep {
			return nil
		}
		oldest := idle[0]
		for _, m := range idle[1:] {
			if m.used < oldest.used {
				oldest = m
			}
		}
		delete(ms.byKey, oldest.key)
		if err := b.drv.do("cuModuleUnload", oldest.mod); err != nil {
			return err
		}
	}
}

// loadedModules is how many modules are loaded (for tests).
func (b *Backend) loadedModules() int {
	b.mods.mu.Lock()
	defer b.mods.mu.Unlock()
	return len(b.mods.byKey)
}

// unloadModules unloads every module (device thread, from Close).
func (b *Backend) unloadModules() error {
	ms := &b.mods
	ms.mu.Lock()
	defer ms.mu.Unlock()
	var first error
	for k, m := range ms.byKey {
		if err := b.drv.do("cuModuleUnload", m.mod); err != nil && first == nil {
			first = err
		}
		delete(ms.byKey, k)
	}
	return first
}
