package verify

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"relayout/catalog"
)

// The input side of the checksum path, summed while the rewriter reads it.
//
// A run that rewrites and then verifies reads every input block twice:
// once to write it, once to check it. A Tap, wrapped around the source the
// rewrite reads (Tap.Source), sums each block of small-block
// arrays as the reader decodes it for the rewriter; the checksum path then
// reads only the blocks no read of the rewrite handed over whole.
//
//	rewrite:  Source.ReadBlocks ──data──► rewriter (assemble, write)
//	                │
//	                └─► Tap: is *Block an element of a kept list? ──no──► ignored
//	                                 │ yes, bit i of seen not yet set
//	                                 ▼
//	                    raw   += S_in term of the block, no fill taken off
//	                    cover += sum of X^e over its elements
//	verify:   S_in = raw - f*cover + (terms of the blocks not seen, read now)
//
// What keeps it independent of the writer: a block counts only when the
// *Block handed over is an element of the catalog store's kept list of its
// array (catalog.Store.KeptKeys; the rewriter reads those very elements
// when it needs a block whole, and its own trimmed copies are ignored), so
// which element each byte is, is the catalog's word (the block's box,
// stored shape and order), placed by this package's code, as when the
// verifier reads the block itself; the bytes are the reader's decoding,
// the same the verifier would get (decoded for the catalog's element type,
// or raw); seen proves every block summed exactly
// once (a block read twice, as a compressed block two units share is, is
// summed once); what the rewriter did with the bytes is checked only
// against the output read back through HDF5. The fill f is the output's
// recorded one, known only at verify time: hence cover, which turns
// raw into the S_in of checksum.go.

// Tap sums input blocks for the checksum path (see above). Make it with
// NewTap before the rewrite, have the rewrite read through Tap.Source and
// hand it to Check with Options.Tap.
type Tap struct {
	fields *fields
	arrays []*tapArray // by the address of their block lists
}

// tapArray is one array's sums.
type tapArray struct {
	k      catalog.Key
	n      int     // blocks in the store's kept list
	lo, hi uintptr // the list's first byte and the one past its last
	dt     catalog.DType
	f      *field
	rs     rowSteps
	tables []*blockTable
	seen   []atomic.Uint64 // bit i: block i summed

	mu         sync.Mutex
	raw, cover uint64
}

// blockSize is the bytes of one element of a block list.
const blockSize = unsafe.Sizeof(catalog.Block{})

// NewTap makes the tap of in's kept arrays that may take the checksum
// path (small disjoint blocks: those the budget or the output then keep
// off it are verified as without a tap).
func NewTap(in *catalog.Store) (*Tap, error) {
	t := &Tap{fields: newFields()}
	for _, k := range in.KeptKeys() {
		a, err := in.Array(k)
		if err != nil {
			return nil, fmt.Errorf("verify: %w", err)
		}
		if len(a.Blocks) == 0 || !smallBlocks(a, math.MaxInt64, quickMost(true)) {
			continue
		}
		f := t.fields.of(a.DType.Size)
		rs := f.rowSteps(a.Shape)
		t.arrays = append(t.arrays, &tapArray{
			k: k, n: len(a.Blocks), dt: a.DType, f: f, rs: rs, tables: blockTables(a, f, rs),
			lo:   uintptr(unsafe.Pointer(&a.Blocks[0])),
			hi:   uintptr(unsafe.Pointer(&a.Blocks[0])) + uintptr(len(a.Blocks))*blockSize,
			seen: make([]atomic.Uint64, (len(a.Blocks)+63)/64),
		})
	}
	slices.SortFunc(t.arrays, func(x, y *tapArray) int { return cmp.Compare(x.lo, y.lo) })
	return t, nil
}

// Source is src with t summing every block a ReadBlocks call of it hands
// over (whole and decoded, before the caller sees the bytes); a nil t, or
// one with nothing to sum: src. The caller that reads (the rewriter)
// knows nothing of it.
func (t *Tap) Source(src catalog.Source) catalog.Source {
	if t == nil || len(t.arrays) == 0 {
		return src
	}
	return tappedSource{src, t}
}

// tappedSource is a Source whose reads a Tap sees.
type tappedSource struct {
	catalog.Source
	t *Tap
}

// ReadBlocks implements catalog.Source: each call's blocks summed by one
// tapBatch, closed when the call ends.
func (s tappedSource) ReadBlocks(ctx context.Context, r catalog.Reads, fn func(i int, data []byte) error) error {
	tb := &tapBatch{t: s.t}
	defer tb.Close()
	return s.Source.ReadBlocks(ctx, r, func(i int, data []byte) error {
		tb.Block(r.Blocks[i], r.DType(i), data)
		return fn(i, data)
	})
}

// of is the tap's sums of a, or nil: a's block list must be the one
// tapped (the same elements), so that block indexes agree.
func (t *Tap) of(a *catalog.Array) *tapArray {
	if t == nil || len(a.Blocks) == 0 {
		return nil
	}
	lo := uintptr(unsafe.Pointer(&a.Blocks[0]))
	for _, ta := range t.arrays {
		if ta.lo == lo && ta.n == len(a.Blocks) && ta.k == a.Key() {
			return ta
		}
	}
	return nil
}

// has reports whether block i was summed.
func (ta *tapArray) has(i int) bool { return ta.seen[i/64].Load()>>(i%64)&1 != 0 }

// mark sets block i's bit, false when it was set already.
func (ta *tapArray) mark(i int) bool {
	bit := uint64(1) << (i % 64)
	return ta.seen[i/64].Or(bit)&bit == 0
}

// tapBatch is one read call's blocks: sums kept apart and added to their
// arrays' at Close (one lock an array a call, not one a block).
type tapBatch struct {
	t       *Tap
	last    *tapArray
	sums    []tapSum
	ar      intArena
	strides [8]int64
	scratch []byte
	g       []int64
	wts     []uint64
}

type tapSum struct {
	ta         *tapArray
	raw, cover uint64
}

// Block sums block b, read with elements of type dt, when it is an
// element of a tapped array's kept list. Bytes decoded for another element
// type than the catalog's are not the block's (the verifier reads it).
func (tb *tapBatch) Block(b *catalog.Block, dt catalog.DType, data []byte) {
	ta, i := tb.find(b)
	if ta == nil || b.Box.Elements() == 0 || dt != ta.dt {
		return
	}
	tb.ar.chunk = tb.strides[:] // p lives for this call: its strides are reused
	p := placementIn(b, ta.dt, &tb.ar)
	if int64(len(data)) != p.storedBytes() || !ta.mark(i) {
		return // not as the catalog says (the verifier reads it and says why), or summed already
	}
	f, rank := ta.f, len(b.Box.Lower)
	if len(tb.g) < rank {
		tb.g, tb.wts = make([]int64, rank), make([]uint64, rank)
	}
	var raw, cover uint64
	if bt := tableOf(ta.tables, b.Box.Count); bt != nil && storedAsRegion(p, b.Box) {
		// As tableSum, with the weights' sum (the table's) at the same power.
		w := f.powX(firstIndex(b.Box.Lower, ta.rs))
		raw, cover = mul(dot(data, len(data)/len(bt.t), bt.t, bt.tx), w), mul(bt.sum, w)
	} else {
		raw, tb.scratch = f.blockSum(p, data, 0, ta.rs, tb.scratch, tb.g[:rank], tb.wts[:rank])
		cover = f.boxWeight(b.Box, ta.rs)
	}
	for k := range tb.sums {
		if s := &tb.sums[k]; s.ta == ta {
			s.raw, s.cover = fold(s.raw+raw), fold(s.cover+cover)
			return
		}
	}
	tb.sums = append(tb.sums, tapSum{ta, fold(raw), fold(cover)})
}

// find is the tapped array whose list b is an element of, and its index.
func (tb *tapBatch) find(b *catalog.Block) (*tapArray, int) {
	at := uintptr(unsafe.Pointer(b))
	ta := tb.last
	if ta == nil || at < ta.lo || at >= ta.hi {
		arrays := tb.t.arrays
		k, _ := slices.BinarySearchFunc(arrays, at, func(x *tapArray, at uintptr) int {
			if x.lo <= at {
				return -1
			}
			return 1
		})
		if k == 0 || at >= arrays[k-1].hi {
			return nil, 0
		}
		ta = arrays[k-1]
		tb.last = ta
	}
	if (at-ta.lo)%blockSize != 0 {
		return nil, 0
	}
	return ta, int((at - ta.lo) / blockSize)
}

// Close adds the call's sums to their arrays'.
func (tb *tapBatch) Close() {
	for _, s := range tb.sums {
		ta := s.ta
		ta.mu.Lock()
		ta.raw, ta.cover = fold(ta.raw+s.raw), fold(ta.cover+s.cover)
		ta.mu.Unlock()
	}
	tb.sums = tb.sums[:0]
}

// boxWeight is the sum of X^e over the elements e of box in an array of
// strides rs: the product over dimensions of the geometric series of X
// to the dimension's stride, times X to the box's first element.
func (f *field) boxWeight(box catalog.Box, rs rowSteps) uint64 {
	w := f.powX(firstIndex(box.Lower, rs))
	for d, c := range box.Count {
		w = mul(w, geoPow(rs.weight[d], c))
	}
	return w
}

// geoPow is sum_{i<n} r^i (r folded), folded: built from the top bit of n
// down, doubling the terms (s(2m) = s(m) * (1 + r^m)) and adding one
// (s(m+1) = s(m) + r^m), 2 log n multiplications and no inverse (1 - r
// may be 0).
func geoPow(r uint64, n int64) uint64 {
	var s uint64
	pm := uint64(1) // r^m
	for bit := bits.Len64(uint64(n)) - 1; bit >= 0; bit-- {
		s = fold(s + mul(s, pm))
		pm = mul(pm, pm)
		if n>>bit&1 == 1 {
			s = fold(s + pm)
			pm = mul(pm, r)
		}
	}
	return s
}
