package backend

import "testing"

// TestHostPool: a view handed back is reused by the next Get of its size;
// views the pool did not lend, and a view handed back twice, are ignored.
func TestHostPool(t *testing.T) {
	var h HostPool
	full := h.Get(100)
	view := full[8:40:40]
	h.Lend(full, view)
	h.Put([][]byte{nil, view, {}})
	if got := h.Get(100); &got[0] != &full[0] {
		t.Error("a recycled buffer was not reused")
	}
	if got := h.Get(100); &got[0] == &full[0] {
		t.Error("a buffer was handed out twice")
	}
	// Twice back: the second Put does not make the buffer available twice.
	h.Lend(full, view)
	h.Put([][]byte{view})
	h.Put([][]byte{view})
	a, b := h.Get(100), h.Get(100)
	if &a[0] != &full[0] || &b[0] == &full[0] {
		t.Error("a view put back twice was reused twice")
	}
	// A slice the pool never lent is not taken.
	stranger := make([]byte, 100)
	h.Put([][]byte{stranger})
	if got := h.Get(100); &got[0] == &stranger[0] {
		t.Error("the pool took a buffer it did not lend")
	}
	// Other sizes are separate; at most keep buffers per size are kept.
	h = HostPool{keep: 2}
	var lent [][]byte
	for i := 0; i < 3; i++ {
		f := h.Get(64)
		h.Lend(f, f)
		lent = append(lent, f)
	}
	h.Put(lent)
	if n := len(h.free[64]); n != 2 {
		t.Errorf("%d buffers kept, want 2", n)
	}
	if got := h.Get(32); len(got) != 32 {
		t.Errorf("Get(32) returned %d bytes", len(got))
	}
}
