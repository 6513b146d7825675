package tune

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/tilefit/tilefit/backend"
	"github.com/tilefit/tilefit/internal/input"
	"github.com/tilefit/tilefit/store"
	"github.com/tilefit/tilefit/workload"
)

// ParseScanSizes parses the sizes of a scan given as flag: square sizes
// "64,128" (M = N = K) or, with shapes, "MxNxK" items, each value within
// the workload limits, none twice.
func ParseScanSizes(flag, s string, shapes bool) ([]ScanSize, error) {
	items, err := input.SplitList(flag, s)
	if err != nil {
		return nil, err
	}
	var out []ScanSize
	for i, it := range items {
		parts, n := []string{it}, 1
		bad := fmt.Errorf("%s: item %d %q is not a size: want integers in 1..%d (M = N = K) separated by commas", flag, i+1, it, workload.MaxM)
		if shapes {
			parts, n = strings.Split(strings.ToLower(it), "x"), 3
			bad = fmt.Errorf("%s: item %d %q is not a shape MxNxK (e.g. 256x4096x1024) with M in 1..%d and N, K in 1..%d", flag, i+1, it, workload.MaxM, workload.MaxDim)
		}
		if len(parts) != n {
			return nil, bad
		}
		v := make([]int, len(parts))
		for j, p := range parts {
			x, err := strconv.Atoi(strings.TrimSpace(p))
			limit := workload.MaxDim
			if j == 0 {
				limit = workload.MaxM
			}
			if err != nil || x < 1 || x > limit {
				return nil, bad
			}
			v[j] = x
		}
		sz := ScanSize{M: v[0], N: v[0], K: v[0]}
		if shapes {
			sz = ScanSize{M: v[0], N: v[1], K: v[2]}
		}
		if slices.Contains(out, sz) {
			return nil, fmt.Errorf("%s: %s is given twice", flag, it)
		}
		out = append(out, sz)
	}
	return out, nil
}

// SortScanSizes orders sizes smallest first (by M·N·K, stable): the
// estimates of big sizes learn from small ones.
func SortScanSizes(sizes []ScanSize) {
	slices.SortStableFunc(sizes, func(a, b ScanSize) int {
		return cmp.Compare(float64(a.M)*float64(a.N)*float64(a.K), float64(b.M)*float64(b.N)*float64(b.K))
	})
}

// ScanItems splits a scan's comma-separated flag value (--tiles,
// --family) for backend be: items "BACKEND:ITEM" belong to that backend
// only (BACKEND must be one of bes), plain items to every backend; "" when
// none is left for be (its default).
func ScanItems(bes *backend.Registry, flag, list, be string) (string, error) {
	if list == "" {
		return "", nil
	}
	items, err := input.SplitList(flag, list)
	if err != nil {
		return "", err
	}
	var keep []string
	prefixed := false
	for _, it := range items {
		if b, t, ok := strings.Cut(it, ":"); ok {
			if err := bes.Check(b); err != nil {
				return "", fmt.Errorf("%s: %q: %w", flag, it, err)
			}
			prefixed = true
			if b == be {
				keep = append(keep, t)
			}
			continue
		}
		keep = append(keep, it)
	}
	if len(keep) == 0 && prefixed {
		return "", nil // this backend's default sweep
	}
	return strings.Join(keep, ","), nil
}

// ScanSetup builds each backend's part of a scan from the caller's flags:
// Config is the sweep of the first size on backend name and device,
// Executor the executor that sweeps its sizes.
type ScanSetup struct {
	Config   func(ctx context.Context, name string, device int) (Config, error)
	Executor func(name string, device int) Executor
	// Stop asks the sweeps for a graceful stop (Config.Stop).
	Stop <-chan struct{}
	// Log is told which backends are left out, and why.
	Log io.Writer
}

// OpenScanBackends opens the backends names of bes for a scan on device
// (where a backend has it, else its one device 0) and prepares each
// (ScanBackend.Prepare). explicit says the user named them: a backend that
// is not available is then an error; otherwise it is left out with a line
// on s.Log saying why, and only none at all is an error. The caller closes
// what it returns (CloseScanBackends).
func OpenScanBackends(ctx context.Context, bes *backend.Registry, names []string, device int, explicit bool, s ScanSetup) ([]*ScanBackend, error) {
	var sbs []*ScanBackend
	var unavailable []string
	for _, name := range names {
		sb, why, err := openScanBackend(ctx, bes, name, device, explicit, s)
		if err != nil {
			CloseScanBackends(sbs)
			return nil, err
		}
		if why != "" {
			unavailable = append(unavailable, why)
			continue
		}
		sbs = append(sbs, sb)
	}
	for _, u := range unavailable {
		fmt.Fprintln(s.Log, u)
	}
	if len(sbs) == 0 {
		return nil, fmt.Errorf("no backend is available here (%s)", strings.Join(unavailable, "; "))
	}
	return sbs, nil
}

// CloseScanBackends closes the backends and executors of a scan.
func CloseScanBackends(sbs []*ScanBackend) {
	for _, sb := range sbs {
		if sb.Backend != nil {
			sb.Backend.Close()
		}
		sb.Executor.Close()
	}
}

// openScanBackend is one backend of OpenScanBackends; why says, instead of
// an error, why a backend the user did not ask for by name is left out.
func openScanBackend(ctx context.Context, bes *backend.Registry, name string, device int, explicit bool, s ScanSetup) (sb *ScanBackend, why string, err error) {
	b, err := bes.Open(ctx, name, device)
	if err != nil && device > 0 {
		// The device chooses among a backend's devices; a backend with one
		// device (the CPU) runs on its device 0.
		if b0, err0 := bes.Open(ctx, name, 0); err0 == nil {
			if d, derr := b0.Device(ctx); derr == nil && d.Count <= 1 {
				b, err, device = b0, nil, 0
			} else {
				b0.Close()
			}
		}
	}
	if err != nil {
		if explicit {
			return nil, "", fmt.Errorf("backend %s is not available: %w", name, err)
		}
		return nil, fmt.Sprintf("%s: not available: %v", name, err), nil
	}
	cfg, err := s.Config(ctx, name, device)
	if err != nil {
		b.Close()
		if !explicit && strings.Contains(err.Error(), "no "+name+" family") {
			return nil, fmt.Sprintf("%s: %v", name, err), nil
		}
		return nil, "", fmt.Errorf("%s: %w", name, err)
	}
	sb = &ScanBackend{Name: name, Config: cfg, Backend: b}
	sb.Config.Stop = s.Stop
	if err := sb.Prepare(ctx); err != nil {
		b.Close()
		if explicit {
			return nil, "", fmt.Errorf("backend %s is not available: %w", name, err)
		}
		return nil, fmt.Sprintf("%s: not available: %v", name, err), nil
	}
	sb.Executor = s.Executor(name, device)
	return sb, "", nil
}

// OpenScanDB opens the size study's database at path for writing (the
// sweep lock), refuses one that holds a workload sweep (CheckScanDB) and
// reads, or measures and stores, the ceilings of the backends
// (ScanCeilings; what it measures is said on log).
func OpenScanDB(ctx context.Context, path string, sbs []*ScanBackend, log io.Writer) (*store.Store, error) {
	st, err := store.OpenLocked(ctx, path)
	if err != nil {
		return nil, err
	}
	if err := CheckScanDB(ctx, st, path); err != nil {
		st.Close()
		return nil, err
	}
	if err := ScanCeilings(ctx, st, sbs, log); err != nil {
		st.Close()
		return nil, err
	}
	return st, nil
}
