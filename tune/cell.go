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

// runCell runs one cell on b: it verifies every runnable candidate (two runs
// on poisoned outputs, bitwise against the reference tile, numerically
// against float64) and times the survivors with the paired protocol.
// emit reports progress. A candidate whose failure may have left the device
// unusable (a run error other than a guard violation) ends the attempt with a
// *CandidateFailure; the caller restarts the device and runs the cell again.
//
// Verification is per output operand present for a candidate: bitwise
// against the first verified candidate of the same numerics class (the
// reference tile's class first), and against the operator's float64
// reference within its bound. Vendor baselines are checked numerically only.
func runCell(ctx context.Context, b backend.Backend, dev backend.Device, op *kernel.Operator, job CellJob, emit func(Event)) (result.CellResult, error) {
	start := time.Now()
	var phases []string
	mark := start
	phase := func(name string) {
		now := time.Now()
		phases = append(phases, fmt.Sprintf("%s %.2fs", name, now.Sub(mark).Seconds()))
		mark = now
	}
	c := job.Cell
	d := c.DimsOrGemm()
	res := result.CellResult{Cell: c, Reference: job.Reference, Seed: job.Seed, Started: start.UTC()}
	cands := make([]result.Candidate, len(job.Candidates))
	for i, jc := range job.Candidates {
		cands[i] = result.Candidate{Tile: jc.Tile, Family: jc.Family, Params: paramsText(jc.Params), Vendor: jc.Vendor, AA: jc.AA,
			Status: jc.Status, Detail: jc.Detail, CompileSeconds: jc.CompileSeconds}
	}

	mem := job.MemBudget
	if mem <= 0 {
		mem = dev.Memory / 2
	}
	maxSets := job.MaxSets
	if maxSets <= 0 {
		maxSets = 16
	}
	nsets := measure.Sets(op.SetBytes(d), cacheBytes(dev), mem, maxSets)
	sets := genSets(op, job.Seed, d, nsets)
	res.Sets = nsets
	// Set 0 is the one verified: its inputs identify the cell's rows for
	// the batch-invariance check (see verify.InputRows).
	res.InputKey, res.InputRows = verify.InputRows(op, d, sets[0])
	prob, err := b.NewProblem(ctx, op, d, sets)
	if err != nil {
		return res, fmt.Errorf("cell %s M=%d: allocate %d sets: %w", c.Shape, c.M, nsets, err)
	}
	defer prob.Close()
	phase("inputs")

	// Load the runnable candidates; the A/A twin shares the reference's kernel.
	kernels := make([]backend.Kernel, len(cands))
	defer func() {
		for i, k := range kernels {
			if k != nil && !job.Candidates[i].AA {
				k.Close()
			}
		}
	}()
	ref := -1
	for i, jc := range job.Candidates {
		if jc.Tile == job.Reference && !jc.AA && !jc.Vendor {
			ref = i
		}
	}
	for i, jc := range job.Candidates {
		if cands[i].Status != "" || jc.AA {
			continue
		}
		emit(Event{Cand: i, Phase: "load"})
		var k backend.Kernel
		var err error
		k, err = b.Load(ctx, jc.Tile, jc.Artifact, jc.Plan)
		if err != nil {
			cands[i].Status, cands[i].Detail = result.CompileFailed, "load: "+err.Error()
			continue
		}
		kernels[i] = k
		cands[i].Resources = kernelResources(k)
	}
	for i, jc := range job.Candidates {
		if jc.AA && cands[i].Status == "" {
			if ref < 0 || kernels[ref] == nil {
				cands[i].Status, cands[i].Detail = result.Skipped, "reference tile not runnable"
				continue
			}
			kernels[i] = kernels[ref]
			cands[i].Resources = cands[ref].Resources
		}
	}

	phase("load")
	// Verify: reference first, so its output is the bitwise base and its
	// run time scales the watchdog for the others.
	order := make([]int, 0, len(cands))
	if ref >= 0 {
		order = append(order, ref)
	}
	for i := range cands {
		if i != ref {
			order = append(order, i)
		}
	}
	// One bitwise base per numerics class: the first verified candidate.
	type classBase struct {
		out     [][]byte
		present []bool
		tile    string
		maxErr  float64
		rows    []result.RowHashes
		bitwise bool // equal to the cell's reference on every output both have
	}
	bases := map[string]*classBase{}
	firstClass := ""
	present := func(i int) []bool {
		if p := job.Candidates[i].Present; len(p) == len(op.Operands) {
			return p
		}
		all := make([]bool, len(op.Operands))
		for j := range all {
			all[j] = true
		}
		return all
	}
	// sameOutputs compares the outputs both candidates have.
	sameOutputs := func(pa, pb []bool, a, b [][]byte) (string, *verify.Mismatch) {
		both := make([]bool, len(pa))
		for j := range both {
			both[j] = pa[j] && pb[j]
		}
		return verify.BitwiseAll(op, d, both, a, b)
	}
	// One float64 reference for the cell: every class's base and the
	// vendor are checked against the same values, computed once.
	refs := verify.NewRefs(op, d, sets[0], job.Seed^0x5eed, job.MaxSamples)
	// A vendor baseline with fp16 intermediates is checked against the
	// operator's unfused bound (the same values, a wider bound).
	var unfused *verify.Refs
	refsOf := func(i int) *verify.Refs {
		if !job.Candidates[i].F16Intermediate {
			return refs
		}
		if unfused == nil {
			unfused = verify.NewRefs(op.WithUnfusedBound(), d, sets[0], job.Seed^0x5eed, job.MaxSamples)
		}
		return unfused
	}
	// The outputs of the candidate verified last go back to the problem
	// for reuse at the start of the next one, unless they became a class's
	// bitwise base (kept for the cell).
	var spare [][][]byte
	recycle := func() {
		backend.Recycle(prob, spare...)
		spare = spare[:0]
	}
	var expect time.Duration
	for _, i := range order {
		recycle()
		if kernels[i] == nil || cands[i].Status != "" {
			continue
		}
		if job.Candidates[i].AA {
			cands[i].Status, cands[i].Bitwise = result.OK, true
			continue
		}
		emit(Event{Cand: i, Phase: "verify", Expect: 2 * expect})
		t0 := time.Now()
		pres := present(i)
		out1, err := prob.Run(ctx, kernels[i], 0)
		if err == nil {
			var out2 [][]byte
			out2, err = prob.Run(ctx, kernels[i], 0)
			spare = append(spare, out1, out2)
			if err == nil {
				if msg, m := verify.BitwiseAll(op, d, pres, out1, out2); m != nil {
					cands[i].Status, cands[i].Detail = result.ParityFailed, "two runs differ: "+msg
					continue
				}
			}
		}
		if err != nil {
			if ctx.Err() != nil {
				return res, ctx.Err()
			}
			var ge *backend.GuardError
			if errors.As(err, &ge) {
				cands[i].Status, cands[i].Detail = result.NumericFailed, err.Error()
				continue
			}
			return res, &CandidateFailure{Cand: i, Status: result.Crashed, Detail: err.Error()}
		}
		if expect == 0 {
			expect = time.Since(t0) / 2
		}
		// Bitwise equal (on every output both have) to a base that passed
		// the float64 check and has no output this one lacks: the same
		// numbers, so the (costly) float64 check is not repeated.
		class := job.Candidates[i].Class
		base := bases[class]
		var diffMsg string
		var diff *verify.Mismatch
		if base != nil {
			diffMsg, diff = sameOutputs(base.present, pres, base.out, out1)
			if diff == nil && covers(base.present, pres) {
				// Bitwise means equal to the cell's reference, whose class
				// came first; another class's members are what their base is.
				cands[i].Status, cands[i].Bitwise, cands[i].MaxErr = result.OK, base.bitwise, base.maxErr
				cands[i].Rows = presentRows(op, base.rows, pres) // the same bits, the same row hashes
				continue
			}
		}
		maxErr := 0.0
		var numErr error
		for j, o := range op.Operands {
			if o.Dir != kernel.Out || !pres[j] {
				continue
			}
			num := refsOf(i).Check(j, out1[j])
			maxErr = max(maxErr, num.MaxErr)
			if num.Err != nil && numErr == nil {
				numErr = errors.New(verify.Label(op, j, num.Err.Error()))
			}
		}
		cands[i].MaxErr = maxErr
		if numErr != nil {
			cands[i].Status, cands[i].Detail = result.NumericFailed, numErr.Error()
			continue
		}
		rows := verify.RowHashes(op, d, pres, out1)
		switch {
		case job.Candidates[i].Vendor:
		case base == nil:
			nb := &classBase{out: out1, present: pres, tile: job.Candidates[i].Tile, maxErr: maxErr, rows: rows}
			bases[class] = nb
			spare = spare[1:] // out1 stays: the class's base
			if len(bases) == 1 {
				firstClass = class
				// The first class's base is the cell's reference.
				nb.bitwise = true
				if i != ref {
					res.Reference = job.Candidates[i].Tile
				}
			} else if fb := bases[firstClass]; fb != nil {
				// Another class need not equal the reference; record
				// whether it does (the report says which are bitwise).
				_, m := sameOutputs(fb.present, pres, fb.out, out1)
				nb.bitwise = m == nil
			}
			cands[i].Bitwise = nb.bitwise
		case diff != nil && !job.AllowDiff:
			cands[i].Status, cands[i].Detail = result.ParityFailed, "differs from "+base.tile+": "+diffMsg
			continue
		case diff == nil:
			// Equal to its base on the outputs both have (it has more).
			cands[i].Bitwise = base.bitwise
		}
		cands[i].Status, cands[i].Rows = result.OK, rows
	}

	recycle()
	phase("verify")
	if job.Laplacian {
		if err := laplacianCheck(ctx, b, op, d, job, kernels, cands, emit); err != nil {
			return res, err
		}
		phase("laplacian")
	}

	// Time every verified candidate with the paired protocol.
	var timed []int
	var ks []backend.Kernel
	for i := range cands {
		if cands[i].Status == result.OK {
			timed = append(timed, i)
			ks = append(ks, kernels[i])
		}
	}
	sensor, _ := b.(backend.Sensor)
	current := -1
	hooks := measure.Hooks{
		Begin: func(j, n int, exp time.Duration) {
			current = timed[j]
			emit(Event{Cand: timed[j], Phase: "time", Expect: exp})
		},
		Round: func(r int) {
			if sensor != nil {
				if s, err := sensor.Reading(ctx); err == nil {
					res.Clocks = append(res.Clocks, s)
				}
			}
		},
	}
	mo := job.Measure
	mo.Anchor = anchorIndex(cands, timed, res.Reference)
	mres, err := measure.Run(ctx, prob, ks, mo, hooks)
	if err != nil {
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
		if current < 0 {
			return res, fmt.Errorf("cell %s M=%d: %w", c.Shape, c.M, err)
		}
		return res, &CandidateFailure{Cand: current, Status: result.Crashed, Detail: "while timing: " + err.Error()}
	}
	for j, i := range timed {
		cands[i].Samples = mres.Samples[j]
		cands[i].Dispatches = mres.Dispatches[j]
	}
	res.Rounds = mres.Rounds
	phase("time")
	res.Phases = strings.Join(phases, ", ")
	for i := range cands {
		if cands[i].Status == "" {
			cands[i].Status = result.Skipped
		}
		cands[i].Detail = firstLines(cands[i].Detail, 40)
	}
	res.Candidates = cands
	res.Finished = time.Now().UTC()
	return res, nil
}

// genSets draws the cell's n input sets, set s from seed + s·φ (set 0 is
// the one verified), on up to GOMAXPROCS cores at once: the sets are
// independent, so the bytes are those of drawing them one after another.
// For an operator with the uniform inputs (Operator.Inputs nil) an operand
// drawn for the cell before is taken from inputCache: an operand without
// M (a weight) is the same for every M of a shape, and a sweep runs a
// shape's M one after another.
func genSets(op *kernel.Operator, seed uint64, d kernel.Dims, n int) [][][]byte {
	sets := make([][][]byte, n)
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	used := map[operandKey]bool{}
	var mu sync.Mutex
	for s := range sets {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			ss := seed + uint64(s)*0x9E3779B97F4A7C15
			if op.Inputs != nil {
				sets[s] = op.GenInputs(ss, d)
				return
			}
			for oi, o := range op.Operands {
				if o.Dir != kernel.In {
					continue
				}
				elems, _ := d.Elems(o.Shape)
				k := operandKey{seed: ss, index: oi, dtype: o.DType, elems: elems}
				mu.Lock()
				used[k] = true
				mu.Unlock()
				sets[s] = append(sets[s], inputs.get(k, func() []byte { return kernel.UniformOperand(o, oi, ss, d) }))
			}
		}()
	}
	wg.Wait()
	inputs.keepOnly(used)
	return sets
}

// operandKey identifies a uniform input operand's bytes (kernel.UniformOperand).
type operandKey struct {
	seed  uint64
	index int
	dtype kernel.DType
	elems int
}

// inputCache holds the input operands of the last cell drawn in this
// process; the bytes are shared, never written (the backends copy them).
type inputCache struct {
	mu sync.Mutex
	m  map[operandKey][]byte
}

var inputs inputCache

func (c *inputCache) get(k operandKey, draw func() []byte) []byte {
	c.mu.Lock()
	b, ok := c.m[k]
	c.mu.Unlock()
	if ok {
		return b
	}
	b = draw()
	c.mu.Lock()
	if c.m == nil {
		c.m = map[operandKey][]byte{}
	}
	c.m[k] = b
	c.mu.Unlock()
	return b
}

// keepOnly drops every operand the last cell did not use.
func (c *inputCache) keepOnly(used map[operandKey]bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range c.m {
		if !used[k] {
			delete(c.m, k)
		}
	}
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
