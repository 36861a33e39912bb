package verify

import (
	"context"
	"fmt"

	"relayout/catalog"
)

// The verifier's own reading of placement maps (catalog.PlacedSource:
// SCORPIO's decompositions). The reader scatters a frame of a distributed
// variable through a plan of runs built from the sorted map, and the
// rewriter writes what it scattered; were the plan wrong, the input read
// back through the same reader would agree with the output. So the verifier
// reads such a block's parts and maps as stored and places every element
// itself, one by one, deciding the maps' base on its own:
//
//	map entries            base        pad
//	any negative           0           -1 (SCORPIO's CONTIG rearranger)
//	none negative, n       0           -  (CONTIG without pads: every place
//	  entries 0..n-1                       exactly once only as 0-based)
//	otherwise              1           0 (box and subset rearrangers)
//
// SCORPIO pads the map of an I/O group with 0 or 1 elements to two
// entries, the second 0: in a 0-based map that 0 is a pad, and a first 0
// ([0, 0], an empty group) places element 0 only when no other part does
// (a group of two whose second place is 0 looks the same: SCORPIO's files
// do not tell them apart, and the reader reads them so too).
// A place reached twice, an entry past the block, or a part too short for
// an entry that is no pad is corrupt input. Places no entry reaches hold
// the placement's fill value.

// placingSource reads the blocks its source places through maps by
// placing them itself (placeParts); every other block, and every other
// capability the verifier looks for, is the source's.
type placingSource struct {
	src catalog.PlacedSource
}

// placing returns src, or src wrapped so that its placed blocks are placed
// by the verifier.
func placing(src catalog.Source) catalog.Source {
	if ps, ok := src.(catalog.PlacedSource); ok {
		return placingSource{ps}
	}
	return src
}

func (p placingSource) ReadBlock(ctx context.Context, b *catalog.Block, dt catalog.DType) ([]byte, error) {
	pl, err := p.src.Placement(ctx, b, dt)
	if err != nil {
		return nil, err
	}
	if pl == nil {
		return p.src.ReadBlock(ctx, b, dt)
	}
	out, err := placeParts(b.Box.Elements(), dt.Size, pl)
	if err != nil {
		return nil, fmt.Errorf("verify: %s block at %v: %w", b.File, b.Box.Lower, err)
	}
	return out, nil
}

// ReadBlocks implements catalog.BatchSource, a block at a time.
func (p placingSource) ReadBlocks(ctx context.Context, blocks []*catalog.Block, dt catalog.DType, fn func(i int, data []byte) error) error {
	for i, b := range blocks {
		data, err := p.ReadBlock(ctx, b, dt)
		if err != nil {
			return err
		}
		if err := fn(i, data); err != nil {
			return err
		}
	}
	return nil
}

// ReadBlocksMixed implements catalog.MixedBatchSource, a block at a time.
func (p placingSource) ReadBlocksMixed(ctx context.Context, blocks []*catalog.Block, dts []catalog.DType, fn func(i int, data []byte) error) error {
	for i, b := range blocks {
		data, err := p.ReadBlock(ctx, b, dts[i])
		if err != nil {
			return err
		}
		if err := fn(i, data); err != nil {
			return err
		}
	}
	return nil
}

// IOStats is the source's counters.
func (p placingSource) IOStats() catalog.IOCounters { return catalog.ReadCounters(p.src) }

// placeParts places pl's parts into a block of n elements of size bytes
// (see above).
func placeParts(n int64, size int, pl *catalog.Placement) ([]byte, error) {
	if len(pl.Parts) != len(pl.Maps) {
		return nil, catalog.Corrupt("", "", -1, "%d data parts for %d maps", len(pl.Parts), len(pl.Maps))
	}
	if len(pl.Fill) != size {
		return nil, fmt.Errorf("a fill value of %d bytes for %d-byte elements: %w", len(pl.Fill), size, catalog.ErrCorrupt)
	}
	zeroBased := mapsZeroBased(pl.Maps, n)
	out := make([]byte, n*int64(size))
	covered := make([]bool, n)
	put := func(g, j int, dst int64) error {
		if dst >= n {
			return catalog.Corrupt("", "", -1, "map %d entry %d places element %d of %d", g, j, dst, n)
		}
		if covered[dst] {
			return catalog.Corrupt("", "", -1, "map %d entry %d places element %d, placed before", g, j, dst)
		}
		src := int64(j) * int64(size)
		if src+int64(size) > int64(len(pl.Parts[g])) {
			return catalog.Corrupt("", "", -1, "map %d entry %d: its part holds %d bytes", g, j, len(pl.Parts[g]))
		}
		copy(out[dst*int64(size):], pl.Parts[g][src:src+int64(size)])
		covered[dst] = true
		return nil
	}
	var empty []int // 0-based [0, 0] maps: element 0 when nothing else places it
	for g, m := range pl.Maps {
		padded := zeroBased && len(m) == 2 && m[1] == 0
		if padded && m[0] == 0 {
			empty = append(empty, g)
			continue
		}
		for j, e := range m {
			dst := e
			if !zeroBased {
				dst = e - 1
			}
			if padded && j == 1 || dst < 0 {
				if dst < -1 {
					return nil, catalog.Corrupt("", "", -1, "map %d entry %d: %d", g, j, e)
				}
				continue // a pad
			}
			if err := put(g, j, dst); err != nil {
				return nil, err
			}
		}
	}
	for _, g := range empty {
		if n > 0 && !covered[0] && len(pl.Parts[g]) >= size {
			if err := put(g, 0, 0); err != nil {
				return nil, err
			}
		}
	}
	for i, c := range covered {
		if !c {
			copy(out[int64(i)*int64(size):], pl.Fill)
		}
	}
	return out, nil
}

// mapsZeroBased decides the base of maps over n places (see above).
func mapsZeroBased(maps [][]int64, n int64) bool {
	seen := make([]bool, n)
	var entries, distinct int64
	for _, m := range maps {
		for _, e := range m {
			if e < 0 {
				return true
			}
			entries++
			if e < n && !seen[e] {
				seen[e] = true
				distinct++
			}
		}
	}
	return n > 0 && entries == n && distinct == n
}
