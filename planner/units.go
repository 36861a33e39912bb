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

// minTileRun is the shortest contiguous run AlignedTiles accepts: a tile is
// written with one pwrite per row along dimension 0, and shorter writes cost
// more than reading a block in pieces.
const minTileRun = 64 << 10

// AlignedTiles cuts a contiguous array into units that keep every source
// block whole when AlignedSlabs cannot: where a band of rows between
// neighbouring block edges along dimension 0 holds more than limit bytes,
// the band is cut along dimension 1 at the edges of the blocks in it, into
// tiles (the band's rows × a range of dimension 1 × the rest whole) of about
// target bytes, at most limit. Other bands become whole-row units as in
// AlignedSlabs. Units come band by band in row order, tiles of a band by
// dimension 1.
//
// It returns nil when no band needs tiles (AlignedSlabs' units are then
// block-aligned) or when tiles cannot keep blocks whole: a band whose one
// block column exceeds limit, or tiles whose rows (one pwrite each) would be
// shorter than 64 KiB. Tiles are not row-major runs of the array: a digest
// of the array in row-major order must be taken per finished band.
func AlignedTiles(shape []int64, elemSize int, blocks []catalog.Box, target, limit int64) []catalog.Box {
	if len(shape) < 2 || isEmpty(shape) || len(blocks) == 0 {
		return nil
	}
	limit = max(limit, target)
	colBytes := int64(elemSize) * catalog.Box{Count: shape[2:]}.Elements() // one index of dim 1 in one row
	rowBytes := colBytes * shape[1]
	cuts0 := blockEdges(blocks, 0, shape[0], nil)
	var out []catalog.Box
	tiled := false
	for lo, k := int64(0), 0; lo < shape[0]; {
		for cuts0[k] <= lo {
			k++
		}
		j := k // farthest edge within target, else the next one
		for j+1 < len(cuts0) && (cuts0[j+1]-lo)*rowBytes <= target {
			j++
		}
		hi := cuts0[j]
		if (hi-lo)*rowBytes <= limit {
			out = append(out, band(shape, lo, hi, 0, shape[1]))
			lo = hi
			continue
		}
		hi = cuts0[k]
		h := hi - lo
		inBand := func(b catalog.Box) bool { return b.Lower[0] < hi && b.Lower[0]+b.Count[0] > lo }
		cuts1 := blockEdges(blocks, 1, shape[1], inBand)
		for c0, m := int64(0), 0; c0 < shape[1]; {
			for cuts1[m] <= c0 {
				m++
			}
			e := m
			for e+1 < len(cuts1) && h*(cuts1[e+1]-c0)*colBytes <= target {
				e++
			}
			for (cuts1[e]-c0)*colBytes < minTileRun && e+1 < len(cuts1) {
				e++ // rows too short to write: take the next block column too
			}
			c1 := cuts1[e]
			if rest := shape[1] - c1; rest > 0 && rest*colBytes < minTileRun && h*rest*colBytes+h*(c1-c0)*colBytes <= limit {
				c1 = shape[1] // a narrow last column joins this tile
			}
			if h*(c1-c0)*colBytes > limit || (c1-c0)*colBytes < minTileRun && c1-c0 < shape[1] {
				return nil
			}
			out = append(out, band(shape, lo, hi, c0, c1))
			tiled = tiled || c1-c0 < shape[1]
			c0 = c1
		}
		lo = hi
	}
	if !tiled {
		return nil
	}
	return out
}

// band is the unit of rows [lo, hi) and [c0, c1) along dimension 1, the
// other dimensions whole.
func band(shape []int64, lo, hi, c0, c1 int64) catalog.Box {
	b := catalog.Box{Lower: make([]int64, len(shape)), Count: append([]int64(nil), shape...)}
	b.Lower[0], b.Count[0] = lo, hi-lo
	b.Lower[1], b.Count[1] = c0, c1-c0
	return b
}

// blockEdges is the sorted set of the blocks' edges along dimension d inside
// (0, n), and n; keep (nil: all) selects the blocks.
func blockEdges(blocks []catalog.Box, d int, n int64, keep func(catalog.Box) bool) []int64 {
	cuts := []int64{n}
	for _, b := range blocks {
		if len(b.Lower) <= d || len(b.Count) <= d || keep != nil && !keep(b) {
			continue
		}
		for _, e := range [2]int64{b.Lower[d], b.Lower[d] + b.Count[d]} {
			if e > 0 && e < n {
				cuts = append(cuts, e)
			}
		}
	}
	slices.Sort(cuts)
	return slices.Compact(cuts)
}
