package cpu

import (
	"context"
	"strings"
	"testing"

	"github.com/tilefit/tilefit/backend"
	"github.com/tilefit/tilefit/backend/backendtest"
	"github.com/tilefit/tilefit/builtin"
	"github.com/tilefit/tilefit/verify"
)

// dropLastK plants issue 17's bug in the CPU gemm_f16 source: the final k
// step of every output element is skipped (every tile shares it, so every
// tile is bitwise equal to every other).
var dropLastK = [2]string{"int first = k0 == 0, last = k0 + kc >= K;", "int first = k0 == 0, last = k0 + kc >= K; if (last) kc--;"}

// TestDroppedLastKFailsAtEveryK (issue 17, item 1): the source that drops
// its last k term fails the exact check and the probabilistic bound at
// every K of the strata preset and at K 10240, for an fp32 and an fp16 Y —
// where the worst-case bound alone passed it at K 6144 and 10240 — while
// the correct source passes both.
func TestDroppedLastKFailsAtEveryK(t *testing.T) {
	c := newCPU(t, Options{})
	fam := builtin.CPUGemmF16()
	ref, _ := fam.ParseTile(fam.Reference)
	ctx := context.Background()
	for _, f16 := range []bool{false, true} {
		op := gemmOp(f16)
		good := load(t, c, "good", backendtest.Program(fam, op, ref))
		prog := backendtest.Program(fam, op, ref)
		prog.Source = plant(t, prog.Source, dropLastK[0], dropLastK[1])
		bad := load(t, c, "dropped", prog)
		for _, k := range []int{320, 640, 2560, 6144, 10240} {
			d := dims(16, 24, k)
			p, in := newProblem(t, c, op, d, uint64(k))
			ex, drawn, err := verify.ExactInputs(op, d, uint64(k))
			if err != nil {
				t.Fatal(err)
			}
			exIn := verify.Materialize(drawn)
			pe, err := c.NewProblem(ctx, op, d, [][][]byte{exIn})
			if err != nil {
				t.Fatal(err)
			}
			refs := verify.NewExactRefs(op, d, ex, exIn, 1, 1<<20)
			for _, kk := range []struct {
				k     backend.Kernel
				wrong bool
			}{{good, false}, {bad, true}} {
				got, err := runY(t, p, kk.k)
				if err != nil {
					t.Fatal(err)
				}
				r := verify.Check(op, d, in, 2, got, 1, 1<<20)
				gotEx, err := runY(t, pe, kk.k)
				if err != nil {
					t.Fatal(err)
				}
				m, err := refs.Check(2, gotEx)
				if err != nil {
					t.Fatal(err)
				}
				name := map[bool]string{false: "correct", true: "dropped-last-k"}[kk.wrong]
				switch {
				case !kk.wrong && (r.Err != nil || m != nil):
					t.Errorf("Y f16=%v K=%d: the %s source failed: %v; exact %v", f16, k, name, r.Err, m)
				case kk.wrong && m == nil:
					t.Errorf("Y f16=%v K=%d: the %s source passed the exact check", f16, k, name)
				case kk.wrong && (r.Err == nil || r.MaxLikely <= 1):
					t.Errorf("Y f16=%v K=%d: the %s source passed the probabilistic bound (max %.3g of it, %.3g of the worst case)", f16, k, name, r.MaxLikely, r.MaxErr)
				}
				if kk.wrong {
					t.Logf("Y f16=%v K=%d dropped-last-k: worst-case bound %.3g×, probabilistic %.3g× (%v); exact: %v", f16, k, r.MaxErr, r.MaxLikely, errWords(r.Err), m)
				}
			}
			pe.Close()
		}
	}
}

func errWords(err error) string {
	if err == nil {
		return "passes"
	}
	s, _, _ := strings.Cut(err.Error(), ":")
	return s
}
