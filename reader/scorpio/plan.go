package scorpio

import (
	"fmt"
	"math"
	"slices"

	"relayout/catalog"
)

// A decomposition /__pio__/decomp/ID is one int64 map block per I/O group;
// entry j of block b says where element j of the group's data block goes:
//
//	data block b   [ v0 | v1 | v2 | v3 | v4 | ... ]    one write, one group
//	map block b    [ 17 |  0 | 18 |  3 |  0 | ... ]    1-based, 0 = pad/hole
//	               (CONTIG: [ 16 | -1 | 17 | 2 | -1 ... ] 0-based, -1 = pad)
//	destination    flat row-major index over the variable's non-record
//	               dimensions (the decomposition's dimlen)
//
// A Plan is the map sorted by destination and cut into runs contiguous in
// the destination AND in one source block, plus the destination ranges no
// entry covers (holes). It is built once per decomposition and applied to
// every write of every variable that uses it.

// EntryWhere locates entry j of map block b in the input: its file and byte
// offset (the block's offset when the map is compressed), for errors.
type EntryWhere func(b int, j int64) (file string, off int64)

// Run moves Len elements from source block Block, starting at element Src,
// to destination elements [Dst, Dst+Len).
type Run struct {
	Dst, Src, Len int64
	Block         int32
}

// Range is a destination range [Dst, Dst+Len) of elements.
type Range struct{ Dst, Len int64 }

// Plan is the scatter of one decomposition (see above). It is immutable once
// built and safe for concurrent use.
type Plan struct {
	ID    int     // decomposition id
	Dims  []int64 // destination dimensions (dimlen), row-major
	Elems int64   // product of Dims
	// Base is 1 when the map is 1-based with 0 for pads (box and subset
	// rearrangers), 0 when it is 0-based with -1 for pads (CONTIG).
	Base int
	// BlockLen is each source block's number of map entries (pads
	// included); a data block must hold as many elements, or, for a block
	// SCORPIO padded to two entries (a group with 0 or 1 elements), at least
	// BlockNeed of them.
	BlockLen, BlockNeed []int64
	Runs                []Run   // ordered by Dst, disjoint
	Holes               []Range // ordered by Dst: what no entry covers
	Covered, Pads       int64   // destination elements covered; pad entries
	// byBlock lists the indexes of Runs block by block (those of block b
	// are byBlock[blockStart[b]:blockStart[b+1]], in Dst order), so that a
	// write scatters each data block as it is read (ScatterBlock), from
	// the read's own buffer: no copy of the write's blocks is held.
	byBlock    []int32
	blockStart []int
}

// Stored limits of the packed inverse map: source block < 2^23, source
// element < 2^40.
const (
	srcBits   = 40
	maxBlocks = 1<<(63-srcBits) - 1
	maxSrc    = 1<<srcBits - 1
)

// BuildPlan builds the plan of decomposition id over dims from its map
// blocks (entries as stored). file names the decomposition in errors (the
// dataset-relative place the user knows, e.g. "md.0:/__pio__/decomp/512").
//
// The base is detected: any negative entry means 0-based (pads -1; below -1
// is corrupt); otherwise 1-based (0 = pad), except for a map with no
// negative entry whose 0-based reading covers every element exactly once
// while its 1-based reading would leave the last element uncovered (a CONTIG
// map without pads: one 0 entry and the maximum Elems-1). SCORPIO pads a
// group's map of 0 or 1 entries to two, the second 0 (the first 0 too for
// an empty group); in a 0-based map that second 0 is a pad, and so is a
// first one when another block covers element 0.
//
// Entries out of range and destinations covered twice are corrupt
// (ErrCorrupt, naming the block and entry). Memory: 8 bytes per destination
// element while building, then 32 bytes per run and 16 per hole.
func BuildPlan(file string, id int, dims []int64, blocks [][]int64, where EntryWhere) (*Plan, error) {
	p := &Plan{ID: id, Dims: append([]int64(nil), dims...), Elems: 1}
	// bad is a damaged entry j of block b, at its place in the input when
	// where knows it.
	bad := func(b, j int, what string, args ...any) error {
		f, off := file, int64(-1)
		if where != nil {
			f, off = where(b, int64(j))
			what = "%s: " + what
			args = append([]any{file}, args...)
		}
		return catalog.Corrupt("scorpio", f, off, what, args...)
	}
	for _, d := range dims {
		if d < 0 || (d > 0 && p.Elems > math.MaxInt64/d) {
			return nil, catalog.Corrupt("scorpio", file, -1, "decomposition %d: dimensions %v", id, dims)
		}
		p.Elems *= d
	}
	if len(blocks) > maxBlocks {
		return nil, fmt.Errorf("scorpio: %s: decomposition %d: %d blocks (at most %d): %w", file, id, len(blocks), maxBlocks, catalog.ErrUnsupported)
	}
	if p.Elems > 1<<36 {
		return nil, fmt.Errorf("scorpio: %s: decomposition %d: %d elements (at most 2^36): %w", file, id, p.Elems, catalog.ErrUnsupported)
	}
	p.Base = detectBase(blocks, p.Elems)
	p.BlockLen = make([]int64, len(blocks))
	p.BlockNeed = make([]int64, len(blocks))
	inv := make([]uint64, p.Elems) // destination -> (block+1)<<srcBits | source element
	var deferred []int             // 0-based [0, 0] padding blocks
	for b, m := range blocks {
		if int64(len(m)) > maxSrc {
			return nil, fmt.Errorf("scorpio: %s: decomposition %d block %d: %d entries: %w", file, id, b, len(m), catalog.ErrUnsupported)
		}
		p.BlockLen[b] = int64(len(m))
		n := len(m)
		if padded(m) {
			p.BlockNeed[b] = -1 // set below
		}
		if p.Base == 0 && padded(m) {
			// SCORPIO's padding of a group with 0 or 1 elements.
			n = 1
			p.Pads++
			if m[0] == 0 {
				deferred = append(deferred, b)
				p.Pads++
				continue
			}
		}
		for j, e := range m[:n] {
			dst := e - int64(p.Base)
			if e < int64(p.Base) {
				if e < int64(p.Base)-1 {
					return nil, bad(b, j, "decomposition %d block %d entry %d: map entry %d (%d-based)", id, b, j, e, p.Base)
				}
				p.Pads++
				continue
			}
			if dst >= p.Elems {
				return nil, bad(b, j, "decomposition %d block %d entry %d: map entry %d outside %d elements %v (%d-based)", id, b, j, e, p.Elems, dims, p.Base)
			}
			if old := inv[dst]; old != 0 {
				return nil, bad(b, j, "decomposition %d block %d entry %d: element %d already mapped by block %d entry %d", id, b, j, dst, old>>srcBits-1, old&maxSrc)
			}
			inv[dst] = uint64(b+1)<<srcBits | uint64(j)
			if p.BlockNeed[b] < 0 {
				p.BlockNeed[b] = 1 // a padded block: its one element
			}
		}
	}
	for _, b := range deferred {
		if p.Elems > 0 && inv[0] == 0 {
			inv[0] = uint64(b+1) << srcBits
			p.BlockNeed[b] = 1
			p.Pads--
		}
	}
	for b := range blocks {
		switch {
		case p.BlockNeed[b] < 0:
			p.BlockNeed[b] = 0 // a padded empty group
		case !padded(blocks[b]):
			p.BlockNeed[b] = p.BlockLen[b] // only a padded block may come short
		}
	}
	// Two passes over the destinations: count the runs and holes, then
	// list them into slices allocated once.
	nr, nh := 0, 0
	walk(inv, func(dst, n int64, v uint64) {
		if v == 0 {
			nh++
		} else {
			nr++
		}
	})
	p.Runs, p.Holes = make([]Run, 0, nr), make([]Range, 0, nh)
	walk(inv, func(dst, n int64, v uint64) {
		if v == 0 {
			p.Holes = append(p.Holes, Range{dst, n})
			return
		}
		p.Runs = append(p.Runs, Run{Dst: dst, Src: int64(v & maxSrc), Len: n, Block: int32(v>>srcBits) - 1})
		p.Covered += n
	})
	// The runs block by block: a counting sort, stable (Dst order kept).
	p.blockStart = make([]int, len(blocks)+1)
	for _, r := range p.Runs {
		p.blockStart[r.Block+1]++
	}
	for b := range blocks {
		p.blockStart[b+1] += p.blockStart[b]
	}
	p.byBlock = make([]int32, len(p.Runs))
	next := slices.Clone(p.blockStart[:len(blocks)])
	for i, r := range p.Runs {
		p.byBlock[next[r.Block]] = int32(i)
		next[r.Block]++
	}
	return p, nil
}

// walk calls fn for each maximal stretch of inv: a hole (v 0) or a run
// (v the packed source of its first element, successive elements next).
func walk(inv []uint64, fn func(dst, n int64, v uint64)) {
	for dst, end := int64(0), int64(0); dst < int64(len(inv)); dst = end {
		v := inv[dst]
		end = dst + 1
		if v == 0 {
			for end < int64(len(inv)) && inv[end] == 0 {
				end++
			}
		} else {
			for end < int64(len(inv)) && inv[end] == v+uint64(end-dst) {
				end++
			}
		}
		fn(dst, end-dst, v)
	}
}

// padded reports whether map block m may be SCORPIO's padding of a group
// with 0 or 1 elements: two entries, the second 0.
func padded(m []int64) bool { return len(m) == 2 && m[1] == 0 && m[0] >= 0 }

// detectBase returns 0 or 1 (see BuildPlan).
func detectBase(blocks [][]int64, elems int64) int {
	for _, m := range blocks {
		for _, e := range m {
			if e < 0 {
				return 0
			}
		}
	}
	// No negative entry: 0-based only if that reading is a perfect cover
	// (an empty group's padding [0, 0] may hold element 0).
	zeros, zeroPads, maxE := 0, 0, int64(-1)
	for _, m := range blocks {
		if padded(m) {
			if m = m[:1]; m[0] == 0 {
				zeroPads++
				continue
			}
		}
		for _, e := range m {
			if e == 0 {
				zeros++
			}
			maxE = max(maxE, e)
		}
	}
	if zeros == 0 && zeroPads > 0 {
		zeros = 1
	}
	if zeros != 1 || maxE != elems-1 {
		return 1
	}
	seen := make([]bool, elems)
	seen[0] = true
	for _, m := range blocks {
		if padded(m) {
			m = m[:1]
		}
		for _, e := range m {
			if e == 0 {
				continue
			}
			if seen[e] {
				return 1
			}
			seen[e] = true
		}
	}
	if slices.Contains(seen, false) {
		return 1
	}
	return 0 // every element exactly once as 0-based
}

// CheckBlocks reports whether blocks (one per source block, decoded bytes)
// fit the plan for elements of elemSize bytes; what names them in the
// error (e.g. `variable "T" frame 2`; "": the decomposition), and stored,
// when given, where each block is in the input.
func (p *Plan) CheckBlocks(blocks [][]byte, elemSize int, what string, stored []catalog.Block) error {
	if len(blocks) != len(p.BlockLen) {
		return catalog.Corrupt("scorpio", "", -1, "%s: %d data blocks for the %d blocks of decomposition %d", p.what(what), len(blocks), len(p.BlockLen), p.ID)
	}
	for b, blk := range blocks {
		if !p.fits(b, blk, elemSize) {
			return p.blockErr(b, blk, elemSize, what, stored)
		}
	}
	return nil
}

// fits reports whether data block b (decoded bytes) fits its map block.
func (p *Plan) fits(b int, blk []byte, elemSize int) bool {
	if elemSize <= 0 || b < 0 || b >= len(p.BlockLen) || len(blk)%elemSize != 0 {
		return false
	}
	n := int64(len(blk) / elemSize)
	return n <= p.BlockLen[b] && n >= p.BlockNeed[b]
}

// blockErr says why data block b does not fit (see CheckBlocks).
func (p *Plan) blockErr(b int, blk []byte, elemSize int, what string, stored []catalog.Block) error {
	what = p.what(what)
	switch {
	case elemSize <= 0:
		return fmt.Errorf("scorpio: %s: element size %d", what, elemSize)
	case b < 0 || b >= len(p.BlockLen):
		return catalog.Corrupt("scorpio", "", -1, "%s: data block %d of the %d blocks of decomposition %d", what, b, len(p.BlockLen), p.ID)
	}
	file, off := "", int64(-1)
	if b < len(stored) {
		file, off = stored[b].File, stored[b].Offset
	}
	return catalog.Corrupt("scorpio", file, off, "%s: data block %d holds %d bytes (%d-byte elements), its map block %d entries (decomposition %d)",
		what, b, len(blk), elemSize, p.BlockLen[b], p.ID)
}

// what is the name of a write's blocks in errors: what, or the
// decomposition.
func (p *Plan) what(what string) string {
	if what == "" {
		return fmt.Sprintf("decomposition %d", p.ID)
	}
	return what
}

// Scatter copies every mapped element of one write's data blocks (decoded,
// in the plan's block order) into dst, the write's destination: Elems
// elements of elemSize bytes, row-major over Dims. Holes are left as they
// are (Fill them). It allocates nothing.
func (p *Plan) Scatter(dst []byte, blocks [][]byte, elemSize int) error {
	if len(blocks) != len(p.BlockLen) {
		return p.CheckBlocks(blocks, elemSize, "", nil)
	}
	for b, blk := range blocks {
		if !p.fits(b, blk, elemSize) {
			return p.CheckBlocks(blocks, elemSize, "", nil)
		}
	}
	for b, blk := range blocks {
		if err := p.ScatterBlock(dst, b, blk, elemSize, "", nil); err != nil {
			return err
		}
	}
	return nil
}

// ScatterBlock is Scatter of data block b alone (checked as CheckBlocks
// does: what and stored name it in an error): a write's blocks scattered
// one by one as they are read, from the read's buffer. The blocks of a
// write touch disjoint places of dst, so several may be scattered at once.
func (p *Plan) ScatterBlock(dst []byte, b int, blk []byte, elemSize int, what string, stored []catalog.Block) error {
	if int64(len(dst)) != p.Elems*int64(elemSize) {
		return fmt.Errorf("scorpio: decomposition %d: destination of %d bytes for %d elements of %d bytes", p.ID, len(dst), p.Elems, elemSize)
	}
	if !p.fits(b, blk, elemSize) {
		return p.blockErr(b, blk, elemSize, what, stored)
	}
	es := int64(elemSize)
	for _, i := range p.byBlock[p.blockStart[b]:p.blockStart[b+1]] {
		r := &p.Runs[i]
		copy(dst[r.Dst*es:(r.Dst+r.Len)*es], blk[r.Src*es:(r.Src+r.Len)*es])
	}
	return nil
}

// Fill writes the element value fill (elemSize bytes) into every hole of
// dst. It allocates nothing.
func (p *Plan) Fill(dst []byte, fill []byte) {
	es := int64(len(fill))
	if es == 0 {
		return
	}
	for _, h := range p.Holes {
		seg := dst[h.Dst*es : (h.Dst+h.Len)*es]
		n := copy(seg, fill)
		for n < len(seg) {
			n += copy(seg[n:], seg[:n])
		}
	}
}
