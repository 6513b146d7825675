package cuda

import (
	"fmt"
	"runtime"
	"testing"
	"unsafe"

	"github.com/ebitengine/purego"
)

// fakeCopyDriver is a driver whose copy and synchronisation entry points
// are Go callbacks that record their calls (no device, no libcuda).
func fakeCopyDriver(t *testing.T, stream uintptr) (*driver, *[]string) {
	t.Helper()
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("purego callbacks need linux or darwin")
	}
	var calls []string
	rec := func(name string) uintptr {
		return purego.NewCallback(func(a, b, c, d uintptr) uintptr {
			calls = append(calls, fmt.Sprintf("%s %#x %#x %#x %#x", name, a, b, c, d))
			return 0
		})
	}
	l := &lib{name: "fake", syms: map[string]uintptr{}}
	for _, n := range []string{"cuMemcpyHtoDAsync_v2", "cuMemcpyDtoHAsync_v2", "cuStreamSynchronize"} {
		l.syms[n] = rec(n)
	}
	return &driver{lib: l, stream: stream}, &calls
}

// TestCopiesAreOrderedOnTheBackendStream: htod and dtoh copy on the
// backend's non-blocking stream and wait for it. The synchronous
// cuMemcpyHtoD_v2 they used before runs on the legacy stream, which a
// non-blocking stream is not ordered with, and returns before its DMA from
// pageable memory lands: on the H200 the device-side gather then read
// stale or uninitialised indices (wrong samples, illegal addresses). The
// fake driver resolves no synchronous copy, so the old code panics here.
func TestCopiesAreOrderedOnTheBackendStream(t *testing.T) {
	const stream = 0x5eed
	d, calls := fakeCopyDriver(t, stream)
	src := []uint64{1, 2, 3}
	if err := htod(d, devptr(0x1000), src); err != nil {
		t.Fatal(err)
	}
	dst := make([]byte, 8)
	if err := d.dtoh(dst, devptr(0x2000)); err != nil {
		t.Fatal(err)
	}
	want := []string{
		fmt.Sprintf("cuMemcpyHtoDAsync_v2 %#x %#x %#x %#x", 0x1000, uintptr(unsafe.Pointer(&src[0])), 24, stream),
		fmt.Sprintf("cuStreamSynchronize %#x", stream),
		fmt.Sprintf("cuMemcpyDtoHAsync_v2 %#x %#x %#x %#x", uintptr(unsafe.Pointer(&dst[0])), 0x2000, 8, stream),
		fmt.Sprintf("cuStreamSynchronize %#x", stream),
	}
	if len(*calls) != len(want) {
		t.Fatalf("calls:\n%q\nwant:\n%q", *calls, want)
	}
	for i, w := range want {
		got := (*calls)[i]
		if len(got) < len(w) || got[:len(w)] != w {
			t.Errorf("call %d: %q, want %q…", i, got, w)
		}
	}
}
