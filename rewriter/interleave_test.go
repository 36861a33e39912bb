package rewriter

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"relayout/catalog"
	"relayout/planner"
)

// tinyBlocks is a 64x16x16 float64 array in 4x4x4 blocks of 512 bytes,
// stored in the order perm gives (perm[i] is the file slot of block i).
func tinyBlocks(perm []int) *catalog.Array {
	a := &catalog.Array{Var: "v", DType: catalog.DType{Kind: catalog.Float, Size: 8}, Shape: []int64{64, 16, 16}}
	i := 0
	for x := int64(0); x < 64; x += 4 {
		for y := int64(0); y < 16; y += 4 {
			for z := int64(0); z < 16; z += 4 {
				a.Blocks = append(a.Blocks, catalog.Block{
					Box:  catalog.Box{Lower: []int64{x, y, z}, Count: []int64{4, 4, 4}},
					File: "f.h5", Offset: 4096 + int64(perm[i])*512, Length: 512,
				})
				i++
			}
		}
	}
	return a
}

func identity(n int) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	return p
}

// TestMergeInterleaved: units whose blocks are scattered over the same file
// extent are joined (each byte is then read once), up to the limit; units of
// blocks stored in order are left alone.
func TestMergeInterleaved(t *testing.T) {
	const n = 16 * 4 * 4
	units := planner.Slabs([]int64{64, 16, 16}, planner.Layout{Kind: planner.Contiguous}, 8, 16<<10) // 8 rows each
	if len(units) != 8 {
		t.Fatalf("%d units", len(units))
	}
	logical := int64(64 * 16 * 16 * 8)
	cost := func(a *catalog.Array, us []catalog.Box) int64 {
		var c int64
		for _, u := range us {
			c += readCost(indexBlocks(a).reads(u), 1<<20)
		}
		return c
	}

	ordered := tinyBlocks(identity(n))
	if got := mergeInterleaved(ordered, units, 1<<30, 1<<20); len(got) != len(units) {
		t.Errorf("blocks in order: %d units, want %d unchanged", len(got), len(units))
	}

	scattered := tinyBlocks(rand.New(rand.NewPCG(1, 2)).Perm(n))
	if c := cost(scattered, units); c < 4*logical {
		t.Fatalf("scattered blocks read %d bytes in %d units: the test needs interleaved units", c, len(units))
	}
	got := mergeInterleaved(scattered, units, 1<<30, 1<<20)
	if len(got) != 1 || got[0].Count[0] != 64 {
		t.Fatalf("scattered, no limit: units %v, want one", got)
	}
	if c := cost(scattered, got); c != logical {
		t.Errorf("merged unit reads %d bytes, want %d", c, logical)
	}
	// The limit holds: units of at most 32 rows, tiling the array in order.
	got = mergeInterleaved(scattered, units, 32*16*16*8, 1<<20)
	next := int64(0)
	for _, u := range got {
		if u.Lower[0] != next || u.Count[0] > 32 || u.Count[1] != 16 || u.Count[2] != 16 {
			t.Fatalf("limited: units %v", got)
		}
		next += u.Count[0]
	}
	if next != 64 || len(got) != 2 {
		t.Fatalf("limited: units %v, want two of 32 rows", got)
	}
}

// TestReadCost follows blockio's coalescing: runs through gaps of at most
// catalog.CoalesceGap, at most limit bytes, inline blocks free.
func TestReadCost(t *testing.T) {
	b := func(file string, off, n int64) *catalog.Block {
		return &catalog.Block{File: file, Offset: off, Length: n}
	}
	for _, tc := range []struct {
		reads []*catalog.Block
		limit int64
		want  int64
	}{
		{nil, 1 << 20, 0},
		{[]*catalog.Block{b("a", 0, 10), b("a", 20, 10)}, 1 << 20, 30},
		{[]*catalog.Block{b("a", 0, 10), b("a", 10+catalog.CoalesceGap+1, 10)}, 1 << 20, 20},
		{[]*catalog.Block{b("a", 0, 10), b("b", 20, 10)}, 1 << 20, 20},
		{[]*catalog.Block{b("a", 0, 10), b("a", 20, 10)}, 25, 20},
		{[]*catalog.Block{b("a", 0, 10), {Inline: []byte{1}}, b("a", 20, 10)}, 1 << 20, 20},
	} {
		if got := readCost(tc.reads, tc.limit); got != tc.want {
			t.Errorf("readCost(%d reads, limit %d) = %d, want %d", len(tc.reads), tc.limit, got, tc.want)
		}
	}
}

// TestJointItems: two arrays of the same shape whose blocks alternate in
// one file (a float64 and a float32 variable written block by block, as
// ADIOS2's aggregators store them) are cut into items that hold both
// arrays' units of a region: each part's units keep their order, every
// unit is in exactly one item, each item's buffers fit the limit, and the
// items (each read as the union of its units' blocks) read the file once
// where the arrays written one after the other read it twice.
func TestJointItems(t *testing.T) {
	const n = 16 * 4 * 4
	// Blocks in order: small items read the file once. Scattered: only
	// an item of every unit does (smaller ones still read less).
	t.Run("ordered", func(t *testing.T) { testJointItems(t, identity(n)) })
	t.Run("scattered", func(t *testing.T) { testJointItems(t, rand.New(rand.NewPCG(3, 4)).Perm(n)) })
}

func testJointItems(t *testing.T, perm []int) {
	n := len(perm)
	f8 := tinyBlocks(perm)
	f4 := tinyBlocks(perm)
	f4.Var, f4.DType = "w", catalog.DType{Kind: catalog.Float, Size: 4}
	for i := range f8.Blocks { // slot s: the f8 block, then the f4 one
		s := f8.Blocks[i].Offset - 4096
		f8.Blocks[i].Offset = 4096 + s/512*768
		f4.Blocks[i].Offset, f4.Blocks[i].Length = f8.Blocks[i].Offset+512, 256
	}
	stored := int64(n * 768)
	units8 := planner.Slabs(f8.Shape, planner.Layout{Kind: planner.Contiguous}, 8, 16<<10) // 8 rows
	units4 := planner.Slabs(f4.Shape, planner.Layout{Kind: planner.Contiguous}, 4, 16<<10) // 16 rows
	parts := []*jointPart{{a: f8, slabs: units8}, {a: f4, slabs: units4}}
	var separate int64
	for _, p := range parts {
		p.reads = newSlabReads(nil, p.a, p.slabs)
		for s := range p.slabs {
			separate += readCost(p.reads.of(s), 1<<20)
		}
	}
	if 10*separate < 19*stored {
		t.Fatalf("separate passes read %d bytes of %d: the test needs interleaved arrays", separate, stored)
	}
	for _, limit := range []int64{1 << 30, 96 << 10} {
		items := jointItems(parts, limit)
		next := []int{0, 0}
		var joint int64
		for _, it := range items {
			var lists [][]*catalog.Block
			var bytes int64
			for _, r := range it {
				if r.slab != next[r.part] {
					t.Fatalf("limit %d: items %v: part %d unit %d out of order", limit, items, r.part, r.slab)
				}
				next[r.part]++
				p := parts[r.part]
				lists = append(lists, p.reads.of(r.slab))
				bytes += p.slabs[r.slab].Elements() * int64(p.a.DType.Size)
			}
			cost := unionRunBytes(lists, 1<<20)
			if len(it) > 1 && bytes > limit {
				t.Errorf("limit %d: item %v holds %d bytes", limit, it, bytes)
			}
			joint += cost
		}
		if next[0] != len(units8) || next[1] != len(units4) {
			t.Fatalf("limit %d: items %v miss units", limit, items)
		}
		t.Logf("limit %d: %d items read %d bytes (separately %d) of %d stored", limit, len(items), joint, separate, stored)
		if (limit == 1<<30 || perm[1] == 1) && joint != stored {
			t.Errorf("limit %d: %d items read %d bytes, want the %d stored", limit, len(items), joint, stored)
		}
		if joint >= separate && perm[1] == 1 {
			t.Errorf("limit %d: items read %d bytes, no fewer than %d separately", limit, joint, separate)
		}
	}
	// One part: one unit per item, in order.
	if items := jointItems(parts[:1], 1<<30); len(items) != len(units8) || items[3][0] != (jointRef{0, 3}) {
		t.Errorf("one part: items %v", items)
	}
}

// span is a byte range [start, end) of one file.
type span struct {
	file       string
	start, end int64
}

// runSpans is the coalesced runs of reads (sorted by file and offset, runs
// of at most limit bytes) as spans.
func runSpans(reads []*catalog.Block, limit int64) []span {
	var spans []span
	catalog.Runs(reads, limit, func(i, _ int, start, end int64) error {
		if end > start {
			spans = append(spans, span{reads[i].File, start, end})
		}
		return nil
	})
	return spans
}

// mergeSpans sorts spans and joins those that overlap or touch; it returns
// them and the bytes they cover.
func mergeSpans(spans []span) ([]span, int64) {
	slices.SortFunc(spans, func(x, y span) int {
		if c := strings.Compare(x.file, y.file); c != 0 {
			return c
		}
		return cmp.Compare(x.start, y.start)
	})
	out := spans[:0]
	var total int64
	for i := 0; i < len(spans); {
		s := spans[i]
		j := i + 1
		for ; j < len(spans) && spans[j].file == s.file && spans[j].start <= s.end; j++ {
			s.end = max(s.end, spans[j].end)
		}
		out = append(out, s)
		total += s.end - s.start
		i = j
	}
	return out, total
}

// unionRunBytes (an oracle of these tests) is the bytes of the union of the coalesced runs of every
// list of reads (each sorted by file and offset, runs of at most limit
// bytes): the most a run cache shared by their reads holds.
func unionRunBytes(lists [][]*catalog.Block, limit int64) int64 {
	var spans []span
	for _, reads := range lists {
		spans = append(spans, runSpans(reads, limit)...)
	}
	_, total := mergeSpans(spans)
	return total
}

func TestGapSegment(t *testing.T) {
	blk := func(off, n int64) *catalog.Block { return &catalog.Block{File: "f", Offset: off, Length: n} }
	cases := []struct {
		name   string
		blocks []*catalog.Block
		want   int
	}{
		{"adjacent", []*catalog.Block{blk(0, 100), blk(100, 100), blk(200, 100)}, 3},
		// 100 gap bytes need 3200 wanted: the third block brings 3190.
		{"small gaps", []*catalog.Block{blk(0, 3100), blk(3150, 50), blk(3250, 40)}, 2},
		{"large gap", []*catalog.Block{blk(0, 4096), blk(8192, 4096)}, 1},
		{"overlap", []*catalog.Block{blk(0, 100), blk(50, 100), blk(150, 10)}, 3},
		{"inline", []*catalog.Block{blk(0, 100), {Inline: []byte{1}}}, 1},
		{"inline first", []*catalog.Block{{Inline: []byte{1}}, blk(0, 100)}, 1},
	}
	for _, c := range cases {
		n := gapSegment(len(c.blocks), func(i int) *catalog.Block { return c.blocks[i] })
		if n != c.want {
			t.Errorf("%s: segment of %d blocks, want %d", c.name, n, c.want)
		}
		var gaps, want int64
		end := c.blocks[0].Offset
		for _, b := range c.blocks[:n] {
			gaps += max(b.Offset-end, 0)
			end = max(end, b.Offset+b.Length)
			want += b.Length
		}
		if gapShare*gaps > want {
			t.Errorf("%s: %d gap bytes for %d wanted", c.name, gaps, want)
		}
	}
}
