package cuda

import (
	"bytes"
	"context"
	"testing"

	"github.com/tilefit/tilefit/builtin"
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
	k1 := load(ctx, t, b, fam, op, s, fam.Reference)
	want, err := runY(p, k1)
	if err != nil {
		t.Fatal(err)
	}
	m := k1.m
	k1.Close()
	if got := b.loadedModules(); got != before+1 {
		t.Fatalf("after Close: %d modules loaded, want %d (kept)", got, before+1)
	}
	k2 := load(ctx, t, b, fam, op, s, fam.Reference)
	defer k2.Close()
	if k2.m != m || b.loadedModules() != before+1 {
		t.Fatalf("the second Kernel of the artifact loaded it again (%d modules)", b.loadedModules())
	}
	got, err := runY(p, k2)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("the kept module's kernel: err %v, equal %v", err, bytes.Equal(got, want))
	}
	k3 := load(ctx, t, b, fam, op, s, "16_64_2")
	defer k3.Close()
	if k3.m == m || b.loadedModules() != before+2 {
		t.Fatalf("another artifact shares a module (%d loaded)", b.loadedModules())
	}
	if _, err := runY(p, k3); err != nil {
		t.Fatal(err)
	}
}
