package blockio

import (
	"context"
	"fmt"
	"sync"

	"relayout/catalog"
)

// Coalescing limits: neighbouring extents of one file separated by at most
// catalog.CoalesceGap bytes are fetched by one pread of at most maxRun bytes
// (catalog.Runs). The gap bytes are read and dropped; 64 KiB costs less than
// a second request on any disk or parallel file system, while 16 MiB runs
// keep memory per request bounded.
const maxRun = 16 << 20

// ReadBlocks implements catalog.BatchSource: blocks (sorted by file and
// offset for best effect) are grouped into runs of neighbouring extents, each
// run read with one pread, and every block decoded from its slice of the run.
//
// A read limit in ctx (catalog.WithReadLimit) lowers the run size below
// maxRun, so that a caller's memory budget bounds every run.
func (s *Source) ReadBlocks(ctx context.Context, blocks []*catalog.Block, dt catalog.DType, fn func(i int, data []byte) error) error {
	return s.readBlocks(ctx, blocks, func(int) catalog.DType { return dt }, fn)
}

// ReadBlocksMixed implements catalog.MixedBatchSource: ReadBlocks for
// blocks of several arrays, blocks[i] of element type dts[i].
func (s *Source) ReadBlocksMixed(ctx context.Context, blocks []*catalog.Block, dts []catalog.DType, fn func(i int, data []byte) error) error {
	if len(dts) != len(blocks) {
		return fmt.Errorf("blockio: %d element types for %d blocks", len(dts), len(blocks))
	}
	return s.readBlocks(ctx, blocks, func(i int) catalog.DType { return dts[i] }, fn)
}

func (s *Source) readBlocks(ctx context.Context, blocks []*catalog.Block, dt func(i int) catalog.DType, fn func(i int, data []byte) error) error {
	limit := int64(maxRun)
	if l := catalog.ReadLimit(ctx); l > 0 {
		limit = min(limit, l)
	}
	// ctx's tap sees every block before fn does (ReadBlock taps those
	// read on their own).
	var tap catalog.TapBatch
	if t := catalog.TapOf(ctx); t != nil {
		tap = t.Batch()
		defer tap.Close()
	}
	return catalog.Runs(blocks, limit, func(i, j int, start, end int64) error {
		if start == end { // inline bytes or no extent
			data, err := s.ReadBlock(ctx, blocks[i], dt(i))
			if err == nil {
				err = fn(i, data)
			}
			return err
		}
		// A run of one block too goes through a reused buffer: blocks cut
		// by the caller's units arrive as many small extents apart.
		run := getRun(end-start, limit)
		defer putRun(run) // fn is done with every block's bytes
		if err := s.files.ReadAtInto(ctx, blocks[i].File, start, run); err != nil {
			return err
		}
		for k := i; k < j; k++ {
			data, err := s.decode(blocks[k], dt(k), run[blocks[k].Offset-start:blocks[k].Offset-start+blocks[k].Length])
			if err == nil {
				if tap != nil {
					tap.Block(blocks[k], dt(k), data)
				}
				err = fn(k, data)
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
}

// Run buffers are reused: a run of coalesced reads is garbage as soon as fn
// has seen its blocks, and a fresh 16 MiB allocation per run makes the
// garbage collector, not the caller's budget, set the process's memory. A
// sync.Pool is emptied by every collection, which these allocations
// themselves trigger (on a 1 GiB rewrite, 1 MiB runs were allocated and
// zeroed anew ~1,000 times), so idle buffers are kept on a free list of
// at most keptRunBytes instead.
const keptRunBytes = 64 << 20

var runs struct {
	sync.Mutex
	free  [][]byte
	bytes int64
}

// getRun returns a buffer of n bytes: a kept one whose capacity is n to 2n,
// or a new one with the capacity of the next power of two (at most limit,
// the most any run of the caller needs), so that runs of varied lengths
// reuse it.
func getRun(n, limit int64) []byte {
	runs.Lock()
	for i, b := range runs.free {
		if c := int64(cap(b)); c >= n && c <= 2*n {
			last := len(runs.free) - 1
			runs.free[i] = runs.free[last]
			runs.free = runs.free[:last]
			runs.bytes -= c
			runs.Unlock()
			return b[:n]
		}
	}
	runs.Unlock()
	c := int64(1)
	for c < n {
		c <<= 1
	}
	return make([]byte, n, max(n, min(c, limit)))
}

// putRun keeps b for reuse while the free list holds less than
// keptRunBytes; smaller buffers make room for a larger one.
func putRun(b []byte) {
	c := int64(cap(b))
	runs.Lock()
	defer runs.Unlock()
	for runs.bytes+c > keptRunBytes && len(runs.free) > 0 {
		k := 0 // drop the smallest kept buffer
		for i, f := range runs.free {
			if cap(f) < cap(runs.free[k]) {
				k = i
			}
		}
		if cap(runs.free[k]) >= cap(b) {
			return // b is the smallest: drop b
		}
		runs.bytes -= int64(cap(runs.free[k]))
		runs.free[k] = runs.free[len(runs.free)-1]
		runs.free = runs.free[:len(runs.free)-1]
	}
	if c <= keptRunBytes {
		runs.free = append(runs.free, b)
		runs.bytes += c
	}
}
