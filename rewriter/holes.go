package rewriter

import (
	"sync"

	"relayout/catalog"
	"relayout/planner"
)

// holeLayouts remembers planner.HoleLayout's answer per array for one job:
// checkPlan and writeStructure both ask, and the answer needs the array's
// blocks, which the headers they walk do not carry.
type holeLayouts struct {
	mu sync.Mutex
	m  map[catalog.Key]planner.Layout
}

// withHoles readies the cache of holeLayout.
func (o Options) withHoles() Options {
	if o.holes == nil {
		o.holes = &holeLayouts{m: map[catalog.Key]planner.Layout{}}
	}
	return o
}

// holeLayout is planner.HoleLayout of a for layout l (l itself with
// opts.Fill or for anything but a contiguous array with data). a's blocks
// are loaded from store when a is a header (store nil: a is used as is).
func holeLayout(a *catalog.Array, l planner.Layout, opts Options, store *catalog.Store) (planner.Layout, error) {
	if opts.Fill || l.Kind != planner.Contiguous || a.Constant || len(a.Shape) == 0 || a.Elements() == 0 {
		return l, nil
	}
	if opts.holes != nil {
		opts.holes.mu.Lock()
		hl, ok := opts.holes.m[a.Key()]
		opts.holes.mu.Unlock()
		if ok {
			return hl, nil
		}
	}
	full := a
	if a.Blocks == nil && store != nil {
		var err error
		if full, err = store.Array(a.Key()); err != nil {
			return l, err
		}
	}
	hl := planner.HoleLayout(full, l)
	if opts.holes != nil {
		opts.holes.mu.Lock()
		opts.holes.m[a.Key()] = hl
		opts.holes.mu.Unlock()
	}
	return hl, nil
}
