package rewriter

import (
	"context"
	"fmt"
	"sync"
	"time"

	"relayout/catalog"
	"relayout/internal/limits"
	"relayout/internal/membudget"
	"relayout/planner"
)

// The memory budget (Options.MaxMem) is hard: every output unit is charged,
// before any of its buffers is allocated, for its slab buffer, the encoded
// chunks cut from it, and the largest read it will issue (a coalesced run,
// or one block with its decoded copy). Units are admitted in order by the
// goroutine that dispatches them, so the unit the ordered sink waits for has
// always been admitted before any later one and the pipeline cannot
// deadlock on memory. A unit that alone needs more than the budget is split
// (see units); one that cannot be split (a chunk) is an error.

// memBudget is the one semaphore over MaxMem bytes (membudget.Budget, which
// tracks the peak, strict: a request of more than the budget is refused).
// Unit buffers are anonymous mappings outside the Go heap (membudget.Map,
// see there why). It also keeps the buffers of finished units for reuse (takeBuf, keepBuf),
// still charged, so that steady state allocates nothing and the kept
// buffers count against the budget; acquire drops them (and their charge)
// before it would wait.
type memBudget struct {
	size int64
	sem  *membudget.Budget

	mu      sync.Mutex
	kept    [][]byte // charged, each for cap(b) bytes
	waiting int      // acquire calls blocked on the semaphore
}

func newMemBudget(size int64) *memBudget {
	return &memBudget{size: size, sem: membudget.New(size)}
}

func (m *memBudget) acquire(ctx context.Context, n int64) error {
	if n > m.size {
		return fmt.Errorf("an output unit needs %d bytes of buffers, more than --max-mem %d: raise --max-mem or choose smaller chunks", n, m.size)
	}
	try := func() bool { return m.sem.TryAcquire(n) }
	if !try() && !m.dropUntil(try, nil) {
		// None is kept while we wait: their bytes may be the ones we
		// wait for.
		m.mu.Lock()
		m.waiting++
		kept := m.kept
		m.kept = nil
		m.mu.Unlock()
		for _, b := range kept {
			m.drop(b)
		}
		err := m.sem.Acquire(ctx, n)
		m.mu.Lock()
		m.waiting--
		m.mu.Unlock()
		if err != nil {
			return err
		}
	}
	return nil
}

// peak is the most bytes charged at once.
func (m *memBudget) peak() int64 { return m.sem.Peak() }

// acquireBuf charges a unit's buffer of n bytes and extra bytes more. It
// returns a kept buffer (charged for its cap) when one of about n bytes is
// or becomes free before the bytes themselves, else nil (charged n: the
// caller makes the buffer). Kept buffers of other sizes are dropped while
// it waits.
func (m *memBudget) acquireBuf(ctx context.Context, n, extra int64) ([]byte, error) {
	if n+extra > m.size {
		return nil, m.acquire(ctx, n+extra) // the error
	}
	for {
		if b := m.takeBuf(n); b != nil {
			if err := m.acquire(ctx, extra); err != nil {
				m.drop(b)
				return nil, err
			}
			return b, nil
		}
		if m.dropUntil(func() bool { return m.sem.TryAcquire(n + extra) }, func(c int64) bool { return c >= n && c <= n+n/8 }) {
			return nil, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Millisecond):
		}
	}
}

// dropUntil drops kept buffers, the largest first, until try succeeds
// (it returns true) or none is left but those spare keeps (nil: none):
// only as many as the request needs, so that the others are still reused
// rather than unmapped and mapped again (each fresh page a fault and a
// zeroing). Dropping every kept buffer of another size whenever the budget
// was full mapped 1.6 GB of unit buffers for 1.5 GB of input on issue 19's
// BP4 input at --max-mem 256MiB (462k minor faults, against 88k at 1GiB).
func (m *memBudget) dropUntil(try func() bool, spare func(c int64) bool) bool {
	for !try() {
		m.mu.Lock()
		k := -1
		for i, b := range m.kept {
			c := int64(cap(b))
			if (spare == nil || !spare(c)) && (k < 0 || c > int64(cap(m.kept[k]))) {
				k = i
			}
		}
		if k < 0 {
			m.mu.Unlock()
			return false
		}
		b := m.kept[k]
		m.kept = append(m.kept[:k], m.kept[k+1:]...)
		m.mu.Unlock()
		m.drop(b)
	}
	return true
}

// takeBuf returns a kept buffer of n bytes (contents undefined) whose charge,
// cap(b) >= n bytes, passes to the caller; nil when none fits.
func (m *memBudget) takeBuf(n int64) []byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, b := range m.kept {
		if c := int64(cap(b)); c >= n && c <= n+n/8 {
			m.kept = append(m.kept[:i], m.kept[i+1:]...)
			return b[:n]
		}
	}
	return nil
}

// keepBuf keeps b, charged for cap(b) bytes, for takeBuf.
func (m *memBudget) keepBuf(b []byte) {
	if cap(b) == 0 {
		return
	}
	m.mu.Lock()
	if m.waiting > 0 {
		m.mu.Unlock()
		m.drop(b)
		return
	}
	m.kept = append(m.kept, b[:0])
	m.mu.Unlock()
}

// drop unmaps b, a buffer from membudget.Map, and releases its charge, cap(b).
func (m *memBudget) drop(b []byte) {
	m.release(int64(cap(b)))
	membudget.Unmap(b)
}

// close drops the kept buffers; the budget is not used after.
func (m *memBudget) close() {
	m.mu.Lock()
	kept := m.kept
	m.kept = nil
	m.mu.Unlock()
	for _, b := range kept {
		m.drop(b)
	}
}

func (m *memBudget) release(n int64) {
	m.sem.Release(n)
}

// The sizes derived from the budget (Options.Limits: read, unit, join,
// tile and item limits, the band allowance) are package limits', computed
// once by limits.For from MaxMem and Jobs; the reasons for their divisors
// are there.

// withLimits is o with its Limits computed from MaxMem and Jobs unless set
// (tests set some of them).
func (o Options) withLimits() Options {
	if o.Limits.MaxMem == 0 {
		o.Limits = limits.For(o.MaxMem, o.Jobs)
	}
	return o
}

// arrayUnits is units for array a: when whole slabs fit, their boundaries
// are placed on a's block extents along dimension 0 (planner.AlignedSlabs),
// so that each source block is read once, whole; otherwise as units, but
// where a's blocks are larger than those units (largeBlockUnits).
func (o Options) arrayUnits(a *catalog.Array, layout planner.Layout) ([]catalog.Box, bool, error) {
	l := o.Limits
	us, split, err := units(a.Shape, layout, a.DType.Size, l.UnitTarget)
	if err != nil || len(us) < 2 || len(a.Shape) < 2 {
		return us, split, err
	}
	limit, join := l.UnitLimit, l.JoinLimit
	if layout.Kind == planner.Chunked {
		// a chunked unit is charged twice: its buffer and the chunks cut from it
		limit, join = limit/2, join/2
	}
	if split || !wholeRows(us[0], a.Shape) {
		if rows := largeBlockUnits(a, layout, us[0].Elements()*int64(a.DType.Size), l.UnitTarget, limit); rows != nil {
			return rows, false, nil
		}
		return us, split, nil // pieces of rows: nothing to align
	}
	us = planner.AlignedSlabs(a.Shape, layout, a.DType.Size, blockBoxes(a), l.UnitTarget, limit)
	return mergeInterleaved(a, us, join, l.ReadLimit), false, nil
}

// largeBlockUnits is, for an array whose blocks are larger than units of
// unit bytes, units of whole rows (chunk rows) aligned on the blocks
// (planner.AlignedSlabs, aiming at target, within limit), so that each
// block is read once, whole, rather than once by each unit that cuts it: a
// SCORPIO frame (one 57.6 MB block of 1.8M scattered runs) was read and
// scattered by each of the 16 MB units of its chunk row. nil when its
// blocks are not larger, or a row does not fit limit.
func largeBlockUnits(a *catalog.Array, layout planner.Layout, unit, target, limit int64) []catalog.Box {
	if len(a.Shape) < 2 || largestBlock(a) <= unit {
		return nil
	}
	rows := int64(1)
	if layout.Kind == planner.Chunked && len(layout.Chunk) > 0 {
		rows = layout.Chunk[0]
	}
	if rows*product(a.Shape[1:])*int64(a.DType.Size) > limit {
		return nil
	}
	return planner.AlignedSlabs(a.Shape, layout, a.DType.Size, blockBoxes(a), target, limit)
}

// largestBlock is the bytes of a's largest block (its box's elements).
func largestBlock(a *catalog.Array) int64 {
	var n int64
	for i := range a.Blocks {
		n = max(n, a.Blocks[i].Box.Elements())
	}
	return n * int64(a.DType.Size)
}

// writeUnits is arrayUnits for a contiguous array written with writeBox:
// where the array exceeds Limits.TileLimit (or the budget's limit of a joined
// unit, JoinLimit, if lower), block-aligned tiles of about TileTarget bytes instead
// (planner.AlignedTiles), every block still read once, whole. tiled
// reports tiles: they are not row-major runs of the array, so its digest
// is taken from the written file band by band.
func (o Options) writeUnits(a *catalog.Array) ([]catalog.Box, bool, error) {
	contig := planner.Layout{Kind: planner.Contiguous}
	l := o.Limits
	limit := min(l.UnitLimit, l.TileLimit)
	if len(a.Shape) >= 2 && a.Bytes() > min(l.JoinLimit, l.TileLimit) {
		// Tiles only where whole rows fit a unit (else rows are split).
		if us, _, err := units(a.Shape, contig, a.DType.Size, l.UnitTarget); err == nil && len(us) > 0 && wholeRows(us[0], a.Shape) {
			target := min(l.UnitTarget, l.TileTarget)
			if t := planner.AlignedTiles(a.Shape, a.DType.Size, blockBoxes(a), target, limit); t != nil {
				return t, true, nil
			}
		}
	}
	us, _, err := o.arrayUnits(a, contig)
	return us, false, err
}

// wholeRows reports whether u spans shape in every dimension after the first.
func wholeRows(u catalog.Box, shape []int64) bool {
	for d := 1; d < len(shape); d++ {
		if u.Count[d] != shape[d] {
			return false
		}
	}
	return true
}

func blockBoxes(a *catalog.Array) []catalog.Box {
	boxes := make([]catalog.Box, len(a.Blocks))
	for i := range a.Blocks {
		boxes[i] = a.Blocks[i].Box
	}
	return boxes
}

// units cuts an array into output units of at most budget bytes: the
// planner's slabs (whole rows, or whole chunk rows) when one fits, else
// smaller boxes. For the contiguous layout those are row-major ranges (one
// index in each leading dimension, a range along the split dimension, the
// trailing dimensions whole), so their bytes still follow each other in the
// array's row-major order; split reports false. For the chunked layout they
// are boxes of whole chunks, which do not: split reports true and the
// array's digest needs a pass of its own (hashUnits). A chunk that alone
// exceeds the budget is an error.
func units(shape []int64, layout planner.Layout, size int, budget int64) ([]catalog.Box, bool, error) {
	slabs := planner.Slabs(shape, layout, size, budget)
	if len(slabs) == 0 || slabs[0].Elements()*int64(size) <= budget || len(shape) < 2 {
		return slabs, false, nil
	}
	if layout.Kind != planner.Chunked {
		return contiguousUnits(shape, size, budget), false, nil
	}
	chunk := layout.Chunk
	rank := len(shape)
	// Smallest split dimension d whose one-chunk unit fits: chunk extents
	// before d, one chunk at d, whole dimensions after.
	d, unitBytes := 1, int64(0)
	for ; d < rank; d++ {
		unitBytes = product(chunk[:d+1]) * product(shape[d+1:]) * int64(size)
		if unitBytes <= budget {
			break
		}
	}
	// One chunk per unit at least (checkChunkBudget).
	d = min(d, rank-1)
	m := max(budget/unitBytes, 1) // chunks per unit along d
	grid := chunkGrid(shape, chunk)
	var out []catalog.Box
	idx := make([]int64, d+1) // chunk index along dims 0..d
	for {
		b := catalog.Box{Lower: make([]int64, rank), Count: append([]int64(nil), shape...)}
		for k := 0; k <= d; k++ {
			b.Lower[k] = idx[k] * chunk[k]
			n := chunk[k]
			if k == d {
				n *= m
			}
			b.Count[k] = min(n, shape[k]-b.Lower[k])
		}
		out = append(out, b)
		k := d
		idx[d] += m
		for ; k >= 0; k-- {
			if idx[k] < grid[k] {
				break
			}
			idx[k] = 0
			if k > 0 {
				idx[k-1]++
			}
		}
		if k < 0 {
			return out, true, nil
		}
	}
}

// checkChunkBudget refuses a chunked layout whose single chunk, with its
// encoded copy, cannot fit the memory budget: the chunk is the smallest
// output unit.
func (o Options) checkChunkBudget(chunk []int64, size int) error {
	if b := product(chunk) * int64(size); 2*b > o.Limits.MaxMem {
		return fmt.Errorf("one chunk %v is %d bytes: with its encoded copy it does not fit --max-mem %d; raise --max-mem or choose smaller chunks: %w",
			chunk, b, o.Limits.MaxMem, catalog.ErrUnsupported)
	}
	return nil
}

// contiguousUnits cuts shape (rank >= 2, one row over budget) into row-major
// ranges of at most budget bytes (at least one element).
func contiguousUnits(shape []int64, size int, budget int64) []catalog.Box {
	rank := len(shape)
	inner := int64(size) // bytes of one index along d, trailing dims whole
	d := rank - 1
	for ; d > 0; d-- {
		if inner*shape[d] > budget {
			break
		}
		inner *= shape[d]
	}
	step := max(budget/inner, 1)
	var out []catalog.Box
	idx := make([]int64, d+1)
	for {
		b := catalog.Box{Lower: make([]int64, rank), Count: append([]int64(nil), shape...)}
		for k := 0; k < d; k++ {
			b.Lower[k], b.Count[k] = idx[k], 1
		}
		b.Lower[d], b.Count[d] = idx[d], min(step, shape[d]-idx[d])
		out = append(out, b)
		idx[d] += step
		k := d
		for ; k >= 0; k-- {
			if idx[k] < shape[k] {
				break
			}
			idx[k] = 0
			if k > 0 {
				idx[k-1]++
			}
		}
		if k < 0 {
			return out
		}
	}
}

// readNeed bounds the transient read memory of assembling slab from reads:
// the largest read (a coalesced run of at most limit bytes, or one block
// read alone) plus the decoded copy of the largest encoded block.
func readNeed(reads []*catalog.Block, dt catalog.DType, limit int64, batch bool) int64 {
	var sum, maxLen, maxDec int64
	for _, b := range reads {
		if b.Inline() != nil {
			continue
		}
		sum += b.Length
		maxLen = max(maxLen, b.Length)
		if len(b.Codecs) > 0 {
			maxDec = max(maxDec, product(b.StoredShape())*int64(dt.Size))
		}
	}
	run := maxLen
	if batch {
		run = max(run, min(sum, limit))
	}
	return run + maxDec
}

// bandReserve is what the reads of a's blocks may hold beyond the
// coalesced runs that Limits.BandAllowance sets aside: its largest stored
// block and its largest decoded one, for each of jobs units read at once.
func bandReserve(a *catalog.Array, jobs int) int64 {
	var maxLen, maxDec int64
	for i := range a.Blocks {
		b := &a.Blocks[i]
		maxLen = max(maxLen, b.Length)
		if len(b.Codecs) > 0 {
			maxDec = max(maxDec, product(b.StoredShape())*int64(a.DType.Size))
		}
	}
	return int64(jobs) * (maxLen + maxDec)
}

// withMonitor readies o for a run over src writing vars: a Monitor (the
// caller's or a new one) started on the total bytes.
func (o Options) withMonitor(src catalog.Source, vars []catalog.VarSummary) Options {
	if o.Monitor == nil {
		o.Monitor = NewMonitor()
	}
	var total int64
	for _, v := range vars {
		total += v.Bytes
	}
	o.Monitor.begin(src, total)
	return o
}
