package scorpio

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
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
//
// Its runs are kept block by block, packed (runs below): a few bytes a run instead of a Run's 32, so that the plans
// of the decompositions a job uses stay small beside --max-mem (a 72 x
// 100,000 map in shuffled runs of 4 columns: 1.8M runs, 65 MB as Runs and
// their block index, 7 MB packed), and ScatterBlock walks its block's runs
// in order.
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
	Holes               []Range // ordered by Dst: what no entry covers
	Covered, Pads       int64   // destination elements covered; pad entries
	NumRuns             int64   // runs, over every block
	// runs[b] is block b's runs in Dst order, each packed as
	//
	//	uvarint  Dst - the previous run's Dst+Len           (block start: 0)
	//	uvarint  Len<<1 | jump                              jump 0: Src follows on
	//	uvarint  zigzag(Src - the previous run's Src+Len)   only when jump
	//
	// (destination order: the writes into the frame go forward, which
	// costs half the time of writing in source order on the 72 x 100,000
	// map below)
	// so that a write scatters each data block as it is read
	// (ScatterBlock), from the read's own buffer: no copy of the write's
	// blocks is held.
	runs [][]byte
}

// Stored limits: source block < 2^23, source element < 2^40.
const (
	srcBits   = 40
	maxBlocks = 1<<(63-srcBits) - 1
	maxSrc    = 1<<srcBits - 1
	// keyBits: a block's runs are sorted as words Dst<<keyBits | index
	// when it has fewer than 2^keyBits (Dst < 2^36: 63 bits).
	keyBits = 27
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
// (ErrCorrupt, naming the block and entry). Memory: one bit per
// destination element while building (which are covered), then the packed
// runs (about 4 bytes a run) and 16 bytes per hole.
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
	p.runs = make([][]byte, len(blocks))
	covered := newBitset(p.Elems)
	base := int64(p.Base)
	var deferred []int // 0-based [0, 0] padding blocks
	var enc []byte     // the block being packed, reused
	var tmp []Run      // the block's runs, reused
	var keys []uint64  // their sort keys, reused
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
		tmp = tmp[:0]
		for j := 0; j < n; {
			e := m[j]
			if e < base {
				if e < base-1 {
					return nil, bad(b, j, "decomposition %d block %d entry %d: map entry %d (%d-based)", id, b, j, e, p.Base)
				}
				p.Pads++
				j++
				continue
			}
			dst := e - base
			if dst >= p.Elems {
				return nil, bad(b, j, "decomposition %d block %d entry %d: map entry %d outside %d elements %v (%d-based)", id, b, j, e, p.Elems, dims, p.Base)
			}
			// The run: entries that go on where this one's element is.
			k := j + 1
			for k < n && m[k] == m[k-1]+1 && m[k]-base < p.Elems {
				k++
			}
			if at := covered.setRange(dst, int64(k-j)); at >= 0 {
				jj := j + int(at-dst)
				ob, oj := firstMapping(blocks[:b+1], m[jj], b, jj, p.Base)
				return nil, bad(b, jj, "decomposition %d block %d entry %d: element %d already mapped by block %d entry %d", id, b, jj, at, ob, oj)
			}
			tmp = append(tmp, Run{Dst: dst, Src: int64(j), Len: int64(k - j)})
			p.Covered += int64(k - j)
			if p.BlockNeed[b] < 0 {
				p.BlockNeed[b] = 1 // a padded block: its one element
			}
			j = k
		}
		pk := runPacker{buf: enc[:0]}
		if slices.IsSortedFunc(tmp, byDst) {
			for _, r := range tmp {
				pk.add(r.Dst, r.Src, r.Len)
			}
		} else if len(tmp) < 1<<keyBits {
			// Sorted as words (Dst, then the run's index): several times
			// faster than sorting the runs.
			keys = keys[:0]
			for i, r := range tmp {
				keys = append(keys, uint64(r.Dst)<<keyBits|uint64(i))
			}
			slices.Sort(keys)
			for _, k := range keys {
				r := &tmp[k&(1<<keyBits-1)]
				pk.add(r.Dst, r.Src, r.Len)
			}
		} else {
			slices.SortFunc(tmp, byDst)
			for _, r := range tmp {
				pk.add(r.Dst, r.Src, r.Len)
			}
		}
		p.runs[b], enc = bytes.Clone(pk.buf), pk.buf
		p.NumRuns += int64(len(tmp))
	}
	for _, b := range deferred {
		if p.Elems > 0 && !covered.get(0) {
			covered.setRange(0, 1)
			pk := runPacker{}
			pk.add(0, 0, 1)
			p.runs[b] = pk.buf
			p.NumRuns++
			p.Covered++
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
	p.Holes = covered.clearRanges(p.Elems)
	return p, nil
}

// firstMapping finds the entry of blocks that first maps entry e (base
// base) before block b's entry j: the earlier mapping a duplicate names
// (only on that error: a search).
func firstMapping(blocks [][]int64, e int64, b, j, base int) (int, int) {
	for ob, m := range blocks {
		if base == 0 && padded(m) {
			if m[0] == 0 {
				continue // an empty group's padding: it maps nothing yet
			}
			m = m[:1]
		}
		for oj, x := range m {
			if ob == b && oj >= j {
				return -1, -1
			}
			if x == e {
				return ob, oj
			}
		}
	}
	return -1, -1
}

// runPacker packs one block's runs, in Dst order (see Plan.runs).
type runPacker struct {
	buf            []byte
	dstEnd, srcEnd int64
}

func (k *runPacker) add(dst, src, n int64) {
	k.buf = binary.AppendUvarint(k.buf, uint64(dst-k.dstEnd))
	if d := src - k.srcEnd; d != 0 {
		k.buf = binary.AppendUvarint(k.buf, uint64(n)<<1|1)
		k.buf = binary.AppendUvarint(k.buf, uint64(d<<1)^uint64(d>>63))
	} else {
		k.buf = binary.AppendUvarint(k.buf, uint64(n)<<1)
	}
	k.dstEnd, k.srcEnd = dst+n, src+n
}

// runReader walks the packed runs of one block in Dst order: each next
// is one run, for the scatter's loop and RunList alike (BenchmarkScatterBig
// runs as fast as with the decoding written out in the scatter: 75-90 ms
// on a busy machine, no allocation).
type runReader struct {
	s        []byte
	i        int
	dst, src int64 // where the next run's step starts from
}

// next returns the next run, ok false after the last.
func (r *runReader) next() (dst, src, n int64, ok bool) {
	if r.i >= len(r.s) {
		return 0, 0, 0, false
	}
	d, w := uvarint(r.s[r.i:])
	r.i += w
	r.dst += int64(d)
	l, w := uvarint(r.s[r.i:])
	r.i += w
	if l&1 != 0 {
		z, w := uvarint(r.s[r.i:])
		r.i += w
		r.src += int64(z>>1) ^ -int64(z&1)
	}
	n = int64(l >> 1)
	dst, src = r.dst, r.src
	r.dst += n
	r.src += n
	return dst, src, n, true
}

// uvarint is binary.Uvarint with the one-byte case first (most runs'
// lengths, many of their steps); the packing is the plan's own, valid.
func uvarint(b []byte) (uint64, int) {
	if b[0] < 0x80 {
		return uint64(b[0]), 1
	}
	return binary.Uvarint(b)
}

// RunList is every run of the plan, ordered by Dst (for tests and
// inspection: it allocates them all).
func (p *Plan) RunList() []Run {
	out := make([]Run, 0, p.NumRuns)
	for b := range p.runs {
		r := runReader{s: p.runs[b]}
		for dst, src, n, ok := r.next(); ok; dst, src, n, ok = r.next() {
			out = append(out, Run{Dst: dst, Src: src, Len: n, Block: int32(b)})
		}
	}
	slices.SortFunc(out, byDst)
	return out
}

func byDst(a, b Run) int { return cmp.Compare(a.Dst, b.Dst) }

// bitset is one bit per destination element: which are covered.
type bitset []uint64

func newBitset(n int64) bitset { return make(bitset, (n+63)/64) }

func (s bitset) get(i int64) bool { return s[i>>6]&(1<<(i&63)) != 0 }

// setRange sets bits [lo, lo+n) and returns -1, or, when one of them was
// set already, the first such (and sets none).
func (s bitset) setRange(lo, n int64) int64 {
	hi := lo + n
	for i := lo; i < hi; {
		w, bit := i>>6, i&63
		k := min(64-bit, hi-i)
		mask := (^uint64(0) >> (64 - k)) << bit
		if x := s[w] & mask; x != 0 {
			return w<<6 + int64(bits.TrailingZeros64(x))
		}
		i += k
	}
	for i := lo; i < hi; {
		w, bit := i>>6, i&63
		k := min(64-bit, hi-i)
		s[w] |= (^uint64(0) >> (64 - k)) << bit
		i += k
	}
	return -1
}

// clearRanges lists the ranges of [0, n) whose bits are not set.
func (s bitset) clearRanges(n int64) []Range {
	var out []Range
	for i := int64(0); i < n; {
		if w := s[i>>6] >> (i & 63); w&1 == 1 {
			i += int64(bits.TrailingZeros64(^w)) // past the set bits
			continue
		}
		start := i
		for i < n {
			w := s[i>>6] >> (i & 63)
			if w == 0 {
				i += 64 - i&63
				continue
			}
			i += int64(bits.TrailingZeros64(w))
			break
		}
		i = min(i, n)
		out = append(out, Range{start, i - start})
	}
	return out
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
	r := runReader{s: p.runs[b]}
	for d, src, n, ok := r.next(); ok; d, src, n, ok = r.next() {
		copy(dst[d*es:(d+n)*es], blk[src*es:(src+n)*es])
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

// Bytes is about the memory the plan holds: its packed runs, holes and
// block tables.
func (p *Plan) Bytes() int64 {
	n := int64(len(p.Holes))*16 + int64(len(p.BlockLen)+len(p.BlockNeed)+len(p.Dims))*8 + int64(len(p.runs))*24 + 256
	for _, r := range p.runs {
		n += int64(cap(r))
	}
	return n
}
