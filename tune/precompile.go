package tune

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/tilefit/tilefit/backend"
)

// Precompiled is an operator's programs compiled ahead of its sweep, in
// the background (Run.SweepAll with a Compiler): the results by program
// once the compile has ended (Elapsed its wall time), or the error that
// stopped it.
type Precompiled struct {
	done    chan struct{}
	res     map[string]CompileResult
	err     error
	Elapsed time.Duration
}

// wait blocks until the background compile has ended (or ctx ends) and
// returns its results by programID.
func (p *Precompiled) wait(ctx context.Context) (map[string]CompileResult, error) {
	select {
	case <-p.done:
		return p.res, p.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// programID identifies a program: its family, source and defines.
func programID(p backend.Program) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%d\x00%s\x00", p.Family, len(p.Source), p.Source)
	for _, d := range p.Defines {
		fmt.Fprintf(h, "D%s\x00", d)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// precompile compiles the programs of each config (one operator each: its
// candidates for device dev, as SweepOn lists them) on ex in the
// background, one config after another, and returns what each sweep waits
// on. A config whose setup fails gets that error (its sweep then compiles
// everything itself and reports the failure as it always does).
//
// The compiles start once after is closed (the first operator's own
// compile has ended: the two shared the host's cores, and the first
// operator's compile, on the critical path, took 5.4–6.6 s for 101
// programs on the H200 host beside them, 3.4 s for 86 alone).
func precompile(ctx context.Context, cfgs []Config, ex Executor, dev backend.Device, after <-chan struct{}) []*Precompiled {
	out := make([]*Precompiled, len(cfgs))
	for i := range out {
		out[i] = &Precompiled{done: make(chan struct{})}
	}
	go func() {
		select {
		case <-after:
		case <-ctx.Done():
		}
		for i, cfg := range cfgs {
			p := out[i]
			t0 := time.Now()
			p.res, p.err = compileAhead(ctx, cfg, ex, dev)
			p.Elapsed = time.Since(t0)
			close(p.done)
		}
	}()
	return out
}

// compileAhead compiles cfg's programs on ex.
func compileAhead(ctx context.Context, cfg Config, ex Executor, dev backend.Device) (map[string]CompileResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	w, err := newSweepSetup(cfg)
	if err != nil {
		return nil, err
	}
	if err := w.candidates(dev, &Summary{}); err != nil {
		return nil, err
	}
	progs, _ := w.programs()
	comp, err := ex.Compile(ctx, progs)
	if err != nil {
		return nil, err
	}
	res := make(map[string]CompileResult, len(progs))
	for j, p := range progs {
		res[programID(p)] = comp[j]
	}
	return res, nil
}
