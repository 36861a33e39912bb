package verify

import (
	"bytes"
	"cmp"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

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

// smallBand caps the band of an array of small blocks (at most stageBlock
// bytes per block on average): its stage and output band stay a few MiB
// (on 8^3 blocks of float64, 8 MiB bands compared 0.3 s faster than 51
// MiB ones, in half the memory, and read no more bytes of the input).
const smallBand = 8 << 20

// array verifies one array (with its blocks) against its output dataset,
// within maxMem bytes.
func (r *run) array(ctx context.Context, a *catalog.Array, ref outRef, f *h5.File, maxMem int64) error {
	k := a.Key()
	if err := header(a, ref); err != nil {
		return err
	}
	if !a.DType.Valid() {
		return fmt.Errorf("verify: input %s: element type %v: %w", where(k), a.DType, catalog.ErrUnsupported)
	}
	if a.Fill != nil && len(a.Fill) != a.DType.Size {
		return fmt.Errorf("verify: input %s: fill value of %d bytes for %v: %w", where(k), len(a.Fill), a.DType, catalog.ErrCorrupt)
	}
	for i := range a.Blocks {
		if err := checkBlock(a, i); err != nil {
			return fmt.Errorf("verify: input %s: %w", where(k), err)
		}
	}
	if a.Constant {
		return r.constant(ctx, a, ref, f)
	}
	if err := r.boxTable(a, ref, f); err != nil {
		return err
	}
	if err := r.gridOffset(a, ref, f); err != nil {
		return err
	}
	return r.data(ctx, a, ref, f, maxMem)
}

// data compares the elements of a with its output dataset, band by band,
// within maxMem bytes.
func (r *run) data(ctx context.Context, a *catalog.Array, ref outRef, f *h5.File, maxMem int64) error {
	k := a.Key()
	dt := a.DType.LittleEndian()
	size := int64(dt.Size)
	info, err := f.Dataset(ref.d.Path)
	if errors.Is(err, catalog.ErrNotFound) {
		return difff("%s: dataset %s missing from %s", where(k), ref.d.Path, ref.v.File)
	}
	if err != nil {
		return fmt.Errorf("verify: output %s: %w", where(k), err)
	}
	if !info.Numeric || info.DType != dt {
		return difff("%s: %s:%s holds %s, want %s", where(k), ref.v.File, ref.d.Path, info.TypeDesc+" "+info.DType.NumPy(), dt.NumPy())
	}
	if !equalInts(info.Shape, a.Shape) {
		return difff("%s: shape in=%v out=%v (%s:%s)", where(k), a.Shape, info.Shape, ref.v.File, ref.d.Path)
	}
	if ref.d.Layout == "chunked" && (info.Layout != "chunked" || !equalInts(info.Chunk, ref.d.Chunk)) {
		return difff("%s: manifest says chunked %v, %s:%s is %s %v", where(k), ref.d.Chunk, ref.v.File, ref.d.Path, info.Layout, info.Chunk)
	}
	fill, anyNaN := expectedFill(a)
	recorded := info.Fill
	switch {
	case recorded == nil:
		// No fill value recorded: holes are checked against nothing and
		// reported as such when there are any.
	case anyNaN && !isNaN(recorded):
		return difff("%s: fill value in=NaN (none declared) out=%s", where(k), formatElem(recorded, dt))
	case !anyNaN && !bytes.Equal(recorded, fill):
		return difff("%s: fill value in=%s out=%s", where(k), formatElem(fill, dt), formatElem(recorded, dt))
	}

	rank := len(a.Shape)
	n := a.Elements()
	h := r.digestKind.New() // nil: --digest none, nothing hashed
	if n == 0 {
		return r.digest(k, ref, h)
	}
	// Bands along dimension 0.
	rows, rowBytes := int64(1), size
	if rank > 0 {
		rows = a.Shape[0]
		for _, c := range a.Shape[1:] {
			rowBytes *= c
		}
	}
	bandBytes := min(max(maxMem/10, rowBytes), max(maxBand, rowBytes))
	if len(a.Blocks) > 0 && a.Elements()*size/int64(len(a.Blocks)) <= stageBlock {
		// Many small blocks: smaller bands keep the band's stage
		// (order.go) and its output in a few MiB.
		bandBytes = min(bandBytes, max(smallBand, rowBytes))
	}
	perBand := max(bandBytes/rowBytes, 1)
	capacity := maxMem - 3*perBand*rowBytes - perBand*rowBytes/size/8
	var cacheBytes int64
	if info.Layout == "chunked" && rank > 0 && len(info.Chunk) == rank {
		c0 := info.Chunk[0]
		chunkRow := c0 * size
		for d := 1; d < rank; d++ {
			chunkRow *= (a.Shape[d] + info.Chunk[d] - 1) / info.Chunk[d] * info.Chunk[d]
		}
		switch {
		case perBand >= c0:
			perBand = perBand / c0 * c0 // whole chunk rows: each chunk decoded once
		case chunkRow <= maxMem/4:
			cacheBytes = chunkRow // a band inside a chunk row: keep the row cached
			capacity -= chunkRow
		}
	}
	sr, err := f.OpenSlabReader(ref.d.Path, dt, cacheBytes)
	if err != nil {
		return fmt.Errorf("verify: output %s: %w", where(k), err)
	}
	defer sr.Close()

	nb := int((rows + perBand - 1) / perBand)
	bandOf := func(i int) catalog.Box {
		b := catalog.Box{Lower: make([]int64, rank), Count: slices.Clone(a.Shape)}
		if rank > 0 {
			b.Lower[0] = int64(i) * perBand
			b.Count[0] = min(perBand, rows-b.Lower[0])
		}
		return b
	}
	// Blocks by band, in file order within each band.
	order := make([]int, len(a.Blocks))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(x, y int) int {
		bx, by := &a.Blocks[x], &a.Blocks[y]
		return cmp.Or(cmp.Compare(bx.File, by.File), cmp.Compare(bx.Offset, by.Offset))
	})
	byBand := make([][]int, nb)
	span := make([]int, len(a.Blocks)) // bands each block meets
	for _, i := range order {
		b := &a.Blocks[i]
		if b.Box.Elements() == 0 {
			continue
		}
		first, last := 0, 0
		if rank > 0 {
			first = int(b.Box.Lower[0] / perBand)
			last = int((b.Box.Lower[0] + b.Box.Count[0] - 1) / perBand)
		}
		for j := first; j <= last; j++ {
			byBand[j] = append(byBand[j], i)
		}
		span[i] = last - first + 1
	}
	r.stats.arrays.Add(1)
	mem := membudget.Overcommit(capacity)
	defer func() { peak(&r.stats.peakMem, mem.Peak()) }()
	cache := &blockCache{entries: map[int]*cached{}}
	defer cache.drop(mem)

	// Three band buffers circulate: one read ahead from the output (HDF5,
	// one goroutine), one compared, one hashed (in order, one goroutine).
	bufs := make(chan []byte, 3)
	spare := r.takeSpare(3)
	for i := range 3 {
		var b []byte
		if i < len(spare) {
			b = spare[i]
		}
		bufs <- b
	}
	type readBand struct {
		buf []byte
		err error
	}
	rctx, stop := context.WithCancel(ctx)
	readq := make(chan readBand, 1)
	hashq := make(chan []byte, 1)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		defer close(readq)
		for bi := range nb {
			band := bandOf(bi)
			need := band.Elements() * size
			var buf []byte
			select {
			case buf = <-bufs:
			case <-rctx.Done():
				return
			}
			if int64(cap(buf)) < need {
				buf = make([]byte, need)
			}
			buf = buf[:need]
			t0 := time.Now()
			err := sr.Read(band.Lower, band.Count, buf)
			r.stats.readNs.Add(int64(time.Since(t0)))
			select {
			case readq <- readBand{buf, err}:
			case <-rctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	go func() {
		defer wg.Done()
		for b := range hashq {
			if h != nil {
				t0 := time.Now()
				h.Write(b)
				r.stats.hashNs.Add(int64(time.Since(t0)))
			}
			bufs <- b
		}
	}()
	var finishOnce sync.Once
	finish := func() {
		finishOnce.Do(func() {
			stop()
			close(hashq)
			wg.Wait()
			// Keep the band buffers for the next arrays.
			var keep [][]byte
			for len(bufs) > 0 {
				keep = append(keep, <-bufs)
			}
			r.putSpare(keep)
		})
	}
	defer finish()
	pf, _ := r.src.(catalog.Prefetcher)

	for bi := range nb {
		band := bandOf(bi)
		need := band.Elements() * size
		if pf != nil && bi+1 < nb {
			// Announce the blocks the next band starts to the kernel.
			var next []*catalog.Block
			start := bandOf(bi + 1).Lower
			for _, i := range byBand[bi+1] {
				if b := &a.Blocks[i]; rank == 0 || b.Box.Lower[0] >= start[0] {
					next = append(next, b)
				}
			}
			pf.Prefetch(ctx, next)
		}
		var buf []byte
		select {
		case rb, ok := <-readq:
			if !ok {
				return ctx.Err()
			}
			if rb.err != nil {
				return fmt.Errorf("verify: output %s: %w", where(k), rb.err)
			}
			buf = rb.buf
		case <-ctx.Done():
			return ctx.Err()
		}
		r.stats.bands.Add(1)
		first, err := r.band(ctx, a, band, byBand[bi], span, buf, mem, cache)
		if err == nil && first == nil {
			first, err = r.holes(a, band, byBand[bi], buf, recorded)
		} else if err == nil {
			// A hole before the first block difference comes first.
			if hole, herr := r.holes(a, band, byBand[bi], buf, recorded); herr != nil {
				err = herr
			} else if hole != nil && before(hole.index, first.index) {
				first = hole
			}
		}
		if err != nil {
			var diff *difference
			if errors.As(err, &diff) {
				return err
			}
			return fmt.Errorf("verify: input %s: %w", where(k), err)
		}
		if first != nil {
			if first.in == nil {
				return difff("%s at %s: hole (no input block), out=%s, but %s:%s records no fill value",
					where(k), formatIndex(first.index), formatElem(first.out, dt), ref.v.File, ref.d.Path)
			}
			what := "in"
			if first.hole {
				what = "fill"
			}
			return difff("%s at %s: %s=%s out=%s", where(k), formatIndex(first.index), what, formatElem(first.in, dt), formatElem(first.out, dt))
		}
		hashq <- buf
		r.progress(a.Var, need)
	}
	finish()
	return r.digest(k, ref, h)
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

// band compares every block meeting band (blocks, indices into a.Blocks)
// with out, the band's output bytes; it returns the first difference in
// row-major order, or nil.
func (r *run) band(ctx context.Context, a *catalog.Array, band catalog.Box, blocks []int, span []int,
	out []byte, mem *membudget.Budget, cache *blockCache) (*mismatch, error) {
	var mu sync.Mutex
	var first *mismatch
	keep := func(m *mismatch) {
		mu.Lock()
		if first == nil || before(m.index, first.index) {
			first = m
		}
		mu.Unlock()
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(r.opts.Jobs)
	var st *staging
	if bs, ok := r.src.(catalog.BatchSource); ok {
		var batch []batched
		batch, blocks = r.batchable(a, band, blocks, span)
		var err error
		if st, err = r.newStaging(ctx, batch, band, a.DType, mem); err != nil {
			return nil, err
		}
		defer st.drop(mem)
		r.batches(gctx, g, bs, a, band, batch, st, out, mem, keep)
	}
	for _, i := range blocks {
		g.Go(func() error {
			// --jobs bounds the blocks in work over every array in flight.
			select {
			case r.workers <- struct{}{}:
			case <-gctx.Done():
				return gctx.Err()
			}
			defer func() { <-r.workers }()
			m, err := r.block(gctx, a, i, band, span[i], out, mem, cache)
			if err != nil || m == nil {
				return err
			}
			keep(m)
			return nil
		})
	}
	err := g.Wait()
	if err == nil && st != nil {
		// Every small block is in the stage: compare it with the band.
		err = r.compareStage(ctx, st, out, keep)
	}
	return first, err
}

// block fetches block i (or the rows of it inside band) and compares it.
func (r *run) block(ctx context.Context, a *catalog.Array, i int, band catalog.Box, span int, out []byte,
	mem *membudget.Budget, cache *blockCache) (*mismatch, error) {
	b := &a.Blocks[i]
	region, ok := b.Box.Intersect(band)
	if len(band.Lower) == 0 {
		region, ok = catalog.Box{Lower: []int64{}, Count: []int64{}}, true
	}
	if !ok {
		return nil, nil
	}
	r.count(a, b)
	if span == 1 || len(band.Lower) == 0 {
		return r.fetchCompare(ctx, a, b, region, band, out, mem)
	}
	if t, ok := trimRows(b, a.DType, band.Lower[0], band.Lower[0]+band.Count[0]); ok {
		r.stats.trimmed.Add(1)
		return r.fetchCompare(ctx, a, t, region, band, out, mem)
	}
	r.stats.cached.Add(1)
	// A block spanning several bands that cannot be read in part: fetched
	// once, kept until its last band.
	data, p, err := cache.get(ctx, r, a, i, span, mem)
	if err != nil {
		return nil, err
	}
	m := p.compare(data, region, band, out)
	cache.done(i, mem)
	return m, nil
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
	if slices.ContainsFunc(b.StoredLower, func(x int64) bool { return x != 0 }) {
		s.ghost.Add(1)
	}
	if b.Stored != nil && !slices.Equal(b.Stored, b.Box.Count) {
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
	t0 := time.Now()
	data, err := fetch(ctx, r.src, b, a.DType, p)
	if err != nil {
		return nil, err
	}
	t1 := time.Now()
	m := p.compare(data, region, band, out)
	r.stats.fetchNs.Add(int64(t1.Sub(t0)))
	r.stats.compareNs.Add(int64(time.Since(t1)))
	recycle(data)
	return m, nil
}
