package planner

import (
	"math"
)

// AutoChunk is the chunked layout of an array whose chunk shape nobody
// gave (--compress without --layout: HDF5 filters apply to chunks only, so
// a compressed output is chunked, and relayout picks the chunks itself as
// h5repack and nccopy do): the auto layout's chunks for the readers and
// cost parameters when the cost model chooses chunks, otherwise a
// cube-ish chunk of about 1 MiB (AutoWith's own candidate) clipped to the
// shape, which for a small array is the whole array as one chunk. Scalars
// and empty arrays stay contiguous (HDF5 cannot chunk them).
func AutoChunk(shape []int64, elemSize int, readers int, cp CostParams) (Layout, string) {
	if len(shape) == 0 || isEmpty(shape) {
		return Layout{Kind: Contiguous}, "scalar or empty array: always contiguous"
	}
	if l, why := AutoWith(shape, elemSize, max(readers, 1), nil, cp); l.Kind == Chunked {
		return l, "chunks of the auto layout: " + why
	}
	side := int64(math.Floor(math.Pow(float64(1<<20)/float64(max(elemSize, 1)), 1/float64(len(shape)))))
	chunk := make([]int64, len(shape))
	for i := range chunk {
		chunk[i] = max(1, min(side, shape[i]))
	}
	return Layout{Kind: Chunked, Chunk: chunk}, "chunks of about 1 MiB (the auto layout would be contiguous, which HDF5 cannot compress)"
}
