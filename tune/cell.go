package tune

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tilefit/tilefit/backend"
	"github.com/tilefit/tilefit/kernel"
	"github.com/tilefit/tilefit/measure"
	"github.com/tilefit/tilefit/result"
	"github.com/tilefit/tilefit/verify"
)

// cacheBytes reads the last-level cache size from a device's Props
// ("llc_bytes", "l3_bytes", "l2_bytes" in bytes, or "l3", "l2" as the
// kernel's cache sizes like "32768K"), 64 MiB when none is given.
func cacheBytes(d backend.Device) int64 {
	for _, k := range []string{"llc_bytes", "l3_bytes", "l3", "l2_bytes", "l2"} {
		v := strings.TrimSpace(d.Props[k])
		mult := int64(1)
		switch {
		case strings.HasSuffix(v, "K"):
			v, mult = strings.TrimSuffix(v, "K"), 1<<10
		case strings.HasSuffix(v, "M"):
			v, mult = strings.TrimSuffix(v, "M"), 1<<20
		}
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && n > 0 {
			return n * mult
		}
	}
	return 64 << 20
}

// resourcer is implemented by kernels whose backend knows what a compiled
// kernel uses (the CUDA backend: the function's attributes).
type resourcer interface {
	Resources() (regs, localBytes, sharedBytes int)
}

// kernelResources returns k's resources for result.Candidate.Resources, or
// nil when its backend does not report them or k has no compiled launch
// (a vendor routine reports zero registers).
func kernelResources(k backend.Kernel) map[string]int {
	r, ok := k.(resourcer)
	if !ok {
		return nil
	}
	regs, local, smem := r.Resources()
	if regs <= 0 {
		return nil
	}
	return map[string]int{result.ResRegs: regs, result.ResLocalBytes: local, result.ResSharedBytes: smem}
}

// runCell runs one cell on b, phase by phase (cellRun): inputs (drawn, on
// the device where it can), load, verify (every runnable candidate twice on
// poisoned outputs of the random set 0, bitwise against its numerics
// class's base, the base and the vendors against the float64 reference and
// its probabilistic bound, row hashes; and each verified candidate's run
// on the operator's exact known-answer inputs, kernel.Operator.Exact,
// compared bitwise with its operand's base), the A/A twin taking its
// reference's verdict, the Laplacian check when asked, the paired timing
// of the survivors (a candidate the race confirms slower than the cell's
// best tile leaves it early), then exact (the exact bases' sampled
// elements against the exact answer, computed in the background while the
// device timed: a base off it fails after all, with the candidates bitwise
// equal to it, and their samples are dropped). emit reports progress. A candidate whose failure may have left the device unusable (a
// run error other than a guard violation) ends the attempt with a
// *CandidateFailure; the caller restarts the device and runs the cell again.
//
// Outputs are compared, hashed and scanned where they are
// (backend.Verifier): only indices, row hashes and the elements the float64
// and exact checks sample come back to the host.
func runCell(ctx context.Context, b backend.Backend, dev backend.Device, op *kernel.Operator, job CellJob, emit func(Event)) (result.CellResult, error) {
	r := newCellRun(ctx, b, dev, op, job, emit)
	defer r.close()
	if err := r.prepare(); err != nil {
		return r.res, err
	}
	r.load()
	r.phase("load")
	if err := r.verifyAll(); err != nil {
		return r.res, err
	}
	r.phase("verify")
	r.subPhase("verify", "ref", r.refWait)
	if job.Trace {
		for _, name := range r.partOrder {
			r.subPhase("verify", name, r.parts[name])
		}
	}
	if job.Laplacian {
		if err := laplacianCheck(ctx, b, op, r.d, job, r.kernels, r.cands, emit); err != nil {
			return r.res, err
		}
		r.phase("laplacian")
	}
	r.mirrorTwin()
	if r.dev.Backend == "cpu" {
		// The cpu backend times on the host's cores: the exact answer is
		// computed before, not beside, its timings.
		r.bg.Wait()
	}
	if err := r.timeAll(); err != nil {
		return r.res, err
	}
	r.phase("time")
	r.phases = append(r.phases, r.timeParts...)
	if r.ex != nil {
		// The exact runs were checked in the verify phase; the bases'
		// sampled elements against the exact answer, computed in the
		// background while the device timed, here (exactFinish).
		if err := r.exactFinish(); err != nil {
			return r.res, err
		}
		r.untimeFailed()
		r.phase("exact")
		if job.Trace {
			r.subPhase("exact", "wait", r.exactWait)
			r.phases = append(r.phases, r.bgParts()...)
		}
	}
	return r.finish(), nil
}

// untimeFailed drops the samples of every candidate that failed after it
// was timed (a base the exact check's samples found off the answer, with
// its members): a failed candidate has no timings, as one failed before
// the time phase; the A/A twin of such a reference takes its verdict.
func (r *cellRun) untimeFailed() {
	for i, jc := range r.job.Candidates {
		c := &r.cands[i]
		if jc.AA && c.Status == result.OK && r.ref >= 0 && r.cands[r.ref].Status != result.OK {
			c.Status, c.Detail = result.Skipped, fmt.Sprintf("reference tile failed (%s)", r.cands[r.ref].Status)
		}
		if c.Status != result.OK && (len(c.Samples) > 0 || c.Dispatches > 0) {
			c.Samples, c.Dispatches, c.LeftAt = nil, 0, 0
		}
	}
}

// cellRun is one cell on one backend: the state runCell's phases hand on.
type cellRun struct {
	ctx  context.Context
	b    backend.Backend
	dev  backend.Device
	op   *kernel.Operator
	job  CellJob
	emit func(Event)
	d    kernel.Dims

	res    result.CellResult
	cands  []result.Candidate
	mark   time.Time
	phases []string

	prob backend.Problem
	ver  backend.Verifier
	refs *verify.Refs // the float64 reference of set 0
	// unfused is refs with the operator's unfused bound (refsFor), made
	// when a vendor with fp16 intermediates is checked; host0 the inputs
	// of set 0 both are computed from.
	unfused *verify.Refs
	host0   [][]byte
	// refWait is how long the verify phase's float64 checks waited for
	// their reference's values (computed in the background from prepare);
	// exactWait how long the exact phase waited for the exact answer's
	// (under CellJob.Trace).
	refWait   time.Duration
	exactWait time.Duration
	// bg is the background reference computations; bgTimes their wall
	// times by name (bgStep), for CellJob.Trace.
	bg      sync.WaitGroup
	bgMu    sync.Mutex
	bgTimes []string
	ex      *exactCheck // nil: no exact check on this cell

	kernels []backend.Kernel
	ref     int           // the reference tile's index, -1 when absent
	expect  time.Duration // one run of the reference (the watchdog's scale)

	nextSlot   int // the next unused slot number of prob's verifier
	run1, run2 int // the slots of the candidate being verified
	closers    []func()
	// parts are the verify phase's parts for CellJob.Trace, in the order
	// first seen.
	parts     map[string]time.Duration
	partOrder []string
	timeParts []string // the time phase's, after it
	inParts   []string // the inputs phase's, after it
	sensor    time.Duration
}

func newCellRun(ctx context.Context, b backend.Backend, dev backend.Device, op *kernel.Operator, job CellJob, emit func(Event)) *cellRun {
	start := time.Now()
	c := job.Cell
	r := &cellRun{ctx: ctx, b: b, dev: dev, op: op, job: job, emit: emit, d: c.DimsOrGemm(), mark: start, ref: -1,
		res: result.CellResult{Cell: c, Reference: job.Reference, Seed: job.Seed, Started: start.UTC()}}
	r.cands = make([]result.Candidate, len(job.Candidates))
	for i, jc := range job.Candidates {
		r.cands[i] = result.Candidate{Tile: jc.Tile, Family: jc.Family, Params: paramsText(jc.Params), Vendor: jc.Vendor, AA: jc.AA,
			Status: jc.Status, Detail: jc.Detail, CompileSeconds: jc.CompileSeconds, Class: storedClass(job, jc)}
		if jc.Tile == job.Reference && !jc.AA && !jc.Vendor {
			r.ref = i
		}
	}
	r.kernels = make([]backend.Kernel, len(job.Candidates))
	return r
}

// phase records the time since the last phase under name.
func (r *cellRun) phase(name string) {
	now := time.Now()
	r.phases = append(r.phases, fmt.Sprintf("%s %.2fs", name, now.Sub(r.mark).Seconds()))
	r.mark = now
}

// subPhase records d, a part of the phase just recorded, as "phase/name"
// (a part, not a phase of its own: docs/results/h200-verify/verify-share.py
// does not add it to the cell's time).
func (r *cellRun) subPhase(phase, name string, d time.Duration) {
	r.phases = append(r.phases, fmt.Sprintf("%s/%s %.2fs", phase, name, d.Seconds()))
}

// tick adds the time since t0 to part name of the verify phase (kept only
// under CellJob.Trace) and returns now.
func (r *cellRun) tick(name string, t0 time.Time) time.Time {
	now := time.Now()
	if !r.job.Trace {
		return now
	}
	if r.parts == nil {
		r.parts = map[string]time.Duration{}
	}
	if _, ok := r.parts[name]; !ok {
		r.partOrder = append(r.partOrder, name)
	}
	r.parts[name] += now.Sub(t0)
	return now
}

// close releases the kernels and problems (in reverse order of creation).
func (r *cellRun) close() {
	for i, k := range r.kernels {
		if k != nil && !r.job.Candidates[i].AA {
			k.Close()
		}
	}
	for i := len(r.closers) - 1; i >= 0; i-- {
		r.closers[i]()
	}
}

// slot returns an unused slot number of the cell's verifier.
func (r *cellRun) slot() int {
	r.nextSlot++
	return r.nextSlot - 1
}

// prepare draws the inputs, allocates the problem (and the exact check's)
// and starts computing the references in the background.
func (r *cellRun) prepare() error {
	op, d, job := r.op, r.d, r.job
	mem := job.MemBudget
	if mem <= 0 {
		mem = r.dev.Memory / 2
	}
	maxSets := job.MaxSets
	if maxSets <= 0 {
		maxSets = 16
	}
	nsets := measure.Sets(op.SetBytes(d), cacheBytes(r.dev), mem, maxSets)
	// The watchdog's allowance for drawing the sets (the exact check draws
	// one more) and allocating them.
	r.emit(Event{Cand: -1, Phase: "inputs", Expect: InputsExpect(int64(nsets+1) * op.SetBytes(d))})
	used := map[drawID]bool{}
	_, drawer := r.b.(backend.Drawer)
	t0 := time.Now()
	sets, host0 := cellSets(op, job.Seed, d, nsets, drawer, used)
	r.res.Sets = nsets
	// Set 0 is the one verified: its inputs identify the cell's rows for
	// the batch-invariance check (see verify.InputRows).
	r.res.InputKey, r.res.InputRows = verify.InputRows(op, d, host0)
	t0 = r.inputPart("draw", t0)
	prob, err := backend.NewProblemOf(r.ctx, r.b, op, d, sets)
	t0 = r.inputPart("alloc", t0)
	if err != nil {
		return fmt.Errorf("cell %s M=%d: allocate %d sets: %w", job.Cell.Shape, job.Cell.M, nsets, err)
	}
	r.closers = append(r.closers, func() { prob.Close() })
	r.prob, r.ver = prob, backend.VerifierOf(prob)
	if vp, ok := prob.(backend.VerifyPlace); ok {
		if err := vp.VerifyOnDevice(r.ctx); err != nil {
			r.res.Warnings = append(r.res.Warnings, "outputs verified on the host, not on the device: "+err.Error())
		}
	}
	r.run1, r.run2 = r.slot(), r.slot()
	// One float64 reference for the cell: every class's base and the
	// vendor are checked against the same values, computed once.
	r.refs, r.host0 = verify.NewRefs(op, d, host0, job.Seed^0x5eed, job.MaxSamples), host0
	if r.needsUnfused() {
		r.unfused = verify.NewRefs(op.WithUnfusedBound(), d, host0, job.Seed^0x5eed, job.MaxSamples)
	}
	// The float64 references are computed while the exact check's inputs
	// are drawn and the device runs: first the cell's, which the first
	// class base waits on; then the unfused one (the vendors' outputs
	// only); then the exact answers, which only exactFinish, after the
	// last candidate, waits on.
	refsDone := make(chan struct{})
	r.bg.Add(1)
	go func() {
		defer r.bg.Done()
		defer close(refsDone)
		r.bgStep("refs/fused", func() { r.references(r.refs, nil) })
		if r.unfused != nil {
			r.bgStep("refs/unfused", func() { r.references(r.unfused, r.unfusedOutputs()) })
		}
	}()
	t0 = r.inputPart("refs", t0)
	if err := r.prepareExact(used); err != nil {
		return err
	}
	r.inputPart("exact", t0)
	inputs.keepOnly(used)
	if r.ex != nil {
		// Half the cores: it runs while the device times (exactFinish
		// waits on it after the time phase).
		r.ex.refs.Workers = max(1, runtime.GOMAXPROCS(0)/2)
		r.bg.Add(1)
		go func() {
			defer r.bg.Done()
			<-refsDone
			r.bgStep("refs/exact", func() { r.references(r.ex.refs, nil) })
		}()
	}
	r.phase("inputs")
	r.phases = append(r.phases, r.inParts...)
	return nil
}

// bgStep runs f, one background reference computation, and records its
// wall time under name.
func (r *cellRun) bgStep(name string, f func()) {
	t0 := time.Now()
	f()
	r.bgMu.Lock()
	r.bgTimes = append(r.bgTimes, fmt.Sprintf("%s %.2fs", name, time.Since(t0).Seconds()))
	r.bgMu.Unlock()
}

// bgParts waits for the background reference computations and returns
// their wall times ("refs/fused 0.12s", "refs/unfused …", "refs/exact …":
// parts, not phases, of the cell).
func (r *cellRun) bgParts() []string {
	r.bg.Wait()
	r.bgMu.Lock()
	defer r.bgMu.Unlock()
	return append([]string(nil), r.bgTimes...)
}

// inputPart records part name of the inputs phase (the time since t0)
// under CellJob.Trace and returns now.
func (r *cellRun) inputPart(name string, t0 time.Time) time.Time {
	now := time.Now()
	if r.job.Trace {
		r.inParts = append(r.inParts, fmt.Sprintf("inputs/%s %.2fs", name, now.Sub(t0).Seconds()))
	}
	return now
}

// indexer is a reference whose sampled values Indices computes (once):
// verify.Refs and verify.ExactRefs.
type indexer interface {
	Indices(out int) ([]int, error)
}

// references computes the sampled values of the output operands of x
// (those outs marks; every output when outs is nil), one after another,
// each on every core.
func (r *cellRun) references(x indexer, outs []bool) {
	for j, o := range r.op.Operands {
		if o.Dir == kernel.Out && (outs == nil || outs[j]) {
			_, _ = x.Indices(j) // an error comes back to the check that asks again
		}
	}
}

// unfusedOutputs marks the output operands some runnable candidate checked
// against the unfused reference has (hc_up's vendor baselines have mixh
// only: the unfused values of mixed were computed for nothing).
func (r *cellRun) unfusedOutputs() []bool {
	outs := make([]bool, len(r.op.Operands))
	for i, jc := range r.job.Candidates {
		if jc.F16Intermediate && jc.Status == "" {
			for j, p := range r.present(i) {
				outs[j] = outs[j] || p
			}
		}
	}
	return outs
}

// load loads the runnable candidates; the A/A twin shares the reference's
// kernel.
func (r *cellRun) load() {
	for i, jc := range r.job.Candidates {
		if r.cands[i].Status != "" || jc.AA {
			continue
		}
		r.emit(Event{Cand: i, Phase: "load"})
		k, err := r.b.Load(r.ctx, jc.Tile, jc.Artifact, jc.Plan)
		if err != nil {
			r.cands[i].Status, r.cands[i].Detail = result.CompileFailed, "load: "+err.Error()
			continue
		}
		r.kernels[i] = k
		r.cands[i].Resources = kernelResources(k)
	}
	r.bindAll()
	for i, jc := range r.job.Candidates {
		if jc.AA && r.cands[i].Status == "" {
			if r.ref < 0 || r.kernels[r.ref] == nil {
				r.cands[i].Status, r.cands[i].Detail = result.Skipped, "reference tile not runnable"
				continue
			}
			r.kernels[i] = r.kernels[r.ref]
			r.cands[i].Resources = r.cands[r.ref].Resources
		}
	}
}

// binder is a Problem that resolves a kernel's plan against its buffers
// ahead of the kernel's first run (the CUDA problem's Bind: parameter
// blocks, tensor maps, scratch buffers, cuBLASLt's choice of algorithm).
type binder interface {
	Bind(ctx context.Context, k backend.Kernel) error
}

// bindAll binds every loaded kernel to the cell's problems (the exact
// check's after the cell's own, as their first runs did) in the load
// phase. An error is left for the kernel's first run, which binds again
// and fails as it always did.
func (r *cellRun) bindAll() {
	probs := []backend.Problem{r.prob}
	if r.ex != nil {
		probs = append(probs, r.ex.prob)
	}
	for _, p := range probs {
		b, ok := p.(binder)
		if !ok {
			continue
		}
		for _, k := range r.kernels {
			if k != nil {
				_ = b.Bind(r.ctx, k)
			}
		}
	}
}

// order is the verification order: the reference first (its outputs are
// the first class's base and its run time scales the watchdog), then the
// others as given.
func (r *cellRun) order() []int {
	order := make([]int, 0, len(r.cands))
	if r.ref >= 0 {
		order = append(order, r.ref)
	}
	for i := range r.cands {
		if i != r.ref {
			order = append(order, i)
		}
	}
	return order
}

// present lists the operands candidate i has.
func (r *cellRun) present(i int) []bool {
	if p := r.job.Candidates[i].Present; len(p) == len(r.op.Operands) {
		return p
	}
	all := make([]bool, len(r.op.Operands))
	for j := range all {
		all[j] = true
	}
	return all
}

// runErr turns the error of a step of candidate i into its verdict: a
// guard violation fails it (numeric, what + the message; nil is
// returned), a cancelled context ends the cell, and any other error —
// the device may be unusable — is a *CandidateFailure.
func (r *cellRun) runErr(i int, err error, what string) error {
	if r.ctx.Err() != nil {
		return r.ctx.Err()
	}
	var ge *backend.GuardError
	if errors.As(err, &ge) {
		r.cands[i].Status, r.cands[i].Detail = result.NumericFailed, what+err.Error()
		return nil
	}
	return &CandidateFailure{Cand: i, Status: result.Crashed, Detail: what + err.Error()}
}

// mirrorTwin gives the A/A twin its reference's verdict: the same kernel
// on the same inputs, so a failed reference fails its twin too, and only
// a verified reference's twin is timed.
func (r *cellRun) mirrorTwin() {
	for i, jc := range r.job.Candidates {
		if !jc.AA || r.cands[i].Status != "" {
			continue
		}
		switch {
		case r.ref < 0:
			r.cands[i].Status, r.cands[i].Detail = result.Skipped, "reference tile not runnable"
		case r.cands[r.ref].Status == result.OK:
			rc := r.cands[r.ref]
			r.cands[i].Status, r.cands[i].Bitwise, r.cands[i].MaxErr = result.OK, rc.Bitwise, rc.MaxErr
		default:
			r.cands[i].Status, r.cands[i].Detail = result.Skipped, fmt.Sprintf("reference tile failed (%s)", r.cands[r.ref].Status)
		}
	}
}

// timeAll times every verified candidate with the paired protocol; the
// reference, the A/A twin and the vendors keep their full rounds, any
// other tile may leave the race early (measure.Options.Race).
func (r *cellRun) timeAll() error {
	var timed []int
	var ks []backend.Kernel
	mo := r.job.Measure
	mo.Keep = nil
	for i := range r.cands {
		if r.cands[i].Status == result.OK {
			if r.cands[i].Vendor || r.cands[i].AA || i == r.ref {
				mo.Keep = append(mo.Keep, len(timed))
			}
			timed = append(timed, i)
			ks = append(ks, r.kernels[i])
		}
	}
	sensor, _ := r.b.(backend.Sensor)
	current := -1
	hooks := measure.Hooks{
		Begin: func(j, n int, exp time.Duration) {
			current = timed[j]
			r.emit(Event{Cand: timed[j], Phase: "time", Expect: exp})
		},
		Round: func(int) {
			if sensor != nil {
				t0 := time.Now()
				if s, err := sensor.Reading(r.ctx); err == nil {
					r.res.Clocks = append(r.res.Clocks, s)
				}
				r.sensor += time.Since(t0)
			}
		},
	}
	mo.Anchor = anchorIndex(r.cands, timed, r.res.Reference)
	mres, err := measure.Run(r.ctx, r.prob, ks, mo, hooks)
	if err != nil {
		if r.ctx.Err() != nil {
			return r.ctx.Err()
		}
		if current < 0 {
			return fmt.Errorf("cell %s M=%d: %w", r.job.Cell.Shape, r.job.Cell.M, err)
		}
		return &CandidateFailure{Cand: current, Status: result.Crashed, Detail: "while timing: " + err.Error()}
	}
	for j, i := range timed {
		r.cands[i].Samples = mres.Samples[j]
		r.cands[i].Dispatches = mres.Dispatches[j]
		if mres.Left != nil {
			r.cands[i].LeftAt = mres.Left[j]
		}
	}
	r.res.Rounds = mres.Rounds
	if r.job.Trace {
		// The timed dispatches' own time (events or graph replays), against
		// which the rest of the phase is the host's: launches, syncs,
		// captures, progress events.
		var gpu float64
		for j := range timed {
			for _, us := range mres.Samples[j] {
				gpu += us * float64(mres.Dispatches[j])
			}
		}
		r.timeParts = []string{fmt.Sprintf("time/warmup %.2fs", mres.Warmup.Seconds()), fmt.Sprintf("time/gpu %.2fs", gpu/1e6),
			fmt.Sprintf("time/sensor %.3fs", r.sensor.Seconds())}
	}
	return nil
}

// finish completes the result.
func (r *cellRun) finish() result.CellResult {
	r.res.Phases = strings.Join(r.phases, ", ")
	for i := range r.cands {
		if r.cands[i].Status == "" {
			r.cands[i].Status = result.Skipped
		}
		r.cands[i].Detail = firstLines(r.cands[i].Detail, 40)
	}
	r.res.Candidates = r.cands
	r.res.Finished = time.Now().UTC()
	return r.res
}

// firstLines keeps the first n lines of s.
func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = append(lines[:n], "…")
	}
	return strings.Join(lines, "\n")
}

// runWithRetries runs attempt until it succeeds, marking the candidate of
// each *CandidateFailure failed and calling restart before the next try.
func runWithRetries(ctx context.Context, job CellJob, attempt func(context.Context, CellJob) (result.CellResult, error), restart func() error) (result.CellResult, error) {
	job.Candidates = append([]JobCandidate(nil), job.Candidates...)
	for try := 0; ; try++ {
		res, err := attempt(ctx, job)
		var cf *CandidateFailure
		if !errors.As(err, &cf) || try > len(job.Candidates) {
			return res, err
		}
		if cf.Cand < 0 || cf.Cand >= len(job.Candidates) {
			return res, fmt.Errorf("worker blamed candidate %d of %d: %w", cf.Cand, len(job.Candidates), err)
		}
		job.Candidates[cf.Cand].Status = cf.Status
		job.Candidates[cf.Cand].Detail = cf.Detail
		// The A/A twin of a failed reference fails with it.
		for i := range job.Candidates {
			if job.Candidates[i].AA && job.Candidates[i].Tile == job.Candidates[cf.Cand].Tile+AASuffix {
				job.Candidates[i].Status, job.Candidates[i].Detail = result.Skipped, "reference failed"
			}
		}
		if restart != nil {
			if err := restart(); err != nil {
				return res, fmt.Errorf("restart after %s failed: %w", job.Candidates[cf.Cand].Tile, err)
			}
		}
	}
}

// AASuffix marks the A/A twin of the reference tile: "64_128_2~aa".
const AASuffix = "~aa"

// presentRows returns the row hashes of rows whose operand is present
// (pres, indexed like op.Operands).
func presentRows(op *kernel.Operator, rows []result.RowHashes, pres []bool) []result.RowHashes {
	var out []result.RowHashes
	for _, r := range rows {
		if _, j, ok := op.Operand(r.Operand); ok && pres[j] {
			out = append(out, r)
		}
	}
	return out
}

// covers reports whether every operand present in b is present in a.
func covers(a, b []bool) bool {
	for j := range b {
		if b[j] && !a[j] {
			return false
		}
	}
	return true
}

// paramsText is the stored form of p (result.Candidate.Params): "" for none.
func paramsText(p kernel.Params) string {
	if p == nil {
		return ""
	}
	return p.String()
}
