package cuda

import (
	"bytes"
	"encoding/binary"
	"unsafe"
)

// guardPattern is GuardWord repeated over 4 KiB + 3 bytes: any run of the
// pattern starting at phase p (0–3) is guardPattern[p:p+n] for n ≤ 4 KiB.
var guardPattern = func() []byte {
	b := make([]byte, 4096+3)
	var w [4]byte
	binary.LittleEndian.PutUint32(w[:], GuardWord)
	for i := range b {
		b[i] = w[i%4]
	}
	return b
}()

// firstLost returns the index in buf of the first byte that differs from
// the guard pattern, buf[0] being byte start of the allocation (the
// pattern's phase is start mod 4), or −1 when none does. It compares 4 KiB
// at a time (memcmp speed) and looks byte by byte only inside a block that
// differs: the 64 KiB guard regions of every output are checked after
// every verification run (a loop over bytes with a modulo took ~0.1 ms a
// region).
func firstLost(buf []byte, start int64) int64 {
	ph := int(start % 4)
	for off := 0; off < len(buf); off += 4096 {
		n := min(4096, len(buf)-off)
		pat := guardPattern[(ph+off)%4:][:n]
		if bytes.Equal(buf[off:off+n], pat) {
			continue
		}
		for j := 0; j < n; j++ {
			if buf[off+j] != pat[j] {
				return int64(off + j)
			}
		}
	}
	return -1
}

// pinned is a backend's page-locked host buffer (cuMemAllocHost), grown
// on demand (device thread): the guard regions and small results are
// copied into it asynchronously, so that one stream synchronization
// covers a whole verification step (a copy into pageable memory waits on
// its own).
type pinned struct {
	ptr unsafe.Pointer // host memory from the driver, not Go's
	n   int
	err error // why there is none (no cuMemAllocHost, or it failed)
}

// pinnedBytes returns n bytes of the backend's pinned buffer, or nil when
// page-locked memory is not available (the callers then copy into
// pageable memory, as before). The bytes are valid until the next call
// (device thread).
func (b *Backend) pinnedBytes(n int) []byte {
	pn := &b.pin
	if n <= 0 {
		n = 1
	}
	if pn.n >= n {
		return unsafe.Slice((*byte)(pn.ptr), pn.n)[:n]
	}
	if pn.err != nil || !b.drv.has("cuMemAllocHost_v2") || !b.drv.has("cuMemFreeHost") {
		return nil
	}
	if pn.ptr != nil {
		_ = b.drv.do("cuMemFreeHost", uintptr(pn.ptr))
		pn.ptr, pn.n = nil, 0
	}
	size := max(n, 1<<20)
	p := new(unsafe.Pointer)
	if err := b.drv.do("cuMemAllocHost_v2", uintptr(unsafe.Pointer(p)), uintptr(size)); err != nil {
		pn.err = err
		return nil
	}
	pn.ptr, pn.n = *p, size
	return unsafe.Slice((*byte)(pn.ptr), pn.n)[:n]
}

// freePinned releases the pinned buffer (device thread, from Close).
func (b *Backend) freePinned() error {
	if b.pin.ptr == nil {
		return nil
	}
	err := b.drv.do("cuMemFreeHost", uintptr(b.pin.ptr))
	b.pin.ptr, b.pin.n = nil, 0
	return err
}

// dtohAsync queues a copy of len(dst) bytes from src into dst, pinned
// memory, on the backend's stream (the caller synchronizes).
func (d *driver) dtohAsync(dst []byte, src devptr) error {
	if len(dst) == 0 {
		return nil
	}
	return d.do("cuMemcpyDtoHAsync_v2", uintptr(unsafe.Pointer(&dst[0])), uintptr(src), uintptr(len(dst)), d.stream)
}
