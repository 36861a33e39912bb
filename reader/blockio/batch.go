package blockio

import (
	"context"
	"sync"

	"relayout/catalog"
)

// Coalescing limits: neighbouring extents of one file separated by at most
// maxGap bytes are fetched by one pread of at most maxRun bytes. The gap bytes
// are read and dropped; 64 KiB costs less than a second request on any disk
// or parallel file system, while 16 MiB runs keep memory per request bounded.
const (
	maxGap = catalog.CoalesceGap
	maxRun = 16 << 20
)

// ReadBlocks implements catalog.BatchSource: blocks (sorted by file and
// offset for best effect) are grouped into runs of neighbouring extents, each
// run read with one pread, and every block decoded from its slice of the run.
//
// A read limit in ctx (catalog.WithReadLimit) lowers the run size below
// maxRun, so that a caller's memory budget bounds every run.
func (s *Source) ReadBlocks(ctx context.Context, blocks []*catalog.Block, dt catalog.DType, fn func(i int, data []byte) error) error {
	limit := int64(maxRun)
	if l := catalog.ReadLimit(ctx); l > 0 {
		limit = min(limit, l)
	}
	for i := 0; i < len(blocks); {
		b := blocks[i]
		if b.Inline != nil || b.Length <= 0 {
			data, err := s.ReadBlock(ctx, b, dt)
			if err != nil {
				return err
			}
			if err := fn(i, data); err != nil {
				return err
			}
			i++
			continue
		}
		start, end := b.Offset, b.Offset+b.Length
		j := i + 1
		for ; j < len(blocks); j++ {
			n := blocks[j]
			if n.Inline != nil || n.File != b.File || n.Offset < end || n.Offset-end > maxGap ||
				n.Offset+n.Length-start > limit {
				break
			}
			end = n.Offset + n.Length
		}
		// A run of one block too goes through a reused buffer: blocks cut
		// by the caller's units arrive as many small extents apart.
		run := getRun(end-start, limit)
		if err := s.files.ReadAtInto(ctx, b.File, start, run); err != nil {
			putRun(run)
			return err
		}
		for k := i; k < j; k++ {
			data, err := s.decode(blocks[k], dt, run[blocks[k].Offset-start:blocks[k].Offset-start+blocks[k].Length])
			if err == nil {
				err = fn(k, data)
			}
			if err != nil {
				putRun(run)
				return err
			}
		}
		putRun(run) // fn is done with every block's bytes
		i = j
	}
	return nil
}

// Run buffers are reused: a run of coalesced reads is garbage as soon as fn
// has seen its blocks, and a fresh 16 MiB allocation per run makes the
// garbage collector, not the caller's budget, set the process's memory.
var runs sync.Pool // of *[]byte

// getRun returns a buffer of n bytes. A new one gets the capacity of the
// next power of two (at most limit, the most any run of the caller needs),
// so that runs of varied lengths reuse it.
func getRun(n, limit int64) []byte {
	if p, ok := runs.Get().(*[]byte); ok && int64(cap(*p)) >= n && int64(cap(*p)) <= 2*n {
		return (*p)[:n]
	}
	c := int64(1)
	for c < n {
		c <<= 1
	}
	return make([]byte, n, max(n, min(c, limit)))
}

func putRun(b []byte) {
	runs.Put(&b)
}
