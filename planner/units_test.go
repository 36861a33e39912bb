package planner

import (
	"testing"

	"relayout/catalog"
)

func rows0(units []catalog.Box) [][2]int64 {
	var r [][2]int64
	for _, u := range units {
		r = append(r, [2]int64{u.Lower[0], u.Count[0]})
	}
	return r
}

// blocks0 is a column of blocks of height h along dim 0 over n rows
// (several per row band, as a 3-D decomposition gives).
func blocks0(n, h int64) []catalog.Box {
	var out []catalog.Box
	for lo := int64(0); lo < n; lo += h {
		for j := int64(0); j < 2; j++ {
			out = append(out, catalog.Box{Lower: []int64{lo, j * 4, 0}, Count: []int64{min(h, n-lo), 4, 8}})
		}
	}
	return out
}

func checkCover(t *testing.T, shape []int64, units []catalog.Box) {
	t.Helper()
	next := int64(0)
	for _, u := range units {
		if u.Lower[0] != next || u.Count[0] <= 0 {
			t.Fatalf("units %v do not tile dim 0 in order", rows0(units))
		}
		for d := 1; d < len(shape); d++ {
			if u.Lower[d] != 0 || u.Count[d] != shape[d] {
				t.Fatalf("unit %v does not span dim %d", u, d)
			}
		}
		next += u.Count[0]
	}
	if next != shape[0] {
		t.Fatalf("units %v end at %d, want %d", rows0(units), next, shape[0])
	}
}

func TestAlignedSlabs(t *testing.T) {
	shape := []int64{64, 8, 8} // a row is 512 bytes of float64
	row := int64(512)
	contig := Layout{Kind: Contiguous}
	for _, tc := range []struct {
		name          string
		layout        Layout
		blocks        []catalog.Box
		target, limit int64
		want          [][2]int64
	}{
		// The bench case: blocks 32 rows high, target 16 rows: units grow to
		// one block height when the limit allows, so no block is cut.
		{"grow to block", contig, blocks0(64, 32), 16 * row, 40 * row, [][2]int64{{0, 32}, {32, 32}}},
		// Not allowed to grow: plain steps, each block cut in two halves.
		{"too tall", contig, blocks0(64, 32), 16 * row, 16 * row, [][2]int64{{0, 16}, {16, 16}, {32, 16}, {48, 16}}},
		// Small blocks: as many whole blocks as fit the target.
		{"pack blocks", contig, blocks0(64, 8), 20 * row, 64 * row, [][2]int64{{0, 16}, {16, 16}, {32, 16}, {48, 16}}},
		// Uneven blocks: boundaries 0,10,30,64.
		{"uneven", contig, []catalog.Box{
			{Lower: []int64{0, 0, 0}, Count: []int64{10, 8, 8}},
			{Lower: []int64{10, 0, 0}, Count: []int64{20, 8, 8}},
			{Lower: []int64{30, 0, 0}, Count: []int64{34, 8, 8}},
		}, 16 * row, 30 * row, [][2]int64{{0, 10}, {10, 20}, {30, 16}, {46, 18}}},
		// No blocks: same as Slabs.
		{"no blocks", contig, nil, 24 * row, 64 * row, [][2]int64{{0, 24}, {24, 24}, {48, 16}}},
		// The end of the array may be reached by growing a unit.
		{"last block", contig, blocks0(64, 40), 16 * row, 30 * row, [][2]int64{{0, 16}, {16, 24}, {40, 24}}},
		// Chunked: boundaries only on chunk rows (16); block edges at 8 are ignored.
		{"chunked", Layout{Kind: Chunked, Chunk: []int64{16, 8, 8}}, blocks0(64, 8), 24 * row, 64 * row,
			[][2]int64{{0, 16}, {16, 16}, {32, 16}, {48, 16}}},
		{"chunked grow", Layout{Kind: Chunked, Chunk: []int64{16, 8, 8}}, blocks0(64, 32), 16 * row, 32 * row,
			[][2]int64{{0, 32}, {32, 32}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := AlignedSlabs(shape, tc.layout, 8, tc.blocks, tc.target, tc.limit)
			checkCover(t, shape, u)
			got := rows0(u)
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("got %v, want %v", got, tc.want)
				}
			}
		})
	}
}

func TestAlignedSlabsEdges(t *testing.T) {
	if u := AlignedSlabs(nil, Layout{}, 8, nil, 1, 1); len(u) != 1 || len(u[0].Count) != 0 {
		t.Fatalf("scalar: %v", u)
	}
	if u := AlignedSlabs([]int64{0, 4}, Layout{}, 8, nil, 1, 1); len(u) != 0 {
		t.Fatalf("empty: %v", u)
	}
	// A row over the budget: one row per unit, still aligned where possible.
	shape := []int64{5, 1000}
	u := AlignedSlabs(shape, Layout{}, 8, []catalog.Box{{Lower: []int64{2, 0}, Count: []int64{3, 1000}}}, 100, 100)
	checkCover(t, shape, u)
	if len(u) != 5 {
		t.Fatalf("got %v", rows0(u))
	}
	// Every unit boundary is a block boundary whenever blocks fit the limit.
	shape = []int64{100, 3}
	var blocks []catalog.Box
	for lo, h := int64(0), int64(1); lo < 100; lo, h = lo+h, h%7+1 {
		blocks = append(blocks, catalog.Box{Lower: []int64{lo, 0}, Count: []int64{min(h, 100-lo), 3}})
	}
	edges := map[int64]bool{}
	for _, b := range blocks {
		edges[b.Lower[0]] = true
	}
	for target := int64(24); target < 400; target += 24 {
		u := AlignedSlabs(shape, Layout{}, 8, blocks, target, 7*24)
		checkCover(t, shape, u)
		for _, x := range u {
			if !edges[x.Lower[0]] {
				t.Fatalf("target %d: unit at %d cuts a block: %v", target, x.Lower[0], rows0(u))
			}
		}
	}
}

// TestAlignedTiles: the 4 GiB bench case in miniature. Blocks are 4 rows ×
// 4 columns × the rest; a 4-row band is more than the limit, so bands are
// cut along dimension 1 on block edges into tiles of at most limit bytes,
// every block inside exactly one tile, the tiles covering the array once in
// band order.
func TestAlignedTiles(t *testing.T) {
	shape := []int64{16, 32, 4096} // one index of dim 1 in one row: 32 KiB of float64
	var blocks []catalog.Box
	for i := int64(0); i < 16; i += 4 {
		for j := int64(0); j < 32; j += 4 {
			blocks = append(blocks, catalog.Box{Lower: []int64{i, j, 0}, Count: []int64{4, 4, 4096}})
		}
	}
	col := int64(32 << 10)
	// band of 4 rows = 4 MiB; a block is 512 KiB; target 1 MiB, limit 1.5 MiB: tiles of 2 blocks.
	units := AlignedTiles(shape, 8, blocks, 4*8*col, 4*12*col)
	if len(units) != 16 {
		t.Fatalf("%d units %v, want 16 tiles of 4x8", len(units), units)
	}
	seen := map[[2]int64]bool{}
	var cells int64
	for n, u := range units {
		if u.Count[0] != 4 || u.Count[1] != 8 || u.Lower[2] != 0 || u.Count[2] != 4096 {
			t.Fatalf("unit %d %v: want 4 rows x 8 columns x all", n, u)
		}
		if want := [2]int64{int64(n/4) * 4, int64(n%4) * 8}; u.Lower[0] != want[0] || u.Lower[1] != want[1] {
			t.Fatalf("unit %d at %v, want %v: not in band order", n, u.Lower, want)
		}
		for _, b := range blocks {
			r, ok := b.Intersect(u)
			if ok && r.Elements() != b.Elements() {
				t.Fatalf("unit %v cuts block %v", u, b)
			}
			if ok {
				key := [2]int64{b.Lower[0], b.Lower[1]}
				if seen[key] {
					t.Fatalf("block %v in two units", b)
				}
				seen[key] = true
			}
		}
		cells += u.Elements()
	}
	if cells != 16*32*4096 || len(seen) != len(blocks) {
		t.Fatalf("units cover %d elements and %d blocks, want %d and %d", cells, len(seen), 16*32*4096, len(blocks))
	}
	// A band that fits the limit needs no tiles.
	if u := AlignedTiles(shape, 8, blocks, 4*32*col, 4*32*col); u != nil {
		t.Errorf("bands fit, got tiles %v", u)
	}
	// A block column over the limit, or rows under 64 KiB: no tiles.
	if u := AlignedTiles(shape, 8, blocks, col, 2*col); u != nil {
		t.Errorf("block columns of 16 columns-rows over the limit, got %v", u)
	}
	narrow := []int64{16, 32, 8} // rows of 64 bytes per column index
	var nb []catalog.Box
	for i := int64(0); i < 16; i += 4 {
		for j := int64(0); j < 32; j += 4 {
			nb = append(nb, catalog.Box{Lower: []int64{i, j, 0}, Count: []int64{4, 4, 8}})
		}
	}
	if u := AlignedTiles(narrow, 8, nb, 512, 1024); u != nil {
		t.Errorf("tile rows of 256 bytes accepted: %v", u)
	}
}

// TestAlignedTilesNarrowEdge: blocks of 30 columns over 322, so the last block
// column (22 columns, rows of 22 x 2576 bytes) is too narrow to write on its
// own; it joins the tile before it instead of ruling tiles out.
func TestAlignedTilesNarrowEdge(t *testing.T) {
	shape := []int64{60, 322, 322}
	var blocks []catalog.Box
	for i := int64(0); i < 60; i += 30 {
		for j := int64(0); j < 322; j += 30 {
			blocks = append(blocks, catalog.Box{Lower: []int64{i, j, 0}, Count: []int64{30, min(30, 322-j), 322}})
		}
	}
	units := AlignedTiles(shape, 8, blocks, 4<<20, 16<<20)
	if len(units) != 2*10 {
		t.Fatalf("%d units, want 10 tiles per band: %v", len(units), units)
	}
	last := units[9]
	if last.Lower[1] != 270 || last.Count[1] != 52 {
		t.Errorf("last tile of the band %v, want columns 270+52", last)
	}
	for _, u := range units {
		for _, b := range blocks {
			if r, ok := b.Intersect(u); ok && r.Elements() != b.Elements() {
				t.Fatalf("unit %v cuts block %v", u, b)
			}
		}
	}
}
