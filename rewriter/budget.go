package rewriter

import (
	"context"
	"fmt"
	"sync"
	"time"

	"relayout/catalog"
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

// Read and unit sizes derived from the budget. The ordered pipeline keeps up
// to about 2*jobs+1 units alive (jobs being assembled, jobs+1 waiting their
// turn); each gets a share of the budget, a quarter of which is for reads.
const (
	minReadLimit = 64 << 10
	maxReadLimit = 16 << 20 // blockio's own cap on a coalesced run
)

func (o Options) maxMem() int64 {
	if o.MaxMem <= 0 {
		return defaultMaxMem
	}
	return o.MaxMem
}

func (o Options) share() int64 { return max(o.maxMem()/int64(2*o.jobs()+2), 1) }

// readLimit is the largest coalesced read a unit issues.
// Below minReadLimit only when the budget itself is that small.
func (o Options) readLimit() int64 {
	return min(max(o.share()/4, min(minReadLimit, o.share()/2), 1), maxReadLimit)
}

// budget is the slab size to aim for: its share of the memory budget minus
// the read allowance, at most maxSlabBytes.
func (o Options) budget() int64 {
	b := min(max(o.share()-o.readLimit(), 1), maxSlabBytes)
	if o.unitCap > 0 {
		b = min(b, o.unitCap)
	}
	return b
}

// unitLimit is the most bytes one unit may hold when it grows to end on a
// source block boundary (planner.AlignedSlabs): enough that jobs+1 such
// units and their reads fit the budget at once (jobs being assembled, one
// being hashed and written), and never less than the slab target.
func (o Options) unitLimit() int64 {
	l := o.maxMem()/int64(o.jobs()+1) - o.readLimit()
	if o.unitCap > 0 {
		l = min(l, o.unitCap)
	}
	return max(l, o.budget())
}

// joinLimit is the most bytes a unit may hold when it is made large so that
// blocks interleaved in the input are read in one pass (the joint bands of
// jointGrain.units, mergeInterleaved, a whole array before writeUnits cuts
// tiles): two such units and their reads fit the budget (one being
// assembled, one written). Fewer units assembled at once cost less
// than what the join saves: units whose blocks interleave, left apart, read
// either each other's bytes or every block alone (64^3 float64 in 4^3
// HDF5 chunks scattered in the file, 2 MiB: one unit read in about 8
// requests, two units in about 2,070; e2e TestTinyChunksReadOnce).
func (o Options) joinLimit() int64 {
	l := o.maxMem()/2 - o.readLimit()
	if o.unitCap > 0 {
		l = min(l, o.unitCap)
	}
	return max(l, o.unitLimit())
}

// arrayUnits is units for array a: when whole slabs fit, their boundaries
// are placed on a's block extents along dimension 0 (planner.AlignedSlabs),
// so that each source block is read once, whole; otherwise as units.
func (o Options) arrayUnits(a *catalog.Array, layout planner.Layout) ([]catalog.Box, bool, error) {
	us, split, err := units(a.Shape, layout, a.DType.Size, o.budget())
	if err != nil || split || len(us) < 2 || len(a.Shape) < 2 {
		return us, split, err
	}
	if !wholeRows(us[0], a.Shape) {
		return us, split, nil // row-major pieces of rows: nothing to align
	}
	limit, join := o.unitLimit(), o.joinLimit()
	if layout.Kind == planner.Chunked {
		// a chunked unit is charged twice: its buffer and the chunks cut from it
		limit, join = limit/2, join/2
	}
	us = planner.AlignedSlabs(a.Shape, layout, a.DType.Size, blockBoxes(a), o.budget(), limit)
	return mergeInterleaved(a, us, join, o.readLimit()), false, nil
}

// Cache-sized units. A unit is assembled by one core, then hashed and
// written by others; while it fits the caches those passes do not go back
// to memory. Measured on the 1 GiB bench input (bench/RESULTS.md,
// 2026-12-01), 4 MiB tiles ran 1.5x faster than 64 MiB row bands and
// varied far less from run to run on a shared machine, although their
// digest needs a pass over the written bytes; 4, 8 and 16 MiB tiles ran
// alike, and 8 MiB ones read the input in 1 MiB requests (a Lustre RPC).
const (
	tileTarget = 8 << 20  // tile size aimed at
	tileLimit  = 16 << 20 // bands up to this size stay whole-row units
)

// writeUnits is arrayUnits for a contiguous array written with writeBox:
// where the array exceeds tileLimit (or the budget's limit of a joined unit,
// joinLimit, if lower), block-aligned tiles of about tileTarget bytes instead
// (planner.AlignedTiles), every block still read once, whole. tiled
// reports tiles: they are not row-major runs of the array, so its digest
// is taken from the written file band by band.
func (o Options) writeUnits(a *catalog.Array) ([]catalog.Box, bool, error) {
	contig := planner.Layout{Kind: planner.Contiguous}
	limit := min(o.unitLimit(), o.tileLimit())
	if len(a.Shape) >= 2 && a.Bytes() > min(o.joinLimit(), o.tileLimit()) {
		// Tiles only where whole rows fit a unit (else rows are split).
		if us, _, err := units(a.Shape, contig, a.DType.Size, o.budget()); err == nil && len(us) > 0 && wholeRows(us[0], a.Shape) {
			target := min(o.budget(), o.tileTarget())
			if t := planner.AlignedTiles(a.Shape, a.DType.Size, blockBoxes(a), target, limit); t != nil {
				return t, true, nil
			}
		}
	}
	us, _, err := o.arrayUnits(a, contig)
	return us, false, err
}

func (o Options) tileTarget() int64 {
	if o.tiles.target > 0 {
		return o.tiles.target
	}
	return tileTarget
}

func (o Options) tileLimit() int64 {
	l := int64(tileLimit)
	if o.tiles.limit > 0 {
		l = o.tiles.limit
	}
	if o.unitCap > 0 {
		l = min(l, o.unitCap)
	}
	return l
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
	if b := product(chunk) * int64(size); 2*b > o.maxMem() {
		return fmt.Errorf("one chunk %v is %d bytes: with its encoded copy it does not fit --max-mem %d; raise --max-mem or choose smaller chunks: %w",
			chunk, b, o.maxMem(), catalog.ErrUnsupported)
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

// bandAllowance is what the band buffers of one pipeline's digests
// (bandDigest) may hold: what the budget leaves beside its largest item
// and the coalesced reads of jobs units, so that an item and its reads
// still fit beside them (the pipeline's setup also sets aside the largest
// of its arrays' block reads, bandReserve), and at most an eighth of the budget: a band
// buffer is resident while the reads charged beside it often are not
// (with a quarter, peak RSS of --chunks 4x4x4 on issue 19's BP4 input rose
// by 70 MB to 1,076 MiB for --max-mem 1GiB).
func (o Options) bandAllowance() int64 {
	return max(0, min(o.maxMem()/8, o.maxMem()-o.itemLimit()-2*int64(o.jobs())*o.readLimit()))
}

// bandReserve is what the reads of a's blocks may hold beyond the
// coalesced runs that bandAllowance sets aside: its largest stored block
// and its largest decoded one, for each of jobs units read at once.
func (o Options) bandReserve(a *catalog.Array) int64 {
	var maxLen, maxDec int64
	for i := range a.Blocks {
		b := &a.Blocks[i]
		maxLen = max(maxLen, b.Length)
		if len(b.Codecs) > 0 {
			maxDec = max(maxDec, product(b.StoredShape())*int64(a.DType.Size))
		}
	}
	return int64(o.jobs()) * (maxLen + maxDec)
}

// env is the pipeline environment of a run: an in-memory Prepare sets Options.Monitor and
// the budget; callers that leave them unset get an unlimited budget.
func (o Options) env() pipeEnv {
	return pipeEnv{mem: o.mem, readLimit: o.readLimit(), mon: o.Monitor, digest: o.Digest}
}

// withPipeline readies o for a run over src writing vars: a Monitor (the
// caller's or a new one) started on the total bytes, and the memory budget.
func (o Options) withPipeline(src catalog.Source, vars []catalog.VarSummary) Options {
	if o.Monitor == nil {
		o.Monitor = NewMonitor()
	}
	var total int64
	for _, v := range vars {
		total += v.Bytes
	}
	o.Monitor.begin(src, total)
	o.mem = newMemBudget(o.maxMem())
	return o
}
