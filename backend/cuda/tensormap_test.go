package cuda

import (
	"strings"
	"testing"

	"github.com/tilefit/tilefit/builtin"
	"github.com/tilefit/tilefit/kernel"
)

// TestValidateTensorMap: the rules of cuTensorMapEncodeTiled are checked
// on the host, each with a message naming the rule (no GPU needed).
func TestValidateTensorMap(t *testing.T) {
	good := func() *kernel.TensorMap {
		return &kernel.TensorMap{Buffer: "X", DType: kernel.F16, Dims: []int64{2560, 1983}, Strides: []int64{5120},
			Box: []int{64, 128}, Swizzle: 3, L2Promotion: 3}
	}
	if err := ValidateTensorMap(good()); err != nil {
		t.Fatalf("valid map refused: %v", err)
	}
	for _, ok := range []func(m *kernel.TensorMap){
		func(m *kernel.TensorMap) { m.Box = []int{64, 256} },
		func(m *kernel.TensorMap) { m.Swizzle = 0; m.Box = []int{256, 8} },
		func(m *kernel.TensorMap) { m.Swizzle = 2; m.Box = []int{32, 8} },
		func(m *kernel.TensorMap) { m.Dims = []int64{8, 1}; m.Strides = []int64{16} },
		func(m *kernel.TensorMap) { m.DType = kernel.F32; m.Box = []int{32, 64}; m.Strides = []int64{10240} },
		func(m *kernel.TensorMap) {
			m.Dims = []int64{64, 4, 3}
			m.Strides = []int64{128, 512}
			m.Box = []int{64, 4, 1}
		},
	} {
		m := good()
		ok(m)
		if err := ValidateTensorMap(m); err != nil {
			t.Errorf("valid map %+v refused: %v", m, err)
		}
	}
	for want, bad := range map[string]func(m *kernel.TensorMap){
		"rank 0":                      func(m *kernel.TensorMap) { m.Dims, m.Strides, m.Box = nil, nil, nil },
		"rank 6":                      func(m *kernel.TensorMap) { m.Dims = make([]int64, 6) },
		"strides for rank":            func(m *kernel.TensorMap) { m.Strides = nil },
		"box sizes for rank":          func(m *kernel.TensorMap) { m.Box = []int{64} },
		"has size 0":                  func(m *kernel.TensorMap) { m.Dims[1] = 0 },
		"not a multiple of 16":        func(m *kernel.TensorMap) { m.Dims[0] = 324; m.Strides[0] = 648 },
		"multiple of 8 elements":      func(m *kernel.TensorMap) { m.Dims[0] = 100; m.Strides[0] = 200 },
		"less than the":               func(m *kernel.TensorMap) { m.Strides[0] = 4096 },
		"box size 257":                func(m *kernel.TensorMap) { m.Box[1] = 257 },
		"box size 0":                  func(m *kernel.TensorMap) { m.Box[1] = 0 },
		"inner box is 8 bytes":        func(m *kernel.TensorMap) { m.Box[0] = 4; m.Swizzle = 0 },
		"wider than the 128-byte":     func(m *kernel.TensorMap) { m.Box[0] = 128 },
		"wider than the 64-byte":      func(m *kernel.TensorMap) { m.Swizzle = 2 },
		"wider than the 32-byte":      func(m *kernel.TensorMap) { m.Swizzle = 1 },
		"swizzle 4":                   func(m *kernel.TensorMap) { m.Swizzle = 4 },
		"L2 promotion 4":              func(m *kernel.TensorMap) { m.L2Promotion = 4 },
		"element type dtype(0)":       func(m *kernel.TensorMap) { m.DType = 0 },
		"stride of dimension 1 is 0 ": func(m *kernel.TensorMap) { m.Dims[0] = 1; m.Box[0] = 8; m.Strides[0] = 0 },
		"stride of dimension 2 is 512": func(m *kernel.TensorMap) {
			m.Dims = append(m.Dims, 2)
			m.Strides = append(m.Strides, 512)
			m.Box = append(m.Box, 1)
		},
	} {
		m := good()
		bad(m)
		err := ValidateTensorMap(m)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("map %+v: error %v, want one containing %q", m, err, want)
		}
	}
	if err := ValidateTensorMap(nil); err == nil {
		t.Error("nil map accepted")
	}
}

// TestWgmmaMapsValid: the family's maps pass the driver's rules for every
// tile of its sweep on the strata shapes, and K not a multiple of 8 is
// refused by the family before any map is made.
func TestWgmmaMapsValid(t *testing.T) {
	fam := builtin.CUDAGemmWgmma()
	for _, p := range fam.Space() {
		for _, s := range strataShapes {
			for _, m := range []int{1, 1983, 2048} {
				x, w, err := builtin.WgmmaMaps(p, m, s.n, s.k)
				if err != nil {
					t.Fatalf("%s M %d: %v", s.name, m, err)
				}
				for _, tm := range []*kernel.TensorMap{x, w} {
					if err := ValidateTensorMap(tm); err != nil {
						t.Errorf("%s %s M %d: %v", fam.TileName(p), s.name, m, err)
					}
				}
			}
		}
	}
	if _, _, err := builtin.WgmmaMaps(fam.Space()[0], 37, 48, 100); err == nil {
		t.Error("K 100 accepted")
	}
}
