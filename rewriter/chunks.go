package rewriter

import "relayout/catalog"

// cutChunks calls fn for every chunk of a chunked dataset of the given shape
// inside slab (cut on chunk boundaries, as planner.Slabs and units make it),
// in row-major chunk order, with the element offset of its first element.
// data is the whole chunk, row-major, zero-padded where the chunk passes
// the array's edge; it is reused between calls (fn must not keep it).
func cutChunks(buf []byte, slab catalog.Box, shape, chunk []int64, size int, fn func(offset []int64, data []byte) error) error {
	scratch := make([]byte, product(chunk)*int64(size))
	sv := view{origin: slab.Lower, strides: rowMajorStrides(slab.Count)}
	cstrides := rowMajorStrides(chunk)
	return eachChunk(slab, chunk, func(c []int64) error {
		off := make([]int64, len(c))
		for d := range c {
			off[d] = c[d] * chunk[d]
		}
		region, _ := catalog.Box{Lower: off, Count: chunk}.Intersect(slab)
		if region.Elements() != product(chunk) {
			clear(scratch)
		}
		copyRegion(scratch, view{origin: off, strides: cstrides}, buf, sv, region, size, false)
		return fn(off, scratch)
	})
}
