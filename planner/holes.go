package planner

import (
	"fmt"
	"maps"
	"slices"

	"relayout/catalog"
)

// A partly covered array (space no block covers: a variable written for
// part of its domain, a level-0 array of an AMR code that leaves holes)
// asked for, or chosen, contiguous would store its whole shape, most of it
// fill values. Unless the user asks for dense output (--fill), it is
// written chunked instead, and the chunks no block touches are never
// allocated: holes cost no bytes and read back as the dataset's fill value
// (HDF5 returns it for unallocated chunks).
//
//	array (shape), contiguous asked          chunked, chunks of the blocks
//	+--------------------------------+       +--+--+--+--+--+--+--+--+
//	|          +----+----+           |       |  |  |##|##|  |  |  |  |  ## stored: touched
//	|     +----+    |    +----+      |  ==>  +--+--+--+--+--+--+--+--+     by a block
//	|     |    +----+----+    |      |       |  |##|##|##|##|##|  |  |
//	|     +----+         +----+      |       +--+--+--+--+--+--+--+--+  (blank: never
//	+--------------------------------+       |  |  |  |  |  |  |  |  |   written, reads
//	                                         +--+--+--+--+--+--+--+--+   as the fill value)
//
// The chunk shape is a refined level's (levelChunk over the blocks' boxes:
// the typical block, bounded by the blocks' alignment, at most
// LevelChunkBytes), then doubled along its smallest edge (the last of
// equals) while the chunks the blocks touch store at most HoleWaste (1/16)
// more than the blocks cover, or, while a chunk is smaller than
// HoleSmallChunk (64 KiB), at most HoleSmallWaste (1/4) more, and a chunk
// stays within LevelChunkBytes: tiny blocks do not make tiny chunks, which
// cost HDF5 an index entry and a request each.
//
// Measured on bp_gen.py's fine/Ez (256³ f8 in 8³ blocks, 18% covered, 24.2
// MB covered; a default run of that variable alone, then h5py reads of the
// whole array, a plane and a line, page cache dropped):
//
//	layout                     file      run      whole   plane   line
//	contiguous, holes filled   134.2 MB  2.5-3 s  0.14 s  0.13 s  0.0004 s
//	merged (virtual dataset)    26.1 MB  2.9 s    0.54 s  0.10 s  0.0145 s
//	chunked 8³                  24.5 MB  2.0 s    0.46 s  0.06 s  0.0023 s
//	chunked 16³ (the rule)      29.9 MB  1.1 s    0.19 s  0.04 s  0.0017 s
//	chunked 32³                 42.0 MB  1.1 s    0.21 s  0.06 s  0.0070 s
//
// The merged layout, which stores no holes either, loses on every count
// (4,041 writes of 5.8 KiB): the chunks are the default.

// HoleWaste bounds what HoleLayout's chunk growth may store beyond the
// blocks' bytes, as a fraction of them (1/16); HoleSmallWaste (1/4) while
// the chunk is smaller than HoleSmallChunk.
const (
	HoleWaste      = 1.0 / 16
	HoleSmallWaste = 1.0 / 4
	HoleSmallChunk = 64 << 10
)

// HoleLayout is the layout of array a, with its blocks, given the layout l
// chosen for it: l itself unless l is contiguous and a is partly covered
// (not a scalar, not empty, not a constant record), else a chunked layout by
// the rule above with a Note saying why (for the log and the manifest). A
// chunked l (asked) keeps its chunks, but is marked Sparse, with a note,
// when a is sparse in them (sparse.go): its holes are unallocated anyway.
func HoleLayout(a *catalog.Array, l Layout) Layout {
	switch {
	case l.Kind == Chunked && !l.Sparse && a.Bytes() >= SparseMinBytes && !a.Constant && !FullyCovered(a):
		return sparseChunked(a, l)
	case l.Kind != Contiguous:
		return l
	}
	return holeLayout(a, l, FullyCovered(a))
}

// holeLayout is HoleLayout with FullyCovered(a) known (full).
func holeLayout(a *catalog.Array, l Layout, full bool) Layout {
	rank := len(a.Shape)
	if l.Kind != Contiguous || a.Constant || rank == 0 || isEmpty(a.Shape) || full {
		return l
	}
	boxes := make([]catalog.Box, 0, len(a.Blocks))
	for i := range a.Blocks {
		if b := a.Blocks[i].Box; len(b.Count) == rank && b.Elements() > 0 {
			boxes = append(boxes, b)
		}
	}
	size := int64(max(a.DType.Size, 1))
	covered := coveredElements(a.Shape, boxes)
	chunk := levelChunk(a.Shape, a.DType.Size, boxes)
	stored := touchedChunkCount(a.Shape, chunk, boxes) * product(chunk)
	for len(boxes) > 0 {
		d := -1
		for k := rank - 1; k >= 0; k-- {
			if chunk[k] < a.Shape[k] && (d < 0 || chunk[k] < chunk[d]) {
				d = k
			}
		}
		if d < 0 {
			break
		}
		next := append([]int64(nil), chunk...)
		next[d] = min(2*chunk[d], a.Shape[d])
		if product(next)*size > LevelChunkBytes {
			break
		}
		n := touchedChunkCount(a.Shape, next, boxes) * product(next)
		waste := HoleWaste
		if product(chunk)*size < HoleSmallChunk {
			waste = HoleSmallWaste
		}
		if float64(n) > float64(covered)*(1+waste) {
			break
		}
		chunk, stored = next, n
	}
	pct := 100 * float64(covered) / float64(max(a.Elements(), 1))
	note := fmt.Sprintf("partly covered (its %d blocks cover %.1f%% of %s): chunked %s instead of contiguous, "+
		"only the chunks the blocks touch are stored (%s), holes read as the fill value (--fill writes them dense)",
		len(boxes), pct, dimsString(a.Shape), dimsString(chunk), byteSize(stored*size))
	sp := sparse(a.Elements()*size, stored*size)
	if sp {
		note += "; sparse: its digest is over the stored chunks (digest_of)"
	}
	return Layout{Kind: Chunked, Chunk: chunk, Note: note, Sparse: sp}
}

// blockBoxes is the boxes of a's blocks.
func blockBoxes(a *catalog.Array) []catalog.Box {
	bs := make([]catalog.Box, len(a.Blocks))
	for i := range a.Blocks {
		bs[i] = a.Blocks[i].Box
	}
	return bs
}

// coveredElements is the number of elements of the union of boxes (inside
// an array of shape).
func coveredElements(shape []int64, boxes []catalog.Box) int64 {
	if n, ok := coveredCells(shape, boxes); ok {
		return n
	}
	if _, _, ok := Disjoint(boxes); ok {
		var n int64
		for _, b := range boxes {
			n += b.Elements()
		}
		return n
	}
	return UnionVolume(boxes)
}

// touchedChunkCount is the number of chunks of the grid of shape cut in
// chunk that some box overlaps.
// HoleLayout counts them for every chunk shape it tries: in a bitmap over
// the chunk grid when that has at most maxCoverCells chunks (a set
// otherwise), which costs a bit per chunk, not a map entry.
func touchedChunkCount(shape, chunk []int64, boxes []catalog.Box) int64 {
	cells := int64(1)
	for d := range shape {
		g := (shape[d] + chunk[d] - 1) / chunk[d]
		if g > 0 && cells > maxCoverCells/g {
			return int64(len(TouchedChunks(shape, chunk, boxes)))
		}
		cells *= g
	}
	bits := make([]uint64, (cells+63)/64)
	var n int64
	eachTouchedChunk(shape, chunk, boxes, func(k int64) {
		if w, m := k/64, uint64(1)<<(k%64); bits[w]&m == 0 {
			bits[w] |= m
			n++
		}
	})
	return n
}

// SparseChunkedStorage is the array stored in chunks of the given shape of
// which only those some box touches exist (a partly covered array: HDF5
// allocates no chunk nobody writes, and a reader reads none).
func SparseChunkedStorage(shape, chunk []int64, boxes []catalog.Box) Storage {
	rank := len(shape)
	grid := make([]int64, rank)
	for d := range rank {
		grid[d] = (shape[d] + chunk[d] - 1) / chunk[d]
	}
	keys := TouchedChunks(shape, chunk, boxes)
	cs := make([]catalog.Box, 0, len(keys))
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		b := catalog.Box{Lower: make([]int64, rank), Count: make([]int64, rank)}
		for d := rank - 1; d >= 0; d-- {
			b.Lower[d] = k % grid[d] * chunk[d]
			b.Count[d] = min(chunk[d], shape[d]-b.Lower[d])
			k /= grid[d]
		}
		cs = append(cs, b)
	}
	return PiecesStorage(Chunked+" "+dimsString(chunk)+" (touched chunks)", shape, cs, true)
}

// TouchedChunks is the set of row-major indices of the chunks of the grid
// of shape cut in chunk that some box overlaps (parts outside the array
// ignored).
func TouchedChunks(shape, chunk []int64, boxes []catalog.Box) map[int64]struct{} {
	seen := map[int64]struct{}{}
	eachTouchedChunk(shape, chunk, boxes, func(k int64) { seen[k] = struct{}{} })
	return seen
}

// eachTouchedChunk calls fn with the row-major index of every chunk of the
// grid of shape cut in chunk that a box overlaps, once per box overlapping
// it.
func eachTouchedChunk(shape, chunk []int64, boxes []catalog.Box, fn func(k int64)) {
	rank := len(shape)
	grid := make([]int64, rank)
	for d := range rank {
		grid[d] = (shape[d] + chunk[d] - 1) / chunk[d]
	}
	lo, hi := make([]int64, rank), make([]int64, rank)
boxes:
	for _, b := range boxes {
		for d := range rank {
			// clipped to the array in elements first: a box empty or
			// outside it touches nothing (-1/chunk is 0 in Go)
			l, h := max(b.Lower[d], 0), min(b.Lower[d]+b.Count[d]-1, shape[d]-1)
			if h < l {
				continue boxes
			}
			lo[d], hi[d] = l/chunk[d], h/chunk[d]
		}
		eachCell(lo, hi, grid, fn)
	}
}

// eachCell calls fn with the row-major index in grid of every cell of the
// box of cells [lo, hi] (inclusive), in row-major order.
func eachCell(lo, hi, grid []int64, fn func(k int64)) {
	var buf [MaxDims]int64 // the common ranks walk without an allocation per box
	at := buf[:0]
	if len(lo) > MaxDims {
		at = make([]int64, 0, len(lo))
	}
	at = append(at, lo...)
	for {
		var k int64
		for d := range at {
			k = k*grid[d] + at[d]
		}
		fn(k)
		d := len(at) - 1
		for ; d >= 0; d-- {
			if at[d]++; at[d] <= hi[d] {
				break
			}
			at[d] = lo[d]
		}
		if d < 0 {
			return
		}
	}
}

// byteSize is n bytes for a note: "24.5 MB".
func byteSize(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.1f GB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.1f kB", float64(n)/1e3)
	}
	return fmt.Sprintf("%d bytes", n)
}

// maxCoverCells bounds a cellGrid's bitmap (2 MiB).
const maxCoverCells = 1 << 24

// coveredCells is the number of elements of the union of boxes inside an
// array of shape, counted exactly on their cellGrid. ok is false, and the
// caller falls back on box geometry (Disjoint, UnionVolume), when a box
// leaves the array, the grid would have more than maxCoverCells cells, or
// the boxes overlap so much that marking them would cost more than four
// passes over the grid. Linear in the cells the boxes hold.
func coveredCells(shape []int64, boxes []catalog.Box) (n int64, ok bool) {
	return coveredCellsOf(shape, boxes, ownBox)
}

// coveredCellsOf is coveredCells over the boxes of items (box(&items[i])),
// which it does not copy: FullyCovered asks it of every array's blocks.
func coveredCellsOf[T any](shape []int64, items []T, box func(*T) *catalog.Box) (n int64, ok bool) {
	rank := len(shape)
	if rank == 0 {
		return 0, false
	}
	for i := range items {
		b := box(&items[i])
		if len(b.Lower) != rank || len(b.Count) != rank {
			return 0, false
		}
		if !IsEmpty(*b) {
			for d := range rank {
				if b.Lower[d] < 0 || b.Lower[d]+b.Count[d] > shape[d] {
					return 0, false
				}
			}
		}
	}
	g, ok := newCellGridOf(make([]int64, rank), shape, items, box)
	if !ok {
		return 0, false
	}
	set, _, ok := markOf(g, items, box, 4*g.cells+int64(len(items)), false)
	if !ok {
		return 0, false
	}
	return set * product(g.cell), true
}

// ownBox and blockBox are the box accessors of a list of boxes and of
// blocks.
func ownBox(b *catalog.Box) *catalog.Box     { return b }
func blockBox(b *catalog.Block) *catalog.Box { return &b.Box }

// cellGrid is the coarsest regular grid over [origin, origin+extent) on
// which each of a set of boxes is a whole number of cells: along each axis
// the cell edge is the greatest common divisor of the extent and of every
// box's corner (from origin) and count. Blocks of a regular decomposition,
// AMR boxes on a blocking factor and load-balanced tiles have a grid of about
// a cell per block, whatever their number: marking cells in a bitmap then
// answers union and overlap questions in one pass over the blocks.
type cellGrid struct {
	origin, cell, dims []int64
	cells              int64 // product of dims, at most maxCoverCells
}

// newCellGrid is the cellGrid of boxes, which must lie inside [origin,
// origin+extent) (empty ones are ignored). ok is false when the grid would
// have more than maxCoverCells cells.
func newCellGrid(origin, extent []int64, boxes []catalog.Box) (g cellGrid, ok bool) {
	return newCellGridOf(origin, extent, boxes, ownBox)
}

// newCellGridOf is newCellGrid over the boxes of items.
func newCellGridOf[T any](origin, extent []int64, items []T, box func(*T) *catalog.Box) (g cellGrid, ok bool) {
	rank := len(extent)
	g = cellGrid{origin: origin, cell: slices.Clone(extent), dims: make([]int64, rank), cells: 1}
	for i := range items {
		b := box(&items[i])
		if IsEmpty(*b) {
			continue
		}
		for d := range rank {
			g.cell[d] = gcd(gcd(g.cell[d], b.Lower[d]-origin[d]), b.Count[d])
		}
	}
	for d := range rank {
		if g.cell[d] <= 0 {
			return g, false
		}
		g.dims[d] = extent[d] / g.cell[d]
		if g.cells *= g.dims[d]; g.cells > maxCoverCells {
			return g, false
		}
	}
	return g, true
}

// mark sets the cells of every non-empty box in a bitmap and returns how
// many distinct cells it set and whether a box met a cell set before (two
// boxes overlap). It visits at most budget cells (ok false beyond) and
// stops at the first shared cell when stopShared is set.
func (g cellGrid) mark(boxes []catalog.Box, budget int64, stopShared bool) (set int64, shared, ok bool) {
	return markOf(g, boxes, ownBox, budget, stopShared)
}

// markOf is mark over the boxes of items.
func markOf[T any](g cellGrid, items []T, box func(*T) *catalog.Box, budget int64, stopShared bool) (set int64, shared, ok bool) {
	rank := len(g.dims)
	bits := make([]uint64, (g.cells+63)/64)
	var buf [2 * MaxDims]int64 // the common ranks mark without an allocation per box
	lohi := buf[:0]
	if rank > MaxDims {
		lohi = make([]int64, 0, 2*rank)
	}
	lohi = lohi[:2*rank]
	lo, hi := lohi[:rank], lohi[rank:]
	for i := range items {
		b := box(&items[i])
		if IsEmpty(*b) {
			continue
		}
		vol := int64(1)
		for d := range rank {
			lo[d] = (b.Lower[d] - g.origin[d]) / g.cell[d]
			hi[d] = (b.Lower[d]+b.Count[d]-g.origin[d])/g.cell[d] - 1
			vol *= hi[d] - lo[d] + 1
		}
		if budget -= vol; budget < 0 {
			return set, shared, false
		}
		eachCell(lo, hi, g.dims, func(k int64) {
			if w, m := k/64, uint64(1)<<(k%64); bits[w]&m == 0 {
				bits[w] |= m
				set++
			} else {
				shared = true
			}
		})
		if shared && stopShared {
			return set, true, true
		}
	}
	return set, shared, true
}

// disjointOnGrid reports whether the cellGrid of bs proves them pairwise
// disjoint: no cell marked twice. false means they overlap or the grid does
// not apply (too fine for the number of boxes, mixed ranks); the k-d search
// then decides. The grid is used only when it has at most 64 cells a box, so
// that the answer costs time in proportion to the boxes, not to their volume.
func disjointOnGrid(bs []catalog.Box, idx []int) bool {
	rank := len(bs[idx[0]].Lower)
	lo, hi := slices.Clone(bs[idx[0]].Lower), Upper(bs[idx[0]])
	for _, k := range idx {
		b := bs[k]
		if len(b.Lower) != rank || len(b.Count) != rank {
			return false
		}
		for d := range rank {
			lo[d] = min(lo[d], b.Lower[d])
			hi[d] = max(hi[d], b.Lower[d]+b.Count[d])
		}
	}
	extent := make([]int64, rank)
	for d := range rank {
		extent[d] = hi[d] - lo[d]
	}
	g, ok := newCellGrid(lo, extent, bs)
	if !ok || g.cells > 64*int64(len(idx)) {
		return false
	}
	_, shared, ok := g.mark(bs, g.cells, true)
	return ok && !shared
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
