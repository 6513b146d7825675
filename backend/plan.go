package backend

import (
	"fmt"

	"github.com/tilefit/tilefit/kernel"
)

// A Resolved is one kernel parameter of a launch, resolved against a
// problem: an operand or scratch buffer by index, or an int64 value.
type Resolved struct {
	Kind    kernel.ArgKind
	Operand int   // ArgOperand: index in the operator's Operands; else -1
	Scratch int   // ArgScratch: index in Plan.Scratch; else -1
	Value   int64 // ArgDim, ArgInt
	Map     *kernel.TensorMap
}

// ResolvePlan checks plan against op and d and resolves every launch's
// arguments: operand and scratch names must exist, dimensions must be given,
// a tensor map must name a buffer. It is shared by every backend so that
// none of them interprets a family.
func ResolvePlan(op *kernel.Operator, d kernel.Dims, plan kernel.Plan) ([][]Resolved, error) {
	if len(plan.Launches) == 0 {
		return nil, fmt.Errorf("plan has no launches")
	}
	scratch := map[string]int{}
	for i, s := range plan.Scratch {
		if s.DType.Size() == 0 || s.Elems < 0 {
			return nil, fmt.Errorf("scratch %q: bad type or size", s.Name)
		}
		scratch[s.Name] = i
	}
	out := make([][]Resolved, len(plan.Launches))
	for li, l := range plan.Launches {
		for ai, a := range l.Args {
			r := Resolved{Kind: a.Kind, Operand: -1, Scratch: -1}
			switch a.Kind {
			case kernel.ArgOperand:
				_, i, ok := op.Operand(a.Name)
				if !ok {
					return nil, fmt.Errorf("launch %d (%s) argument %d: operator %s has no operand %q", li, entryName(l), ai, op.Name, a.Name)
				}
				r.Operand = i
			case kernel.ArgScratch:
				i, ok := scratch[a.Name]
				if !ok {
					return nil, fmt.Errorf("launch %d (%s) argument %d: no scratch buffer %q in the plan", li, entryName(l), ai, a.Name)
				}
				r.Scratch = i
			case kernel.ArgDim:
				v, err := d.Size(a.Name)
				if err != nil {
					return nil, fmt.Errorf("launch %d (%s) argument %d: %w", li, entryName(l), ai, err)
				}
				r.Value = int64(v)
			case kernel.ArgInt:
				r.Value = a.Value
			case kernel.ArgTensorMap:
				if a.Map == nil {
					return nil, fmt.Errorf("launch %d (%s) argument %d: tensor map missing", li, entryName(l), ai)
				}
				r.Map = a.Map
				if _, i, ok := op.Operand(a.Map.Buffer); ok {
					r.Operand = i
				} else if i, ok := scratch[a.Map.Buffer]; ok {
					r.Scratch = i
				} else {
					return nil, fmt.Errorf("launch %d (%s) argument %d: tensor map over unknown buffer %q", li, entryName(l), ai, a.Map.Buffer)
				}
			default:
				return nil, fmt.Errorf("launch %d (%s) argument %d: unknown kind %d", li, entryName(l), ai, a.Kind)
			}
			out[li] = append(out[li], r)
		}
	}
	return out, nil
}

func entryName(l kernel.Launch) string {
	if l.Vendor != "" {
		return "vendor " + l.Vendor
	}
	return l.Entry
}

// GemmArgs checks the arguments of a kernel.VendorGemm launch: three
// buffers A, B, C then dims M, N, K.
func GemmArgs(args []Resolved) error {
	if len(args) != 6 {
		return fmt.Errorf("vendor %s takes 6 arguments (A, B, C, M, N, K), got %d", kernel.VendorGemm, len(args))
	}
	for i := 0; i < 3; i++ {
		if k := args[i].Kind; k != kernel.ArgOperand && k != kernel.ArgScratch {
			return fmt.Errorf("vendor %s argument %d must be a buffer", kernel.VendorGemm, i)
		}
	}
	for i := 3; i < 6; i++ {
		if k := args[i].Kind; k != kernel.ArgDim && k != kernel.ArgInt {
			return fmt.Errorf("vendor %s argument %d must be an integer", kernel.VendorGemm, i)
		}
	}
	return nil
}
