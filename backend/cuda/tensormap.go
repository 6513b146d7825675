package cuda

import (
	"fmt"
	"runtime"
	"unsafe"

	"github.com/tilefit/tilefit/kernel"
)

// TensorMapBytes is the size of a CUtensorMap (cuda.h: 128 bytes, 64-byte
// aligned), the value a kernel receives as a `const __grid_constant__`
// parameter.
const TensorMapBytes = 128

// A TensorMap is an encoded CUtensorMap: opaque bytes the driver wrote,
// passed by value to a kernel.
type TensorMap [TensorMapBytes / 8]uint64

// Tensor-map limits (CUDA driver API, cuTensorMapEncodeTiled).
const (
	tmaMaxRank      = 5
	tmaMaxBox       = 256
	tmaMaxDim       = 1 << 32
	tmaMaxStride    = 1 << 40
	tmaStrideAlign  = 16
	tmaAddressAlign = 16
)

// CUtensorMapDataType values used here.
const (
	tmaUint8   = 0
	tmaFloat16 = 6
	tmaFloat32 = 7
	tmaBF16    = 9
)

// tmaDataType is the CUtensorMapDataType of d.
func tmaDataType(d kernel.DType) (uintptr, error) {
	switch d {
	case kernel.F16:
		return tmaFloat16, nil
	case kernel.BF16:
		return tmaBF16, nil
	case kernel.F32:
		return tmaFloat32, nil
	case kernel.I8:
		// Copied as bytes: a tensor copy moves bits, the kernel decodes.
		return tmaUint8, nil
	}
	return 0, fmt.Errorf("tensor map: element type %v has no TMA data type", d)
}

// ValidateTensorMap checks m against the rules of cuTensorMapEncodeTiled
// (non-interleaved layouts) before any driver call: rank 1..5, every global
// size in 1..2³², the byte strides of dimensions 1.. multiples of 16 below
// 2⁴⁰ and no smaller than the dimension below them spans, box sizes in
// 1..256 with the inner box a multiple of 16 bytes, the inner box no wider
// than the swizzle span (32, 64 or 128 bytes) when swizzled, and known
// swizzle and L2 promotion codes. The messages name the rule broken.
func ValidateTensorMap(m *kernel.TensorMap) error {
	if m == nil {
		return fmt.Errorf("tensor map: none given")
	}
	es := m.DType.Size()
	if _, err := tmaDataType(m.DType); err != nil || es == 0 {
		return fmt.Errorf("tensor map over %s: element type %v has no TMA data type", m.Buffer, m.DType)
	}
	rank := len(m.Dims)
	if rank < 1 || rank > tmaMaxRank {
		return fmt.Errorf("tensor map over %s: rank %d (want 1..%d)", m.Buffer, rank, tmaMaxRank)
	}
	if len(m.Strides) != rank-1 {
		return fmt.Errorf("tensor map over %s: %d strides for rank %d (want %d: dimensions 1..)", m.Buffer, len(m.Strides), rank, rank-1)
	}
	if len(m.Box) != rank {
		return fmt.Errorf("tensor map over %s: %d box sizes for rank %d", m.Buffer, len(m.Box), rank)
	}
	for i, d := range m.Dims {
		if d < 1 || d > tmaMaxDim {
			return fmt.Errorf("tensor map over %s: dimension %d has size %d (want 1..2^32)", m.Buffer, i, d)
		}
	}
	span := m.Dims[0] * int64(es) // bytes one step of dimension 1 must cover
	for i, s := range m.Strides {
		if s%tmaStrideAlign != 0 {
			return fmt.Errorf("tensor map over %s: stride of dimension %d is %d bytes, not a multiple of 16 (rows of %s elements need a multiple of %d elements)",
				m.Buffer, i+1, s, m.DType, tmaStrideAlign/es)
		}
		if s <= 0 || s >= tmaMaxStride {
			return fmt.Errorf("tensor map over %s: stride of dimension %d is %d bytes (want 16..2^40)", m.Buffer, i+1, s)
		}
		if s < span {
			return fmt.Errorf("tensor map over %s: stride of dimension %d is %d bytes, less than the %d bytes dimension %d spans", m.Buffer, i+1, s, span, i)
		}
		span = s * m.Dims[i+1]
	}
	for i, b := range m.Box {
		if b < 1 || b > tmaMaxBox {
			return fmt.Errorf("tensor map over %s: box size %d in dimension %d (want 1..%d)", m.Buffer, b, i, tmaMaxBox)
		}
	}
	inner := m.Box[0] * es
	if inner%16 != 0 {
		return fmt.Errorf("tensor map over %s: inner box is %d bytes, not a multiple of 16", m.Buffer, inner)
	}
	switch m.Swizzle {
	case 0:
	case 1, 2, 3:
		if sw := 16 << m.Swizzle; inner > sw {
			return fmt.Errorf("tensor map over %s: inner box is %d bytes, wider than the %d-byte swizzle span", m.Buffer, inner, sw)
		}
	default:
		return fmt.Errorf("tensor map over %s: swizzle %d (want 0 none, 1 32 B, 2 64 B, 3 128 B)", m.Buffer, m.Swizzle)
	}
	if m.L2Promotion < 0 || m.L2Promotion > 3 {
		return fmt.Errorf("tensor map over %s: L2 promotion %d (want 0..3)", m.Buffer, m.L2Promotion)
	}
	return nil
}

// encodeTensorMap validates m and encodes it over the device buffer at addr
// with cuTensorMapEncodeTiled (element strides 1, no interleave, zero fill
// out of bounds). Call on the device thread.
func (d *driver) encodeTensorMap(m *kernel.TensorMap, addr devptr) (TensorMap, error) {
	var out TensorMap
	if err := ValidateTensorMap(m); err != nil {
		return out, err
	}
	if addr%tmaAddressAlign != 0 {
		return out, fmt.Errorf("tensor map over %s: address %#x is not 16-byte aligned", m.Buffer, uint64(addr))
	}
	if !d.has("cuTensorMapEncodeTiled") {
		return out, fmt.Errorf("tensor map over %s: the driver (%s) lacks cuTensorMapEncodeTiled", m.Buffer, d.name)
	}
	dt, _ := tmaDataType(m.DType)
	rank := len(m.Dims)
	dims := make([]uint64, rank)
	strides := make([]uint64, rank) // one spare: never empty
	box := make([]uint32, rank)
	elem := make([]uint32, rank)
	for i := range m.Dims {
		dims[i] = uint64(m.Dims[i])
		box[i] = uint32(m.Box[i])
		elem[i] = 1
	}
	for i, s := range m.Strides {
		strides[i] = uint64(s)
	}
	// The driver writes the map into a 64-byte-aligned buffer.
	buf := make([]uint64, len(out)+8)
	off := (64 - int(uintptr(unsafe.Pointer(&buf[0]))%64)) % 64 / 8
	dst := buf[off : off+len(out)]
	err := d.do("cuTensorMapEncodeTiled", uintptr(unsafe.Pointer(&dst[0])), dt, uintptr(rank), uintptr(addr),
		uintptr(unsafe.Pointer(&dims[0])), uintptr(unsafe.Pointer(&strides[0])),
		uintptr(unsafe.Pointer(&box[0])), uintptr(unsafe.Pointer(&elem[0])),
		0, uintptr(m.Swizzle), uintptr(m.L2Promotion), 0)
	runtime.KeepAlive(dims)
	runtime.KeepAlive(strides)
	runtime.KeepAlive(box)
	runtime.KeepAlive(elem)
	if err != nil {
		return out, fmt.Errorf("tensor map over %s: %w", m.Buffer, err)
	}
	copy(out[:], dst)
	return out, nil
}
