package rewriter

import (
	"hash"

	"relayout/catalog"
)

// Digests gathered band by band.
//
// A dataset's digest (sha256, blake3 or xxh64: Plan.Digest) is that of its logical
// array in row-major order, taken in the pipeline from each unit as it is
// written when the units are row-major runs of the array. Boxes of chunks
// split below a chunk row (units) and cuboids' pieces are not, but they come band by
// band: consecutive units spanning the same rows of dimension 0 that
// together hold the band's every other index, the bands in row order.
//
//	array  |t0 t1 t2|   band 0: units t0..t2 copied into the band buffer,
//	       |t3 t4 t5|   hashed in row-major order once t2 arrives
//
// The hasher copies each unit into one band buffer at its place and hashes
// the band once its last unit is in. That costs a copy of the array's
// bytes from memory, where their digest would otherwise need a second pass
// over the input that read, decoded and assembled them again; the buffer,
// the largest band, is charged to the memory budget for the pipeline's
// length (engine.bandLeft bounds what a pipeline's bands may hold).
// Contiguous tiles (planner.AlignedTiles) are read back from the written
// file instead (readbackBytes): a pread from the page cache costs what the
// copy does, and a band of 448^3 float64 is 51 MB. Which datasets get a
// band digest is engine.digestSite's choice.
type bandDigest struct {
	size  int
	bands []catalog.Box // in row order
	of    []int         // band of each unit; unit i completes its band when the next is of another
	bytes int64         // of the largest band: the buffer
	buf   []byte
}

// newBandDigest is the band-by-band digest of units (in order) of an array
// of shape and element size, or nil when they do not come band by band.
func newBandDigest(shape []int64, size int, units []catalog.Box) *bandDigest {
	rank := len(shape)
	if rank < 2 || len(units) == 0 {
		return nil
	}
	bd := &bandDigest{size: size, of: make([]int, len(units))}
	var next, have int64 // the row the next band starts at; elements of the current band so far
	for i, u := range units {
		if len(u.Lower) != rank || len(u.Count) != rank {
			return nil
		}
		n := len(bd.bands)
		if n == 0 || u.Lower[0] != bd.bands[n-1].Lower[0] || u.Count[0] != bd.bands[n-1].Count[0] {
			if n > 0 && have != bd.bands[n-1].Elements() {
				return nil // the previous band is not complete
			}
			if u.Lower[0] != next || u.Count[0] <= 0 {
				return nil
			}
			b := catalog.Box{Lower: make([]int64, rank), Count: append([]int64(nil), shape...)}
			b.Lower[0], b.Count[0] = u.Lower[0], u.Count[0]
			bd.bands = append(bd.bands, b)
			bd.bytes = max(bd.bytes, b.Elements()*int64(size))
			next, have = u.Lower[0]+u.Count[0], 0
			n++
		}
		if !inside(u, bd.bands[n-1]) {
			return nil
		}
		have += u.Elements()
		if have > bd.bands[n-1].Elements() {
			return nil // units overlap
		}
		bd.of[i] = n - 1
	}
	if have != bd.bands[len(bd.bands)-1].Elements() || next != shape[0] {
		return nil
	}
	return bd
}

// add copies unit i (box, its bytes data) into the band buffer and hashes
// the band into h when the unit completes it.
func (bd *bandDigest) add(h hash.Hash, i int, box catalog.Box, data []byte) {
	band := bd.bands[bd.of[i]]
	n := band.Elements() * int64(bd.size)
	copyRegion(bd.buf[:n], view{band.Lower, rowMajorStrides(band.Count)}, data, view{box.Lower, rowMajorStrides(box.Count)}, box, bd.size, false)
	if i == len(bd.of)-1 || bd.of[i+1] != bd.of[i] {
		h.Write(bd.buf[:n])
	}
}
