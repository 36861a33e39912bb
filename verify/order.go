package verify

import (
	"bytes"
	"cmp"
	"context"
	"math"
	"slices"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"relayout/catalog"
	"relayout/internal/membudget"
)

// Comparing many small blocks in output order. A band's small blocks
// arrive in file order, scattered over the band: an 8x8x8 float64 block is
// 64 rows of 64 bytes, each somewhere else in a band of tens of MiB, and
// comparing each block where it lands costs a cache (and TLB) miss per
// row. Instead, each small block of a band is placed, as it arrives, into
// a stage laid out in the order of the output, and the stage is compared
// with the output once all are in, both read front to back:
//
//	band (row-major)                 stage: group after group, row after row
//	+------+------+------+------+    +-----------------------------------+
//	|  b0  |  b1  |  b2  |  b3  |    | g0 row 0: b0 seg | b1 seg | b2 ...|
//	+------+------+------+------+    | g0 row 1: b0 seg | b1 seg | b2 ...|
//	|  b4  |  b5  |  b6  |  b7  |    | ...                               |
//	+------+------+------+------+    | g1 row 0: b4 seg | b5 seg | ...   |
//	                                 +-----------------------------------+
//	group: the blocks whose regions share lower and count in dimensions
//	0..r-2 (a block-row), by their lower in the last; a row: one index of
//	dimensions 0..r-2, holding each block's segment of it (little-endian,
//	ghost cells left out). Adjacent segments are one span of the output
//	row: one bytes.Equal per group row.
//
// One stage per band: the parts read the band's blocks in file order as
// before (few coalesced reads) and place their small blocks at disjoint
// places of the stage at once; when all are in, the stage is compared with
// the band in Jobs runs of groups. The stage (the bytes of the band's small
// blocks, ghost cells left out) is pinned in the array's budget; a band
// whose stage would not fit the budget compares its blocks where they land.
//
// Each group's rows are compared in row-major order, so a group's first
// difference is its smallest index; groups go to keep (the band's
// smallest wins), overlapping segments of a row each searched.

// stageBlock: blocks of at most this many decoded bytes are staged (a
// variable: tests lower it to mix staged and unstaged blocks in a band).
var stageBlock int64 = 256 << 10

// stagePlan lays out the small blocks of a band's batch in the stage in the order of
// the output: group after group (blocks whose regions share lower and
// count in dimensions 0..r-2, by their lower in the last), each group's
// rows one after the other, a row holding each block's segment of it in
// turn (elements little-endian, ghost cells left out). Placing a block
// there as it arrives is a copy of its rows; comparing a group is then
// one bytes.Equal per row, stage and output both read front to back.
type stagePlan struct {
	band       catalog.Box
	size       int64
	bandStride []int64
	groups     []stageGroup
	segs       []stageSeg
	at         []int // entry of the part -> its segment, or -1
	bytes      int64 // of the stage
}

// stageGroup is one group: rows of rowLen elements from byte base.
type stageGroup struct {
	region   catalog.Box // of its first segment (dimensions 0..r-2 shared)
	base     int64
	rowLen   int64
	segs     []int // its segments, by last-dimension lower
	adjacent bool  // each segment starts where the one before ends
}

// stageSeg is one block's part of its group's rows.
type stageSeg struct {
	group  int
	off    int64 // element offset in a row of the group
	p      placement
	region catalog.Box
}

// planStage plans the stage of the small blocks of a band's batch (part;
// none: nil).
func planStage(part []batched, band catalog.Box, dt catalog.DType) *stagePlan {
	rank := len(band.Lower)
	if rank == 0 || len(part) < 2 {
		return nil
	}
	last := rank - 1
	var cand []int
	for k, e := range part {
		if e.p.storedBytes() <= stageBlock { // regions are non-empty (Box.Intersect)
			cand = append(cand, k)
		}
	}
	if len(cand) < 2 {
		return nil
	}
	sp := &stagePlan{band: band, size: int64(dt.Size), bandStride: make([]int64, rank), at: make([]int, len(part)),
		segs: make([]stageSeg, 0, len(cand))}
	n := int64(1)
	for d := last; d >= 0; d-- {
		sp.bandStride[d] = n
		n *= band.Count[d]
	}
	sortRegions(cand, part, band, sp.bandStride)
	for k := range sp.at {
		sp.at[k] = -1
	}
	for _, k := range cand {
		reg := part[k].region
		gi := len(sp.groups) - 1
		if gi < 0 || !sameRows(sp.groups[gi].region, reg) {
			sp.groups = append(sp.groups, stageGroup{region: reg, adjacent: true})
			gi++
		}
		gr := &sp.groups[gi]
		if len(gr.segs) > 0 {
			prev := sp.segs[gr.segs[len(gr.segs)-1]].region
			if reg.Lower[last] != prev.Lower[last]+prev.Count[last] {
				gr.adjacent = false
			}
		}
		sp.at[k] = len(sp.segs)
		gr.segs = append(gr.segs, len(sp.segs))
		sp.segs = append(sp.segs, stageSeg{group: gi, off: gr.rowLen, p: part[k].p, region: reg})
		gr.rowLen += reg.Count[last]
	}
	for i := range sp.groups {
		gr := &sp.groups[i]
		gr.base = sp.bytes
		rows := int64(1)
		for _, c := range gr.region.Count[:last] {
			rows *= c
		}
		sp.bytes += rows * gr.rowLen * sp.size
	}
	return sp
}

// sortRegions sorts cand (entries of part) by regionOrder of their
// regions. When the regions share the extent of their rows (dimensions
// 0..r-2: blocks of one shape, the usual tiling), that order is the order
// of their first elements in the band (stride: the band's), and packed keys
// of that offset and the entry sort without a comparison reaching into the
// boxes: a band of many small blocks holds tens of thousands.
func sortRegions(cand []int, part []batched, band catalog.Box, stride []int64) {
	last := len(band.Lower) - 1
	rows := part[cand[0]].region.Count[:last]
	n := uint64(len(cand))
	uniform := uint64(band.Elements()) <= math.MaxUint64/n
	for _, k := range cand {
		uniform = uniform && slices.Equal(part[k].region.Count[:last], rows)
	}
	if !uniform {
		slices.SortFunc(cand, func(x, y int) int { return regionOrder(part[x].region, part[y].region) })
		return
	}
	keys := make([]uint64, len(cand))
	for i, k := range cand {
		var off int64
		for d, l := range part[k].region.Lower {
			off += (l - band.Lower[d]) * stride[d]
		}
		keys[i] = uint64(off)*n + uint64(i)
	}
	slices.Sort(keys)
	sorted := make([]int, len(cand))
	for i, key := range keys {
		sorted[i] = cand[key%n]
	}
	copy(cand, sorted)
}

// regionOrder orders regions by their rows (lower, then count, of
// dimensions 0..r-2), then by their lower in the last dimension.
func regionOrder(a, b catalog.Box) int {
	last := len(a.Lower) - 1
	for d := range last {
		if c := cmp.Compare(a.Lower[d], b.Lower[d]); c != 0 {
			return c
		}
	}
	for d := range last {
		if c := cmp.Compare(a.Count[d], b.Count[d]); c != 0 {
			return c
		}
	}
	return cmp.Compare(a.Lower[last], b.Lower[last])
}

// sameRows reports whether regions a and b have the same rows (lower and
// count of dimensions 0..r-2).
func sameRows(a, b catalog.Box) bool {
	last := len(a.Lower) - 1
	for d := range last {
		if a.Lower[d] != b.Lower[d] || a.Count[d] != b.Count[d] {
			return false
		}
	}
	return true
}

// next advances g over the rows (dimensions 0..r-2) of region; false after
// the last.
func next(g []int64, region catalog.Box) bool {
	for d := len(g) - 2; d >= 0; d-- {
		if g[d]++; g[d] < region.Lower[d]+region.Count[d] {
			return true
		}
		g[d] = region.Lower[d]
	}
	return false
}

// place copies the decoded bytes of segment i's block into the stage (g:
// scratch of the band's rank). Blocks are placed at once from several
// goroutines: their bytes in the stage are disjoint.
func (sp *stagePlan) place(i int, data, stage []byte, g []int64) {
	s := &sp.segs[i]
	gr := &sp.groups[s.group]
	size := sp.size
	last := len(g) - 1
	n := s.region.Count[last]
	step := s.p.strides[last]
	rowBytes := gr.rowLen * size
	copy(g, s.region.Lower)
	in0 := s.p.offset(g)
	for dst := gr.base + s.off*size; ; dst += rowBytes {
		d := stage[dst : dst+n*size]
		switch {
		case step == 1 && !s.p.swap:
			src := data[in0*size : (in0+n)*size]
			switch len(d) { // rows of 8-wide blocks of 8- and 4-byte elements: no call
			case 64:
				*(*[64]byte)(d) = *(*[64]byte)(src)
			case 32:
				*(*[32]byte)(d) = *(*[32]byte)(src)
			default:
				copy(d, src)
			}
		case !s.p.swap:
			for k := range n {
				i := (in0 + k*step) * size
				copy(d[k*size:(k+1)*size], data[i:i+size])
			}
		default:
			for k := range n {
				i := (in0 + k*step) * size
				e, o := data[i:i+size], d[k*size:(k+1)*size]
				for j := range o {
					o[j] = e[len(e)-1-j]
				}
			}
		}
		// Next row: the odometer over dimensions 0..r-2, in0 with it.
		d0 := last - 1
		for ; d0 >= 0; d0-- {
			in0 += s.p.strides[d0]
			if g[d0]++; g[d0] < s.region.Lower[d0]+s.region.Count[d0] {
				break
			}
			g[d0] = s.region.Lower[d0]
			in0 -= s.region.Count[d0] * s.p.strides[d0]
		}
		if d0 < 0 {
			return
		}
	}
}

// compare compares groups [from, to) of the stage with out, the band's
// row-major little-endian bytes, group by group (g: scratch of the band's
// rank); each group's first difference (in row-major order) goes to keep.
func (sp *stagePlan) compare(stage, out []byte, from, to int, g []int64, keep func(*mismatch)) {
	size := sp.size
	last := len(g) - 1
	for gi := from; gi < to; gi++ {
		gr := &sp.groups[gi]
		rowBytes := gr.rowLen * size
		copy(g, gr.region.Lower)
		for src := gr.base; ; src += rowBytes {
			var row int64 // element offset in the band of (g[:last], band's first)
			for d := range last {
				row += (g[d] - sp.band.Lower[d]) * sp.bandStride[d]
			}
			row -= sp.band.Lower[last]
			equal := true
			if gr.adjacent {
				o := (row + gr.region.Lower[last]) * size
				equal = bytes.Equal(stage[src:src+rowBytes], out[o:o+rowBytes])
			} else {
				for _, i := range gr.segs {
					s := &sp.segs[i]
					a, o := src+s.off*size, (row+s.region.Lower[last])*size
					if !bytes.Equal(stage[a:a+s.region.Count[last]*size], out[o:o+s.region.Count[last]*size]) {
						equal = false
						break
					}
				}
			}
			if !equal {
				keep(sp.rowMismatch(gr, g, src, row, stage, out))
				break // the group's first difference: its rows are in row-major order
			}
			if !next(g, gr.region) {
				break
			}
		}
	}
}

// rowMismatch is the first difference in row-major order of a group's row
// (at g, from src in the stage) that differs; overlapping segments are each
// searched.
func (sp *stagePlan) rowMismatch(gr *stageGroup, g []int64, src, row int64, stage, out []byte) *mismatch {
	size := sp.size
	last := len(g) - 1
	var first *mismatch
	for _, i := range gr.segs {
		s := &sp.segs[i]
		for k := range s.region.Count[last] {
			a, o := src+(s.off+k)*size, (row+s.region.Lower[last]+k)*size
			if bytes.Equal(stage[a:a+size], out[o:o+size]) {
				continue
			}
			idx := slices.Clone(g)
			idx[last] = s.region.Lower[last] + k
			if first == nil || before(idx, first.index) {
				first = &mismatch{index: idx, in: bytes.Clone(stage[a : a+size]), out: bytes.Clone(out[o : o+size])}
			}
			break
		}
	}
	return first
}

// Stage buffers are reused within a run (like its band buffers, spare:
// fresh ones cost a page fault and a zeroing per page): at most
// keptStageBytes kept, given back with the run.
const keptStageBytes = 64 << 20

type stagePool struct {
	sync.Mutex
	free  [][]byte
	bytes int64
}

// get returns a buffer of n bytes: the smallest kept one that holds n, or
// a new one of n rounded up to a MiB (the stages of an array's bands
// differ by a few rows).
func (p *stagePool) get(n int64) []byte {
	p.Lock()
	best := -1
	for i, b := range p.free {
		if c := int64(cap(b)); c >= n && (best < 0 || c < int64(cap(p.free[best]))) {
			best = i
		}
	}
	if best >= 0 {
		b := p.free[best]
		last := len(p.free) - 1
		p.free[best] = p.free[last]
		p.free = p.free[:last]
		p.bytes -= int64(cap(b))
		p.Unlock()
		return b[:n]
	}
	p.Unlock()
	return make([]byte, n, (n+1<<20-1)&^(1<<20-1))
}

// put keeps b for reuse while the kept buffers hold less than
// keptStageBytes.
func (p *stagePool) put(b []byte) {
	c := int64(cap(b))
	if c == 0 {
		return
	}
	p.Lock()
	defer p.Unlock()
	if p.bytes+c <= keptStageBytes {
		p.free = append(p.free, b[:0])
		p.bytes += c
	}
}

// staging is a band's stage: its plan and buffer, charged to the array's
// budget (pinned: the parts that fill it ask for more while it is held).
type staging struct {
	plan *stagePlan
	buf  []byte
	pool *stagePool
}

// newStaging plans and allocates the stage of batch's small blocks; nil
// when there are none or the stage would not fit the array's budget.
func (r *run) newStaging(ctx context.Context, sp *stagePlan, mem *membudget.Budget) (*staging, error) {
	if sp == nil || sp.bytes > mem.Capacity() {
		return nil, nil
	}
	if err := mem.Acquire(ctx, sp.bytes); err != nil {
		return nil, err
	}
	mem.Pin(sp.bytes)
	return &staging{plan: sp, buf: r.stages.get(sp.bytes), pool: &r.stages}, nil
}

// drop frees the stage (nil: nothing).
func (st *staging) drop(mem *membudget.Budget) {
	if st == nil || st.buf == nil {
		return
	}
	st.pool.put(st.buf)
	st.buf = nil
	mem.Unpin(st.plan.bytes)
}

// compareStage compares the filled stage with out, its groups cut into at
// most Jobs runs of about equal bytes compared at once.
func (r *run) compareStage(ctx context.Context, st *staging, out []byte, keep func(*mismatch)) error {
	sp := st.plan
	r.stats.ordered.Add(int64(len(sp.segs)))
	parts := min(r.opts.Jobs, len(sp.groups))
	per := max(sp.bytes/int64(parts), 1)
	g, gctx := errgroup.WithContext(ctx)
	for lo := 0; lo < len(sp.groups); {
		hi := lo + 1
		for hi < len(sp.groups) && sp.groups[hi].base-sp.groups[lo].base < per {
			hi++
		}
		from, to := lo, hi
		lo = hi
		g.Go(func() error {
			if err := r.work(gctx); err != nil {
				return err
			}
			defer r.rest()
			t0 := time.Now()
			sp.compare(st.buf, out, from, to, make([]int64, len(sp.band.Lower)), keep)
			r.stats.compareNs.Add(int64(time.Since(t0)))
			return nil
		})
	}
	return g.Wait()
}
