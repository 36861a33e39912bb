package rewriter

import (
	"cmp"
	"slices"
	"strings"

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
