package rewriter

import (
	"context"
	"fmt"
	"hash"
	"os"
	"time"

	"relayout/catalog"
	"relayout/planner"
)

// rawChunksOut is a chunked dataset without filters whose chunks Prepare
// allocated (every chunk touched by a block): the worker that assembled a
// unit pwrites each of its chunks at the address the file's chunk index
// lists; for the digest, the chunks are read back chunk row by chunk row
// (hashChunkRows) once units in order have completed the row.
type rawChunksOut struct {
	d *Dataset

	e        *engine
	a        *catalog.Array
	f        *os.File
	grid     []int64
	addrs    []int64 // each chunk's address, in grid order
	zeros    []byte  // padding of edge chunks, only read
	gather   bool    // cut the chunks and write each with one pwrite
	back     *readbackHash
	rowsDone int64 // rows of dimension 0 written whole
}

func (t *rawChunksOut) traits() targetTraits {
	step := int64(1)
	if len(t.d.Chunk) > 0 && t.d.Chunk[0] > 0 {
		step = t.d.Chunk[0]
	}
	grid := chunkGrid(t.d.Shape, t.d.Chunk)
	var plane int64
	if len(grid) > 0 {
		plane = product(grid[1:]) * product(t.d.Chunk[1:]) * int64(t.d.ElemSize)
	}
	return targetTraits{readBack: readBackRows, rowPlane: plane, storedBlocks: int(product(grid)), bandStep: step}
}

// units are about a tile (or one chunk, if larger): assembled, written and
// read back while in the caches (see limits.TileTarget); but whole rows
// aligned on the blocks where these are larger than a tile
// (largeBlockUnits), each block read once.
func (t *rawChunksOut) units(a *catalog.Array, _ contigTarget, _ jointGrain, opts Options) ([]catalog.Box, []int, bool, error) {
	size := a.DType.Size
	if err := opts.checkChunkBudget(t.d.Chunk, size); err != nil {
		return nil, nil, false, err
	}
	layout := planner.Layout{Kind: planner.Chunked, Chunk: t.d.Chunk}
	chunkBytes := product(t.d.Chunk) * int64(size)
	tile := min(max(opts.Limits.TileTarget, chunkBytes), opts.Limits.UnitTarget)
	if rows := largeBlockUnits(a, layout, tile, opts.Limits.UnitTarget, opts.Limits.UnitLimit); rows != nil {
		return rows, nil, false, nil
	}
	boxes, split, err := units(a.Shape, layout, size, tile)
	return boxes, nil, split, err
}

func (t *rawChunksOut) within(_ *Unit, shape []int64) (catalog.Box, error) {
	return wholeShape(shape), nil
}

func (t *rawChunksOut) open(ctx context.Context, e *engine, a *catalog.Array, readBack bool) error {
	chunk, size := t.d.Chunk, int64(a.DType.Size)
	if err := e.opts.checkChunkBudget(chunk, a.DType.Size); err != nil {
		return err
	}
	f, _, err := e.file(t.d)
	if err != nil {
		return err
	}
	t.e, t.a, t.f = e, a, f
	t.grid = chunkGrid(a.Shape, chunk)
	chunkBytes := product(chunk) * size
	if t.addrs, err = allocatedChunks(f, t.d.ObjAddr, t.grid, chunk, chunkBytes); err != nil {
		return err
	}
	if readBack {
		read := func(h hash.Hash, buf []byte, lo, hi int64) error {
			return hashChunkRows(f, h, buf, a.Shape, chunk, size, t.addrs, lo, hi)
		}
		if t.back, err = startReadbackHash(ctx, f, e.mem, e.opts.Limits.ReadLimit, e.opts.Digest, read); err != nil {
			return err
		}
	}
	t.zeros = make([]byte, chunk[len(chunk)-1]*size)
	// Short rows: the kernel's cost per vector entry exceeds a copy, so
	// such chunks are cut (cutChunks) and written with one pwrite each.
	t.gather = chunk[len(chunk)-1]*size < gatherRow && chunkBytes <= gatherChunk
	return nil
}

func (t *rawChunksOut) prep(slab catalog.Box, buf []byte) (unitOut, error) {
	chunk, size, mon := t.d.Chunk, int64(t.a.DType.Size), t.e.opts.Monitor
	if t.gather {
		return unitOut{}, cutChunks(buf, slab, t.a.Shape, chunk, t.a.DType.Size, func(off []int64, data []byte) error {
			tw := time.Now()
			addr := t.addrs[chunkIndex(off, chunk, t.grid)]
			n, err := writeAt(t.f, data, addr)
			if mon != nil {
				mon.wrote(n, tw)
			}
			if err != nil {
				return fmt.Errorf("%s: writing a chunk at %d: %w", t.f.Name(), addr, err)
			}
			return nil
		})
	}
	return unitOut{}, eachChunk(slab, chunk, func(c []int64) error {
		tw := time.Now()
		k := int64(0) // the chunk's index in the grid
		for d := range c {
			k = k*t.grid[d] + c[d]
		}
		n, err := writeChunkFrom(t.f, t.addrs[k], buf, slab, t.a.Shape, chunk, c, size, t.zeros)
		if mon != nil {
			mon.wrote(int(n), tw)
		}
		return err
	})
}

func (t *rawChunksOut) put(_ *Unit, slab catalog.Box, buf []byte, _ unitOut, rec *UnitRecord) error {
	t.e.wroteFile(t.f, len(buf), rec)
	if endsRows(slab, t.a.Shape) { // chunk rows up to this unit's end are all written
		end := slab.Lower[0] + slab.Count[0]
		startWriteback(t.f, 0, 0) // the chunks are spread over the file
		if t.back != nil {
			t.back.add(t.rowsDone, end)
		}
		t.rowsDone = end
	}
	return nil
}

func (t *rawChunksOut) finish() (string, error) {
	if t.back == nil {
		return "", nil
	}
	return t.back.stop()
}

func (t *rawChunksOut) close() {
	if t.back != nil {
		t.back.abort()
	}
}
