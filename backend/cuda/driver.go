package cuda

import (
	"fmt"
	"runtime"
	"unsafe"
)

// CUDA driver API constants used here (cuda.h).
const (
	attrMultiprocessorCount      = 16
	attrL2CacheSize              = 38
	attrComputeCapabilityMajor   = 75
	attrComputeCapabilityMinor   = 76
	attrMaxSharedPerMultiproc    = 81
	attrMaxSharedPerBlockOptin   = 97
	funcAttrNumRegs              = 4
	funcAttrLocalSizeBytes       = 3
	funcAttrMaxDynamicSharedSize = 8
	funcAttrPreferredCarveout    = 9
	streamNonBlocking            = 1
	captureModeRelaxed           = 2
)

// devptr is a CUdeviceptr.
type devptr uint64

// driver is libcuda.so.1 with the entry points used here.
type driver struct {
	*lib
	elapsed string // cuEventElapsedTime_v2 or cuEventElapsedTime
	// stream is the backend's (non-blocking) stream once created: htod and
	// dtoh copy on it, so they are ordered with every kernel and async copy
	// the backend issues (see htod).
	stream uintptr
}

var driverRequired = []string{
	"cuInit", "cuDriverGetVersion", "cuDeviceGet", "cuDeviceGetCount", "cuDeviceGetName",
	"cuDeviceGetAttribute", "cuDeviceTotalMem_v2", "cuDeviceGetPCIBusId",
	"cuDevicePrimaryCtxRetain", "cuDevicePrimaryCtxRelease_v2", "cuCtxSetCurrent", "cuCtxSynchronize",
	"cuGetErrorName", "cuGetErrorString",
	"cuModuleLoadData", "cuModuleUnload", "cuModuleGetFunction", "cuFuncSetAttribute", "cuFuncGetAttribute",
	"cuLaunchKernel",
	"cuMemAlloc_v2", "cuMemFree_v2", "cuMemGetInfo_v2", "cuMemcpyHtoDAsync_v2", "cuMemcpyDtoHAsync_v2", "cuMemcpyDtoDAsync_v2",
	"cuMemsetD8Async", "cuMemsetD32Async",
	"cuStreamCreate", "cuStreamDestroy_v2", "cuStreamSynchronize",
	"cuEventCreate", "cuEventDestroy_v2", "cuEventRecord", "cuEventSynchronize",
	"cuStreamBeginCapture_v2", "cuStreamEndCapture", "cuGraphInstantiateWithFlags", "cuGraphLaunch",
	"cuGraphExecDestroy", "cuGraphDestroy",
}

// openDriver loads libcuda.so.1; without it there is no NVIDIA driver.
func openDriver() (*driver, error) {
	l, err := openLib("libcuda.so.1", []string{"libcuda.so.1", "libcuda.so"}, nil)
	if err != nil {
		return nil, fmt.Errorf("no NVIDIA driver: %w", err)
	}
	if err := l.resolve(driverRequired, []string{"cuEventElapsedTime_v2", "cuEventElapsedTime", "cuLaunchKernelEx", "cuGraphUpload", "cuMemAllocHost_v2", "cuMemFreeHost", "cuFuncLoad", "cuTensorMapEncodeTiled",
		"cuDeviceGetUuid_v2", "cuDeviceGetUuid"}); err != nil {
		return nil, fmt.Errorf("NVIDIA driver too old: %w", err)
	}
	d := &driver{lib: l}
	switch {
	case l.has("cuEventElapsedTime_v2"):
		d.elapsed = "cuEventElapsedTime_v2"
	case l.has("cuEventElapsedTime"):
		d.elapsed = "cuEventElapsedTime"
	default:
		return nil, fmt.Errorf("NVIDIA driver too old: %s lacks cuEventElapsedTime", l.name)
	}
	return d, nil
}

// check turns a CUresult into an error naming the call:
// "cuLaunchKernel: CUDA_ERROR_INVALID_VALUE (invalid argument)".
func (d *driver) check(call string, r uintptr) error {
	if int32(r) == 0 {
		return nil
	}
	var name, desc *byte
	d.call("cuGetErrorName", r, uintptr(unsafe.Pointer(&name)))
	d.call("cuGetErrorString", r, uintptr(unsafe.Pointer(&desc)))
	n, s := goString(name), goString(desc)
	if n == "" {
		n = fmt.Sprintf("CUresult %d", int32(r))
	}
	return &DriverError{Call: call, Code: int(int32(r)), Name: n, Desc: s}
}

// A DriverError is a failed CUDA driver call.
type DriverError struct {
	Call string // e.g. "cuLaunchKernel"
	Code int    // CUresult
	Name string // e.g. "CUDA_ERROR_ILLEGAL_ADDRESS"
	Desc string // the driver's error string
}

func (e *DriverError) Error() string {
	if e.Desc == "" {
		return fmt.Sprintf("%s: %s", e.Call, e.Name)
	}
	return fmt.Sprintf("%s: %s (%s)", e.Call, e.Name, e.Desc)
}

// do calls name and checks its status.
//
//go:uintptrescapes
func (d *driver) do(name string, args ...uintptr) error {
	return d.check(name, d.call(name, args...))
}

func (d *driver) attr(dev int32, a int) (int, error) {
	v := new(int32)
	if err := d.do("cuDeviceGetAttribute", uintptr(unsafe.Pointer(v)), uintptr(a), uintptr(dev)); err != nil {
		return 0, fmt.Errorf("attribute %d: %w", a, err)
	}
	return int(*v), nil
}

func (d *driver) alloc(bytes int64) (devptr, error) {
	p := new(devptr)
	if bytes <= 0 {
		bytes = 1
	}
	if err := d.do("cuMemAlloc_v2", uintptr(unsafe.Pointer(p)), uintptr(bytes)); err != nil {
		return 0, fmt.Errorf("allocate %d bytes: %w", bytes, err)
	}
	return *p, nil
}

func (d *driver) free(p devptr) error {
	if p == 0 {
		return nil
	}
	return d.do("cuMemFree_v2", uintptr(p))
}

// htod copies the bytes of src (a slice of fixed-size elements) to dst and
// waits until they are there.
//
// It copies on the backend's stream (cuMemcpyHtoDAsync_v2, then
// cuStreamSynchronize), not with the synchronous cuMemcpyHtoD_v2: that one
// runs on the legacy default stream, which a non-blocking stream is not
// ordered with, and from pageable memory it returns once the bytes are
// staged, before the DMA into dst has finished — a kernel launched next on
// the backend's stream could read dst before the copy lands. (Seen on the
// H200: the verification kernels' gather read stale or uninitialised
// indices — wrong sampled values and illegal addresses — in the first
// sweep that gathered on the device.)
func htod[T any](d *driver, dst devptr, src []T) error {
	if len(src) == 0 {
		return nil
	}
	n := uintptr(len(src)) * unsafe.Sizeof(src[0])
	err := d.do("cuMemcpyHtoDAsync_v2", uintptr(dst), uintptr(unsafe.Pointer(&src[0])), n, d.stream)
	if err == nil {
		err = d.do("cuStreamSynchronize", d.stream)
	}
	runtime.KeepAlive(src)
	return err
}

// dtoh copies len(dst) bytes from src once the work queued before it on
// the backend's stream has finished (the same stream as htod, for the same
// reason), and waits for the copy.
func (d *driver) dtoh(dst []byte, src devptr) error {
	if len(dst) == 0 {
		return nil
	}
	err := d.do("cuMemcpyDtoHAsync_v2", uintptr(unsafe.Pointer(&dst[0])), uintptr(src), uintptr(len(dst)), d.stream)
	if err == nil {
		err = d.do("cuStreamSynchronize", d.stream)
	}
	runtime.KeepAlive(dst)
	return err
}

// An event is a CUevent.
type event uintptr

func (d *driver) newEvent() (event, error) {
	e := new(uintptr)
	if err := d.do("cuEventCreate", uintptr(unsafe.Pointer(e)), 0); err != nil {
		return 0, err
	}
	return event(*e), nil
}

// elapsedMs is the time between two recorded, completed events.
func (d *driver) elapsedMs(start, end event) (float32, error) {
	ms := new(float32)
	if err := d.do(d.elapsed, uintptr(unsafe.Pointer(ms)), uintptr(start), uintptr(end)); err != nil {
		return 0, err
	}
	return *ms, nil
}

// launch runs fn with the kernel-parameter pointer array params on stream:
// cuLaunchKernel, or cuLaunchKernelEx with launch attributes when cluster is
// non-zero (cluster dimension) or pdl is set (programmatic stream
// serialisation: the launch may overlap the previous kernel's tail).
func (d *driver) launch(fn uintptr, grid, block [3]int, smem int, cluster [3]int, pdl bool, stream uintptr, params unsafe.Pointer) error {
	if cluster == [3]int{} && !pdl {
		return d.do("cuLaunchKernel", fn, uintptr(grid[0]), uintptr(grid[1]), uintptr(grid[2]),
			uintptr(block[0]), uintptr(block[1]), uintptr(block[2]), uintptr(smem), stream, uintptr(params), 0)
	}
	if !d.has("cuLaunchKernelEx") {
		return fmt.Errorf("cluster or programmatic launch: the driver has no cuLaunchKernelEx")
	}
	cfg, attrs := launchConfig(grid, block, smem, cluster, pdl, stream)
	err := d.do("cuLaunchKernelEx", uintptr(unsafe.Pointer(cfg)), fn, uintptr(params), 0)
	runtime.KeepAlive(attrs)
	runtime.KeepAlive(cfg)
	return err
}

// launchConfig lays out a CUlaunchConfig: grid x,y,z, block x,y,z, shared
// bytes (7 u32, padded to 32 bytes), stream, attrs, numAttrs (u32,
// padded); attrs must stay alive as long as the config is used.
func launchConfig(grid, block [3]int, smem int, cluster [3]int, pdl bool, stream uintptr) (*[7]uint64, *[18]uint64) {
	attrs, n := launchAttrs(cluster, pdl)
	cfg := new([7]uint64)
	cfg[0] = uint64(uint32(grid[0])) | uint64(uint32(grid[1]))<<32
	cfg[1] = uint64(uint32(grid[2])) | uint64(uint32(block[0]))<<32
	cfg[2] = uint64(uint32(block[1])) | uint64(uint32(block[2]))<<32
	cfg[3] = uint64(uint32(smem))
	cfg[4] = uint64(stream)
	cfg[5] = uint64(uintptr(unsafe.Pointer(attrs)))
	cfg[6] = uint64(n)
	return cfg, attrs
}

// maxActiveClusters is how many clusters of shape cluster of fn's launch
// (grid, block, smem) can be resident on the device at once
// (cuOccupancyMaxActiveClusters, resolved on first use: drivers before
// CUDA 11.8 lack it).
func (d *driver) maxActiveClusters(fn uintptr, grid, block [3]int, smem int, cluster [3]int) (int, error) {
	const name = "cuOccupancyMaxActiveClusters"
	if !d.has(name) {
		if err := d.resolve(nil, []string{name}); err != nil || !d.has(name) {
			return 0, fmt.Errorf("the driver has no %s", name)
		}
	}
	cfg, attrs := launchConfig(grid, block, smem, cluster, false, 0)
	n := new(int32)
	err := d.do(name, uintptr(unsafe.Pointer(n)), fn, uintptr(unsafe.Pointer(cfg)))
	runtime.KeepAlive(attrs)
	runtime.KeepAlive(cfg)
	return int(*n), err
}

// launchAttrs lays out the CUlaunchAttribute array of a launch: each is an
// id (u32), 4 bytes of padding and a 64-byte value union (9 words); the
// cluster dimension's value is three u32, programmatic stream
// serialisation's one int (1 = allowed).
func launchAttrs(cluster [3]int, pdl bool) (*[18]uint64, int) {
	a := new([18]uint64)
	n := 0
	if cluster != [3]int{} {
		a[9*n] = launchAttrClusterDimension
		a[9*n+1] = uint64(uint32(cluster[0])) | uint64(uint32(cluster[1]))<<32
		a[9*n+2] = uint64(uint32(cluster[2]))
		n++
	}
	if pdl {
		a[9*n] = launchAttrProgrammaticStreamSerialization
		a[9*n+1] = 1
		n++
	}
	return a, n
}

// launchAttrProgrammaticStreamSerialization is
// CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION.
const launchAttrProgrammaticStreamSerialization = 6

// launchAttrClusterDimension is CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION.
const launchAttrClusterDimension = 4

// uuid reads device dev's UUID (cuDeviceGetUuid_v2, else cuDeviceGetUuid:
// CUresult (CUuuid *uuid, CUdevice dev), CUuuid being 16 bytes) and
// formats it as nvidia-smi does; ok is false when the driver has neither.
func (d *driver) uuid(dev int32) (string, bool, error) {
	for _, name := range []string{"cuDeviceGetUuid_v2", "cuDeviceGetUuid"} {
		if !d.has(name) {
			continue
		}
		var u [16]byte
		if err := d.do(name, uintptr(unsafe.Pointer(&u[0])), uintptr(dev)); err != nil {
			return "", false, err
		}
		return formatUUID(u), true, nil
	}
	return "", false, nil
}

// formatUUID writes a device UUID the way nvidia-smi -L does:
// GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx, the 16 bytes in order.
func formatUUID(u [16]byte) string {
	return fmt.Sprintf("GPU-%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
}
