package tune

// Scheduling a plan's cells over executors (devices) and processes.

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tilefit/tilefit/backend"
	"github.com/tilefit/tilefit/result"
)

// A Shard is shard I of N of a plan (0 ≤ I < N): the cells whose stable
// hash (ShardOf) is I. The zero Shard (and any N ≤ 1) holds every cell.
type Shard struct{ I, N int }

// ParseShard parses "I/N" (0 ≤ I < N ≤ MaxShards).
func ParseShard(s string) (Shard, error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(strings.TrimSpace(a))
	n, err2 := strconv.Atoi(strings.TrimSpace(b))
	switch {
	case !ok || err1 != nil || err2 != nil:
		return Shard{}, fmt.Errorf("want I/N (shard I of N, counting from 0), got %q", s)
	case n < 1 || n > MaxShards:
		return Shard{}, fmt.Errorf("want 1 to %d shards, got %d", MaxShards, n)
	case i < 0 || i >= n:
		return Shard{}, fmt.Errorf("shard %d of %d: want 0 to %d", i, n, n-1)
	}
	return Shard{I: i, N: n}, nil
}

// MaxShards bounds N in a Shard.
const MaxShards = 100000

func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.I, s.N) }

// Has reports whether cell c belongs to shard s.
func (s Shard) Has(c result.Cell) bool {
	return s.N <= 1 || ShardOf(c, s.N) == s.I
}

// ShardOf is the shard (of n) that cell c belongs to: FNV-1a of its key
// (CellKey) modulo n. It depends only on the cell — not on the order of
// the workload, the host or the Go version — so every pod of a fleet
// computes the same shards.
func ShardOf(c result.Cell, n int) int {
	if n <= 1 {
		return 0
	}
	h := fnv.New64a()
	h.Write([]byte(CellKey(c)))
	return int(h.Sum64() % uint64(n))
}

// CellKey identifies a cell within an operator's plan: its operator, shape
// name and every dimension (M included).
func CellKey(c result.Cell) string {
	op := c.Op
	if op == "" {
		op = "gemm_f16"
	}
	return op + "\x00" + c.Shape + "\x00" + c.DimsOrGemm().String()
}

// PlanKey names a plan in the claims table: the provenance key, the
// candidates (in order) and the cells. Sweeps that run the same command on
// devices of one provenance share it.
func PlanKey(provKey string, cands []JobCandidate, cells []result.Cell) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00", provKey)
	for _, c := range cands {
		fmt.Fprintf(h, "cand %s\x00", c.Tile)
	}
	for _, c := range cells {
		fmt.Fprintf(h, "cell %s\x00", CellKey(c))
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// DefaultOwner names this process in claims: host, pid and a random part
// (a restarted pod with the same host name and pid is another owner).
func DefaultOwner() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "host"
	}
	b := make([]byte, 3)
	rand.Read(b)
	return fmt.Sprintf("%s/%d/%s", host, os.Getpid(), hex.EncodeToString(b))
}

// devicesOf asks every executor for its device, all at once. An executor
// whose device fails is left out (a warning) when others work; with none
// working the first error is returned.
func devicesOf(ctx context.Context, exs []Executor) ([]backend.Device, []bool, []string, error) {
	devs := make([]backend.Device, len(exs))
	errs := make([]error, len(exs))
	var wg sync.WaitGroup
	for i, ex := range exs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			devs[i], errs[i] = ex.Device(ctx)
		}()
	}
	wg.Wait()
	live := make([]bool, len(exs))
	var warnings []string
	n := 0
	for i, err := range errs {
		if err == nil {
			live[i] = true
			n++
		}
	}
	if n == 0 {
		return devs, live, nil, fmt.Errorf("device: %w", errs[0])
	}
	for i, err := range errs {
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("executor %d left out: device: %v", i, err))
		}
	}
	return devs, live, warnings, nil
}

// A queue hands a plan's cells (indices) to executors.
type queue interface {
	// next returns a cell for owner, not one in skip; or -1 and how many
	// cells (not in skip) are not done: 0 when the plan is finished.
	next(ctx context.Context, owner string, skip []int) (cell, pending int, err error)
	// renew extends owner's hold on cell (result.ErrLeaseLost: gone).
	renew(ctx context.Context, cell int, owner string) error
	// release gives cell back to the queue.
	release(ctx context.Context, cell int, owner string) error
	// finish marks cell done with nothing to save.
	finish(ctx context.Context, cell int, owner string) error
	// save stores cell's result and marks it done.
	save(ctx context.Context, cell int, owner string, res result.CellResult) error
	// leased reports whether holds expire (claims) and must be renewed.
	leased() bool
}

// memQueue is the queue of one process: no other process shares the plan.
type memQueue struct {
	mu    sync.Mutex
	state []int8 // 0 to do, 1 running, 2 done
	order []int  // the order cells are handed out in
	st    Results
}

// newMemQueue queues n cells in plan order; with several executors the
// largest cells (by FLOPs) go first, so that the last cells to finish are
// short ones and the devices end together.
func newMemQueue(cells []result.Cell, executors int, st Results) *memQueue {
	q := &memQueue{state: make([]int8, len(cells)), st: st}
	for i := range cells {
		q.order = append(q.order, i)
	}
	if executors > 1 {
		sort.SliceStable(q.order, func(a, b int) bool { return cells[q.order[a]].FLOPs() > cells[q.order[b]].FLOPs() })
	}
	return q
}

func (q *memQueue) next(_ context.Context, _ string, skip []int) (int, int, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	skipped := map[int]bool{}
	for _, c := range skip {
		skipped[c] = true
	}
	pending := 0
	for _, i := range q.order {
		s := q.state[i]
		if skipped[i] || s == 2 {
			continue
		}
		if s == 0 {
			q.state[i] = 1
			return i, 1, nil
		}
		pending++
	}
	return -1, pending, nil
}

func (q *memQueue) set(cell int, s int8) {
	q.mu.Lock()
	q.state[cell] = s
	q.mu.Unlock()
}

func (q *memQueue) renew(context.Context, int, string) error { return nil }
func (q *memQueue) release(_ context.Context, cell int, _ string) error {
	q.set(cell, 0)
	return nil
}
func (q *memQueue) finish(_ context.Context, cell int, _ string) error {
	q.set(cell, 2)
	return nil
}
func (q *memQueue) save(ctx context.Context, cell int, _ string, res result.CellResult) error {
	if _, err := q.st.SaveCell(ctx, res); err != nil {
		return err
	}
	q.set(cell, 2)
	return nil
}
func (q *memQueue) leased() bool { return false }

// claimQueue is the plan's queue in the store, shared with other processes.
type claimQueue struct {
	c     Claims
	plan  string
	lease time.Duration
}

// DefaultLease is Config.Lease's default.
const DefaultLease = 60 * time.Second

func newClaimQueue(ctx context.Context, cfg Config, provKey string, cands []JobCandidate, cells []result.Cell) (*claimQueue, error) {
	q := &claimQueue{c: cfg.Claims, plan: PlanKey(provKey, cands, cells), lease: cfg.Lease}
	if q.lease <= 0 {
		q.lease = DefaultLease
	}
	names := make([]string, len(cells))
	for i, c := range cells {
		names[i] = fmt.Sprintf("%s M=%d", c.Shape, c.M)
	}
	if err := q.c.EnqueueCells(ctx, q.plan, names); err != nil {
		return nil, err
	}
	return q, nil
}

func (q *claimQueue) next(ctx context.Context, owner string, skip []int) (int, int, error) {
	return q.c.ClaimCell(ctx, q.plan, owner, q.lease, skip)
}
func (q *claimQueue) renew(ctx context.Context, cell int, owner string) error {
	return q.c.RenewClaim(ctx, q.plan, cell, owner, q.lease)
}
func (q *claimQueue) release(ctx context.Context, cell int, owner string) error {
	return q.c.ReleaseClaim(ctx, q.plan, cell, owner)
}
func (q *claimQueue) finish(ctx context.Context, cell int, owner string) error {
	return q.c.FinishClaim(ctx, q.plan, cell, owner)
}
func (q *claimQueue) save(ctx context.Context, cell int, owner string, res result.CellResult) error {
	_, err := q.c.SaveClaimed(ctx, q.plan, cell, owner, res)
	return err
}
func (q *claimQueue) leased() bool { return true }

// A scheduler runs a plan's cells on its executors, one goroutine each.
type scheduler struct {
	cfg      Config
	exs      []Executor
	devs     []backend.Device
	st       Results
	prov     result.Provenance
	cells    []result.Cell
	job      func(ci int, done map[string]result.Status) (CellJob, bool)
	progress func(Progress)
	start    time.Time
	q        queue

	mu          sync.Mutex // guards everything below and sum
	sum         *Summary
	live        []bool
	failures    map[string]int       // candidate → cells it crashed or hung in
	failedBy    map[int]map[int]bool // cell → executors it failed on
	consecutive []int                // executor → cells failed in a row
	givenUp     map[int]bool         // cells not run (failed on every live executor)
	done        int                  // cells finished or skipped here
	fatal       error
	interrupted string                 // the cell in flight at an interrupt, if any
	warned      map[string]bool        // shapes warned about (batch invariance)
	shapeLocks  map[string]*sync.Mutex // one per shape: compare rows, then save
}

// shapeLock returns the lock of cell's shape: the batch-invariance check
// reads the shape's stored cells and the save adds this one, so two cells
// of a shape that finish at once on two executors must not both check
// before either is saved.
func (s *scheduler) shapeLock(cell result.Cell) *sync.Mutex {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := cell.Op + "\x00" + cell.Shape
	if s.shapeLocks[k] == nil {
		s.shapeLocks[k] = &sync.Mutex{}
	}
	return s.shapeLocks[k]
}

// run starts an executor loop per live executor and waits for them.
func (s *scheduler) run(ctx context.Context) error {
	s.failedBy = map[int]map[int]bool{}
	s.givenUp = map[int]bool{}
	s.warned = map[string]bool{}
	s.shapeLocks = map[string]*sync.Mutex{}
	s.consecutive = make([]int, len(s.exs))
	s.sum.PerExecutor = make([]int, len(s.exs))
	owner := s.cfg.Owner
	if owner == "" {
		owner = DefaultOwner()
	}
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	for e := range s.exs {
		if !s.live[e] {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.loop(ctx, e, fmt.Sprintf("%s/e%d", owner, e)); err != nil {
				s.mu.Lock()
				if s.fatal == nil || errors.Is(s.fatal, errStopped) {
					s.fatal = err
				}
				s.mu.Unlock()
				cancel() // the other executors stop too
			}
		}()
	}
	wg.Wait()
	if s.fatal != nil && !errors.Is(s.fatal, errStopped) {
		return s.fatal
	}
	if parent.Err() != nil || closed(s.cfg.Stop) || s.fatal != nil {
		if s.interrupted != "" {
			return fmt.Errorf("%w during cell %s (not saved) after %d of %d cells", ErrInterrupted, s.interrupted, s.done, len(s.cells))
		}
		if s.done+s.sum.NotRun < len(s.cells) {
			return fmt.Errorf("%w after %d of %d cells", ErrInterrupted, s.done, len(s.cells))
		}
	}
	if s.q.leased() {
		s.sum.Others = max(0, s.sum.Total-s.sum.Cells-s.sum.Skipped-s.sum.NotRun)
	}
	return nil
}

// errStopped ends an executor loop on an interrupt (not an error of its own).
var errStopped = errors.New("stopped")

// skipFor lists the cells executor e must not take: those it failed and
// those given up.
func (s *scheduler) skipFor(e int) []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []int
	for c := range s.givenUp {
		out = append(out, c)
	}
	for c, by := range s.failedBy {
		if by[e] && !s.givenUp[c] {
			out = append(out, c)
		}
	}
	return out
}

func (s *scheduler) poll() time.Duration {
	if s.cfg.Poll > 0 {
		return s.cfg.Poll
	}
	if s.q.leased() {
		lease := s.cfg.Lease
		if lease <= 0 {
			lease = DefaultLease
		}
		return min(lease/4, 2*time.Second)
	}
	return 20 * time.Millisecond
}

// loop is executor e's: claim a cell, run it, save it, until the plan is
// done, the sweep is interrupted, or the executor is retired. A finished
// cell is checked for batch invariance and saved while the executor runs
// the next one (one save in flight, in order: each waits for the one
// before); the loop returns only after its last save, so an interrupted
// or ended sweep has saved every cell that finished (its error, if any,
// is the loop's).
func (s *scheduler) loop(ctx context.Context, e int, owner string) (err error) {
	var saving chan error // the previous cell's save, in flight
	settle := func() error {
		if saving == nil {
			return nil
		}
		err := <-saving
		saving = nil
		return err
	}
	defer func() {
		if serr := settle(); serr != nil && (err == nil || errors.Is(err, errStopped)) {
			err = serr
		}
	}()
	for {
		if ctx.Err() != nil || closed(s.cfg.Stop) {
			return errStopped
		}
		s.mu.Lock()
		alive := s.live[e]
		s.mu.Unlock()
		if !alive {
			return nil
		}
		ci, pending, err := s.q.next(ctx, owner, s.skipFor(e))
		if err != nil {
			if ctx.Err() != nil {
				return errStopped
			}
			return err
		}
		if ci < 0 {
			if saving != nil {
				// The cell still pending may be the one this loop is
				// saving: wait for it rather than poll.
				if err := settle(); err != nil {
					return err
				}
				continue
			}
			if pending == 0 {
				return nil
			}
			select {
			case <-ctx.Done():
				return errStopped
			case <-s.cfg.Stop:
				return errStopped
			case <-time.After(s.poll()):
			}
			continue
		}
		save, err := s.runOne(ctx, e, owner, ci)
		if err != nil {
			return err
		}
		if save != nil {
			if err := settle(); err != nil {
				return err
			}
			ch := make(chan error, 1)
			go func() { ch <- save() }()
			saving = ch
		}
	}
}

// background is a context for the steps that must happen even after an
// interrupt (saving a finished cell, giving a claim back).
func background(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
}

// runOne runs cell ci on executor e under owner's hold. A cell that
// finished comes back as save, which checks its batch invariance and
// saves it (finishCell); nil when there is nothing to save.
func (s *scheduler) runOne(ctx context.Context, e int, owner string, ci int) (save func() error, err error) {
	cell := s.cells[ci]
	name := fmt.Sprintf("%s M=%d", cell.Shape, cell.M)
	giveBack := func() {
		bctx, cancel := background(ctx)
		defer cancel()
		s.q.release(bctx, ci, owner)
	}
	done, err := s.st.Measured(ctx, s.prov.Key(), cell)
	if err != nil {
		giveBack()
		if ctx.Err() != nil {
			return nil, errStopped
		}
		return nil, err
	}
	s.mu.Lock()
	job, ok := s.job(ci, done)
	s.mu.Unlock()
	if !ok {
		if err := s.q.finish(ctx, ci, owner); err != nil && !errors.Is(err, result.ErrLeaseLost) {
			if ctx.Err() != nil {
				return nil, errStopped
			}
			return nil, err
		}
		s.mu.Lock()
		s.sum.Skipped++
		s.done++
		p := Progress{Done: s.done, Total: len(s.cells), Cell: cell, Skipped: true, Executor: e, DeviceID: s.devs[e].UUID, Elapsed: time.Since(s.start)}
		s.report(p)
		s.mu.Unlock()
		return nil, nil
	}
	if s.q.leased() || len(s.exs) > 1 {
		s.mu.Lock()
		s.report(Progress{Done: s.done, Total: len(s.cells), Cell: cell, Started: true, Executor: e, DeviceID: s.devs[e].UUID, Elapsed: time.Since(s.start)})
		s.mu.Unlock()
	}

	res, leaseLost, err := s.runLeased(ctx, e, owner, ci, job)
	if err != nil {
		switch {
		case ctx.Err() != nil:
			giveBack()
			s.mu.Lock()
			if s.interrupted == "" {
				s.interrupted = name
			}
			s.mu.Unlock()
			return nil, errStopped
		case leaseLost:
			s.mu.Lock()
			s.sum.LeasesLost++
			s.sum.Warnings = append(s.sum.Warnings, fmt.Sprintf("cell %s: the lease passed to another worker while it ran; stopped, not saved", name))
			s.mu.Unlock()
			return nil, nil
		}
		s.deviceFailed(e, ci, name, err)
		giveBack()
		return nil, nil
	}
	s.finished(e, ci, res)
	return func() error { return s.finishCell(ctx, e, owner, ci, name, res) }, nil
}

// deviceFailed records that cell ci failed on executor e (err is not a
// candidate's failure: the device or its worker failed). The cell goes back
// to the queue for the other executors; after two such failures in a row
// an executor is retired while others live; a cell that failed on every
// live executor is given up.
func (s *scheduler) deviceFailed(e, ci int, name string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failedBy[ci] == nil {
		s.failedBy[ci] = map[int]bool{}
	}
	s.failedBy[ci][e] = true
	s.consecutive[e]++
	liveN := 0
	for _, l := range s.live {
		if l {
			liveN++
		}
	}
	if s.consecutive[e] >= 2 && liveN > 1 {
		s.live[e] = false
		s.sum.Warnings = append(s.sum.Warnings, fmt.Sprintf("executor %d (%s) retired after %d failed cells in a row (last: %s: %v); its cells go to the other executors",
			e, s.devs[e].UUID, s.consecutive[e], name, err))
	}
	if s.failedOnEveryLive(ci) {
		s.givenUp[ci] = true
		s.sum.NotRun++
		s.sum.Missing = append(s.sum.Missing, Missing{Cell: s.cells[ci], Why: err.Error()})
		s.sum.Warnings = append(s.sum.Warnings, fmt.Sprintf("cell %s not run: %v", name, err))
	} else {
		s.sum.Warnings = append(s.sum.Warnings, fmt.Sprintf("cell %s failed on executor %d (%s): %v; back to the queue", name, e, s.devs[e].UUID, err))
	}
	if s.live[e] {
		return
	}
	// Retiring e can leave cells that failed earlier on the executors still
	// live, and were waiting in the queue for e: no live executor will take
	// them (each skips the cells it failed), so they are given up now, or
	// they would be lost from the count.
	for c, by := range s.failedBy {
		if c == ci || s.givenUp[c] || len(by) == 0 || !s.failedOnEveryLive(c) {
			continue
		}
		s.givenUp[c] = true
		s.sum.NotRun++
		s.sum.Missing = append(s.sum.Missing, Missing{Cell: s.cells[c], Why: "it failed on every executor still live"})
		s.sum.Warnings = append(s.sum.Warnings, fmt.Sprintf("cell %s M=%d not run: it failed on every executor still live", s.cells[c].Shape, s.cells[c].M))
	}
}

// failedOnEveryLive reports whether cell c failed on every live executor
// (s.mu held).
func (s *scheduler) failedOnEveryLive(c int) bool {
	for x, l := range s.live {
		if l && !s.failedBy[c][x] {
			return false
		}
	}
	return true
}

// report calls the progress callback (under s.mu: one at a time, in order).
func (s *scheduler) report(p Progress) {
	if s.progress != nil {
		s.progress(p)
	}
}

// runLeased runs cell ci on executor e, renewing its lease (when the queue
// leases) while it runs; a lost lease stops the cell (leaseLost).
func (s *scheduler) runLeased(ctx context.Context, e int, owner string, ci int, job CellJob) (res result.CellResult, leaseLost bool, err error) {
	// Renew the lease while the cell runs; a lost lease stops the cell.
	cellCtx, cancelCell := context.WithCancel(ctx)
	defer cancelCell()
	var lost sync.Once
	renewDone := make(chan struct{})
	if s.q.leased() {
		lease := s.cfg.Lease
		if lease <= 0 {
			lease = DefaultLease
		}
		go func() {
			defer close(renewDone)
			t := time.NewTicker(lease / 3)
			defer t.Stop()
			for {
				select {
				case <-cellCtx.Done():
					return
				case <-t.C:
					if err := s.q.renew(cellCtx, ci, owner); errors.Is(err, result.ErrLeaseLost) {
						lost.Do(func() { leaseLost = true })
						cancelCell()
						return
					}
					// Other errors (the server briefly away) are retried
					// at the next tick; the lease outlives two misses.
				}
			}
		}()
	} else {
		close(renewDone)
	}
	res, err = s.exs[e].RunCell(cellCtx, job)
	cancelCell()
	<-renewDone
	return res, leaseLost, err
}

// finished records at once what the next cell's job depends on: the
// crashes and hangs of cell ci's candidates (a candidate is skipped after
// MaxFailures) and that executor e measured a cell.
func (s *scheduler) finished(e, ci int, res result.CellResult) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.consecutive[e] = 0
	delete(s.failedBy, ci) // measured: its earlier device failures no longer matter
	for _, c := range res.Candidates {
		if c.Status == result.Crashed || c.Status == result.Timeout {
			s.failures[c.Tile]++
		}
	}
}

// finishCell checks a finished cell's batch invariance against the
// shape's stored cells, counts its failures and saves it.
func (s *scheduler) finishCell(ctx context.Context, e int, owner string, ci int, name string, res result.CellResult) error {
	cell := s.cells[ci]
	res.Prov = s.prov
	res.DeviceID = s.devs[e].UUID
	lock := s.shapeLock(cell)
	lock.Lock()
	defer lock.Unlock()
	// Batch invariance: compare the rows with the shape's stored cells at
	// other M (earlier in this sweep, on another executor, or in an earlier
	// process).
	bctx, cancel := background(ctx)
	stored, err := s.st.ShapeRows(bctx, s.prov.Key(), cell)
	cancel()
	if err != nil {
		return fmt.Errorf("cell %s: batch invariance: %w", name, err)
	}
	s.mu.Lock()
	if w := checkInvariance(&res, stored); w != "" && !s.warned[cell.Shape] {
		s.warned[cell.Shape] = true // once per shape
		s.sum.Warnings = append(s.sum.Warnings, w)
	}
	for _, w := range res.Warnings {
		// The cell's own (no exact check, a vendor off the exact answer,
		// verification on the host): each kind once per sweep, the first
		// cell's text.
		kind, _, _ := strings.Cut(w, ": ")
		if !s.warned["\x00"+kind] {
			s.warned["\x00"+kind] = true
			s.sum.Warnings = append(s.sum.Warnings, "cell "+name+": "+w)
		}
	}
	for _, c := range res.Candidates {
		if c.Status != result.OK && c.Status != result.Skipped {
			s.sum.Failures++
		}
	}
	s.mu.Unlock()
	// A finished cell is saved even when an interrupt came after it:
	// losing it would only mean measuring it again on resume.
	bctx, cancel = background(ctx)
	err = s.q.save(bctx, ci, owner, res)
	cancel()
	if errors.Is(err, result.ErrLeaseLost) {
		s.mu.Lock()
		s.sum.LeasesLost++
		s.sum.Warnings = append(s.sum.Warnings, fmt.Sprintf("cell %s: the lease passed to another worker before the result was saved; not saved (the other worker measures it)", name))
		s.mu.Unlock()
		return nil
	}
	if err != nil {
		return fmt.Errorf("save cell %s: %w", name, err)
	}
	s.mu.Lock()
	s.sum.Cells++
	s.sum.PerExecutor[e]++
	s.done++
	s.report(Progress{Done: s.done, Total: len(s.cells), Cell: cell, Executor: e, DeviceID: s.devs[e].UUID, Elapsed: time.Since(s.start), Phases: res.Phases})
	s.mu.Unlock()
	return nil
}
