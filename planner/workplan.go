package planner

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"sync"

	"relayout/catalog"
)

// Merged is the layout whose write units are the merged cuboids of a merge
// scope (see Merge): each cuboid is assembled once from its block pieces and
// written as one unit. An array its blocks cover entirely is stored as the
// usual contiguous dataset; a partially covered one (an AMR level with
// holes) stores only its cuboids, one dataset each, behind an HDF5 virtual
// dataset that presents the whole array (README: "The merged layout").
const Merged = "merged"

// FullyCovered reports whether the blocks of a (never overlapping) cover its
// whole shape.
func FullyCovered(a *catalog.Array) bool {
	var n int64
	for i := range a.Blocks {
		n += a.Blocks[i].Box.Elements()
	}
	if n < a.Elements() {
		return false
	}
	// On the blocks themselves: a copy of their boxes (pointers, written
	// under the collector's barrier) cost as much as the count.
	if c, ok := coveredCellsOf(a.Shape, a.Blocks, blockBox); ok {
		return c == a.Elements()
	}
	boxes := blockBoxes(a)
	if _, _, ok := Disjoint(boxes); ok {
		return true // disjoint boxes inside the array adding up to it
	}
	return UnionVolume(boxes) >= a.Elements() // overlapping blocks can leave holes
}

// BlocksDisjoint reports, when the cell grid of a's blocks answers it in
// one pass over them (ok), whether no two blocks share an element: their
// union holds as many elements as they do. ok is false when a block leaves
// the array or the grid would be too fine (OverlapPairs then decides).
// The rewriter asks it of every array before looking for overlapping pairs,
// which copied every box first (351,537 blocks: 0.1 s of a run's CPU).
func BlocksDisjoint(a *catalog.Array) (disjoint, ok bool) {
	var n int64
	for i := range a.Blocks {
		n += a.Blocks[i].Box.Elements()
	}
	c, ok := coveredCellsOf(a.Shape, a.Blocks, blockBox)
	return ok && c == n, ok
}

// MergedStorage is how the merged layout stores an array whose merged
// cuboids are boxes: contiguous when full, the cuboids as pieces otherwise.
func MergedStorage(shape []int64, boxes []catalog.Box, full bool) Storage {
	if full {
		s := ContiguousStorage(shape)
		s.Name = Merged + " (contiguous)"
		return s
	}
	return PiecesStorage(Merged+" (cuboids)", shape, boxes, false)
}

// WorkSource is one read of a work unit: the part Src of block Block
// (relative to the block's box) lands at Dst (relative to the unit's box).
type WorkSource struct {
	Block int
	Src   catalog.Box
	Dst   catalog.Box
}

// WorkUnit is one output unit (a cuboid, or a chunk) with the sources it
// needs, in read order.
type WorkUnit struct {
	Box     catalog.Box // in the array's index space
	Sources []WorkSource
}

// WorkPlan is the ordered list of output units of one array geometry. The
// units are ordered so that the reads of each sub-file run forward: by the
// (file, offset) of their first read, each unit's reads sorted the same way.
// Block indices refer to the array the plan was built for, and to every
// array with the same Fingerprint (same boxes and ranks in the same order);
// the order was chosen on the first such array's file offsets.
type WorkPlan struct {
	Fingerprint string
	Units       []WorkUnit
}

// Sources returns the sources of the unit box u covering every block of
// blocks that intersects u (Src relative to each block, Dst relative to u).
func unitSources(blocks []catalog.Block, cand []int, u catalog.Box) []WorkSource {
	var out []WorkSource
	for _, i := range cand {
		b := blocks[i].Box
		x, ok := Intersect(b, u)
		if !ok {
			continue
		}
		out = append(out, WorkSource{Block: i, Src: shift(x, b.Lower), Dst: shift(x, u.Lower)})
	}
	return out
}

// shift returns box relative to origin.
func shift(box catalog.Box, origin []int64) catalog.Box {
	r := catalog.Box{Lower: make([]int64, len(box.Lower)), Count: slices.Clone(box.Count)}
	for d := range box.Lower {
		r.Lower[d] = box.Lower[d] - origin[d]
	}
	return r
}

// orderUnits sorts each unit's sources, then the units, by the (file,
// offset) of the blocks they read.
func orderUnits(blocks []catalog.Block, units []WorkUnit) {
	key := func(i int) (string, int64) { return blocks[i].File, blocks[i].Offset }
	less := func(x, y int) int {
		fx, ox := key(x)
		fy, oy := key(y)
		if c := strings.Compare(fx, fy); c != 0 {
			return c
		}
		if c := cmp.Compare(ox, oy); c != 0 {
			return c
		}
		return cmp.Compare(x, y)
	}
	for u := range units {
		slices.SortStableFunc(units[u].Sources, func(a, b WorkSource) int { return less(a.Block, b.Block) })
	}
	slices.SortStableFunc(units, func(a, b WorkUnit) int {
		switch {
		case len(a.Sources) == 0 && len(b.Sources) == 0:
			return 0
		case len(a.Sources) == 0:
			return 1
		case len(b.Sources) == 0:
			return -1
		}
		return less(a.Sources[0].Block, b.Sources[0].Block)
	})
}

// CuboidWorkPlan is the work plan of the merged layout: one unit per cuboid
// of the groups (Merge of the array's blocks), its sources the cuboid's
// pieces.
func CuboidWorkPlan(a *catalog.Array, groups []Group) WorkPlan {
	var units []WorkUnit
	for _, g := range groups {
		for _, c := range g.Cuboids {
			u := WorkUnit{Box: c.Box}
			for _, p := range c.Pieces {
				b := a.Blocks[p.Block].Box
				u.Sources = append(u.Sources, WorkSource{Block: p.Block, Src: shift(p.Box, b.Lower), Dst: shift(p.Box, c.Box.Lower)})
			}
			units = append(units, u)
		}
	}
	orderUnits(a.Blocks, units)
	return WorkPlan{Fingerprint: Fingerprint(a), Units: units}
}

// ChunkWorkPlan is the work plan of a chunked layout: one unit per chunk
// that some block touches (chunks of the grid clipped to the shape).
func ChunkWorkPlan(a *catalog.Array, chunk []int64) (WorkPlan, error) {
	rank := len(a.Shape)
	if len(chunk) != rank || rank == 0 {
		return WorkPlan{}, fmt.Errorf("planner: chunk %v for shape %v", chunk, a.Shape)
	}
	touched := map[string]*WorkUnit{}
	var order []string
	for i := range a.Blocks {
		b := a.Blocks[i].Box
		if IsEmpty(b) {
			continue
		}
		lo, hi := make([]int64, rank), make([]int64, rank)
		for d := range rank {
			if chunk[d] <= 0 {
				return WorkPlan{}, fmt.Errorf("planner: chunk %v for shape %v", chunk, a.Shape)
			}
			lo[d], hi[d] = b.Lower[d]/chunk[d], (b.Lower[d]+b.Count[d]-1)/chunk[d]
		}
		c := slices.Clone(lo)
		for {
			box := catalog.Box{Lower: make([]int64, rank), Count: make([]int64, rank)}
			for d := range rank {
				box.Lower[d] = c[d] * chunk[d]
				box.Count[d] = min(chunk[d], a.Shape[d]-box.Lower[d])
			}
			k := fmt.Sprint(c)
			if touched[k] == nil {
				touched[k] = &WorkUnit{Box: box}
				order = append(order, k)
			}
			d := rank - 1
			for ; d >= 0; d-- {
				if c[d]++; c[d] <= hi[d] {
					break
				}
				c[d] = lo[d]
			}
			if d < 0 {
				break
			}
		}
	}
	units := make([]WorkUnit, 0, len(order))
	all := make([]int, len(a.Blocks))
	for i := range all {
		all[i] = i
	}
	for _, k := range order {
		u := touched[k]
		u.Sources = unitSources(a.Blocks, all, u.Box)
		units = append(units, *u)
	}
	orderUnits(a.Blocks, units)
	return WorkPlan{Fingerprint: Fingerprint(a), Units: units}, nil
}

// WorkPlans caches merged work plans by array geometry (Fingerprint), merge
// scope and ranks per node, so that steps (and variables) repeating a block
// layout are clustered once. Safe for concurrent use.
type WorkPlans struct {
	mu    sync.Mutex
	cache map[string]*WorkPlan
	Hits  int // plans served from the cache
}

// NewWorkPlans returns an empty cache.
func NewWorkPlans() *WorkPlans { return &WorkPlans{cache: map[string]*WorkPlan{}} }

// Merged returns the merged work plan of a for the scope (shared: do not
// modify it).
func (w *WorkPlans) Merged(a *catalog.Array, scope Scope, ranksPerNode int) (*WorkPlan, error) {
	key := fmt.Sprintf("%s/%d/%d", Fingerprint(a), scope, ranksPerNode)
	w.mu.Lock()
	defer w.mu.Unlock()
	if p, ok := w.cache[key]; ok {
		w.Hits++
		return p, nil
	}
	groups, err := Merge(a.Blocks, scope, ranksPerNode)
	if err != nil {
		return nil, err
	}
	p := CuboidWorkPlan(a, groups)
	w.cache[key] = &p
	return &p, nil
}
