package verify

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
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
	var scratch []byte // placed blocks without a destination, one after the other
	if bp, _ := blockBufs.Get().(*[]byte); bp != nil {
		scratch = *bp
	}
	defer func() {
		if cap(scratch) > 0 {
			blockBufs.Put(&scratch)
		}
	}()
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
		if dst == nil {
			n := b.Box.Elements() * int64(dt.Size)
			if int64(cap(scratch)) < n {
				scratch = make([]byte, n)
			}
			dst = scratch[:n]
		}
		return p.place(ctx, b, dt, pl, dst, r)
	}, fn)
}

// place places block b's parts (pl) by the verifier's reading of its maps,
// into dst when not nil; r's limit and timer go to the reads.
func (p placingSource) place(ctx context.Context, b *catalog.Block, dt catalog.DType, pl *catalog.Placement, dst []byte, r catalog.Reads) ([]byte, error) {
	n := b.Box.Elements()
	var mr *mapReading
	var err error
	if v, ok := p.maps.Load(pl.Map); ok && pl.Map != "" && v.(*mapReading).n == n {
		mr = v.(*mapReading)
	} else {
		if mr, err = readMaps(ctx, pl, n, r); err != nil {
			return nil, fmt.Errorf("verify: %s block at %v: %w", b.File, b.Box.Lower, err)
		}
		if pl.Map != "" {
			p.maps.Store(pl.Map, mr)
		}
	}
	if int64(len(dst)) != n*int64(dt.Size) {
		dst = make([]byte, n*int64(dt.Size))
	}
	if err := mr.place(ctx, dst, dt, pl, r); err != nil {
		return nil, fmt.Errorf("verify: %s block at %v: %w", b.File, b.Box.Lower, err)
	}
	return dst, nil
}

// mapReading is the verifier's reading of maps over n places (see above):
// their base, the [0, 0] map that places element 0 (-1: none), the places
// no entry reaches, and the maps themselves, packed; reading checked every
// entry (in range, no place twice).
type mapReading struct {
	n         int64
	zeroBased bool
	takes0    int
	holes     []int64
	maps      []packedMap
}

// packedMap is one map as read: entry j is the sum of the zigzag varints
// 0..j of enc.
type packedMap struct {
	len           int64
	first, second int64 // entries 0 and 1 (0 when absent): SCORPIO's padding
	enc           []byte
}

// entries calls fn with the first k entries of m, in order, until fn
// returns false.
func (m *packedMap) entries(k int64, fn func(j int64, e int64) bool) {
	var e int64
	pos := 0
	for j := int64(0); j < k; j++ {
		var z uint64
		if c := m.enc[pos]; c < 0x80 {
			z = uint64(c)
			pos++
		} else {
			v, w := binary.Uvarint(m.enc[pos:])
			z = v
			pos += w
		}
		e += int64(z>>1) ^ -int64(z&1)
		if !fn(j, e) {
			return
		}
	}
}

// readMaps reads pl's maps over n places: decoded from their stored bytes
// (pl.MapType) and packed, the base decided, then every entry checked.
func readMaps(ctx context.Context, pl *catalog.Placement, n int64, r catalog.Reads) (*mapReading, error) {
	mt := pl.MapType
	if mt.Kind != catalog.Int && mt.Kind != catalog.Uint || mt.Size != 1 && mt.Size != 2 && mt.Size != 4 && mt.Size != 8 {
		return nil, fmt.Errorf("map entries of type %s: %w", mt, catalog.ErrCorrupt)
	}
	maps := make([]packedMap, len(pl.Maps))
	seen := make(bitmap, (n+63)/64)
	var entries, distinct int64
	negative := false
	rd := catalog.Reads{Blocks: pl.Maps, DTypes: []catalog.DType{mt}, Limit: r.Limit, Timer: r.Timer}
	err := pl.Source.ReadBlocks(ctx, rd, func(g int, raw []byte) error {
		if len(raw)%mt.Size != 0 {
			return catalog.Corrupt("", "", -1, "map %d: %d bytes of %d-byte entries", g, len(raw), mt.Size)
		}
		k := int64(len(raw) / mt.Size)
		m := packedMap{len: k, enc: make([]byte, 0, k+16)}
		var prev int64
		for j := int64(0); j < k; j++ {
			e := mapEntry(raw[j*int64(mt.Size):], mt)
			d := e - prev
			m.enc = binary.AppendUvarint(m.enc, uint64(d<<1)^uint64(d>>63))
			prev = e
			switch j {
			case 0:
				m.first = e
			case 1:
				m.second = e
			}
			if e < 0 {
				negative = true
				continue
			}
			entries++
			if e < n && !seen.get(e) {
				seen.set(e)
				distinct++
			}
		}
		if cap(m.enc) > len(m.enc)+len(m.enc)/8 {
			m.enc = slices.Clone(m.enc) // kept: no slack from its growth
		}
		maps[g] = m
		return nil
	})
	if err != nil {
		return nil, err
	}
	// The base (see above): negative entries, or a perfect 0-based cover.
	mr := &mapReading{n: n, zeroBased: negative || n > 0 && entries == n && distinct == n, takes0: -1, maps: maps}
	covered := seen
	clear(covered)
	var empty []int // 0-based [0, 0] maps: element 0 when nothing else places it
	for g := range maps {
		m := &maps[g]
		if mr.padded(m) && m.first == 0 {
			empty = append(empty, g)
			continue
		}
		var bad error
		m.entries(m.len, func(j, e int64) bool {
			dst := mr.dst(m, j, e)
			switch {
			case dst < -1:
				bad = catalog.Corrupt("", "", -1, "map %d entry %d: %d", g, j, e)
			case dst < 0:
				return true // a pad
			case dst >= n:
				bad = catalog.Corrupt("", "", -1, "map %d entry %d places element %d of %d", g, j, dst, n)
			case covered.get(dst):
				bad = catalog.Corrupt("", "", -1, "map %d entry %d places element %d, placed before", g, j, dst)
			default:
				covered.set(dst)
				return true
			}
			return false
		})
		if bad != nil {
			return nil, bad
		}
	}
	for _, g := range empty {
		if n > 0 && !covered.get(0) {
			mr.takes0 = g
			covered.set(0)
			break
		}
	}
	for i := range n {
		if !covered.get(i) {
			mr.holes = append(mr.holes, i)
		}
	}
	return mr, nil
}

// mapEntry decodes one stored map entry of type mt.
func mapEntry(b []byte, mt catalog.DType) int64 {
	var bo binary.ByteOrder = binary.LittleEndian
	if mt.BigEndian {
		bo = binary.BigEndian
	}
	signed := mt.Kind == catalog.Int
	switch mt.Size {
	case 8:
		return int64(bo.Uint64(b))
	case 4:
		if signed {
			return int64(int32(bo.Uint32(b)))
		}
		return int64(bo.Uint32(b))
	case 2:
		if signed {
			return int64(int16(bo.Uint16(b)))
		}
		return int64(bo.Uint16(b))
	}
	if signed {
		return int64(int8(b[0]))
	}
	return int64(b[0])
}

// bitmap is a bit per place.
type bitmap []uint64

func (b bitmap) get(i int64) bool { return b[i>>6]&(1<<(i&63)) != 0 }
func (b bitmap) set(i int64)      { b[i>>6] |= 1 << (i & 63) }

// padded reports SCORPIO's padding of a group of one element or none: two
// entries, the second 0, in a 0-based map.
func (mr *mapReading) padded(m *packedMap) bool { return mr.zeroBased && m.len == 2 && m.second == 0 }

// dst is where entry j (e) of map m places its element: -1 for a pad,
// below -1 for an entry no base allows.
func (mr *mapReading) dst(m *packedMap, j int64, e int64) int64 {
	switch {
	case j == 1 && mr.padded(m):
		return -1
	case mr.zeroBased:
		return e
	}
	return e - 1
}

// place places pl's parts into out (n elements of dt) by mr, each part
// from the read's buffer as it arrives.
func (mr *mapReading) place(ctx context.Context, out []byte, dt catalog.DType, pl *catalog.Placement, r catalog.Reads) error {
	size := dt.Size
	if len(pl.Parts) != len(mr.maps) {
		return catalog.Corrupt("", "", -1, "%d data parts for %d maps", len(pl.Parts), len(mr.maps))
	}
	if len(pl.Fill) != size {
		return fmt.Errorf("a fill value of %d bytes for %d-byte elements: %w", len(pl.Fill), size, catalog.ErrCorrupt)
	}
	rd := catalog.Reads{Blocks: pl.Parts, DTypes: []catalog.DType{dt}, Limit: r.Limit, Timer: r.Timer}
	err := pl.Source.ReadBlocks(ctx, rd, func(g int, part []byte) error {
		return mr.placePart(out, size, g, part, pl.Fill)
	})
	if err != nil {
		return err
	}
	es := int64(size)
	for _, h := range mr.holes {
		copy(out[h*es:h*es+es], pl.Fill)
	}
	return nil
}

// placePart places part g (its map mr.maps[g]) into out.
func (mr *mapReading) placePart(out []byte, size, g int, part, fill []byte) error {
	es := int64(size)
	m := &mr.maps[g]
	if mr.padded(m) && m.first == 0 {
		if g == mr.takes0 {
			if len(part) < size {
				copy(out[:es], fill) // an empty group's part holds nothing: a hole
			} else {
				copy(out[:es], part[:es])
			}
		}
		return nil
	}
	k := m.len
	if int64(len(part)) < k*es {
		// Only pads may lie past a part's end.
		have := int64(len(part)) / es
		var bad error
		m.entries(k, func(j, e int64) bool {
			if j >= have && mr.dst(m, j, e) >= 0 {
				bad = catalog.Corrupt("", "", -1, "map %d entry %d: its part holds %d bytes", g, j, len(part))
				return false
			}
			return true
		})
		if bad != nil {
			return bad
		}
		k = have
	}
	// Element by element (7.2M a frame of the map): words where
	// the elements are, not a memmove call each.
	switch size {
	case 8:
		m.entries(k, func(j, e int64) bool {
			if dst := mr.dst(m, j, e); dst >= 0 {
				binary.LittleEndian.PutUint64(out[dst*8:], binary.LittleEndian.Uint64(part[j*8:]))
			}
			return true
		})
	case 4:
		m.entries(k, func(j, e int64) bool {
			if dst := mr.dst(m, j, e); dst >= 0 {
				binary.LittleEndian.PutUint32(out[dst*4:], binary.LittleEndian.Uint32(part[j*4:]))
			}
			return true
		})
	default:
		m.entries(k, func(j, e int64) bool {
			if dst := mr.dst(m, j, e); dst >= 0 {
				copy(out[dst*es:dst*es+es], part[j*es:(j+1)*es])
			}
			return true
		})
	}
	return nil
}
