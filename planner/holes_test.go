package planner

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"relayout/catalog"
)

func TestHoleLayout(t *testing.T) {
	f64 := catalog.DType{Kind: catalog.Float, Size: 8}
	// blocks of edge b at the given block indices of an n^3 array.
	cube := func(n, b int64, at ...[3]int64) *catalog.Array {
		a := &catalog.Array{Shape: []int64{n, n, n}, DType: f64}
		for _, p := range at {
			a.Blocks = append(a.Blocks, catalog.Block{Box: catalog.Box{
				Lower: []int64{p[0] * b, p[1] * b, p[2] * b}, Count: []int64{b, b, b}}})
		}
		return a
	}
	all := func(nb int64) [][3]int64 {
		var at [][3]int64
		for i := range nb {
			for j := range nb {
				for k := range nb {
					at = append(at, [3]int64{i, j, k})
				}
			}
		}
		return at
	}
	contig := Layout{Kind: Contiguous}

	// Fully covered: the layout asked.
	if l := HoleLayout(cube(32, 8, all(4)...), contig); l.Kind != Contiguous || l.Note != "" {
		t.Errorf("fully covered: %+v, want contiguous without a note", l)
	}
	// Other layouts are left alone (chunked and merged store no holes).
	sparse := cube(32, 8, [3]int64{0, 0, 0}, [3]int64{3, 3, 3})
	for _, l := range []Layout{{Kind: Chunked, Chunk: []int64{4, 4, 4}}, {Kind: Merged}} {
		if got := HoleLayout(sparse, l); got.Kind != l.Kind || got.Note != "" {
			t.Errorf("%s asked: got %+v", l.Kind, got)
		}
	}
	// Scattered 8^3 blocks: chunks of the blocks (16^3 would store 8x).
	l := HoleLayout(sparse, contig)
	if l.Kind != Chunked || !slices.Equal(l.Chunk, []int64{8, 8, 8}) || !strings.Contains(l.Note, "partly covered") ||
		!strings.Contains(l.Note, "2 blocks cover 3.1% of 32x32x32") {
		t.Errorf("scattered blocks: %+v", l)
	}
	// Tiny blocks filling whole slabs: the chunks grow while they store no
	// more than the blocks (1/16 waste at most): the bottom half of a 64^3
	// array in 4^3 blocks, chunks up to 1 MiB (64x32x64 f8).
	var half [][3]int64
	for _, p := range all(16) {
		if p[0] < 8 {
			half = append(half, p)
		}
	}
	l = HoleLayout(cube(64, 4, half...), contig)
	if l.Kind != Chunked || product(l.Chunk)*8 > LevelChunkBytes || product(l.Chunk) < 16*16*16 {
		t.Errorf("half covered in 4^3 blocks: %+v, want chunks of more than 16^3 and at most 1 MiB", l)
	}
	if n := touchedChunkCount([]int64{64, 64, 64}, l.Chunk, boxesOf(cube(64, 4, half...))) * product(l.Chunk); n > 32*64*64*17/16 {
		t.Errorf("half covered: chunks %v store %d elements for 131072 covered", l.Chunk, n)
	}
	// No block at all: chunked, nothing stored.
	if l := HoleLayout(cube(32, 8), contig); l.Kind != Chunked || !strings.Contains(l.Note, "0 blocks cover 0.0%") {
		t.Errorf("no blocks: %+v", l)
	}
	// Scalars, empty arrays and constant records stay as asked.
	for _, a := range []*catalog.Array{
		{Shape: []int64{}, DType: f64},
		{Shape: []int64{0, 4}, DType: f64},
		{Shape: []int64{4, 4}, DType: f64, Constant: true},
	} {
		if got := HoleLayout(a, contig); got.Kind != Contiguous {
			t.Errorf("%v (constant %v): %+v", a.Shape, a.Constant, got)
		}
	}
	// Overlapping blocks count their union once (a halo): 2 blocks of
	// 8x32x32 overlapping by 4 rows cover 12 of 32 rows.
	ov := &catalog.Array{Shape: []int64{32, 32, 32}, DType: f64, Blocks: []catalog.Block{
		{Box: catalog.Box{Lower: []int64{0, 0, 0}, Count: []int64{8, 32, 32}}},
		{Box: catalog.Box{Lower: []int64{4, 0, 0}, Count: []int64{8, 32, 32}}}}}
	if l := HoleLayout(ov, contig); l.Kind != Chunked || !strings.Contains(l.Note, "cover 37.5%") {
		t.Errorf("overlapping blocks: %+v", l)
	}
}

func TestChooseForHoles(t *testing.T) {
	f64 := catalog.DType{Kind: catalog.Float, Size: 8}
	a := &catalog.Array{Var: "fine/Ez", Shape: []int64{16, 16}, DType: f64, Blocks: []catalog.Block{
		{Box: catalog.Box{Lower: []int64{0, 0}, Count: []int64{8, 8}}}}}
	l, why, _, err := chooseFor(a, PlanOptions{Layout: Contiguous}, FullyCovered(a))
	if err != nil || l.Kind != Chunked || !strings.Contains(why, "partly covered") {
		t.Errorf("plan of a partly covered array: %+v %q %v", l, why, err)
	}
	l, _, _, err = chooseFor(a, PlanOptions{Layout: Contiguous, Fill: true}, FullyCovered(a))
	if err != nil || l.Kind != Contiguous {
		t.Errorf("--fill: %+v %v", l, err)
	}
}

func boxesOf(a *catalog.Array) []catalog.Box {
	var bs []catalog.Box
	for _, b := range a.Blocks {
		bs = append(bs, b.Box)
	}
	return bs
}

// coveredCells counts what UnionVolume counts, on random boxes with and
// without overlaps, aligned and not.
func TestCoveredCells(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	shape := []int64{24, 18, 12}
	for trial := range 300 {
		unit := []int64{1, 2, 3, 6}[trial%4]
		var boxes []catalog.Box
		for range 1 + rng.IntN(12) {
			b := catalog.Box{Lower: make([]int64, 3), Count: make([]int64, 3)}
			for d := range 3 {
				cells := shape[d] / unit
				lo := rng.Int64N(cells)
				b.Lower[d], b.Count[d] = lo*unit, (1+rng.Int64N(cells-lo))*unit
			}
			boxes = append(boxes, b)
		}
		got, ok := coveredCells(shape, boxes)
		if want := UnionVolume(boxes); !ok || got != want {
			t.Fatalf("trial %d: coveredCells %d (ok %v), UnionVolume %d, boxes %v", trial, got, ok, want, boxes)
		}
		a := &catalog.Array{Shape: shape, DType: catalog.DType{Kind: catalog.Float, Size: 8}}
		for _, b := range boxes {
			a.Blocks = append(a.Blocks, catalog.Block{Box: b})
		}
		if full := FullyCovered(a); full != (got == 24*18*12) {
			t.Fatalf("trial %d: FullyCovered %v with %d of %d covered", trial, full, got, 24*18*12)
		}
	}
	// A box outside the array: the caller's fallback.
	if _, ok := coveredCells([]int64{4}, []catalog.Box{{Lower: []int64{2}, Count: []int64{4}}}); ok {
		t.Error("a box outside the array counted")
	}
}

// touchedChunkCount (a bitmap over the chunk grid, a set beyond
// maxCoverCells chunks) counts what TouchedChunks lists, on random boxes,
// some reaching past the array.
func TestTouchedChunkCount(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for trial := range 200 {
		shape := []int64{1 + rng.Int64N(40), 1 + rng.Int64N(40), 1 + rng.Int64N(40)}
		chunk := []int64{1 + rng.Int64N(8), 1 + rng.Int64N(8), 1 + rng.Int64N(8)}
		if trial%10 == 0 { // a grid of more than maxCoverCells chunks
			shape[0] = 1 << 40
			chunk[0] = 1
		}
		var boxes []catalog.Box
		for range 1 + rng.IntN(20) {
			b := catalog.Box{Lower: make([]int64, 3), Count: make([]int64, 3)}
			for d := range 3 {
				b.Lower[d] = rng.Int64N(min(shape[d], 64))
				b.Count[d] = 1 + rng.Int64N(12)
			}
			boxes = append(boxes, b)
		}
		if got, want := touchedChunkCount(shape, chunk, boxes), int64(len(TouchedChunks(shape, chunk, boxes))); got != want {
			t.Fatalf("trial %d: shape %v chunk %v: counted %d, TouchedChunks %d", trial, shape, chunk, got, want)
		}
		if trial%10 == 0 {
			continue
		}
		// By brute force: every chunk of the grid against every box.
		var want int64
		for x := int64(0); x < shape[0]; x += chunk[0] {
			for y := int64(0); y < shape[1]; y += chunk[1] {
				for z := int64(0); z < shape[2]; z += chunk[2] {
					c := catalog.Box{Lower: []int64{x, y, z}, Count: []int64{min(chunk[0], shape[0]-x), min(chunk[1], shape[1]-y), min(chunk[2], shape[2]-z)}}
					if slices.ContainsFunc(boxes, func(b catalog.Box) bool { _, ok := Intersect(b, c); return ok }) {
						want++
					}
				}
			}
		}
		if got := touchedChunkCount(shape, chunk, boxes); got != want {
			t.Fatalf("trial %d: shape %v chunk %v: counted %d, by brute force %d", trial, shape, chunk, got, want)
		}
	}
}

// BlocksDisjoint agrees with a test of every pair of blocks on random block
// sets inside the array, some overlapping; a block leaving the array is
// left to OverlapPairs (ok false).
func TestBlocksDisjoint(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 5))
	f8 := catalog.DType{Kind: catalog.Float, Size: 8}
	nDisjoint, nOverlap := 0, 0
	for trial := range 300 {
		shape := []int64{1 + rng.Int64N(24), 1 + rng.Int64N(24), 1 + rng.Int64N(24)}
		a := &catalog.Array{DType: f8, Shape: shape}
		for range 1 + rng.IntN(12) {
			var b catalog.Box
			for d := range 3 {
				lo := rng.Int64N(shape[d])
				b.Lower = append(b.Lower, lo)
				b.Count = append(b.Count, 1+rng.Int64N(shape[d]-lo))
			}
			a.Blocks = append(a.Blocks, catalog.Block{Box: b})
		}
		disjoint, ok := BlocksDisjoint(a)
		if !ok {
			continue // the grid gave up (heavy overlap): OverlapPairs decides
		}
		if disjoint {
			nDisjoint++
		} else {
			nOverlap++
		}
		want := true // no two blocks intersect
		for i := range a.Blocks {
			for j := range i {
				if _, ok := Intersect(a.Blocks[i].Box, a.Blocks[j].Box); ok {
					want = false
				}
			}
		}
		if disjoint != want {
			t.Fatalf("trial %d: BlocksDisjoint %v, pairwise %v (%v)", trial, disjoint, want, boxesOf(a))
		}
	}
	if nDisjoint < 20 || nOverlap < 20 {
		t.Errorf("answered %d disjoint and %d overlapping sets: want both kinds", nDisjoint, nOverlap)
	}
	t.Logf("%d disjoint, %d overlapping", nDisjoint, nOverlap)
	tiled := &catalog.Array{DType: f8, Shape: []int64{8, 8}}
	for i := range int64(4) {
		tiled.Blocks = append(tiled.Blocks, catalog.Block{Box: catalog.Box{Lower: []int64{2 * i, 0}, Count: []int64{2, 8}}})
	}
	if d, ok := BlocksDisjoint(tiled); !d || !ok {
		t.Errorf("a tiling: disjoint %v ok %v", d, ok)
	}
	tiled.Blocks[3].Box.Count[0] = 3 // leaves the array
	if _, ok := BlocksDisjoint(tiled); ok {
		t.Error("a block past the array's end: answered, want ok false")
	}
}
