package verify

import (
	"context"
	"sync"
	"time"

	"relayout/catalog"
	"relayout/internal/membudget"
)

// Fetching input blocks: raw blocks into recycled buffers, blocks that
// span several bands and cannot be read in part kept from their first band
// to their last.

// readInput is the one way the verifier reads its input, whatever the
// path (a band's segments, batch.go; the checksum path's parts, quick.go;
// a block kept across bands or compared alone, fetch below): one
// ReadBlocks call of the run's source, each block's decoded size checked
// against its stored shape before fn sees it, the time spent waiting on
// storage added to the run's fetch time and the rest of the call (decoding,
// fn's placing and comparing) to its compare time. On an error it returns
// the index of the block it was at too (blocks arrive in order: the one
// after the last handed to fn), so that the caller names its array.
func (r *run) readInput(ctx context.Context, rd catalog.Reads, fn func(i int, data []byte) error) (at int, err error) {
	var fetchNs int64
	rd.Timer = &fetchNs
	t0 := time.Now()
	last := -1
	err = r.src.ReadBlocks(ctx, rd, func(i int, data []byte) error {
		last = i
		b, dt := rd.Blocks[i], rd.DType(i)
		want := int64(dt.Size)
		for _, s := range b.StoredShape() {
			want *= s
		}
		if int64(len(data)) != want {
			return catalog.Corrupt("", b.File, b.Offset, "block %v: decoded %d bytes, want %d for stored shape %v of %v",
				b.Box, len(data), want, b.StoredShape(), dt)
		}
		return fn(i, data)
	})
	r.stats.fetchNs.Add(fetchNs)
	r.stats.compareNs.Add(int64(time.Since(t0)) - fetchNs)
	return min(last+1, len(rd.Blocks)-1), err
}

// blockBufs recycles the buffers input blocks are read or placed into,
// whoever reads them (fetch here, placingSource for placed blocks without
// a destination): fresh buffers for every block kept the page-fault
// handler and the zeroing of new memory busy, and a SCORPIO frame is 58 MB.
var blockBufs sync.Pool

// fetch reads one block's decoded bytes (readInput), which the caller
// keeps, into a recycled buffer: a raw block's pread and a placed block's
// placement (SCORPIO's frames, placed element by element) land there,
// other blocks are decoded and copied there, never into a buffer of their
// own first. The caller gives it back with recycle once done.
func (r *run) fetch(ctx context.Context, b *catalog.Block, dt catalog.DType, p placement) ([]byte, error) {
	want := p.storedBytes()
	rd := catalog.Reads{Blocks: []*catalog.Block{b}, DTypes: []catalog.DType{dt}}
	var data []byte
	if bp, _ := blockBufs.Get().(*[]byte); bp != nil && int64(cap(*bp)) >= want {
		data = (*bp)[:want]
	} else {
		data = make([]byte, want)
	}
	rd.Into = [][]byte{data}
	_, err := r.readInput(ctx, rd, func(_ int, d []byte) error {
		data = d // Into[0]: the reads hand it over
		return nil
	})
	if err != nil {
		recycle(rd.Into[0])
		return nil, err
	}
	return data, nil
}

// recycle gives a block's buffer back for later reads.
func recycle(b []byte) {
	if cap(b) > 0 {
		blockBufs.Put(&b)
	}
}

// blockCache keeps blocks that span several bands and cannot be read in
// part (compressed, column-major) from their first band to their last.
type blockCache struct {
	mu      sync.Mutex
	entries map[int]*cached
}

type cached struct {
	once  sync.Once
	data  []byte
	p     placement
	err   error
	left  int // bands still to use it
	bytes int64
}

func (c *blockCache) get(ctx context.Context, r *run, a *catalog.Array, i, span int, mem *membudget.Budget) ([]byte, placement, error) {
	c.mu.Lock()
	e := c.entries[i]
	if e == nil {
		e = &cached{left: span}
		c.entries[i] = e
	}
	c.mu.Unlock()
	e.once.Do(func() {
		b := &a.Blocks[i]
		e.p = newPlacement(b, a.DType)
		n := e.p.storedBytes()
		if e.err = mem.Acquire(ctx, n); e.err != nil {
			return
		}
		e.data, e.err = r.fetch(ctx, b, a.DType, e.p)
		if e.err != nil {
			mem.Release(n)
			return
		}
		e.bytes = n
		mem.Pin(n)
	})
	if e.err != nil {
		return nil, placement{}, e.err
	}
	return e.data, e.p, nil
}

// done marks one band's use of block i; the last frees it.
func (c *blockCache) done(i int, mem *membudget.Budget) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entries[i]
	if e == nil {
		return
	}
	if e.left--; e.left <= 0 {
		mem.Unpin(e.bytes)
		delete(c.entries, i)
	}
}

// drop frees whatever is left (an array stopped early).
func (c *blockCache) drop(mem *membudget.Budget) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, e := range c.entries {
		mem.Unpin(e.bytes)
		delete(c.entries, i)
	}
}
