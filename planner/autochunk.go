package planner

import (
	"slices"
)

// AutoChunk is the chunked layout of an array whose chunk shape nobody
// gave (--compress without --layout: HDF5 filters apply to chunks only, so
// a compressed output is chunked, and relayout picks the chunks itself as
// h5repack and nccopy do): the auto layout's chunks for the readers and
// cost parameters when the cost model chooses chunks; otherwise the whole
// array, its longest axis halved (rounding up; the first of equals) until
// a chunk holds at most AutoChunkBytes, so that a small array is one chunk
// and power-of-two shapes are cut evenly. Scalars and empty arrays stay
// contiguous (HDF5 cannot chunk them).
func AutoChunk(shape []int64, elemSize int, readers int, cp CostParams) (Layout, string) {
	if len(shape) == 0 || isEmpty(shape) {
		return Layout{Kind: Contiguous}, "scalar or empty array: always contiguous"
	}
	if l, why := AutoWith(shape, elemSize, max(readers, 1), nil, cp); l.Kind == Chunked {
		return l, "the auto layout's chunks: " + why
	}
	chunk := slices.Clone(shape)
	bytes := func() int64 {
		n := int64(max(elemSize, 1))
		for _, c := range chunk {
			n *= c
		}
		return n
	}
	for bytes() > AutoChunkBytes {
		k := 0
		for i, c := range chunk {
			if c > chunk[k] {
				k = i
			}
		}
		if chunk[k] == 1 {
			break
		}
		chunk[k] = (chunk[k] + 1) / 2
	}
	return Layout{Kind: Chunked, Chunk: chunk}, "chunks of at most 1 MiB: the auto layout would be contiguous, which HDF5 cannot compress"
}

// AutoChunkBytes bounds AutoChunk's own chunks (HDF5's default chunk cache
// is 1 MiB per dataset).
const AutoChunkBytes = 1 << 20
