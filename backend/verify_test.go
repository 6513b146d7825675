package backend

import (
	"context"
	"encoding/binary"
	"math"
	"testing"
	"time"

	"github.com/tilefit/tilefit/builtin"
	"github.com/tilefit/tilefit/kernel"
	"github.com/tilefit/tilefit/verify"
)

// runProblem is a Problem whose Run returns the next of its outputs.
type runProblem struct {
	outs     [][][]byte
	n        int
	recycled int
}

func (p *runProblem) Operator() *kernel.Operator { return builtin.GemmF16() }
func (p *runProblem) Dims() kernel.Dims          { return kernel.Dims{"M": 2, "N": 3, "K": 1} }
func (p *runProblem) Sets() int                  { return 1 }
func (p *runProblem) Run(context.Context, Kernel, int) ([][]byte, error) {
	p.n++
	return p.outs[p.n-1], nil
}
func (p *runProblem) Time(context.Context, Kernel, int, int) (time.Duration, error) { return 0, nil }
func (p *runProblem) Close() error                                                  { return nil }
func (p *runProblem) Recycle([][]byte)                                              { p.recycled++ }

func f32s(vs ...float32) []byte {
	b := make([]byte, 4*len(vs))
	for i, v := range vs {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	return b
}

// TestHostVerifier: the host implementation finds the first difference
// from an index on, hashes rows as verify.HashRows, counts poison and
// other specials with their first indices, gathers elements, and gives a
// replaced slot's outputs back to the problem.
func TestHostVerifier(t *testing.T) {
	nan := float32(math.NaN())
	poison := math.Float32frombits(0xffffffff)
	a := f32s(1, 2, 3, 4, 5, 6)
	b := f32s(1, 2, nan, 4, poison, 6)
	p := &runProblem{outs: [][][]byte{{nil, nil, a}, {nil, nil, b}, {nil, nil, a}}}
	h := NewHostVerifier(p)
	ctx := context.Background()
	for slot := 0; slot < 2; slot++ {
		if err := h.Keep(ctx, nil, 0, slot); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct{ from, want int64 }{{0, 2}, {3, 4}, {5, -1}} {
		if e, err := h.Diff(ctx, 0, 1, 2, c.from); err != nil || e != c.want {
			t.Errorf("Diff from %d = %d (%v), want %d", c.from, e, err, c.want)
		}
	}
	if hs, _ := h.RowHashes(ctx, 1, 2, 2); len(hs) != 2 || hs[1] != verify.HashRows(b, 2, 12)[1] {
		t.Errorf("RowHashes = %x", hs)
	}
	s, _ := h.Specials(ctx, 1, 2)
	if s != (Specials{Poison: 1, NonFinite: 1, FirstPoison: 4, FirstNonFinite: 2}) {
		t.Errorf("Specials = %+v", s)
	}
	if g, _ := h.Gather(ctx, 0, 2, []int{5, 0}); string(g) != string(f32s(6, 1)) {
		t.Errorf("Gather = %v", g)
	}
	if _, err := h.Gather(ctx, 0, 2, []int{6}); err == nil {
		t.Error("Gather out of range: no error")
	}
	if err := h.Keep(ctx, nil, 0, 1); err != nil || p.recycled != 1 {
		t.Errorf("replacing slot 1 recycled %d outputs (%v), want 1", p.recycled, err)
	}
	h.Free(0)
	if _, err := h.Diff(ctx, 0, 1, 2, 0); err == nil || p.recycled != 2 {
		t.Errorf("a freed slot: %v, recycled %d", err, p.recycled)
	}
}
