package planner

import (
	"math/rand/v2"
	"slices"
	"testing"

	"relayout/catalog"
)

// TestSparseUnits: on random small shapes, chunks and boxes (some leaving
// the array), the units SparseUnits cuts cover exactly the chunks a naive
// walk of the whole chunk grid finds touched, each once, in row-major order
// of the grid; every unit is whole chunks (but at the array's end) inside
// the array, within the budget unless a single chunk.
func TestSparseUnits(t *testing.T) {
	rng := rand.New(rand.NewPCG(40, 1))
	for iter := range 2000 {
		rank := 1 + rng.IntN(3)
		shape, chunk := make([]int64, rank), make([]int64, rank)
		for d := range rank {
			shape[d] = 1 + rng.Int64N(20)
			chunk[d] = 1 + rng.Int64N(shape[d])
		}
		var boxes []catalog.Box
		for range rng.IntN(5) {
			b := catalog.Box{Lower: make([]int64, rank), Count: make([]int64, rank)}
			for d := range rank {
				b.Lower[d] = rng.Int64N(shape[d]+2) - 1
				b.Count[d] = rng.Int64N(shape[d] + 1)
			}
			boxes = append(boxes, b)
		}
		size := 1 + rng.IntN(8)
		budget := rng.Int64N(4*product(chunk)*int64(size) + 1)
		units := SparseUnits(shape, chunk, size, boxes, budget)

		grid := make([]int64, rank)
		for d := range rank {
			grid[d] = (shape[d] + chunk[d] - 1) / chunk[d]
		}
		var want []int64 // naive: every chunk of the grid, tested against every box
		all := catalog.Box{Lower: make([]int64, rank), Count: make([]int64, rank)}
		for d := range rank {
			all.Count[d] = grid[d]
		}
		last := make([]int64, rank)
		for d := range rank {
			last[d] = grid[d] - 1
		}
		eachCell(all.Lower, last, grid, func(k int64) {
			c := catalog.Box{Lower: make([]int64, rank), Count: make([]int64, rank)}
			r := k
			for d := rank - 1; d >= 0; d-- {
				c.Lower[d] = r % grid[d] * chunk[d]
				c.Count[d] = min(chunk[d], shape[d]-c.Lower[d])
				r /= grid[d]
			}
			for _, b := range boxes {
				if IsEmpty(b) {
					continue
				}
				if _, ok := Intersect(c, b); ok {
					want = append(want, k)
					return
				}
			}
		})
		var got []int64
		for _, u := range units {
			n := u.Elements() * int64(size)
			cells := int64(1)
			lo, hi := make([]int64, rank), make([]int64, rank)
			for d := range rank {
				if u.Lower[d]%chunk[d] != 0 || u.Lower[d] < 0 || u.Lower[d]+u.Count[d] > shape[d] || u.Count[d] <= 0 ||
					(u.Count[d]%chunk[d] != 0 && u.Lower[d]+u.Count[d] != shape[d]) {
					t.Fatalf("iter %d: unit %v of %v in chunks %v: not whole chunks inside the array", iter, u, shape, chunk)
				}
				lo[d], hi[d] = u.Lower[d]/chunk[d], (u.Lower[d]+u.Count[d]-1)/chunk[d]
				cells *= hi[d] - lo[d] + 1
			}
			if cells > 1 && n > budget {
				t.Fatalf("iter %d: unit %v is %d bytes, budget %d", iter, u, n, budget)
			}
			eachCell(lo, hi, grid, func(k int64) { got = append(got, k) })
		}
		if !slices.IsSorted(got) || !slices.Equal(got, want) {
			t.Fatalf("iter %d: shape %v chunk %v boxes %v: units %v hold chunks %v, want %v", iter, shape, chunk, boxes, units, got, want)
		}
	}
}

// TestSparseUnitsHuge: units of a 2^40-element array with one touched
// chunk: one unit, found without walking the grid.
func TestSparseUnitsHuge(t *testing.T) {
	shape, chunk := []int64{1 << 40}, []int64{1024}
	boxes := []catalog.Box{{Lower: []int64{0}, Count: []int64{1024}}, {Lower: []int64{1<<40 - 3}, Count: []int64{3}}}
	u := SparseUnits(shape, chunk, 8, boxes, 16<<20)
	want := []catalog.Box{{Lower: []int64{0}, Count: []int64{1024}}, {Lower: []int64{1<<40 - 1024}, Count: []int64{1024}}}
	if len(u) != 2 || !slices.Equal(u[0].Lower, want[0].Lower) || !slices.Equal(u[0].Count, want[0].Count) ||
		!slices.Equal(u[1].Lower, want[1].Lower) || !slices.Equal(u[1].Count, want[1].Count) {
		t.Fatalf("units %v, want %v", u, want)
	}
}

// TestHoleLayoutSparse: the threshold: a 2^40 array with one written chunk
// is sparse, asked contiguous or chunked; an ordinary partly covered array
// (a quarter covered) is not.
func TestHoleLayoutSparse(t *testing.T) {
	f8 := catalog.DType{Kind: catalog.Float, Size: 8}
	huge := &catalog.Array{Var: "B", Shape: []int64{1 << 40}, DType: f8,
		Blocks: []catalog.Block{{Box: catalog.Box{Lower: []int64{0}, Count: []int64{1024}}}}}
	l := HoleLayout(huge, Layout{Kind: Contiguous})
	if l.Kind != Chunked || !l.Sparse || !slices.Equal(l.Chunk, []int64{1024}) {
		t.Errorf("2^40 with one chunk: %+v, want sparse, chunked 1024", l)
	}
	if l := HoleLayout(huge, Layout{Kind: Chunked, Chunk: []int64{4096}}); !l.Sparse || !slices.Equal(l.Chunk, []int64{4096}) {
		t.Errorf("2^40 with one chunk, asked chunked 4096: %+v, want sparse, its chunks kept", l)
	}
	small := &catalog.Array{Var: "E", Shape: []int64{64, 64, 64}, DType: f8,
		Blocks: []catalog.Block{{Box: catalog.Box{Lower: []int64{0, 0, 0}, Count: []int64{16, 64, 64}}}}}
	if l := HoleLayout(small, Layout{Kind: Contiguous}); l.Kind != Chunked || l.Sparse {
		t.Errorf("a quarter covered: %+v, want chunked, not sparse", l)
	}
	if l := HoleLayout(small, Layout{Kind: Chunked, Chunk: []int64{8, 8, 8}}); l.Sparse || l.Note != "" {
		t.Errorf("a quarter covered, asked chunked: %+v, want it as asked", l)
	}
}
