package cuda

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"unsafe"

	"github.com/ebitengine/purego"
)

// NVRTC result codes used here (nvrtc.h).
const (
	nvrtcSuccess       = 0
	nvrtcInvalidOption = 5
	nvrtcCompilation   = 6
)

// nvrtc is libnvrtc with the entry points used here. Its calls are safe
// from several goroutines at once: each compilation has its own program.
type nvrtc struct {
	*lib
	major, minor int
	errorString  func(int32) string
}

// openNVRTC loads NVRTC: $TILEFIT_NVRTC when set, then the sonames
// libnvrtc.so.13, libnvrtc.so.12, libnvrtc.so, then the toolkit folders
// ($CUDA_HOME, $CUDA_PATH, /usr/local/cuda: lib64/libnvrtc.so*).
func openNVRTC() (*nvrtc, error) {
	names := []string{"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"}
	if p := os.Getenv("TILEFIT_NVRTC"); p != "" {
		names = append([]string{p}, names...)
	}
	l, err := openLib("NVRTC (libnvrtc.so)", names, toolkitGlobs("libnvrtc.so*"))
	if err != nil {
		return nil, err
	}
	req := []string{"nvrtcVersion", "nvrtcCreateProgram", "nvrtcCompileProgram", "nvrtcDestroyProgram",
		"nvrtcGetProgramLogSize", "nvrtcGetProgramLog", "nvrtcGetCUBINSize", "nvrtcGetCUBIN", "nvrtcGetErrorString"}
	if err := l.resolve(req, nil); err != nil {
		return nil, err
	}
	n := &nvrtc{lib: l}
	purego.RegisterFunc(&n.errorString, l.syms["nvrtcGetErrorString"])
	major, minor := new(int32), new(int32)
	if r := l.call("nvrtcVersion", uintptr(unsafe.Pointer(major)), uintptr(unsafe.Pointer(minor))); r != nvrtcSuccess {
		return nil, fmt.Errorf("nvrtcVersion: %s", n.errorString(int32(r)))
	}
	n.major, n.minor = int(*major), int(*minor)
	return n, nil
}

// Version is "nvrtc MAJOR.MINOR".
func (n *nvrtc) Version() string { return fmt.Sprintf("nvrtc %d.%d", n.major, n.minor) }

// nvrtcError is a failed NVRTC call.
type nvrtcError struct {
	Call string
	Code int
	Msg  string
}

func (e *nvrtcError) Error() string { return fmt.Sprintf("%s: %s", e.Call, e.Msg) }

func (n *nvrtc) check(call string, r uintptr) error {
	if int32(r) == nvrtcSuccess {
		return nil
	}
	return &nvrtcError{Call: call, Code: int(int32(r)), Msg: n.errorString(int32(r))}
}

// compile compiles src (named name) with opts to a CUBIN. It returns the
// compiler log in every case; err is an *nvrtcError.
func (n *nvrtc) compile(src, name string, opts []string) (cubin []byte, log string, err error) {
	prog := new(uintptr)
	csrc, cname := cString(src), cString(name)
	if err := n.check("nvrtcCreateProgram", n.call("nvrtcCreateProgram", uintptr(unsafe.Pointer(prog)),
		uintptr(unsafe.Pointer(&csrc[0])), uintptr(unsafe.Pointer(&cname[0])), 0, 0, 0)); err != nil {
		return nil, "", err
	}
	defer n.call("nvrtcDestroyProgram", uintptr(unsafe.Pointer(prog)))
	copts := newCStrings(opts)
	var optv uintptr
	if len(copts.ptrs) > 0 {
		optv = uintptr(unsafe.Pointer(&copts.ptrs[0]))
	}
	cerr := n.check("nvrtcCompileProgram", n.call("nvrtcCompileProgram", *prog, uintptr(len(opts)), optv))
	runtime.KeepAlive(copts)
	runtime.KeepAlive(csrc)
	runtime.KeepAlive(cname)

	logSize := new(uintptr)
	if err := n.check("nvrtcGetProgramLogSize", n.call("nvrtcGetProgramLogSize", *prog, uintptr(unsafe.Pointer(logSize)))); err != nil {
		return nil, "", err
	}
	if *logSize > 1 {
		buf := make([]byte, *logSize)
		if err := n.check("nvrtcGetProgramLog", n.call("nvrtcGetProgramLog", *prog, uintptr(unsafe.Pointer(&buf[0])))); err != nil {
			return nil, "", err
		}
		log = strings.TrimRight(string(buf), "\x00\n ")
	}
	if cerr != nil {
		return nil, log, cerr
	}
	size := new(uintptr)
	if err := n.check("nvrtcGetCUBINSize", n.call("nvrtcGetCUBINSize", *prog, uintptr(unsafe.Pointer(size)))); err != nil {
		return nil, log, err
	}
	if *size == 0 {
		return nil, log, fmt.Errorf("nvrtcGetCUBINSize: empty CUBIN (was a virtual architecture given?)")
	}
	cubin = make([]byte, *size)
	if err := n.check("nvrtcGetCUBIN", n.call("nvrtcGetCUBIN", *prog, uintptr(unsafe.Pointer(&cubin[0])))); err != nil {
		return nil, log, err
	}
	return cubin, log, nil
}
