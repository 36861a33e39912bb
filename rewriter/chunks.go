package rewriter

import "relayout/catalog"

// cutChunks calls fn for every chunk of a chunked dataset of the given shape
// that starts inside slab (slab being whole chunk rows, as planner.Slabs
// makes them), in row-major chunk order. data is the whole chunk, row-major,
// zero-padded where the chunk passes the array's edge; it is reused between
// calls (fn must not keep it).
func cutChunks(buf []byte, slab catalog.Box, shape, chunk []int64, size int, fn func(offset []int64, data []byte) error) error {
	rank := len(shape)
	scratch := make([]byte, product(chunk)*int64(size))
	sv := view{origin: slab.Lower, strides: rowMajorStrides(slab.Count)}
	cstrides := rowMajorStrides(chunk)
	off := make([]int64, rank)
	copy(off, slab.Lower)
	for {
		cbox := catalog.Box{Lower: off, Count: chunk}
		region, _ := cbox.Intersect(slab)
		if region.Elements() != product(chunk) {
			clear(scratch)
		}
		copyRegion(scratch, view{origin: off, strides: cstrides}, buf, sv, region, size, false)
		if err := fn(append([]int64(nil), off...), scratch); err != nil {
			return err
		}
		d := rank - 1
		for ; d >= 0; d-- {
			off[d] += chunk[d]
			if off[d] < slab.Lower[d]+slab.Count[d] {
				break
			}
			off[d] = slab.Lower[d]
		}
		if d < 0 {
			return nil
		}
	}
}
