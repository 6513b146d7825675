package tune

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// The worker protocol: the parent and a worker process exchange frames over
// the worker's stdin and stdout. A frame is
//
//	length uint32 big-endian (= 1 + len(payload)) | kind byte | payload (JSON)
//
// Requests: 'D' device (no payload), 'C' compile ([]backend.Program),
// 'R' run cell (CellJob). Replies: 'h' hello (worker ready), 'd' the
// backend.Device, 'c' []CompileResult, 'e' an Event (any number, before the
// result), 'r' the result.CellResult, 'f' a CandidateFailure (the worker
// exits after it), 'x' an error message.
const (
	kindHello   = 'h'
	kindDevice  = 'D'
	kindDevRep  = 'd'
	kindCompile = 'C'
	kindCompRep = 'c'
	kindRun     = 'R'
	kindEvent   = 'e'
	kindResult  = 'r'
	kindFailure = 'f'
	kindError   = 'x'
)

// MaxFrame is the largest frame accepted (64 MiB); a longer length prefix is
// a protocol error, never an allocation.
const MaxFrame = 64 << 20

// A Frame is one protocol message.
type Frame struct {
	Kind    byte
	Payload []byte
}

// ErrFrame marks a malformed frame.
var ErrFrame = errors.New("malformed worker frame")

// WriteFrame writes kind and v (JSON-encoded; nil for no payload).
func WriteFrame(w io.Writer, kind byte, v any) error {
	var payload []byte
	if v != nil {
		var err error
		if payload, err = json.Marshal(v); err != nil {
			return fmt.Errorf("encode frame %q: %w", kind, err)
		}
	}
	if len(payload)+1 > MaxFrame {
		return fmt.Errorf("frame %q of %d bytes exceeds %d: %w", kind, len(payload), MaxFrame, ErrFrame)
	}
	buf := make([]byte, 5+len(payload))
	binary.BigEndian.PutUint32(buf, uint32(1+len(payload)))
	buf[4] = kind
	copy(buf[5:], payload)
	_, err := w.Write(buf)
	return err
}

// ReadFrame reads one frame. io.EOF means the stream ended cleanly between
// frames; a truncated or oversized frame wraps ErrFrame.
func ReadFrame(r io.Reader) (Frame, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return Frame{}, fmt.Errorf("truncated length: %w", ErrFrame)
		}
		return Frame{}, err
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n < 1 || n > MaxFrame {
		return Frame{}, fmt.Errorf("frame length %d out of range [1, %d]: %w", n, MaxFrame, ErrFrame)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return Frame{}, fmt.Errorf("truncated frame body (%v): %w", err, ErrFrame)
	}
	return Frame{Kind: body[0], Payload: body[1:]}, nil
}

// Decode unmarshals f's payload into v, checking its kind.
func (f Frame) Decode(kind byte, v any) error {
	if f.Kind != kind {
		return fmt.Errorf("want frame %q, got %q: %w", kind, f.Kind, ErrFrame)
	}
	if err := json.Unmarshal(f.Payload, v); err != nil {
		return fmt.Errorf("frame %q: %v: %w", kind, err, ErrFrame)
	}
	return nil
}

// failureMsg is the payload of a 'f' frame.
type failureMsg struct {
	Cand   int    `json:"cand"`
	Status string `json:"status"`
	Detail string `json:"detail"`
}
