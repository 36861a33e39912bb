package rewriter

import (
	"context"
	"encoding/hex"
	"fmt"
	"hash"
	"time"

	"relayout/catalog"
	"relayout/planner"
)

// encodedChunksOut is a chunked dataset whose chunks are compressed, or
// sparse (chunks no block touches take no bytes): the worker that
// assembled a unit cuts it into chunks and encodes them (encodeChunk), the
// ordered put appends them to the shard's part file and records where, and
// JoinParts writes them into the file (H5Dwrite_chunk) once the shards are
// done. A unit is charged twice: its buffer and its encoded chunks.
type encodedChunksOut struct {
	d *Dataset

	e       *engine
	a       *catalog.Array
	grid    []int64
	touched map[int64]struct{} // chunks some block touches; nil: all
	h       hash.Hash          // a sparse dataset's digest over its stored chunks (open's digest)
}

// A sparse dataset (Dataset.Sparse) keeps units of its own, over its
// touched chunks alone: it joins no band of other datasets, whose units
// walk every row.
func (t *encodedChunksOut) traits() targetTraits {
	if t.d.Sparse {
		return targetTraits{encoded: true, readBack: readBackNone, storedChunks: true}
	}
	step := int64(1)
	if len(t.d.Chunk) > 0 && t.d.Chunk[0] > 0 {
		step = t.d.Chunk[0]
	}
	return targetTraits{encoded: true, readBack: readBackNone, bandStep: step, bandCut: true}
}

// units are the group's bands where they fit, else whole chunk rows that
// fit the budget (Options.arrayUnits); a sparse dataset's, its touched
// chunks (planner.SparseUnits), nothing over its holes.
func (t *encodedChunksOut) units(a *catalog.Array, _ contigTarget, g jointGrain, opts Options) ([]catalog.Box, []int, bool, error) {
	if err := opts.checkChunkBudget(t.d.Chunk, a.DType.Size); err != nil {
		return nil, nil, false, err
	}
	if t.d.Sparse {
		// a unit is charged twice: its buffer and the chunks cut from it
		return planner.SparseUnits(a.Shape, t.d.Chunk, a.DType.Size, blockBoxes(a), opts.Limits.UnitTarget/2), nil, false, nil
	}
	// a unit is charged twice: its buffer and the chunks cut from it
	if boxes := g.units(a, opts.Limits.JoinLimit/2, opts); boxes != nil {
		return boxes, nil, false, nil
	}
	boxes, split, err := opts.arrayUnits(a, planner.Layout{Kind: planner.Chunked, Chunk: t.d.Chunk})
	return boxes, nil, split, err
}

func (t *encodedChunksOut) within(_ *Unit, shape []int64) (catalog.Box, error) {
	return wholeShape(shape), nil
}

func (t *encodedChunksOut) open(_ context.Context, e *engine, a *catalog.Array, digest bool) error {
	if err := e.opts.checkChunkBudget(t.d.Chunk, a.DType.Size); err != nil {
		return err
	}
	if _, err := e.partOut(); err != nil {
		return err
	}
	t.e, t.a = e, a
	t.touched, t.grid = touchedChunks(a, t.d.Chunk), chunkGrid(a.Shape, t.d.Chunk)
	if digest && t.d.Sparse {
		t.h = e.opts.Digest.New()
	}
	return nil
}

func (t *encodedChunksOut) prep(slab catalog.Box, buf []byte) (unitOut, error) {
	var o unitOut
	chunk := t.d.Chunk
	if slab.Lower[0]%chunk[0] != 0 {
		return o, fmt.Errorf("unit %v not aligned to chunk %v", slab, chunk) // planner bug
	}
	err := cutChunks(buf, slab, t.a.Shape, chunk, t.a.DType.Size, func(off []int64, data []byte) error {
		if _, ok := t.touched[chunkIndex(off, chunk, t.grid)]; t.touched != nil && !ok {
			return nil
		}
		enc, err := encodeChunk(data, t.a.DType.Size, t.d.Deflate)
		o.chunks = append(o.chunks, chunkOut{append([]int64(nil), off...), enc})
		return err
	})
	return o, err
}

func (t *encodedChunksOut) put(_ *Unit, slab catalog.Box, buf []byte, o unitOut, rec *UnitRecord) error {
	e, mon := t.e, t.e.opts.Monitor
	for _, c := range o.chunks {
		tw := time.Now()
		if _, err := writeAt(e.partFile, c.data, e.partEnd); err != nil {
			return err
		}
		if mon != nil {
			mon.wrote(len(c.data), tw)
		}
		if t.h != nil { // units and their chunks come in row-major order of the grid
			hashStoredChunk(t.h, buf, slab, t.a.Shape, t.d.Chunk, c.off, int64(t.a.DType.Size))
		}
		rec.Chunks = append(rec.Chunks, chunkRef{Offset: c.off, Pos: e.partEnd, Len: int64(len(c.data))})
		e.partEnd += int64(len(c.data))
		rec.Written += int64(len(c.data))
	}
	if e.syncEach {
		e.dirty[e.partFile] = true
	}
	return nil
}

// finish returns a sparse dataset's digest over its stored chunks
// (catalog.DigestStoredChunks), else "".
func (t *encodedChunksOut) finish() (string, error) {
	if t.h == nil {
		return "", nil
	}
	return hex.EncodeToString(t.h.Sum(nil)), nil
}

// hashStoredChunk writes to h the chunk at offset off of an array of
// shape in chunks of chunk (catalog.HashStoredChunk), from buf, the
// row-major bytes of slab, which holds it.
func hashStoredChunk(h hash.Hash, buf []byte, slab catalog.Box, shape, chunk, off []int64, size int64) {
	c := catalog.Box{Lower: off, Count: make([]int64, len(off))}
	for d := range off {
		c.Count[d] = min(chunk[d], shape[d]-off[d])
	}
	catalog.HashStoredChunk(h, buf, slab, c, size)
}

func (t *encodedChunksOut) close() {}
