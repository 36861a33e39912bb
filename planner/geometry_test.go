package planner

import (
	"math/rand/v2"
	"slices"
	"testing"

	"relayout/catalog"
)

func b2(x, y, nx, ny int64) catalog.Box { return box([]int64{x, y}, []int64{nx, ny}) }

func TestGeometryBasics(t *testing.T) {
	a, b := b2(0, 0, 4, 4), b2(2, 3, 4, 4)
	if got, ok := Intersect(a, b); !ok || !Equal(got, b2(2, 3, 2, 1)) {
		t.Fatalf("Intersect = %v %v", got, ok)
	}
	if !Overlaps(a, b) || Overlaps(a, b2(4, 0, 1, 1)) || Overlaps(a, b2(0, 4, 1, 1)) {
		t.Fatal("Overlaps wrong at a shared face")
	}
	if !Contains(a, b2(1, 1, 3, 3)) || Contains(a, b2(1, 1, 4, 3)) || !Contains(a, b2(9, 9, 0, 1)) {
		t.Fatal("Contains")
	}
	if Volume(a) != 16 || Volume(box([]int64{}, []int64{})) != 1 || !IsEmpty(b2(0, 0, 3, 0)) {
		t.Fatal("Volume/IsEmpty")
	}
	bb, ok := BoundingBox([]catalog.Box{b2(5, 5, 0, 9), b, a})
	if !ok || !Equal(bb, b2(0, 0, 6, 7)) {
		t.Fatalf("BoundingBox = %v", bb)
	}
	if _, ok := BoundingBox([]catalog.Box{b2(1, 1, 0, 0)}); ok {
		t.Fatal("BoundingBox of nothing")
	}
	if r := Relative(b, a); !Equal(r, b2(2, 3, 4, 4)) {
		t.Fatal(r)
	}
	if u := Upper(b); u[0] != 6 || u[1] != 7 {
		t.Fatal(u)
	}
}

func TestCoverError(t *testing.T) {
	cover := b2(0, 0, 4, 3)
	good := []catalog.Box{b2(0, 0, 4, 1), b2(0, 1, 1, 2), b2(1, 1, 3, 2), b2(2, 2, 0, 0)}
	if err := CoverError(cover, good); err != nil {
		t.Fatal(err)
	}
	if bb, ok := ExactUnion(good); !ok || !Equal(bb, cover) {
		t.Fatal("ExactUnion")
	}
	for name, parts := range map[string][]catalog.Box{
		"gap":     {b2(0, 0, 4, 1), b2(0, 1, 1, 2)},
		"outside": {b2(0, 0, 4, 1), b2(0, 1, 1, 2), b2(1, 1, 3, 3)},
		// Same total volume as the cover, but two parts overlap and a cell is missing.
		"overlap": {b2(0, 0, 4, 1), b2(0, 1, 2, 2), b2(1, 1, 3, 1), b2(2, 2, 1, 1)},
		"rank":    {box([]int64{0}, []int64{12})},
	} {
		if err := CoverError(cover, parts); err == nil {
			t.Errorf("%s: no error", name)
		}
		if _, ok := ExactUnion(parts); ok && name != "rank" {
			t.Errorf("%s: ExactUnion true", name)
		}
	}
}

// TestDisjointLarge compares the k-d check with the pairwise definition on
// many random sets, large enough to exercise the recursive split.
func TestDisjointLarge(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for iter := 0; iter < 200; iter++ {
		dims := 1 + rng.IntN(3)
		n := 1 + rng.IntN(120)
		var bs []catalog.Box
		if iter%2 == 0 {
			// A tiling (disjoint), maybe with one extra box thrown in.
			bs = randomPartition(rng, dims, 24, n)
			if rng.IntN(2) == 0 {
				bs = append(bs, randomBox(rng, dims, 24))
			}
		} else {
			for k := 0; k < n; k++ {
				bs = append(bs, randomBox(rng, dims, 40))
			}
		}
		want := true
		for i := range bs {
			for j := i + 1; j < len(bs); j++ {
				if Overlaps(bs[i], bs[j]) {
					want = false
				}
			}
		}
		i, j, ok := Disjoint(bs)
		if ok != want {
			t.Fatalf("iter %d: Disjoint = %v, want %v", iter, ok, want)
		}
		if !ok && (i >= j || !Overlaps(bs[i], bs[j])) {
			t.Fatalf("iter %d: reported pair %d %d does not overlap", iter, i, j)
		}
	}
}

// TestDisjointOnGrid checks the cell-grid proof of disjointness that
// Disjoint and OverlapPairs try first: on regular decompositions scaled to a
// grain and moved to any origin (negative too), shuffled, it must apply and
// say disjoint; whenever it says disjoint the pairwise definition must
// agree, also for random tilings and for tilings with a box thrown in that
// overlaps, crosses the grain or has another rank.
func TestDisjointOnGrid(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for iter := 0; iter < 400; iter++ {
		dims := 1 + rng.IntN(4)
		regular := iter%8 < 4
		var bs []catalog.Box
		if regular {
			edge := 1 + rng.Int64N(4)
			per := 12 / edge
			for k := range product(slices.Repeat([]int64{per}, dims)) {
				b := catalog.Box{Lower: make([]int64, dims), Count: slices.Repeat([]int64{edge}, dims)}
				for d := range dims {
					b.Lower[d] = k % per * edge
					k /= per
				}
				bs = append(bs, b)
			}
			rng.Shuffle(len(bs), func(i, j int) { bs[i], bs[j] = bs[j], bs[i] })
		} else {
			bs = randomPartition(rng, dims, 12, 1+rng.IntN(200))
		}
		grain, shift := 1+rng.Int64N(5), rng.Int64N(41)-20
		for _, b := range bs {
			for d := range dims {
				b.Lower[d] = b.Lower[d]*grain + shift
				b.Count[d] *= grain
			}
		}
		extra := iter % 4
		switch extra {
		case 1: // a copy of a tile, shrunk off the grain
			c := catalog.Box{Lower: slices.Clone(bs[0].Lower), Count: slices.Clone(bs[0].Count)}
			c.Count[0] = max(1, c.Count[0]-1)
			bs = append(bs, c)
		case 2: // a random box, overlapping or not
			r := randomBox(rng, dims, 12*grain)
			for d := range dims {
				r.Lower[d] += shift
			}
			bs = append(bs, r)
		case 3: // a box of another rank
			bs = append(bs, randomBox(rng, dims%4+1, 12))
		}
		idx := make([]int, len(bs))
		for k := range idx {
			idx[k] = k
		}
		want := true // the tiles are disjoint: does the extra box meet one?
		if extra != 0 {
			x := bs[len(bs)-1]
			for _, b := range bs[:len(bs)-1] {
				if len(b.Lower) == len(x.Lower) && Overlaps(b, x) {
					want = false
				}
			}
		}
		got := disjointOnGrid(bs, idx)
		if got && !want {
			t.Fatalf("iter %d: disjointOnGrid true for overlapping boxes %v", iter, bs)
		}
		if regular && extra == 0 && !got {
			t.Fatalf("iter %d: a regular tiling on grain %d from %d: disjointOnGrid false", iter, grain, shift)
		}
	}
}

// TestOverlapPairs compares the k-d pair listing with the pairwise
// definition on random sets (tilings with extra boxes, and random boxes).
func TestOverlapPairs(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for iter := 0; iter < 200; iter++ {
		dims := 1 + rng.IntN(3)
		n := 1 + rng.IntN(120)
		var bs []catalog.Box
		if iter%2 == 0 {
			bs = randomPartition(rng, dims, 24, n)
			for range rng.IntN(3) {
				bs = append(bs, randomBox(rng, dims, 24))
			}
		} else {
			for k := 0; k < n; k++ {
				bs = append(bs, randomBox(rng, dims, 40))
			}
		}
		var want [][2]int
		for i := range bs {
			for j := i + 1; j < len(bs); j++ {
				if Overlaps(bs[i], bs[j]) {
					want = append(want, [2]int{i, j})
				}
			}
		}
		if got := OverlapPairs(bs); !slices.Equal(got, want) {
			t.Fatalf("iter %d: OverlapPairs = %v, want %v", iter, got, want)
		}
	}
}

// TestUnionVolume counts the union of random boxes against marking every
// element of the domain.
func TestUnionVolume(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for iter := 0; iter < 300; iter++ {
		dims := 1 + rng.IntN(3)
		var bs []catalog.Box
		for range rng.IntN(12) {
			bs = append(bs, randomBox(rng, dims, 12))
		}
		marked := map[[3]int64]bool{}
		for _, b := range bs {
			var idx [3]int64
			var walk func(d int)
			walk = func(d int) {
				if d == dims {
					marked[idx] = true
					return
				}
				for x := b.Lower[d]; x < b.Lower[d]+b.Count[d]; x++ {
					idx[d] = x
					walk(d + 1)
				}
			}
			walk(0)
		}
		if got := UnionVolume(bs); got != int64(len(marked)) {
			t.Fatalf("iter %d: UnionVolume(%v) = %d, want %d", iter, bs, got, len(marked))
		}
	}
	// Two overlapping blocks adding up to the array, leaving a hole.
	a := &catalog.Array{Shape: []int64{16, 16}, Blocks: []catalog.Block{
		{Box: catalog.Box{Lower: []int64{0, 0}, Count: []int64{10, 16}}},
		{Box: catalog.Box{Lower: []int64{4, 0}, Count: []int64{10, 16}}}}}
	if FullyCovered(a) {
		t.Fatal("overlapping blocks with a hole taken for full coverage")
	}
	a.Blocks[1].Box.Count[0] = 12
	if !FullyCovered(a) {
		t.Fatal("overlapping blocks covering the array not taken for full coverage")
	}
}

func randomBox(rng *rand.Rand, dims int, n int64) catalog.Box {
	b := catalog.Box{Lower: make([]int64, dims), Count: make([]int64, dims)}
	for d := range dims {
		b.Lower[d] = rng.Int64N(n)
		b.Count[d] = 1 + rng.Int64N(n/3)
	}
	return b
}

// randomPartition cuts the box [0, n)^dims into about k boxes of different
// sizes by repeatedly splitting a random box at a random plane (a guillotine
// partition), then re-cuts some neighbours so that the result is not always a
// guillotine arrangement: a random sub-box is carved from a box, leaving up to
// 2·dims pieces around it.
func randomPartition(rng *rand.Rand, dims int, n int64, k int) []catalog.Box {
	root := catalog.Box{Lower: make([]int64, dims), Count: make([]int64, dims)}
	for d := range root.Count {
		root.Count[d] = n
	}
	bs := []catalog.Box{root}
	for tries := 0; len(bs) < k && tries < 10*k; tries++ {
		i := rng.IntN(len(bs))
		b := bs[i]
		d := rng.IntN(dims)
		if b.Count[d] < 2 {
			continue
		}
		if rng.IntN(4) == 0 {
			// Carve: split b into the sub-box s and the slabs around it.
			s := catalog.Box{Lower: make([]int64, dims), Count: make([]int64, dims)}
			for e := range dims {
				lo := b.Lower[e] + rng.Int64N(b.Count[e])
				hi := lo + 1 + rng.Int64N(b.Lower[e]+b.Count[e]-lo)
				s.Lower[e], s.Count[e] = lo, hi-lo
			}
			bs = append(bs[:i], bs[i+1:]...)
			bs = append(bs, carve(b, s)...)
			continue
		}
		cut := 1 + rng.Int64N(b.Count[d]-1)
		l := catalog.Box{Lower: clone(b.Lower), Count: clone(b.Count)}
		r := catalog.Box{Lower: clone(b.Lower), Count: clone(b.Count)}
		l.Count[d] = cut
		r.Lower[d] += cut
		r.Count[d] -= cut
		bs[i] = l
		bs = append(bs, r)
	}
	rng.Shuffle(len(bs), func(i, j int) { bs[i], bs[j] = bs[j], bs[i] })
	return bs
}

// carve returns s and the boxes tiling b minus s (s inside b).
func carve(b, s catalog.Box) []catalog.Box {
	out := []catalog.Box{s}
	rest := catalog.Box{Lower: clone(b.Lower), Count: clone(b.Count)}
	for d := range b.Lower {
		if lo := s.Lower[d] - rest.Lower[d]; lo > 0 {
			p := catalog.Box{Lower: clone(rest.Lower), Count: clone(rest.Count)}
			p.Count[d] = lo
			out = append(out, p)
			rest.Lower[d] += lo
			rest.Count[d] -= lo
		}
		if hi := rest.Lower[d] + rest.Count[d] - (s.Lower[d] + s.Count[d]); hi > 0 {
			p := catalog.Box{Lower: clone(rest.Lower), Count: clone(rest.Count)}
			p.Lower[d] = s.Lower[d] + s.Count[d]
			p.Count[d] = hi
			out = append(out, p)
			rest.Count[d] -= hi
		}
	}
	return out
}

func clone(v []int64) []int64 { return append([]int64(nil), v...) }
