package blockio

import (
	"context"
	"sync"

	"relayout/catalog"
)

// Coalescing limits: neighbouring extents of one file separated by at most
// catalog.CoalesceGap bytes are fetched by one pread of at most maxRun bytes
// (catalog.Runs). The gap bytes are read and dropped; 64 KiB costs less than
// a second request on any disk or parallel file system, while 16 MiB runs
// keep memory per request bounded.
const maxRun = 16 << 20

// ReadBlocks implements catalog.Source: blocks (sorted by file and offset
// for best effect) are grouped into runs of neighbouring extents, each run
// read with one pread of at most r.Limit (else maxRun) bytes, and every
// block decoded from its slice of the run. A raw block with a destination
// (r.Into) is read straight into it with a pread of its own: no run buffer,
// no copy.
func (s *Source) ReadBlocks(ctx context.Context, r catalog.Reads, fn func(i int, data []byte) error) error {
	if err := r.Check(); err != nil {
		return err
	}
	limit := int64(maxRun)
	if r.Limit > 0 {
		limit = min(limit, r.Limit)
	}
	blocks, idx := r.Blocks, []int(nil) // blocks[k] is r.Blocks[idx[k]] (nil idx: k)
	if r.Into != nil {
		blocks, idx = nil, []int{}
		for i, b := range r.Blocks {
			dst := r.Into[i]
			if dst == nil || len(b.Codecs) != 0 || b.Inline() != nil || b.Length != int64(len(dst)) {
				blocks, idx = append(blocks, b), append(idx, i)
				continue
			}
			if err := s.files.readAtTimed(ctx, b.File, b.Offset, dst, r.Timer); err != nil {
				return err
			}
			if err := fn(i, dst); err != nil {
				return err
			}
		}
	}
	at := func(k int) int {
		if idx == nil {
			return k
		}
		return idx[k]
	}
	// deliver hands block k its decoded bytes, copied to its destination
	// when it has one.
	deliver := func(k int, data []byte) error {
		i := at(k)
		if dst := r.Dst(i); dst != nil {
			if len(data) != len(dst) {
				b := blocks[k]
				return catalog.Corrupt("blockio", b.File, b.Offset, "block %v: decoded %d bytes, want %d", b.Box, len(data), len(dst))
			}
			copy(dst, data)
			data = dst
		}
		return fn(i, data)
	}
	return catalog.Runs(blocks, limit, func(i, j int, start, end int64) error {
		if start == end { // inline bytes or no extent
			data, err := s.readAlone(ctx, blocks[i], r.DType(at(i)), r.Timer)
			if err == nil {
				err = deliver(i, data)
			}
			return err
		}
		// A run of one block too goes through a reused buffer: blocks cut
		// by the caller's units arrive as many small extents apart.
		run := getRun(end-start, limit)
		defer putRun(run) // fn is done with every block's bytes
		if err := s.files.readAtTimed(ctx, blocks[i].File, start, run, r.Timer); err != nil {
			return err
		}
		for k := i; k < j; k++ {
			data, err := s.decode(blocks[k], r.DType(at(k)), run[blocks[k].Offset-start:blocks[k].Offset-start+blocks[k].Length])
			if err == nil {
				err = deliver(k, data)
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
