package rewriter

import (
	"bytes"
	"context"

	"relayout/catalog"
	"relayout/planner"
)

// Overlapping blocks. Some writers store shared faces or halos twice (two
// blocks covering the same elements); a damaged index can make two blocks
// claim the same place. Assembly copies blocks in file order, so where
// blocks overlap the output would hold whichever came last. Instead the
// overlaps are found from the block boxes before an array is written
// (planner.OverlapPairs, O(n log n) for the usual tilings: nothing is read
// when no boxes overlap), and for each overlapping pair only the shared
// region of both blocks is read and compared: equal values (a halo) are
// fine, any difference refuses the array as corrupt input, naming both
// blocks.

// overlapCheckBytes caps the shared region compared at once (in bytes per
// block); larger regions are compared band by band along dimension 0.
const overlapCheckBytes = 8 << 20

// checkOverlaps refuses a (checked by checkArray) when two of its blocks
// overlap with different values, and reports whether no two blocks
// overlap (blockIndex.knowDisjoint: the pipeline's assembly asks it too).
func checkOverlaps(ctx context.Context, src catalog.Source, a *catalog.Array) (disjoint bool, err error) {
	if len(a.Blocks) < 2 {
		return true, nil
	}
	if disjoint, ok := planner.BlocksDisjoint(a); ok && disjoint {
		return true, nil // the usual tiling: no pair to look for
	}
	boxes := make([]catalog.Box, len(a.Blocks))
	for i := range a.Blocks {
		boxes[i] = a.Blocks[i].Box
	}
	if len(a.Shape) == 0 {
		return false, checkScalarOverlaps(ctx, src, a)
	}
	disjoint = true
	for _, p := range planner.OverlapPairs(boxes) {
		shared, ok := boxes[p[0]].Intersect(boxes[p[1]])
		if !ok {
			continue
		}
		disjoint = false
		for _, band := range bands(shared, int64(a.DType.Size), overlapCheckBytes) {
			if err := compareShared(ctx, input{src: src}, a, p[0], p[1], band); err != nil {
				return false, err
			}
		}
	}
	return disjoint, nil
}

// checkScalarOverlaps: every block of a scalar holds the whole value.
func checkScalarOverlaps(ctx context.Context, src catalog.Source, a *catalog.Array) error {
	for j := 1; j < len(a.Blocks); j++ {
		if err := compareShared(ctx, input{src: src}, a, 0, j, catalog.Box{Lower: []int64{}, Count: []int64{}}); err != nil {
			return err
		}
	}
	return nil
}

// bands cuts box into pieces of at most limit bytes along dimension 0 (a
// single row may exceed it).
func bands(box catalog.Box, size, limit int64) []catalog.Box {
	row := size
	for d := 1; d < len(box.Count); d++ {
		row *= box.Count[d]
	}
	step := max(limit/max(row, 1), 1)
	var out []catalog.Box
	for lo := int64(0); lo < box.Count[0]; lo += step {
		b := catalog.Box{Lower: append([]int64(nil), box.Lower...), Count: append([]int64(nil), box.Count...)}
		b.Lower[0] += lo
		b.Count[0] = min(step, box.Count[0]-lo)
		out = append(out, b)
	}
	return out
}

// compareShared reads region (inside both blocks i and j) from each and
// compares.
func compareShared(ctx context.Context, in input, a *catalog.Array, i, j int, region catalog.Box) error {
	size := a.DType.Size
	read := func(k int) ([]byte, error) {
		b := trimBlock(&a.Blocks[k], region, size)
		return assembleReads(ctx, nil, in, a, region, []*catalog.Block{b}, nil, true) // one block
	}
	x, err := read(i)
	if err != nil {
		return err
	}
	y, err := read(j)
	if err != nil {
		return err
	}
	if bytes.Equal(x, y) {
		return nil
	}
	e := int64(firstDiff(x, y)) / int64(size)
	at := make([]int64, len(region.Count))
	for d := len(region.Count) - 1; d >= 0; d-- {
		at[d] = region.Lower[d] + e%region.Count[d]
		e /= region.Count[d]
	}
	bi, bj := &a.Blocks[i], &a.Blocks[j]
	return catalog.Corrupt("", bi.File, bi.Offset, "block %d %v (%s at offset %d) and block %d %v (%s at offset %d) overlap in %v with different values (first at %s): "+
		"the input's index places two different blocks on the same elements; which one is right cannot be told",
		i, bi.Box, bi.File, bi.Offset, j, bj.Box, bj.File, bj.Offset, region, formatIndex(at))
}

// disjointBlocks returns a with blocks that no longer overlap (a itself
// when none do): each block keeps the part of its box that no earlier block
// covers, as pieces of the same stored array (StoredLower placing each
// piece in it). checkOverlaps has made sure the dropped parts hold the same
// values as the blocks that keep them. Deterministic, so that the merged
// layout's phases, which load the array separately, see the same blocks.
func disjointBlocks(a *catalog.Array) *catalog.Array {
	boxes := make([]catalog.Box, len(a.Blocks))
	for i := range a.Blocks {
		boxes[i] = a.Blocks[i].Box
	}
	if len(a.Shape) == 0 {
		if len(a.Blocks) < 2 {
			return a
		}
		c := *a
		c.Blocks = a.Blocks[:1:1]
		return &c
	}
	pairs := planner.OverlapPairs(boxes)
	if len(pairs) == 0 {
		return a
	}
	earlier := map[int][]int{} // j -> the i < j it overlaps
	for _, p := range pairs {
		earlier[p[1]] = append(earlier[p[1]], p[0])
	}
	c := *a
	c.Blocks = make([]catalog.Block, 0, len(a.Blocks))
	for j := range a.Blocks {
		b := &a.Blocks[j]
		pieces := []catalog.Box{b.Box}
		for _, i := range earlier[j] {
			var next []catalog.Box
			for _, p := range pieces {
				next = append(next, subtractBox(p, boxes[i])...)
			}
			pieces = next
		}
		if len(earlier[j]) == 0 {
			c.Blocks = append(c.Blocks, *b)
			continue
		}
		st := b.StoredShape()
		for _, p := range pieces {
			n := *b
			n.Box = p
			lower := make([]int64, len(p.Lower))
			for d := range p.Lower {
				sl := int64(0)
				if b.StoredLower() != nil {
					sl = b.StoredLower()[d]
				}
				lower[d] = sl + p.Lower[d] - b.Box.Lower[d]
			}
			n = n.WithStored(append([]int64(nil), st...), lower)
			c.Blocks = append(c.Blocks, n)
		}
	}
	return &c
}

// subtractBox is p minus q as disjoint boxes (at most 2 per dimension).
func subtractBox(p, q catalog.Box) []catalog.Box {
	if _, ok := p.Intersect(q); !ok {
		return []catalog.Box{p}
	}
	var out []catalog.Box
	rest := catalog.Box{Lower: append([]int64(nil), p.Lower...), Count: append([]int64(nil), p.Count...)}
	for d := range p.Lower {
		lo, hi := rest.Lower[d], rest.Lower[d]+rest.Count[d]
		qlo, qhi := q.Lower[d], q.Lower[d]+q.Count[d]
		if lo < qlo {
			s := catalog.Box{Lower: append([]int64(nil), rest.Lower...), Count: append([]int64(nil), rest.Count...)}
			s.Count[d] = qlo - lo
			out = append(out, s)
			lo = qlo
		}
		if qhi < hi {
			s := catalog.Box{Lower: append([]int64(nil), rest.Lower...), Count: append([]int64(nil), rest.Count...)}
			s.Lower[d], s.Count[d] = qhi, hi-qhi
			out = append(out, s)
			hi = qhi
		}
		rest.Lower[d], rest.Count[d] = lo, hi-lo
	}
	return out
}
