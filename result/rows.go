package result

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
)

// Hashes is one 64-bit hash per row of an operand (FNV-1a of the row's
// bytes). In JSON it is the base64 of the hashes as little-endian bytes,
// 8 per row (compact over the worker pipe); Bytes gives the same bytes, as
// the store keeps them.
type Hashes []uint64

// Bytes returns h as little-endian bytes, 8 per row.
func (h Hashes) Bytes() []byte {
	b := make([]byte, 8*len(h))
	for i, x := range h {
		binary.LittleEndian.PutUint64(b[8*i:], x)
	}
	return b
}

// HashesFromBytes decodes Bytes' format.
func HashesFromBytes(b []byte) (Hashes, error) {
	if len(b)%8 != 0 {
		return nil, fmt.Errorf("row hashes: %d bytes, not a multiple of 8", len(b))
	}
	h := make(Hashes, len(b)/8)
	for i := range h {
		h[i] = binary.LittleEndian.Uint64(b[8*i:])
	}
	return h, nil
}

// MarshalJSON encodes h as a base64 string (null when nil).
func (h Hashes) MarshalJSON() ([]byte, error) {
	if h == nil {
		return []byte("null"), nil
	}
	return json.Marshal(base64.StdEncoding.EncodeToString(h.Bytes()))
}

// UnmarshalJSON decodes MarshalJSON's format.
func (h *Hashes) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*h = nil
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("row hashes: %w", err)
	}
	raw, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return fmt.Errorf("row hashes: %w", err)
	}
	v, err := HashesFromBytes(raw)
	if err != nil {
		return err
	}
	*h = v
	return nil
}

// RowHashes are the row hashes of one output operand of a candidate: one
// per row of an operand whose leading dimension is M, the rows the
// batch-invariance check compares across the M of a shape.
type RowHashes struct {
	Operand string `json:"operand"`
	Hashes  Hashes `json:"hashes"`
}
