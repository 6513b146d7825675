package cuda

import (
	"bytes"
	"context"
	"testing"

	"github.com/tilefit/tilefit/backend"
	"github.com/tilefit/tilefit/builtin"
	"github.com/tilefit/tilefit/measure"
)

// TestModulesKeptAcrossKernels (device): a closed Kernel's module stays
// loaded and the next Kernel of the same artifact (the next cell's) uses
// it, computing the same bits; another artifact loads its own; Close of
// the backend's modules leaves none.
func TestModulesKeptAcrossKernels(t *testing.T) {
	b := testBackend(t)
	ctx := context.Background()
	fam := builtin.CUDAGemmF16()
	op := gemmOp(false)
	s := dims(130, 200, 136)
	p, _ := newProblem(t, b, op, s, 3)
	defer p.Close()
	before := b.loadedModules()
	// A define of its own: an artifact no other test has loaded.
	k1 := load(ctx, t, b, fam, op, s, fam.Reference, "TILEFIT_TEST_MODULES=1")
	want, err := runY(p, k1)
	if err != nil {
		t.Fatal(err)
	}
	m := k1.m
	k1.Close()
	if got := b.loadedModules(); got != before+1 {
		t.Fatalf("after Close: %d modules loaded, want %d (kept)", got, before+1)
	}
	k2 := load(ctx, t, b, fam, op, s, fam.Reference, "TILEFIT_TEST_MODULES=1")
	defer k2.Close()
	if k2.m != m || b.loadedModules() != before+1 {
		t.Fatalf("the second Kernel of the artifact loaded it again (%d modules)", b.loadedModules())
	}
	got, err := runY(p, k2)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("the kept module's kernel: err %v, equal %v", err, bytes.Equal(got, want))
	}
	k3 := load(ctx, t, b, fam, op, s, "16_64_2", "TILEFIT_TEST_MODULES=1")
	defer k3.Close()
	if k3.m == m || b.loadedModules() != before+2 {
		t.Fatalf("another artifact shares a module (%d loaded)", b.loadedModules())
	}
	if _, err := runY(p, k3); err != nil {
		t.Fatal(err)
	}
}

var _ measure.RoundTimer = (*Problem)(nil)

// TestTimeRound (device): a round timed in one call gives a positive time
// per sample, calls begin before each in order, decides each kernel's
// timing mode as Time does, and on a closed kernel fails with the samples
// before it.
func TestTimeRound(t *testing.T) {
	b := testBackend(t)
	ctx := context.Background()
	fam := builtin.CUDAGemmF16()
	op := gemmOp(false)
	s := dims(64, 48, 256)
	small := load(ctx, t, b, fam, op, s, "16_64_2")
	defer small.Close()
	ref := load(ctx, t, b, fam, op, s, fam.Reference)
	defer ref.Close()
	p, _ := newProblem(t, b, op, s, 1, 2, 3)
	defer p.Close()
	pp := p.(*Problem)
	var begun []int
	ts, err := pp.TimeRound(ctx, []backend.Kernel{small, ref, small}, []int{8, 8, 3}, []int{0, 1, 2}, func(j int) { begun = append(begun, j) })
	if err != nil || len(ts) != 3 {
		t.Fatalf("TimeRound: %v (%d times)", err, len(ts))
	}
	for j, d := range ts {
		if d <= 0 {
			t.Errorf("sample %d: %v", j, d)
		}
	}
	if len(begun) != 3 || begun[0] != 0 || begun[2] != 2 {
		t.Errorf("begin called for %v", begun)
	}
	if m := pp.Mode(small); m != TimingGraph {
		t.Errorf("a kernel of a few µs timed by TimeRound as %s, want %s", m, TimingGraph)
	}
	gone := load(ctx, t, b, fam, op, s, "16_64_2")
	gone.Close()
	if _, err := pp.TimeRound(ctx, []backend.Kernel{small, gone}, []int{1, 1}, []int{0, 0}, nil); err == nil {
		t.Error("a closed kernel was timed")
	}
}
