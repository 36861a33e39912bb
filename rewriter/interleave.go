package rewriter

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"relayout/catalog"
)

// Units whose blocks interleave in the input.
//
// Input written in scattered order (load balancing, or HDF5 chunks written
// as ranks finished them) places the blocks of one output unit all over the
// variable's extent in the file: a BatchSource coalesces a unit's small
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

// readCost is the bytes a BatchSource reads for reads (sorted by file and
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
// and shape together (engine.groups): their units are merged into items in
// array order (jointItems), each item read in one pass over the union of
// its blocks in file order (assembleJoint), and each unit is then written,
// hashed and journaled as its own dataset's, in that dataset's order.

// joinable reports whether datasets x and y may share a pipeline: the same
// step, level and shape (units of the same region of the same writers).
func joinable(x, y *JobDataset) bool {
	return x.Step == y.Step && x.Level == y.Level && slices.Equal(x.Shape, y.Shape) && len(x.Shape) > 0
}

// itemLimit caps the buffers of an item: a sixteenth of the budget (or
// the slab target, if more; an item holds at least one unit). An item need
// not span the interleaved region to read the input once: its pass reads
// each file in segments that coalesce through at most 1/gapShare of gap
// bytes (gapSegment), so the blocks of other items between its own are
// skipped, not read. Measured on bp_gen.py BP4 256^3 in 8^3 blocks (4
// variables, 8 writers, 4 sub-files, 293 MiB stored) at the 1 GiB budget:
// items of half the budget read 293 MiB in 20 calls at 548 MB peak RSS,
// a sixteenth 281 MiB (block headers skipped) in 90,785 calls at 241 MB;
// at 256 MiB 563 MiB (1.9x) at 292 MB against 279 MiB at 208 MB. Items
// are not the journal's granularity (units are), so a sharded job's unit
// size does not cap them.
func (o Options) itemLimit() int64 { return max(o.budget(), o.maxMem()/16) }

// jointItems merges the units of parts into items: each part's units keep
// their order; units are taken by position in the array (row-major index
// of their first element), and an item grows while its buffers hold at
// most limit bytes, so that the units of one array region, whatever
// dataset they belong to, are assembled together. One part: one unit per
// item.
func jointItems(parts []*jointPart, limit int64) [][]jointRef {
	if len(parts) == 1 {
		items := make([][]jointRef, len(parts[0].slabs))
		for i := range items {
			items[i] = []jointRef{{0, i}}
		}
		return items
	}
	pos := func(p *jointPart, s int) float64 {
		b := p.slabs[s]
		var lin int64
		for d, n := range p.a.Shape {
			lin = lin*n + b.Lower[d]
		}
		return float64(lin) / float64(max(product(p.a.Shape), 1))
	}
	next := make([]int, len(parts))
	var items [][]jointRef
	var cur []jointRef
	var curBytes int64
	for {
		best := -1
		for i, p := range parts {
			if next[i] < len(p.slabs) && (best < 0 || pos(p, next[i]) < pos(parts[best], next[best])) {
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

// joinGroups sorts a shard's groups (by dataset, in job order; whole[i]:
// group i holds every unit of its dataset) into the sets written through
// one pipeline: the groups of joinable datasets (one step, level and
// shape), each set in the order of its first group.
func joinGroups(j *Job, groups [][]*Unit, whole []bool) [][]unitGroup {
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
// union of their reads in file order (src.ReadBlocksMixed: runs coalesced
// across the datasets' blocks), each block's bytes copied into its own
// unit. Files are read in parallel, at most cap(tokens) at once, when no
// two blocks of a unit overlap (each byte of a buffer then has one writer).
func assembleJoint(ctx context.Context, mon *Monitor, src catalog.MixedBatchSource, units []jointUnit, tokens chan struct{}) error {
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
	var all []ref
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
	slices.SortFunc(all, func(x, y ref) int {
		if c := byFileOffset(x.b, y.b); c != 0 {
			return c
		}
		return cmp.Compare(x.u, y.u)
	})
	read := func(refs []ref) error {
		select {
		case tokens <- struct{}{}:
		case <-ctx.Done():
			return ctx.Err()
		}
		defer func() { <-tokens }()
		start := time.Now()
		var copied time.Duration
		defer func() {
			copying.Add(int64(copied))
			fetching.Add(int64(time.Since(start) - copied))
		}()
		blocks := make([]*catalog.Block, len(refs))
		dts := make([]catalog.DType, len(refs))
		for i, r := range refs {
			blocks[i], dts[i] = r.b, units[r.u].a.DType
		}
		return src.ReadBlocksMixed(ctx, blocks, dts, func(i int, data []byte) error {
			t := time.Now()
			u := &units[refs[i].u]
			err := copyBlock(u.buf, u.slab, refs[i].b, data, u.a.DType)
			copied += time.Since(t)
			if err != nil {
				return fmt.Errorf("%s step %d: slab %v: %w", u.a.Var, u.a.Step, u.slab, err)
			}
			return ctx.Err()
		})
	}
	// Each file's refs are read in segments through which coalescing
	// drops at most 1/gapShare of gap bytes (the other items' blocks).
	readFile := func(refs []ref) error {
		for len(refs) > 0 {
			n := gapSegment(len(refs), func(i int) *catalog.Block { return refs[i].b })
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

// gapShare bounds the gap bytes an item's pass reads: a segment's gaps
// (between blocks it wants, in one file) sum to at most 1/gapShare of the
// bytes it wants.
const gapShare = 32

// gapSegment is the length of the first segment of n blocks (of one file,
// sorted by offset; block(i) is the i-th): blocks are added while the gap
// bytes before them, summed, stay within 1/gapShare of the bytes wanted,
// so that a BatchSource, coalescing through the gaps, reads the item's
// blocks with at most that much more. Where an item's blocks are sparse in
// the file (the blocks between belong to other items), each of its runs is
// read alone: a call per run, and no other item's bytes.
func gapSegment(n int, block func(int) *catalog.Block) int {
	b := block(0)
	if b.Inline != nil || b.Length <= 0 {
		return 1
	}
	end, want, gaps := b.Offset+b.Length, b.Length, int64(0)
	i := 1
	for ; i < n; i++ {
		b = block(i)
		if b.Inline != nil || b.Length <= 0 {
			break
		}
		if g := b.Offset - end; g > 0 {
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
