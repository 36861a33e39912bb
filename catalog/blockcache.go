package catalog

import (
	"slices"
	"sync"
	"unsafe"
)

// blockCache keeps the first decoded block lists of a Store that fit in
// limit bytes (Store.KeepBlocks). One run reads each array's blocks in
// several passes (the layout check, the work units, the rewrite, the
// verifier), each in catalog order: decoding a block list costs about half
// a microsecond a block, 0.6 s of CPU for the four passes over 351,537
// blocks. Lists that do not fit are not kept and nothing is evicted for
// them: under passes in order over more arrays than fit, least recently
// used eviction kept none that the next pass asked for (a million blocks in
// four arrays, 128 MiB kept: every list decoded in every pass, 0.9 s of
// CPU). The lists are shared, never copied: the caller of Array must not
// modify the blocks (their capacity ends at their length, so an append
// copies).
type blockCache struct {
	mu      sync.Mutex
	limit   int64
	bytes   int64
	entries []cachedBlocks // in the order kept
}

type cachedBlocks struct {
	k      Key
	blocks []Block
	bytes  int64 // the blocks' and the header's (hdrBytes)
	// hdr is the array's header (Blocks nil) as the database gives it
	// back, kept beside its blocks by Put (setHeader): a run's passes
	// clone it instead of querying and decoding the row again.
	hdr      *Array
	hdrBytes int64
}

// header returns a copy of the kept header of k with its kept blocks,
// false when none is kept.
func (c *blockCache) header(k Key) (*Array, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.entries {
		if e.k == k && e.hdr != nil {
			a := cloneHeader(e.hdr)
			a.Blocks = e.blocks
			return a, true
		}
	}
	return nil, false
}

// setHeader keeps a copy of a's header (n bytes) beside the kept blocks
// of k, when they are kept and it fits.
func (c *blockCache) setHeader(k Key, a *Array, n int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range c.entries {
		e := &c.entries[i]
		if e.k == k && e.hdr == nil && c.bytes+n <= c.limit {
			e.hdr = cloneHeader(a)
			e.hdr.Blocks = nil
			e.bytes += n
			e.hdrBytes = n
			c.bytes += n
			return
		}
	}
}

// kept reports whether the blocks of k are kept.
func (c *blockCache) kept(k Key) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.entries {
		if e.k == k {
			return true
		}
	}
	return false
}

// headerBytes is the part of the bytes kept that headers hold.
func (c *blockCache) headerBytes() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	var n int64
	for _, e := range c.entries {
		n += e.hdrBytes
	}
	return n
}

// cloneHeader is a copy of a sharing no memory with it (nil and empty
// slices kept as they are), its blocks the same.
func cloneHeader(a *Array) *Array {
	c := *a
	c.Shape, c.Offset, c.Grain = slices.Clone(a.Shape), slices.Clone(a.Offset), slices.Clone(a.Grain)
	c.Fill, c.Dims = slices.Clone(a.Fill), slices.Clone(a.Dims)
	c.Attrs, c.StepAttrs = cloneAttrs(a.Attrs), cloneAttrs(a.StepAttrs)
	if a.Boxes != nil {
		c.Boxes = make([]Box, len(a.Boxes))
		for i, b := range a.Boxes {
			c.Boxes[i] = Box{Lower: slices.Clone(b.Lower), Count: slices.Clone(b.Count)}
		}
	}
	return &c
}

func cloneAttrs(as []Attr) []Attr {
	if as == nil {
		return nil
	}
	out := make([]Attr, len(as))
	for i, a := range as {
		a.Strings, a.Floats = slices.Clone(a.Strings), slices.Clone(a.Floats)
		a.Ints, a.Uints = slices.Clone(a.Ints), slices.Clone(a.Uints)
		out[i] = a
	}
	return out
}

// KeepBlocks keeps up to limit bytes of decoded block lists for Array and
// EachArray (0: none, the default): the first that fit, those Put stores
// included (set it before the build to have a run's arrays kept as
// stored). A lower limit drops the lists kept last.
func (s *Store) KeepBlocks(limit int64) {
	s.cache.mu.Lock()
	defer s.cache.mu.Unlock()
	s.cache.limit = limit
	for s.cache.bytes > limit && len(s.cache.entries) > 0 {
		last := len(s.cache.entries) - 1
		s.cache.bytes -= s.cache.entries[last].bytes
		s.cache.entries[last] = cachedBlocks{}
		s.cache.entries = s.cache.entries[:last]
	}
}

// KeptBytes is the memory the kept block lists hold (blocksBytes of
// each), with the headers kept beside them: what a caller that charges
// them to its budget subtracts.
func (s *Store) KeptBytes() int64 {
	s.cache.mu.Lock()
	defer s.cache.mu.Unlock()
	return s.cache.bytes
}

// KeptKeys lists the arrays whose block lists are kept, in the order
// kept: Array returns for each the same list (the same blocks, by address)
// for as long as the store is open and KeepBlocks is not lowered.
func (s *Store) KeptKeys() []Key {
	s.cache.mu.Lock()
	defer s.cache.mu.Unlock()
	keys := make([]Key, len(s.cache.entries))
	for i, e := range s.cache.entries {
		keys[i] = e.k
	}
	return keys
}

// get returns the kept blocks of k.
func (c *blockCache) get(k Key) ([]Block, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.entries {
		if e.k == k {
			return e.blocks, true
		}
	}
	return nil, false
}

// put keeps the blocks of k if they fit beside those kept.
func (c *blockCache) put(k Key, blocks []Block) {
	n := blocksBytes(blocks)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.drop(k) // two readers decoded it at once
	c.add(k, blocks[:len(blocks):len(blocks)], n)
}

// add keeps blocks (n bytes) for k if they fit. The caller holds mu.
func (c *blockCache) add(k Key, blocks []Block, n int64) {
	if c.bytes+n <= c.limit {
		c.entries = append(c.entries, cachedBlocks{k: k, blocks: blocks, bytes: n})
		c.bytes += n
	}
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

// blocksBytes is the memory a decoded block list holds, or its copy by
// cloneBlocks: the blocks, their integer lists and extra parts, a count
// equal to the block before's or an extra part shared with it counted once
// (as decodeParts and cloneBlocks share them; codecs are shared between
// blocks and not counted).
func blocksBytes(blocks []Block) int64 {
	n := int64(len(blocks)) * int64(unsafe.Sizeof(Block{}))
	for i := range blocks {
		b := &blocks[i]
		n += 8 * int64(len(b.Box.Lower))
		if !sameCount(blocks, i) {
			n += 8 * int64(len(b.Box.Count))
		}
		if e := b.extra; e != nil && !sameExtra(blocks, i) {
			n += int64(unsafe.Sizeof(*e)) + 8*int64(len(e.stored)+len(e.storedLower)) + int64(len(e.inline))
		}
	}
	return n
}

// sameCount reports whether block i's count equals the block before's
// (which cloneBlocks and decodeParts then share).
func sameCount(blocks []Block, i int) bool {
	return i > 0 && slices.Equal(blocks[i].Box.Count, blocks[i-1].Box.Count)
}

// sameExtra reports whether block i shares the block before's extra part
// (both nil included).
func sameExtra(blocks []Block, i int) bool {
	return i > 0 && blocks[i].extra == blocks[i-1].extra
}

// keep keeps the blocks Put stores for k while the kept lists have room
// (KeepBlocks): the arrays a build stores in catalog order are then kept in
// that order without being decoded again, the first pass of a run over its
// arrays (the layout check) finding them. A compact list is kept as it is
// (the BP readers build their lists in arenas: a copy of 833,480 blocks
// cost 0.4 s of the catalog's 1.5 s, and 114 MiB); any other is copied with
// every block's integer lists in one allocation, as decodeParts does, so
// that what the budget is charged is what the kept list holds.
func (c *blockCache) keep(k Key, blocks []Block) {
	kept, n := blocks[:len(blocks):len(blocks)], blocksBytes(blocks)
	adopt := compact(blocks)
	if adopt {
		n += int64(cap(blocks)-len(blocks)) * int64(unsafe.Sizeof(Block{}))
	}
	c.mu.Lock()
	room := c.limit > 0 && c.bytes+n <= c.limit
	c.mu.Unlock()
	if !room {
		return
	}
	if !adopt {
		kept = cloneBlocks(blocks)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.drop(k)
	c.add(k, kept, n)
}

// compact reports whether blocksBytes counts all the memory of the blocks'
// integer lists and extra parts: every list ends at its capacity (its own
// allocation, or a slice of an arena that other blocks' lists fill), a
// count equal to the block before's is the same memory, and an extra part
// not shared with the block before has its lists at capacity too. (What an
// arena holds past the lists of the blocks kept, a reader's empty blocks,
// is not seen.)
func compact(blocks []Block) bool {
	atCap := func(v []int64) bool { return cap(v) == len(v) }
	for i := range blocks {
		b := &blocks[i]
		if !atCap(b.Box.Lower) {
			return false
		}
		if sameCount(blocks, i) {
			if len(b.Box.Count) > 0 && &b.Box.Count[0] != &blocks[i-1].Box.Count[0] {
				return false
			}
		} else if !atCap(b.Box.Count) {
			return false
		}
		if e := b.extra; e != nil && !sameExtra(blocks, i) && (!atCap(e.stored) || !atCap(e.storedLower) || cap(e.inline) != len(e.inline)) {
			return false
		}
	}
	return true
}

// cloneBlocks copies blocks as decodeParts would return them: integer
// lists in one arena (Box's never nil, Stored and StoredLower nil when nil),
// each list's capacity its length, a count or extra part equal to the block
// before's shared with it; file names, codecs and inline bytes shared (never
// modified).
func cloneBlocks(blocks []Block) []Block {
	// The arena holds what is not shared with the block before (see below).
	ints := 0
	for i := range blocks {
		b := &blocks[i]
		ints += len(b.Box.Lower)
		if !sameCount(blocks, i) {
			ints += len(b.Box.Count)
		}
		if !sameExtra(blocks, i) {
			ints += len(b.Stored()) + len(b.StoredLower())
		}
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
		b.Box.Lower = take(b.Box.Lower, false)
		if sameCount(blocks, i) {
			b.Box.Count = out[i-1].Box.Count
		} else {
			b.Box.Count = take(b.Box.Count, false)
		}
		if sameExtra(blocks, i) {
			b.extra = out[i-1].extra
		} else if b.extra != nil {
			b = b.WithStored(take(b.Stored(), true), take(b.StoredLower(), true))
		}
		out[i] = b
	}
	return out
}
