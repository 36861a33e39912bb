package catalog

import (
	"sync"
	"unsafe"
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
// EachArray (0: none, the default), and of the lists Put stores while they
// fit (set it before the build to have a run's arrays kept as stored).
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

// keep keeps a copy of the blocks Put stores for k while the kept lists
// have room (KeepBlocks): the arrays a build stores in catalog order are
// then kept in that order without being decoded again, the first pass of
// a run over its arrays (the layout check) finding them. The copy puts
// every block's integer lists in one allocation, as decodeBlocks does.
func (c *blockCache) keep(k Key, blocks []Block) {
	n := blocksBytes(blocks)
	c.mu.Lock()
	room := c.limit > 0 && c.bytes+n <= c.limit
	c.mu.Unlock()
	if !room {
		return
	}
	kept := cloneBlocks(blocks)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.bytes+n <= c.limit {
		c.drop(k)
		c.entries = append(c.entries, cachedBlocks{k: k, blocks: kept, bytes: n})
		c.bytes += n
	}
}

// cloneBlocks copies blocks as decodeBlocks would return them: integer
// lists in one arena (Box's never nil, Stored and StoredLower nil when
// nil), each list's capacity its length; file names, codecs and inline
// bytes shared (never modified).
func cloneBlocks(blocks []Block) []Block {
	ints := 0
	for i := range blocks {
		b := &blocks[i]
		ints += len(b.Box.Lower) + len(b.Box.Count) + len(b.Stored) + len(b.StoredLower)
	}
	arena := make([]int64, 0, ints)
	take := func(v []int64, keepNil bool) []int64 {
		if v == nil && keepNil {
			return nil
		}
		at := len(arena)
		arena = append(arena, v...)
		return arena[at:len(arena):len(arena)]
	}
	out := make([]Block, len(blocks))
	for i := range blocks {
		b := blocks[i]
		b.Box.Lower, b.Box.Count = take(b.Box.Lower, false), take(b.Box.Count, false)
		b.Stored, b.StoredLower = take(b.Stored, true), take(b.StoredLower, true)
		out[i] = b
	}
	return out
}
