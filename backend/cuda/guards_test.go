package cuda

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/tilefit/tilefit/backend"
	"github.com/tilefit/tilefit/builtin"
	"github.com/tilefit/tilefit/kernel"
)

// slowGuards is the byte-by-byte guard check the block compare replaced:
// the first byte outside [GuardBytes, GuardBytes+size) of host that lost
// the pattern, as an element offset.
func slowGuards(host []byte, size int64, esize int) (int, bool) {
	var pat [4]byte
	binary.LittleEndian.PutUint32(pat[:], GuardWord)
	elem := func(o int64) int {
		r := o - GuardBytes
		if r < 0 {
			return int((r - int64(esize) + 1) / int64(esize))
		}
		return int(r / int64(esize))
	}
	for o := int64(0); o < GuardBytes; o++ {
		if host[o] != pat[o%4] {
			return elem(o), true
		}
	}
	for o := GuardBytes + size; o < int64(len(host)); o++ {
		if host[o] != pat[o%4] {
			return elem(o), true
		}
	}
	return 0, false
}

// TestGuardCheckFindsEveryByte: the block compare of the guard regions
// finds the same first changed byte as the byte loop, for changes at
// either end of either region, at every phase of the pattern, inside a
// block and at block edges, for outputs of every size mod 4 and element
// size; an untouched allocation passes.
func TestGuardCheckFindsEveryByte(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, size := range []int64{0, 2, 6, 255, 256, 1000, 4097} {
		for _, es := range []int{1, 2, 4} {
			total := guarded(size)
			host := make([]byte, total)
			var w [4]byte
			binary.LittleEndian.PutUint32(w[:], GuardWord)
			for i := range host {
				host[i] = w[i%4]
			}
			for i := int64(GuardBytes); i < GuardBytes+size; i++ {
				host[i] = byte(rng.Uint32()) // the output itself: anything
			}
			if off, bad := checkGuards(host, size, es); bad {
				t.Fatalf("size %d: untouched guards flagged at %d", size, off)
			}
			right := total - GuardBytes - size
			at := []int64{0, 1, 2, 3, 4095, 4096, 4097, GuardBytes - 1, GuardBytes + size, GuardBytes + size + 1, total - 1}
			if right > 4097 {
				at = append(at, GuardBytes+size+4095, GuardBytes+size+4096)
			}
			for k := 0; k < 20; k++ {
				at = append(at, rng.Int64N(GuardBytes))
				if right > 0 {
					at = append(at, GuardBytes+size+rng.Int64N(right))
				}
			}
			for _, o := range at {
				if o >= GuardBytes && o < GuardBytes+size {
					continue
				}
				h := bytes.Clone(host)
				h[o] ^= 1 << uint(rng.IntN(8))
				h2 := bytes.Clone(h)
				if o+7 < total && (o+7 < GuardBytes || o+7 >= GuardBytes+size) {
					h2[o+7] ^= 0x80 // a second change after the first
				}
				for _, hh := range [][]byte{h, h2} {
					wantOff, wantBad := slowGuards(hh, size, es)
					gotOff, gotBad := checkGuards(hh, size, es)
					if gotOff != wantOff || gotBad != wantBad || !wantBad {
						t.Fatalf("size %d esize %d, byte %d changed: got (%d, %v), want (%d, %v)", size, es, o, gotOff, gotBad, wantOff, wantBad)
					}
				}
			}
		}
	}
}

// TestKeepPairCatchesFaults (device): KeepPair's two runs with one wait
// keep what two Keeps keep and still catch every planted fault in the
// run that has it: a write past the end (a *backend.GuardError, for
// either slot pair; the good kernel passes after it), rows left unwritten
// (the poison in both slots) and a wrong value (both slots differ from the
// good kernel's); on the fused hc_up operator (two outputs) both slots
// equal Run's outputs.
func TestKeepPairCatchesFaults(t *testing.T) {
	b := testBackend(t)
	ctx := context.Background()
	fam := builtin.CUDAGemmF16()
	s := dims(1983, 324, 320)
	op := gemmOp(false)
	pp, _ := newProblem(t, b, op, s, 7)
	defer pp.Close()
	p := pp.(*Problem)
	if err := p.VerifyOnDevice(ctx); err != nil {
		t.Fatalf("verification kernels: %v", err)
	}
	good := load(ctx, t, b, fam, op, s, fam.Reference)
	defer good.Close()
	want, err := runY(p, good)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.KeepPair(ctx, good, 0, 0, 1); err != nil {
		t.Fatalf("good kernel: %v", err)
	}
	for _, slot := range []int{0, 1} {
		g, err := p.Gather(ctx, slot, 2, allIndices(len(want)/4))
		if err != nil || !bytes.Equal(g, want) {
			t.Fatalf("slot %d differs from Run's output (err %v)", slot, err)
		}
	}
	guard := load(ctx, t, b, fam, op, s, fam.Reference, "FAULT=3")
	defer guard.Close()
	for _, slots := range [][2]int{{2, 3}, {0, 1}} {
		err := p.KeepPair(ctx, guard, 0, slots[0], slots[1])
		var ge *backend.GuardError
		if !errors.As(err, &ge) || ge.Operand != "Y" {
			t.Fatalf("FAULT=3 (write past the end) into slots %v: %v, want a *backend.GuardError", slots, err)
		}
	}
	if err := p.KeepPair(ctx, good, 0, 0, 1); err != nil {
		t.Fatalf("the good kernel after the guard fault: %v", err)
	}
	tail := load(ctx, t, b, fam, op, s, fam.Reference, "FAULT=1")
	defer tail.Close()
	if err := p.KeepPair(ctx, tail, 0, 2, 3); err != nil {
		t.Fatalf("FAULT=1: %v", err)
	}
	for _, slot := range []int{2, 3} {
		sp, err := p.Specials(ctx, slot, 2)
		if err != nil || sp.Poison == 0 {
			t.Errorf("FAULT=1 (rows unwritten), slot %d: %d poisoned elements (err %v), want some", slot, sp.Poison, err)
		}
	}
	// Wrong values: the unwritten rows differ from the good kernel's, in
	// both slots.
	if err := p.KeepPair(ctx, good, 0, 0, 1); err != nil {
		t.Fatal(err)
	}
	if e, err := p.Diff(ctx, 0, 1, 2, 0); err != nil || e >= 0 {
		t.Fatalf("two runs of the good kernel differ at %d (err %v)", e, err)
	}
	for _, slot := range []int{2, 3} {
		if e, err := p.Diff(ctx, 0, slot, 2, 0); err != nil || e < 0 {
			t.Errorf("slot %d of the faulty kernel does not differ from the good one (%d, %v)", slot, e, err)
		}
	}

	// Two outputs: hc_up_f16's mixh and mixed.
	hc := builtin.CUDAHcUpF16()
	hop := hc.Operator
	hd := kernel.Dims{"M": 37, "S": 40, "K": 72}
	hp, _ := newProblem(t, b, hop, hd, 3)
	defer hp.Close()
	hk := load(ctx, t, b, hc, hop, hd, "64_128_4.bound1")
	defer hk.Close()
	outs, err := hp.Run(ctx, hk, 0)
	if err != nil {
		t.Fatal(err)
	}
	hpp := hp.(*Problem)
	if err := hpp.KeepPair(ctx, hk, 0, 0, 1); err != nil {
		t.Fatal(err)
	}
	for i, o := range hop.Operands {
		if o.Dir != kernel.Out {
			continue
		}
		n := len(outs[i]) / o.DType.Size()
		for _, slot := range []int{0, 1} {
			g, err := hpp.Gather(ctx, slot, i, allIndices(n))
			if err != nil || !bytes.Equal(g, outs[i]) {
				t.Errorf("hc_up output %s, slot %d: differs from Run's (err %v)", o.Name, slot, err)
			}
		}
	}
}

func allIndices(n int) []int {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	return idx
}
