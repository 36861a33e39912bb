package rewriter

import (
	"sync"

	"relayout/catalog"
	"relayout/planner"
)

// holeLayouts is where the layouts of a job's partly covered arrays come
// from: the store their blocks are loaded from (the headers checkPlan and
// writeStructure walk do not carry them), and planner.HoleLayout's answer
// per array, remembered for the job (Prepare makes one: checkPlan and
// writeStructure both ask). Nil: no store (an array is used as is) and no
// memory.
type holeLayouts struct {
	store *catalog.Store
	mu    sync.Mutex
	m     map[catalog.Key]planner.Layout
}

func newHoleLayouts(store *catalog.Store) *holeLayouts {
	return &holeLayouts{store: store, m: map[catalog.Key]planner.Layout{}}
}

// holeLayout is planner.HoleLayout of a for layout l (l itself with
// opts.Fill, for anything but a contiguous or chunked array with data, and
// for a chunked one too small to be sparse). a's blocks
// are loaded from holes' store when a is a header.
func holeLayout(a *catalog.Array, l planner.Layout, opts Options, holes *holeLayouts) (planner.Layout, error) {
	// A chunked array is asked only whether it is sparse, which a smaller
	// one is not: its blocks are not loaded for that.
	chunkedSmall := l.Kind == planner.Chunked && a.Bytes() < planner.SparseMinBytes
	if opts.Fill || (l.Kind != planner.Contiguous && l.Kind != planner.Chunked) || chunkedSmall ||
		a.Constant || len(a.Shape) == 0 || a.Elements() == 0 {
		return l, nil
	}
	if holes == nil {
		return planner.HoleLayout(a, l), nil
	}
	holes.mu.Lock()
	hl, ok := holes.m[a.Key()]
	holes.mu.Unlock()
	if ok {
		return hl, nil
	}
	full := a
	if a.Blocks == nil && holes.store != nil {
		var err error
		if full, err = holes.store.Array(a.Key()); err != nil {
			return l, err
		}
	}
	hl = planner.HoleLayout(full, l)
	holes.mu.Lock()
	holes.m[a.Key()] = hl
	holes.mu.Unlock()
	return hl, nil
}
