// Package cuda is the CUDA backend: the driver API, NVRTC, cuBLAS and NVML
// loaded at run time through purego (no cgo; the package builds and its
// tests skip on a machine without a GPU).
//
// One goroutine locked to its OS thread owns the device's primary context;
// every driver and cuBLAS call runs on it. NVRTC compiles run on the calling
// goroutine, several at once. Kernel sources are compiled for the device's
// architecture (sm_90a on Hopper) with parameters as -D defines, and the
// CUBINs cached on disk under a key that hashes the source, the defines, the
// options, the NVRTC version and the driver version.
package cuda

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/tilefit/tilefit/backend"
)

// Timing modes of Problem.Time.
const (
	// TimingAuto times a kernel with a CUDA graph when one dispatch takes
	// less than Options.GraphBelow per launch of its plan, else with events
	// around plain launches.
	TimingAuto = "auto"
	// TimingEvents: CUDA events around n plain launches.
	TimingEvents = "events"
	// TimingGraph: the n launches captured once into a CUDA graph (per
	// kernel, n and first set) and the graph replayed between events.
	TimingGraph = "graph"
)

// Options configure the CUDA backend.
type Options struct {
	// CacheDir holds compiled CUBINs; "" is $XDG_CACHE_HOME/tilefit/cuda
	// (os.UserCacheDir), or a temporary folder when there is none.
	CacheDir string
	// Device is the CUDA device ordinal.
	Device int
	// Timing is TimingAuto (""), TimingEvents or TimingGraph.
	Timing string
	// GraphBelow is the time per dispatch and launch under which
	// TimingAuto uses a graph (default 20 µs: a one-launch dispatch under
	// 20 µs, a three-launch one under 60 µs).
	GraphBelow time.Duration
}

// Backend is the CUDA backend for one device. It implements
// backend.Backend (vendor launches through cuBLAS), backend.Sensor (NVML)
// and backend.Ceilings.
type Backend struct {
	opts Options
	drv  *driver
	w    *worker

	nv    *nvrtc
	nvErr error
	blas  *cublas
	blErr error
	ml    *nvml
	mlErr error

	dev        int32
	count      int    // CUDA devices on the host
	uuid       string // the device's UUID ("GPU-…"), or "pci:BUS" when the driver cannot tell
	ctx        uintptr
	stream     uintptr
	evStart    event
	evEnd      event
	name       string
	busID      string
	ccMajor    int
	ccMinor    int
	sms        int
	l2         int
	smemOptin  int
	smemPerSM  int
	totalMem   int64
	driverVer  int    // cuDriverGetVersion, e.g. 13000
	driverName string // e.g. "580.82.07 (CUDA 13.0)"

	archOnce sync.Once
	arch     string // e.g. "sm_90a"
	archErr  error

	handleOnce sync.Once
	handle     *blasHandle
	handleErr  error

	lt    ltState // cuBLASLt (cublaslt.go)
	ltErr error

	ceilOnce sync.Once
	ceil     map[string]string
	ceilErr  error

	closeOnce sync.Once

	verify verifyModule // the verification kernels (verify.go)
	mods   modules      // the candidates' loaded modules (modules.go)
	pin    pinned       // page-locked read-back buffer (guards.go)

	steps *steps // how long New's steps took (StartupSteps)
	// verifyPre is closed once New's background compile of the
	// verification kernels has ended (nil: none was started).
	verifyPre chan struct{}
}

var (
	_ backend.Backend  = (*Backend)(nil)
	_ backend.Sensor   = (*Backend)(nil)
	_ backend.Ceilings = (*Backend)(nil)
)

// New opens device o.Device: it loads libcuda.so.1 (an error starting "no
// NVIDIA driver" when it is missing), creates the device thread, retains the
// primary context and a stream, and loads NVRTC, cuBLAS and NVML (each
// optional: a missing one fails only the calls that need it).
func New(o Options) (*Backend, error) {
	if o.Timing == "" {
		o.Timing = TimingAuto
	}
	switch o.Timing {
	case TimingAuto, TimingEvents, TimingGraph:
	default:
		return nil, fmt.Errorf("cuda: timing mode %q (want auto, events or graph)", o.Timing)
	}
	if o.GraphBelow <= 0 {
		o.GraphBelow = 20 * time.Microsecond
	}
	if o.CacheDir == "" {
		if d, err := os.UserCacheDir(); err == nil {
			o.CacheDir = filepath.Join(d, "tilefit", "cuda")
		} else {
			o.CacheDir = filepath.Join(os.TempDir(), "tilefit-cuda-cache")
		}
	}
	st := newSteps()
	drv, err := openDriver()
	if err != nil {
		return nil, err
	}
	st.step("libcuda")
	b := &Backend{opts: o, drv: drv, w: newWorker(), steps: st}
	// The libraries load while the driver opens the device (none of them
	// calls the driver to load): cuInit and the context, NVRTC, cuBLAS
	// and cuBLASLt took 0.25 + 0.17 + 0.16 + 0.37 s one after another on
	// the H200 host. NVRTC's goroutine then probes the target (Arch) once
	// the device's compute capability is known, and compiles the
	// verification kernels into the cache in the background.
	opened := make(chan bool, 1)
	b.verifyPre = make(chan struct{})
	var libs sync.WaitGroup
	libs.Add(2)
	go func() {
		defer libs.Done()
		t0 := time.Now()
		b.nv, b.nvErr = openNVRTC()
		st.add("nvrtc", time.Since(t0))
		if b.nv == nil || !<-opened {
			close(b.verifyPre)
			return
		}
		t0 = time.Now()
		_, _ = b.Arch()
		st.add("arch probe", time.Since(t0))
		go func() {
			defer close(b.verifyPre)
			b.precompileVerify()
		}()
	}()
	go func() {
		defer libs.Done()
		t0 := time.Now()
		b.blas, b.blErr = openCuBLAS()
		st.add("cublas", time.Since(t0))
		t0 = time.Now()
		b.lt.lib, b.ltErr = openCuBLASLt()
		st.add("cublaslt", time.Since(t0))
	}()
	if err := b.w.do(context.Background(), b.open); err != nil {
		opened <- false
		libs.Wait()
		b.w.stop()
		return nil, err
	}
	opened <- true
	t0 := time.Now()
	b.ml, b.mlErr = openNVML(b.busID, o.Device)
	st.add("nvml", time.Since(t0))
	libs.Wait()
	if b.ml != nil {
		if v := b.ml.driverVersion(); v != "" {
			b.driverName = fmt.Sprintf("%s (CUDA %d.%d)", v, b.driverVer/1000, b.driverVer%1000/10)
		}
	}
	return b, nil
}

// open runs on the device thread: cuInit, device facts, primary context,
// stream, timing events.
func (b *Backend) open() error {
	d := b.drv
	if err := d.do("cuInit", 0); err != nil {
		return fmt.Errorf("no CUDA device: %w", err)
	}
	b.steps.step("cuInit")
	n := new(int32)
	if err := d.do("cuDeviceGetCount", uintptr(unsafe.Pointer(n))); err != nil {
		return fmt.Errorf("no CUDA device: %w", err)
	}
	if *n == 0 || b.opts.Device < 0 || b.opts.Device >= int(*n) {
		return fmt.Errorf("no CUDA device: ordinal %d of %d devices", b.opts.Device, *n)
	}
	b.count = int(*n)
	dev := new(int32)
	if err := d.do("cuDeviceGet", uintptr(unsafe.Pointer(dev)), uintptr(b.opts.Device)); err != nil {
		return err
	}
	b.dev = *dev
	nameBuf := make([]byte, 256)
	if err := d.do("cuDeviceGetName", uintptr(unsafe.Pointer(&nameBuf[0])), uintptr(len(nameBuf)), uintptr(b.dev)); err != nil {
		return err
	}
	b.name = goString(&nameBuf[0])
	busBuf := make([]byte, 64)
	if err := d.do("cuDeviceGetPCIBusId", uintptr(unsafe.Pointer(&busBuf[0])), uintptr(len(busBuf)), uintptr(b.dev)); err != nil {
		return err
	}
	b.busID = goString(&busBuf[0])
	if u, ok, err := d.uuid(b.dev); err != nil {
		return fmt.Errorf("device %d: %w", b.opts.Device, err)
	} else if ok {
		b.uuid = u
	} else {
		b.uuid = "pci:" + b.busID
	}
	for _, a := range []struct {
		attr int
		dst  *int
	}{
		{attrComputeCapabilityMajor, &b.ccMajor}, {attrComputeCapabilityMinor, &b.ccMinor},
		{attrMultiprocessorCount, &b.sms}, {attrL2CacheSize, &b.l2},
		{attrMaxSharedPerBlockOptin, &b.smemOptin}, {attrMaxSharedPerMultiproc, &b.smemPerSM},
	} {
		v, err := d.attr(b.dev, a.attr)
		if err != nil {
			return err
		}
		*a.dst = v
	}
	mem := new(uint64)
	if err := d.do("cuDeviceTotalMem_v2", uintptr(unsafe.Pointer(mem)), uintptr(b.dev)); err != nil {
		return err
	}
	b.totalMem = int64(*mem)
	ver := new(int32)
	if err := d.do("cuDriverGetVersion", uintptr(unsafe.Pointer(ver))); err != nil {
		return err
	}
	b.driverVer = int(*ver)
	b.driverName = fmt.Sprintf("CUDA %d.%d", b.driverVer/1000, b.driverVer%1000/10)
	ctx := new(uintptr)
	if err := d.do("cuDevicePrimaryCtxRetain", uintptr(unsafe.Pointer(ctx)), uintptr(b.dev)); err != nil {
		return err
	}
	b.ctx = *ctx
	if err := d.do("cuCtxSetCurrent", b.ctx); err != nil {
		return err
	}
	b.steps.step("context")
	s := new(uintptr)
	if err := d.do("cuStreamCreate", uintptr(unsafe.Pointer(s)), streamNonBlocking); err != nil {
		return err
	}
	b.stream = *s
	d.stream = b.stream
	var err error
	if b.evStart, err = d.newEvent(); err != nil {
		return err
	}
	if b.evEnd, err = d.newEvent(); err != nil {
		return err
	}
	return nil
}

// StartupSteps says how long opening the backend took, step by step
// (libcuda, cuInit, the device's facts, the primary context, the stream,
// NVRTC, cuBLAS, cuBLASLt, NVML), and the NVRTC probe of the target once
// Device has run it: for sweep --trace.
func (b *Backend) StartupSteps() string {
	return b.steps.String()
}

// Name is "cuda".
func (b *Backend) Name() string { return "cuda" }

// Arch is the NVRTC target, e.g. "sm_90a" (the "a" variant on compute
// capability 9.x when NVRTC accepts it).
func (b *Backend) Arch() (string, error) {
	b.archOnce.Do(func() {
		if b.nv == nil {
			b.archErr = fmt.Errorf("cuda: %w", b.nvErr)
			return
		}
		arch := fmt.Sprintf("sm_%d%d", b.ccMajor, b.ccMinor)
		cands := []string{arch}
		if b.ccMajor == 9 {
			cands = []string{arch + "a", arch}
		}
		const probe = `extern "C" __global__ void tilefit_probe(int *p) { if (p) *p = 1; }`
		var errs []error
		for _, a := range cands {
			_, log, err := b.nv.compile(probe, "probe.cu", []string{"--gpu-architecture=" + a})
			if err == nil {
				b.arch = a
				return
			}
			errs = append(errs, fmt.Errorf("%s: %w %s", a, err, log))
		}
		b.archErr = fmt.Errorf("cuda: NVRTC compiles for none of %s: %w", strings.Join(cands, ", "), errors.Join(errs...))
	})
	return b.arch, b.archErr
}

// baseOptions are the NVRTC options every program gets, before its -D
// defines: target, language standard, and the toolkit include folders
// (for sources that include cuda_fp16.h).
func (b *Backend) baseOptions() ([]string, error) {
	arch, err := b.Arch()
	if err != nil {
		return nil, err
	}
	opts := []string{"--gpu-architecture=" + arch, "-std=c++17"}
	for _, d := range toolkitDirs() {
		inc := filepath.Join(d, "include")
		if st, err := os.Stat(filepath.Join(inc, "cuda_fp16.h")); err == nil && !st.IsDir() {
			opts = append(opts, "-I"+inc)
			if st, err := os.Stat(filepath.Join(inc, "cccl")); err == nil && st.IsDir() {
				opts = append(opts, "-I"+filepath.Join(inc, "cccl"))
			}
			break
		}
	}
	return opts, nil
}

// Device describes the GPU: name, architecture, NVRTC version, driver,
// memory, and Props sms, l2_bytes, cc, smem_optin_bytes, smem_per_sm_bytes,
// pci_bus_id, cublas (version) and, once measured, the Ceilings.
func (b *Backend) Device(ctx context.Context) (backend.Device, error) {
	d := backend.Device{
		Backend: "cuda",
		Name:    b.name,
		Driver:  b.driverName,
		Memory:  b.totalMem,
		UUID:    b.uuid,
		Ordinal: b.opts.Device,
		Count:   b.count,
		Props: map[string]string{
			"sms":               strconv.Itoa(b.sms),
			"l2_bytes":          strconv.Itoa(b.l2),
			"cc":                fmt.Sprintf("%d.%d", b.ccMajor, b.ccMinor),
			"smem_optin_bytes":  strconv.Itoa(b.smemOptin),
			"smem_per_sm_bytes": strconv.Itoa(b.smemPerSM),
			"pci_bus_id":        b.busID,
		},
	}
	if b.nv != nil {
		d.Compiler = b.nv.Version()
		if opts, err := b.baseOptions(); err == nil {
			d.Arch = b.arch
			d.Flags = strings.Join(flagsOnly(opts), " ")
		} else {
			d.Arch = fmt.Sprintf("sm_%d%d", b.ccMajor, b.ccMinor)
		}
	} else {
		d.Compiler = "none (" + b.nvErr.Error() + ")"
		d.Arch = fmt.Sprintf("sm_%d%d", b.ccMajor, b.ccMinor)
	}
	if b.blas != nil {
		if v := b.blas.version(); v != "" {
			d.Props["cublas"] = v
		}
	}
	if b.lt.lib != nil {
		d.Props["cublaslt"] = b.lt.lib.version()
	}
	if b.ceil != nil {
		for k, v := range b.ceil {
			d.Props[k] = v
		}
	}
	return d, ctx.Err()
}

// flagsOnly drops the machine-specific -I folders from opts.
func flagsOnly(opts []string) []string {
	var out []string
	for _, o := range opts {
		if !strings.HasPrefix(o, "-I") {
			out = append(out, o)
		}
	}
	return out
}

// Compile compiles p with NVRTC for the device (or finds its CUBIN in the
// cache). Artifact.Key is the hex sha256 of source, defines, options, NVRTC
// version and driver version; a compiler failure is a *backend.CompileError
// with the NVRTC log. Safe to call from several goroutines.
func (b *Backend) Compile(ctx context.Context, p backend.Program) (backend.Artifact, error) {
	if err := ctx.Err(); err != nil {
		return backend.Artifact{}, err
	}
	prog := p.Family + " " + strings.Join(p.Defines, ",")
	base, err := b.baseOptions()
	if err != nil {
		return backend.Artifact{}, fmt.Errorf("compile %s: %w", prog, err)
	}
	opts := append([]string{}, base...)
	for _, d := range p.Defines {
		opts = append(opts, "-D"+d)
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00", p.Source)
	for _, d := range p.Defines {
		fmt.Fprintf(h, "D%s\x00", d)
	}
	for _, o := range flagsOnly(base) {
		fmt.Fprintf(h, "O%s\x00", o)
	}
	fmt.Fprintf(h, "%s\x00driver %d\x00", b.nv.Version(), b.driverVer)
	key := hex.EncodeToString(h.Sum(nil))
	fam := p.Family
	if fam == "" {
		fam = "program"
	}
	path := filepath.Join(b.opts.CacheDir, fam+"-"+key+".cubin")
	logPath := strings.TrimSuffix(path, ".cubin") + ".log"
	if st, err := os.Stat(path); err == nil && st.Size() > 0 {
		lg, _ := os.ReadFile(logPath)
		return backend.Artifact{Key: key, Path: path, Log: string(lg), Cached: true}, nil
	}
	t0 := time.Now()
	cubin, log, err := b.nv.compile(p.Source, sourceName(p.Family), opts)
	el := time.Since(t0)
	log = backend.CompilerLog(log, sourceName(p.Family), p.Source, opts) // other files by name only, capped (issue 18)
	if err != nil {
		return backend.Artifact{}, &backend.CompileError{Program: prog, Log: log, Err: err}
	}
	if err := os.MkdirAll(b.opts.CacheDir, 0o755); err != nil {
		return backend.Artifact{}, fmt.Errorf("compile %s: cache: %w", prog, err)
	}
	if err := writeAtomic(path, cubin); err != nil {
		return backend.Artifact{}, fmt.Errorf("compile %s: cache: %w", prog, err)
	}
	if log != "" {
		_ = writeAtomic(logPath, []byte(log))
	}
	return backend.Artifact{Key: key, Path: path, Log: log, Elapsed: el}, nil
}

func sourceName(family string) string {
	if family == "" {
		return "program.cu"
	}
	return family + ".cu"
}

// writeAtomic writes data to a temporary file beside path and renames it.
func writeAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return err
	}
	return os.Rename(f.Name(), path)
}

// Close releases the stream, events, cuBLAS handle and primary context and
// ends the device thread.
func (b *Backend) Close() error {
	var err error
	b.closeOnce.Do(func() {
		err = b.w.do(context.Background(), func() error {
			d := b.drv
			if b.handle != nil {
				b.handle.destroy(d)
			}
			if b.lt.handle != nil {
				b.lt.handle.destroy(d)
			}
			errs := []error{b.unloadModules(), b.freePinned()}
			if b.evStart != 0 {
				errs = append(errs, d.do("cuEventDestroy_v2", uintptr(b.evStart)))
			}
			if b.evEnd != 0 {
				errs = append(errs, d.do("cuEventDestroy_v2", uintptr(b.evEnd)))
			}
			if b.stream != 0 {
				errs = append(errs, d.do("cuStreamDestroy_v2", b.stream))
			}
			if b.ctx != 0 {
				errs = append(errs, d.do("cuDevicePrimaryCtxRelease_v2", uintptr(b.dev)))
			}
			return errors.Join(errs...)
		})
		b.w.stop()
	})
	return err
}

// Reading is the NVML SM clock and GPU temperature, and where the driver
// reports them the board power, its limit and the SM clock's maximum:
// "sm_mhz=1785 temp_c=52 power_w=698 limit_w=700 max_mhz=1980".
func (b *Backend) Reading(ctx context.Context) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if b.ml == nil {
		return "", fmt.Errorf("cuda: reading: %w", b.mlErr)
	}
	return b.ml.reading()
}
