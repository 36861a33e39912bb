package catalog

import (
	"cmp"
	"context"
	"runtime"
	"sync"
	"unsafe"

	"golang.org/x/sync/errgroup"
)

// blockCache keeps the most recently decoded block lists of a Store, up to
// limit bytes (Store.KeepBlocks). One run reads each array's blocks in
// several phases (the layout check, the work units, the rewrite, the
// verifier): decoding a block list costs about half a microsecond a block,
// 0.6 s of CPU for the four passes over 351,537 blocks. The lists are
// shared, never copied: the caller of Array must not modify the blocks
// (their capacity ends at their length, so an append copies).
type blockCache struct {
	mu      sync.Mutex
	limit   int64
	bytes   int64
	entries []cachedBlocks // least recently used first
}

type cachedBlocks struct {
	k      Key
	blocks []Block
	bytes  int64
}

// KeepBlocks keeps up to limit bytes of decoded block lists for Array and
// EachArray (0: none, the default).
func (s *Store) KeepBlocks(limit int64) {
	s.cache.mu.Lock()
	defer s.cache.mu.Unlock()
	s.cache.limit = limit
	s.cache.evict()
}

// get returns the cached blocks of k (and marks them used).
func (c *blockCache) get(k Key) ([]Block, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, e := range c.entries {
		if e.k == k {
			copy(c.entries[i:], c.entries[i+1:])
			c.entries[len(c.entries)-1] = e
			return e.blocks, true
		}
	}
	return nil, false
}

// put caches the blocks of k, evicting the least recently used beyond the
// limit; a list larger than the limit is not kept.
func (c *blockCache) put(k Key, blocks []Block) {
	n := blocksBytes(blocks)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.drop(k) // two readers decoded it at once
	if n > c.limit {
		return
	}
	c.entries = append(c.entries, cachedBlocks{k: k, blocks: blocks[:len(blocks):len(blocks)], bytes: n})
	c.bytes += n
	c.evict()
}

// drop forgets k. The caller holds mu.
func (c *blockCache) drop(k Key) {
	for i, e := range c.entries {
		if e.k == k {
			c.bytes -= e.bytes
			c.entries = append(c.entries[:i], c.entries[i+1:]...)
			return
		}
	}
}

func (c *blockCache) evict() {
	for c.bytes > c.limit && len(c.entries) > 0 {
		c.bytes -= c.entries[0].bytes
		c.entries[0] = cachedBlocks{}
		c.entries = c.entries[1:]
	}
}

// blocksBytes is the memory a decoded block list holds: the blocks, their
// integer lists and inline bytes (codecs are shared between blocks).
func blocksBytes(blocks []Block) int64 {
	n := int64(len(blocks)) * int64(unsafe.Sizeof(Block{}))
	for i := range blocks {
		b := &blocks[i]
		n += 8*int64(len(b.Box.Lower)+len(b.Box.Count)+len(b.Stored)+len(b.StoredLower)) + int64(len(b.Inline))
	}
	return n
}

// Preload decodes block lists into the kept ones (KeepBlocks), up to jobs
// at once (0: GOMAXPROCS), array after array in catalog order while they
// are not full, so that a run's first pass over its arrays (the layout
// check, one array after the other) finds them decoded. Nothing without
// KeepBlocks.
func (s *Store) Preload(ctx context.Context, jobs int) error {
	s.cache.mu.Lock()
	limit := s.cache.limit
	s.cache.mu.Unlock()
	if limit <= 0 {
		return nil
	}
	keys, err := s.keys(ctx, "")
	if err != nil {
		return err
	}
	eg, gctx := errgroup.WithContext(ctx)
	eg.SetLimit(cmp.Or(max(jobs, 0), runtime.GOMAXPROCS(0)))
	full := func() bool {
		s.cache.mu.Lock()
		defer s.cache.mu.Unlock()
		return s.cache.bytes >= limit
	}
	for _, k := range keys {
		if full() || gctx.Err() != nil {
			break
		}
		eg.Go(func() error {
			if full() { // while this one waited for its turn
				return nil
			}
			_, err := s.array(k, true)
			return err
		})
	}
	return eg.Wait()
}
