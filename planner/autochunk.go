package planner

import (
	"slices"
)

// AutoChunk is the chunked layout of an array (of the block grain grain,
// to which its chunks are aligned: alignChunk) whose chunk shape nobody
// gave (--compress without --layout: HDF5 filters apply to chunks only, so
// a compressed output is chunked, and relayout picks the chunks itself as
// h5repack and nccopy do): the auto layout's chunks for the readers and
// cost parameters when the cost model chooses chunks; otherwise the whole
// array, its longest axis halved (rounding up; the first of equals) until
// a chunk holds at most AutoChunkBytes, so that a small array is one chunk
// and power-of-two shapes are cut evenly. Scalars and empty arrays stay
// contiguous (HDF5 cannot chunk them).
func AutoChunk(shape []int64, elemSize int, grain []int64, readers int, cp CostParams) (Layout, string) {
	if len(shape) == 0 || isEmpty(shape) {
		return Layout{Kind: Contiguous}, "scalar or empty array: always contiguous"
	}
	if l, why := AutoWith(shape, elemSize, grain, max(readers, 1), nil, cp); l.Kind == Chunked {
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
	alignChunk(chunk, shape, grain)
	return Layout{Kind: Chunked, Chunk: chunk}, "chunks of at most 1 MiB (or a block's edge): the auto layout would be contiguous, which HDF5 cannot compress"
}

// alignChunk makes each edge of chunk that cuts its axis a multiple of
// the blocks' grain along it (catalog.Array.BlockGrain): the largest
// multiple not above it, at least one grain; axes the grain does not cut
// (0, 1, or the whole axis) are left as they are. A chunk of whole blocks
// is assembled from whole blocks, and the rows of chunks end where the
// blocks' rows do: the variables interleaved in a sub-file are then read
// in one pass, every byte once. Cut across the blocks, each row of blocks
// a chunk row boundary crossed was read again for the next: auto's 50^3
// chunks of float64 read 1.33x the stored bytes of issue 19's BP4 input
// (448^3 in 32^3 blocks) and 1.10x of the openPMD series (384^3 in 8^3),
// there in 135,258 reads of 11 KiB against 3,068 of 452 KiB for 48^3
// (run --no-verify 3.21 s against 2.67 s).
func alignChunk(chunk, shape, grain []int64) {
	if len(grain) != len(chunk) {
		return
	}
	for d, g := range grain {
		if g > 1 && g < shape[d] && chunk[d] < shape[d] {
			chunk[d] = min(max(g, chunk[d]/g*g), shape[d])
		}
	}
}

// AutoChunkBytes bounds AutoChunk's own chunks (HDF5's default chunk cache
// is 1 MiB per dataset).
const AutoChunkBytes = 1 << 20
