package policy

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/tilefit/tilefit/internal/input"
	"github.com/tilefit/tilefit/internal/outpath"
)

// Outputs are where a selection (tilefit select) goes: the policy file,
// the selector code of Kinds in EmitDir, and stdout.
type Outputs struct {
	// PolicyOut is --policy-out ("": no policy file); PolicyOutGiven says
	// it was given (else the policy goes beside the selector code, see
	// PolicyPath).
	PolicyOut      string
	PolicyOutGiven bool
	// EmitDir is --emit-dir, EmitDirGiven whether it was given; Kinds are
	// the selector code to emit there (EmitKinds).
	EmitDir      string
	EmitDirGiven bool
	Kinds        []string
	// JSON prints the policy on stdout instead of the decision table.
	JSON bool
}

// PolicyPath is where the policy file goes: PolicyOut when given, else,
// when the selector has a folder (Kinds, or EmitDir given), the file of
// that name in it, else PolicyOut here ("" for none).
func (o Outputs) PolicyPath() string {
	if o.PolicyOutGiven || o.PolicyOut == "" || (len(o.Kinds) == 0 && !o.EmitDirGiven) {
		return o.PolicyOut
	}
	return filepath.Join(o.EmitDir, filepath.Base(o.PolicyOut))
}

// Check refuses, before anything is read or written, an output that would
// land on a protected input (outpath.Check): the policy file where it is
// written (PolicyPath: in the emit folder unless --policy-out was given)
// and, with Kinds, the emit folder and every file EmitNames says it gets.
func (o Outputs) Check(prot ...outpath.Protected) error {
	if err := outpath.Check("--policy-out", o.PolicyOut, prot...); err != nil {
		return err
	}
	if p := o.PolicyPath(); p != o.PolicyOut {
		if err := outpath.Check("--emit-dir", p, prot...); err != nil {
			return err
		}
	}
	if len(o.Kinds) == 0 {
		return nil
	}
	if err := outpath.Check("--emit-dir", o.EmitDir, prot...); err != nil {
		return err
	}
	for _, k := range o.Kinds {
		for _, name := range EmitNames(k) {
			if err := outpath.Check("--emit-dir", filepath.Join(o.EmitDir, name), prot...); err != nil {
				return err
			}
		}
	}
	return nil
}

// Write writes p to the outputs — the selector code, the policy file (each
// file written named on log) — and the decision table or the policy to
// stdout.
func (o Outputs) Write(p Policy, stdout, log io.Writer) error {
	if len(o.Kinds) > 0 {
		paths, err := EmitFiles(o.EmitDir, p, o.Kinds)
		if err != nil {
			return fmt.Errorf("--emit: %w", err)
		}
		for _, path := range paths {
			fmt.Fprintf(log, "wrote %s\n", path)
		}
	}
	if out := o.PolicyPath(); out != "" {
		if o.EmitDirGiven && len(o.Kinds) == 0 {
			if err := os.MkdirAll(o.EmitDir, 0o755); err != nil {
				return fmt.Errorf("--emit-dir: %w", err)
			}
		}
		if err := Save(out, p); err != nil {
			return fmt.Errorf("--policy-out: %w", err)
		}
		fmt.Fprintf(log, "wrote %s\n", out)
	}
	if o.JSON {
		return Write(stdout, p)
	}
	return Markdown(stdout, p)
}

// ReadFile reads and validates the policy file at path (--policy,
// --baseline, policy: specs) and returns it with its bytes: a regular
// file of at most MaxFileBytes (ctx cancels the read).
func ReadFile(ctx context.Context, path string) (Policy, []byte, error) {
	b, err := input.ReadFile(ctx, path, input.File{What: "policy file", Limit: MaxFileBytes})
	if err != nil {
		return Policy{}, nil, err
	}
	p, err := Parse(b)
	if err != nil {
		return Policy{}, nil, fmt.Errorf("policy %s: %w", path, err)
	}
	return p, b, nil
}
