package planner

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"reflect"
	"runtime"
	"slices"
	"testing"

	"relayout/catalog"
)

// checkClustering asserts the clustering contract against the geometry
// helpers (an independent check: exact tiling is tested by CoverError, not by
// the clustering's own volume test):
//   - every cuboid is tiled exactly by its pieces (no empty space inside);
//   - every piece lies inside the block it names, and the pieces of a block tile
//     that block exactly (every element lands in exactly one cuboid);
//   - cuboids never overlap;
//   - there are never more cuboids than non-empty blocks.
func checkClustering(t *testing.T, blocks []catalog.Box, cs []Cuboid) {
	t.Helper()
	perBlock := make([][]catalog.Box, len(blocks))
	boxes := make([]catalog.Box, len(cs))
	for i, c := range cs {
		boxes[i] = c.Box
		parts := make([]catalog.Box, len(c.Pieces))
		for k, p := range c.Pieces {
			parts[k] = p.Box
			if !Contains(blocks[p.Block], p.Box) {
				t.Fatalf("cuboid %d: piece %v not inside block %d %v", i, p.Box, p.Block, blocks[p.Block])
			}
			perBlock[p.Block] = append(perBlock[p.Block], p.Box)
		}
		if err := CoverError(c.Box, parts); err != nil {
			t.Fatalf("cuboid %d %v: %v", i, c.Box, err)
		}
	}
	nonEmpty := 0
	for i, b := range blocks {
		if IsEmpty(b) {
			if len(perBlock[i]) != 0 {
				t.Fatalf("empty block %d has pieces", i)
			}
			continue
		}
		nonEmpty++
		if err := CoverError(b, perBlock[i]); err != nil {
			t.Fatalf("block %d %v is not covered by its pieces: %v", i, b, err)
		}
	}
	if i, j, ok := Disjoint(boxes); !ok {
		t.Fatalf("cuboids %d %v and %d %v overlap", i, boxes[i], j, boxes[j])
	}
	if len(cs) > nonEmpty {
		t.Fatalf("%d cuboids for %d blocks", len(cs), nonEmpty)
	}
}

func TestClusterProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(42, 7))
	for iter := 0; iter < 400; iter++ {
		dims := []int{1, 2, 2, 3, 3, 3, 4}[iter%7]
		n := []int64{8, 30, 64, 100}[rng.IntN(4)]
		k := 2 + rng.IntN(150)
		if dims == 4 {
			n, k = 12, 2+rng.IntN(60)
		}
		var all []catalog.Box
		if iter%5 == 4 {
			all = gridBlocks(dims, min(n, 8), 1+rng.Int64N(3))
		} else {
			all = randomPartition(rng, dims, n, k)
		}
		// Drop some blocks (holes) and deal the rest to a few ranks.
		ranks := 1 + rng.IntN(4)
		drop := rng.Float64() * 0.5
		groups := make([][]catalog.Box, ranks)
		for _, b := range all {
			if rng.Float64() < drop {
				continue
			}
			r := rng.IntN(ranks)
			groups[r] = append(groups[r], b)
		}
		for r, g := range groups {
			name := fmt.Sprintf("iter%d/dims%d/rank%d/%dblocks", iter, dims, r, len(g))
			cs := ClusterPieces(g)
			if !t.Run(name, func(t *testing.T) { checkClustering(t, g, cs) }) {
				return
			}
			// Deterministic, and independent of the order of the input blocks.
			again := Cluster(g)
			perm := slices.Clone(g)
			rng.Shuffle(len(perm), func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
			shuffled := Cluster(perm)
			if len(again) != len(cs) || len(shuffled) != len(cs) {
				t.Fatalf("%s: %d cuboids, then %d, shuffled %d", name, len(cs), len(again), len(shuffled))
			}
			for i := range cs {
				if !Equal(cs[i].Box, again[i]) || !Equal(cs[i].Box, shuffled[i]) {
					t.Fatalf("%s: cuboid %d: %v, then %v, shuffled %v", name, i, cs[i].Box, again[i], shuffled[i])
				}
			}
		}
	}
}

// gridBlocks is a regular grid of n^dims cells cut into blocks of side s.
func gridBlocks(dims int, n, s int64) []catalog.Box {
	per := (n + s - 1) / s
	total := int64(1)
	for range dims {
		total *= per
	}
	var out []catalog.Box
	for i := int64(0); i < total; i++ {
		b := catalog.Box{Lower: make([]int64, dims), Count: make([]int64, dims)}
		r := i
		for d := dims - 1; d >= 0; d-- {
			b.Lower[d] = (r % per) * s
			b.Count[d] = min(s, n-b.Lower[d])
			r /= per
		}
		out = append(out, b)
	}
	return out
}

func TestClusterSmall(t *testing.T) {
	for _, tc := range []struct {
		name   string
		blocks []catalog.Box
		want   []catalog.Box // in FIFO order
	}{
		{name: "none", blocks: nil, want: nil},
		{name: "only empty", blocks: []catalog.Box{b2(0, 0, 0, 3)}, want: nil},
		{name: "one", blocks: []catalog.Box{b2(1, 2, 3, 4)}, want: []catalog.Box{b2(1, 2, 3, 4)}},
		{
			name:   "row of three, any order",
			blocks: []catalog.Box{b2(4, 0, 2, 2), b2(0, 0, 2, 2), b2(2, 0, 2, 2)},
			want:   []catalog.Box{b2(0, 0, 6, 2)},
		},
		{
			// A hole between two blocks: split at the empty slice.
			name:   "hole",
			blocks: []catalog.Box{b2(0, 0, 2, 2), b2(5, 0, 2, 2)},
			want:   []catalog.Box{b2(0, 0, 2, 2), b2(5, 0, 2, 2)},
		},
		{
			// An L: two slices per axis, no interior slice for the Laplacian; the
			// fallback takes the steepest step: y (1 → 1/3) beats x (1 → 1/2).
			name:   "L",
			blocks: []catalog.Box{b2(0, 0, 3, 1), b2(0, 1, 1, 1)},
			want:   []catalog.Box{b2(0, 0, 3, 1), b2(0, 1, 1, 1)},
		},
		{
			// Flat histograms with interior boundaries: the longest axis (y) at the
			// boundary nearest its middle.
			name:   "flat",
			blocks: []catalog.Box{b2(0, 0, 1, 1), b2(1, 1, 1, 1), b2(0, 2, 1, 1), b2(1, 3, 1, 1)},
			want:   []catalog.Box{b2(0, 0, 1, 1), b2(1, 1, 1, 1), b2(0, 2, 1, 1), b2(1, 3, 1, 1)},
		},
		{
			name:   "scalar",
			blocks: []catalog.Box{box([]int64{}, []int64{})},
			want:   []catalog.Box{box([]int64{}, []int64{})},
		},
		{
			name:   "1-D runs",
			blocks: []catalog.Box{box([]int64{3}, []int64{2}), box([]int64{0}, []int64{3}), box([]int64{9}, []int64{1})},
			want:   []catalog.Box{box([]int64{0}, []int64{5}), box([]int64{9}, []int64{1})},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Cluster(tc.blocks)
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for i := range got {
				if !Equal(got[i], tc.want[i]) {
					t.Fatalf("got %v, want %v", got, tc.want)
				}
			}
		})
	}
}

func TestClusterRankMismatchPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	Cluster([]catalog.Box{b2(0, 0, 1, 1), box([]int64{0}, []int64{1})})
}

func TestMerge(t *testing.T) {
	// A 4x4 grid of 2x2 blocks; ranks 0..3 own the rows (rank = row), except
	// that rank 3's last block went to rank 0 (load balancing) and one block
	// has an unknown writer.
	var blocks []catalog.Block
	for row := int64(0); row < 4; row++ {
		for col := int64(0); col < 4; col++ {
			blocks = append(blocks, catalog.Block{Box: b2(2*row, 2*col, 2, 2), Rank: int32(row)})
		}
	}
	blocks[15].Rank = 0
	blocks[5].Rank = -1
	blocks = append(blocks, catalog.Block{Box: b2(0, 0, 0, 0), Rank: 7}) // empty: ignored

	count := func(gs []Group) map[int]int {
		m := map[int]int{}
		for _, g := range gs {
			m[g.Key] = len(g.Cuboids)
			var blocksOf []catalog.Box
			for _, i := range g.Blocks {
				blocksOf = append(blocksOf, blocks[i].Box)
			}
			// Remap pieces to group-local indices for the contract check.
			local := map[int]int{}
			for k, i := range g.Blocks {
				local[i] = k
			}
			cs := make([]Cuboid, len(g.Cuboids))
			for ci, c := range g.Cuboids {
				cs[ci] = Cuboid{Box: c.Box}
				for _, p := range c.Pieces {
					cs[ci].Pieces = append(cs[ci].Pieces, Piece{Block: local[p.Block], Box: p.Box})
				}
			}
			checkClustering(t, blocksOf, cs)
		}
		return m
	}
	gs, err := Merge(blocks, ScopeRank, 0)
	if err != nil {
		t.Fatal(err)
	}
	// rank 0: row 0 (one cuboid) + block (6,6) → 2; rank 1: row 1 minus (2,2) → 2
	// cuboids; rank 2: 1; rank 3: three blocks in a row → 1; unknown: 1.
	if got, want := count(gs), map[int]int{-1: 1, 0: 2, 1: 2, 2: 1, 3: 1}; !mapsEqual(got, want) {
		t.Fatalf("per rank: %v, want %v", got, want)
	}
	if gs[0].Key != -1 || gs[1].Key != 0 {
		t.Fatalf("groups not in key order: %d %d", gs[0].Key, gs[1].Key)
	}
	// The same blocks listed rank by rank (groups found in one pass, not
	// by the sort): the same counts, each group's blocks in index order.
	byRank := slices.Clone(blocks)
	slices.SortStableFunc(byRank, func(x, y catalog.Block) int { return cmp.Compare(x.Rank, y.Rank) })
	sorted, err := Merge(byRank, ScopeRank, 0)
	if err != nil {
		t.Fatal(err)
	}
	perRank := map[int]int{}
	for _, g := range sorted {
		perRank[g.Key] = len(g.Cuboids)
		if !slices.IsSorted(g.Blocks) || byRank[g.Blocks[0]].Rank != int32(g.Key) {
			t.Fatalf("rank-ordered input: group %d holds blocks %v", g.Key, g.Blocks)
		}
	}
	if want := (map[int]int{-1: 1, 0: 2, 1: 2, 2: 1, 3: 1}); !mapsEqual(perRank, want) {
		t.Fatalf("rank-ordered input, per rank: %v, want %v", perRank, want)
	}
	gs, err = Merge(blocks, ScopeNode, 2)
	if err != nil {
		t.Fatal(err)
	}
	// node 0 = rows 0-1 without (2,2) (3 cuboids at best), plus (6,6); node 1 =
	// rows 2-3 without (6,6).
	if got, want := count(gs), map[int]int{-1: 1, 0: 4, 1: 2}; !mapsEqual(got, want) {
		t.Fatalf("per node: %v, want %v", got, want)
	}
	gs, err = Merge(blocks, ScopeGlobal, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(gs) != 1 || len(gs[0].Cuboids) != 1 || len(gs[0].Blocks) != 16 || !Equal(gs[0].Cuboids[0].Box, b2(0, 0, 8, 8)) {
		t.Fatalf("global: %+v", gs)
	}
	if _, err := Merge(blocks, ScopeNode, 0); err == nil {
		t.Fatal("ranks per node 0 accepted")
	}
	if _, err := ParseScope("planet"); err == nil {
		t.Fatal("bad scope parsed")
	}
	if s, err := ParseScope("node"); err != nil || s != ScopeNode {
		t.Fatal(s, err)
	}
}

func mapsEqual(a, b map[int]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// The groups of a merge clustered by several workers come out as the serial
// merge's, whatever the schedule (run with -race).
func TestMergeParallelMatchesSerial(t *testing.T) {
	const n, side, ranks = 32, 4, 6
	var blocks []catalog.Block
	rng := rand.New(rand.NewPCG(3, 19))
	for x := int64(0); x < n; x++ {
		for y := int64(0); y < n; y++ {
			for z := int64(0); z < n; z++ {
				blocks = append(blocks, catalog.Block{Rank: int32(rng.IntN(ranks) - 1),
					Box: catalog.Box{Lower: []int64{x * side, y * side, z * side}, Count: []int64{side, side, side}}})
			}
		}
	}
	for _, sc := range []Scope{ScopeRank, ScopeNode} {
		prev := runtime.GOMAXPROCS(1)
		serial, err := Merge(blocks, sc, 2)
		runtime.GOMAXPROCS(4)
		parallel, err2 := Merge(blocks, sc, 2)
		runtime.GOMAXPROCS(prev)
		if err != nil || err2 != nil {
			t.Fatal(err, err2)
		}
		if !reflect.DeepEqual(serial, parallel) {
			t.Fatalf("%v: parallel merge differs from the serial one", sc)
		}
	}
	// And the whole plan, whose cost predictions run on workers too.
	a := &catalog.Array{Var: "v", DType: catalog.DType{Kind: catalog.Float, Size: 8}, Shape: []int64{n * side, n * side, n * side},
		Offset: []int64{0, 0, 0}, Blocks: blocks}
	plan := func(procs int) ArrayPlan {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		p, err := NewPlanner(PlanOptions{Layout: AutoLayout, Readers: 8, Scope: ScopeRank, WithCuboids: true})
		if err != nil {
			t.Fatal(err)
		}
		ap, err := p.PlanArray(a)
		if err != nil {
			t.Fatal(err)
		}
		return ap
	}
	if s, p := plan(1), plan(4); !reflect.DeepEqual(s, p) {
		t.Fatalf("parallel plan differs from the serial one")
	}
}

// rankCoords marks the boundaries in a table when they span few values and
// sorts them otherwise: both give the sorted distinct boundaries of the
// non-empty boxes, and toPiece the same ranks through the table as by
// searching them.
func TestRankCoordsTableMatchesSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 3))
	for iter := 0; iter < 200; iter++ {
		dims := 1 + iter%MaxDims
		boxes := randomPartition(rng, dims, []int64{8, 30, 64}[iter%3], 2+rng.IntN(100))
		if iter%4 == 1 {
			boxes = append(boxes, catalog.Box{Lower: make([]int64, dims), Count: make([]int64, dims)}) // empty: no boundaries
		}
		shift := []int64{0, -5, 1 << 40, -1 << 50}[iter%4] // far from 0: a table over the span all the same
		for i := range boxes {
			b := catalog.Box{Lower: slices.Clone(boxes[i].Lower), Count: boxes[i].Count}
			for d := range b.Lower {
				b.Lower[d] += shift
			}
			boxes[i] = b
		}
		if iter%2 == 1 { // spread one axis far apart: sorted, not tabled
			far := catalog.Box{Lower: slices.Repeat([]int64{shift}, dims), Count: slices.Repeat([]int64{1}, dims)}
			far.Lower[0] += 1 << 45
			boxes = append(boxes, far)
		}
		var c clusterer
		c.dims = dims
		c.rankCoords(boxes)
		for d := 0; d < dims; d++ {
			var want []int64
			for _, b := range boxes {
				if !IsEmpty(b) {
					want = append(want, b.Lower[d], b.Lower[d]+b.Count[d])
				}
			}
			slices.Sort(want)
			want = slices.Compact(want)
			if !slices.Equal(c.axis[d], want) {
				t.Fatalf("iter %d axis %d: %v, want %v", iter, d, c.axis[d], want)
			}
			if tabled := c.rankAt[d] != nil; tabled != (iter%2 == 0 || d > 0) {
				t.Fatalf("iter %d axis %d: tabled %v", iter, d, tabled)
			}
		}
		searched := c
		searched.rankAt = [MaxDims][]int32{}
		for i, b := range boxes {
			if IsEmpty(b) {
				continue
			}
			if p, q := c.toPiece(b, int32(i)), searched.toPiece(b, int32(i)); p != q {
				t.Fatalf("iter %d box %v: %+v through the table, %+v searched", iter, b, p, q)
			}
		}
	}
}
