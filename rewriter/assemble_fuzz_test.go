package rewriter

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"relayout/catalog"
)

// Differential fuzzing of the assembly (assembleInto, copyBlock, copyRegion,
// trimBlock, inPlace) against a naive assembler written here: for every
// element of the slab, find the block that holds it, compute where it sits
// in that block's stored array element by element (row- or column-major,
// ghost cells before it, padding after it), and reverse its bytes when the
// array is big-endian. The fuzzer's bytes choose the rank, shape, element
// size, byte order, the blocks (a random grid of the array with cells
// dropped: holes), each block's order, ghost cells, padding, inline or file
// storage, an overlapping block with the same values, the slab, the fill
// value, and whether the source reads blocks straight into the buffer.

// fuzzBytes hands out the fuzzer's bytes, zeros once they run out.
type fuzzBytes struct {
	b []byte
	i int
}

func (f *fuzzBytes) next() int {
	if f.i >= len(f.b) {
		return 0
	}
	f.i++
	return int(f.b[f.i-1])
}

func (f *fuzzBytes) upto(n int) int { return f.next() % n } // 0..n-1

// fuzzValue is element g's value: distinct bytes per element and byte.
func fuzzValue(g []int64, size int) []byte {
	h := uint64(1469598103934665603)
	for _, x := range g {
		h = (h ^ uint64(x+1)) * 1099511628211
	}
	out := make([]byte, size)
	for k := range out {
		out[k] = byte(h >> (8 * (k % 8)))
		if out[k] == 0xee {
			out[k] = 0xef // 0xee marks ghost cells and padding
		}
	}
	return out // in the array's byte order (the stored bytes)
}

type fuzzCase struct {
	a    *catalog.Array
	src  catalog.Source
	slab catalog.Box
	fill []byte // little-endian, nil: zeros
}

func buildFuzzCase(fb *fuzzBytes) fuzzCase {
	rank := 1 + fb.upto(4)
	sizes := []int{1, 2, 4, 8}
	dt := catalog.DType{Kind: catalog.Uint, Size: sizes[fb.upto(4)]}
	dt.BigEndian = dt.Size > 1 && fb.upto(2) == 1
	shape := make([]int64, rank)
	for d := range shape {
		shape[d] = int64(1 + fb.upto(6))
	}
	// A grid: cut points per dimension.
	cuts := make([][]int64, rank)
	for d := range shape {
		cuts[d] = []int64{0}
		for x := int64(1); x < shape[d]; x++ {
			if fb.upto(3) == 0 {
				cuts[d] = append(cuts[d], x)
			}
		}
		cuts[d] = append(cuts[d], shape[d])
	}
	a := &catalog.Array{Var: "v", DType: dt, Shape: shape, Offset: make([]int64, rank)}
	src := &fakeSource{files: map[string][]byte{}}
	cell := make([]int, rank)
	for {
		if fb.upto(5) != 0 { // else: a hole
			b := catalog.Block{Box: catalog.Box{Lower: make([]int64, rank), Count: make([]int64, rank)}, Rank: -1}
			for d := range rank {
				b.Box.Lower[d] = cuts[d][cell[d]]
				b.Box.Count[d] = cuts[d][cell[d]+1] - cuts[d][cell[d]]
			}
			if fb.upto(2) == 1 {
				b.Order = catalog.ColMajor
			}
			ghost := fb.upto(3) == 0
			pad := fb.upto(3) == 0
			st := append([]int64(nil), b.Box.Count...)
			var sl []int64
			if ghost {
				sl = make([]int64, rank)
				for d := range rank {
					sl[d] = int64(fb.upto(3))
					st[d] += sl[d] + int64(fb.upto(3))
				}
			}
			if pad {
				for d := range rank {
					st[d] += int64(fb.upto(2))
				}
			}
			if ghost || pad {
				b = b.WithStored(st, sl)
			}
			data := naiveEncode(&b, dt)
			if fb.upto(4) == 0 {
				b = b.WithInline(data)
			} else {
				b.File = fmt.Sprintf("f%d", fb.upto(3))
				b.Offset = int64(len(src.files[b.File]))
				b.Length = int64(len(data))
				src.files[b.File] = append(src.files[b.File], data...)
			}
			a.Blocks = append(a.Blocks, b)
		}
		d := rank - 1
		for ; d >= 0; d-- {
			if cell[d]++; cell[d] < len(cuts[d])-1 {
				break
			}
			cell[d] = 0
		}
		if d < 0 {
			break
		}
	}
	// Sometimes a block overlapping others (a halo: same values), so that
	// coverage cannot be a sum.
	for range fb.upto(3) / 2 {
		b := catalog.Block{Box: catalog.Box{Lower: make([]int64, rank), Count: make([]int64, rank)}, Rank: -1}
		for d := range rank {
			b.Box.Lower[d] = int64(fb.upto(int(shape[d])))
			b.Box.Count[d] = 1 + int64(fb.upto(int(shape[d]-b.Box.Lower[d])))
		}
		b = b.WithInline(naiveEncode(&b, dt))
		a.Blocks = append(a.Blocks, b)
	}
	slab := catalog.Box{Lower: make([]int64, rank), Count: make([]int64, rank)}
	for d := range rank {
		slab.Lower[d] = int64(fb.upto(int(shape[d])))
		slab.Count[d] = 1 + int64(fb.upto(int(shape[d]-slab.Lower[d])))
	}
	var fill []byte
	if fb.upto(2) == 1 {
		fill = make([]byte, dt.Size)
		for k := range fill {
			fill[k] = byte(0x10 + fb.upto(200))
		}
	}
	return fuzzCase{a: a, src: src, slab: slab, fill: fill}
}

// naiveEncode lays out block b's stored array element by element: valid
// elements hold fuzzValue of their global index, ghost cells and padding
// 0xee.
func naiveEncode(b *catalog.Block, dt catalog.DType) []byte {
	st := b.StoredShape()
	rank := len(st)
	n := int64(1)
	for _, c := range st {
		n *= c
	}
	out := make([]byte, n*int64(dt.Size))
	for e := int64(0); e < n; e++ {
		p := storedIndex(e, st, b.Order)
		g := make([]int64, rank)
		valid := true
		for d := range rank {
			sl := int64(0)
			if b.StoredLower() != nil {
				sl = b.StoredLower()[d]
			}
			if p[d] < sl || p[d] >= sl+b.Box.Count[d] {
				valid = false
			}
			g[d] = b.Box.Lower[d] + p[d] - sl
		}
		v := bytes.Repeat([]byte{0xee}, dt.Size)
		if valid {
			v = fuzzValue(g, dt.Size)
		}
		copy(out[e*int64(dt.Size):], v)
	}
	return out
}

// storedIndex is the index of the e-th stored element.
func storedIndex(e int64, st []int64, order catalog.Order) []int64 {
	p := make([]int64, len(st))
	if order == catalog.ColMajor {
		for d := 0; d < len(st); d++ {
			p[d] = e % st[d]
			e /= st[d]
		}
	} else {
		for d := len(st) - 1; d >= 0; d-- {
			p[d] = e % st[d]
			e /= st[d]
		}
	}
	return p
}

// naiveAssemble is the reference: slab's row-major little-endian bytes.
func naiveAssemble(c fuzzCase) []byte {
	a, slab := c.a, c.slab
	size := a.DType.Size
	n := slab.Elements()
	out := make([]byte, 0, n*int64(size))
	for e := int64(0); e < n; e++ {
		g := storedIndex(e, slab.Count, catalog.RowMajor)
		for d := range g {
			g[d] += slab.Lower[d]
		}
		var v []byte
		for i := range a.Blocks {
			b := &a.Blocks[i]
			in := true
			for d := range g {
				in = in && g[d] >= b.Box.Lower[d] && g[d] < b.Box.Lower[d]+b.Box.Count[d]
			}
			if !in {
				continue
			}
			v = fuzzValue(g, size)
			if a.DType.BigEndian {
				for x, y := 0, len(v)-1; x < y; x, y = x+1, y-1 {
					v[x], v[y] = v[y], v[x]
				}
			}
			break
		}
		if v == nil {
			v = make([]byte, size)
			if c.fill != nil {
				copy(v, c.fill)
			}
		}
		out = append(out, v...)
	}
	return out
}

func FuzzAssemble(f *testing.F) {
	// Seeds: each element size and byte order, column-major blocks, ghost
	// cells, padded edge chunks, holes, in-place reads.
	f.Add([]byte{2, 3, 1, 5, 4, 3, 0, 1, 2, 1, 1, 1, 0, 2, 1, 0, 3, 1, 1, 0})
	f.Add([]byte{1, 0, 0, 2, 5, 1, 1, 1, 1, 1, 0, 2, 0, 0, 0, 1, 2, 3, 4, 5, 6})
	f.Add([]byte{3, 1, 0, 1, 1, 1, 1, 2, 0, 1, 2, 2, 1, 0, 1, 1, 0, 1, 2, 2, 1, 1, 1})
	f.Add([]byte{0, 2, 1, 5, 0, 0, 1, 1, 0, 3, 1, 0, 1, 1})
	f.Add(bytes.Repeat([]byte{1, 2, 3}, 30))
	f.Add(bytes.Repeat([]byte{7, 0, 4, 1, 2}, 40))
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) > 4096 {
			return // memory cap: at most 6^4 elements of 8 bytes are built anyway
		}
		c := buildFuzzCase(&fuzzBytes{b: in})
		if err := checkArray(c.a); err != nil {
			t.Fatalf("generated array refused: %v", err)
		}
		want := naiveAssemble(c)
		x := indexBlocks(c.a)
		for _, dirty := range []bool{false, true} {
			buf := make([]byte, len(want))
			if dirty {
				for k := range buf {
					buf[k] = 0xab // a previous unit's bytes
				}
			}
			fill := c.fill
			if fill != nil && bytes.Count(fill, []byte{0}) == len(fill) {
				fill = nil
			}
			if err := assembleInto(context.Background(), nil, input{src: c.src}, c.a, c.slab, x.reads(c.slab), fill, buf, dirty, x.disjoint()); err != nil {
				t.Fatalf("assembleInto: %v", err)
			}
			if !bytes.Equal(buf, want) {
				k := 0
				for k < len(buf) && buf[k] == want[k] {
					k++
				}
				t.Fatalf("dirty %v, %v shape %v slab %v, %d blocks: byte %d differs (got %x, want %x)",
					dirty, c.a.DType, c.a.Shape, c.slab, len(c.a.Blocks), k, buf[k], want[k])
			}
		}
	})
}
