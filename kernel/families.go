package kernel

import (
	"fmt"
	"sort"
	"strings"
)

// A Baseline is a vendor candidate registered for an operator: what a user
// would write without tilefit. Its Plan may call vendor-library routines
// (Launch.Vendor) and entries of its own Source (e.g. the vendor GEMM and a
// separate elementwise kernel for a fused operator). A baseline is checked
// numerically against the float64 reference, never required to be bitwise
// equal to the family tiles.
type Baseline struct {
	// Name is the candidate's name in results, e.g. "openblas", "cublas".
	Name    string
	Backend string
	// Operator names the operator it computes.
	Operator string
	Doc      string
	// Library is the device property (backend.Device.Props) that says the
	// vendor library is installed, e.g. "openblas", "cublas"; without it
	// the sweep warns and runs without the baseline. A property
	// "<Library>_warning" (the CPU's "openblas_warning": OpenBLAS on kernels
	// far below the CPU) becomes a sweep warning (tune.VendorWarning).
	Library string
	// Install says how to install the library (a package or command),
	// named in the warning when it is missing, e.g. "apt-get install
	// libopenblas0-pthread".
	Install string
	// Source, if any, holds the compiled kernels the Plan names (compiled
	// with the operator's TypeDefines only); "" when every launch is a
	// vendor routine.
	Source     string
	SourceFile string
	// Plan returns the launches of one call on dims d for operator op (op
	// carries the chosen operand types).
	Plan func(op *Operator, d Dims) (Plan, error)
	// Params, when set, are the family parameters the baseline's outputs
	// follow (Operand.When): hc_up's without BOUND writes mixh only. nil:
	// it writes every operand.
	Params Params
	// F16Intermediate says the baseline keeps its GEMM results in fp16
	// between kernels, as an engine does: it is checked against the
	// operator's Unfused reference (a wider bound), never Reference's.
	F16Intermediate bool
}

// A Registry is the set of families and baselines a tilefit process knows:
// the built-in catalogue (package builtin: Register, New), plus a user's own
// (Add, AddBaseline). The CLI and the sweep worker take one; nothing is
// global.
type Registry struct {
	families  []*Family
	baselines []*Baseline
}

// NewRegistry returns a registry of families fs (see Add).
func NewRegistry(fs ...*Family) (*Registry, error) {
	r := &Registry{}
	for _, f := range fs {
		if err := r.Add(f); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// Add registers f. Its name must be new for its backend; its Operator must
// be complete (name, dims, operands with types and shapes, counts, inputs,
// reference; Bytes and Inputs may be nil), and an operator of the same name already registered must have
// the same signature.
func (r *Registry) Add(f *Family) error {
	if f.Name == "" || f.Backend == "" {
		return fmt.Errorf("family %q: name and backend are required", f.Name)
	}
	if f.Operator == nil || f.Plan == nil {
		return fmt.Errorf("family %s (%s): Operator and Plan are required", f.Name, f.Backend)
	}
	if err := checkOperator(f.Operator); err != nil {
		return fmt.Errorf("family %s (%s): %w", f.Name, f.Backend, err)
	}
	for _, g := range r.families {
		if g.Backend == f.Backend && g.Name == f.Name {
			return fmt.Errorf("family %s (%s) registered twice", f.Name, f.Backend)
		}
		if g.Operator.Name == f.Operator.Name && g.Operator.Signature() != f.Operator.Signature() {
			return fmt.Errorf("family %s: operator %s declared as %q, but family %s declares %q",
				f.Name, f.Operator.Name, f.Operator.Signature(), g.Name, g.Operator.Signature())
		}
	}
	if _, err := f.ParseTile(f.Reference); err != nil {
		return fmt.Errorf("family %s (%s): reference: %w", f.Name, f.Backend, err)
	}
	r.families = append(r.families, f)
	return nil
}

// AddBaseline registers a vendor baseline for an operator.
func (r *Registry) AddBaseline(b *Baseline) error {
	if b.Name == "" || b.Backend == "" || b.Operator == "" || b.Plan == nil {
		return fmt.Errorf("baseline %q: name, backend, operator and plan are required", b.Name)
	}
	for _, c := range r.baselines {
		if c.Name == b.Name && c.Backend == b.Backend && c.Operator == b.Operator {
			return fmt.Errorf("baseline %s (%s, %s) registered twice", b.Name, b.Backend, b.Operator)
		}
	}
	r.baselines = append(r.baselines, b)
	return nil
}

func checkOperator(o *Operator) error {
	if o.Name == "" || len(o.Dims) == 0 || len(o.Operands) == 0 {
		return fmt.Errorf("operator %q: name, dims and operands are required", o.Name)
	}
	if o.FLOPs == nil || o.Reference == nil && o.ReferenceBounds == nil {
		return fmt.Errorf("operator %s: FLOPs and Reference (or ReferenceBounds) are required", o.Name)
	}
	if o.Dims[0] != "M" {
		return fmt.Errorf("operator %s: the first dimension must be M (the token count), got %s", o.Name, o.Dims[0])
	}
	outs := 0
	d := Dims{}
	for _, n := range o.Dims {
		d[n] = 1
	}
	for _, op := range o.Operands {
		if op.Dir != In && op.Dir != Out {
			return fmt.Errorf("operator %s: operand %s has no direction", o.Name, op.Name)
		}
		if op.DType.Size() == 0 {
			return fmt.Errorf("operator %s: operand %s has no element type", o.Name, op.Name)
		}
		if _, err := d.Elems(op.Shape); err != nil {
			return fmt.Errorf("operator %s: operand %s: %w", o.Name, op.Name, err)
		}
		if op.Dir == Out {
			outs++
		}
	}
	if outs == 0 {
		return fmt.Errorf("operator %s has no output operand", o.Name)
	}
	return nil
}

// Families returns every registered family, in registration order.
func (r *Registry) Families() []*Family { return append([]*Family(nil), r.families...) }

// Baselines returns the baselines of operator op on backend.
func (r *Registry) Baselines(backend, op string) []*Baseline {
	var out []*Baseline
	for _, b := range r.baselines {
		if b.Backend == backend && b.Operator == op {
			out = append(out, b)
		}
	}
	return out
}

// Lookup returns the family name for backend.
func (r *Registry) Lookup(backend, name string) (*Family, error) {
	var names []string
	for _, f := range r.families {
		if f.Backend != backend {
			continue
		}
		if f.Name == name {
			return f, nil
		}
		names = append(names, f.Name)
	}
	sort.Strings(names)
	return nil, fmt.Errorf("unknown family %q for backend %s (known: %s)", name, backend, strings.Join(names, ", "))
}

// Operator returns the operator named name (as its first family declares it).
func (r *Registry) Operator(name string) (*Operator, error) {
	var names []string
	seen := map[string]bool{}
	for _, f := range r.families {
		if f.Operator.Name == name {
			return f.Operator, nil
		}
		if !seen[f.Operator.Name] {
			seen[f.Operator.Name] = true
			names = append(names, f.Operator.Name)
		}
	}
	sort.Strings(names)
	return nil, fmt.Errorf("unknown operator %q (known: %s)", name, strings.Join(names, ", "))
}

// Of returns the families of operator op on backend, in registration order.
func (r *Registry) Of(backend, op string) []*Family {
	var out []*Family
	for _, f := range r.families {
		if f.Backend == backend && f.Operator.Name == op {
			out = append(out, f)
		}
	}
	return out
}
