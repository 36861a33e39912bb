package verify

import (
	"encoding/binary"
	"math/big"
	"math/rand/v2"
	"testing"

	"relayout/catalog"
)

// brute is sum_j word_j x^j mod 2^61-1 over the little-endian elements of
// data (words of 32 bits, one per element of at most 4 bytes), by big
// integers: nothing shared with field.
func brute(x uint64, data []byte, size int, first int64) uint64 {
	p := new(big.Int).SetUint64(mersenne61)
	bx := new(big.Int).SetUint64(x)
	words := int64((size + 3) / 4)
	sum := new(big.Int)
	for e := int64(0); e < int64(len(data)/size); e++ {
		el := data[e*int64(size) : (e+1)*int64(size)]
		for w := range words {
			var v uint64
			switch size {
			case 1:
				v = uint64(el[0])
			case 2:
				v = uint64(binary.LittleEndian.Uint16(el))
			default:
				v = uint64(binary.LittleEndian.Uint32(el[4*w:]))
			}
			t := new(big.Int).Exp(bx, big.NewInt((first+e)*words+w), p)
			sum.Add(sum, t.Mul(t, new(big.Int).SetUint64(v)))
		}
	}
	return sum.Mod(sum, p).Uint64()
}

// poly and powX agree with the definition, for every element size, runs
// shorter and longer than a chunk, and offsets past each power table.
func TestPolyAgainstBigInt(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	fs := newFields()
	for _, size := range []int{1, 2, 4, 8} {
		f := fs.of(size)
		for _, n := range []int{0, 1, 3, 255, 256, 257, 1000} {
			for _, first := range []int64{0, 1, 4095, 1 << 20, 1<<36 + 12345} {
				data := make([]byte, n*size)
				for i := range data {
					data[i] = byte(rng.Uint32())
				}
				if n > 2 {
					for i := range size { // an all-ones element: the largest words
						data[size+i] = 0xff
					}
				}
				got := reduce(mul(f.poly(data, size), f.powX(first)))
				if want := brute(fs.x, data, size, first); got != want {
					t.Fatalf("size %d n %d first %d: %d, want %d", size, n, first, got, want)
				}
			}
		}
	}
}

// The identity the checksum path rests on: for random arrays cut into
// random disjoint blocks (row- and column-major, big-endian, with ghost
// cells, leaving holes that hold the fill; those stored as their region
// summed by table too), the blocks' sums plus the
// fill's equal the output's; any one element changed breaks it.
func TestChecksumIdentity(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	fs := newFields()
	tables := 0
	defer func() {
		if tables == 0 {
			t.Error("no block stored as its region: tableSum untested")
		}
	}()
	for trial := range 200 {
		rank := 1 + rng.IntN(3)
		size := []int{1, 2, 4, 8}[rng.IntN(4)]
		dt := catalog.DType{Kind: catalog.Uint, Size: size, BigEndian: rng.IntN(2) == 0}
		shape := make([]int64, rank)
		for d := range shape {
			shape[d] = 1 + rng.Int64N(9)
		}
		fill := make([]byte, size) // the output's, little-endian
		for i := range fill {
			fill[i] = byte(rng.Uint32())
		}
		a := &catalog.Array{Shape: shape, DType: dt}
		n := a.Elements()
		out := make([]byte, n*int64(size))
		for e := range n {
			copy(out[e*int64(size):], fill)
		}
		stride := make([]int64, rank)
		s := int64(1)
		for d := rank - 1; d >= 0; d-- {
			stride[d] = s
			s *= shape[d]
		}
		// Blocks: a grid of random cuts; some cells left out (holes).
		cuts := make([][]int64, rank)
		for d := range rank {
			cuts[d] = []int64{0}
			for i := int64(1); i < shape[d]; i++ {
				if rng.IntN(3) == 0 {
					cuts[d] = append(cuts[d], i)
				}
			}
			cuts[d] = append(cuts[d], shape[d])
		}
		f := fs.of(size)
		fillPhi := f.phi(fill)
		rs := f.rowSteps(shape)
		var sumIn uint64
		idx := make([]int, rank)
		for {
			box := catalog.Box{Lower: make([]int64, rank), Count: make([]int64, rank)}
			for d := range rank {
				box.Lower[d] = cuts[d][idx[d]]
				box.Count[d] = cuts[d][idx[d]+1] - box.Lower[d]
			}
			if rng.IntN(4) != 0 {
				b := randomBlock(rng, box, dt, stride, out, rng.IntN(3) == 0)
				p := newPlacement(b.b, dt)
				g, wts := make([]int64, rank), make([]uint64, rank)
				fillTerm := reduce(mul(fillPhi, f.geo(box.Count[rank-1])))
				term, _ := f.blockSum(p, b.data, fillTerm, rs, nil, g, wts)
				if storedAsRegion(p, box) {
					tables++
					bt := f.blockTable(box.Count, rs)
					if ts := f.tableSum(bt, b.data, fillPhi, rs, box.Lower); reduce(ts) != reduce(term) {
						t.Fatalf("trial %d block %v: by table %d, by rows %d", trial, box, reduce(ts), reduce(term))
					}
				}
				sumIn = fold(sumIn + term)
			}
			d := rank - 1
			for ; d >= 0; d-- {
				if idx[d]++; idx[d] < len(cuts[d])-1 {
					break
				}
				idx[d] = 0
			}
			if d < 0 {
				break
			}
		}
		want := reduce(sumIn + mul(fillPhi, f.geo(n)))
		if got := reduce(f.poly(out, size)); got != want {
			t.Fatalf("trial %d (shape %v %v): output %d, input %d", trial, shape, dt, got, want)
		}
		k := rng.Int64N(n * int64(size)) // one byte of the output changed
		out[k] ^= 1 << rng.IntN(8)
		if got := reduce(f.poly(out, size)); got == want {
			t.Fatalf("trial %d: a changed byte %d not seen", trial, k)
		}
	}
}

type testBlock struct {
	b    *catalog.Block
	data []byte
}

// randomBlock stores the elements of box (their little-endian values in
// out, the array's row-major bytes) as a block would: random ghost cells
// around it, row- or column-major, in dt's byte order; the output's values
// inside the box are made random first.
func randomBlock(rng *rand.Rand, box catalog.Box, dt catalog.DType, stride []int64, out []byte, plain bool) testBlock {
	rank := len(box.Lower)
	size := int64(dt.Size)
	b := new(catalog.Block{Box: box}.WithStored(make([]int64, rank), make([]int64, rank)))
	for d := range rank {
		if !plain {
			b.StoredLower()[d] = rng.Int64N(2)
		}
		b.Stored()[d] = box.Count[d] + b.StoredLower()[d]
		if !plain {
			b.Stored()[d] += rng.Int64N(2)
		}
	}
	if !plain && rng.IntN(2) == 0 {
		b.Order = catalog.ColMajor
	}
	p := newPlacement(b, dt)
	data := make([]byte, p.storedBytes())
	for i := range data {
		data[i] = byte(rng.Uint32()) // ghost cells: noise
	}
	g := make([]int64, rank)
	copy(g, box.Lower)
	for {
		var e int64
		for d := range rank {
			e += g[d] * stride[d]
		}
		el := out[e*size : (e+1)*size]
		for i := range el {
			el[i] = byte(rng.Uint32())
		}
		st := data[p.offset(g)*size:][:size]
		for i := range st {
			if dt.BigEndian {
				st[i] = el[len(el)-1-i]
			} else {
				st[i] = el[i]
			}
		}
		d := rank - 1
		for ; d >= 0; d-- {
			if g[d]++; g[d] < box.Lower[d]+box.Count[d] {
				break
			}
			g[d] = box.Lower[d]
		}
		if d < 0 {
			return testBlock{b, data}
		}
	}
}

// disjoint tells blocks that share an element from blocks that tile.
func TestDisjoint(t *testing.T) {
	box := func(l0, l1, c0, c1 int64) catalog.Block {
		return catalog.Block{Box: catalog.Box{Lower: []int64{l0, l1}, Count: []int64{c0, c1}}}
	}
	cases := []struct {
		blocks  []catalog.Block
		covered int64
		ok      bool
	}{
		{[]catalog.Block{box(0, 0, 4, 4), box(4, 0, 4, 4), box(0, 4, 8, 2)}, 48, true},
		{[]catalog.Block{box(0, 0, 4, 4), box(3, 3, 2, 2)}, 0, false},
		{[]catalog.Block{box(0, 0, 6, 3), box(0, 3, 6, 3), box(0, 2, 1, 1)}, 0, false},
		{[]catalog.Block{box(1, 1, 3, 5), box(4, 1, 3, 5), box(0, 0, 0, 0)}, 30, true},
	}
	for i, c := range cases {
		covered, ok := disjoint(&catalog.Array{Shape: []int64{8, 8}, Blocks: c.blocks}, maxCells)
		if ok != c.ok || ok && covered != c.covered {
			t.Errorf("case %d: covered %d ok %v, want %d %v", i, covered, ok, c.covered, c.ok)
		}
	}
	if _, ok := disjoint(&catalog.Array{Shape: []int64{1 << 20, 1 << 20}, Blocks: []catalog.Block{box(0, 0, 1, 1)}}, maxCells); ok {
		t.Error("a grid of 2^40 cells accepted")
	}
}

// tiles: only blocks that cover every element of the array once let the
// bands skip their hole check; a gap, an overlap, a block reaching past the
// shape (whose elements would make up the count of a gap) or a scalar do not.
func TestTiles(t *testing.T) {
	box := func(l0, l1, c0, c1 int64) catalog.Block {
		return catalog.Block{Box: catalog.Box{Lower: []int64{l0, l1}, Count: []int64{c0, c1}}}
	}
	cases := []struct {
		what   string
		blocks []catalog.Block
		want   bool
	}{
		{"tiling", []catalog.Block{box(0, 0, 4, 8), box(4, 0, 4, 4), box(4, 4, 4, 4), box(2, 2, 0, 0)}, true},
		{"gap", []catalog.Block{box(0, 0, 4, 8), box(4, 0, 4, 4)}, false},
		{"overlap", []catalog.Block{box(0, 0, 4, 8), box(4, 0, 4, 4), box(4, 4, 4, 4), box(3, 3, 2, 2)}, false},
		{"past the shape", []catalog.Block{box(0, 0, 4, 8), box(4, 0, 4, 4), box(4, 6, 4, 4)}, false},
		{"no blocks", nil, false},
	}
	for _, c := range cases {
		if got := tiles(&catalog.Array{Shape: []int64{8, 8}, Blocks: c.blocks}); got != c.want {
			t.Errorf("%s: tiles %v, want %v", c.what, got, c.want)
		}
	}
	scalar := &catalog.Array{Shape: []int64{}, Blocks: []catalog.Block{{Box: catalog.Box{Lower: []int64{}, Count: []int64{}}}}}
	if tiles(scalar) {
		t.Error("a scalar tiled")
	}
}
