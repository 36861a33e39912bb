package planner

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"relayout/catalog"
)

// A sparse array is a partly covered one whose holes dwarf its data: a
// netCDF-4 variable over a dimension of 2^40 with one chunk written, a BP
// global array declared far larger than the blocks its writers put. Its
// chunked hole layout (HoleLayout) already stores only the touched chunks;
// what changes is everything that would otherwise walk its logical extent:
//
//	logical extent (2^40 elements)
//	+--+--+--+--+--+--+-- ... --+--+
//	|##|  |  |  |  |  |   ...   |  |   ## touched: a unit, written, hashed
//	+--+--+--+--+--+--+-- ... --+--+   blank: no unit, no row, no byte
//
// Its work units are the touched chunks (SparseUnits), not slabs over
// every row. Its digest is over the stored chunks
// (catalog.DigestStoredChunks: each chunk's offset and elements, in
// row-major order of the chunk grid), not over the logical array's bytes,
// of which hashing 8 TiB of fill values would take hours. The space it
// needs is its touched chunks' bytes (SparseBytes, job's space check).
//
// An ordinary partly covered array (fine/Ez of holes.go's table: 18%
// covered) keeps the logical digest and the ordinary units: SparseMinBytes
// and SparseRatio keep the new path to arrays where the old one cannot
// run at all, so that every manifest that could be written before still
// says the same.

// SparseMinBytes (logical bytes) and SparseRatio (logical bytes per stored
// byte, at least) make a partly covered array sparse.
const (
	SparseMinBytes = 1 << 30
	SparseRatio    = 64
)

// sparse reports whether an array of logical bytes whose touched chunks
// store stored bytes is sparse (above).
func sparse(logical, stored int64) bool {
	return logical >= SparseMinBytes && stored <= logical/SparseRatio
}

// SparseUnits cuts a sparse array of shape, chunked in chunk (elements of
// size bytes), into work units over the chunks boxes touch, and nothing
// else: runs of touched chunks consecutive along the last axis of the
// chunk grid, each at most budget bytes (at least one chunk), in row-major
// order of the grid. Time and memory are in proportion to the touched
// chunks, whatever the shape.
func SparseUnits(shape, chunk []int64, size int, boxes []catalog.Box, budget int64) []catalog.Box {
	rank := len(shape)
	if rank == 0 {
		return nil
	}
	grid := make([]int64, rank)
	for d := range rank {
		grid[d] = (shape[d] + chunk[d] - 1) / chunk[d]
	}
	last := rank - 1
	chunkBytes := product(chunk) * int64(max(size, 1))
	perUnit := max(budget/max(chunkBytes, 1), 1) // chunks per unit along the last axis
	keys := slices.Sorted(maps.Keys(TouchedChunks(shape, chunk, boxes)))
	var out []catalog.Box
	for i := 0; i < len(keys); {
		j := i + 1 // keys[i:j] one run: consecutive, in one row of the grid, within the budget
		for j < len(keys) && keys[j] == keys[j-1]+1 && keys[j]/grid[last] == keys[i]/grid[last] && int64(j-i) < perUnit {
			j++
		}
		b := catalog.Box{Lower: make([]int64, rank), Count: make([]int64, rank)}
		k := keys[i]
		for d := last; d >= 0; d-- {
			b.Lower[d] = k % grid[d] * chunk[d]
			b.Count[d] = min(chunk[d], shape[d]-b.Lower[d])
			k /= grid[d]
		}
		b.Count[last] = min(int64(j-i)*chunk[last], shape[last]-b.Lower[last])
		out = append(out, b)
		i = j
	}
	return out
}

// SparseBytes is the bytes array a stores when written sparse (its
// touched chunks, whole) where asked contiguous without --fill: ok is
// false when a is not sparse (HoleLayout decides).
func SparseBytes(a *catalog.Array) (n int64, ok bool) {
	l := HoleLayout(a, Layout{Kind: Contiguous})
	if !l.Sparse {
		return 0, false
	}
	return touchedChunkCount(a.Shape, l.Chunk, blockBoxes(a)) * product(l.Chunk) * int64(a.DType.Size), true
}

// sparseChunked is chunked layout l of partly covered array a, marked
// Sparse with a note when a is sparse in l's chunks.
func sparseChunked(a *catalog.Array, l Layout) Layout {
	size := int64(max(a.DType.Size, 1))
	stored := touchedChunkCount(a.Shape, l.Chunk, blockBoxes(a)) * product(l.Chunk) * size
	if !sparse(a.Elements()*size, stored) {
		return l
	}
	l.Sparse = true
	l.Note = strings.TrimPrefix(l.Note+"; ", "; ") + fmt.Sprintf("sparse (its %d blocks touch %s of chunks of %s): "+
		"only those chunks are written, its digest is over the stored chunks (digest_of)", len(a.Blocks), byteSize(stored), dimsString(a.Shape))
	return l
}
