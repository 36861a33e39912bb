package verify

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"relayout/catalog"
)

// The input side's index computation. A block's decoded bytes are an array
// of its stored shape S in its storage order and the input type's byte
// order; the valid region (Box, in the array's index space) starts at
// StoredLower inside it (ghost cells, or nothing: the origin):
//
//	stored array S[0] x S[1] x ... x S[r-1]
//	+---------------------------+
//	| ghost                     |      element at global index g (g in Box):
//	|   +-------------------+   |        s[d] = g[d] - Box.Lower[d] + StoredLower[d]
//	|   | Box.Count         |   |        row-major: off = sum s[d] * prod S[d+1:]
//	|   |  (valid region)   |   |        col-major: off = sum s[d] * prod S[:d]
//	|   +-------------------+   |        bytes [off*size, off*size+size),
//	|                           |        reversed when the input is big-endian
//	+---------------------------+
//
// The output band is row-major little-endian over its own box. Nothing
// here is shared with the writer's assembly.

// placement maps the elements of one block to offsets in its decoded bytes.
type placement struct {
	b       *catalog.Block
	rank    int
	strides []int64 // element stride of each dimension in the stored array
	size    int
	swap    bool // input big-endian (multi-byte elements)
}

// checkBlock validates block i of a against the array: ranks, the valid
// region inside the array and inside the stored array.
func checkBlock(a *catalog.Array, i int) error {
	b := &a.Blocks[i]
	rank := len(a.Shape)
	st := b.StoredShape()
	if len(b.Box.Lower) != rank || len(b.Box.Count) != rank || len(st) != rank ||
		(b.StoredLower() != nil && len(b.StoredLower()) != rank) {
		return fmt.Errorf("block %d %v (stored %v) in an array of shape %v: rank mismatch: %w", i, b.Box, st, a.Shape, catalog.ErrCorrupt)
	}
	for d := range rank {
		sl := int64(0)
		if b.StoredLower() != nil {
			sl = b.StoredLower()[d]
		}
		lo, c := b.Box.Lower[d], b.Box.Count[d]
		if lo < 0 || c < 0 || lo > a.Shape[d]-c || sl < 0 || st[d] < 0 || sl > st[d]-c {
			return fmt.Errorf("block %d %v (stored %v from %v) outside array of shape %v: %w", i, b.Box, st, b.StoredLower(), a.Shape, catalog.ErrCorrupt)
		}
	}
	return nil
}

func newPlacement(b *catalog.Block, dt catalog.DType) placement { return placementIn(b, dt, nil) }

// placementIn is newPlacement with its strides from ar.
func placementIn(b *catalog.Block, dt catalog.DType, ar *intArena) placement {
	st := b.StoredShape()
	rank := len(st)
	p := placement{b: b, rank: rank, strides: ar.take(rank), size: dt.Size, swap: dt.BigEndian && dt.Size > 1}
	n := int64(1)
	if b.Order == catalog.ColMajor {
		for d := 0; d < rank; d++ {
			p.strides[d] = n
			n *= st[d]
		}
	} else {
		for d := rank - 1; d >= 0; d-- {
			p.strides[d] = n
			n *= st[d]
		}
	}
	return p
}

// storedBytes is the decoded size of the block.
func (p placement) storedBytes() int64 {
	n := int64(p.size)
	for _, s := range p.b.StoredShape() {
		n *= s
	}
	return n
}

// offset is the element offset in the stored array of global index g
// (inside the block's Box).
func (p placement) offset(g []int64) int64 {
	var off int64
	for d := range p.rank {
		s := g[d] - p.b.Box.Lower[d]
		if p.b.StoredLower() != nil {
			s += p.b.StoredLower()[d]
		}
		off += s * p.strides[d]
	}
	return off
}

// mismatch is the first element of a comparison that differs.
type mismatch struct {
	index   []int64 // global (array-relative) index
	in, out []byte  // the input element (little-endian) and the output one
	// hole: index is covered by no block; in is the recorded fill value
	// (nil when none is recorded).
	hole bool
}

// compare compares the elements of region (inside the block's Box and the
// band) of the decoded block data with out, the row-major little-endian
// bytes of band, in row-major order of the global index; it returns the
// first difference, or nil.
func (p placement) compare(data []byte, region, band catalog.Box, out []byte) *mismatch {
	size := int64(p.size)
	rank := p.rank
	if rank == 0 {
		if p.equal(data[:size], out[:size]) {
			return nil
		}
		return &mismatch{index: []int64{}, in: p.le(data[:size]), out: bytes.Clone(out[:size])}
	}
	for _, c := range region.Count {
		if c == 0 {
			return nil
		}
	}
	// Row-major strides of the band.
	bandStride := make([]int64, rank)
	n := int64(1)
	for d := rank - 1; d >= 0; d-- {
		bandStride[d] = n
		n *= band.Count[d]
	}
	last := rank - 1
	runLen := region.Count[last]
	inStep := p.strides[last]
	g := append([]int64(nil), region.Lower...)
	for {
		in0 := p.offset(g)
		var out0 int64
		for d := range rank {
			out0 += (g[d] - band.Lower[d]) * bandStride[d]
		}
		if inStep == 1 {
			a := data[in0*size : (in0+runLen)*size]
			b := out[out0*size : (out0+runLen)*size]
			if !p.equalRun(a, b) {
				for k := int64(0); k < runLen; k++ {
					if !p.equal(a[k*size:(k+1)*size], b[k*size:(k+1)*size]) {
						return p.mismatchAt(g, k, a[k*size:(k+1)*size], b[k*size:(k+1)*size])
					}
				}
			}
		} else {
			for k := int64(0); k < runLen; k++ {
				i := (in0 + k*inStep) * size
				o := (out0 + k) * size
				if !p.equal(data[i:i+size], out[o:o+size]) {
					return p.mismatchAt(g, k, data[i:i+size], out[o:o+size])
				}
			}
		}
		// Next run: advance the dimensions before the last.
		d := last - 1
		for ; d >= 0; d-- {
			g[d]++
			if g[d] < region.Lower[d]+region.Count[d] {
				break
			}
			g[d] = region.Lower[d]
		}
		if d < 0 {
			return nil
		}
	}
}

func (p placement) mismatchAt(g []int64, k int64, in, out []byte) *mismatch {
	idx := append([]int64(nil), g...)
	idx[p.rank-1] += k
	return &mismatch{index: idx, in: p.le(in), out: bytes.Clone(out)}
}

// equalRun compares a run of input elements (input byte order) with the
// same run of output elements (little-endian), bit for bit: bytes.Equal,
// or for big-endian input (netCDF classic, s390x writers) whole words
// loaded in each order, a few times faster than element by element.
func (p placement) equalRun(in, out []byte) bool {
	if !p.swap {
		return bytes.Equal(in, out)
	}
	switch p.size {
	case 8:
		for i := 0; i+8 <= len(in); i += 8 {
			if binary.BigEndian.Uint64(in[i:]) != binary.LittleEndian.Uint64(out[i:]) {
				return false
			}
		}
	case 4:
		for i := 0; i+4 <= len(in); i += 4 {
			if binary.BigEndian.Uint32(in[i:]) != binary.LittleEndian.Uint32(out[i:]) {
				return false
			}
		}
	case 2:
		for i := 0; i+2 <= len(in); i += 2 {
			if binary.BigEndian.Uint16(in[i:]) != binary.LittleEndian.Uint16(out[i:]) {
				return false
			}
		}
	default:
		for i := 0; i < len(in); i += p.size {
			if !p.equal(in[i:i+p.size], out[i:i+p.size]) {
				return false
			}
		}
	}
	return true
}

// equal compares one input element (input byte order) with one output
// element (little-endian), bit for bit.
func (p placement) equal(in, out []byte) bool {
	if !p.swap {
		return bytes.Equal(in, out)
	}
	n := len(in)
	for i := range n {
		if in[i] != out[n-1-i] {
			return false
		}
	}
	return true
}

// le is one input element as little-endian bytes.
func (p placement) le(in []byte) []byte {
	c := bytes.Clone(in)
	if p.swap {
		for i, j := 0, len(c)-1; i < j; i, j = i+1, j-1 {
			c[i], c[j] = c[j], c[i]
		}
	}
	return c
}

// trimRows returns the part of raw row-major block b holding its global
// rows [r0, r1) (dimension 0), a block of its own whose stored bytes are
// one contiguous range of b's: fetching it reads only those rows. ok is
// false for blocks that cannot be cut so (codecs, inline bytes,
// column-major storage, rank 0), and when b lies within [r0, r1) anyway.
func trimRows(b *catalog.Block, dt catalog.DType, r0, r1 int64) (t *catalog.Block, ok bool) {
	rank := len(b.Box.Lower)
	if rank == 0 || len(b.Codecs) != 0 || b.Inline() != nil || b.Order != catalog.RowMajor {
		return nil, false
	}
	lo, hi := max(r0, b.Box.Lower[0]), min(r1, b.Box.Lower[0]+b.Box.Count[0])
	if lo <= b.Box.Lower[0] && hi >= b.Box.Lower[0]+b.Box.Count[0] || hi <= lo {
		return nil, false
	}
	st := b.StoredShape()
	row := int64(dt.Size)
	for _, s := range st[1:] {
		row *= s
	}
	if b.Length != row*st[0] {
		return nil, false // let ReadBlock report the size mismatch
	}
	sl0 := int64(0)
	if b.StoredLower() != nil {
		sl0 = b.StoredLower()[0]
	}
	first := lo - b.Box.Lower[0] + sl0 // stored row of global row lo
	c := *b
	c.Offset = b.Offset + first*row
	c.Length = (hi - lo) * row
	var lower []int64
	if b.StoredLower() != nil {
		lower = append([]int64{0}, b.StoredLower()[1:]...)
	}
	c = c.WithStored(append([]int64{hi - lo}, st[1:]...), lower)
	c.Box = catalog.Box{Lower: append([]int64{lo}, b.Box.Lower[1:]...), Count: append([]int64{hi - lo}, b.Box.Count[1:]...)}
	return &c, true
}
