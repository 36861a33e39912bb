package verify

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"relayout/catalog"
	"relayout/internal/h5"
	"relayout/internal/membudget"
)

// maxBand caps one output band (bytes): large enough for few HDF5 calls,
// small enough to stay in cache-friendly sizes. Three circulate per array
// in flight: on issue 19's BP4 input (448^3 float64 in 32^3 blocks, rows
// of 1.6 MB) `relayout verify` at --max-mem 1GiB peaked at 357-384 MB RSS
// with 64 MiB bands, 248-250 MB with 16 MiB ones, in the same user time
// and less system time (1.13-1.19 s against 1.33-1.77 s).
const maxBand = 16 << 20

// smallBand and smallBandMax bound the band of an array of small blocks
// (at most stageBlock bytes per block on average): smallBand, or one row
// of blocks if that is more, and at most smallBandMax (on 8^3 blocks of
// float64, 8 MiB bands compared 0.3 s faster than 51 MiB ones, in half
// the memory, and read no more bytes of the input). Bands of about 1 MiB
// keep the three buffers an array circulates in the caches and the pages
// the verifier touches for the first time few (on a virtual machine the
// first touch of a page by the process costs microseconds even after the
// kernel wrote it): run on 351,537 blocks of 4^3 0.88x the time of 8 MiB
// bands, on 833,481 blocks 0.96x (2 MiB: 0.93x), for three times the HDF5
// reads.
const (
	smallBand    = 1 << 20
	smallBandMax = 8 << 20
)

// checks checks what array a says of itself and of its output records
// before its elements are compared: the manifest's header, the element
// type, the blocks' geometry, constant records, box tables and grid
// offsets. done is true when nothing is left to compare (a constant
// record).
func (r *run) checks(ctx context.Context, a *catalog.Array, ref outRef, f *h5.File) (done bool, err error) {
	k := a.Key()
	if err := header(a, ref); err != nil {
		return false, err
	}
	if !a.DType.Valid() {
		return false, fmt.Errorf("verify: input %s: element type %v: %w", where(k), a.DType, catalog.ErrUnsupported)
	}
	if a.Fill != nil && len(a.Fill) != a.DType.Size {
		return false, fmt.Errorf("verify: input %s: fill value of %d bytes for %v: %w", where(k), len(a.Fill), a.DType, catalog.ErrCorrupt)
	}
	for i := range a.Blocks {
		if err := checkBlock(a, i); err != nil {
			return false, fmt.Errorf("verify: input %s: %w", where(k), err)
		}
	}
	if a.Constant {
		return true, r.constant(ctx, a, ref, f)
	}
	if err := r.boxTable(a, ref, f); err != nil {
		return false, err
	}
	return false, r.gridOffset(a, ref, f)
}

// member is one array whose elements are compared band by band, alone or
// with the others of its joint group (joint.go): its output dataset read
// ahead through the HDF5 library, its blocks by band, its digest.
type member struct {
	a        *catalog.Array
	ref      outRef
	v        *varRun
	seq      int // in its variable's step, level order
	k        catalog.Key
	dt       catalog.DType // little-endian
	size     int64
	rank     int
	rowBytes int64    // of one index of dimension 0 (the element for a scalar)
	rows     int64    // along dimension 0 (1 for a scalar)
	f        *h5.File // its output file
	info     *h5.DatasetInfo
	recorded []byte // the output's fill value (nil: none recorded)
	h        hash.Hash

	// Set by start: the bands and the blocks meeting each (file order),
	// and whether the blocks tile the array (each element covered once:
	// no band has holes, bandDone looks for none).
	tiled      bool
	perBand    int64
	nb         int
	byBand     [][]int
	span       []int // bands each block meets
	cacheBytes int64 // the chunk row cached by the slab reader
	sr         *h5.SlabReader
	cache      *blockCache

	// The band pipeline (start): nbuf band buffers circulate, one read
	// ahead from the output (HDF5, one goroutine), one compared, one
	// hashed (in order, one goroutine). Members of a joint group have two:
	// the next band is read once the last is hashed, while the group's
	// other members keep the cores and the library busy (and their bands
	// are larger: three cost bp4's group of four 60 MB of RSS).
	nbuf       int
	bufs       chan []byte
	readq      chan readBand
	hashq      chan []byte
	stop       context.CancelFunc
	wg         sync.WaitGroup
	finishOnce sync.Once

	out   []byte    // the band being compared
	first firstDiff // its first difference
	over  bool      // compared to the end, or stopped at a difference
	// credit is the bytes the checksum path reported to the progress
	// before this member was compared again exactly: its first bands
	// report none.
	credit int64
}

type readBand struct {
	buf []byte
	err error
}

// openMember checks a's output dataset (type, shape, chunks, fill value)
// in f; the member is nil when a has no element to compare (its digest is
// then recorded).
func (r *run) openMember(a *catalog.Array, ref outRef, f *h5.File) (*member, error) {
	k := a.Key()
	dt := a.DType.LittleEndian()
	info, err := f.Dataset(ref.d.Path)
	if errors.Is(err, catalog.ErrNotFound) {
		return nil, difff("%s: dataset %s missing from %s", where(k), ref.d.Path, ref.v.File)
	}
	if err != nil {
		return nil, fmt.Errorf("verify: output %s: %w", where(k), err)
	}
	if !info.Numeric || info.DType != dt {
		return nil, difff("%s: %s:%s holds %s, want %s", where(k), ref.v.File, ref.d.Path, info.TypeDesc+" "+info.DType.NumPy(), dt.NumPy())
	}
	if !equalInts(info.Shape, a.Shape) {
		return nil, difff("%s: shape in=%v out=%v (%s:%s)", where(k), a.Shape, info.Shape, ref.v.File, ref.d.Path)
	}
	if want := r.unlimitedAxes(a); !slices.Equal(info.Unlimited, want) {
		return nil, difff("%s: %s:%s is unlimited along %v, want %v (the input's unlimited dimensions %v)", where(k), ref.v.File, ref.d.Path,
			axesOf(info.Unlimited), axesOf(want), r.unlimited)
	}
	if ref.d.Layout == "chunked" && (info.Layout != "chunked" || !equalInts(info.Chunk, ref.d.Chunk)) {
		return nil, difff("%s: manifest says chunked %v, %s:%s is %s %v", where(k), ref.d.Chunk, ref.v.File, ref.d.Path, info.Layout, info.Chunk)
	}
	fill, anyNaN := expectedFill(a)
	recorded := info.Fill
	switch {
	case recorded == nil:
		// No fill value recorded: holes are checked against nothing and
		// reported as such when there are any.
	case anyNaN && !isNaN(recorded):
		return nil, difff("%s: fill value in=NaN (none declared) out=%s", where(k), formatElem(recorded, dt))
	case !anyNaN && !bytes.Equal(recorded, fill):
		return nil, difff("%s: fill value in=%s out=%s", where(k), formatElem(fill, dt), formatElem(recorded, dt))
	}
	m := &member{a: a, ref: ref, k: k, dt: dt, size: int64(dt.Size), rank: len(a.Shape), f: f, info: info, recorded: recorded,
		h: r.digestKind.New(), rows: 1, rowBytes: int64(dt.Size), nbuf: 3} // h nil: --digest none, nothing hashed
	if a.Elements() == 0 {
		return nil, r.digest(k, ref, m.h)
	}
	if m.rank > 0 {
		m.rows = a.Shape[0]
		for _, c := range a.Shape[1:] {
			m.rowBytes *= c
		}
	}
	return m, nil
}

// small reports whether m's blocks are small on average (at most
// stageBlock bytes): its bands are kept small (smallBand).
func (m *member) small() bool {
	return len(m.a.Blocks) > 0 && m.a.Elements()*m.size/int64(len(m.a.Blocks)) <= stageBlock
}

// blockRows is the largest extent of m's blocks along dimension 0 (at
// least 1): the rows of one row of blocks.
func (m *member) blockRows() int64 {
	rows := int64(1)
	if m.rank == 0 {
		return rows
	}
	for i := range m.a.Blocks {
		if c := m.a.Blocks[i].Box.Count; len(c) > 0 {
			rows = max(rows, c[0])
		}
	}
	return rows
}

// chunkRows is the rows of one chunk of a chunked output (0: not
// chunked) and the bytes of one row of chunks.
func (m *member) chunkRows() (c0, chunkRow int64) {
	info := m.info
	if info.Layout != "chunked" || m.rank == 0 || len(info.Chunk) != m.rank {
		return 0, 0
	}
	c0 = info.Chunk[0]
	chunkRow = c0 * m.size
	for d := 1; d < m.rank; d++ {
		chunkRow *= (m.a.Shape[d] + info.Chunk[d] - 1) / info.Chunk[d] * info.Chunk[d]
	}
	return c0, chunkRow
}

// chunkBytes is the bytes of one chunk of a chunked output (0: not
// chunked).
func (m *member) chunkBytes() int64 {
	info := m.info
	if info.Layout != "chunked" || len(info.Chunk) != m.rank {
		return 0
	}
	n := m.size
	for _, c := range info.Chunk {
		n *= c
	}
	return n
}

// bandMem is what m's bands of perBand rows hold: its band buffers and
// the band's coverage bitmap.
func (m *member) bandMem(perBand int64) int64 {
	return int64(m.nbuf)*perBand*m.rowBytes + perBand*m.rowBytes/m.size/8
}

// bandOf is band i of m: perBand rows along dimension 0.
func (m *member) bandOf(i int) catalog.Box {
	b := catalog.Box{Lower: make([]int64, m.rank), Count: slices.Clone(m.a.Shape)}
	if m.rank > 0 {
		b.Lower[0] = int64(i) * m.perBand
		b.Count[0] = min(m.perBand, m.rows-b.Lower[0])
	}
	return b
}

// index cuts m into bands of perBand rows and lists each band's blocks in
// file order (m.byBand, m.span): CPU only, on any goroutine.
func (m *member) index(perBand int64) {
	a := m.a
	m.bands(perBand)
	// Blocks by band, in file order within each band.
	order := make([]int, len(a.Blocks))
	for i := range order {
		order[i] = i
	}
	byFile := func(x, y int) int { return fileOrder(&a.Blocks[x], &a.Blocks[y]) }
	if !slices.IsSortedFunc(order, byFile) { // a reader's blocks mostly are: one pass
		slices.SortStableFunc(order, byFile)
	}
	m.tiled = tiles(a)
	m.byBand = make([][]int, m.nb)
	m.span = make([]int, len(a.Blocks))
	for _, i := range order {
		b := &a.Blocks[i]
		if b.Box.Elements() == 0 {
			continue
		}
		first, last := 0, 0
		if m.rank > 0 {
			first = int(b.Box.Lower[0] / perBand)
			last = int((b.Box.Lower[0] + b.Box.Count[0] - 1) / perBand)
		}
		for j := first; j <= last; j++ {
			m.byBand[j] = append(m.byBand[j], i)
		}
		m.span[i] = last - first + 1
	}
}

// bands cuts m into bands of perBand rows.
func (m *member) bands(perBand int64) {
	m.perBand = perBand
	m.nb = int((m.rows + perBand - 1) / perBand)
}

// open opens m's slab reader, caching cacheBytes of chunks.
func (m *member) open(cacheBytes int64) error {
	m.cacheBytes = cacheBytes
	sr, err := m.openSlab()
	if err != nil {
		return fmt.Errorf("verify: output %s: %w", where(m.k), err)
	}
	m.sr = sr
	return nil
}

// launch starts m's output reads and its hashing (index has cut m into
// bands, open has opened its slab reader).
func (r *run) launch(ctx context.Context, m *member) {
	r.stats.arrays.Add(1)
	m.cache = &blockCache{entries: map[int]*cached{}}

	m.bufs = make(chan []byte, m.nbuf)
	spare := r.takeSpare(m.nbuf)
	for i := range m.nbuf {
		var b []byte
		if i < len(spare) {
			b = spare[i]
		}
		m.bufs <- b
	}
	rctx, stop := context.WithCancel(ctx)
	m.stop = stop
	m.readq = make(chan readBand, 1)
	m.hashq = make(chan []byte, 1)
	m.wg.Add(2)
	go func() {
		defer m.wg.Done()
		defer close(m.readq)
		for bi := range m.nb {
			band := m.bandOf(bi)
			need := band.Elements() * m.size
			var buf []byte
			select {
			case buf = <-m.bufs:
			case <-rctx.Done():
				return
			}
			if int64(cap(buf)) < need {
				buf = make([]byte, need)
				catalog.Populate(buf) // HDF5 reads into it: no fault a page
			}
			buf = buf[:need]
			t0 := time.Now()
			err := m.sr.Read(band.Lower, band.Count, buf)
			r.stats.readNs.Add(int64(time.Since(t0)))
			r.stats.outBytes.Add(need)
			r.stats.outReads.Add(1)
			select {
			case m.readq <- readBand{buf, err}:
			case <-rctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	go func() {
		defer m.wg.Done()
		for b := range m.hashq {
			if m.h != nil {
				t0 := time.Now()
				m.h.Write(b)
				r.stats.hashNs.Add(int64(time.Since(t0)))
			}
			m.bufs <- b
		}
	}()
}

func (m *member) openSlab() (*h5.SlabReader, error) {
	return m.f.OpenSlabReader(m.ref.d.Path, m.dt, m.cacheBytes)
}

// output waits for the output bytes of m's next band.
func (m *member) output(ctx context.Context) error {
	select {
	case rb, ok := <-m.readq:
		if !ok {
			return ctx.Err()
		}
		if rb.err != nil {
			return fmt.Errorf("verify: output %s: %w", where(m.k), rb.err)
		}
		m.out = rb.buf
		m.first = firstDiff{}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// finish stops m's pipeline and keeps its band buffers for later arrays.
func (r *run) finish(m *member) {
	m.finishOnce.Do(func() {
		if m.stop == nil { // not launched
			if m.sr != nil {
				m.sr.Close()
			}
			return
		}
		m.stop()
		close(m.hashq)
		m.wg.Wait()
		var keep [][]byte
		for len(m.bufs) > 0 {
			keep = append(keep, <-m.bufs)
		}
		r.putSpare(keep)
		m.sr.Close()
	})
}

// bandDone ends the comparison of m's band bi: the holes (a hole before
// the first block difference comes first), then the difference, or the
// band goes to the hash and the progress.
func (r *run) bandDone(m *member, bi int) error {
	a, k := m.a, m.k
	band := m.bandOf(bi)
	first := m.first.m
	var hole *mismatch
	if !m.tiled {
		var err error
		if hole, err = r.holes(a, band, m.byBand[bi], m.out, m.recorded); err != nil {
			return fmt.Errorf("verify: input %s: %w", where(k), err)
		}
	}
	if hole != nil && (first == nil || before(hole.index, first.index)) {
		first = hole
	}
	if first != nil {
		return m.mismatchErr(first)
	}
	m.hashq <- m.out
	m.out = nil
	n := band.Elements() * m.size
	c := min(m.credit, n)
	m.credit -= c
	if n > c {
		r.progress(a.Var, n-c)
	}
	return nil
}

// mismatchErr is the difference first of m's output, as reported.
func (m *member) mismatchErr(first *mismatch) error {
	k, dt := m.k, m.dt
	if first.in == nil {
		return difff("%s at %s: hole (no input block), out=%s, but %s:%s records no fill value",
			where(k), formatIndex(first.index), formatElem(first.out, dt), m.ref.v.File, m.ref.d.Path)
	}
	what := "in"
	if first.hole {
		what = "fill"
	}
	return difff("%s at %s: %s=%s out=%s", where(k), formatIndex(first.index), what, formatElem(first.in, dt), formatElem(first.out, dt))
}

// firstDiff keeps the first difference (row-major) of a band.
type firstDiff struct {
	mu sync.Mutex
	m  *mismatch
}

func (f *firstDiff) keep(m *mismatch) {
	f.mu.Lock()
	if f.m == nil || before(m.index, f.m.index) {
		f.m = m
	}
	f.mu.Unlock()
}

// digest checks the digest (of the manifest's algorithm) of the output
// bytes against the manifest and records it as the array's (every element
// was compared equal); h nil (--digest none) checks nothing.
func (r *run) digest(k catalog.Key, ref outRef, h hash.Hash) error {
	if h == nil {
		return nil
	}
	sum := h.Sum(nil)
	if want := ref.d.Sum(r.digestKind); want != "" { // empty: the caller fills it
		if got := hex.EncodeToString(sum); got != want {
			return difff("%s: %v of output %s, manifest says %s", where(k), r.digestKind, got, want)
		}
	}
	r.setDigest(k, sum)
	return nil
}

// before reports whether index x precedes y in row-major order.
func before(x, y []int64) bool { return slices.Compare(x, y) < 0 }

// block fetches block i of m (or the rows of it inside band) and compares
// it: the path of blocks no batch reads (see cut).
func (r *run) block(ctx context.Context, m *member, i int, band catalog.Box, mem *membudget.Budget) (*mismatch, error) {
	a := m.a
	c := r.cut(a, i, band, m.span[i], nil)
	switch {
	case c.b == nil && !c.cache:
		return nil, nil
	case !c.cache:
		return r.fetchCompare(ctx, a, c.b, c.region, band, m.out, mem)
	}
	// A block spanning several bands that cannot be read in part: fetched
	// once, kept until its last band.
	data, p, err := m.cache.get(ctx, r, a, i, m.span[i], mem)
	if err != nil {
		return nil, err
	}
	mm := p.compare(data, c.region, band, m.out)
	m.cache.done(i, mem)
	return mm, nil
}

// cutBlock is how block i of an array is read for a band: b whole or by
// its rows of the band (b is then a block of its own), compared over
// region; b nil when the block misses the band. cache: a block spanning
// several bands that cannot be read in part (the block cache keeps it).
type cutBlock struct {
	b      *catalog.Block
	region catalog.Box
	cache  bool
}

// cut decides how block i (meeting span bands) is read for band, and
// counts it in the stats.
func (r *run) cut(a *catalog.Array, i int, band catalog.Box, span int, ar *intArena) cutBlock {
	b := &a.Blocks[i]
	if len(band.Lower) == 0 {
		r.count(a, b)
		return cutBlock{b: b, region: catalog.Box{Lower: []int64{}, Count: []int64{}}}
	}
	rank := len(band.Lower)
	region := catalog.Box{Lower: ar.take(rank), Count: ar.take(rank)}
	if !b.Box.IntersectInto(band, region) {
		return cutBlock{}
	}
	r.count(a, b)
	if span == 1 {
		return cutBlock{b: b, region: region}
	}
	if t, ok := trimRows(b, a.DType, band.Lower[0], band.Lower[0]+band.Count[0]); ok {
		r.stats.trimmed.Add(1)
		return cutBlock{b: t, region: region}
	}
	r.stats.cached.Add(1)
	return cutBlock{b: b, region: region, cache: true}
}

// intArena hands out small int slices carved from larger chunks: a band
// of many small blocks needs a region and strides for each of tens of
// thousands of blocks, an allocation per chunk instead of three per block.
// A nil arena allocates each slice.
type intArena struct{ chunk []int64 }

func (ar *intArena) take(n int) []int64 {
	if ar == nil {
		return make([]int64, n)
	}
	if len(ar.chunk) < n {
		ar.chunk = make([]int64, max(n, 4096))
	}
	s := ar.chunk[:n:n]
	ar.chunk = ar.chunk[n:]
	return s
}

// count records block b's placement features in the stats.
func (r *run) count(a *catalog.Array, b *catalog.Block) {
	s := &r.stats
	s.blocks.Add(1)
	if a.DType.BigEndian && a.DType.Size > 1 {
		s.bigEndian.Add(1)
	}
	if b.Order == catalog.ColMajor {
		s.colMajor.Add(1)
	}
	if slices.ContainsFunc(b.StoredLower(), func(x int64) bool { return x != 0 }) {
		s.ghost.Add(1)
	}
	if b.Stored() != nil && !slices.Equal(b.Stored(), b.Box.Count) {
		s.partial.Add(1)
	}
}

func peak(v *atomic.Int64, n int64) {
	for {
		old := v.Load()
		if n <= old || v.CompareAndSwap(old, n) {
			return
		}
	}
}

// fetchCompare reads block b, compares region of it and drops it.
func (r *run) fetchCompare(ctx context.Context, a *catalog.Array, b *catalog.Block, region, band catalog.Box,
	out []byte, mem *membudget.Budget) (*mismatch, error) {
	p := newPlacement(b, a.DType)
	n := p.storedBytes()
	if err := mem.Acquire(ctx, n); err != nil {
		return nil, err
	}
	defer mem.Release(n)
	data, err := r.fetch(ctx, b, a.DType, p)
	if err != nil {
		return nil, err
	}
	t0 := time.Now()
	m := p.compare(data, region, band, out)
	r.stats.compareNs.Add(int64(time.Since(t0)))
	recycle(data)
	return m, nil
}

// unlimitedAxes marks the axes of a over one of the input's unlimited
// dimensions (run.unlimited), as h5.DatasetInfo.Unlimited reads them: nil
// when there is none.
func (r *run) unlimitedAxes(a *catalog.Array) []bool {
	var axes []bool
	for k, d := range a.Dims {
		if d != "" && slices.Contains(r.unlimited, d) && len(a.Dims) == len(a.Shape) {
			if axes == nil {
				axes = make([]bool, len(a.Shape))
			}
			axes[k] = true
		}
	}
	return axes
}

// axesOf lists the axes marked.
func axesOf(marked []bool) []int {
	axes := []int{}
	for k, m := range marked {
		if m {
			axes = append(axes, k)
		}
	}
	return axes
}
