package tune

import (
	"runtime"
	"sync"

	"github.com/tilefit/tilefit/backend"
	"github.com/tilefit/tilefit/kernel"
)

// setSeed is the seed of input set s of a cell seeded with seed.
func setSeed(seed uint64, s int) uint64 { return seed + uint64(s)*0x9E3779B97F4A7C15 }

// cellSets returns the n input sets of a cell (sets[s][j]: In operand j of
// set s) and set 0's bytes on the host (what the float64 reference and the
// input hashes read). For an operator drawn by UniformInputs (Inputs nil)
// every operand is a counter-based draw (kernel.UniformDrawn of set s's
// seed): a backend that draws where the buffers live (drawer) gets the
// draws of sets 1… without bytes, and every other operand's bytes come
// from inputs, the process's draw cache — a shape's weights are drawn once
// for all its M, and its X once up to its largest M (a smaller M's X is a
// prefix of a larger M's; a larger one extends it). An operator with its
// own generator is drawn on the host, set by set in parallel.
func cellSets(op *kernel.Operator, seed uint64, d kernel.Dims, n int, drawer bool, used map[drawID]bool) (sets [][]backend.Input, host0 [][]byte) {
	sets = make([][]backend.Input, n)
	if op.Inputs != nil {
		for s, in := range genSets(op, seed, d, n) {
			for _, b := range in {
				sets[s] = append(sets[s], backend.Input{Bytes: b})
			}
		}
		return sets, bytesOf(sets[0])
	}
	for s := range sets {
		for oi, o := range op.Operands {
			if o.Dir != kernel.In {
				continue
			}
			dr := kernel.UniformDrawn(o, oi, setSeed(seed, s), d)
			in := backend.Input{Drawn: &dr}
			if s == 0 || !drawer {
				in.Bytes = inputs.get(dr, used)
			}
			sets[s] = append(sets[s], in)
		}
	}
	return sets, bytesOf(sets[0])
}

// drawnInputs returns the inputs of draws as one set: the bytes from the
// draw cache (a drawer backend may draw them itself from Drawn).
func drawnInputs(draws []kernel.Drawn, used map[drawID]bool) (set []backend.Input, host [][]byte) {
	for i := range draws {
		dr := draws[i]
		set = append(set, backend.Input{Bytes: inputs.get(dr, used), Drawn: &dr})
	}
	return set, bytesOf(set)
}

func bytesOf(set []backend.Input) [][]byte {
	out := make([][]byte, len(set))
	for j, in := range set {
		out[j] = in.Bytes
	}
	return out
}

// genSets draws the n input sets of an operator with its own generator
// (Operator.Inputs), set s from seed + s·φ, on up to GOMAXPROCS cores at
// once: the sets are independent, so the bytes are those of drawing them
// one after another.
func genSets(op *kernel.Operator, seed uint64, d kernel.Dims, n int) [][][]byte {
	sets := make([][][]byte, n)
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for s := range sets {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			sets[s] = op.GenInputs(setSeed(seed, s), d)
		}()
	}
	wg.Wait()
	return sets
}

// drawID identifies a counter-based draw up to its length: draws of one ID
// agree on every element they share.
type drawID struct {
	key   uint64
	dtype kernel.DType
	draw  kernel.Draw
}

// drawCache holds the longest draw of each ID made for the last cell in
// this process; the bytes are shared, never written (the backends copy
// them).
type drawCache struct {
	mu sync.Mutex
	m  map[drawID][]byte
}

var inputs drawCache

// get returns dr's bytes: a prefix of the cached draw of its ID, the cached
// draw extended (only the new elements drawn), or a new draw; used records
// the ID for keepOnly.
func (c *drawCache) get(dr kernel.Drawn, used map[drawID]bool) []byte {
	id := drawID{dr.Key, dr.DType, dr.Draw}
	es := dr.DType.Size()
	want := dr.Elems * es
	c.mu.Lock()
	used[id] = true
	b := c.m[id]
	c.mu.Unlock()
	if len(b) >= want {
		return b[:want:want]
	}
	nb := make([]byte, want)
	copy(nb, b)
	dr.Fill(nb, len(b)/es, dr.Elems)
	c.mu.Lock()
	if c.m == nil {
		c.m = map[drawID][]byte{}
	}
	if len(c.m[id]) < want {
		c.m[id] = nb
	}
	c.mu.Unlock()
	return nb
}

// keepOnly drops every draw the last cell did not use.
func (c *drawCache) keepOnly(used map[drawID]bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range c.m {
		if !used[k] {
			delete(c.m, k)
		}
	}
}
