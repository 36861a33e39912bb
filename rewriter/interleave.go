package rewriter

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"relayout/catalog"
	"relayout/internal/limits"
)

// Units whose blocks interleave in the input.
//
// Input written in scattered order (load balancing, or HDF5 chunks written
// as ranks finished them) places the blocks of one output unit all over the
// variable's extent in the file: a coalescing Source coalesces a unit's small
// blocks through the gaps between them, and those gaps are the blocks of the
// other units. Each unit then reads most of the variable, and an array cut
// into n units is read n times:
//
//	file:  |a c b d a b c d a d b c ...|   (a-d: blocks of units 1-4)
//	unit 1 reads  |a.....a.....a...|       (gap bytes: blocks of 2-4)
//	unit 2 reads    |..b....b.....b..|     (again)
//
// mergeInterleaved joins such neighbouring units (up to the unit limit the
// budget allows) so that one unit reads the extent once.

// readCost is the bytes a coalescing Source reads for reads (sorted by file and
// offset) with coalesced requests of at most limit bytes (catalog.Runs),
// gap bytes included.
func readCost(reads []*catalog.Block, limit int64) int64 {
	var total int64
	catalog.Runs(reads, limit, func(_, _ int, start, end int64) error {
		total += end - start
		return nil
	})
	return total
}

// sortRefs sorts refs (each a block of unit u) by byFileOffset, then unit.
// A joint pass holds every block of its units (351,537 blocks of 4^3 make
// tens of thousands a pass): the blocks' files are ranked once and the
// refs sorted on integer keys, without comparing names or reaching into
// the blocks.
func sortRefs[R any](refs []R, of func(R) (b *catalog.Block, u int)) {
	type key struct {
		file int32
		u    int32
		off  int64
		i    int
	}
	files := map[string]int32{}
	var names []string
	keys := make([]key, len(refs))
	catalog.Populate(keys)
	last, lastID := "", int32(-1)
	for i, r := range refs {
		b, u := of(r)
		if lastID < 0 || b.File != last {
			id, ok := files[b.File]
			if !ok {
				id = int32(len(names))
				files[b.File] = id
				names = append(names, b.File)
			}
			last, lastID = b.File, id
		}
		keys[i] = key{file: lastID, u: int32(u), off: b.Offset, i: i}
	}
	rank := nameRanks(names)
	var maxOff int64
	for i := range keys {
		keys[i].file = rank[keys[i].file]
		maxOff = max(maxOff, keys[i].off)
	}
	sorted := make([]R, len(refs))
	catalog.Populate(sorted)
	// refs come unit after unit, so the index orders ties as the unit does:
	// (file, offset, index) packed in one word sorts without a comparison
	// function when the three fit.
	fb, ob, ib := bits.Len(uint(len(names))), bits.Len64(uint64(maxOff)), bits.Len(uint(len(refs)))
	if fb+ob+ib <= 64 && maxOff >= 0 {
		packed := make([]uint64, len(keys))
		catalog.Populate(packed)
		for n, k := range keys {
			packed[n] = uint64(k.file)<<(ob+ib) | uint64(k.off)<<ib | uint64(k.i)
		}
		slices.Sort(packed)
		for n, p := range packed {
			sorted[n] = refs[p&(1<<ib-1)]
		}
		copy(refs, sorted)
		return
	}
	slices.SortFunc(keys, func(x, y key) int {
		return cmp.Or(cmp.Compare(x.file, y.file), cmp.Compare(x.off, y.off), cmp.Compare(x.u, y.u))
	})
	for n, k := range keys {
		sorted[n] = refs[k.i]
	}
	copy(refs, sorted)
}

// byFileOffset orders reads as blockIndex.reads does: by file, then offset.
func byFileOffset(x, y *catalog.Block) int {
	if c := strings.Compare(x.File, y.File); c != 0 {
		return c
	}
	return cmp.Compare(x.Offset, y.Offset)
}

// mergeInterleaved joins consecutive units of a (slabs along dimension 0
// spanning the other dimensions whole, in order) while joining them saves at
// least a quarter of the bytes their separate reads would fetch, keeping each
// unit within limit bytes. readLimit is the largest coalesced request. Units
// whose blocks do not interleave are returned as they are.
func mergeInterleaved(a *catalog.Array, units []catalog.Box, limit, readLimit int64) []catalog.Box {
	if len(units) < 2 || len(a.Blocks) < 2 || readLimit <= 0 {
		return units
	}
	size := int64(a.DType.Size)
	type group struct {
		box   catalog.Box
		reads []*catalog.Block
		cost  int64
	}
	blocks := indexBlocks(a)
	unit := func(u catalog.Box) group {
		r := blocks.reads(u)
		return group{u, r, readCost(r, readLimit)}
	}
	out := make([]catalog.Box, 0, len(units))
	cur := unit(units[0])
	for _, u := range units[1:] {
		next := unit(u)
		if joined, ok := joinSlabs(cur.box, u); ok && joined.Elements()*size <= limit {
			reads := make([]*catalog.Block, 0, len(cur.reads)+len(next.reads))
			reads = append(append(reads, cur.reads...), next.reads...)
			slices.SortStableFunc(reads, byFileOffset)
			reads = slices.Compact(reads) // a block both units read whole
			if c := readCost(reads, readLimit); 4*c <= 3*(cur.cost+next.cost) {
				cur = group{joined, reads, c}
				continue
			}
		}
		out = append(out, cur.box)
		cur = next
	}
	return append(out, cur.box)
}

// joinSlabs is the slab covering a and b when b follows a along dimension 0
// and both span the same extent in every other dimension.
func joinSlabs(a, b catalog.Box) (catalog.Box, bool) {
	rank := len(a.Lower)
	if rank == 0 || len(b.Lower) != rank || a.Lower[0]+a.Count[0] != b.Lower[0] {
		return catalog.Box{}, false
	}
	for d := 1; d < rank; d++ {
		if a.Lower[d] != b.Lower[d] || a.Count[d] != b.Count[d] {
			return catalog.Box{}, false
		}
	}
	j := catalog.Box{Lower: slices.Clone(a.Lower), Count: slices.Clone(a.Count)}
	j.Count[0] += b.Count[0]
	return j, true
}

// Datasets whose blocks interleave in the input.
//
// Output written by many ranks through aggregators (ADIOS2 BP4/BP5) stores
// every variable of a step block by block, rank after rank, in the same
// sub-file regions:
//
//	data.0: |Bx rho id Ez|Bx rho id|Bx rho id Ez|...   (one writer's blocks)
//	pass Bx  reads |Bx.rho.id.Ez.Bx.rho.id.Bx...|     (gaps: the others' blocks)
//	pass rho reads   |rho.id.Ez.Bx.rho.id.Bx.rho...|  (the same bytes again)
//
// Written one dataset after another, each dataset's coalesced reads fetch
// the other datasets' bytes too (3.4x the stored bytes on 4 variables of
// 192^3 in 4^3 blocks). Reading only each dataset's own extents instead
// costs a pread per block (351,536 calls for that input: 1.0x the bytes but
// 3-5x the fetch time), so the engine takes the datasets of one step, level
// and shape together (engine.groups): their units, cut in the same row
// bands (jointGrain), are grouped into items of whole bands (jointItems),
// each item read in one pass over the union of its blocks in file order
// (assembleJoint), and each unit is then written, hashed and journaled as
// its own dataset's, in that dataset's order:
//
//	rows  Bx (f8)  rho (f4)  Ez (f8, chunked 16)    item
//	0-15  unit 0   unit 0    unit 0                 0
//	16-31 unit 1   unit 1    unit 1                 0   (k = 2 bands)
//	32-47 unit 2   unit 2    unit 2                 1
//
// A band's blocks lie in runs of the file (the writers' order) with the
// other bands' blocks between: an item reads its runs alone (gapSegment),
// and holds enough bands for the runs to be long (minItemRead).

// joinable reports whether datasets x and y may share a pipeline: the same
// step, level and shape (units of the same region of the same writers).
func joinable(x, y *Dataset) bool {
	return x.Step == y.Step && x.Level == y.Level && slices.Equal(x.Shape, y.Shape) && len(x.Shape) > 0
}

// jointGrain is the common cut of the units of joinable datasets (one
// step, level and shape), so that each row band is a unit of every one of
// them and an item holds whole bands (jointRegions): cut in bytes, a
// float32 dataset's units span twice the rows of a float64 one's, and an
// item holding some of the datasets' units of a band left gaps where the
// others' blocks lie. The zero value cuts nothing.
type jointGrain struct {
	step     int64 // bands are a multiple of step rows: every chunked dataset's chunk rows
	rowBytes int64 // one row of every dataset of the group, with the chunks cut from it
}

// jointKey names the group of joinable datasets d belongs to.
func jointKey(d *Dataset) string { return fmt.Sprint(d.Step, " ", d.Level, " ", d.Shape) }

// jointGrains is the grain of every group of joinable datasets (jointKey)
// of which at least two are contiguous or chunked and one is contiguous or
// encoded in the part files (those that jointGrain.units cuts; merged
// datasets keep their cuboids' units, raw chunked ones their tiles).
func jointGrains(ds []Dataset) map[string]jointGrain {
	type group struct {
		g             jointGrain
		members, cuts int
	}
	groups := map[string]*group{}
	for i := range ds {
		d := &ds[i]
		tr := targetOf(d).traits()
		if len(d.Shape) == 0 || tr.bandStep == 0 {
			continue
		}
		k := jointKey(d)
		g := groups[k]
		if g == nil {
			g = &group{g: jointGrain{step: 1}}
			groups[k] = g
		}
		row := int64(d.ElemSize) * product(d.Shape[1:])
		if tr.encoded {
			row *= 2 // its buffer and its encoded chunks
		}
		if tr.bandCut {
			g.cuts++
		}
		g.g.step = lcm(g.g.step, tr.bandStep)
		g.g.rowBytes += row
		g.members++
	}
	out := map[string]jointGrain{}
	for k, g := range groups {
		if g.members >= 2 && g.cuts >= 1 {
			out[k] = g.g
		}
	}
	return out
}

func lcm(a, b int64) int64 {
	x, y := a, b
	for y != 0 {
		x, y = y, x%y
	}
	return a / x * b
}

// units cuts array a into bands of the group's grain: the fewest rows, a multiple of step,
// such that no block of a crosses from one band into the next (each block
// is read once, whole), doubled while a band of the group holds at most
// opts.Limits.TileTarget bytes. nil (cut a as its own) when g cuts nothing, when
// no such band of the group fits an item (Limits.ItemLimit), or when a's
// band exceeds limit bytes.
func (g jointGrain) units(a *catalog.Array, limit int64, opts Options) []catalog.Box {
	if g.step <= 0 || g.rowBytes <= 0 || len(a.Shape) == 0 || a.Shape[0] <= 0 {
		return nil
	}
	n0 := a.Shape[0]
	// The blocks' distinct extents along dimension 0: few (a block grid has
	// one per block row), so a set, not a sort of one per block (262,144
	// blocks an array: a serial 40 ms each).
	type span struct{ lo, hi int64 }
	distinct := map[span]struct{}{}
	for i := range a.Blocks {
		b := &a.Blocks[i].Box
		if len(b.Lower) > 0 && b.Count[0] > 0 {
			distinct[span{b.Lower[0], b.Lower[0] + b.Count[0]}] = struct{}{}
		}
	}
	spans := make([]span, 0, len(distinct))
	for s := range distinct {
		spans = append(spans, s)
	}
	crosses := func(rows int64) bool {
		for _, s := range spans {
			if s.lo/rows != (s.hi-1)/rows {
				return true
			}
		}
		return false
	}
	rows := g.step
	for ; rows < n0 && crosses(rows); rows += g.step {
		if rows*g.rowBytes > opts.Limits.ItemLimit {
			return nil
		}
	}
	if min(rows, n0)*g.rowBytes > opts.Limits.ItemLimit {
		return nil
	}
	rowBytes := int64(a.DType.Size) * product(a.Shape[1:])
	for rows < n0 && 2*rows*g.rowBytes <= opts.Limits.TileTarget && 2*rows*rowBytes <= limit {
		rows *= 2
	}
	if min(rows, n0)*rowBytes > limit {
		return nil
	}
	var out []catalog.Box
	for lo := int64(0); lo < n0; lo += rows {
		b := catalog.Box{Lower: make([]int64, len(a.Shape)), Count: slices.Clone(a.Shape)}
		b.Lower[0], b.Count[0] = lo, min(rows, n0-lo)
		out = append(out, b)
	}
	return out
}

// Options.Limits.ItemLimit caps the buffers of an item: a quarter of the
// budget, at most limits.MaxItemBytes (or the slab target, if more), so
// that the pipeline's items (pipelineDepth) and their reads fit the budget
// together. jointItems takes items smaller than that where their reads are
// long enough (minItemRead). Items are not the journal's granularity (units
// are), so a sharded job's unit size does not cap them.

// minItemRead is the mean read request an item is grown to reach: on the
// planner's built-in cost model (50 us a request, 1 GiB/s) the requests'
// latency then costs at most a fifth of the transfer. Measured on bp_gen.py
// BP4 and BP5 256^3 in 8^3 blocks (4 variables, 8 writers after a 60%
// load-balancing shuffle, 4 sub-files): items of 16 rows read 39 KiB per
// request (7,237 requests), of 32 rows 279 KiB (1,024), of 64 rows 2.2 MiB
// (128), of 128 rows 12 MiB (24): the blocks of a row band lie in runs of
// the writers' Morton order that lengthen eightfold with every doubling.
const minItemRead = 256 << 10

// jointItems groups the units of parts into items, each admitted,
// assembled (one pass over the union of its units' reads) and written as
// one; each part's units keep their order over the items. Items are made
// of whole regions (jointRegions: the row bands that no part's unit
// crosses), so that an item holds every dataset's units of the same rows
// and its pass reads the blocks stored together once. An item holds k
// consecutive regions, k = 1, 2, 4, ...: the smallest k whose items read
// (predicted by itemReads, as assembleJoint reads them) at least minRead
// bytes per request (minItemRead), else the largest whose items fit limit. A region
// over limit is cut by position (byPosition). One part: one unit per item.
func jointItems(parts []*jointPart, limit, readLimit, minRead int64) ([][]jointRef, *jointIndex) {
	if len(parts) == 1 {
		items := make([][]jointRef, len(parts[0].slabs))
		for i := range items {
			items[i] = []jointRef{{0, i}}
		}
		return items, nil
	}
	regions := jointRegions(parts)
	if regions == nil {
		return byPosition(parts, nil, limit), nil
	}
	bytes := make([]int64, len(regions))
	for r, rg := range regions {
		for pi, span := range rg {
			p := parts[pi]
			for s := span[0]; s < span[1]; s++ {
				bytes[r] += p.slabs[s].Elements() * int64(p.a.DType.Size) * (1 + p.keep)
			}
		}
	}
	fits := func(k int) bool {
		for r := 0; r < len(regions); r += k {
			var n int64
			for _, b := range bytes[r:min(r+k, len(regions))] {
				n += b
			}
			if n > limit {
				return false
			}
		}
		return true
	}
	lows := make([]int64, len(regions)) // each region's first row
	for r, rg := range regions {
		lows[r] = math.MaxInt64
		for pi, sp := range rg {
			for s := sp[0]; s < sp[1]; s++ {
				lows[r] = min(lows[r], parts[pi].slabs[s].Lower[0])
			}
		}
	}
	reads, files := newItemReads(parts, regions, lows)
	k := 1
	for next := 1; next <= 2*len(regions) && (next == 1 || fits(next)); next *= 2 {
		k = next
		if calls, n := reads.predict(len(regions), k, readLimit); calls == 0 || n/calls >= minRead {
			break
		}
	}
	var items [][]jointRef
	x := &jointIndex{files: files, ext: reads, k: k}
	for r := 0; r < len(regions); r += k {
		group := regions[r:min(r+k, len(regions))]
		var n int64
		for _, b := range bytes[r : r+len(group)] {
			n += b
		}
		spans := make([][2]int, len(parts))
		for pi := range parts {
			spans[pi] = [2]int{group[0][pi][0], group[len(group)-1][pi][1]}
		}
		if n > limit { // one region over the limit
			cut := byPosition(parts, spans, limit)
			items = append(items, cut...)
			for range cut {
				x.group = append(x.group, r/k)
			}
			continue
		}
		var it []jointRef
		for pi, sp := range spans {
			for s := sp[0]; s < sp[1]; s++ {
				it = append(it, jointRef{pi, s})
			}
		}
		items = append(items, it)
		x.group = append(x.group, r/k)
	}
	return items, x
}

// jointRegions cuts the units of parts (each part's in order) into
// regions: region r holds units [r[p][0], r[p][1]) of part p, and every
// unit of a region lies within the rows (dimension 0) between the region's
// cuts, which no unit of any part crosses. Units cut at the same rows
// (prepared in a common grain: jointGrain) give one region per band; units
// that cut differently give regions spanning the rows up to a common cut.
// Regions are in row order; none is empty. nil when a part's units are
// not row ranges (scalars).
func jointRegions(parts []*jointPart) [][][2]int {
	type cuts struct {
		pre, suf []int64 // pre[i]: the most hi of units [0, i); suf[i]: the least lo of units [i, n)
	}
	cs := make([]cuts, len(parts))
	var rows []int64 // candidate cut rows: where a part's units before end
	for pi, p := range parts {
		n := len(p.slabs)
		c := cuts{pre: make([]int64, n+1), suf: make([]int64, n+1)}
		c.pre[0], c.suf[n] = math.MinInt64, math.MaxInt64
		for i, b := range p.slabs {
			if len(b.Lower) == 0 {
				return nil
			}
			c.pre[i+1] = max(c.pre[i], b.Lower[0]+b.Count[0])
		}
		for i := n - 1; i >= 0; i-- {
			c.suf[i] = min(c.suf[i+1], p.slabs[i].Lower[0])
		}
		rows = append(rows, c.pre[1:n]...)
		cs[pi] = c
	}
	slices.Sort(rows)
	rows = slices.Compact(rows)
	prev := make([]int, len(parts)) // split indices at the last cut
	var regions [][][2]int
	emit := func(at []int) {
		rg := make([][2]int, len(parts))
		empty := true
		for pi := range parts {
			rg[pi] = [2]int{prev[pi], at[pi]}
			empty = empty && at[pi] == prev[pi]
		}
		if !empty {
			regions = append(regions, rg)
			copy(prev, at)
		}
	}
	at := make([]int, len(parts))
	for _, r := range rows {
		ok := true
		for pi, c := range cs {
			// i: the most units that end by r (pre is nondecreasing); the
			// cut is valid when none after them starts before r.
			i := sort.Search(len(c.pre), func(i int) bool { return c.pre[i] > r }) - 1
			if c.suf[i] < r {
				ok = false
				break
			}
			at[pi] = i
		}
		if ok {
			emit(at)
		}
	}
	for pi, p := range parts {
		at[pi] = len(p.slabs)
	}
	emit(at)
	return regions
}

// byPosition merges units of parts into items by position in the array
// (row-major index of their first element), each part's units in order: an
// item grows while its buffers hold at most limit bytes (one unit at
// least). spans (nil: all) limits part p to its units [spans[p][0],
// spans[p][1]).
func byPosition(parts []*jointPart, spans [][2]int, limit int64) [][]jointRef {
	pos := func(p *jointPart, s int) float64 {
		b := p.slabs[s]
		var lin int64
		for d, n := range p.a.Shape {
			lin = lin*n + b.Lower[d]
		}
		return float64(lin) / float64(max(product(p.a.Shape), 1))
	}
	next, end := make([]int, len(parts)), make([]int, len(parts))
	for i, p := range parts {
		next[i], end[i] = 0, len(p.slabs)
		if spans != nil {
			next[i], end[i] = spans[i][0], spans[i][1]
		}
	}
	var items [][]jointRef
	var cur []jointRef
	var curBytes int64
	for {
		best := -1
		for i, p := range parts {
			if next[i] < end[i] && (best < 0 || pos(p, next[i]) < pos(parts[best], next[best])) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		p, s := parts[best], next[best]
		next[best]++
		bytes := p.slabs[s].Elements() * int64(p.a.DType.Size) * (1 + p.keep)
		if len(cur) > 0 && curBytes+bytes > limit {
			items = append(items, cur)
			cur, curBytes = nil, 0
		}
		cur = append(cur, jointRef{best, s})
		curBytes += bytes
	}
	if len(cur) > 0 {
		items = append(items, cur)
	}
	return items
}

// itemReads are the extents of the blocks of every unit of a set of
// parts, in file and offset order (as assembleJoint sorts an item's), each
// with its unit's region, for predicting the reads of items of k regions.
type itemReads []extentRef

type extentRef struct {
	file     int32 // rank of the file's name
	region   int32
	off, len int64
}

// newItemReads lists the blocks of parts by region (regions: jointRegions;
// lows[r]: the first row of region r): a block is in every region its rows
// meet where its part has units.
func newItemReads(parts []*jointPart, regions [][][2]int, lows []int64) (itemReads, map[string]int32) {
	n := 0
	for _, p := range parts {
		n += len(p.a.Blocks)
	}
	refs := make(itemReads, 0, n)
	files := map[string]int32{}
	for pi, p := range parts {
		last, lastID := "", int32(-1)
		for i := range p.a.Blocks {
			b := &p.a.Blocks[i]
			if b.Inline() != nil || b.Length <= 0 || len(b.Box.Lower) == 0 {
				continue
			}
			if lastID < 0 || b.File != last {
				id, ok := files[b.File]
				if !ok {
					id = int32(len(files))
					files[b.File] = id
				}
				last, lastID = b.File, id
			}
			lo, hi := b.Box.Lower[0], b.Box.Lower[0]+b.Box.Count[0]
			r := max(sort.Search(len(lows), func(r int) bool { return lows[r] > lo })-1, 0)
			for first := true; r < len(regions) && (first || lows[r] < hi); r, first = r+1, false {
				if sp := regions[r][pi]; sp[1] > sp[0] {
					refs = append(refs, extentRef{lastID, int32(r), b.Offset, b.Length})
				}
			}
		}
	}
	// Files in name order, as byFileOffset sorts them.
	names := make([]string, len(files))
	for n, f := range files {
		names[f] = n
	}
	rank := nameRanks(names)
	for i := range refs {
		refs[i].file = rank[refs[i].file]
	}
	for n, f := range files {
		files[n] = rank[f]
	}
	sortExtents(refs)
	return refs, files
}

// jointIndex locates the blocks of a set of parts' items in the files,
// for assembleJoint to tell the gaps that hold other items' blocks.
type jointIndex struct {
	files map[string]int32 // name -> rank, as in ext
	ext   itemReads
	k     int   // regions per item: an extent's group is its region / k
	group []int // items[i]'s group (an item cut from an over-limit region shares it)
}

// foreign reports whether bytes [from, to) of file hold (or a block
// covering from is) a block of another group than item's.
func (x *jointIndex) foreign(item int, file string, from, to int64) bool {
	f, ok := x.files[file]
	if !ok {
		return true
	}
	return x.ext.foreignGap(x.k, x.group[item], f, from, to)
}

// foreignGap reports whether bytes [from, to) of file f hold an extent of
// another group than g (groups of k regions), or such an extent covers
// from: the bytes of other items that a read coalesced through the gap
// would fetch. The one notion of a foreign gap, for the joint reader
// (jointIndex.foreign) and for predict: where they differed (the same
// block listed for two regions of different groups, at the offset that
// ends the gap, or nested blocks), the prediction counted a foreign gap
// that the reader read through.
func (ir itemReads) foreignGap(k, g int, f int32, from, to int64) bool {
	other := func(e extentRef) bool { return int(e.region)/k != g }
	i := sort.Search(len(ir), func(i int) bool {
		e := ir[i]
		return e.file > f || e.file == f && e.off >= from
	})
	if i > 0 && ir[i-1].file == f && ir[i-1].off+ir[i-1].len > from && other(ir[i-1]) {
		return true
	}
	for ; i < len(ir) && ir[i].file == f && ir[i].off < to; i++ {
		if other(ir[i]) {
			return true
		}
	}
	return false
}

// sortExtents orders refs by file and offset, refs of one extent in the
// order they had (a block's regions ascending). An LSD radix sort on the
// packed key (file above, offset below: 10^5 extents in a few ms where a
// comparison sort took 16 ms), a stable comparison sort where the key does
// not fit.
func sortExtents(refs itemReads) {
	const offBits = 48
	if len(refs) < 2 {
		return
	}
	key := func(e extentRef) uint64 { return uint64(e.file)<<offBits | uint64(e.off) }
	for _, e := range refs {
		if e.off < 0 || e.off >= 1<<offBits || e.file >= 1<<(64-offBits) {
			slices.SortStableFunc(refs, func(x, y extentRef) int {
				return cmp.Or(cmp.Compare(x.file, y.file), cmp.Compare(x.off, y.off))
			})
			return
		}
	}
	tmp := make(itemReads, len(refs))
	catalog.Populate(tmp)
	src, dst := refs, tmp
	for shift := 0; shift < 64; shift += 8 {
		var count [257]int
		for _, e := range src {
			count[key(e)>>shift&0xff+1]++
		}
		if slices.Contains(count[1:], len(src)) {
			continue // one digit for all: already in order
		}
		for i := 1; i < len(count); i++ {
			count[i] += count[i-1]
		}
		for _, e := range src {
			d := key(e) >> shift & 0xff
			dst[count[d]] = e
			count[d]++
		}
		src, dst = dst, src
	}
	if &src[0] != &refs[0] {
		copy(refs, src)
	}
}

// predict is the read requests and bytes of items of k consecutive regions
// (of n): each item's extents, per file, in gap-bounded segments
// (gapSegment; a gap is foreign as the joint reader's index says:
// foreignGap from the end of the item's extent before) of coalesced runs of
// at most readLimit bytes (catalog.Runs), as assembleJoint and a
// coalescing Source read them. The refs of an item are in its own file and offset
// order within the whole list, so one walk with a state per item follows
// every item at once (TestPredictReads checks it against gapSegment and
// catalog.Runs with jointIndex.foreign, TestPredictJointReads against the
// reads assembleJoint makes).
func (ir itemReads) predict(n, k int, readLimit int64) (calls, bytes int64) {
	if readLimit <= 0 {
		readLimit = limits.MaxReadLimit
	}
	type state struct {
		file             int32
		last             int   // the index of the item's last extent
		end, want, gaps  int64 // the segment's
		runStart, runEnd int64
		open             bool
	}
	st := make([]state, (n+k-1)/k)
	for j, e := range ir {
		g := int(e.region) / k
		s := &st[g]
		seg := s.open && s.file == e.file
		if seg {
			if gap := e.off - s.end; gap > 0 && ir.foreignGap(k, g, e.file, ir[s.last].off+ir[s.last].len, e.off) {
				if gapShare*(s.gaps+gap) > s.want+e.len {
					seg = false
				} else {
					s.gaps += gap
				}
			}
		}
		if !seg {
			if s.open {
				bytes += s.runEnd - s.runStart
			}
			*s = state{file: e.file, last: j, end: e.off + e.len, want: e.len, runStart: e.off, runEnd: e.off + e.len, open: true}
			calls++
			continue
		}
		s.last = j
		s.end = max(s.end, e.off+e.len)
		s.want += e.len
		if e.off < s.runEnd || e.off-s.runEnd > catalog.CoalesceGap || e.off+e.len-s.runStart > readLimit {
			bytes += s.runEnd - s.runStart
			s.runStart = e.off
			calls++
		}
		s.runEnd = e.off + e.len
	}
	for _, s := range st {
		if s.open {
			bytes += s.runEnd - s.runStart
		}
	}
	return calls, bytes
}

// joinGroups sorts a shard's groups (by dataset, in job order; whole[i]:
// group i holds every unit of its dataset) into the sets written through
// one pipeline: the groups of joinable datasets (one step, level and
// shape), each set in the order of its first group.
func joinGroups(j *Plan, groups [][]*Unit, whole []bool) [][]unitGroup {
	var sets [][]unitGroup
	for i, g := range groups {
		ug := unitGroup{di: g[0].Dataset, us: g, whole: whole[i]}
		d := &j.Datasets[ug.di]
		k := slices.IndexFunc(sets, func(s []unitGroup) bool { return joinable(&j.Datasets[s[0].di], d) })
		if k < 0 {
			sets = append(sets, []unitGroup{ug})
			continue
		}
		sets[k] = append(sets[k], ug)
	}
	return sets
}

// groupVars names the variables of gs for the Monitor.
func (e *engine) groupVars(gs []unitGroup) string {
	var names []string
	for _, g := range gs {
		if v := e.job.Datasets[g.di].Var; !slices.Contains(names, v) {
			names = append(names, v)
		}
	}
	return strings.Join(names, ", ")
}

// jointUnit is one unit of an item being assembled: its dataset's array,
// box, reads (trimmed to the box), fill value and buffer (dirty: reused,
// holding an earlier unit's bytes).
type jointUnit struct {
	a        *catalog.Array
	slab     catalog.Box
	reads    []*catalog.Block
	fill     []byte
	buf      []byte
	dirty    bool
	disjoint bool
}

// assembleJoint assembles the units of one item with one pass over the
// union of their reads in file order (one ReadBlocks call: runs coalesced
// across the datasets' blocks), each block's bytes copied into its own
// unit. Files are read in parallel, at most cap(tokens) at once, when no
// two blocks of a unit overlap (each byte of a buffer then has one writer).
// foreign(file, from, to) reports that bytes [from, to) of file hold blocks
// of other items (jointIndex.foreign); nil: every gap may.
func assembleJoint(ctx context.Context, mon *Monitor, in input, units []jointUnit, tokens chan struct{}, foreign func(file string, from, to int64) bool) error {
	// Stage times summed over the readers: copying (and filling) is
	// assembly, the rest of each reader's time fetching.
	var copying, fetching atomic.Int64
	if mon != nil {
		defer func() {
			mon.stage[stageAssemble].Add(copying.Load())
			mon.stage[stageFetch].Add(fetching.Load())
		}()
	}
	type ref struct {
		b *catalog.Block
		u int
	}
	n := 0
	for k := range units {
		n += len(units[k].reads)
	}
	all := make([]ref, 0, n)
	disjoint := true
	for k := range units {
		u := &units[k]
		if (u.fill != nil || u.dirty) && !covers(u.reads, u.slab, u.disjoint) {
			t := time.Now()
			if u.fill != nil {
				fillBuf(u.buf, u.fill)
			} else {
				clear(u.buf)
			}
			copying.Add(int64(time.Since(t)))
		}
		disjoint = disjoint && u.disjoint
		for _, b := range u.reads {
			all = append(all, ref{b, k})
		}
	}
	sortRefs(all, func(r ref) (*catalog.Block, int) { return r.b, r.u })
	read := func(refs []ref) error {
		select {
		case tokens <- struct{}{}:
		case <-ctx.Done():
			return ctx.Err()
		}
		defer func() { <-tokens }()
		start := time.Now()
		var fetched int64 // in the file reads: the rest is copying
		defer func() {
			fetching.Add(fetched)
			copying.Add(int64(time.Since(start)) - fetched)
		}()
		blocks := make([]*catalog.Block, len(refs))
		dts := make([]catalog.DType, len(refs))
		for i, r := range refs {
			blocks[i], dts[i] = r.b, units[r.u].a.DType
		}
		return in.src.ReadBlocks(ctx, catalog.Reads{Blocks: blocks, DTypes: dts, Limit: in.limit, Timer: &fetched}, func(i int, data []byte) error {
			u := &units[refs[i].u]
			err := copyBlock(u.buf, u.slab, refs[i].b, data, u.a.DType)
			if err != nil {
				return fmt.Errorf("%s step %d: slab %v: %w", u.a.Var, u.a.Step, u.slab, err)
			}
			return ctx.Err()
		})
	}
	// Each file's refs are read in segments through which coalescing
	// drops at most 1/gapShare of gap bytes holding other items' blocks.
	readFile := func(refs []ref) error {
		for len(refs) > 0 {
			n := gapSegment(len(refs), func(i int) *catalog.Block { return refs[i].b }, func(i int) bool {
				// From the end of the blocks before (sorted by offset: the
				// last ends furthest but where blocks overlap).
				from := refs[i-1].b.Offset + refs[i-1].b.Length
				return foreign == nil || foreign(refs[i].b.File, from, refs[i].b.Offset)
			})
			if err := read(refs[:n]); err != nil {
				return err
			}
			refs = refs[n:]
		}
		return nil
	}
	if !disjoint || cap(tokens) < 2 {
		for i := 0; i < len(all); {
			j := i + 1
			for j < len(all) && all[j].b.File == all[i].b.File {
				j++
			}
			if err := readFile(all[i:j]); err != nil {
				return err
			}
			i = j
		}
		return nil
	}
	var g errgroup.Group
	for i := 0; i < len(all); {
		j := i + 1
		for j < len(all) && all[j].b.File == all[i].b.File {
			j++
		}
		refs := all[i:j]
		g.Go(func() error { return readFile(refs) })
		i = j
	}
	return g.Wait()
}

// gapShare bounds the gap bytes an item's pass reads where other items'
// blocks lie: a segment's gaps that hold some (between blocks it wants, in
// one file) sum to at most 1/gapShare of the bytes it wants. Other gaps
// (block headers, HDF5's B-tree nodes, other datasets' bytes) are left to
// the Source's coalescing, as when a dataset is read alone: counted,
// BP4's block headers (~115 bytes before each 8^3 block of 4 bytes, 4%)
// made every block a request of its own (65,536 instead of 1,024), and
// HDF5's B-tree nodes between 4^3 chunks 367 requests instead of 28.
const gapShare = 32

// gapSegment is the length of the first segment of n blocks (of one file,
// sorted by offset; block(i) is the i-th; foreign(i): the gap before block
// i holds blocks of other items): blocks are added while the foreign gap
// bytes before them, summed, stay within 1/gapShare of the bytes wanted,
// so that a Source, coalescing through the gaps, reads the item's
// blocks with at most that much of other items' bytes. Where an item's
// blocks are sparse in the file (the blocks between belong to other
// items), each of its runs is read alone: a call per run, and no other
// item's bytes.
func gapSegment(n int, block func(int) *catalog.Block, foreign func(int) bool) int {
	b := block(0)
	if b.Inline() != nil || b.Length <= 0 {
		return 1
	}
	end, want, gaps := b.Offset+b.Length, b.Length, int64(0)
	i := 1
	for ; i < n; i++ {
		b = block(i)
		if b.Inline() != nil || b.Length <= 0 {
			break
		}
		if g := b.Offset - end; g > 0 && foreign(i) {
			if gapShare*(gaps+g) > want+b.Length {
				break
			}
			gaps += g
		}
		end = max(end, b.Offset+b.Length)
		want += b.Length
	}
	return i
}
