// Package builtin is tilefit's catalogue of built-in operators (gemm_f16,
// gemm_q8_f16, hc_up_f16, swiglu_f16), their families on every backend
// (cpu: C; cuda: mma.sync, wgmma + TMA, streaming) with the C and CUDA
// sources they compile (src/cpu, src/cuda, embedded), and their vendor
// baselines. Package kernel is the contract they are written against; it
// does not know this package. Nothing here is global: Register adds a fresh
// copy of every declaration to the registry a binary builds.
package builtin

import (
	"fmt"

	. "github.com/tilefit/tilefit/kernel"
)

// Families returns fresh copies of the built-in families of every backend,
// in registration order.
func Families() []*Family {
	return []*Family{CPUGemmF16(), CUDAGemmF16(), CUDAGemmWgmma(), CUDAGemmStream(), CUDAGemmDecode(),
		CPUHcUpF16(), CUDAHcUpF16(), CUDAHcUpWgmma(), CPUSwigluF16(), CUDASwigluF16(), CUDASwigluWgmma(), CPUGemmQ8F16(), CUDAGemmQ8F16(), CUDAGemmQ8Wgmma()}
}

// Baselines returns fresh copies of the built-in vendor baselines of every
// backend.
func Baselines() []*Baseline {
	return append([]*Baseline{OpenBLASGemmF16(), CuBLASGemmF16(), CuBLASLtGemmF16()}, FusedBaselines()...)
}

// Register adds the built-in families and baselines to r. It fails (and
// may have added some) when r already holds a family of the same backend
// and name, or an operator of the same name with another signature.
func Register(r *Registry) error {
	for _, f := range Families() {
		if err := r.Add(f); err != nil {
			return fmt.Errorf("builtin: family %s/%s: %w", f.Backend, f.Name, err)
		}
	}
	for _, b := range Baselines() {
		if err := r.AddBaseline(b); err != nil {
			return fmt.Errorf("builtin: baseline %s/%s: %w", b.Backend, b.Name, err)
		}
	}
	return nil
}

// New returns a fresh registry holding the built-in families and baselines
// of every backend (Register on an empty registry). (Not named Registry:
// this package's files dot-import kernel, whose Registry type that would
// shadow.)
func New() *Registry {
	r, err := NewRegistry()
	if err == nil {
		err = Register(r)
	}
	if err != nil {
		panic(err.Error()) // a programming error in the catalogue, caught by every test
	}
	return r
}

// Lookup returns the built-in family name for backend.
func Lookup(backend, name string) (*Family, error) { return New().Lookup(backend, name) }
