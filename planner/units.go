package planner

import (
	"slices"

	"relayout/catalog"
)

// AlignedSlabs is Slabs with unit boundaries placed on the source blocks'
// extents along dimension 0 whenever that fits, so that every source block
// lies in one unit and is read once, whole, in one request (coalesced with
// its neighbours in the file) instead of once per unit that cuts it.
//
// blocks are the source blocks' boxes (only dimension 0 is used). Units aim
// at target bytes: a unit ends at the farthest block boundary within target
// rows; when the next boundary is farther than that, the unit may grow to it
// as long as it stays within limit bytes (the hard per-unit share of the
// memory budget). Where even that does not fit (blocks taller than limit), the
// unit falls back to target-sized steps that stop at the next boundary, so
// later units are aligned again. For the chunked layout only boundaries that
// are multiples of Chunk[0] (or the array's end) are used, and fallback steps
// are whole chunk rows, so units stay made of whole chunks.
//
// Like Slabs, units are consecutive ranges along dimension 0 covering the
// other dimensions whole, in order, at least one row (or chunk row) each. A
// scalar is one zero-dimensional unit; an array with no elements has none.
// With no blocks the result is Slabs(shape, layout, elemSize, target).
func AlignedSlabs(shape []int64, layout Layout, elemSize int, blocks []catalog.Box, target, limit int64) []catalog.Box {
	if len(shape) == 0 || isEmpty(shape) || len(blocks) == 0 {
		return Slabs(shape, layout, elemSize, target)
	}
	limit = max(limit, target)
	rowBytes := int64(elemSize)
	for _, n := range shape[1:] {
		rowBytes *= n
	}
	step := int64(1) // rows of the smallest unit: one row, or one chunk row
	if layout.Kind == Chunked && len(layout.Chunk) == len(shape) && layout.Chunk[0] > 0 {
		step = layout.Chunk[0]
	}
	n0 := shape[0]
	rowsFor := func(bytes int64) int64 { // rows in bytes, whole steps, at least one step
		if rowBytes <= 0 {
			return n0
		}
		return max(bytes/rowBytes/step, 1) * step
	}
	// Candidate boundaries: block edges along dim 0 inside (0, n0), on the
	// step grid; and the array's end.
	cuts := []int64{n0}
	for _, b := range blocks {
		if len(b.Lower) == 0 || len(b.Count) == 0 {
			continue
		}
		for _, e := range [2]int64{b.Lower[0], b.Lower[0] + b.Count[0]} {
			if e > 0 && e < n0 && e%step == 0 {
				cuts = append(cuts, e)
			}
		}
	}
	slices.Sort(cuts)
	cuts = slices.Compact(cuts)
	soft, hard := rowsFor(target), rowsFor(limit)
	var out []catalog.Box
	k := 0 // cuts[k] is the first boundary > lo
	for lo := int64(0); lo < n0; {
		for cuts[k] <= lo {
			k++
		}
		var hi int64
		switch {
		case cuts[k]-lo <= soft:
			// farthest boundary within target
			j := k
			for j+1 < len(cuts) && cuts[j+1]-lo <= soft {
				j++
			}
			hi = cuts[j]
		case cuts[k]-lo <= hard:
			hi = cuts[k] // one taller unit that ends on the next boundary
		default:
			hi = min(lo+soft, cuts[k]) // blocks taller than the limit: plain steps
		}
		b := catalog.Box{Lower: make([]int64, len(shape)), Count: append([]int64(nil), shape...)}
		b.Lower[0], b.Count[0] = lo, hi-lo
		out = append(out, b)
		lo = hi
	}
	return out
}
