package verify

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"golang.org/x/sync/errgroup"

	"relayout/catalog"
	"relayout/internal/h5"
	"relayout/internal/membudget"
)

// Arrays whose blocks interleave in the input. ADIOS2 writers (BP4/BP5,
// through aggregators) store every variable of a step block by block, rank
// after rank, in the same sub-file regions:
//
//	data.0: |Bx rho id Ez|Bx rho id Ez|Bx rho id Ez|...
//	Bx's band alone reads  |Bx.rho.id.Ez.Bx.rho...|   (gaps: the others' blocks)
//	rho's band alone reads   |rho.id.Ez.Bx.rho.id...|  (the same bytes again)
//
// Verified one array at a time, each band's coalesced reads fetch the
// other arrays' bytes too (3.5x the stored bytes on 4 variables of 256^3
// in 8^3 blocks). So the arrays of one step, level and shape (the same
// writers' regions) are verified together, as a joint group: the same
// bands (rows along dimension 0) of every member at once, the band's
// blocks of all members read in one pass in file order
// (one ReadBlocks call over several arrays, batch.go), each block placed into its own
// array's stage or compared with its own array's output band; each member
// keeps its own output reads (HDF5), comparison, holes, hash and first
// difference:
//
//	band 0:  Bx rows 0-31   rho rows 0-31   id rows 0-31   <- one read pass
//	band 1:  Bx rows 32-63  rho rows 32-63  id rows 32-63  <- one read pass
//
// A member that differs stops; the others go on. A group holds up to
// maxJoint members whose bands of one row fit its share of the budget; a
// group takes one in-flight slot per member (at most all of them) and
// their shares.

// maxJoint bounds the members of a joint group.
const maxJoint = 16

// minRead is the mean read a joint group's bands are grown towards (see
// jointRows): reads of a few blocks each cost a request per few KiB.
const minRead = 256 << 10

// jointKey names the joint group of an array header: its step, level and
// shape ("" for arrays verified alone: scalars and constant records).
func jointKey(a *catalog.Array) string {
	if len(a.Shape) == 0 || a.Constant {
		return ""
	}
	return fmt.Sprint(a.Step, " ", a.Level, " ", a.Shape)
}

// group is the members verified together, band after band.
type group struct {
	members []*member
	extents map[string][]extent // every member's blocks by file, by start
}

// inputErr is err of an input read of member i.
func (g *group) inputErr(i int, err error) error {
	var diff *difference
	if errors.As(err, &diff) {
		return err
	}
	return fmt.Errorf("verify: input %s: %w", where(g.members[i].k), err)
}

// jointRows is the rows of the group's bands and the chunk row each member
// caches, for share bytes. The bands are those one array would get, for
// the group's rows together (a row of every member); then, for a group of
// several, rounded to the blocks' common row grain and doubled while
// their reads average less than minRead and the bands stay within a
// quarter of the share.
func (r *run) jointRows(g *group, share int64) (perBand int64, cacheBytes []int64) {
	ms := g.members
	n := int64(len(ms))
	var rowBytes, thick int64
	small := false
	for _, m := range ms {
		rowBytes += m.rowBytes
		if m.small() {
			small = true
			thick = max(thick, m.blockRows())
		}
	}
	bandBytes := min(max(share/10, rowBytes), max(n*maxBand, rowBytes))
	if small {
		// Many small blocks: smaller bands keep the band's stage
		// (order.go) and its output in cache-sized buffers, but at least
		// a block thick (thinner bands stage every block again for each
		// band it spans: 448^3 in 32^3 blocks, one-row bands of 1.6 MB,
		// run 1.14x the time of 5-row ones) and at most what they were
		// before (smallBandMax).
		bandBytes = min(bandBytes, max(n*smallBand, thick*rowBytes, rowBytes), max(n*smallBandMax, rowBytes))
	}
	perBand = max(bandBytes/rowBytes, 1)
	chunks := int64(1) // rows of whole chunks of every chunked member
	for _, m := range ms {
		if c0, _ := m.chunkRows(); c0 > 0 && chunks <= ms[0].rows {
			chunks = lcm(chunks, c0)
		}
	}
	if chunks > 1 && perBand >= chunks {
		perBand = perBand / chunks * chunks // whole chunk rows: each chunk decoded once
	}
	if n > 1 {
		perBand = g.grow(perBand, chunks, share/4)
	}
	return perBand, chunkCaches(ms, perBand, share)
}

// uncachedChunk is the chunk size from which unfiltered chunks are read
// uncached (chunkCaches).
const uncachedChunk = 256 << 10

// chunkCaches is the chunk cache of each member (bytes; 0: the library's
// default; h5.NoChunkCache: none) for bands of perBand rows within share
// bytes. A band inside a chunk row (perBand not a multiple of the chunk's
// rows) meets every chunk of the row. A filtered (compressed) chunk must
// be decoded whole: unless its row stays cached, the library decodes each
// chunk again for every band meeting it (issue 19's 448^3 float64 in 112^3
// deflate chunks, bands of 5 rows: each chunk inflated 23 times, 36 s of
// user CPU, when its 180 MB row missed the quarter of the share it was
// allowed), so filtered rows are cached first, while they fit with the
// bands and leave a quarter of the share to the input blocks; a filtered
// row beyond that is decoded once per band meeting it. Unfiltered chunks
// of uncachedChunk bytes or more are not cached at all: the library reads
// each band's part of every chunk straight from the file, a chunk column
// at a time (h5.SlabReader), where a cached row cost every chunk a fresh
// allocation and a second copy (issue 19's BP4 input at --layout auto,
// 50^3 float64 chunks of 1 MB, 81 MB rows cached: relayout verify 3.65 s,
// uncached 1.80 s). Smaller unfiltered chunks (a read per chunk column
// would be a library call each) keep their rows cached while all the
// caches fit a quarter.
func chunkCaches(ms []*member, perBand, share int64) []int64 {
	cacheBytes := make([]int64, len(ms))
	var cached, bands int64
	for _, m := range ms {
		bands += m.bandMem(perBand)
	}
	for _, filtered := range []bool{true, false} {
		limit := share / 4
		if filtered {
			limit = share - share/4 - bands
		}
		for i, m := range ms {
			c0, chunkRow := m.chunkRows()
			if c0 == 0 || perBand%c0 == 0 || (len(m.info.Filters) > 0) != filtered {
				continue
			}
			switch {
			case !filtered && m.chunkBytes() >= uncachedChunk:
				cacheBytes[i] = h5.NoChunkCache
			case cached+chunkRow <= limit:
				cacheBytes[i] = chunkRow
				cached += chunkRow
			}
		}
	}
	return cacheBytes
}

// grow rounds perBand to the row grain of the members' blocks (the
// greatest common divisor of their lowers and counts along dimension 0:
// no block then spans two bands) and of their chunk rows (chunks), and
// doubles it while the group's reads would average less than minRead and
// its bands of perBand rows (output buffers and stages) hold at most limit
// bytes. Bands smaller than the grain grow to the next divisor of it.
func (g *group) grow(perBand, chunks, limit int64) int64 {
	ms := g.members
	var grain int64
	for _, m := range ms {
		for i := range m.a.Blocks {
			if b := &m.a.Blocks[i]; b.Box.Elements() > 0 {
				grain = gcd(gcd(grain, b.Box.Lower[0]), b.Box.Count[0])
			}
		}
	}
	if grain <= 0 || grain > ms[0].rows {
		return perBand
	}
	grain = lcm(grain, chunks)
	mem := func(rows int64) int64 {
		var n int64
		for _, m := range ms {
			n += m.bandMem(rows) + rows*m.rowBytes // the stage at most
		}
		return n
	}
	if perBand >= grain {
		perBand = perBand / grain * grain
	} else {
		// Bands inside a row of blocks: the next divisor of the grain, so
		// that each block is cut into whole pieces (a read each: blocks
		// cut by rows are read apart), fewer of them.
		d := perBand
		for grain%d != 0 {
			d++
		}
		if mem(d) > limit {
			return perBand
		}
		if perBand = d; d < grain {
			return perBand
		}
	}
	rows := ms[0].rows
	for perBand < rows && mem(2*perBand) <= limit && g.meanRead(perBand) < minRead {
		perBand *= 2
	}
	return perBand
}

// meanRead is the mean read of the group's blocks (none spanning two
// bands of perBand rows) read band by band: a read ends where the next
// block in the file is of another band (split), more than
// catalog.CoalesceGap away, or batchRead on.
func (g *group) meanRead(perBand int64) int64 {
	var bytes, calls int64
	for _, ext := range g.extents {
		var start, end int64
		prev := int64(-1)
		for _, e := range ext {
			band := e.row / perBand
			if band != prev || e.start-end > catalog.CoalesceGap || e.end-start > batchRead {
				calls++
				start = e.start
			}
			bytes += e.end - e.start
			prev, end = band, e.end
		}
	}
	return bytes / max(calls, 1)
}

// indexExtents fills g.extents: each member's extents by file on a
// goroutine of its own (blocks come in runs of one file: a map lookup per
// run, not per block), then each file's, every member's together, sorted
// on its own. On 351,537 blocks, one loop over the members' blocks and one
// sort after it were a tenth of a second before the first band was read.
func (g *group) indexExtents() {
	per := make([]map[string][]extent, len(g.members))
	var wg sync.WaitGroup
	for mi, m := range g.members {
		wg.Go(func() { per[mi] = m.extents() })
	}
	wg.Wait()
	for _, files := range per {
		for f, ext := range files {
			g.extents[f] = append(g.extents[f], ext...)
		}
	}
	for _, ext := range g.extents {
		wg.Go(func() { slices.SortFunc(ext, func(x, y extent) int { return cmp.Compare(x.start, y.start) }) })
	}
	wg.Wait()
}

// extents are the byte ranges of m's blocks by file, in m's block order.
func (m *member) extents() map[string][]extent {
	files := map[string][]extent{}
	file, cur := "", []extent(nil)
	for i := range m.a.Blocks {
		b := &m.a.Blocks[i]
		if b.Inline() != nil || b.Length <= 0 {
			continue
		}
		if b.File != file || cur == nil {
			if cur != nil {
				files[file] = cur
			}
			file, cur = b.File, files[b.File]
		}
		e := extent{start: b.Offset, end: b.Offset + b.Length}
		if m.rank > 0 {
			e.row = b.Box.Lower[0]
		}
		cur = append(cur, e)
	}
	if cur != nil {
		files[file] = cur
	}
	return files
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

func lcm(a, b int64) int64 { return a / gcd(a, b) * b }

// jointData compares the elements of the group's members band by band
// within share bytes; done receives each member's outcome once (nil, a
// difference, or an error). An error stops them all.
func (r *run) jointData(ctx context.Context, ms []*member, share int64, done func(*member, error)) error {
	if len(ms) > 1 {
		r.stats.joint.Add(int64(len(ms)))
		for _, m := range ms {
			m.nbuf = 2
		}
	}
	g := &group{members: ms, extents: map[string][]extent{}}
	g.indexExtents()
	perBand, cacheBytes := r.jointRows(g, share)
	capacity := share
	for i, m := range ms {
		capacity -= m.bandMem(perBand) + max(cacheBytes[i], 0)
	}
	mem := membudget.Overcommit(capacity)
	defer func() { peak(&r.stats.peakMem, mem.Peak()) }()
	defer func() {
		for _, m := range ms {
			r.finish(m)
			if m.cache != nil {
				m.cache.drop(mem)
			}
		}
	}()
	// Each member's blocks cut into bands on their own cores, its output
	// opened, and only then the output reads started: an H5Dread holds
	// the library's lock, which the next member's open would wait for.
	var indexing sync.WaitGroup
	for _, m := range ms {
		indexing.Go(func() { m.index(perBand) })
	}
	indexing.Wait()
	for i, m := range ms {
		if err := m.open(cacheBytes[i]); err != nil {
			return err
		}
	}
	for _, m := range ms {
		r.launch(ctx, m)
	}
	nb := ms[0].nb
	// The next band's prep, made beside this one's reads and comparisons.
	prep := make(chan *bandPrep, 1)
	pending := false
	startPrep := func(bi int) {
		live := make([]bool, len(ms))
		for mi, m := range ms {
			live[mi] = !m.over
		}
		pending = true
		go func() { prep <- r.prepBand(g, bi, live) }()
	}
	defer func() {
		if pending {
			<-prep // not left running on members being finished
		}
	}()
	if nb > 0 {
		startPrep(0)
	}
	for bi := range nb {
		live := 0
		for _, m := range ms {
			if !m.over {
				live++
				if err := m.output(ctx); err != nil {
					return err
				}
			}
		}
		if live == 0 {
			break
		}
		if bi+1 < nb {
			// Announce the blocks the next band starts to the kernel.
			var next []*catalog.Block
			for _, m := range ms {
				if m.over {
					continue
				}
				start := m.bandOf(bi + 1).Lower
				for _, i := range m.byBand[bi+1] {
					if b := &m.a.Blocks[i]; m.rank == 0 || b.Box.Lower[0] >= start[0] {
						next = append(next, b)
					}
				}
			}
			r.src.Prefetch(ctx, next)
		}
		r.stats.bands.Add(int64(live))
		bp := <-prep
		pending = false
		if bi+1 < nb {
			startPrep(bi + 1)
		}
		if err := r.jointBand(ctx, g, bp, mem); err != nil {
			return err
		}
		for _, m := range ms {
			if m.over {
				continue
			}
			if err := r.bandDone(m, bi); err != nil {
				var diff *difference
				if !errors.As(err, &diff) {
					return err
				}
				m.over = true
				r.finish(m)
				done(m, err)
			}
		}
	}
	for _, m := range ms {
		if !m.over {
			m.over = true
			r.finish(m)
			done(m, r.digest(m.k, m.ref, m.h))
		}
	}
	return nil
}

// bandPrep is what a band needs before its blocks are read: each live
// member's blocks cut to the band, those read in one pass (batch, merged
// into file order) with their stage plans (order.go; nil: none), and
// those read apart (rest). Preparing costs CPU per block (the cuts, the
// plans' sorts, the merge), so jointData prepares the next band while the
// current one is read and compared.
type bandPrep struct {
	band  catalog.Box
	live  []bool // the members prepared
	batch []batched
	plans []*stagePlan
	rest  [][]int
}

// prepBand prepares band bi of g's members that are live (a snapshot of
// !over: a member that stops meanwhile is skipped by jointBand). It reads
// only what start set (the members' blocks, bands and spans): safe beside
// jointBand.
func (r *run) prepBand(g *group, bi int, live []bool) *bandPrep {
	bp := &bandPrep{live: live, plans: make([]*stagePlan, len(g.members)), rest: make([][]int, len(g.members))}
	n := 0
	for mi, m := range g.members {
		if live[mi] {
			n += len(m.byBand[bi])
		}
	}
	batch := make([]batched, 0, n)
	var ar intArena  // the entries' regions and strides
	var starts []int // where each member's entries start in batch
	for mi, m := range g.members {
		if !live[mi] {
			continue
		}
		bp.band = m.bandOf(bi)
		lo := len(batch) // the member's entries: batch[lo:] until merged
		starts = append(starts, lo)
		for _, i := range m.byBand[bi] {
			c := r.cut(m.a, i, bp.band, m.span[i], &ar)
			switch {
			case c.b == nil:
			case c.cache:
				bp.rest[mi] = append(bp.rest[mi], i)
			default:
				batch = append(batch, batched{b: c.b, region: c.region, p: placementIn(c.b, m.a.DType, &ar), m: mi, k: len(batch) - lo})
			}
		}
		bp.plans[mi] = planStage(batch[lo:], bp.band, m.a.DType)
	}
	bp.batch = mergeRuns(batch, starts)
	return bp
}

// jointBand compares band bi (prepared: bp) of every live member of g with
// its output band (m.out); each member's first difference goes to m.first.
func (r *run) jointBand(ctx context.Context, g *group, bp *bandPrep, mem *membudget.Budget) error {
	eg, gctx := errgroup.WithContext(ctx)
	eg.SetLimit(r.opts.Jobs)
	stages := make([]*staging, len(g.members))
	defer func() {
		for _, st := range stages {
			st.drop(mem)
		}
	}()
	band := bp.band
	stopped := false // a member prepared live has stopped since
	for mi, m := range g.members {
		if m.over {
			stopped = stopped || bp.live[mi]
			continue
		}
		var err error
		if stages[mi], err = r.newStaging(ctx, bp.plans[mi], mem); err != nil {
			return err
		}
		for _, i := range bp.rest[mi] {
			eg.Go(func() error {
				// --jobs bounds the blocks in work over every array in flight.
				if err := r.work(gctx); err != nil {
					return err
				}
				defer r.rest()
				mm, err := r.block(gctx, m, i, band, mem)
				if err != nil {
					return g.inputErr(mi, err)
				}
				if mm != nil {
					m.first.keep(mm)
				}
				return nil
			})
		}
	}
	batch := bp.batch
	if stopped {
		batch = slices.DeleteFunc(slices.Clone(batch), func(e batched) bool { return g.members[e.m].over })
	}
	// One pass over the band's blocks of every member, in file order.
	r.batches(gctx, eg, g, band, batch, stages, mem)
	if err := eg.Wait(); err != nil {
		return err
	}
	for mi, st := range stages {
		if st != nil {
			m := g.members[mi]
			// Every small block is in the stage: compare it with the band.
			if err := r.compareStage(ctx, st, m.out, m.first.keep); err != nil {
				return err
			}
		}
	}
	return nil
}

// mergeRuns merges the runs of batch starting at starts, each in file
// order (its member's blocks), into one list in file order; a block of an
// earlier run goes first on a tie. (A merge, not a sort: a band holds tens
// of thousands of entries of a few members.)
func mergeRuns(batch []batched, starts []int) []batched {
	if len(starts) < 2 {
		return batch
	}
	heads := slices.Clone(starts)
	end := func(i int) int {
		if i+1 < len(starts) {
			return starts[i+1]
		}
		return len(batch)
	}
	out := make([]batched, 0, len(batch))
	for {
		best := -1
		for i, h := range heads {
			if h == end(i) {
				continue
			}
			if best < 0 || fileOrder(batch[h].b, batch[heads[best]].b) < 0 {
				best = i
			}
		}
		if best < 0 {
			return out
		}
		out = append(out, batch[heads[best]])
		heads[best]++
	}
}

// fileOrder orders blocks by file, then offset.
func fileOrder(x, y *catalog.Block) int {
	return cmp.Or(cmp.Compare(x.File, y.File), cmp.Compare(x.Offset, y.Offset))
}
