package verify

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"relayout/catalog"
	"relayout/internal/membudget"
)

// The checksum path: a joint group's members compared by their positional
// checksums (checksum.go) instead of element by element. Each side is one
// pass in the order it is cheapest to read, with no per-band planning:
//
//	output: bands of each member read through the HDF5 library ─► poly(band) ─► sha256
//	input:  every block of every member, in file order, in parts of
//	        batchRead bytes (Jobs at once, one ReadBlocks call) ─► blockSum
//	then per member: S_out == S_in + f*geo(N) ?  yes: verified, its digest kept
//	                                             no:  compared again exactly
//
// On a million blocks of 4^3 the exact path spends most of its time per
// block (cutting blocks to bands, staging and merging them in file order,
// the coverage bitmaps); here a block costs its rows' polynomials and
// nothing is sorted but the file order.
//
// A member takes this path when its blocks can be read whole within the
// budget (blocks of at most quickMost decoded bytes on average: twice as
// many when a Tap sums them during the rewrite), the source reads
// batches, its element type has a field, the blocks are disjoint on a grid
// of cells of at most maxCells (disjoint), and holes, if any, have a
// recorded fill value; otherwise, or when Options.Exact asks for it, the
// exact path.

// quickBlock is the most decoded bytes a member's blocks may hold on
// average to take the checksum path. The polynomial costs about a
// nanosecond a byte on each side (as much as sha256), the exact path a few
// microseconds a block and a few tenths of a nanosecond a byte: on a
// 2-core Xeon, 4^3 float64 blocks (512 B) verified in 0.58 of the exact
// path's CPU (m1, 1,048,576 blocks), 8^3 ones (4 KiB) in 1.15 of it,
// 16^3 in 1.4, 32^3 (issue 19's 1.5 GB BP4 input) in 1.35. Measured
// again on the 2-core EPYC of session 22 (the polynomial now 0.28 ns a
// byte on a band, BenchmarkPolyBand, sha256 0.59): 32^3 on the checksum
// path, tapped, still took 1.08x the wall and 1.10x the CPU of the exact
// path (n = 6, caches dropped; the exact path reads the input again from
// the page cache, the checksum path sums every byte twice). (A variable:
// tests raise it to check every real input on the checksum path.)
var quickBlock int64 = 2 << 10

// quickMost is the most decoded bytes a block may hold on average for its
// array to take the checksum path: twice quickBlock when a Tap sums the
// array's blocks as the rewrite reads them (tapped), since the exact path
// would then read the input again and the checksum path reads none. Run
// on an openPMD series of 8^3 float64 blocks (4 KiB) and float32 ones
// (2 KiB), 442,368 in all, interleaved in their sub-files: 0.88x the time
// and 0.84x the CPU with the float64 arrays on the checksum path too (the
// exact path read 1.3x the input's bytes again); on 32^3 blocks (issue
// 19's BP4 input) the checksum path took 1.05x the time and 1.11x the CPU.
func quickMost(tapped bool) int64 {
	if tapped {
		return 2 * quickBlock
	}
	return quickBlock
}

// maxCells bounds the cells of disjoint's grid (bits: 16 MiB).
const maxCells = 1 << 27

// quickMember is a member on the checksum path.
type quickMember struct {
	m        *member
	f        *field
	rs       rowSteps
	fill     uint64 // phi of the recorded fill (0: none recorded, no holes)
	mu       sync.Mutex
	in, out  uint64
	credited int64 // bytes reported to the progress
	tables   []*blockTable
	holes    int64     // elements no block covers
	tap      *tapArray // the blocks summed during the rewrite (tap.go), or nil
}

// maxTables bounds the block tables of an array: the counts of its
// blocks first met (a tiling has a few: the blocks inside, the edges).
const maxTables = 4

// blockTables makes the tables of the first maxTables counts of a's
// blocks of at most maxTable elements.
func blockTables(a *catalog.Array, f *field, rs rowSteps) []*blockTable {
	var ts []*blockTable
	for i := range a.Blocks {
		c := a.Blocks[i].Box.Count
		if n := a.Blocks[i].Box.Elements(); n == 0 || n > maxTable || tableOf(ts, c) != nil {
			continue
		}
		ts = append(ts, f.blockTable(c, rs))
		if len(ts) == maxTables {
			break
		}
	}
	return ts
}

// tableOf is the table of ts for blocks of count c, or nil.
func tableOf(ts []*blockTable, c []int64) *blockTable {
	for _, t := range ts {
		if slices.Equal(t.count, c) {
			return t
		}
	}
	return nil
}

// quickable reports whether m can take the checksum path: blocks of at
// most limit decoded and stored bytes, disjoint, holes filled; holes is
// the elements no block covers.
func (r *run) quickable(m *member, limit int64) (holes int64, ok bool) {
	if r.opts.Exact || !smallBlocks(m.a, limit, quickMost(r.opts.Tap.of(m.a) != nil)) {
		return 0, false
	}
	covered, ok := disjoint(m.a, maxCells)
	if !ok || covered < m.a.Elements() && m.recorded == nil {
		return 0, false
	}
	return m.a.Elements() - covered, true
}

// smallBlocks reports whether a's blocks are small enough for the
// checksum path: at most most decoded bytes on average (quickMost), each
// at most limit stored and decoded, in an array of a type with a field and
// indexes the tables reach.
func smallBlocks(a *catalog.Array, limit, most int64) bool {
	size := int64(a.DType.Size)
	if len(a.Shape) == 0 || !quickSize(int(size)) || a.Elements() >= maxIndex {
		return false
	}
	var held, blocks int64 // the blocks' elements: a partly covered array's blocks are no larger
	for i := range a.Blocks {
		b := &a.Blocks[i]
		if b.Box.Elements() == 0 {
			continue
		}
		held += b.Box.Elements()
		blocks++
		n := size
		for _, c := range b.StoredShape() {
			n *= c
		}
		if b.Length > limit || n > limit {
			return false
		}
	}
	return blocks > 0 && held*size/blocks <= most
}

// disjoint reports whether no element of a is covered by two of its
// blocks (ok false too when that cannot be told on a grid of at most
// maxBits cells), and the elements they cover. The grid's cells are the
// greatest common divisor of the blocks' lowers and counts in each
// dimension: each block is then a box of whole cells, and two blocks meet
// exactly when they share a cell.
func disjoint(a *catalog.Array, maxBits int64) (covered int64, ok bool) {
	rank := len(a.Shape)
	grain := make([]int64, rank)
	for i := range a.Blocks {
		b := &a.Blocks[i]
		if b.Box.Elements() == 0 {
			continue
		}
		for d, g := range grain {
			if l, c := b.Box.Lower[d], b.Box.Count[d]; g == 0 || l%g != 0 || c%g != 0 { // mostly they divide: no gcd
				grain[d] = gcd(gcd(g, l), c)
			}
		}
	}
	cells := make([]int64, rank)
	stride := make([]int64, rank)
	n := int64(1)
	for d := rank - 1; d >= 0; d-- {
		if grain[d] == 0 { // no block covers anything
			return 0, true
		}
		cells[d] = (a.Shape[d] + grain[d] - 1) / grain[d]
		stride[d] = n
		if n *= cells[d]; n > maxBits {
			return 0, false
		}
	}
	set := make([]uint64, (n+63)/64)
	catalog.Populate(set)
	last := rank - 1
	lo, hi, c := make([]int64, rank), make([]int64, rank), make([]int64, rank)
	for i := range a.Blocks {
		b := &a.Blocks[i]
		if b.Box.Elements() == 0 {
			continue
		}
		covered += b.Box.Elements()
		for d := range rank {
			lo[d] = b.Box.Lower[d] / grain[d]
			hi[d] = (b.Box.Lower[d] + b.Box.Count[d]) / grain[d]
		}
		copy(c, lo)
		for {
			var off int64
			for d := range last {
				off += c[d] * stride[d]
			}
			if anyBits(set, off+lo[last], off+hi[last]) {
				return 0, false
			}
			setBits(set, off+lo[last], off+hi[last])
			d := last - 1
			for ; d >= 0; d-- {
				if c[d]++; c[d] < hi[d] {
					break
				}
				c[d] = lo[d]
			}
			if d < 0 {
				break
			}
		}
	}
	return covered, true
}

// anyBits reports whether any of bits [lo, hi) of v is set.
func anyBits(v []uint64, lo, hi int64) bool {
	for ; lo < hi && lo%64 != 0; lo++ {
		if v[lo/64]>>(lo%64)&1 != 0 {
			return true
		}
	}
	for ; hi-lo >= 64; lo += 64 {
		if v[lo/64] != 0 {
			return true
		}
	}
	for ; lo < hi; lo++ {
		if v[lo/64]>>(lo%64)&1 != 0 {
			return true
		}
	}
	return false
}

// quick verifies the members of ms that can take the checksum path,
// within share bytes: the verified ones (and those that stop at an error
// of their output) go to done; the others are returned, fresh, for the
// exact path (jointData). An error stops them all.
func (r *run) quick(ctx context.Context, ms []*member, share int64, done func(*member, error)) ([]*member, error) {
	limit := share / int64(4*r.opts.Jobs)
	// Each member looked at on its own core (its blocks' sizes, grid and
	// tables: CPU per block, before any band is read).
	each := make([]*quickMember, len(ms))
	var wg sync.WaitGroup
	for i, m := range ms {
		wg.Go(func() {
			holes, ok := r.quickable(m, limit)
			if !ok {
				return
			}
			f := r.fields.of(int(m.size))
			q := &quickMember{m: m, f: f, rs: f.rowSteps(m.a.Shape), holes: holes}
			q.tables = blockTables(m.a, f, q.rs)
			if m.recorded != nil {
				q.fill = f.phi(m.recorded)
			}
			if q.tap = r.opts.Tap.of(m.a); q.tap != nil {
				for j := range m.a.Blocks { // counted as if read here
					if q.tap.has(j) {
						r.count(m.a, &m.a.Blocks[j])
					}
				}
			}
			each[i] = q
		})
	}
	wg.Wait()
	var qs []*quickMember
	var exact []*member
	for i, q := range each {
		if q == nil {
			exact = append(exact, ms[i])
		} else {
			qs = append(qs, q)
		}
	}
	if len(qs) == 0 {
		return exact, nil
	}
	defer func() {
		for _, q := range qs {
			r.finish(q.m)
		}
	}()
	// Each member's bands as it would get alone, its share of the group's.
	capacity := share
	for _, q := range qs {
		m := q.m
		perBand, cache := r.jointRows(&group{members: []*member{m}}, share/int64(len(qs)))
		m.bands(perBand)
		if err := m.open(cache[0]); err != nil {
			return nil, err
		}
		capacity -= m.bandMem(perBand) + max(cache[0], 0)
	}
	mem := membudget.Overcommit(capacity)
	defer func() { peak(&r.stats.peakMem, mem.Peak()) }()
	for _, q := range qs {
		r.launch(ctx, q.m)
	}
	eg, gctx := errgroup.WithContext(ctx)
	for _, q := range qs {
		eg.Go(func() error { return r.quickOutput(gctx, q) })
	}
	r.quickInput(gctx, eg, qs, mem)
	if err := eg.Wait(); err != nil {
		return nil, err
	}
	for _, q := range qs {
		m := q.m
		r.finish(m)
		in := q.in
		if q.tap != nil { // the tapped blocks' terms, the fill's share taken off
			in = fold(in + q.tap.raw + mersenne61 - reduce(mul(q.fill, q.tap.cover)))
		}
		want := fold(in + mul(q.fill, q.f.geo(m.a.Elements())))
		if reduce(q.out) == reduce(want) {
			r.stats.checksummed.Add(1)
			r.stats.holes.Add(q.holes) // counted once: an array compared again counts its own
			done(m, r.digest(m.k, m.ref, m.h))
			continue
		}
		// A difference somewhere: the exact path finds the first.
		r.stats.rechecked.Add(1)
		fresh, err := r.openMember(m.a, m.ref, m.f)
		if err != nil || fresh == nil {
			done(m, err)
			continue
		}
		fresh.v, fresh.seq, fresh.credit = m.v, m.seq, q.credited
		exact = append(exact, fresh)
	}
	return exact, nil
}

// quickOutput reads q's bands through its pipeline (launch) and sums
// their polynomials, each band then hashed.
func (r *run) quickOutput(ctx context.Context, q *quickMember) error {
	m := q.m
	rowElems := m.rowBytes / m.size
	for bi := range m.nb {
		if err := m.output(ctx); err != nil {
			return err
		}
		t0 := time.Now()
		band := m.bandOf(bi)
		q.out = fold(q.out + mul(q.f.poly(m.out, int(m.size)), q.f.powX(band.Lower[0]*rowElems)))
		r.stats.compareNs.Add(int64(time.Since(t0)))
		r.stats.bands.Add(1)
		select {
		case m.hashq <- m.out:
		case <-ctx.Done():
			return ctx.Err()
		}
		m.out = nil
		n := band.Elements() * m.size
		q.credited += n
		r.progress(m.a.Var, n)
	}
	return nil
}

// quickEntry is one block of a member, in the input pass's file order.
type quickEntry struct{ m, i int32 }

// quickInput starts on eg the input pass over every block of qs's
// members: in file order, cut into parts of about batchRead bytes, a
// Jobs token each.
func (r *run) quickInput(ctx context.Context, eg *errgroup.Group, qs []*quickMember, mem *membudget.Budget) {
	order := quickOrder(qs)
	blocks := make([]*catalog.Block, len(order))
	for k, e := range order {
		blocks[k] = &qs[e.m].m.a.Blocks[e.i]
	}
	// Parts of batchRead bytes, fewer when Jobs of them would not fit.
	partBytes := max(min(batchRead, mem.Capacity()/int64(2*r.opts.Jobs)), 64<<10)
	var parts []int // where each part starts
	var n int64
	for k, b := range blocks {
		if k == 0 || n >= partBytes {
			parts = append(parts, k)
			n = 0
		}
		n += b.Length
	}
	parts = append(parts, len(blocks))
	eg.Go(func() error {
		for p := 0; p+1 < len(parts); p++ {
			if err := r.work(ctx); err != nil {
				return err
			}
			if p+2 < len(parts) {
				r.src.Prefetch(ctx, blocks[parts[p+1]:parts[p+2]])
			}
			lo, hi := parts[p], parts[p+1]
			eg.Go(func() error {
				defer r.rest()
				return r.quickPart(ctx, qs, order[lo:hi], blocks[lo:hi], partBytes, mem)
			})
		}
		return nil
	})
}

// quickOrder lists the blocks of qs's members that hold elements and
// were not summed during the rewrite (quickMember.tap) in file order:
// file by file (by name), each member's blocks (mostly in order already)
// merged by offset.
func quickOrder(qs []*quickMember) []quickEntry {
	byFile := map[string][][]quickEntry{} // file -> one run per member
	for mi, q := range qs {
		a := q.m.a
		file, run := "", -1
		for i := range a.Blocks {
			b := &a.Blocks[i]
			if b.Box.Elements() == 0 || q.tap != nil && q.tap.has(i) {
				continue
			}
			if run < 0 || b.File != file {
				runs := byFile[b.File]
				if len(runs) == 0 || runs[len(runs)-1][0].m != int32(mi) {
					runs = append(runs, nil)
				}
				byFile[b.File] = runs
				file, run = b.File, len(runs)-1
			}
			byFile[file][run] = append(byFile[file][run], quickEntry{int32(mi), int32(i)})
		}
	}
	offset := func(e quickEntry) int64 { return qs[e.m].m.a.Blocks[e.i].Offset }
	byOffset := func(x, y quickEntry) int { return cmp.Compare(offset(x), offset(y)) }
	files := slices.Sorted(maps.Keys(byFile))
	merged := make([][]quickEntry, len(files))
	var wg sync.WaitGroup
	for fi, file := range files { // each file's on a core of its own
		wg.Go(func() {
			runs := byFile[file]
			n := 0
			for _, run := range runs {
				if !slices.IsSortedFunc(run, byOffset) {
					slices.SortStableFunc(run, byOffset)
				}
				n += len(run)
			}
			// Merge the runs (a few: one per member) by offset.
			out := make([]quickEntry, 0, n)
			heads := make([]int, len(runs))
			for {
				best := -1
				for ri, run := range runs {
					if heads[ri] < len(run) && (best < 0 || offset(run[heads[ri]]) < offset(runs[best][heads[best]])) {
						best = ri
					}
				}
				if best < 0 {
					break
				}
				out = append(out, runs[best][heads[best]])
				heads[best]++
			}
			merged[fi] = out
		})
	}
	wg.Wait()
	return slices.Concat(merged...)
}

// quickPart reads one part of the input pass and adds each block's term
// to its member's input sum.
func (r *run) quickPart(ctx context.Context, qs []*quickMember, part []quickEntry, blocks []*catalog.Block, partBytes int64, mem *membudget.Budget) error {
	var raw, decoded, limit int64
	dts := make([]catalog.DType, len(part))
	for k, e := range part {
		b := blocks[k]
		dts[k] = qs[e.m].m.a.DType
		raw += b.Length
		limit = max(limit, b.Length)
		if len(b.Codecs) != 0 || b.Inline() != nil {
			decoded = max(decoded, newPlacement(b, dts[k]).storedBytes())
		}
	}
	limit = max(limit, min(raw, partBytes)) // a coalesced read: at most the part, at least a block
	if err := mem.Acquire(ctx, limit+decoded); err != nil {
		return err
	}
	defer mem.Release(limit + decoded)
	rank := len(qs[0].m.a.Shape) // a joint group's members share their shape
	g, wts := make([]int64, rank), make([]uint64, rank)
	sums := make([]uint64, len(qs))
	var scratch []byte
	var ar intArena
	var strides [8]int64
	at, err := r.readInput(ctx, catalog.Reads{Blocks: blocks, DTypes: dts, Limit: limit}, func(k int, data []byte) error {
		e, b := part[k], blocks[k]
		q := qs[e.m]
		ar.chunk = strides[:] // p lives for this call: its strides are reused
		p := placementIn(b, dts[k], &ar)
		r.count(q.m.a, b)
		var term uint64
		if bt := tableOf(q.tables, b.Box.Count); bt != nil && storedAsRegion(p, b.Box) {
			term = q.f.tableSum(bt, data, q.fill, q.rs, b.Box.Lower)
		} else {
			var fillTerm uint64
			if q.fill != 0 {
				fillTerm = reduce(mul(q.fill, q.f.geo(b.Box.Count[rank-1])))
			}
			term, scratch = q.f.blockSum(p, data, fillTerm, q.rs, scratch, g, wts)
		}
		sums[e.m] = fold(sums[e.m] + term)
		return nil
	})
	if err != nil {
		return fmt.Errorf("verify: input %s: %w", where(qs[part[at].m].m.k), err)
	}
	for mi, s := range sums {
		if s != 0 {
			q := qs[mi]
			q.mu.Lock()
			q.in = fold(q.in + s)
			q.mu.Unlock()
		}
	}
	return nil
}
