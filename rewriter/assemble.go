package rewriter

import (
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"math/bits"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"relayout/catalog"
	"relayout/planner"
)

// Assembly turns the blocks of an array into slabs: row-major, little-endian
// buffers holding exactly one catalog.Box of the array. Verification does
// not use it (package verify places input elements by its own index
// computation), so an assembly mistake cannot be re-derived by the check.

// view locates an N-D buffer: the array index of its element 0 and its strides
// in elements, one per dimension.
type view struct {
	origin  []int64
	strides []int64
}

func rowMajorStrides(shape []int64) []int64 {
	s := make([]int64, len(shape))
	rowMajorStridesInto(s, shape)
	return s
}

func rowMajorStridesInto(s, shape []int64) {
	acc := int64(1)
	for i := len(shape) - 1; i >= 0; i-- {
		s[i] = acc
		acc *= shape[i]
	}
}

func colMajorStridesInto(s, shape []int64) {
	acc := int64(1)
	for i := range shape {
		s[i] = acc
		acc *= shape[i]
	}
}

func product(v []int64) int64 {
	n := int64(1)
	for _, x := range v {
		n *= x
	}
	return n
}

// copyRegion copies region (array indices) from src to dst, both described by
// views; dst must be contiguous along the last dimension (stride 1). With swap,
// each element's bytes are reversed (big-endian to little-endian).
func copyRegion(dst []byte, dv view, src []byte, sv view, region catalog.Box, size int, swap bool) {
	rank := len(region.Count)
	if rank == 0 {
		copyRun(dst, src, 1, 1, size, swap)
		return
	}
	// Offsets of the region's first element; then the dimensions as
	// (count, source stride, destination stride), trailing ones merged while
	// both sides are contiguous across them, so that a block spanning whole
	// rows of the slab moves in long runs.
	var so, do int64
	var stack [4 * stackRank]int64 // scratch off the heap for the usual ranks
	scratch := stack[:]
	if rank > stackRank {
		scratch = make([]int64, 4*rank)
	}
	cnt, ss, ds, idx := scratch[:rank], scratch[rank:2*rank], scratch[2*rank:3*rank], scratch[3*rank:4*rank]
	for d := range rank {
		so += (region.Lower[d] - sv.origin[d]) * sv.strides[d]
		do += (region.Lower[d] - dv.origin[d]) * dv.strides[d]
		cnt[d], ss[d], ds[d] = region.Count[d], sv.strides[d], dv.strides[d]
	}
	last := rank - 1
	for last > 0 && ss[last] == 1 && ds[last] == 1 && ss[last-1] == cnt[last] && ds[last-1] == cnt[last] {
		cnt[last-1] *= cnt[last]
		ss[last-1], ds[last-1] = 1, 1
		last--
	}
	n, stride := cnt[last], ss[last]
	sz := int64(size)
	so, do = so*sz, do*sz
	runBytes := n * sz
	plain := stride == 1 && !swap
	clear(idx) // position along dimensions 0..last-1
	for {
		if plain {
			copy(dst[do:do+runBytes], src[so:so+runBytes])
		} else {
			copyRun(dst[do:], src[so:], n, stride, size, swap)
		}
		d := last - 1
		for ; d >= 0; d-- {
			so += ss[d] * sz
			do += ds[d] * sz
			if idx[d]++; idx[d] < cnt[d] {
				break
			}
			so -= ss[d] * sz * cnt[d]
			do -= ds[d] * sz * cnt[d]
			idx[d] = 0
		}
		if d < 0 {
			return
		}
	}
}

// copyRun copies n elements to consecutive places in dst from src elements
// stride apart, reversing their bytes when swap is set.
func copyRun(dst, src []byte, n, stride int64, size int, swap bool) {
	if stride == 1 && !swap {
		copy(dst[:n*int64(size)], src[:n*int64(size)])
		return
	}
	if stride == 1 && swap && (size == 2 || size == 4) {
		// Big-endian runs (netCDF classic, s390x writers): whole 64-bit
		// words, their bytes reversed within each element.
		k := swapWords(dst, src, n*int64(size), size)
		dst, src, n = dst[k:], src[k:], n-k/int64(size)
	}
	step := stride * int64(size)
	switch {
	case !swap || size == 1:
		for k := int64(0); k < n; k++ {
			copy(dst[k*int64(size):(k+1)*int64(size)], src[k*step:k*step+int64(size)])
		}
	case size == 2:
		for k := int64(0); k < n; k++ {
			binary.LittleEndian.PutUint16(dst[2*k:], binary.BigEndian.Uint16(src[k*step:]))
		}
	case size == 4:
		for k := int64(0); k < n; k++ {
			binary.LittleEndian.PutUint32(dst[4*k:], binary.BigEndian.Uint32(src[k*step:]))
		}
	case size == 8:
		for k := int64(0); k < n; k++ {
			binary.LittleEndian.PutUint64(dst[8*k:], binary.BigEndian.Uint64(src[k*step:]))
		}
	default:
		panic(fmt.Sprintf("rewriter: element size %d", size))
	}
}

// swapWords copies the first whole 8-byte words of the nb bytes of src to
// dst, reversing the bytes of each element of size bytes (2 or 4) in them,
// and returns how many bytes it copied (a multiple of 8).
func swapWords(dst, src []byte, nb int64, size int) int64 {
	var k int64
	for ; k+8 <= nb; k += 8 {
		x := binary.LittleEndian.Uint64(src[k:])
		if size == 4 {
			x = bits.RotateLeft64(bits.ReverseBytes64(x), 32)
		} else {
			x = (x&0x00ff00ff00ff00ff)<<8 | (x>>8)&0x00ff00ff00ff00ff
		}
		binary.LittleEndian.PutUint64(dst[k:], x)
	}
	return k
}

// checkArray validates what assembly relies on, so that corrupt catalog
// entries give an error rather than a panic or an out-of-range write.
func checkArray(a *catalog.Array) error {
	if !a.DType.Valid() {
		return fmt.Errorf("element type %v: %w", a.DType, catalog.ErrUnsupported)
	}
	if a.Fill != nil && len(a.Fill) != a.DType.Size {
		return fmt.Errorf("fill value of %d bytes for %v: %w", len(a.Fill), a.DType, catalog.ErrCorrupt)
	}
	rank := len(a.Shape)
	for _, n := range a.Shape {
		if n < 0 {
			return fmt.Errorf("shape %v: %w", a.Shape, catalog.ErrCorrupt)
		}
	}
	for i := range a.Blocks {
		b := &a.Blocks[i]
		st := b.StoredShape()
		if len(b.Box.Lower) != rank || len(b.Box.Count) != rank || len(st) != rank {
			return fmt.Errorf("block %d %v (stored %v) in array of shape %v: rank mismatch: %w",
				i, b.Box, st, a.Shape, catalog.ErrCorrupt)
		}
		if b.StoredLower() != nil && len(b.StoredLower()) != rank {
			return fmt.Errorf("block %d %v: stored lower corner %v: rank mismatch: %w", i, b.Box, b.StoredLower(), catalog.ErrCorrupt)
		}
		for d := range rank {
			lo, c, sl := b.Box.Lower[d], b.Box.Count[d], int64(0)
			if b.StoredLower() != nil {
				sl = b.StoredLower()[d]
			}
			if lo < 0 || c < 0 || lo+c > a.Shape[d] || sl < 0 || sl+c > st[d] {
				return fmt.Errorf("block %d %v (stored %v from %v) outside array of shape %v: %w",
					i, b.Box, st, b.StoredLower(), a.Shape, catalog.ErrCorrupt)
			}
		}
	}
	return nil
}

// copyBlock copies the part of block b inside slab from data (b's decoded
// bytes: stored shape, b.Order, dt's byte order) into buf, the row-major
// little-endian buffer of slab.
func copyBlock(buf []byte, slab catalog.Box, b *catalog.Block, data []byte, dt catalog.DType) error {
	st := b.StoredShape()
	if want := product(st) * int64(dt.Size); int64(len(data)) != want {
		return catalog.Corrupt("", b.File, b.Offset, "block %v: decoded %d bytes, want %d for stored shape %v of %v",
			b.Box, len(data), want, st, dt)
	}
	// Scratch for the region and the views: on the stack for up to
	// stackRank dimensions (copyBlock runs once per block, and blocks can
	// be tiny and many).
	rank := len(st)
	var stack [5 * stackRank]int64
	ints := stack[:]
	if rank > stackRank {
		ints = make([]int64, 5*rank)
	}
	region := catalog.Box{Lower: ints[0:rank:rank], Count: ints[rank : 2*rank : 2*rank]}
	for i := range rank {
		lo := max(b.Box.Lower[i], slab.Lower[i])
		hi := min(b.Box.Lower[i]+b.Box.Count[i], slab.Lower[i]+slab.Count[i])
		if hi <= lo {
			return nil
		}
		region.Lower[i], region.Count[i] = lo, hi-lo
	}
	sv := view{origin: b.Box.Lower, strides: ints[2*rank : 3*rank : 3*rank]}
	if b.StoredLower() != nil { // ghost cells before the valid region
		sv.origin = ints[3*rank : 4*rank : 4*rank]
		for d := range st {
			sv.origin[d] = b.Box.Lower[d] - b.StoredLower()[d]
		}
	}
	if b.Order == catalog.ColMajor {
		colMajorStridesInto(sv.strides, st)
	} else {
		rowMajorStridesInto(sv.strides, st)
	}
	dv := view{origin: slab.Lower, strides: ints[4*rank : 5*rank : 5*rank]}
	rowMajorStridesInto(dv.strides, slab.Count)
	copyRegion(buf, dv, data, sv, region, dt.Size, dt.BigEndian && dt.Size > 1)
	return nil
}

// stackRank is the most dimensions per-block scratch keeps on the stack.
const stackRank = 8

// trimBlock narrows an uncompressed row-major block to the contiguous part
// of its storage that slab needs, so a block larger than a slab (a whole
// contiguous HDF5 dataset, say) is read piecewise instead of once per slab:
// the slab's range along the first dimension where it needs more than one
// index, single indices before it, and the block whole after it (exact for
// slabs that span the trailing dimensions, as every unit does). Other blocks
// are returned unchanged.
func trimBlock(b *catalog.Block, slab catalog.Box, size int) *catalog.Block {
	if len(b.Codecs) != 0 || b.Order != catalog.RowMajor || len(slab.Count) == 0 || b.StoredLower() != nil {
		return b
	}
	if inside(b.Box, slab) {
		return b // needed whole (the common case of many small blocks)
	}
	st := b.StoredShape()
	whole := product(st) * int64(size)
	if b.Inline() != nil && int64(len(b.Inline())) != whole || b.Inline() == nil && b.Length != whole {
		return b // not plainly the stored array: let the source judge it
	}
	region, ok := b.Box.Intersect(slab)
	if !ok {
		return b
	}
	rank := len(st)
	k := 0
	for k < rank-1 && region.Count[k] == 1 {
		k++
	}
	same := true
	for d := 0; d <= k; d++ {
		same = same && region.Lower[d] == b.Box.Lower[d] && region.Count[d] == st[d]
	}
	if same {
		return b
	}
	t := *b
	t.Box = catalog.Box{Lower: append([]int64(nil), b.Box.Lower...), Count: append([]int64(nil), b.Box.Count...)}
	stored := append([]int64(nil), st...)
	strides := rowMajorStrides(st)
	var off int64
	for d := 0; d <= k; d++ {
		off += (region.Lower[d] - b.Box.Lower[d]) * strides[d]
		t.Box.Lower[d], t.Box.Count[d], stored[d] = region.Lower[d], region.Count[d], region.Count[d]
	}
	t = t.WithStored(stored, nil) // b has no StoredLower
	off *= int64(size)
	n := product(stored) * int64(size)
	if b.Inline() != nil {
		t = t.WithInline(b.Inline()[off : off+n])
	} else {
		t.Offset += off
		t.Length = n
	}
	return &t
}

// leFill is the value of a's holes (places no block covers) as one
// little-endian element, nil for zero: the array's own fill value (an HDF5
// fill value, AMReX's and Chombo's NaN), else NaN for floating-point arrays
// (so that a hole never reads as a plausible value) and zero for integers.
// Output datasets carry it as their HDF5 fill value, so holes read back as
// it in every layout: written by assembly in contiguous data, unwritten
// chunks and a virtual dataset's unmapped space filled by HDF5.
func leFill(a *catalog.Array) []byte {
	if a.Fill == nil {
		if a.DType.Kind != catalog.Float {
			return nil
		}
		return floatNaN(a.DType.Size)
	}
	f := append([]byte(nil), a.Fill...)
	if a.DType.BigEndian {
		for i, j := 0, len(f)-1; i < j; i, j = i+1, j-1 {
			f[i], f[j] = f[j], f[i]
		}
	}
	for _, c := range f {
		if c != 0 {
			return f
		}
	}
	return nil
}

// floatNaN is the quiet NaN of an IEEE float of size bytes, little-endian
// (nil for sizes that have none).
func floatNaN(size int) []byte {
	switch size {
	case 2:
		return []byte{0x00, 0x7e}
	case 4:
		return []byte{0x00, 0x00, 0xc0, 0x7f}
	case 8:
		return []byte{0, 0, 0, 0, 0, 0, 0xf8, 0x7f}
	}
	return nil
}

// fillBuf repeats elem over buf (len(buf) is a multiple of len(elem)).
func fillBuf(buf, elem []byte) {
	n := copy(buf, elem)
	for n < len(buf) {
		n += copy(buf[n:], buf[:n])
	}
}

// input is what the engine reads: a source, and the most bytes one of its
// coalesced requests may hold (the caller charged that much per read to
// its budget; 0: the source's own limit).
type input struct {
	src   catalog.Source
	limit int64
}

// assembleSlab reads every block of x's array that intersects slab and
// returns slab's row-major little-endian bytes; places no block covers hold
// fill (LE, or nil for zeros). The array must have passed checkArray.
func assembleSlab(ctx context.Context, in input, x *blockIndex, slab catalog.Box, fill []byte) ([]byte, error) {
	return assembleReads(ctx, nil, in, x.a, slab, x.reads(slab), fill, x.disjoint())
}

// blockIndex finds the blocks of an array that a unit overlaps without
// testing every block for every unit: units are bands and tiles along
// dimension 0, and testing all blocks per unit was quadratic (9 million
// tests for the 520 tiles of a 4 GiB array in 17,576 blocks; at a terabyte,
// hours). Blocks are sorted by their first index along dimension 0, so a
// unit's candidates are those starting less than the tallest block's
// height above it. Build one per array and query it per unit.
type blockIndex struct {
	a     *catalog.Array
	order []int   // block indices by Box.Lower[0] (ties in catalog order)
	low   []int64 // low[k] = Box.Lower[0] of block order[k], for the search
	reach int64   // the largest Box.Count[0]
	// file numbers each block's File by the names' sorted order (equal
	// names, equal numbers), so reads orders by file without comparing
	// strings.
	file []int32
	// disjoint: no two blocks overlap (planner.Disjoint, once per array,
	// on first use: mergeInterleaved's index never asks), so a unit's
	// coverage is the sum of its blocks' parts.
	disjoint func() bool
}

func indexBlocks(a *catalog.Array) *blockIndex {
	n := len(a.Blocks)
	x := &blockIndex{a: a, order: make([]int, n)}
	for i := range x.order {
		x.order[i] = i
		if b := &a.Blocks[i].Box; len(b.Count) > 0 {
			x.reach = max(x.reach, b.Count[0])
		}
	}
	if len(a.Shape) > 0 {
		x.sortByLower()
		x.low = make([]int64, n)
		for k, i := range x.order {
			x.low[k] = a.Blocks[i].Box.Lower[0]
		}
	}
	x.numberFiles()
	x.disjoint = sync.OnceValue(func() bool { // unless knowDisjoint tells it first
		boxes := make([]catalog.Box, n)
		for i := range a.Blocks {
			boxes[i] = a.Blocks[i].Box
		}
		_, _, d := planner.Disjoint(boxes)
		return d
	})
	return x
}

// knowDisjoint records whether the array's blocks are disjoint, as
// checkOverlaps found before the pipeline (351,537 blocks of four arrays:
// planner.Disjoint again cost 0.05 s of CPU in the rewrite).
func (x *blockIndex) knowDisjoint(disjoint bool) {
	x.disjoint = func() bool { return disjoint }
}

// sortByLower orders x.order stably by Box.Lower[0]. When the span of the
// first indices and the block count fit one uint64 together, it sorts
// packed keys (first index above, block index below: stable by
// construction) without a comparison closure reaching into the blocks.
func (x *blockIndex) sortByLower() {
	blocks := x.a.Blocks
	if len(blocks) == 0 {
		return
	}
	lo, hi := blocks[0].Box.Lower[0], blocks[0].Box.Lower[0]
	for i := range blocks {
		v := blocks[i].Box.Lower[0]
		lo, hi = min(lo, v), max(hi, v)
	}
	ibits := bits.Len64(uint64(len(blocks) - 1))
	span := uint64(hi) - uint64(lo) // exact: hi >= lo, the span < 2⁶⁴
	if bits.Len64(span)+ibits > 64 {
		slices.SortStableFunc(x.order, func(i, j int) int {
			return cmp.Compare(blocks[i].Box.Lower[0], blocks[j].Box.Lower[0])
		})
		return
	}
	keys := make([]uint64, len(blocks))
	for i := range blocks {
		keys[i] = (uint64(blocks[i].Box.Lower[0])-uint64(lo))<<ibits | uint64(i)
	}
	slices.Sort(keys)
	mask := uint64(1)<<ibits - 1
	for k, key := range keys {
		x.order[k] = int(key & mask)
	}
}

// nameRanks is the rank of each of names (distinct, numbered in the order
// first seen) in name order, the order byFileOffset sorts files in.
func nameRanks(names []string) []int32 {
	order := make([]int32, len(names))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(x, y int32) int { return strings.Compare(names[x], names[y]) })
	rank := make([]int32, len(names))
	for r, f := range order {
		rank[f] = int32(r)
	}
	return rank
}

// numberFiles sets x.file: the rank of each block's File among the
// array's distinct file names, sorted.
func (x *blockIndex) numberFiles() {
	blocks := x.a.Blocks
	x.file = make([]int32, len(blocks))
	id := map[string]int32{}
	var names []string
	for i := range blocks {
		f := blocks[i].File
		k, ok := id[f]
		if !ok {
			k = int32(len(names))
			id[f] = k
			names = append(names, f)
		}
		x.file[i] = k
	}
	if len(names) < 2 {
		return
	}
	rank := nameRanks(names)
	for i, k := range x.file {
		x.file[i] = rank[k]
	}
}

// each calls fn with the index of every block overlapping slab, in the
// catalog's order.
func (x *blockIndex) each(slab catalog.Box, fn func(i int)) {
	a := x.a
	for _, i := range x.candidates(slab) {
		// Overlap per dimension, without Intersect's allocations.
		if overlaps(a.Blocks[i].Box, slab) {
			fn(i)
		}
	}
}

// candidates are the blocks that may overlap slab, in catalog order: those
// whose extent along dimension 0 can reach it (all of them for a scalar).
func (x *blockIndex) candidates(slab catalog.Box) []int {
	cand := x.order
	if len(x.a.Shape) > 0 && len(slab.Lower) > 0 {
		// A block overlapping slab starts after slab.Lower[0]-reach (it is
		// at most reach tall) and before the slab's end.
		from, to := slab.Lower[0]-x.reach, slab.Lower[0]+slab.Count[0]
		first := sort.Search(len(cand), func(k int) bool { return x.low[k] > from })
		last := first + sort.Search(len(cand)-first, func(k int) bool { return x.low[first+k] >= to })
		cand = slices.Clone(cand[first:last])
		slices.Sort(cand)
	}
	return cand
}

// readKey orders a unit's reads: file (x.file), offset, catalog order.
type readKey struct {
	file int32
	off  int64
	i    int
}

// reads lists the blocks (trimmed to what slab needs) to read for slab, in
// file and offset order: blocks written in scattered order are then read
// with ascending offsets, which the disk and the kernel's read-ahead reward.
func (x *blockIndex) reads(slab catalog.Box) []*catalog.Block {
	a := x.a
	cand := x.candidates(slab)
	keys := make([]readKey, 0, len(cand))
	for _, i := range cand {
		if overlaps(a.Blocks[i].Box, slab) {
			keys = append(keys, readKey{file: x.file[i], i: i, off: a.Blocks[i].Offset})
		}
	}
	// The block index breaks ties: the stable order of before, unstably.
	slices.SortFunc(keys, func(p, q readKey) int {
		if p.file != q.file {
			return cmp.Compare(p.file, q.file)
		}
		if p.off != q.off {
			return cmp.Compare(p.off, q.off)
		}
		return cmp.Compare(p.i, q.i)
	})
	reads := make([]*catalog.Block, len(keys))
	for k, key := range keys {
		reads[k] = trimBlock(&a.Blocks[key.i], slab, a.DType.Size)
	}
	return reads
}

// assembleReads is assembleSlab over reads (blockIndex.reads of slab), timing the
// fetch (read and decode) and assemble (copy) stages on mon when not nil.
// disjoint says the array's blocks are known not to overlap
// (blockIndex.disjoint).
func assembleReads(ctx context.Context, mon *Monitor, in input, a *catalog.Array, slab catalog.Box, reads []*catalog.Block, fill []byte, disjoint bool) ([]byte, error) {
	buf := make([]byte, slab.Elements()*int64(a.DType.Size))
	err := assembleInto(ctx, mon, in, a, slab, reads, fill, buf, false, disjoint)
	return buf, err
}

// assembleInto is assembleReads into buf (slab's size). dirty says buf holds
// old bytes. Places no block covers get fill (nil: zeros, cleared only
// when dirty): never a previous unit's bytes. disjoint: the array's blocks
// are known not to overlap (blockIndex.disjoint), so that coverage is a sum.
func assembleInto(ctx context.Context, mon *Monitor, in input, a *catalog.Array, slab catalog.Box, reads []*catalog.Block, fill []byte, buf []byte, dirty, disjoint bool) error {
	var timer *int64
	if mon != nil {
		start := time.Now()
		var fetched int64 // in the file reads: the rest is assembly
		timer = &fetched
		defer func() {
			mon.stage[stageFetch].Add(fetched)
			mon.stage[stageAssemble].Add(int64(time.Since(start)) - fetched)
		}()
	}
	if (fill != nil || dirty) && !covers(reads, slab, disjoint) {
		if fill != nil {
			fillBuf(buf, fill)
		} else {
			clear(buf)
		}
	}
	// Blocks whose decoded bytes are a contiguous piece of buf in buf's
	// order go straight into place: a raw block's read, a SCORPIO frame's
	// scatter lands there (no read buffer, no copy); a source that cannot
	// decode into place copies there.
	var into [][]byte
	for k, b := range reads {
		if off, ok := inPlace(b, slab, a.DType); ok {
			if into == nil {
				into = make([][]byte, len(reads))
			}
			into[k] = buf[off : off+b.Box.Elements()*int64(a.DType.Size)]
		}
	}
	r := catalog.Reads{Blocks: reads, DTypes: []catalog.DType{a.DType}, Into: into, Limit: in.limit, Timer: timer}
	err := in.src.ReadBlocks(ctx, r, func(k int, data []byte) error {
		if r.Dst(k) == nil {
			if err := copyBlock(buf, slab, reads[k], data, a.DType); err != nil {
				return err
			}
		}
		return ctx.Err()
	})
	if err != nil {
		return fmt.Errorf("slab %v: %w", slab, err)
	}
	return nil
}

// inPlace reports whether b's decoded bytes are, unchanged, the bytes of a
// contiguous piece of slab's row-major little-endian buffer, and where it
// starts: a row-major block of no ghost cells in the buffer's byte order,
// inside slab, spanning slab whole in every dimension after its first one
// of more than one index. A raw block whose length is not its box's is
// left to the read that says it is corrupt.
func inPlace(b *catalog.Block, slab catalog.Box, dt catalog.DType) (int64, bool) {
	rank := len(slab.Count)
	n := b.Box.Elements() * int64(dt.Size)
	if rank == 0 || b.Order != catalog.RowMajor || b.StoredLower() != nil || dt.BigEndian && dt.Size > 1 || n == 0 ||
		len(b.Codecs) == 0 && b.Inline() == nil && b.Length != n {
		return 0, false
	}
	if st := b.StoredShape(); !slices.Equal(st, b.Box.Count) {
		return 0, false
	}
	k := 0
	for k < rank-1 && b.Box.Count[k] == 1 {
		k++
	}
	strides := rowMajorStrides(slab.Count)
	var off int64
	for d := range rank {
		lo, n := b.Box.Lower[d]-slab.Lower[d], b.Box.Count[d]
		if lo < 0 || lo+n > slab.Count[d] || d > k && n != slab.Count[d] {
			return 0, false
		}
		off += lo * strides[d]
	}
	return off * int64(dt.Size), true
}

// covers reports whether reads fill slab: their parts inside slab add up to
// it and no two of them overlap (overlapping blocks can add up to the slab
// and still leave a hole). disjoint: the blocks are known not to overlap.
func covers(reads []*catalog.Block, slab catalog.Box, disjoint bool) bool {
	var n int64
	for _, b := range reads {
		n += intersection(b.Box, slab)
	}
	if n != slab.Elements() {
		return false
	}
	if disjoint {
		return true
	}
	parts := make([]catalog.Box, 0, len(reads))
	for _, b := range reads {
		if r, ok := b.Box.Intersect(slab); ok {
			parts = append(parts, r)
		}
	}
	_, _, ok := planner.Disjoint(parts)
	return ok
}

// intersection is the number of elements b and slab share (no allocation).
func intersection(b, slab catalog.Box) int64 {
	n := int64(1)
	for d := range slab.Count {
		lo := max(b.Lower[d], slab.Lower[d])
		hi := min(b.Lower[d]+b.Count[d], slab.Lower[d]+slab.Count[d])
		if hi <= lo {
			return 0
		}
		n *= hi - lo
	}
	return n
}

// inside reports whether b lies within slab (same rank).
func inside(b, slab catalog.Box) bool {
	if len(b.Lower) != len(slab.Lower) {
		return false
	}
	for d := range slab.Count {
		if b.Lower[d] < slab.Lower[d] || b.Lower[d]+b.Count[d] > slab.Lower[d]+slab.Count[d] {
			return false
		}
	}
	return true
}

// overlaps reports whether b and slab share an element (a scalar slab
// overlaps every non-empty block).
func overlaps(b, slab catalog.Box) bool {
	for d := range slab.Count {
		if b.Count[d] <= 0 || b.Lower[d] >= slab.Lower[d]+slab.Count[d] || b.Lower[d]+b.Count[d] <= slab.Lower[d] {
			return false
		}
	}
	return len(slab.Count) > 0 || b.Elements() > 0
}
