package tune

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tilefit/tilefit/backend"
	"github.com/tilefit/tilefit/result"
	"github.com/tilefit/tilefit/store"
	"github.com/tilefit/tilefit/workload"
)

// TestPhasesNameTheReferenceWait: a swept cell's phases (its progress line) say how long the
// verify phase waited for the float64 reference ("verify/ref 0.00s", a part
// of verify, right after it, no longer than it), every entry "name secs"
// as docs/results/h200-verify/verify-share.py reads them.
func TestPhasesNameTheReferenceWait(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	var cells []Progress
	progress := func(p Progress) {
		if !p.Skipped {
			cells = append(cells, p)
		}
	}
	if _, err := Sweep(ctx, testConfig(), NewLocal(func(context.Context) (backendT, error) { return newFake(), nil }, nil), st, progress); err != nil {
		t.Fatal(err)
	}
	if len(cells) == 0 {
		t.Fatal("no cells swept")
	}
	for _, c := range cells {
		secs := map[string]float64{}
		var names []string
		for _, part := range strings.Split(c.Phases, ", ") {
			i := strings.LastIndexByte(part, ' ')
			if i < 0 || !strings.HasSuffix(part, "s") {
				t.Fatalf("%s M=%d: phase %q is not \"name secs\" (%s)", c.Cell.Shape, c.Cell.M, part, c.Phases)
			}
			v, err := strconv.ParseFloat(part[i+1:len(part)-1], 64)
			if err != nil {
				t.Fatalf("%s M=%d: phase %q: %v", c.Cell.Shape, c.Cell.M, part, err)
			}
			names = append(names, part[:i])
			secs[part[:i]] = v
		}
		at := -1
		for k, n := range names {
			if n == "verify/ref" {
				at = k
			}
		}
		if at < 1 || names[at-1] != "verify" || secs["verify/ref"] > secs["verify"] {
			t.Errorf("%s M=%d: phases %q: want verify/ref right after verify and no longer", c.Cell.Shape, c.Cell.M, c.Phases)
		}
	}
}

// countingExec is an Executor that records the programs it is asked to
// compile (and fails every compile with fail when set).
type countingExec struct {
	Executor
	mu    sync.Mutex
	progs []backend.Program
	fail  error
}

func (c *countingExec) Compile(ctx context.Context, progs []backend.Program) ([]CompileResult, error) {
	c.mu.Lock()
	c.progs = append(c.progs, progs...)
	c.mu.Unlock()
	if c.fail != nil {
		return nil, c.fail
	}
	return c.Executor.Compile(ctx, progs)
}

func (c *countingExec) tiles() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, p := range c.progs {
		out = append(out, p.Defines[0])
	}
	sort.Strings(out)
	return out
}

// twoOperatorConfigs are two sweeps of a workload, as SweepAll gets one
// per operator: different shapes and tiles (so their programs differ), the
// second with a tile that does not compile.
func twoOperatorConfigs() []Config {
	a, b := testConfig(), testConfig()
	a.Tiles = []string{"4"}
	b.Workload.Shapes = []workload.Shape{{Name: "c", N: 6, K: 9, Calls: 1}}
	b.Tiles = []string{"2", "16"}
	return []Config{a, b}
}

// TestSweepAllCompilesAhead: with a Compiler, the second operator's
// programs compile there (in the background, from the start) and not on
// the executor, and the sweep stores what a sweep without one stores —
// a compile failure included; the log says where they were compiled. A
// Compiler that fails leaves the compiles to the executor.
func TestSweepAllCompilesAhead(t *testing.T) {
	ctx := context.Background()
	run := func(compiler *countingExec) (*countingExec, map[string]result.Status, string) {
		fb := newFake()
		fb.compile["16"] = "x.c:1: error: no"
		open := func(context.Context) (backendT, error) { return fb, nil }
		ex := &countingExec{Executor: NewLocal(open, nil)}
		st := openStore(t)
		r := Run{Store: st, Executors: []Executor{ex}, Devices: []int{0}}
		if compiler != nil {
			compiler.Executor = NewLocal(open, nil)
			r.Compiler = compiler
		}
		var log strings.Builder
		if _, err := r.SweepAll(ctx, twoOperatorConfigs(), &log); err != nil {
			t.Fatal(err)
		}
		return ex, statuses(t, st), log.String()
	}
	plainEx, want, _ := run(nil)
	if got := plainEx.tiles(); !slices.Equal(got, []string{"TM=16", "TM=2", "TM=4", "TM=8", "TM=8"}) {
		t.Fatalf("without a compiler the executor compiled %v", got)
	}
	if want["c/09/16"] != result.CompileFailed {
		t.Fatalf("tile 16 did not fail to compile: %v", want)
	}

	comp := &countingExec{}
	ex, got, log := run(comp)
	if e, c := ex.tiles(), comp.tiles(); !slices.Equal(e, []string{"TM=4", "TM=8"}) || !slices.Equal(c, []string{"TM=16", "TM=2", "TM=8"}) {
		t.Errorf("the executor compiled %v, the compiler %v; want the first operator's programs on the executor, the second's on the compiler", e, c)
	}
	if !maps.Equal(got, want) {
		t.Errorf("compiled ahead the sweep stored %v, without %v", got, want)
	}
	if !strings.Contains(log, "3 tiles compiling in the background since the first operator compiled") || !strings.Contains(log, "(3 programs compiled in the background in ") {
		t.Errorf("the log does not say the tiles compiled in the background:\n%s", log)
	}

	broken := &countingExec{fail: errors.New("compiler worker died")}
	ex, got, _ = run(broken)
	if e := ex.tiles(); !slices.Equal(e, []string{"TM=16", "TM=2", "TM=4", "TM=8", "TM=8"}) {
		t.Errorf("with a failed compiler the executor compiled %v, want every program", e)
	}
	if !maps.Equal(got, want) {
		t.Errorf("with a failed compiler the sweep stored %v, without %v", got, want)
	}
}

// jobsExec is an Executor that keeps the jobs it runs.
type jobsExec struct {
	Executor
	jobs []CellJob
}

func (j *jobsExec) RunCell(ctx context.Context, job CellJob) (result.CellResult, error) {
	j.jobs = append(j.jobs, job)
	return j.Executor.RunCell(ctx, job)
}

// TestJobsCarryNoSource: the job of a cell (a frame to the worker for
// every cell) names each candidate's program but does not carry its
// source text — the worker loads the compiled artifact — and the sweep
// verifies and times every tile as before.
func TestJobsCarryNoSource(t *testing.T) {
	ctx := context.Background()
	ex := &jobsExec{Executor: NewLocal(func(context.Context) (backendT, error) { return newFake(), nil }, nil)}
	st := openStore(t)
	if _, err := Sweep(ctx, testConfig(), ex, st, nil); err != nil {
		t.Fatal(err)
	}
	if len(ex.jobs) == 0 {
		t.Fatal("no cell ran")
	}
	for _, j := range ex.jobs {
		for _, c := range j.Candidates {
			if c.Program.Source != "" || c.Artifact.Path == "" || c.Program.Family != "fake" {
				t.Errorf("cell %s M=%d: candidate %s carries program %+v, artifact %+v; want the family and the artifact, no source", j.Cell.Shape, j.Cell.M, c.Tile, c.Program, c.Artifact)
			}
		}
	}
	for k, s := range statuses(t, st) {
		if s != result.OK {
			t.Errorf("%s: %s", k, s)
		}
	}
}

// gatedResults holds the first cell's save until the executor has begun
// the next cell (at most a while: then it saves and records that the two
// did not overlap).
type gatedResults struct {
	Results
	next       chan struct{} // closed when the second cell starts
	saves      int
	overlapped bool
}

func (g *gatedResults) SaveCell(ctx context.Context, c result.CellResult) (int64, error) {
	g.saves++
	if g.saves == 1 {
		select {
		case <-g.next:
			g.overlapped = true
		case <-time.After(20 * time.Second):
		}
	}
	return g.Results.SaveCell(ctx, c)
}

// startsExec closes next when its second cell starts.
type startsExec struct {
	Executor
	runs int
	next chan struct{}
}

func (s *startsExec) RunCell(ctx context.Context, job CellJob) (result.CellResult, error) {
	s.runs++
	if s.runs == 2 {
		close(s.next)
	}
	return s.Executor.RunCell(ctx, job)
}

// TestCellSavedWhileTheNextRuns: a finished cell is checked and saved
// while the executor runs the next one (the next cell starts before the
// first cell's save returns), and still every cell is saved, each once,
// the progress counting them in order.
func TestCellSavedWhileTheNextRuns(t *testing.T) {
	ctx := context.Background()
	next := make(chan struct{})
	ex := &startsExec{Executor: NewLocal(func(context.Context) (backendT, error) { return newFake(), nil }, nil), next: next}
	st := openStore(t)
	g := &gatedResults{Results: st, next: next}
	var done []int
	progress := func(p Progress) { done = append(done, p.Done) }
	sum, err := Sweep(ctx, testConfig(), ex, g, progress)
	if err != nil {
		t.Fatal(err)
	}
	if !g.overlapped {
		t.Error("the first cell's save returned before the next cell started: saving does not overlap the next cell")
	}
	cells, _ := st.Cells(ctx, store.Filter{})
	if len(cells) != 4 || sum.Cells != 4 || g.saves != 4 {
		t.Errorf("%d cells stored, %d in the summary, %d saves; want 4 of each", len(cells), sum.Cells, g.saves)
	}
	if !slices.Equal(done, []int{1, 2, 3, 4}) {
		t.Errorf("progress counted %v, want 1 2 3 4", done)
	}
}

// blockingCompiler blocks every compile until its ctx ends.
type blockingCompiler struct {
	Executor
	mu       sync.Mutex
	started  chan struct{}
	returned bool
}

func (b *blockingCompiler) Compile(ctx context.Context, _ []backend.Program) ([]CompileResult, error) {
	close(b.started)
	<-ctx.Done()
	b.mu.Lock()
	b.returned = true
	b.mu.Unlock()
	return nil, ctx.Err()
}

// cancellingRuns cancels the sweep at its first cell, once ready is
// closed.
type cancellingRuns struct {
	Executor
	ready  chan struct{}
	cancel func()
}

func (f *cancellingRuns) RunCell(ctx context.Context, job CellJob) (result.CellResult, error) {
	<-f.ready
	f.cancel()
	return result.CellResult{}, context.Canceled
}

// TestSweepAllStopsTheCompilerFirst: a SweepAll that ends (here: it is
// cancelled at the first operator's first cell, after the background
// compile began — which it does once the first sweep has compiled) stops
// its background compile and returns only once the compiler is no longer
// in use (the caller closes it next).
func TestSweepAllStopsTheCompilerFirst(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fb := newFake()
	comp := &blockingCompiler{started: make(chan struct{})}
	ex := &cancellingRuns{Executor: NewLocal(func(context.Context) (backendT, error) { return fb, nil }, nil), ready: comp.started, cancel: cancel}
	cfgs := twoOperatorConfigs()
	r := Run{Store: openStore(t), Executors: []Executor{ex}, Devices: []int{0}, Compiler: comp}
	var log strings.Builder
	_, err := r.SweepAll(ctx, cfgs, &log)
	if err == nil {
		t.Fatal("a cancelled sweep succeeded")
	}
	comp.mu.Lock()
	defer comp.mu.Unlock()
	if !comp.returned {
		t.Error("SweepAll returned while its background compile was still running")
	}
}

// gateExec is an Executor whose first Compile (the first operator's
// programs) waits a while for the compiler's first Compile, which must not
// come before it has ended; early records whether it came.
type gateExec struct {
	Executor
	other chan struct{} // closed by the compiler's first Compile
	mu    sync.Mutex
	done  bool // the first Compile has ended
	early bool // the compiler compiled before that
}

func (g *gateExec) Compile(ctx context.Context, progs []backend.Program) ([]CompileResult, error) {
	select {
	case <-g.other:
	case <-time.After(300 * time.Millisecond):
	}
	out, err := g.Executor.Compile(ctx, progs)
	g.mu.Lock()
	g.done = true
	g.mu.Unlock()
	return out, err
}

type noteExec struct {
	Executor
	g    *gateExec
	once sync.Once
}

func (n *noteExec) Compile(ctx context.Context, progs []backend.Program) ([]CompileResult, error) {
	n.g.mu.Lock()
	if !n.g.done {
		n.g.early = true
	}
	n.g.mu.Unlock()
	n.once.Do(func() { close(n.g.other) })
	return n.Executor.Compile(ctx, progs)
}

// TestBackgroundCompileAfterFirst: the later operators' background
// compiles start once the first operator's own compile has ended (the two
// shared the host's cores), and still serve the later sweeps.
func TestBackgroundCompileAfterFirst(t *testing.T) {
	ctx := context.Background()
	fb := newFake()
	open := func(context.Context) (backendT, error) { return fb, nil }
	g := &gateExec{Executor: NewLocal(open, nil), other: make(chan struct{})}
	comp := &noteExec{Executor: NewLocal(open, nil), g: g}
	r := Run{Store: openStore(t), Executors: []Executor{g}, Devices: []int{0}, Compiler: comp}
	var log strings.Builder
	if _, err := r.SweepAll(ctx, twoOperatorConfigs(), &log); err != nil {
		t.Fatal(err)
	}
	if g.early {
		t.Error("the background compile began before the first operator had compiled")
	}
	if !strings.Contains(log.String(), "programs compiled in the background in ") {
		t.Errorf("the second operator did not take its programs from the background:\n%s", log.String())
	}
}
