package verify

import (
	"context"
	"sort"

	"golang.org/x/sync/errgroup"

	"relayout/catalog"
	"relayout/internal/membudget"
)

// Batched fetches: the blocks of a band read whole (or by their rows of
// the band), of every array of its joint group (joint.go), go to a
// catalog.Source.ReadBlocks in file order, a few lists of neighbours at once, so
// that many small blocks cost a few coalesced reads and no goroutine,
// buffer or budget request each:
//
//	band's blocks (file order)  b0 b1 b2 b3 | b4 b5 b6 b7 | ...   (one part per job)
//	part: one Acquire (run limit + largest decoded codec block),
//	      segments: ReadBlocks -> fn(block bytes) -> its array's
//	      stage or placement.compare
//
// A part is read in segments cut where the bytes between two of its
// blocks hold more than a few KiB of another band's (the group's blocks,
// or the rows of a block the band leaves out): coalescing through them
// would read those bytes again with their own band. Blocks spanning several bands that cannot be
// cut by rows keep the per-block path (the block cache).

// batchRead caps one coalesced read of a part (bytes).
const batchRead = 4 << 20

// batched is one block of a band's batch: the block to read (b, or its
// rows of the band), the region of the band it is compared over, its
// placement, its member in the group and its index in that member's
// batch (the stage's numbering).
type batched struct {
	b      *catalog.Block
	region catalog.Box
	p      placement
	m, k   int
}

// batches starts on eg the reads and comparisons of batch (the band's
// blocks of every member, in file order), cut into at most Jobs parts of
// neighbouring blocks. Blocks a member's stage holds are placed there
// instead of compared.
func (r *run) batches(ctx context.Context, eg *errgroup.Group, g *group, band catalog.Box, batch []batched, stages []*staging, mem *membudget.Budget) {
	if len(batch) == 0 {
		return
	}
	var total int64
	for _, e := range batch {
		total += e.b.Length
	}
	parts := min(r.opts.Jobs, len(batch))
	per := max(total/int64(parts), 1)
	for lo := 0; lo < len(batch); {
		hi, n := lo, int64(0)
		for hi < len(batch) && (hi == lo || n < per) {
			n += batch[hi].b.Length
			hi++
		}
		part := batch[lo:hi]
		lo = hi
		eg.Go(func() error { return r.part(ctx, g, band, part, stages, mem) })
	}
}

// part reads the blocks of part, segment by segment (see split), and
// compares each with its member's band, or places it in its stage.
func (r *run) part(ctx context.Context, g *group, band catalog.Box, part []batched, stages []*staging, mem *membudget.Budget) error {
	if err := r.work(ctx); err != nil {
		return err
	}
	defer r.rest()
	// The budget: the largest coalesced read and the largest decoded block
	// of a codec (raw blocks are slices of the read).
	var raw, decoded int64
	for _, e := range part {
		raw += e.b.Length
		if len(e.b.Codecs) != 0 || e.b.Inline() != nil {
			decoded = max(decoded, e.p.storedBytes())
		}
	}
	limit := min(raw, batchRead)
	for _, e := range part {
		limit = max(limit, e.b.Length) // a run holds at least one block
	}
	n := limit + decoded
	if err := mem.Acquire(ctx, n); err != nil {
		return err
	}
	defer mem.Release(n)
	scratch := make([]int64, len(band.Lower)) // the stages' index
	blocks := make([]*catalog.Block, 0, len(part))
	dts := make([]catalog.DType, 0, len(part))
	for lo := 0; lo < len(part); {
		hi := lo + 1
		for hi < len(part) && !g.split(&part[hi-1], &part[hi]) {
			hi++
		}
		seg := part[lo:hi]
		lo = hi
		blocks, dts = blocks[:0], dts[:0]
		for _, e := range seg {
			blocks = append(blocks, e.b)
			dts = append(dts, g.members[e.m].a.DType)
		}
		at, err := r.readInput(ctx, catalog.Reads{Blocks: blocks, DTypes: dts, Limit: limit}, func(k int, data []byte) error {
			e := &seg[k]
			if st := stages[e.m]; st != nil && st.plan.at[e.k] >= 0 {
				st.plan.place(st.plan.at[e.k], e.p, e.region, data, st.buf, scratch)
			} else if mm := e.p.compare(data, e.region, band, g.members[e.m].out); mm != nil {
				g.members[e.m].first.keep(mm)
			}
			return nil
		})
		if err != nil {
			return g.inputErr(seg[at].m, err)
		}
	}
	return nil
}

// extent is the bytes [start, end) of a block in its file, and the first
// index of its box along dimension 0.
type extent struct{ start, end, row int64 }

// split reports whether a segment ends between x and y (neighbours in
// file order): another file, or the bytes between them hold more than
// maxForeign bytes of the group's blocks (whole: a block cut by rows
// leaves its other rows there).
func (g *group) split(x, y *batched) bool {
	if x.b.File != y.b.File || x.b.Inline() != nil || y.b.Inline() != nil {
		return true
	}
	lo, hi := x.b.Offset+x.b.Length, y.b.Offset
	if hi <= lo {
		return false
	}
	// The group's bytes in [lo, hi): the extents starting before hi
	// (extents of one file are disjoint: they end in the same order),
	// back to the first that ends by lo.
	ext := g.extents[x.b.File]
	var foreign int64
	for i := sort.Search(len(ext), func(i int) bool { return ext[i].start >= hi }) - 1; i >= 0 && ext[i].end > lo; i-- {
		if foreign += min(ext[i].end, hi) - max(ext[i].start, lo); foreign > maxForeign {
			return true
		}
	}
	return false
}

// maxForeign is the most bytes of the group's other bands a segment reads
// through rather than ending (and its next costing a request): a block's
// other rows when bands are thinner than blocks, a small block between
// two. On bp4's 8^3 blocks in 4-row bands (--max-mem 64MiB), ending at
// every such gap cost 208,424 reads of 1.4 KiB.
const maxForeign = 8 << 10
