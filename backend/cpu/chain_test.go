package cpu

import (
	"context"
	"encoding/binary"
	"math"
	"testing"

	"github.com/tilefit/tilefit/backend"
	"github.com/tilefit/tilefit/kernel"
)

// chainSource has two entries: acc adds c·X[i] into a scratch accumulator
// (which must start at zero), out writes Y[i] = acc[i] + 1 in fp32.
const chainSource = `#include <stdint.h>
#include <string.h>
static float h2f(uint16_t h) { /* normal values only: the test's inputs */
	uint32_t b = ((uint32_t)(h & 0x8000u) << 16) | ((((h >> 10) & 0x1f) + 112) << 23) | ((uint32_t)(h & 0x3ffu) << 13);
	float f; memcpy(&f, &b, 4); return f;
}
int acc(void **ptrs, const int64_t *args) {
	const uint16_t *X = ptrs[0]; float *s = ptrs[1];
	for (int64_t i = 0; i < args[0] * args[1]; i++) s[i] += (float)args[2] * h2f(X[i]);
	return 0;
}
int out(void **ptrs, const int64_t *args) {
	const float *s = ptrs[0]; float *Y = ptrs[1];
	for (int64_t i = 0; i < args[0] * args[1]; i++) Y[i] = s[i] + 1.0f;
	return 0;
}
`

// TestChainWithScratch runs a plan of two launches sharing a zeroed scratch
// buffer (an unfused chain), with dims and an int constant as arguments:
// the scratch is zeroed before every call (else Y would grow run by run).
func TestChainWithScratch(t *testing.T) {
	c := newCPU(t, Options{CacheDir: t.TempDir()})
	ctx := context.Background()
	op := &kernel.Operator{Name: "scale", Dims: []string{"M", "N"},
		Operands: []kernel.Operand{
			{Name: "X", Dir: kernel.In, DType: kernel.F16, Shape: []string{"M", "N"}},
			{Name: "Y", Dir: kernel.Out, DType: kernel.F32, Shape: []string{"M", "N"}},
		}}
	d := kernel.Dims{"M": 3, "N": 5}
	in := kernel.UniformInputs(op.Operands, 1, d)
	p, err := c.NewProblem(ctx, op, d, [][][]byte{in})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	a, err := c.Compile(ctx, backend.Program{Family: "chain", Source: chainSource})
	if err != nil {
		t.Fatal(err)
	}
	plan := kernel.Plan{
		Scratch: []kernel.Scratch{{Name: "s", DType: kernel.F32, Elems: 15, Zero: true}},
		Launches: []kernel.Launch{
			{Entry: "acc", Args: []kernel.Arg{{Kind: kernel.ArgOperand, Name: "X"}, {Kind: kernel.ArgScratch, Name: "s"},
				{Kind: kernel.ArgDim, Name: "M"}, {Kind: kernel.ArgDim, Name: "N"}, {Kind: kernel.ArgInt, Value: 3}}},
			{Entry: "out", Args: []kernel.Arg{{Kind: kernel.ArgScratch, Name: "s"}, {Kind: kernel.ArgOperand, Name: "Y"},
				{Kind: kernel.ArgDim, Name: "M"}, {Kind: kernel.ArgDim, Name: "N"}}},
		},
	}
	k, err := c.Load(ctx, "chain", a, plan)
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	for run := 0; run < 3; run++ {
		if run == 1 {
			if _, err := p.Time(ctx, k, 4, 0); err != nil {
				t.Fatal(err)
			}
		}
		got, err := p.Run(ctx, k, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got[0] != nil || len(got[1]) != 60 {
			t.Fatalf("outputs %v", got)
		}
		for i := 0; i < 15; i++ {
			x := kernel.F16.Decode(in[0], i)
			want := float32(float32(3)*float32(x)) + 1
			if g := math.Float32frombits(binary.LittleEndian.Uint32(got[1][4*i:])); g != want {
				t.Fatalf("run %d: Y[%d] = %v, want %v (scratch not zeroed per call?)", run, i, g, want)
			}
		}
	}
}
