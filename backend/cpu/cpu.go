// Package cpu is the CPU backend: family sources compiled at run time by the
// system C compiler into shared objects (cached on disk, content-addressed),
// loaded in-process with purego (no cgo), and OpenBLAS sgemm as the vendor
// baseline when it is installed.
//
// Every CPU family exports its entries (kernel.Launch.Entry) in one C
// convention:
//
//	int ENTRY(void **ptrs, const int64_t *args);
//
// ptrs holds the launch's pointer arguments (operands, scratch buffers) and
// args its integer arguments (dimensions, constants), each in the order of
// the launch's Args; a non-zero return is a failure. The backend knows no
// family: it allocates the operator's operands, builds these arrays from the
// Plan and calls the entries in order. Vendor launches (kernel.VendorGemm)
// run OpenBLAS.
package cpu

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/tilefit/tilefit/backend"
	"github.com/tilefit/tilefit/internal/dl"
	"github.com/tilefit/tilefit/kernel"
)

// DefaultFlags are the compiler flags used when Options.Flags is empty:
// optimise for this machine, build a shared object, keep IEEE semantics and
// every FMA explicit (-ffp-contract=off: the compiler neither fuses a
// separate multiply and add nor splits a written fma, so the source alone
// fixes each element's reduction order).
var DefaultFlags = []string{"-O3", "-march=native", "-shared", "-fPIC", "-pthread", "-fno-fast-math", "-ffp-contract=off"}

// libs are linked after the source file.
var libs = []string{"-lm"}

// Options configures New.
type Options struct {
	// CC is the C compiler; default $CC, else "cc". It may carry leading
	// arguments ("gcc -m64").
	CC string
	// CacheDir holds compiled kernels; default os.UserCacheDir()/tilefit/cpu.
	CacheDir string
	// Flags are the compiler flags; default DefaultFlags.
	Flags []string
	// Device is the device number; the CPU backend has one device, 0.
	Device int
	// CompileTimeout bounds one compile's wall-clock (and CPU) time
	// (default DefaultCompileTimeout); CompileMemory its address space
	// (default DefaultCompileMemory). A compile past either fails (a
	// source can include /dev/zero or a FIFO, or expand a macro 2³⁹ times).
	CompileTimeout time.Duration
	CompileMemory  int64
}

// Default compile limits (Options.CompileTimeout, CompileMemory).
const (
	DefaultCompileTimeout = 5 * time.Minute
	DefaultCompileMemory  = 4 << 30
)

// limits are one compile's bounds.
type limits struct {
	timeout time.Duration
	memory  int64
}

// errCompileTimeout: a compile ran past its time limit (and was killed).
var errCompileTimeout = errors.New("compile time limit passed (killed)")

// CPU is the CPU backend. Its methods are safe for concurrent use.
type CPU struct {
	cc        []string // program (resolved path) and leading arguments
	ccName    string   // as configured, for messages
	ccVersion string   // first line of cc --version
	cacheDir  string
	flags     []string
	arch      string
	model     string

	blasOnce sync.Once
	blas     *openBLAS
	blasErr  error

	cleanOnce sync.Once // stale temporary files of killed compiles removed
	limits    limits

	sysOnce     sync.Once
	sysIncludes []string // the compiler's own header directories
}

var (
	_ backend.Backend = (*CPU)(nil)
	_ backend.Sensor  = (*CPU)(nil)
)

// New finds the C compiler and returns the backend. A missing compiler is an
// error that names what to install.
func New(o Options) (*CPU, error) {
	if o.Device != 0 {
		return nil, fmt.Errorf("cpu: no device %d (the CPU backend has one device, 0)", o.Device)
	}
	ccLine := o.CC
	if ccLine == "" {
		ccLine = os.Getenv("CC")
	}
	if strings.TrimSpace(ccLine) == "" {
		ccLine = "cc"
	}
	cc := strings.Fields(ccLine)
	path, err := exec.LookPath(cc[0])
	if err != nil {
		return nil, fmt.Errorf("no C compiler: %q not found on PATH; install one (Debian/Ubuntu: apt-get install gcc) or set CC: %w", cc[0], err)
	}
	cc[0] = path
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, cc[0], append(cc[1:len(cc):len(cc)], "--version")...).CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("C compiler %q does not run (%s --version): %w\n%s", ccLine, path, err, out)
	}
	version := strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0])

	dir := o.CacheDir
	if dir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			base = filepath.Join(os.TempDir(), "tilefit-cache")
		}
		dir = filepath.Join(base, "tilefit", "cpu")
	}
	flags := o.Flags
	if len(flags) == 0 {
		flags = DefaultFlags
	}
	info := readCPUInfo()
	lim := limits{timeout: o.CompileTimeout, memory: o.CompileMemory}
	if lim.timeout <= 0 {
		lim.timeout = DefaultCompileTimeout
	}
	if lim.memory <= 0 {
		lim.memory = DefaultCompileMemory
	}
	return &CPU{
		limits:    lim,
		cc:        cc,
		ccName:    ccLine,
		ccVersion: version,
		cacheDir:  dir,
		flags:     append([]string(nil), flags...),
		arch:      info.arch(),
		model:     info.model,
	}, nil
}

// Name returns "cpu".
func (c *CPU) Name() string { return "cpu" }

// CacheDir returns the directory of compiled kernels.
func (c *CPU) CacheDir() string { return c.cacheDir }

// Flags returns the compile flags as recorded in provenance (flags, then the
// libraries linked after the source).
func (c *CPU) Flags() string {
	return strings.Join(append(append([]string(nil), c.flags...), libs...), " ")
}

// Device describes this machine: CPU model and cores, instruction-set flags
// that matter to the kernels, compiler, flags, available memory, and cache
// sizes (Props: cores, l1d, l2, l3, mhz, cc, openblas, openblas_path, and
// openblas_warning when OpenBLAS runs kernels far below the CPU: see
// openBLASWarning; a sweep passes it on as a warning).
func (c *CPU) Device(ctx context.Context) (backend.Device, error) {
	if err := ctx.Err(); err != nil {
		return backend.Device{}, err
	}
	info := readCPUInfo()
	d := backend.Device{
		Backend:  "cpu",
		Name:     fmt.Sprintf("%s (%d cores)", c.model, runtime.NumCPU()),
		Arch:     c.arch,
		Compiler: c.ccVersion,
		Flags:    c.Flags(),
		Memory:   memAvailable(),
		UUID:     "cpu:" + hostname(),
		Count:    1,
		Props: map[string]string{
			"cores": strconv.Itoa(runtime.NumCPU()),
			"cc":    strings.Join(c.cc, " "),
		},
	}
	if info.mhz != "" {
		d.Props["mhz"] = info.mhz
	}
	for k, v := range cacheSizes() {
		d.Props[k] = v
	}
	if b, err := c.openBLAS(); err == nil && b != nil {
		d.Props["openblas"] = b.config
		d.Props["openblas_path"] = b.path
		if w := openBLASWarning(b.config, info.flags, os.Getenv("OPENBLAS_CORETYPE")); w != "" {
			d.Props["openblas_warning"] = w
		}
	}
	return d, nil
}

// Reading returns a short reading of the machine's state for a timing round:
// the mean current clock over cores and the 1-minute load average
// ("mhz=3245 load1=0.74").
func (c *CPU) Reading(ctx context.Context) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	info := readCPUInfo()
	var parts []string
	if info.mhz != "" {
		parts = append(parts, "mhz="+info.mhz)
	}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(b)); len(f) > 0 {
			parts = append(parts, "load1="+f[0])
		}
	}
	return strings.Join(parts, " "), nil
}

var defineRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(=[^\s]*)?$`)

// Key returns the cache key of p: the hex sha256 of the source, the sorted
// defines, the compiler (path and version), the flags and libraries, and the
// CPU model and instruction-set flags (-march=native depends on them).
func (c *CPU) Key(p backend.Program) string {
	defs := append([]string(nil), p.Defines...)
	sort.Strings(defs)
	h := sha256.New()
	for _, s := range []string{"tilefit-cpu-v1", p.Source, strings.Join(defs, "\n"),
		strings.Join(c.cc, " "), c.ccVersion, c.Flags(), c.model, c.arch} {
		fmt.Fprintf(h, "%d:%s\x00", len(s), s)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func programName(p backend.Program) string {
	defs := append([]string(nil), p.Defines...)
	sort.Strings(defs)
	return fmt.Sprintf("%s[%s]", p.Family, strings.Join(defs, ","))
}

// Compile compiles p into CacheDir/<key>.so, or returns the cached file
// (Cached true, Elapsed 0). The compiler writes a temporary file that is then
// renamed into place, so concurrent compiles of the same key are safe. A
// compiler failure is a *backend.CompileError holding the compiler's output.
func (c *CPU) Compile(ctx context.Context, p backend.Program) (backend.Artifact, error) {
	name := programName(p)
	for _, d := range p.Defines {
		if !defineRE.MatchString(d) {
			return backend.Artifact{}, fmt.Errorf("compile %s: bad define %q (want NAME=VALUE)", name, d)
		}
	}
	key := c.Key(p)
	path := filepath.Join(c.cacheDir, key+".so")
	logPath := filepath.Join(c.cacheDir, key+".log")
	if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() && st.Size() > 0 {
		log, _ := os.ReadFile(logPath)
		return backend.Artifact{Key: key, Path: path, Log: string(log), Cached: true}, nil
	}
	if err := os.MkdirAll(c.cacheDir, 0o755); err != nil {
		return backend.Artifact{}, fmt.Errorf("compile %s: cache: %w", name, err)
	}
	c.cleanOnce.Do(func() { cleanStale(c.cacheDir) })
	// Temporary files carry this process's id and stay locked while it
	// compiles, so that a later run can tell a killed compile's leftovers
	// from a live one's (cleanStale).
	src, err := os.CreateTemp(c.cacheDir, tempPrefix(key)+"*.c")
	if err != nil {
		return backend.Artifact{}, fmt.Errorf("compile %s: %w", name, err)
	}
	defer os.Remove(src.Name())
	defer src.Close()
	lockTemp(src)
	if _, err := src.WriteString(p.Source); err != nil {
		return backend.Artifact{}, fmt.Errorf("compile %s: write source: %w", name, err)
	}
	if err := src.Sync(); err != nil {
		return backend.Artifact{}, fmt.Errorf("compile %s: write source: %w", name, err)
	}
	stem := strings.TrimSuffix(src.Name(), ".c")
	tmp := stem + ".so.tmp"
	defer os.Remove(tmp)
	// The compiler's own temporary files go in a folder of the compile
	// (TMPDIR), removed after it, and by cleanStale after a killed one.
	work := stem + ".d"
	if err := os.Mkdir(work, 0o700); err != nil {
		return backend.Artifact{}, fmt.Errorf("compile %s: %w", name, err)
	}
	defer os.RemoveAll(work)
	logFile, err := os.Create(filepath.Join(work, "log"))
	if err != nil {
		return backend.Artifact{}, fmt.Errorf("compile %s: %w", name, err)
	}
	defer logFile.Close()

	argv := append([]string(nil), c.cc...)
	argv = append(argv, c.flags...)
	for _, d := range p.Defines {
		argv = append(argv, "-D"+d)
	}
	argv = append(argv, "-o", tmp, src.Name())
	argv = append(argv, libs...)
	start := time.Now()
	err = runCompiler(ctx, c.limits, argv, []string{"TMPDIR=" + work}, logFile)
	elapsed := time.Since(start)
	log := c.compilerLog(ctx, logFile, src.Name(), p.Source)
	if err != nil {
		if ctx.Err() != nil {
			return backend.Artifact{}, fmt.Errorf("compile %s: %w", name, ctx.Err())
		}
		if errors.Is(err, errCompileTimeout) {
			err = fmt.Errorf("%w after %s (limit %s; address space %d MiB)", err, elapsed.Round(time.Millisecond), c.limits.timeout, c.limits.memory>>20)
		}
		return backend.Artifact{}, &backend.CompileError{Program: name, Log: log, Err: err}
	}
	if err := writeAtomic(logPath, []byte(log)); err != nil {
		return backend.Artifact{}, fmt.Errorf("compile %s: %w", name, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return backend.Artifact{}, fmt.Errorf("compile %s: %w", name, err)
	}
	return backend.Artifact{Key: key, Path: path, Log: log, Elapsed: elapsed}, nil
}

// compilerLog reads what the compiler wrote to f (at most a few times
// backend.MaxLog bytes of it) and keeps what concerns the program's own
// source src (of text) and the compiler's headers (backend.CompilerLog).
func (c *CPU) compilerLog(ctx context.Context, f *os.File, src, text string) string {
	fi, err := f.Stat()
	if err != nil || fi.Size() == 0 {
		return ""
	}
	b := make([]byte, min(fi.Size(), 4*backend.MaxLog))
	n, _ := f.ReadAt(b, 0)
	log := string(b[:n])
	if int64(n) < fi.Size() {
		log += fmt.Sprintf("\n… (%d more bytes of compiler output not kept)\n", fi.Size()-int64(n))
	}
	return backend.CompilerLog(log, src, text, c.flags, c.systemIncludes(ctx)...)
}

// systemIncludes returns the directories of the compiler's own headers
// (from "cc -E -v": the lines between "search starts here" and "End of
// search list"), asked once.
func (c *CPU) systemIncludes(ctx context.Context) []string {
	c.sysOnce.Do(func() {
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		args := append(append([]string(nil), c.cc[1:]...), "-E", "-v", "-x", "c", os.DevNull)
		cmd := exec.CommandContext(ctx, c.cc[0], args...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		cmd.Stdin = nil
		if cmd.Run() != nil {
			return
		}
		in := false
		for _, l := range strings.Split(out.String(), "\n") {
			switch {
			case strings.Contains(l, "search starts here"):
				in = true
			case strings.HasPrefix(l, "End of search list"):
				in = false
			case in && strings.HasPrefix(l, " "):
				d := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(l), "(framework directory)"))
				c.sysIncludes = append(c.sysIncludes, d)
			}
		}
	})
	return c.sysIncludes
}

func writeAtomic(path string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), tempPrefix(filepath.Base(path))+"*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// entryFunc is int ENTRY(void **ptrs, const int64_t *args) as seen from Go.
type entryFunc func(ptrs, args unsafe.Pointer) int32

// A Kernel is a loaded candidate: its launch list with every compiled entry
// found (or the vendor routine it calls).
type Kernel struct {
	name   string
	handle uintptr // 0 when the plan has no compiled entries
	plan   kernel.Plan
	fns    []entryFunc // per launch; nil for vendor launches
	blas   *openBLAS
	mu     sync.Mutex
	closed bool
}

// Name returns the tile name.
func (k *Kernel) Name() string { return k.name }

// Plan returns the launch list the kernel runs.
func (k *Kernel) Plan() kernel.Plan { return k.plan }

// Close unloads the shared object; the kernel must not be used afterwards.
func (k *Kernel) Close() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.closed {
		return nil
	}
	k.closed = true
	if k.handle == 0 {
		return nil
	}
	if err := purego.Dlclose(k.handle); err != nil {
		return fmt.Errorf("unload %s: %w", k.name, err)
	}
	return nil
}

// Load opens the artifact with dlopen(RTLD_NOW|RTLD_LOCAL) and finds every
// entry plan names; vendor launches need OpenBLAS. Tensor maps and
// clusters are CUDA-only and refused.
func (c *CPU) Load(ctx context.Context, name string, a backend.Artifact, plan kernel.Plan) (backend.Kernel, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(plan.Launches) == 0 {
		return nil, fmt.Errorf("load %s: plan has no launches", name)
	}
	k := &Kernel{name: name, plan: plan, fns: make([]entryFunc, len(plan.Launches))}
	for li, l := range plan.Launches {
		for _, arg := range l.Args {
			if arg.Kind == kernel.ArgTensorMap {
				return nil, fmt.Errorf("load %s: launch %d: tensor-map arguments are CUDA only", name, li)
			}
		}
		switch l.Vendor {
		case "":
			if a.Path == "" {
				return nil, fmt.Errorf("load %s: launch %d (%s) needs a compiled artifact", name, li, l.Entry)
			}
		case kernel.VendorGemm:
			b, err := c.openBLAS()
			if err != nil {
				return nil, fmt.Errorf("load %s: %w", name, err)
			}
			if b == nil {
				return nil, fmt.Errorf("load %s: vendor routine %s needs OpenBLAS, which is not installed (tried %s)", name, l.Vendor, strings.Join(OpenBLASNames, ", "))
			}
			k.blas = b
		default:
			return nil, fmt.Errorf("load %s: launch %d: unknown vendor routine %q on the CPU", name, li, l.Vendor)
		}
	}
	if a.Path != "" {
		h, err := dl.Open(a.Path, purego.RTLD_NOW|purego.RTLD_LOCAL)
		if err != nil {
			return nil, fmt.Errorf("load %s from %s: %w", name, a.Path, err)
		}
		k.handle = h
		for li, l := range plan.Launches {
			if l.Vendor != "" {
				continue
			}
			sym, err := dl.Sym(h, l.Entry)
			if err != nil {
				purego.Dlclose(h)
				return nil, fmt.Errorf("load %s: %s does not export %s (every CPU family entry is int %s(void **ptrs, const int64_t *args)): %w",
					name, a.Path, l.Entry, l.Entry, err)
			}
			purego.RegisterFunc(&k.fns[li], sym)
		}
	}
	return k, nil
}

// Close releases nothing: loaded kernels close themselves, and OpenBLAS
// stays loaded for the life of the process (its threads may still run).
func (c *CPU) Close() error { return nil }

// ProgramFor returns the Program of family f with assignment p computing
// op (the operator with its chosen operand types; nil: f.Operator's
// defaults): the parameters and the operand type defines, sorted — a helper
// for callers and tests.
func ProgramFor(f *kernel.Family, op *kernel.Operator, p kernel.Params) backend.Program {
	if op == nil {
		op = f.Operator
	}
	return backend.Program{Family: f.Name, Source: f.Source, Defines: append(kernel.Defines(p), op.TypeDefines()...)}
}

// cpuInfo holds the facts read from /proc/cpuinfo.
type cpuInfo struct {
	model string
	flags map[string]bool
	mhz   string // mean "cpu MHz" over processors, rounded
}

// kernelFlags are the instruction-set flags recorded in Device.Arch.
var kernelFlags = []string{"sse4_2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512vl", "avx512_fp16", "avx512_bf16", "amx_tile", "neon", "asimd", "asimdhp"}

func (i cpuInfo) arch() string {
	a := runtime.GOARCH
	switch a {
	case "amd64":
		a = "x86_64"
	case "arm64":
		a = "aarch64"
	}
	parts := []string{a}
	for _, f := range kernelFlags {
		if i.flags[f] {
			parts = append(parts, f)
		}
	}
	return strings.Join(parts, " ")
}

func readCPUInfo() cpuInfo {
	info := cpuInfo{model: runtime.GOARCH + " CPU", flags: map[string]bool{}}
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return info
	}
	defer f.Close()
	var mhzSum float64
	var mhzN int
	seenModel, seenFlags := false, false
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch k {
		case "model name", "Model", "cpu model":
			if !seenModel && v != "" {
				info.model, seenModel = v, true
			}
		case "flags", "Features":
			if !seenFlags {
				for _, fl := range strings.Fields(v) {
					info.flags[fl] = true
				}
				seenFlags = true
			}
		case "cpu MHz":
			if x, err := strconv.ParseFloat(v, 64); err == nil {
				mhzSum += x
				mhzN++
			}
		}
	}
	if mhzN > 0 {
		info.mhz = strconv.Itoa(int(mhzSum/float64(mhzN) + 0.5))
	}
	return info
}

// memAvailable returns MemAvailable from /proc/meminfo in bytes (0 if unknown).
func memAvailable() int64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "MemAvailable:"); ok {
			f := strings.Fields(rest)
			if len(f) >= 1 {
				kb, err := strconv.ParseInt(f[0], 10, 64)
				if err == nil {
					return kb << 10
				}
			}
		}
	}
	return 0
}

// cacheSizes reads cpu0's cache sizes from sysfs: "l1d", "l2", "l3" → "32K"...
func cacheSizes() map[string]string {
	out := map[string]string{}
	dirs, _ := filepath.Glob("/sys/devices/system/cpu/cpu0/cache/index*")
	for _, d := range dirs {
		read := func(f string) string {
			b, _ := os.ReadFile(filepath.Join(d, f))
			return strings.TrimSpace(string(b))
		}
		level, typ, size := read("level"), read("type"), read("size")
		if level == "" || size == "" || typ == "Instruction" {
			continue
		}
		name := "l" + level
		if typ == "Data" {
			name += "d"
		}
		out[name] = size
	}
	return out
}

// errClosed is returned when a closed kernel or problem is used.
var errClosed = errors.New("used after Close")

// hostname names this machine for Device.UUID.
func hostname() string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		return "localhost"
	}
	return h
}
