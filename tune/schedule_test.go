package tune

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tilefit/tilefit/builtin"
	"github.com/tilefit/tilefit/internal/pgtest"
	"github.com/tilefit/tilefit/kernel"
	"github.com/tilefit/tilefit/result"
	"github.com/tilefit/tilefit/store"
	"github.com/tilefit/tilefit/workload"
)

// TestShardArithmetic: for every n from 1 to 16, each cell of the presets
// and of seeded random workloads is in exactly one shard of n; the shards
// depend only on the cell (not on the workload's order); and the hash is
// pinned, so a fleet's pods built from different commits agree.
func TestShardArithmetic(t *testing.T) {
	var cells []result.Cell
	for _, name := range []string{"strata", "smoke"} {
		w, err := workload.Preset(name)
		if err != nil {
			t.Fatal(err)
		}
		cells = append(cells, Cells(w)...)
	}
	rng := rand.New(rand.NewPCG(12, 1))
	for i := range 500 {
		d := kernel.Dims{"M": 1 + rng.IntN(4096), "N": 1 + rng.IntN(20000), "K": 8 * (1 + rng.IntN(2000))}
		cells = append(cells, result.NewCell(fmt.Sprintf("r%d", i), builtin.GemmF16(), d, 1))
	}
	for n := 1; n <= 16; n++ {
		count := make([]int, n)
		for _, c := range cells {
			in := 0
			for i := range n {
				if (Shard{I: i, N: n}).Has(c) {
					in++
				}
			}
			if in != 1 {
				t.Fatalf("n=%d: cell %s in %d shards", n, CellKey(c), in)
			}
			count[ShardOf(c, n)]++
		}
		// Every shard gets a fair part of ~570 cells (a hash, not a
		// round robin: within 3 standard deviations of the mean).
		mean := float64(len(cells)) / float64(n)
		for i, k := range count {
			if d := float64(k) - mean; d*d > 9*mean {
				t.Errorf("n=%d: shard %d has %d cells, mean %.0f", n, i, k, mean)
			}
		}
	}
	// The order of the workload does not matter.
	shuffled := append([]result.Cell(nil), cells...)
	rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	for _, c := range shuffled[:50] {
		want := ShardOf(c, 7)
		for _, d := range cells {
			if CellKey(d) == CellKey(c) && ShardOf(d, 7) != want {
				t.Fatalf("cell %s in two shards", CellKey(c))
			}
		}
	}
	// Pinned values (FNV-1a of the cell key): change them only knowingly.
	w, _ := workload.Preset("strata")
	sc := Cells(w)
	var got []string
	for _, c := range sc[:4] {
		got = append(got, fmt.Sprintf("%s M=%d:%d", c.Shape, c.M, ShardOf(c, 16)))
	}
	if want := "hc_read M=256:5 hc_read M=512:4 hc_read M=1024:11 hc_read M=1983:7"; strings.Join(got, " ") != want {
		t.Errorf("shards of the first strata cells: %s, want %s", strings.Join(got, " "), want)
	}
	for _, tc := range []struct{ in, err string }{
		{"0/1", ""}, {"3/4", ""}, {" 2 / 5 ", ""},
		{"4/4", "shard 4 of 4: want 0 to 3"}, {"-1/4", "shard -1 of 4"}, {"1/0", "want 1 to"},
		{"1", "want I/N"}, {"a/b", "want I/N"}, {"", "want I/N"},
	} {
		_, err := ParseShard(tc.in)
		if (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("ParseShard(%q) = %v, want %q", tc.in, err, tc.err)
		}
	}
}

// TestShardsCoverThePlan: sweeping every shard of 3 into one store gives
// the cells of one unsharded sweep.
func TestShardsCoverThePlan(t *testing.T) {
	ctx := context.Background()
	one := openStore(t)
	if _, err := Sweep(ctx, testConfig(), fakeLocal(0), one, nil); err != nil {
		t.Fatal(err)
	}
	sharded := openStore(t)
	total := 0
	for i := range 3 {
		cfg := testConfig()
		cfg.Shard = Shard{I: i, N: 3}
		sum, err := Sweep(ctx, cfg, fakeLocal(0), sharded, nil)
		if err != nil {
			t.Fatal(err)
		}
		total += sum.Total
	}
	if got, want := cellSet(t, sharded), cellSet(t, one); got != want || total != 4 {
		t.Errorf("shards stored %s (%d cells in all), one sweep %s", got, total, want)
	}
}

func fakeLocal(device int) Executor {
	fb := newFake()
	fb.device = device
	return NewLocal(func(context.Context) (backendT, error) { return fb, nil }, nil)
}

// cellSet lists (shape, M, tile, status) of every stored candidate, sorted,
// and fails on a duplicate.
func cellSet(t *testing.T, st *store.Store) string {
	t.Helper()
	cells, err := st.Cells(context.Background(), store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	seen := map[string]bool{}
	for _, c := range cells {
		for _, cand := range c.Candidates {
			k := fmt.Sprintf("%s/%d/%s/%s", c.Cell.Shape, c.Cell.M, cand.Tile, cand.Status)
			if seen[k] {
				t.Errorf("duplicate result %s", k)
			}
			seen[k] = true
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return strings.Join(keys, " ")
}

// brokenDevice is an executor whose device fails every cell (not a
// candidate: RunCell itself errs), as a GPU that fell off the bus.
type brokenDevice struct {
	Executor
	mu    sync.Mutex
	cells int
}

func (b *brokenDevice) RunCell(ctx context.Context, job CellJob) (result.CellResult, error) {
	b.mu.Lock()
	b.cells++
	b.mu.Unlock()
	return result.CellResult{}, errors.New("CUDA_ERROR_LAUNCH_FAILED (device lost)")
}

// TestSweepOnExecutors: three executors share a plan; one device fails
// every cell it gets: its cells go back to the queue, it is retired after
// two, and the stored cells equal one executor's run, each with the UUID
// of the device that measured it.
func TestSweepOnExecutors(t *testing.T) {
	ctx := context.Background()
	cfg := testConfig()
	cfg.Workload.Ms = []int{9, 17, 33, 65}
	one := openStore(t)
	if _, err := Sweep(ctx, cfg, fakeLocal(0), one, nil); err != nil {
		t.Fatal(err)
	}
	broken := &brokenDevice{Executor: fakeLocal(1)}
	st := openStore(t)
	var mu sync.Mutex
	started := map[int]int{}
	sum, err := SweepOn(ctx, cfg, []Executor{fakeLocal(0), broken, fakeLocal(2)}, st, func(p Progress) {
		mu.Lock()
		defer mu.Unlock()
		if p.Started {
			started[p.Executor]++
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := cellSet(t, st), cellSet(t, one); got != want {
		t.Errorf("three executors stored\n%s\none stored\n%s", got, want)
	}
	if sum.Cells != 8 || sum.NotRun != 0 || sum.PerExecutor[1] != 0 || sum.PerExecutor[0]+sum.PerExecutor[2] != 8 {
		t.Errorf("summary %+v", sum)
	}
	if broken.cells != 2 || started[1] != 2 {
		t.Errorf("the broken device ran %d cells (%d started), want 2 before it was retired", broken.cells, started[1])
	}
	retired := false
	for _, w := range sum.Warnings {
		retired = retired || strings.Contains(w, "executor 1 (fake-1) retired after 2 failed cells in a row")
	}
	if !retired {
		t.Errorf("no retirement warning: %q", sum.Warnings)
	}
	cells, _ := st.Cells(ctx, store.Filter{})
	for _, c := range cells {
		if c.DeviceID != "fake-0" && c.DeviceID != "fake-2" {
			t.Errorf("%s M=%d measured on %q", c.Cell.Shape, c.Cell.M, c.DeviceID)
		}
	}
}

// TestSweepOnEveryDeviceFails: a cell that fails on every device is not
// run (a warning), and the other cells still are.
func TestSweepOnEveryDeviceFails(t *testing.T) {
	ctx := context.Background()
	cfg := testConfig()
	st := openStore(t)
	sum, err := SweepOn(ctx, cfg, []Executor{&brokenDevice{Executor: fakeLocal(0)}, &brokenDevice{Executor: fakeLocal(1)}}, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	if sum.NotRun == 0 || sum.Cells+sum.NotRun != 4 {
		t.Errorf("summary %+v", sum)
	}
}

// TestSweepOnRefusesMixedDevices: devices of different models are not one
// provenance, so one sweep does not mix them.
func TestSweepOnRefusesMixedDevices(t *testing.T) {
	a, b := newFake(), newFake()
	b.name, b.device = "other fake", 1
	_, err := SweepOn(context.Background(), testConfig(), []Executor{
		NewLocal(func(context.Context) (backendT, error) { return a, nil }, nil),
		NewLocal(func(context.Context) (backendT, error) { return b, nil }, nil),
	}, openStore(t), nil)
	if err == nil || !strings.Contains(err.Error(), "devices differ") || !strings.Contains(err.Error(), "--device N") {
		t.Fatalf("err = %v", err)
	}
}

// TestSweepWorkerDeviceDies: two worker processes stand in for two
// devices; device 1's worker is killed (SIGKILL) in the middle of its
// second cell and the device stays dead. Its cell goes back to the queue,
// device 0 measures it, and the stored cells equal one uninterrupted run's.
// The kill point is a cell count, not a time.
func TestSweepWorkerDeviceDies(t *testing.T) {
	if testing.Short() {
		t.Skip("starts worker processes")
	}
	ctx := context.Background()
	cfg := testConfig()
	cfg.Workload.Ms = []int{9, 17, 33}
	one := openStore(t)
	if _, err := Sweep(ctx, cfg, fakeLocal(0), one, nil); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	// Device 0 waits for device 1's death before its first cell: device 1
	// reaches its second cell whatever the load (it did not, on a busy
	// machine, and the test failed).
	env := []string{fakeDiesEnv + "=1:2:" + dir, fakeWaitDeadEnv + "=0:" + dir}
	w0 := NewWorker(WorkerOptions{Backend: "fake", Device: 0, Env: env})
	w1 := NewWorker(WorkerOptions{Backend: "fake", Device: 1, Env: env})
	defer w0.Close()
	defer w1.Close()
	st := openStore(t)
	sum, err := SweepOn(ctx, cfg, []Executor{w0, w1}, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := cellSet(t, st), cellSet(t, one); got != want {
		t.Errorf("after device 1 died the stored cells are\n%s\nwant\n%s", got, want)
	}
	if sum.PerExecutor[1] != 1 || sum.PerExecutor[0] != 5 || sum.NotRun != 0 {
		t.Errorf("cells per device %v, not run %d; want device 1 to finish 1 cell before it died: %q", sum.PerExecutor, sum.NotRun, sum.Warnings)
	}
	back := false
	for _, w := range sum.Warnings {
		back = back || strings.Contains(w, "failed on executor 1 (fake-1)") && strings.Contains(w, "back to the queue")
	}
	if !back {
		t.Errorf("no warning that device 1's cell went back to the queue: %q", sum.Warnings)
	}
	cells, _ := st.Cells(ctx, store.Filter{})
	devs := map[string]int{}
	for _, c := range cells {
		devs[c.DeviceID]++
	}
	if devs["fake-0"] != 5 || devs["fake-1"] != 1 {
		t.Errorf("cells by device %v", devs)
	}
}

// claimDBs are the stores claims tests run against: a SQLite file (several
// handles stand in for processes) and a PostgreSQL schema.
func claimDBs(t *testing.T, f func(t *testing.T, target string)) {
	for _, db := range []struct {
		name   string
		target func(t *testing.T) string
	}{
		{"sqlite", func(t *testing.T) string { return filepath.Join(t.TempDir(), "c.db") }},
		{"postgres", func(t *testing.T) string { return pgtest.Schema(t) }},
	} {
		t.Run(db.name, func(t *testing.T) { f(t, db.target(t)) })
	}
}

func openTarget(t *testing.T, target string) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// TestSweepClaimsShareAPlan: three sweeps (each with its own store handle,
// as processes have) claim cells of one plan at once; together they store
// exactly one sweep's cells, and each counts the others' cells.
func TestSweepClaimsShareAPlan(t *testing.T) {
	claimDBs(t, func(t *testing.T, target string) {
		ctx := context.Background()
		cfg := testConfig()
		cfg.Workload.Ms = []int{9, 17, 33, 65}
		one := openStore(t)
		if _, err := Sweep(ctx, cfg, fakeLocal(0), one, nil); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		sums := make([]Summary, 3)
		errs := make([]error, 3)
		for i := range 3 {
			st := openTarget(t, target)
			c := cfg
			c.Claims, c.Lease, c.Poll, c.Owner = st, 10*time.Second, 20*time.Millisecond, fmt.Sprint("p", i)
			wg.Add(1)
			go func() {
				defer wg.Done()
				sums[i], errs[i] = Sweep(ctx, c, fakeLocal(0), st, nil)
			}()
		}
		wg.Wait()
		ran := 0
		for i := range 3 {
			if errs[i] != nil {
				t.Fatal(errs[i])
			}
			s := sums[i]
			if s.Cells+s.Skipped+s.Others != 8 {
				t.Errorf("process %d: %+v", i, s)
			}
			ran += s.Cells
		}
		st := openTarget(t, target)
		if got, want := cellSet(t, st), cellSet(t, one); got != want || ran != 8 {
			t.Errorf("claimed sweeps stored (%d cells run)\n%s\nwant\n%s", ran, got, want)
		}
		// The same command again finds every cell done.
		c := cfg
		c.Claims = st
		sum, err := Sweep(ctx, c, fakeLocal(0), st, nil)
		if err != nil || sum.Cells != 0 || sum.Skipped != 0 || sum.Others != 8 {
			t.Errorf("again: %+v, %v", sum, err)
		}
	})
}

// TestSweepTakesExpiredLease: a cell claimed by a worker that died is
// taken once its lease ends, and the plan completes.
func TestSweepTakesExpiredLease(t *testing.T) {
	claimDBs(t, func(t *testing.T, target string) {
		ctx := context.Background()
		cfg := testConfig()
		st := openTarget(t, target)
		// Learn the plan's key and claim its first cell for a dead owner.
		cands, _ := Candidates(cfg.Families[0], cfg.Tiles)
		dev, _ := fakeLocal(0).Device(ctx)
		prov := result.Provenance{Backend: dev.Backend, Device: dev.Name, Compiler: dev.Compiler, Family: "fake",
			SourceHash: result.SourceHash("good"), Operator: "gemm_f16", Types: builtin.GemmF16().Types()}
		cells := Cells(cfg.Workload)
		plan := PlanKey(prov.Key(), cands, cells)
		if err := st.EnqueueCells(ctx, plan, make([]string, len(cells))); err != nil {
			t.Fatal(err)
		}
		if c, _, err := st.ClaimCell(ctx, plan, "dead", 300*time.Millisecond, nil); c != 0 || err != nil {
			t.Fatalf("claim for the dead owner: %d, %v", c, err)
		}
		cfg.Claims, cfg.Lease, cfg.Poll = st, 5*time.Second, 50*time.Millisecond
		sum, err := Sweep(ctx, cfg, fakeLocal(0), st, nil)
		if err != nil {
			t.Fatal(err)
		}
		if sum.Cells != 4 || sum.Others != 0 {
			t.Errorf("summary %+v", sum)
		}
		claims, _ := st.Claims(ctx, plan)
		if len(claims) != 4 || claims[0].Tries != 2 || claims[0].State != "done" || claims[0].Owner == "dead" {
			t.Errorf("plan %s claims %+v: want cell 0 taken from the dead owner", plan, claims)
		}
	})
}

// lossyClaims loses the lease of the first cell it renews, as when a stalled
// worker's lease passes to another.
type lossyClaims struct {
	Claims
	once sync.Once
}

func (l *lossyClaims) RenewClaim(ctx context.Context, plan string, cell int, owner string, lease time.Duration) error {
	lost := false
	l.once.Do(func() { lost = true })
	if lost {
		return result.ErrLeaseLost
	}
	return l.Claims.RenewClaim(ctx, plan, cell, owner, lease)
}

// holdFirstCell makes the first RunCell run until its context ends (the
// lease renewal that lossyClaims fails cancels it), so the lease is always
// lost while that cell runs, whatever the machine's load; every later
// RunCell returns at once, so no other renewal is needed for the test to
// pass. (It used to be a 300 ms sleep per cell, which let the outcome
// depend on how late the renewal ticks came on a loaded machine.)
type holdFirstCell struct {
	Executor
	held atomic.Bool
}

func (h *holdFirstCell) RunCell(ctx context.Context, job CellJob) (result.CellResult, error) {
	if h.held.CompareAndSwap(false, true) {
		select {
		case <-ctx.Done():
			return result.CellResult{}, ctx.Err()
		case <-time.After(time.Minute):
			return result.CellResult{}, errors.New("holdFirstCell: the lease was never lost")
		}
	}
	return h.Executor.RunCell(ctx, job)
}

// TestSweepStopsCellOnLostLease: a cell whose lease is lost while it runs
// is stopped and not saved; the cell is measured again under a new lease
// and stored once.
func TestSweepStopsCellOnLostLease(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	cfg := testConfig()
	cfg.Workload.Ms = []int{9}
	cfg.Claims, cfg.Lease, cfg.Poll = &lossyClaims{Claims: st}, 150*time.Millisecond, 20*time.Millisecond
	sum, err := Sweep(ctx, cfg, &holdFirstCell{Executor: fakeLocal(0)}, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	if sum.LeasesLost != 1 || sum.Cells != 2 {
		t.Errorf("summary %+v", sum)
	}
	cells, _ := st.Cells(ctx, store.Filter{})
	if len(cells) != 2 {
		t.Errorf("%d cells stored, want 2", len(cells))
	}
}

// TestRetiredExecutorLeavesNoCellBehind: a cell that failed on one device
// and waited in the queue for another is given up (counted as not run)
// when that other device is retired, never lost from the count. Both
// devices fail every cell, so whichever order the failures come in, every
// cell ends as not run.
func TestRetiredExecutorLeavesNoCellBehind(t *testing.T) {
	for i := 0; i < 20; i++ {
		st := openStore(t)
		sum, err := SweepOn(context.Background(), testConfig(), []Executor{&brokenDevice{Executor: fakeLocal(0)}, &brokenDevice{Executor: fakeLocal(1)}}, st, nil)
		if err != nil {
			t.Fatal(err)
		}
		if sum.Cells != 0 || sum.NotRun != sum.Total {
			t.Fatalf("run %d: %d cells measured, %d not run of %d\n%q", i, sum.Cells, sum.NotRun, sum.Total, sum.Warnings)
		}
	}
}
