package verify

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"

	"relayout/catalog"
)

// The verifier's own reading of placement maps (catalog.Caps.Places:
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
// placing them itself (mapReading.place); every other block, and
// everything else a source does, is the source's. Each map is read once
// (its base, holes and validity: mapReading), whatever number of blocks
// it places.
type placingSource struct {
	catalog.Source
	maps *sync.Map // Placement.Map -> *mapReading
}

// placing returns src, or src wrapped so that its placed blocks are placed
// by the verifier.
func placing(src catalog.Source) catalog.Source {
	if src.Caps().Places {
		return placingSource{src, &sync.Map{}}
	}
	return src
}

// ReadBlocks implements catalog.Source, a block at a time.
func (p placingSource) ReadBlocks(ctx context.Context, r catalog.Reads, fn func(i int, data []byte) error) error {
	return catalog.ReadEach(ctx, r, func(b *catalog.Block, dt catalog.DType, dst []byte) ([]byte, error) {
		pl, err := p.Source.Placement(ctx, b, dt)
		if err != nil {
			return nil, err
		}
		if pl == nil {
			var out []byte
			one := catalog.Reads{Blocks: []*catalog.Block{b}, DTypes: []catalog.DType{dt}, Limit: r.Limit, Timer: r.Timer}
			if dst != nil {
				one.Into = [][]byte{dst}
			}
			err := p.Source.ReadBlocks(ctx, one, func(_ int, data []byte) error {
				out = data
				if dst == nil {
					out = append([]byte(nil), data...)
				}
				return nil
			})
			return out, err
		}
		return p.place(b, dt, pl, dst)
	}, fn)
}

// place places block b's parts (pl) by the verifier's reading of its maps,
// into dst when not nil.
func (p placingSource) place(b *catalog.Block, dt catalog.DType, pl *catalog.Placement, dst []byte) ([]byte, error) {
	n := b.Box.Elements()
	var mr *mapReading
	var err error
	if v, ok := p.maps.Load(pl.Map); ok && pl.Map != "" && v.(*mapReading).n == n {
		mr = v.(*mapReading)
	} else {
		if mr, err = readMaps(pl.Maps, n); err != nil {
			return nil, fmt.Errorf("verify: %s block at %v: %w", b.File, b.Box.Lower, err)
		}
		if pl.Map != "" {
			p.maps.Store(pl.Map, mr)
		}
	}
	if int64(len(dst)) != n*int64(dt.Size) {
		dst = make([]byte, n*int64(dt.Size))
	}
	if err := mr.place(dst, dt.Size, pl); err != nil {
		return nil, fmt.Errorf("verify: %s block at %v: %w", b.File, b.Box.Lower, err)
	}
	return dst, nil
}

// mapReading is the verifier's reading of maps over n places (see above):
// their base, the [0, 0] map that places element 0 (-1: none), and the
// places no entry reaches; reading checked every entry (in range, no
// place twice).
type mapReading struct {
	n         int64
	zeroBased bool
	takes0    int
	holes     []int64
}

// readMaps reads maps over n places.
func readMaps(maps [][]int64, n int64) (*mapReading, error) {
	mr := &mapReading{n: n, zeroBased: mapsZeroBased(maps, n), takes0: -1}
	covered := make([]bool, n)
	var empty []int // 0-based [0, 0] maps: element 0 when nothing else places it
	for g, m := range maps {
		if mr.padded(m) && m[0] == 0 {
			empty = append(empty, g)
			continue
		}
		for j, e := range m {
			dst := mr.dst(m, j, e)
			if dst < 0 {
				if dst < -1 {
					return nil, catalog.Corrupt("", "", -1, "map %d entry %d: %d", g, j, e)
				}
				continue // a pad
			}
			if dst >= n {
				return nil, catalog.Corrupt("", "", -1, "map %d entry %d places element %d of %d", g, j, dst, n)
			}
			if covered[dst] {
				return nil, catalog.Corrupt("", "", -1, "map %d entry %d places element %d, placed before", g, j, dst)
			}
			covered[dst] = true
		}
	}
	for _, g := range empty {
		if n > 0 && !covered[0] {
			mr.takes0, covered[0] = g, true
			break
		}
	}
	for i, c := range covered {
		if !c {
			mr.holes = append(mr.holes, int64(i))
		}
	}
	return mr, nil
}

// padded reports SCORPIO's padding of a group of one element or none: two
// entries, the second 0, in a 0-based map.
func (mr *mapReading) padded(m []int64) bool { return mr.zeroBased && len(m) == 2 && m[1] == 0 }

// dst is where entry j (e) of map m places its element: -1 for a pad,
// below -1 for an entry no base allows.
func (mr *mapReading) dst(m []int64, j int, e int64) int64 {
	switch {
	case mr.padded(m) && j == 1:
		return -1
	case mr.zeroBased:
		return e
	}
	return e - 1
}

// place places pl's parts into out (n elements of size bytes) by mr.
func (mr *mapReading) place(out []byte, size int, pl *catalog.Placement) error {
	if len(pl.Parts) != len(pl.Maps) {
		return catalog.Corrupt("", "", -1, "%d data parts for %d maps", len(pl.Parts), len(pl.Maps))
	}
	if len(pl.Fill) != size {
		return fmt.Errorf("a fill value of %d bytes for %d-byte elements: %w", len(pl.Fill), size, catalog.ErrCorrupt)
	}
	es := int64(size)
	for g, m := range pl.Maps {
		part := pl.Parts[g]
		if mr.padded(m) && m[0] == 0 {
			if g == mr.takes0 {
				if len(part) < size {
					copy(out[:es], pl.Fill) // an empty group's part holds nothing: a hole
				} else {
					copy(out[:es], part[:es])
				}
			}
			continue
		}
		if n := int64(len(m)); int64(len(part)) < n*es {
			// Only pads may lie past a part's end.
			for j := int64(len(part)) / es; j < n; j++ {
				if mr.dst(m, int(j), m[j]) >= 0 {
					return catalog.Corrupt("", "", -1, "map %d entry %d: its part holds %d bytes", g, j, len(part))
				}
			}
			m = m[:int64(len(part))/es]
		}
		// Element by element (7.2M a frame of the map): words
		// where the elements are, not a memmove call each.
		switch size {
		case 8:
			for j, e := range m {
				if dst := mr.dst(m, j, e); dst >= 0 {
					binary.LittleEndian.PutUint64(out[dst*8:], binary.LittleEndian.Uint64(part[j*8:]))
				}
			}
		case 4:
			for j, e := range m {
				if dst := mr.dst(m, j, e); dst >= 0 {
					binary.LittleEndian.PutUint32(out[dst*4:], binary.LittleEndian.Uint32(part[j*4:]))
				}
			}
		default:
			for j, e := range m {
				if dst := mr.dst(m, j, e); dst >= 0 {
					copy(out[dst*es:dst*es+es], part[int64(j)*es:int64(j+1)*es])
				}
			}
		}
	}
	for _, h := range mr.holes {
		copy(out[h*es:h*es+es], pl.Fill)
	}
	return nil
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
