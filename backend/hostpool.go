package backend

import "sync"

// A Recycler is a Problem whose Run can copy outputs into host buffers it
// handed out before: Recycle gives back outputs of Run (the slices as Run
// returned them) that the caller will not read again. A verification pass
// runs every candidate twice and keeps few of the outputs; without reuse
// each Run maps fresh memory for every output (100 MB for Wq at M 2048),
// which on the H200 machine's sandbox cost more than the copy itself.
type Recycler interface {
	Recycle(out [][]byte)
}

// Recycle hands outs back to p when p is a Recycler; otherwise the buffers
// are left to the garbage collector.
func Recycle(p Problem, outs ...[][]byte) {
	r, ok := p.(Recycler)
	if !ok {
		return
	}
	for _, o := range outs {
		if o != nil {
			r.Recycle(o)
		}
	}
}

// HostPool is the host-buffer pool behind a Problem's Recycle: Get returns
// a buffer of n bytes (a recycled one when there is one), Lend records that
// view (a slice of full) was handed to the caller, and Put takes views back.
// A view not lent by this pool is ignored; at most keep buffers of a size
// are kept (0: 4). Safe for concurrent use.
type HostPool struct {
	mu    sync.Mutex
	keep  int
	free  map[int][][]byte
	owner map[*byte][]byte
}

// Get returns a buffer of n bytes; its contents are undefined.
func (h *HostPool) Get(n int) []byte {
	h.mu.Lock()
	defer h.mu.Unlock()
	if l := h.free[n]; len(l) > 0 {
		b := l[len(l)-1]
		h.free[n] = l[:len(l)-1]
		return b
	}
	return make([]byte, n)
}

// Lend records that view, a non-empty slice of full, goes to the caller.
func (h *HostPool) Lend(full, view []byte) {
	if len(view) == 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.owner == nil {
		h.owner = map[*byte][]byte{}
	}
	h.owner[&view[0]] = full
}

// Put takes back the views (outputs of Run) for later Gets.
func (h *HostPool) Put(views [][]byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	keep := h.keep
	if keep <= 0 {
		keep = 4
	}
	for _, v := range views {
		if len(v) == 0 {
			continue
		}
		full, ok := h.owner[&v[0]]
		if !ok {
			continue
		}
		delete(h.owner, &v[0])
		if h.free == nil {
			h.free = map[int][][]byte{}
		}
		if len(h.free[len(full)]) < keep {
			h.free[len(full)] = append(h.free[len(full)], full)
		}
	}
}
