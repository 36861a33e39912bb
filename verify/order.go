package verify

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
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
//	band (row-major)                 stage: group after group, block after block
//	+------+------+------+------+    +-----------------------------------------+
//	|  b0  |  b1  |  b2  |  b3  |    | g0: b0 rows 0..R-1 | b1 rows | b2 ...    |
//	+------+------+------+------+    | g1: b4 rows 0..R-1 | b5 rows | ...       |
//	|  b4  |  b5  |  b6  |  b7  |    +-----------------------------------------+
//	+------+------+------+------+
//	group: the blocks whose regions share lower and count in dimensions
//	0..r-2 (a block-row of R rows), by their lower in the last; each block's
//	segment holds its R rows one after the other (little-endian, ghost
//	cells left out): a block stored as its region is placed by one copy,
//	its bytes on neighbouring cache lines (placed row by row into a stage
//	laid out like the output, the 16 rows of a 4x4x4 block were 16 lines
//	somewhere in tens of MiB, a miss each: half of verify's placing).
//	The comparison walks a group's rows in output order, each row's
//	segments from their blocks: a group is a few KiB, in cache.
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

// stageGroup is one group: rows rows of rowLen elements from byte base,
// held segment after segment.
type stageGroup struct {
	region catalog.Box // of its first segment (dimensions 0..r-2 shared)
	base   int64
	rows   int64 // indexes of dimensions 0..r-2 (R)
	rowLen int64
	segs   []int // its segments, by last-dimension lower
}

// stageSeg is one block's part of its group's rows: its rows (of its
// region's last extent) one after the other from byte base. It holds no
// pointer: a band holds one per small block, appended in output order
// while the blocks' entries lie in file order (a copy of each entry's
// placement and region here was a third of planStage, and scanned by
// every collection); place gets them from the entry it places.
type stageSeg struct {
	group int
	off   int64 // element offset in a row of the group
	base  int64
	lo, n int64 // the region's lower and count in the last dimension
	whole bool  // the block is stored as its region: placed by one copy
}

// storedAsRegion reports whether the decoded bytes of p's block are those
// of region in row-major order, native byte order, nothing around them.
func storedAsRegion(p placement, region catalog.Box) bool {
	if p.swap {
		return false
	}
	n := int64(1)
	for d := len(region.Count) - 1; d >= 0; d-- {
		if p.strides[d] != n {
			return false
		}
		n *= region.Count[d]
	}
	return p.offset(region.Lower) == 0 && n*int64(p.size) == p.storedBytes()
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
	whole := make([]bool, len(part)) // asked here, in part's order: the blocks are read in it
	for k, e := range part {
		if e.p.storedBytes() <= stageBlock { // regions are non-empty (Box.Intersect)
			cand = append(cand, k)
			whole[k] = storedAsRegion(e.p, e.region)
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
			sp.groups = append(sp.groups, stageGroup{region: reg})
			gi++
		}
		gr := &sp.groups[gi]
		sp.at[k] = len(sp.segs)
		gr.segs = append(gr.segs, len(sp.segs))
		sp.segs = append(sp.segs, stageSeg{group: gi, off: gr.rowLen, whole: whole[k], lo: reg.Lower[last], n: reg.Count[last]})
		gr.rowLen += reg.Count[last]
	}
	for i := range sp.groups {
		gr := &sp.groups[i]
		gr.base = sp.bytes
		gr.rows = 1
		for _, c := range gr.region.Count[:last] {
			gr.rows *= c
		}
		sp.bytes += gr.rows * gr.rowLen * sp.size
	}
	for i := range sp.segs {
		sg := &sp.segs[i]
		sg.base = sp.groups[sg.group].base + sg.off*sp.groups[sg.group].rows*sp.size
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

// place copies the decoded bytes of segment i's block (its entry's
// placement p and region) into the stage (g: scratch of the band's rank).
// Blocks are placed at once from several goroutines: their bytes in the
// stage are disjoint.
func (sp *stagePlan) place(i int, p placement, region catalog.Box, data, stage []byte, g []int64) {
	s := &sp.segs[i]
	size := sp.size
	last := len(g) - 1
	n := s.n
	if s.whole {
		copy(stage[s.base:s.base+sp.groups[s.group].rows*n*size], data)
		return
	}
	step := p.strides[last]
	copy(g, region.Lower)
	in0 := p.offset(g)
	for dst := s.base; ; dst += n * size {
		d := stage[dst : dst+n*size]
		switch {
		case step == 1 && !p.swap:
			copy(d, data[in0*size:(in0+n)*size])
		case !p.swap:
			for k := range n {
				i := (in0 + k*step) * size
				copy(d[k*size:(k+1)*size], data[i:i+size])
			}
		default:
			placeSwapped(d, data, in0, step, n, size)
		}
		// Next row: the odometer over dimensions 0..r-2, in0 with it.
		d0 := last - 1
		for ; d0 >= 0; d0-- {
			in0 += p.strides[d0]
			if g[d0]++; g[d0] < region.Lower[d0]+region.Count[d0] {
				break
			}
			g[d0] = region.Lower[d0]
			in0 -= region.Count[d0] * p.strides[d0]
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
		copy(g, gr.region.Lower)
		for j := int64(0); ; j++ { // the group's row j
			var row int64 // element offset in the band of (g[:last], band's first)
			for d := range last {
				row += (g[d] - sp.band.Lower[d]) * sp.bandStride[d]
			}
			row -= sp.band.Lower[last]
			equal := true
			for _, i := range gr.segs {
				s := &sp.segs[i]
				n := s.n
				a, o := s.base+j*n*size, (row+s.lo)*size
				if !bytes.Equal(stage[a:a+n*size], out[o:o+n*size]) {
					equal = false
					break
				}
			}
			if !equal {
				keep(sp.rowMismatch(gr, g, j, row, stage, out))
				break // the group's first difference: its rows are in row-major order
			}
			if !next(g, gr.region) {
				break
			}
		}
	}
}

// rowMismatch is the first difference in row-major order of a group's row
// (row j of the group, at g) that differs; overlapping segments are each
// searched.
func (sp *stagePlan) rowMismatch(gr *stageGroup, g []int64, j, row int64, stage, out []byte) *mismatch {
	size := sp.size
	last := len(g) - 1
	var first *mismatch
	for _, i := range gr.segs {
		s := &sp.segs[i]
		n := s.n
		for k := range n {
			a, o := s.base+(j*n+k)*size, (row+s.lo+k)*size
			if bytes.Equal(stage[a:a+size], out[o:o+size]) {
				continue
			}
			idx := slices.Clone(g)
			idx[last] = s.lo + k
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
	b := make([]byte, n, (n+1<<20-1)&^(1<<20-1))
	catalog.Populate(b)
	return b
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

// placeSwapped copies n elements of data, the first at element in0 and
// step elements apart, to consecutive places in d, each element's bytes
// reversed (big-endian input into the little-endian stage): whole words
// where the element size has one.
func placeSwapped(d, data []byte, in0, step, n, size int64) {
	switch size {
	case 8:
		for k := range n {
			binary.LittleEndian.PutUint64(d[8*k:], binary.BigEndian.Uint64(data[(in0+k*step)*8:]))
		}
	case 4:
		for k := range n {
			binary.LittleEndian.PutUint32(d[4*k:], binary.BigEndian.Uint32(data[(in0+k*step)*4:]))
		}
	case 2:
		for k := range n {
			binary.LittleEndian.PutUint16(d[2*k:], binary.BigEndian.Uint16(data[(in0+k*step)*2:]))
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
}
