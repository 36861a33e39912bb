package catalog

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"
)

// Reading blocks: one interface, what a source can do as data.
//
// Every consumer of input bytes (the rewriter's assembly, the verifier, the
// commit's read-back, the read benchmark) reads through Source.ReadBlocks:
// one call hands over a list of blocks and everything about how to read
// them (their element types, where their bytes should land, the most a
// coalesced request may hold, a clock for the time spent waiting on
// storage); the source hands back each block's decoded bytes. What differs
// between sources is data, Caps, never an optional interface a consumer
// type-asserts:
//
//	consumer ──ReadBlocks(ctx, Reads{Blocks, DTypes, Into, Limit, Timer}, fn)──► Source
//	    ▲                                                                      │
//	    └─────────────── fn(i, decoded bytes of Blocks[i]) ◄─────────────────────┘
//
//	Caps{Coalesces}: neighbouring extents of a file are read with one request
//	                 (a consumer gains from handing many sorted blocks a call,
//	                 and charges a run of Limit bytes to its budget)
//	Caps{Places}:    some blocks are placed element by element through maps the
//	                 input stores (Placement hands them over as stored)
//
// Nothing travels in the context but cancellation: a third party that wants
// to see the blocks read (the verifier's tap) wraps the Source.

// Source hands out the bytes of a dataset's blocks. Implementations are
// safe for concurrent use.
type Source interface {
	// ReadBlocks reads r.Blocks and calls fn with each block's index and
	// decoded bytes (see Block), in an unspecified order (a coalescing
	// source reads them in file order: sort them by file and offset for
	// the fewest requests). The bytes are read-only and valid only until
	// fn returns, unless they are r.Into[i]: they may share memory with
	// other blocks of the same request, and the request's buffer is
	// reused. The first error of a read or of fn stops the call and is
	// returned.
	ReadBlocks(ctx context.Context, r Reads, fn func(i int, data []byte) error) error
	// Prefetch asks the operating system to start reading blocks the
	// caller will ask for soon (posix_fadvise WILLNEED), so that storage
	// has several requests in flight while the caller works. It does not
	// wait for the data and never fails: a hint, which a source may ignore.
	Prefetch(ctx context.Context, blocks []*Block)
	// Placement returns block b's parts as the input stores them, when the
	// input places b's elements through maps (Caps.Places); nil and no
	// error for every other block.
	Placement(ctx context.Context, b *Block, dt DType) (*Placement, error)
	// Caps is what the source can do beyond reading blocks one by one.
	Caps() Caps
	// IOStats counts the reads the source issued; the counters only grow,
	// callers take differences.
	IOStats() IOCounters
}

// Reads is one ReadBlocks call: the blocks and how to read them.
type Reads struct {
	// Blocks to read; sorted by file and offset for the fewest requests.
	Blocks []*Block
	// DTypes are the element types of the blocks' arrays: DTypes[i] for
	// Blocks[i], or a single entry for every block (the blocks of one
	// array). A codec's output may depend on it (shuffle's element size).
	DTypes []DType
	// Into, when not nil, gives for each block where its decoded bytes go
	// (nil entries: the source's buffer): len(Into[i]) is the block's
	// decoded size, and fn then gets Into[i]. A source that can, reads or
	// decodes straight into it (a raw block's pread; SCORPIO's scatter);
	// the others copy.
	Into [][]byte
	// Limit is the most bytes one coalesced request may hold (the caller
	// charged that much to its memory budget); 0: the source's own limit.
	Limit int64
	// Timer, when not nil, has the nanoseconds the call spends waiting on
	// storage added to it (atomically): a caller that splits its time
	// between fetching and its own per-block work takes one clock reading
	// per request this way, not two per block (on 351,537 blocks of 4³,
	// per-block clock readings cost more than the copies they timed).
	Timer *int64
}

// DType is the element type of block i.
func (r *Reads) DType(i int) DType {
	if len(r.DTypes) == 1 {
		return r.DTypes[0]
	}
	return r.DTypes[i]
}

// Dst is where block i's decoded bytes go, nil: the source's buffer.
func (r *Reads) Dst(i int) []byte {
	if r.Into == nil {
		return nil
	}
	return r.Into[i]
}

// Check refuses a call whose lists do not match its blocks.
func (r *Reads) Check() error {
	if len(r.DTypes) != 1 && len(r.DTypes) != len(r.Blocks) {
		return fmt.Errorf("catalog: %d element types for %d blocks", len(r.DTypes), len(r.Blocks))
	}
	if r.Into != nil && len(r.Into) != len(r.Blocks) {
		return fmt.Errorf("catalog: %d destinations for %d blocks", len(r.Into), len(r.Blocks))
	}
	return nil
}

// StartRead is what a Source calls as one read of storage begins (a pread,
// an H5Dread of a block only the HDF5 library decodes); the func it returns,
// called when the read ends, adds its duration to r.Timer, if any.
func (r *Reads) StartRead() (done func()) { return startRead(r.Timer) }

func startRead(ns *int64) func() {
	if ns == nil {
		return func() {}
	}
	start := time.Now()
	return func() { atomic.AddInt64(ns, int64(time.Since(start))) }
}

// Caps is what a Source can do beyond reading blocks one at a time.
type Caps struct {
	// Coalesces: neighbouring extents of one file (at most CoalesceGap
	// apart) are read with one request of at most Reads.Limit bytes, so a
	// read may hold that much beside the blocks' own bytes.
	Coalesces bool
	// Places: some blocks are placed element by element through maps the
	// input stores (Placement returns them as stored).
	Places bool
}

// Placement is a placed block as the input stores it: element j of part g
// (Parts[g], decoded, dt.Size bytes an element in the block's byte order)
// goes to the flat row-major index Maps[g][j] of the block's box
// (Box.Count). The maps are as stored: 1-based with 0 for a pad, or
// 0-based with -1 for a pad, which they do not say; a part may hold fewer
// elements than its map has entries when the missing ones are pads. Places
// no entry reaches hold Fill. SCORPIO's decompositions are such maps: a
// frame of a distributed variable is its I/O groups' data blocks,
// scattered; a verifier places the elements by its own reading of the
// maps instead of trusting ReadBlocks'.
//
// Parts and maps are blocks of Source, read with its ReadBlocks like any
// other (coalesced, each from the read's own buffer): a consumer holds no
// copy of a block's parts, and reads the maps only when it has not kept
// its own reading of them (Map names them).
type Placement struct {
	Source Source
	Parts  []*Block // of the placed block's element type
	Maps   []*Block // one per part: integers of MapType
	// MapType is the maps' element type (a signed or unsigned integer).
	MapType DType
	Fill    []byte
	// Map names the maps: the same for every block they place (a
	// verifier reads them once), "" when unnamed.
	Map string
}

// ReadBlock reads one block through src; the bytes are the caller's.
func ReadBlock(ctx context.Context, src Source, b *Block, dt DType) ([]byte, error) {
	var out []byte
	err := src.ReadBlocks(ctx, Reads{Blocks: []*Block{b}, DTypes: []DType{dt}}, func(_ int, data []byte) error {
		out = append([]byte(nil), data...)
		return nil
	})
	return out, err
}

// ReadEach is ReadBlocks for a source that reads one block at a time:
// read returns block b's decoded bytes, into dst when dst is not nil (and
// then returns dst) or else in a buffer the call may keep until fn returns.
// It checks r, honours r.Into (copying what read did not put there) and
// stops at the first error or at ctx's end.
func ReadEach(ctx context.Context, r Reads, read func(b *Block, dt DType, dst []byte) ([]byte, error), fn func(i int, data []byte) error) error {
	if err := r.Check(); err != nil {
		return err
	}
	for i, b := range r.Blocks {
		if err := ctx.Err(); err != nil {
			return err
		}
		dst := r.Dst(i)
		data, err := read(b, r.DType(i), dst)
		if err != nil {
			return err
		}
		if dst != nil && (len(data) == 0 || &data[0] != &dst[0]) {
			if len(data) != len(dst) {
				return Corrupt("", b.File, b.Offset, "block %v: decoded %d bytes, want %d", b.Box, len(data), len(dst))
			}
			copy(dst, data)
			data = dst
		}
		if err := fn(i, data); err != nil {
			return err
		}
	}
	return nil
}

// Plain is the part of a Source that does nothing beyond reading blocks:
// it prefetches nothing, places nothing, coalesces nothing and counts
// nothing. A source that reads one block at a time embeds it and writes
// ReadBlocks with ReadEach (tests' sources do).
type Plain struct{}

// Prefetch implements Source: nothing.
func (Plain) Prefetch(context.Context, []*Block) {}

// Placement implements Source: no block is placed through maps.
func (Plain) Placement(context.Context, *Block, DType) (*Placement, error) { return nil, nil }

// Caps implements Source: none.
func (Plain) Caps() Caps { return Caps{} }

// IOStats implements Source: nothing counted.
func (Plain) IOStats() IOCounters { return IOCounters{} }
