package catalog

import (
	"cmp"
	"context"
	"slices"
	"sync"
)

// IOCounters counts the read requests a Source issued to the file system.
type IOCounters struct {
	ReadCalls int64 // pread calls
	ReadBytes int64 // bytes they returned (gap bytes of coalesced runs included)
	// Blocks read through the HDF5 library (HDF5LibraryCodec: H5Dread of
	// the chunk's region, the slow path for plugin filters), their decoded
	// bytes and the nanoseconds those reads took (waiting for the library's
	// lock included). Not counted in ReadCalls and ReadBytes: HDF5 issues
	// those reads itself.
	LibraryBlocks int64
	LibraryBytes  int64
	LibraryNanos  int64
}

// IOStats is implemented by Sources that count their reads (every reader
// built on reader/blockio). The counters only grow; callers take differences.
type IOStats interface {
	IOStats() IOCounters
}

// ManifestIO is the I/O profile of a run (Manifest.IO), in the spirit of
// Darshan: bytes and request counts, and the time each pipeline stage took,
// summed over the workers (so stages that run in parallel can add up to more
// than the wall time).
type ManifestIO struct {
	WallSeconds     float64 `json:"wall_seconds"`
	LogicalBytes    int64   `json:"logical_bytes"` // bytes of the arrays rewritten
	ReadBytes       int64   `json:"read_bytes"`
	ReadCalls       int64   `json:"read_calls"`
	WriteBytes      int64   `json:"write_bytes"` // array data; HDF5 metadata not counted
	WriteCalls      int64   `json:"write_calls"`
	MeanReadBytes   int64   `json:"mean_read_bytes"`
	MeanWriteBytes  int64   `json:"mean_write_bytes"`
	FetchSeconds    float64 `json:"fetch_seconds"`    // pread and decode of input blocks
	AssembleSeconds float64 `json:"assemble_seconds"` // copy, byte swap, transpose into output units
	EncodeSeconds   float64 `json:"encode_seconds"`   // cutting chunks, shuffle+deflate
	WriteSeconds    float64 `json:"write_seconds"`    // pwrite and H5Dwrite_chunk
	SyncSeconds     float64 `json:"sync_seconds"`     // fsync of each output file
	MaxMem          int64   `json:"max_mem"`          // the memory budget
	PeakMem         int64   `json:"peak_mem"`         // most of the budget charged at once
	Splits          int64   `json:"splits,omitempty"` // output units split below one row / chunk row to fit the budget
	// Input blocks read through the HDF5 library (plugin filters relayout
	// does not decode natively: the slow path, one H5Dread at a time), their
	// decoded bytes and the seconds those reads took; part of FetchSeconds.
	LibraryReadBlocks  int64   `json:"library_read_blocks,omitempty"`
	LibraryReadBytes   int64   `json:"library_read_bytes,omitempty"`
	LibraryReadSeconds float64 `json:"library_read_seconds,omitempty"`
}

// CoalesceGap is the largest gap between neighbouring extents of one file
// that a BatchSource reads through (one request, gap bytes dropped) rather
// than issuing a second request. Planners use it to predict what a set of
// blocks costs to read.
const CoalesceGap = 64 << 10

// Runs cuts blocks (sorted by file and offset) into the runs a coalescing
// BatchSource reads with one request each: ascending neighbours in one file
// at most CoalesceGap apart, a run at most limit bytes long. fn gets the
// run's blocks [i, j) and its byte range [start, end) in blocks[i].File. A
// block with inline bytes or no extent is a run of its own with start ==
// end. The first error of fn stops the walk and is returned.
func Runs(blocks []*Block, limit int64, fn func(i, j int, start, end int64) error) error {
	for i := 0; i < len(blocks); {
		b := blocks[i]
		if b.Inline != nil || b.Length <= 0 {
			if err := fn(i, i+1, 0, 0); err != nil {
				return err
			}
			i++
			continue
		}
		start, end := b.Offset, b.Offset+b.Length
		j := i + 1
		for ; j < len(blocks); j++ {
			n := blocks[j]
			if n.Inline != nil || n.File != b.File || n.Offset < end || n.Offset-end > CoalesceGap ||
				n.Offset+n.Length-start > limit {
				break
			}
			end = n.Offset + n.Length
		}
		if err := fn(i, j, start, end); err != nil {
			return err
		}
		i = j
	}
	return nil
}

type readLimitKey struct{}

// WithReadLimit asks BatchSources to read at most n bytes per coalesced
// request (the caller charged that much to its memory budget).
func WithReadLimit(ctx context.Context, n int64) context.Context {
	return context.WithValue(ctx, readLimitKey{}, n)
}

// ReadLimit is the limit set by WithReadLimit, or 0.
func ReadLimit(ctx context.Context) int64 {
	n, _ := ctx.Value(readLimitKey{}).(int64)
	return n
}

// RunCache keeps the byte ranges a BatchSource read while one joint item
// is assembled (the units of several arrays whose blocks interleave in the
// same file regions, rewriter/interleave.go): a later read of the same item
// takes from it what an earlier one already read, and reads only the rest.
// It lives as long as the item; the caller charged its bytes to its budget.
// Safe for concurrent use.
type RunCache struct {
	// Alloc and Free, when set, make and give back the cache's buffers
	// (the caller's memory outside the garbage-collected heap); else make.
	Alloc func(n int64) ([]byte, error)
	Free  func([]byte)

	fetch sync.Mutex // one Fetch at a time
	mu    sync.Mutex
	runs  map[string][]cachedRun // by file
	bufs  [][]byte               // from Alloc, given back by Close
	bytes int64
}

// Buf is a buffer of n bytes that lives until Close.
func (c *RunCache) Buf(n int64) ([]byte, error) {
	if c.Alloc == nil {
		return make([]byte, n), nil
	}
	b, err := c.Alloc(n)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.bufs = append(c.bufs, b)
	c.mu.Unlock()
	return b, nil
}

// Close drops what the cache holds and gives its buffers back.
func (c *RunCache) Close() {
	c.mu.Lock()
	bufs := c.bufs
	c.bufs, c.runs, c.bytes = nil, map[string][]cachedRun{}, 0
	c.mu.Unlock()
	if c.Free != nil {
		for _, b := range bufs {
			c.Free(b)
		}
	}
}

type cachedRun struct {
	start int64
	data  []byte
}

// NewRunCache returns an empty cache.
func NewRunCache() *RunCache { return &RunCache{runs: map[string][]cachedRun{}} }

// Fetch makes the cache hold [start, end) of file: the sub-ranges it lacks
// are read by read(off, buf) into buffers of its own (Buf) and kept. One
// Fetch at a time runs per cache, so that readers sharing it never read
// the same bytes twice.
func (c *RunCache) Fetch(file string, start, end int64, read func(off int64, buf []byte) error) error {
	c.fetch.Lock()
	defer c.fetch.Unlock()
	for _, m := range c.Missing(file, start, end) {
		piece, err := c.Buf(m[1] - m[0])
		if err != nil {
			return err
		}
		if err := read(m[0], piece); err != nil {
			return err
		}
		c.Add(file, m[0], piece)
	}
	return nil
}

// Missing is the sub-ranges [start, end) of [off, end) of file that the
// cache lacks, in order.
func (c *RunCache) Missing(file string, off, end int64) [][2]int64 {
	c.mu.Lock()
	var have [][2]int64
	for _, r := range c.runs[file] {
		if s, e := max(off, r.start), min(end, r.start+int64(len(r.data))); s < e {
			have = append(have, [2]int64{s, e})
		}
	}
	c.mu.Unlock()
	slices.SortFunc(have, func(x, y [2]int64) int { return cmp.Compare(x[0], y[0]) })
	var missing [][2]int64
	next := off
	for _, h := range have {
		if h[0] > next {
			missing = append(missing, [2]int64{next, h[0]})
		}
		next = max(next, h[1])
	}
	if next < end {
		missing = append(missing, [2]int64{next, end})
	}
	return missing
}

// Slice is the n bytes of file at off the cache holds: a slice of its own
// buffer when one piece holds them all, else a copy gathered from the
// pieces; ok is false when some byte is missing.
func (c *RunCache) Slice(file string, off, n int64) (_ []byte, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	end := off + n
	for _, r := range c.runs[file] {
		if off >= r.start && end <= r.start+int64(len(r.data)) {
			return r.data[off-r.start : end-r.start : end-r.start], true
		}
	}
	out := make([]byte, n)
	var got int64
	for _, r := range c.runs[file] {
		if s, e := max(off, r.start), min(end, r.start+int64(len(r.data))); s < e {
			copy(out[s-off:e-off], r.data[s-r.start:e-r.start])
			got += e - s // pieces are disjoint
		}
	}
	return out, got == n
}

// Add keeps data, the bytes of file at off (the cache holds data itself,
// typically part of a Buf: the caller must not reuse it).
func (c *RunCache) Add(file string, off int64, data []byte) {
	if len(data) == 0 {
		return
	}
	c.mu.Lock()
	c.runs[file] = append(c.runs[file], cachedRun{off, data})
	c.bytes += int64(len(data))
	c.mu.Unlock()
}

// Bytes is the bytes the cache holds.
func (c *RunCache) Bytes() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes
}

type runCacheKey struct{}

// WithRunCache asks BatchSources to serve reads from c and keep what they
// read in it.
func WithRunCache(ctx context.Context, c *RunCache) context.Context {
	return context.WithValue(ctx, runCacheKey{}, c)
}

// RunCacheOf is the cache set by WithRunCache, or nil.
func RunCacheOf(ctx context.Context) *RunCache {
	c, _ := ctx.Value(runCacheKey{}).(*RunCache)
	return c
}
