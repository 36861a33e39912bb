package planner

import (
	"fmt"
	"math/bits"
	"slices"

	"relayout/catalog"
)

// A refined AMR level (catalog.Array.Level > 0 with its Boxes) spans the
// level-0 domain refined by the cumulative ratio (the openPMD mesh-refinement extension:
// "the refined level must cover the previous level in extent and store
// multiple patches through its chunking mechanism"), and its boxes cover
// only part of it. It is therefore always written chunked, whatever layout
// was asked for level 0: a contiguous dataset would allocate the whole
// refined domain, while chunks that no box touches are never allocated
// (they cost nothing and read as the fill value).
//
//	level domain (shape)                 chunks (c0 x c1)
//	+-----------------------------+      +--+--+--+--+--+--+--+--+
//	|   +-----+                   |      |  |##|##|  |  |  |  |  |   ## allocated:
//	|   | box |      +--------+   |      +--+--+--+--+--+--+--+--+      touched by a box
//	|   +-----+      |  box   |   |      |  |##|##|  |##|##|##|  |
//	|                +--------+   |      +--+--+--+--+--+--+--+--+      (blank: never
//	+-----------------------------+      |  |  |  |  |##|##|##|  |       written)
//	                                     +--+--+--+--+--+--+--+--+
//
// The chunk edge along each dimension is a power of two near the typical
// box: the largest power of two not above the median box extent (p),
// bounded by the largest power of two to which every box corner and extent
// is aligned (g) when g >= 8, so that aligned boxes map to whole chunks
// (AMReX and Chombo boxes sit on multiples of a blocking factor); then
// bounded by a requested chunk
// shape, clipped to the shape, and halved along the longest edge while a
// chunk holds more than LevelChunkBytes.

// LevelChunkBytes bounds the size of a refined level's chunk.
const LevelChunkBytes = 1 << 20

// LevelLayout is the layout of array a given the layout l chosen for it
// (from the user's request or the cost model): l itself for anything but a
// refined level with its box table (Level > 0, or an openPMD input's
// "<record>_lvl<N>" record, catalog.MeshLevel; Boxes set: what the readers
// emit), else a chunked layout by the rule above with a Note saying
// why (for the log and the manifest).
func LevelLayout(a *catalog.Array, l Layout) Layout {
	rank := len(a.Shape)
	level := a.Level
	if level == 0 {
		level = catalog.MeshLevel(a.Var) // an openPMD input's "rho_lvl1"
	}
	if level <= 0 || len(a.Boxes) == 0 || a.Constant || rank == 0 || isEmpty(a.Shape) {
		return l
	}
	boxes := a.Boxes
	chunk := levelChunk(a.Shape, a.DType.Size, boxes)
	if l.Kind == Chunked && len(l.Chunk) == rank {
		for d := range chunk {
			chunk[d] = max(1, min(chunk[d], l.Chunk[d]))
		}
	}
	asked := l.Kind
	if l.Kind == Chunked {
		asked += " " + dimsString(l.Chunk)
	}
	note := fmt.Sprintf("refined level %d: chunked %s whatever the layout (%s asked): the level spans the whole refined domain %s "+
		"and only the chunks its %d boxes touch are stored (openPMD mesh refinement)",
		level, dimsString(chunk), asked, dimsString(a.Shape), len(boxes))
	return Layout{Kind: Chunked, Chunk: chunk, Note: note}
}

// levelChunk is the chunk shape of a level of the given shape and boxes.
func levelChunk(shape []int64, elemSize int, boxes []catalog.Box) []int64 {
	rank := len(shape)
	chunk := make([]int64, rank)
	for d := range rank {
		var ext []int64
		align := uint(62)
		for _, b := range boxes {
			if len(b.Count) != rank || len(b.Lower) != rank || b.Count[d] <= 0 {
				continue
			}
			ext = append(ext, b.Count[d])
			align = min(align, trailingZeros(b.Lower[d]), trailingZeros(b.Count[d]))
		}
		if len(ext) == 0 {
			// No boxes: a cube-ish chunk of LevelChunkBytes at most.
			chunk[d] = floorPow2(shape[d])
			continue
		}
		slices.Sort(ext)
		p := floorPow2(ext[len(ext)/2])
		c := p
		if g := int64(1) << align; g >= 8 {
			c = min(p, g)
		}
		chunk[d] = c
	}
	for d := range chunk {
		chunk[d] = max(1, min(chunk[d], shape[d]))
	}
	for bytes := product(chunk) * int64(max(elemSize, 1)); bytes > LevelChunkBytes; bytes = product(chunk) * int64(max(elemSize, 1)) {
		d := 0
		for k := range chunk {
			if chunk[k] > chunk[d] {
				d = k
			}
		}
		if chunk[d] == 1 {
			break
		}
		chunk[d] = (chunk[d] + 1) / 2
	}
	return chunk
}

// floorPow2 is the largest power of two not above n (1 for n < 1).
func floorPow2(n int64) int64 {
	if n < 1 {
		return 1
	}
	return int64(1) << (63 - bits.LeadingZeros64(uint64(n)))
}

// trailingZeros is the exponent of the largest power of two dividing v (62
// for 0, which every power divides).
func trailingZeros(v int64) uint {
	if v == 0 {
		return 62
	}
	if v < 0 {
		v = -v
	}
	return uint(min(bits.TrailingZeros64(uint64(v)), 62))
}

func product(v []int64) int64 {
	n := int64(1)
	for _, x := range v {
		n *= x
	}
	return n
}
