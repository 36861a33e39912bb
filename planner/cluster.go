package planner

import (
	"fmt"
	"math"
	"slices"

	"relayout/catalog"
)

// Clustering: merge a group of disjoint blocks into few exact cuboids, the
// seed paper's variant of Berger–Rigoutsos ("Improving I/O Performance for
// Exascale Applications through Online Data Layout Reorganization", Wan et
// al., TPDS 2022, the Fig. 8/9 example).
//
//	queue ← [bounding box of the blocks]                         (FIFO)
//	while queue not empty:
//	    C ← pop; shrink C to the bounding box of the pieces it holds
//	    if volume(C) = Σ volume(pieces in C): accept C              (exact, no empty space)
//	    else pick a split plane s on an axis a, cut C and every piece crossing s,
//	         push the two halves (both non-empty by construction)
//
// The split plane is chosen among the piece boundaries strictly inside C.
// First criterion: cut as few pieces as possible (our addition: on the
// paper's regular block grids no plane ever cuts a block, so this changes
// nothing there; with blocks of mixed sizes every cut adds a piece that may
// end up in a cuboid of its own — on random partitions this lowers the cuboid
// count by about 13% and avoided every case where the result had more cuboids
// than blocks). Then, in order of preference:
//  1. a hole: an empty slice of C (no piece touches it). Splitting at its start
//     and shrinking the right half removes it. Among holes, the one whose middle
//     is nearest the centre of C relative to the axis length.
//  2. the paper's edge detector: per axis the occupancy histogram h (fraction
//     of the slice's cross-section covered by pieces), its discrete Laplacian
//     Δ[j] = h[j-1] − 2h[j] + h[j+1] over the interior slices, and the
//     zero-crossings (Δ[j]·Δ[j+1] < 0, split between slices j and j+1). The
//     crossing with the steepest histogram step |h[j+1] − h[j]| wins over all
//     axes.
//  3. fallback when no axis has a crossing: the steepest histogram step over
//     all axes (an edge of the occupied region, e.g. the inner corner of an L,
//     where the Laplacian has no interior slices to cross), and when the
//     histograms are flat, the longest axis at the piece boundary nearest its
//     middle. The step rule is our addition: "longest axis, middle boundary"
//     alone cuts a rectangle with a notched corner into three cuboids where
//     two suffice.
//
// Ties go to the lower axis, then to the plane nearer the centre, then to the
// lower coordinate, so the result is deterministic and independent of the
// order of the input blocks.
//
// A "slice" is an elementary slab between two consecutive distinct piece
// boundaries along the axis, not a single index: every index inside such a
// slab has the same occupancy, so this is the per-index histogram with its
// plateaus collapsed (the paper's histograms are per block-sized slice, e.g.
// [1/16, 5/16, 7/16, 3/16] for four 128-wide slices). It also makes the cost
// independent of the index range: boundaries are replaced once by their ranks
// among the group's distinct boundaries, and a histogram of a cuboid of n
// pieces costs O(n + R) (R: ranks it spans) or one integer sort, O(n log n);
// the whole clustering O(n log n · depth) at worst.
//
// Guarantees (the property tests check them): the cuboids cover the blocks
// exactly, never overlap and never contain an element outside the blocks.
// Splits cut blocks into pieces, so in rare non-guillotine arrangements the
// count could exceed the number of blocks; then the blocks themselves are
// returned (each block is an exact cuboid), so there are never more cuboids
// than non-empty blocks.
//
// Preconditions: the blocks have the same rank and do not overlap (readers
// deliver disjoint valid regions; check with Disjoint when in doubt).
// Overlapping blocks would be double-counted by the volume test. Empty blocks
// are ignored. Ranks above MaxDims are returned unmerged, one cuboid per block.

// Piece is the part of one input block that a cuboid holds.
type Piece struct {
	Block int         // index into the blocks given to ClusterPieces (or Merge)
	Box   catalog.Box // global index space, inside the block and the cuboid
}

// Cuboid is one merged region with the block pieces that tile it exactly.
type Cuboid struct {
	Box    catalog.Box
	Pieces []Piece // in the order the clustering produced them
}

// Cluster merges disjoint blocks into exact cuboids (see above). The result is
// in FIFO acceptance order (a cuboid holding two separate pieces is resolved
// at once, as its split would: each piece on its own), deterministic and
// independent of the order of blocks.
func Cluster(blocks []catalog.Box) []catalog.Box {
	cs := ClusterPieces(blocks)
	out := make([]catalog.Box, len(cs))
	for i, c := range cs {
		out[i] = c.Box
	}
	return out
}

// ClusterPieces is Cluster that also reports, per cuboid, which block pieces
// it holds: what the work plan needs to assemble a cuboid from source blocks.
func ClusterPieces(blocks []catalog.Box) []Cuboid {
	var c clusterer
	return c.run(blocks)
}

// piece is the internal flat form: fixed-size corners avoid per-piece slices,
// and the corners are ranks among the group's distinct boundaries per axis
// (the lower corner is c.axis[d][rlo[d]]): every split plane is such a
// boundary, so histograms count in rank space (see histogram), and a piece is
// 36 bytes to copy from level to level.
type piece struct {
	rlo, rhi [MaxDims]int32
	blk      int32
}

type segment struct {
	start, end int32 // pieces[start:end] of the current level
}

// hist is the occupancy histogram of a cuboid along one axis.
type hist struct {
	coords []int64 // boundaries c_0..c_m
	pos    []int32 // their ranks
	areas  []int64 // covered cross-section area of slice j = [c_j, c_j+1)
	cuts   []int   // pieces a split at c_j cuts
}

// clusterer holds the scratch buffers of one run so that a clustering makes a
// handful of large allocations instead of one per piece or per cuboid.
type clusterer struct {
	dims       int
	cur, next  []piece
	segs, nsgs []segment
	axis       [MaxDims][]int64 // distinct piece boundaries per axis, ascending
	// rankAt[d][x-axis[d][0]] is the rank of boundary x along d when
	// rankCoords marked the boundaries in a table (nil: search axis[d]).
	rankAt [MaxDims][]int32
	hist   [MaxDims]hist // per axis, of the cuboid being split
	// histogram scratch
	lens   []int64 // extents of the pieces being split, MaxDims per piece
	keys   []uint64
	events []sliceEvents // per rank of the cuboid's span (histogram's counting pass)
	// accepted cuboids and, when pieces is set (a clustering whose result
	// lists them), their pieces, flat: a count or cuboids without pieces
	// copy none (a fully covered array's global scope is one cuboid of all
	// its pieces: 9 MB for 262,144 blocks, into fresh memory).
	outBox    []piece // lo/hi of each cuboid (blk unused)
	outStart  []int32
	outPieces []piece
	pieces    bool
}

func (c *clusterer) run(blocks []catalog.Box) []Cuboid {
	dims, nonEmpty, err := blockRank(blocks)
	if err != nil {
		panic("planner: Cluster: " + err.Error())
	}
	if nonEmpty == 0 {
		return nil
	}
	if dims == 0 || dims > MaxDims {
		return singletons(blocks)
	}
	c.dims = dims
	c.rankCoords(blocks)
	c.cur = c.cur[:0]
	for i, b := range blocks {
		if !IsEmpty(b) {
			c.cur = append(c.cur, c.toPiece(b, int32(i)))
		}
	}
	if cs, ok := c.cluster(nonEmpty, true); ok {
		return cs
	}
	return singletons(blocks)
}

// blockRank returns the common rank of the non-empty blocks and their number.
func blockRank(blocks []catalog.Box) (dims, nonEmpty int, err error) {
	return blockRankOf(blocks, ownBox)
}

// blockRankOf is blockRank over the boxes of items (Boxes, or Blocks: no
// copy of a million box headers).
func blockRankOf[T any](items []T, box func(*T) *catalog.Box) (dims, nonEmpty int, err error) {
	dims = -1
	for i := range items {
		b := *box(&items[i])
		if len(b.Count) != len(b.Lower) {
			return 0, 0, fmt.Errorf("block %d %v: %d lower and %d count entries", i, b, len(b.Lower), len(b.Count))
		}
		if IsEmpty(b) {
			continue
		}
		if dims == -1 {
			dims = len(b.Lower)
		} else if len(b.Lower) != dims {
			return 0, 0, fmt.Errorf("block %d %v has rank %d, others %d", i, b, len(b.Lower), dims)
		}
		nonEmpty++
	}
	return dims, nonEmpty, nil
}

// toPiece converts b to rank space (c.axis must hold all of b's boundaries).
func (c *clusterer) toPiece(b catalog.Box, blk int32) piece {
	p := piece{blk: blk}
	for d := 0; d < c.dims; d++ {
		if t := c.rankAt[d]; t != nil {
			base := c.axis[d][0]
			p.rlo[d], p.rhi[d] = t[b.Lower[d]-base], t[b.Lower[d]+b.Count[d]-base]
			continue
		}
		v := c.axis[d]
		lo, _ := slices.BinarySearch(v, b.Lower[d])
		hi, _ := slices.BinarySearch(v[lo:], b.Lower[d]+b.Count[d])
		p.rlo[d], p.rhi[d] = int32(lo), int32(lo+hi)
	}
	return p
}

// cluster runs the FIFO over the pieces in c.cur (one per non-empty block,
// blk indexing the caller's blocks) and returns the cuboids (with their
// pieces when pieces is set), or false when
// there would be more cuboids than the nonEmpty blocks (the caller then falls
// back to singletons).
func (c *clusterer) cluster(nonEmpty int, pieces bool) ([]Cuboid, bool) {
	c.pieces = pieces
	if !c.run1(nonEmpty) {
		return nil, false
	}
	return c.result(pieces), true
}

// count is cluster that returns only the number of cuboids.
func (c *clusterer) count(nonEmpty int) (int, bool) {
	c.pieces = false
	if !c.run1(nonEmpty) {
		return 0, false
	}
	return len(c.outBox), true
}

// run1 runs the FIFO, leaving the cuboids in c.outBox (and, with c.pieces,
// their pieces in c.outStart and c.outPieces); false when there are more
// than nonEmpty.
func (c *clusterer) run1(nonEmpty int) bool {
	c.outBox, c.outStart, c.outPieces = c.outBox[:0], c.outStart[:0], c.outPieces[:0]
	c.segs = append(c.segs[:0], segment{0, int32(len(c.cur))})
	if cap(c.next) < len(c.cur) {
		c.next = make([]piece, 0, len(c.cur)) // not slices.Grow: it writes every page before Populate maps them
		catalog.Populate(c.next)
	}
	for len(c.segs) > 0 {
		c.next, c.nsgs = c.next[:0], c.nsgs[:0]
		for _, s := range c.segs {
			c.process(c.cur[s.start:s.end])
		}
		c.cur, c.next = c.next, c.cur
		c.segs, c.nsgs = c.nsgs, c.segs
	}
	return len(c.outBox) <= nonEmpty
}

// rankCoords fills c.axis with the distinct block boundaries per axis.
func (c *clusterer) rankCoords(blocks []catalog.Box) {
	rankCoordsOf(c, blocks, ownBox)
}

// rankCoordsOf is rankCoords over the boxes of items. When an axis's
// boundaries span few values compared with the boxes (block grids: 49
// values for 110,592 blocks of 4³ over 192³), they are marked in a table
// over that span instead of sorted (a third of a plan's ranking), and the
// table, holding each boundary's rank, is kept for toPiece (c.rankAt).
func rankCoordsOf[T any](c *clusterer, items []T, box func(*T) *catalog.Box) {
	for d := 0; d < c.dims; d++ {
		lo, hi, n := int64(math.MaxInt64), int64(math.MinInt64), 0
		for i := range items {
			if b := box(&items[i]); !IsEmpty(*b) {
				lo, hi = min(lo, b.Lower[d]), max(hi, b.Lower[d]+b.Count[d])
				n++
			}
		}
		c.rankAt[d] = nil
		if span := uint64(hi) - uint64(lo); n > 0 && span < uint64(2*n+1024) { // hi >= lo: exact in uint64
			t := make([]int32, span+1)
			for i := range items {
				if b := box(&items[i]); !IsEmpty(*b) {
					t[b.Lower[d]-lo], t[b.Lower[d]+b.Count[d]-lo] = 1, 1
				}
			}
			v := c.axis[d][:0]
			for k := range t {
				if t[k] != 0 {
					t[k] = int32(len(v))
					v = append(v, lo+int64(k))
				}
			}
			c.axis[d], c.rankAt[d] = v, t
			continue
		}
		v := slices.Grow(c.axis[d][:0], 2*n)
		for i := range items {
			if b := box(&items[i]); !IsEmpty(*b) {
				v = append(v, b.Lower[d], b.Lower[d]+b.Count[d])
			}
		}
		slices.Sort(v)
		c.axis[d] = slices.Compact(v)
	}
}

// length is the extent of p along axis d.
func (c *clusterer) length(p *piece, d int) int64 {
	return c.axis[d][p.rhi[d]] - c.axis[d][p.rlo[d]]
}

// process accepts the cuboid holding ps or queues its two halves.
func (c *clusterer) process(ps []piece) {
	if len(ps) == 1 {
		c.accept(ps[0], ps) // a lone piece is its own bounding box: no lengths
		return
	}
	bb, vol := c.lengths(ps)
	if vol == c.volume(&bb) {
		c.accept(bb, ps)
		return
	}
	if len(ps) == 2 {
		// Two disjoint pieces that do not form a box: every plane cutting
		// nothing separates them, so the split would accept each on its own at
		// the next level. Do it now (a third of the nodes of scattered sets).
		p, q := ps[0], ps[1]
		for d := 0; d < c.dims; d++ {
			if q.rhi[d] <= p.rlo[d] {
				p, q = q, p
				break
			}
			if p.rhi[d] <= q.rlo[d] {
				break
			}
		}
		c.accept(p, []piece{p})
		c.accept(q, []piece{q})
		return
	}
	axis, r, ok := c.choose(ps, &bb)
	if !ok {
		// Every piece spans bb on every axis: only possible with overlapping
		// input. Accept rather than loop; the precondition is documented.
		c.accept(bb, ps)
		return
	}
	// Left half, then right half, each contiguous in next.
	start := int32(len(c.next))
	for _, p := range ps {
		if p.rlo[axis] < r {
			if p.rhi[axis] > r {
				p.rhi[axis] = r
			}
			c.next = append(c.next, p)
		}
	}
	mid := int32(len(c.next))
	for _, p := range ps {
		if p.rhi[axis] > r {
			if p.rlo[axis] < r {
				p.rlo[axis] = r
			}
			c.next = append(c.next, p)
		}
	}
	c.nsgs = append(c.nsgs, segment{start, mid}, segment{mid, int32(len(c.next))})
}

func (c *clusterer) accept(bb piece, ps []piece) {
	c.outBox = append(c.outBox, bb)
	if c.pieces {
		c.outStart = append(c.outStart, int32(len(c.outPieces)))
		c.outPieces = append(c.outPieces, ps...)
	}
}

// lengths fills c.lens with the cross-section of every piece of ps across
// every axis (c.lens[i*MaxDims+a]: the product of its extents along the other
// axes), which the histograms of ps read instead of looking the boundaries up
// again for each axis, and returns the pieces' bounding box (in the same
// pass) and total volume.
func (c *clusterer) lengths(ps []piece) (bb piece, vol int64) {
	if cap(c.lens) < MaxDims*len(ps) {
		c.lens = make([]int64, 0, MaxDims*len(ps))
		catalog.Populate(c.lens)
	}
	lens := c.lens[:MaxDims*len(ps)]
	dims := c.dims
	bb = ps[0]
	if dims == 3 { // the usual rank, unrolled: the same products, in another order
		x0, x1, x2 := c.axis[0], c.axis[1], c.axis[2]
		lo0, lo1, lo2, hi0, hi1, hi2 := bb.rlo[0], bb.rlo[1], bb.rlo[2], bb.rhi[0], bb.rhi[1], bb.rhi[2]
		for i := range ps {
			p := &ps[i]
			a0, a1, a2, b0, b1, b2 := p.rlo[0], p.rlo[1], p.rlo[2], p.rhi[0], p.rhi[1], p.rhi[2]
			l0, l1, l2 := x0[b0]-x0[a0], x1[b1]-x1[a1], x2[b2]-x2[a2]
			lo0, lo1, lo2 = min(lo0, a0), min(lo1, a1), min(lo2, a2)
			hi0, hi1, hi2 = max(hi0, b0), max(hi1, b1), max(hi2, b2)
			sec := (*[MaxDims]int64)(lens[i*MaxDims : i*MaxDims+MaxDims])
			sec[0], sec[1], sec[2] = l1*l2, l0*l2, l0*l1
			vol += l0 * l1 * l2
		}
		bb.rlo[0], bb.rlo[1], bb.rlo[2], bb.rhi[0], bb.rhi[1], bb.rhi[2] = lo0, lo1, lo2, hi0, hi1, hi2
		c.lens = lens
		return bb, vol
	}
	for i := range ps {
		var l [MaxDims]int64
		for d := 0; d < dims; d++ {
			x := c.axis[d]
			lo, hi := ps[i].rlo[d], ps[i].rhi[d]
			bb.rlo[d], bb.rhi[d] = min(bb.rlo[d], lo), max(bb.rhi[d], hi)
			l[d] = x[hi] - x[lo]
		}
		sec := (*[MaxDims]int64)(lens[i*MaxDims : i*MaxDims+MaxDims])
		// sec[a] = Π_{d<a} l[d] · Π_{d>a} l[d], by prefix and suffix products.
		pre := int64(1)
		for d := 0; d < dims; d++ {
			sec[d] = pre
			pre *= l[d]
		}
		suf := int64(1)
		for d := dims - 1; d >= 0; d-- {
			sec[d] *= suf
			suf *= l[d]
		}
		vol += pre
	}
	c.lens = lens
	return bb, vol
}

func (c *clusterer) volume(p *piece) int64 {
	v := int64(1)
	for d := 0; d < c.dims; d++ {
		v *= c.length(p, d)
	}
	return v
}

// histogram fills c.hist[axis] (c.lengths(ps) must have been called): the m+1 distinct boundaries c_0..c_m (c_0 =
// bb.lo, c_m = bb.hi) and their ranks, the m covered cross-section areas of
// the slices [c_j, c_j+1), and cuts[j]: the pieces with lo < c_j < hi, which
// a split at c_j would cut.
//
// Boundaries are counted in rank space: when the cuboid spans few ranks
// compared with its pieces (the dense case, e.g. the top of the tree), a
// counting pass over the rank range (O(n + R)); otherwise one sort of 2n
// packed integer keys (O(n log n), no comparison callback).
func (c *clusterer) histogram(ps []piece, axis int, bb *piece) {
	parea := c.lens[axis : MaxDims*len(ps)] // c.lengths(ps): parea[i*MaxDims] is piece i's cross-section
	h := &c.hist[axis]
	coords, pos, areas, cuts := h.coords[:0], h.pos[:0], h.areas[:0], h.cuts[:0]
	xs := c.axis[axis]
	base := bb.rlo[axis]
	r := int(bb.rhi[axis] - base)
	var run int64 // covered area of the current slice
	open := 0     // pieces started and not yet ended
	if r <= 4*len(ps) {
		if len(c.events) < r+1 {
			c.events = make([]sliceEvents, 2*r+1)
		}
		ev := c.events[:r+1]
		for i := range ps {
			i0, i1 := ps[i].rlo[axis]-base, ps[i].rhi[axis]-base
			a := parea[i*MaxDims]
			ev[i0].dArea += a
			ev[i1].dArea -= a
			ev[i0].starts++
			ev[i1].ends++
		}
		for k := 0; k <= r; k++ {
			e := &ev[k]
			if e.starts == 0 && e.ends == 0 {
				continue
			}
			run += e.dArea
			coords = append(coords, xs[int(base)+k])
			pos = append(pos, base+int32(k))
			cuts = append(cuts, open-int(e.ends))
			open += int(e.starts) - int(e.ends)
			if k < r {
				areas = append(areas, run)
			}
		}
		clear(ev)
	} else {
		// key: rank<<32 | piece<<1 | end
		keys := c.keys[:0]
		for i := range ps {
			keys = append(keys, uint64(ps[i].rlo[axis])<<32|uint64(i)<<1, uint64(ps[i].rhi[axis])<<32|uint64(i)<<1|1)
		}
		slices.Sort(keys)
		c.keys = keys
		for k := 0; k < len(keys); {
			rank := int32(keys[k] >> 32)
			starts, ends := 0, 0
			for ; k < len(keys) && int32(keys[k]>>32) == rank; k++ {
				i := int(uint32(keys[k]) >> 1)
				if keys[k]&1 == 1 {
					run -= parea[i*MaxDims]
					ends++
				} else {
					run += parea[i*MaxDims]
					starts++
				}
			}
			coords = append(coords, xs[rank])
			pos = append(pos, rank)
			cuts = append(cuts, open-ends)
			open += starts - ends
			if k < len(keys) {
				areas = append(areas, run)
			}
		}
	}
	h.coords, h.pos, h.areas, h.cuts = coords, pos, areas, cuts
}

// sliceEvents are the changes at one boundary rank: covered area, pieces
// starting and ending there.
type sliceEvents struct {
	dArea        int64
	starts, ends int32
}

// Split plane classes, in order of preference at equal cut counts.
const (
	classHole = iota
	classCrossing
	classFallback
)

// cand is a candidate split plane; better() orders candidates across axes.
type cand struct {
	axis   int
	at     int32   // rank of the plane's coordinate
	cuts   int     // pieces the plane cuts, fewer is better
	class  int     // classHole < classCrossing < classFallback
	score  float64 // class-specific, larger is better
	length int64   // axis length, longer is better (fallback only)
	dist   float64 // |plane − centre| / axis length, smaller is better
}

func (x cand) better(y cand) bool {
	switch {
	case x.cuts != y.cuts:
		return x.cuts < y.cuts
	case x.class != y.class:
		return x.class < y.class
	case x.score != y.score:
		return x.score > y.score
	case x.length != y.length:
		return x.length > y.length
	case x.axis != y.axis:
		return x.axis < y.axis
	case x.dist != y.dist:
		return x.dist < y.dist
	}
	return x.at < y.at
}

// choose picks the split plane of the cuboid bb holding ps: the candidate
// cutting the fewest pieces; among those a hole, then the steepest Laplacian
// zero-crossing, then the fallback (see the comment at the top of this file).
// ok is false when no axis has a piece boundary strictly inside bb.
func (c *clusterer) choose(ps []piece, bb *piece) (axis int, at int32, ok bool) {
	var best cand
	have := false
	offer := func(x cand) {
		if !have || x.better(best) {
			best, have = x, true
		}
	}
	// geometry of bb along axis a: distance of x from the centre relative to
	// the length, and the cross-section (h = covered area / section).
	frame := func(a int) (lo, length int64, section float64) {
		lo, length, section = c.axis[a][bb.rlo[a]], c.length(bb, a), 1
		for d := 0; d < c.dims; d++ {
			if d != a {
				section *= float64(c.length(bb, d))
			}
		}
		return lo, length, section
	}
	dist := func(x float64, lo, length int64) float64 {
		d := x - float64(lo) - float64(length)/2
		if d < 0 {
			d = -d
		}
		return d / float64(length)
	}
	for a := 0; a < c.dims; a++ {
		c.histogram(ps, a, bb)
		h := &c.hist[a]
		m := len(h.areas)
		if m < 2 {
			continue // no piece boundary inside bb on this axis
		}
		lo, length, section := frame(a)
		// Holes: an empty slice j (never the first or last: bb is tight).
		// Splitting at its start cuts nothing.
		for j := 1; j < m-1; j++ {
			if h.areas[j] == 0 {
				d := dist(float64(h.coords[j]+h.coords[j+1])/2, lo, length)
				offer(cand{axis: a, at: h.pos[j], class: classHole, score: -d, dist: d})
			}
		}
		if have && best.class == classHole {
			continue // a hole cuts nothing and beats every crossing
		}
		// Laplacian over the interior slices 1..m-2, in covered area (the same
		// signs as in fractions: the cross-section is constant along the axis);
		// a zero-crossing between slices j and j+1 is a split at c_j+1.
		areas := h.areas
		for j := 1; j+1 < m-1; j++ {
			l0 := areas[j-1] - 2*areas[j] + areas[j+1]
			l1 := areas[j] - 2*areas[j+1] + areas[j+2]
			if sign(l0)*sign(l1) < 0 {
				offer(cand{axis: a, at: h.pos[j+1], cuts: h.cuts[j+1], class: classCrossing,
					score: float64(absInt(areas[j+1]-areas[j])) / section, dist: dist(float64(h.coords[j+1]), lo, length)})
			}
		}
	}
	if have && best.cuts == 0 {
		return best.axis, best.at, true // no fallback plane can do better
	}
	// Fallback: every interior boundary, by histogram step, then axis length.
	for a := 0; a < c.dims; a++ {
		h := &c.hist[a]
		m := len(h.areas)
		if m < 2 {
			continue
		}
		lo, length, section := frame(a)
		for j := 1; j < m; j++ {
			offer(cand{axis: a, at: h.pos[j], cuts: h.cuts[j], class: classFallback,
				score: float64(absInt(h.areas[j]-h.areas[j-1])) / section, length: length,
				dist: dist(float64(h.coords[j]), lo, length)})
		}
	}
	return best.axis, best.at, have
}

func absInt(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// result converts the flat output into Cuboids, carving every slice from a few
// shared backing arrays; without pieces, the Cuboids' Pieces stay nil (a
// plan's cuboids are boxes: their pieces were two thirds of the memory).
func (c *clusterer) result(withPieces bool) []Cuboid {
	dims := c.dims
	nc, np := len(c.outBox), len(c.outPieces) // no pieces kept without withPieces (cluster)
	coords := make([]int64, 2*dims*(nc+np))
	catalog.Populate(coords)
	pieces := make([]Piece, np)
	out := make([]Cuboid, nc)
	mk := func(p *piece) catalog.Box {
		lo := coords[:dims:dims]
		cnt := coords[dims : 2*dims : 2*dims]
		coords = coords[2*dims:]
		for d := 0; d < dims; d++ {
			lo[d], cnt[d] = c.axis[d][p.rlo[d]], c.length(p, d)
		}
		return catalog.Box{Lower: lo, Count: cnt}
	}
	for i := range pieces {
		pieces[i] = Piece{Block: int(c.outPieces[i].blk), Box: mk(&c.outPieces[i])}
	}
	for i := range c.outBox {
		out[i].Box = mk(&c.outBox[i])
		if withPieces {
			end := int32(np)
			if i+1 < nc {
				end = c.outStart[i+1]
			}
			out[i].Pieces = pieces[c.outStart[i]:end:end]
		}
	}
	return out
}

// singletons is the trivial clustering: every non-empty block is its own
// cuboid, in row-major order of their lower corners (so the result does not
// depend on the input order).
func singletons(blocks []catalog.Box) []Cuboid {
	var out []Cuboid
	defer func() {
		slices.SortFunc(out, func(a, b Cuboid) int { return slices.Compare(a.Box.Lower, b.Box.Lower) })
	}()
	for i, b := range blocks {
		if IsEmpty(b) {
			continue
		}
		bx := catalog.Box{Lower: slices.Clone(b.Lower), Count: slices.Clone(b.Count)}
		out = append(out, Cuboid{Box: bx, Pieces: []Piece{{Block: i, Box: bx}}})
	}
	return out
}
