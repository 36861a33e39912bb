package rewriter

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"relayout/catalog"
	"relayout/internal/limits"
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
		{[]*catalog.Block{b("a", 0, 10), new(catalog.Block{}.WithInline([]byte{1})), b("a", 20, 10)}, 1 << 20, 20},
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
		items, _ := jointItems(parts, limit, 1<<20, minItemRead)
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
	if items, _ := jointItems(parts[:1], 1<<30, 1<<20, minItemRead); len(items) != len(units8) || items[3][0] != (jointRef{0, 3}) {
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
		name    string
		blocks  []*catalog.Block
		foreign []bool // of the gap before each block; nil: every gap
		want    int
	}{
		{"adjacent", []*catalog.Block{blk(0, 100), blk(100, 100), blk(200, 100)}, nil, 3},
		// 100 gap bytes need 3200 wanted: the third block brings 3190.
		{"small gaps", []*catalog.Block{blk(0, 3100), blk(3150, 50), blk(3250, 40)}, nil, 2},
		{"large gap", []*catalog.Block{blk(0, 4096), blk(8192, 4096)}, nil, 1},
		// BP4's block headers: 115 bytes before each 2 KiB block (5%),
		// no other item's block between.
		{"headers", []*catalog.Block{blk(115, 2048), blk(2278, 2048), blk(4441, 2048), blk(6604, 2048)}, []bool{false, false, false, false}, 4},
		{"headers, then another item's block", []*catalog.Block{blk(115, 2048), blk(2278, 2048), blk(6604, 2048)}, []bool{false, false, true}, 2},
		{"overlap", []*catalog.Block{blk(0, 100), blk(50, 100), blk(150, 10)}, nil, 3},
		{"inline", []*catalog.Block{blk(0, 100), new(catalog.Block{}.WithInline([]byte{1}))}, nil, 1},
		{"inline first", []*catalog.Block{new(catalog.Block{}.WithInline([]byte{1})), blk(0, 100)}, nil, 1},
	}
	for _, c := range cases {
		foreign := func(i int) bool { return c.foreign == nil || c.foreign[i] }
		n := gapSegment(len(c.blocks), func(i int) *catalog.Block { return c.blocks[i] }, foreign)
		if n != c.want {
			t.Errorf("%s: segment of %d blocks, want %d", c.name, n, c.want)
		}
		var gaps, want int64
		end := c.blocks[0].Offset
		for i, b := range c.blocks[:n] {
			if g := b.Offset - end; g > 0 && foreign(i) {
				gaps += g
			}
			end = max(end, b.Offset+b.Length)
			want += b.Length
		}
		if gapShare*gaps > want {
			t.Errorf("%s: %d foreign gap bytes for %d wanted", c.name, gaps, want)
		}
	}
}

// TestPredictReads: itemReads.predict, one walk over every item's extents,
// counts the requests and bytes that reading each item alone in
// gap-bounded segments (gapSegment, a gap foreign where the joint reader's
// index says: jointIndex.foreign) of coalesced runs (catalog.Runs) gives;
// sortExtents orders extents as a stable sort by file and offset does.
// Extents overlap, and some are listed for two regions (a block fetched
// whole by both, as newItemReads lists a compressed block whose rows meet
// two regions): where the prediction took any extent listed between an
// item's two as foreign, it split segments that the reader reads as one.
func TestPredictReads(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	files := map[string]int32{"f0": 0, "f1": 1, "f2": 2}
	for trial := range 200 {
		n := 1 + rng.IntN(9)
		var refs itemReads
		base := int64(0)
		if trial%10 == 9 {
			base = 1 << 50 // past the radix sort's packed key
		}
		for range rng.IntN(300) {
			off := base + rng.Int64N(1<<20)
			if rng.IntN(4) == 0 && len(refs) > 0 { // right after another extent, or a header apart
				p := refs[rng.IntN(len(refs))]
				off = p.off + p.len + rng.Int64N(2)*rng.Int64N(1024)
			}
			e := extentRef{file: int32(rng.IntN(3)), region: int32(rng.IntN(n)), off: off, len: 1 + rng.Int64N(16<<10)}
			refs = append(refs, e)
			if int(e.region)+1 < n && rng.IntN(6) == 0 { // in the next region too
				e.region++
				refs = append(refs, e)
			}
		}
		want := slices.Clone(refs)
		slices.SortStableFunc(want, func(x, y extentRef) int {
			return cmp.Or(cmp.Compare(x.file, y.file), cmp.Compare(x.off, y.off))
		})
		sortExtents(refs)
		if !slices.Equal(refs, want) {
			t.Fatalf("trial %d: sortExtents differs from a stable sort", trial)
		}
		limit := int64(1+rng.IntN(64)) << 10
		for _, k := range []int{1, 2, 3, 8} {
			calls, bytes := refs.predict(n, k, limit)
			x := &jointIndex{files: files, ext: refs, k: k}
			for it := 0; it*k < n; it++ {
				x.group = append(x.group, it)
			}
			var wantCalls, wantBytes int64
			for it := range x.group {
				var bs []*catalog.Block
				for _, e := range refs {
					if int(e.region)/k == it {
						bs = append(bs, &catalog.Block{File: fmt.Sprint("f", e.file), Offset: e.off, Length: e.len})
					}
				}
				c, b := segmentRuns(bs, limit, func(prev, cur *catalog.Block) bool {
					return x.foreign(it, cur.File, prev.Offset+prev.Length, cur.Offset)
				})
				wantCalls += c
				wantBytes += b
			}
			if calls != wantCalls || bytes != wantBytes {
				t.Fatalf("trial %d, k %d: predicted %d calls, %d bytes; reading each item gives %d, %d", trial, k, calls, bytes, wantCalls, wantBytes)
			}
		}
	}
}

// TestPredictJointReads: on interleaved arrays (a float64, a float32 and
// an int32 one of 64^3 stored block by block in one file, in a shuffled
// Morton order with 64-byte headers before each block), the reads
// jointItems predicted for the items it chose are the requests and bytes
// assembleJoint makes reading the items through a source that coalesces as
// reader/blockio does (catalog.Runs, counted as the manifest's io section
// counts a run's reads). A column of the int32 array's blocks is 8 rows
// tall and marked compressed (fetched whole), so each of them meets two
// regions of 4 rows: listed in both, they made the prediction split
// segments that the reader reads as one.
func TestPredictJointReads(t *testing.T) {
	const n, b = 64, 4
	arrays := []*catalog.Array{
		{Var: "f8", DType: catalog.DType{Kind: catalog.Float, Size: 8}, Shape: []int64{n, n, n}},
		{Var: "f4", DType: catalog.DType{Kind: catalog.Float, Size: 4}, Shape: []int64{n, n, n}},
		{Var: "i4", DType: catalog.DType{Kind: catalog.Int, Size: 4}, Shape: []int64{n, n, n}},
	}
	type slot struct {
		a   int
		box catalog.Box
	}
	var slots []slot
	for x := int64(0); x < n; x += b {
		for y := int64(0); y < n; y += b {
			for z := int64(0); z < n; z += b {
				box := catalog.Box{Lower: []int64{x, y, z}, Count: []int64{b, b, b}}
				slots = append(slots, slot{0, box}, slot{1, box})
				switch {
				case y > 0:
					slots = append(slots, slot{2, box})
				case x%(2*b) == 0: // a column of blocks two regions tall
					slots = append(slots, slot{2, catalog.Box{Lower: []int64{x, y, z}, Count: []int64{2 * b, b, b}}})
				}
			}
		}
	}
	morton := func(s slot) int64 { return morton3(s.box.Lower[0]/b, s.box.Lower[1]/b, s.box.Lower[2]/b) }
	slices.SortStableFunc(slots, func(p, q slot) int { return cmp.Compare(morton(p), morton(q)) })
	rng := rand.New(rand.NewPCG(7, 8))
	for i := range slots { // a writer's load-balancing shuffle: some blocks move a little
		if j := i + rng.IntN(64); rng.IntN(3) == 0 && j < len(slots) {
			slots[i], slots[j] = slots[j], slots[i]
		}
	}
	file := make([]byte, 0, 1<<20)
	for _, s := range slots {
		a := arrays[s.a]
		file = append(file, make([]byte, 64)...) // a block header
		blk := catalog.Block{Box: s.box, File: "data.0", Offset: int64(len(file)), Length: s.box.Elements() * int64(a.DType.Size), Rank: -1}
		if s.a == 2 {
			blk.Codecs = []catalog.Codec{{Name: "test"}} // fetched whole: the fake bytes are raw
		}
		for i := range blk.Length {
			file = append(file, byte(int64(s.a)+blk.Offset+i))
		}
		a.Blocks = append(a.Blocks, blk)
	}
	src := &runsSource{files: map[string][]byte{"data.0": file}}
	var parts []*jointPart
	for _, a := range arrays {
		p := &jointPart{a: a, slabs: rowBands(0, n, b, n)}
		p.reads = newSlabReads(nil, a, p.slabs)
		parts = append(parts, p)
	}
	regions := len(jointRegions(parts))
	for _, c := range []struct{ readLimit, minRead int64 }{{1 << 20, 1}, {1 << 20, 1 << 10}, {1 << 20, 8 << 10}, {1 << 20, 1 << 30}, {16 << 10, 32 << 10}} {
		items, x := jointItems(parts, 1<<30, c.readLimit, c.minRead)
		wantCalls, wantBytes := x.ext.predict(regions, x.k, c.readLimit)
		ctx := context.Background()
		base := src.IOStats()
		for i, it := range items {
			us := make([]jointUnit, len(it))
			for k, r := range it {
				p := parts[r.part]
				slab := p.slabs[r.slab]
				us[k] = jointUnit{a: p.a, slab: slab, reads: p.reads.of(r.slab), buf: make([]byte, slab.Elements()*int64(p.a.DType.Size)), disjoint: p.reads.blocks.disjoint()}
			}
			foreign := func(file string, from, to int64) bool { return x.foreign(i, file, from, to) }
			if err := assembleJoint(ctx, nil, input{src, c.readLimit}, us, make(chan struct{}, 1), foreign); err != nil {
				t.Fatal(err)
			}
		}
		got := src.IOStats().Since(base)
		t.Logf("read limit %d, minRead %d: %d regions in items of %d: %d calls, %d bytes (%d in the file)", c.readLimit, c.minRead, regions, x.k, got.ReadCalls, got.ReadBytes, len(file))
		if got.ReadCalls != wantCalls || got.ReadBytes != wantBytes {
			t.Errorf("read limit %d, minRead %d, items of %d regions: predicted %d calls, %d bytes; assembleJoint read %d, %d",
				c.readLimit, c.minRead, x.k, wantCalls, wantBytes, got.ReadCalls, got.ReadBytes)
		}
	}
}

// runsSource serves blocks from in-memory files as reader/blockio reads
// them: a batch in coalesced runs of at most the call's read limit
// (catalog.Runs), each run one counted read. Codecs are ignored (the bytes
// are raw).
type runsSource struct {
	catalog.Plain
	files map[string][]byte
	mu    sync.Mutex
	count catalog.IOCounters
}

func (s *runsSource) ReadBlocks(ctx context.Context, r catalog.Reads, fn func(i int, data []byte) error) error {
	blocks, limit := r.Blocks, int64(16<<20)
	if r.Limit > 0 {
		limit = min(limit, r.Limit)
	}
	return catalog.Runs(blocks, limit, func(i, j int, start, end int64) error {
		if start == end {
			return fn(i, slices.Clone(blocks[i].Inline()))
		}
		f, ok := s.files[blocks[i].File]
		if !ok || end > int64(len(f)) {
			return fmt.Errorf("runs: %s [%d, %d): %w", blocks[i].File, start, end, catalog.ErrNotFound)
		}
		s.mu.Lock()
		s.count.ReadCalls++
		s.count.ReadBytes += end - start
		s.mu.Unlock()
		run := slices.Clone(f[start:end])
		for k := i; k < j; k++ {
			if err := fn(k, run[blocks[k].Offset-start:blocks[k].Offset-start+blocks[k].Length]); err != nil {
				return err
			}
		}
		return nil
	})
}

func (s *runsSource) IOStats() catalog.IOCounters {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.count
}

// rowBands is units of rows rows of an array of (_, w, w) from row lo to hi.
func rowBands(lo, hi, rows, w int64) []catalog.Box {
	var out []catalog.Box
	for r := lo; r < hi; r += rows {
		out = append(out, catalog.Box{Lower: []int64{r, 0, 0}, Count: []int64{min(rows, hi-r), w, w}})
	}
	return out
}

// TestJointRegions: regions are the row bands no part's unit crosses, each
// part's units in order; a part that cuts elsewhere, or whose units go
// back (a merged array's cuboids), widens them.
func TestJointRegions(t *testing.T) {
	part := func(slabs ...[]catalog.Box) *jointPart { return &jointPart{slabs: slices.Concat(slabs...)} }
	cases := []struct {
		name  string
		parts []*jointPart
		want  [][][2]int
	}{
		{"8 and 16 rows", []*jointPart{part(rowBands(0, 64, 8, 4)), part(rowBands(0, 64, 16, 4))},
			[][][2]int{{{0, 2}, {0, 1}}, {{2, 4}, {1, 2}}, {{4, 6}, {2, 3}}, {{6, 8}, {3, 4}}}},
		{"a cut at 24", []*jointPart{part(rowBands(0, 64, 8, 4)), part(rowBands(0, 64, 16, 4)), part(rowBands(0, 24, 24, 4), rowBands(24, 64, 40, 4))},
			[][][2]int{{{0, 8}, {0, 4}, {0, 2}}}},
		{"a cut at 48", []*jointPart{part(rowBands(0, 64, 16, 4)), part(rowBands(0, 48, 48, 4), rowBands(48, 64, 16, 4))},
			[][][2]int{{{0, 3}, {0, 1}}, {{3, 4}, {1, 2}}}},
		{"going back", []*jointPart{part(rowBands(0, 64, 16, 4)), part(rowBands(0, 32, 16, 4), rowBands(0, 16, 16, 4), rowBands(32, 64, 32, 4))},
			[][][2]int{{{0, 2}, {0, 3}}, {{2, 4}, {3, 4}}}},
		// A shard's units of one part: rows 16-48 only.
		{"some units", []*jointPart{part(rowBands(16, 48, 16, 4)), part(rowBands(0, 64, 16, 4))},
			[][][2]int{{{0, 0}, {0, 1}}, {{0, 1}, {1, 2}}, {{1, 2}, {2, 3}}, {{2, 2}, {3, 4}}}},
		{"scalar", []*jointPart{part([]catalog.Box{{}}), part(rowBands(0, 64, 16, 4))}, nil},
	}
	for _, c := range cases {
		got := jointRegions(c.parts)
		if !slices.EqualFunc(got, c.want, func(x, y [][2]int) bool { return slices.Equal(x, y) }) {
			t.Errorf("%s: regions %v, want %v", c.name, got, c.want)
		}
	}
}

// TestJointGrain: joinable datasets are cut in the same bands, a multiple
// of every chunked one's chunk rows, that no block crosses, grown to
// about a tile of the group; no grain where no band fits.
func TestJointGrain(t *testing.T) {
	ds := []Dataset{
		{Var: "a", Step: 0, Shape: []int64{64, 16, 16}, ElemSize: 8, Kind: kindContiguous},
		{Var: "b", Step: 0, Shape: []int64{64, 16, 16}, ElemSize: 4, Kind: kindContiguous},
		{Var: "c", Step: 0, Shape: []int64{64, 16, 16}, ElemSize: 8, Kind: kindParts, Chunk: []int64{16, 16, 16}},
		{Var: "m", Step: 0, Shape: []int64{64, 16, 16}, ElemSize: 8, Kind: kindMerged},
		{Var: "a", Step: 1, Shape: []int64{64, 16, 16}, ElemSize: 8, Kind: kindContiguous},
		{Var: "b", Step: 1, Shape: []int64{64, 16, 16}, ElemSize: 4, Kind: kindContiguous},
		{Var: "d", Step: 1, Shape: []int64{64, 16}, ElemSize: 4, Kind: kindContiguous},
	}
	grains := jointGrains(ds)
	if g := grains[jointKey(&ds[0])]; g != (jointGrain{step: 16, rowBytes: 256 * (8 + 4 + 16)}) {
		t.Errorf("step 0: grain %+v", g)
	}
	if g := grains[jointKey(&ds[4])]; g != (jointGrain{step: 1, rowBytes: 256 * (8 + 4)}) {
		t.Errorf("step 1: grain %+v", g)
	}
	if _, ok := grains[jointKey(&ds[6])]; ok || len(grains) != 2 {
		t.Errorf("grains %v: want the two groups of two or more", grains)
	}

	array := func(size int, rows ...int64) *catalog.Array { // blocks: bands of these heights, in 4 columns
		a := &catalog.Array{DType: catalog.DType{Kind: catalog.Float, Size: size}, Shape: []int64{64, 16, 16}}
		lo := int64(0)
		for _, h := range rows {
			for y := int64(0); y < 16; y += 4 {
				a.Blocks = append(a.Blocks, catalog.Block{Box: catalog.Box{Lower: []int64{lo, y, 0}, Count: []int64{h, 4, 16}}})
			}
			lo += h
		}
		return a
	}
	repeat := func(h int64, n int) []int64 { return slices.Repeat([]int64{h}, n) }
	opts := Options{}.withLimits()
	opts.Limits.TileTarget = 8 * 256 * 12 // 8 rows of the step-1 group
	cases := []struct {
		name string
		g    jointGrain
		a    *catalog.Array
		opts Options
		rows int64 // 0: no grain
	}{
		{"4-row blocks", jointGrain{step: 1, rowBytes: 256 * 12}, array(8, repeat(4, 16)...), opts, 8},
		{"the float32 one", jointGrain{step: 1, rowBytes: 256 * 12}, array(4, repeat(4, 16)...), opts, 8},
		{"12-row blocks", jointGrain{step: 1, rowBytes: 256 * 12}, array(8, 12, 12, 12, 12, 12, 4), opts, 12},
		{"chunk rows", jointGrain{step: 16, rowBytes: 256 * 28}, array(8, repeat(4, 16)...), opts, 16},
		{"chunk rows, 12-row blocks", jointGrain{step: 16, rowBytes: 256 * 28}, array(8, 12, 12, 12, 12, 12, 4), opts, 48},
		{"one band over an item", jointGrain{step: 1, rowBytes: 256 * 12}, array(8, 40, 24), Options{MaxMem: 64 * 256 * 12}.withLimits(), 0},
		{"no grain", jointGrain{}, array(8, repeat(4, 16)...), opts, 0},
	}
	for _, c := range cases {
		got := c.g.units(c.a, 1<<30, c.opts)
		if c.rows == 0 {
			if got != nil {
				t.Errorf("%s: units %v, want none", c.name, got)
			}
			continue
		}
		if want := rowBands(0, 64, c.rows, 16); !slices.EqualFunc(got, want, func(x, y catalog.Box) bool {
			return slices.Equal(x.Lower, y.Lower) && slices.Equal(x.Count, y.Count)
		}) {
			t.Errorf("%s: units %v, want bands of %d rows", c.name, got, c.rows)
		}
	}
}

// morton3 interleaves the bits of x, y and z (x highest), as bp_gen.py
// orders its writers' blocks.
func morton3(x, y, z int64) int64 {
	var m int64
	for b := range 10 {
		m |= (x>>b&1)<<(3*b+2) | (y>>b&1)<<(3*b+1) | (z>>b&1)<<(3*b)
	}
	return m
}

// TestJointItemsMorton: a float64 and a float32 array of 64^3 in 4^3
// blocks stored block by block (float64, then float32) in Morton order:
// a band of 2^b block rows lies in runs of 4*8^b blocks, so items of one
// 8-row region read 24 KiB runs and items of two 192 KiB ones. jointItems
// takes the fewest regions whose reads reach minRead (two for 100 KiB),
// fewer where the limit says so, every item whole regions, and the items
// read every stored byte once.
func TestJointItemsMorton(t *testing.T) {
	const n, b = 64, 4
	f8 := &catalog.Array{Var: "v", DType: catalog.DType{Kind: catalog.Float, Size: 8}, Shape: []int64{n, n, n}}
	f4 := &catalog.Array{Var: "w", DType: catalog.DType{Kind: catalog.Float, Size: 4}, Shape: []int64{n, n, n}}
	for x := int64(0); x < n; x += b {
		for y := int64(0); y < n; y += b {
			for z := int64(0); z < n; z += b {
				box := catalog.Box{Lower: []int64{x, y, z}, Count: []int64{b, b, b}}
				off := morton3(x/b, y/b, z/b) * 768
				f8.Blocks = append(f8.Blocks, catalog.Block{Box: box, File: "data.0", Offset: off, Length: 512})
				f4.Blocks = append(f4.Blocks, catalog.Block{Box: box, File: "data.0", Offset: off + 512, Length: 256})
			}
		}
	}
	stored := int64(len(f8.Blocks)) * 768
	parts := []*jointPart{
		{a: f8, slabs: rowBands(0, n, 8, n)},
		{a: f4, slabs: rowBands(0, n, 8, n)},
	}
	for _, p := range parts {
		p.reads = newSlabReads(nil, p.a, p.slabs)
	}
	region := int64(8 * n * n * 12) // 8 rows of both
	for _, c := range []struct {
		limit, minRead int64
		rows           int64 // of each item
	}{
		{1 << 30, 100 << 10, 16},
		{1 << 30, 1 << 10, 8},
		{region, 100 << 10, 8},    // two regions do not fit
		{1 << 30, 1 << 30, 64},    // never long enough: the largest that fits
		{4 * region, 1 << 30, 32}, // the largest that fits
	} {
		items, _ := jointItems(parts, c.limit, 16<<20, c.minRead)
		if want := int(n / c.rows); len(items) != want {
			t.Errorf("limit %d, minRead %d: %d items, want %d of %d rows", c.limit, c.minRead, len(items), want, c.rows)
			continue
		}
		var read int64
		for i, it := range items {
			var lists [][]*catalog.Block
			for _, r := range it {
				u := parts[r.part].slabs[r.slab]
				if u.Lower[0]/c.rows != int64(i) {
					t.Fatalf("limit %d, minRead %d: item %d holds unit %v", c.limit, c.minRead, i, u)
				}
				lists = append(lists, parts[r.part].reads.of(r.slab))
			}
			if len(it) != 2*int(c.rows/8) {
				t.Fatalf("limit %d, minRead %d: item %d holds %d units", c.limit, c.minRead, i, len(it))
			}
			_, b := segmentRuns(slices.Concat(lists...), 16<<20, func(_, _ *catalog.Block) bool { return true })
			read += b
		}
		if c.rows < n && read != stored {
			t.Errorf("limit %d, minRead %d: items read %d bytes of %d stored", c.limit, c.minRead, read, stored)
		}
	}
}

// segmentRuns is the requests and bytes assembleJoint reads for reads:
// sorted by file and offset, each file in gap-bounded segments
// (gapSegment; foreign(prev, cur): the gap between holds other items'
// blocks) of coalesced runs of at most limit bytes (catalog.Runs).
func segmentRuns(reads []*catalog.Block, limit int64, foreign func(prev, cur *catalog.Block) bool) (calls, bytes int64) {
	reads = slices.Clone(reads)
	slices.SortStableFunc(reads, byFileOffset)
	for len(reads) > 0 {
		f := 1
		for f < len(reads) && reads[f].File == reads[0].File {
			f++
		}
		file := reads[:f]
		for len(file) > 0 {
			m := gapSegment(len(file), func(i int) *catalog.Block { return file[i] }, func(i int) bool { return foreign(file[i-1], file[i]) })
			catalog.Runs(file[:m], limit, func(_, _ int, s, e int64) error {
				calls++
				bytes += e - s
				return nil
			})
			file = file[m:]
		}
		reads = reads[f:]
	}
	return calls, bytes
}

// TestJointIndexForeign: a gap is foreign where a block of another group
// of regions lies in it or covers its start; block headers (no block) and
// the item's own group's blocks are not.
func TestJointIndexForeign(t *testing.T) {
	ext := itemReads{ // file 0: regions 0, 0, 1, 2 (groups of k = 2: 0, 0, 0, 1); file 1: region 3
		{file: 0, region: 0, off: 100, len: 100},
		{file: 0, region: 0, off: 215, len: 100},
		{file: 0, region: 1, off: 400, len: 100},
		{file: 0, region: 2, off: 600, len: 100},
		{file: 1, region: 3, off: 0, len: 100},
	}
	x := &jointIndex{files: map[string]int32{"a": 0, "b": 1}, ext: ext, k: 2, group: []int{0, 1}}
	for _, c := range []struct {
		item     int
		file     string
		from, to int64
		want     bool
	}{
		{0, "a", 200, 215, false}, // a header
		{0, "a", 315, 400, false}, // up to the group's next block
		{0, "a", 500, 600, false},
		{0, "a", 500, 650, true}, // region 2's block
		{0, "a", 650, 800, true}, // covered by it
		{1, "a", 150, 400, true}, // covered by group 0's block
		{1, "a", 700, 900, false},
		{0, "b", 50, 60, true},
		{0, "c", 0, 10, true}, // a file it does not know
	} {
		if got := x.foreign(c.item, c.file, c.from, c.to); got != c.want {
			t.Errorf("item %d %s [%d, %d): foreign %v, want %v", c.item, c.file, c.from, c.to, got, c.want)
		}
	}
}

// TestItemLimitFlat: items stop growing at limits.MaxItemBytes whatever the
// budget. Two interleaved arrays of 512x256x256 (float64 and float32, in
// 32x8x8 blocks in a shuffled order, so that no item's reads reach
// minItemRead and items grow to the limit): a quarter of the budget held
// items of 192 MiB at 1 GiB, the whole 384 MiB at 8 GiB; now every budget
// from 256 MiB to 8 GiB cuts the same items of at most 64 MiB.
func TestItemLimitFlat(t *testing.T) {
	const n0, n, b0, b = 512, 256, 32, 8
	f8 := &catalog.Array{Var: "v", DType: catalog.DType{Kind: catalog.Float, Size: 8}, Shape: []int64{n0, n, n}}
	f4 := &catalog.Array{Var: "w", DType: catalog.DType{Kind: catalog.Float, Size: 4}, Shape: []int64{n0, n, n}}
	const l8, l4 = b0 * b * b * 8, b0 * b * b * 4
	nb := (n0 / b0) * (n / b) * (n / b)
	perm := rand.New(rand.NewPCG(5, 6)).Perm(nb)
	i := 0
	for x := int64(0); x < n0; x += b0 {
		for y := int64(0); y < n; y += b {
			for z := int64(0); z < n; z += b {
				box := catalog.Box{Lower: []int64{x, y, z}, Count: []int64{b0, b, b}}
				off := int64(perm[i]) * (l8 + l4)
				f8.Blocks = append(f8.Blocks, catalog.Block{Box: box, File: "data.0", Offset: off, Length: l8})
				f4.Blocks = append(f4.Blocks, catalog.Block{Box: box, File: "data.0", Offset: off + l8, Length: l4})
				i++
			}
		}
	}
	var prev [][]jointRef
	for _, mem := range []int64{256 << 20, 1 << 30, 8 << 30} {
		opts := Options{MaxMem: mem, Jobs: 2}.withLimits()
		parts := []*jointPart{{a: f8, slabs: rowBands(0, n0, b0, n)}, {a: f4, slabs: rowBands(0, n0, b0, n)}}
		for _, p := range parts {
			p.reads = newSlabReads(nil, p.a, p.slabs)
		}
		items, _ := jointItems(parts, opts.Limits.ItemLimit, opts.Limits.ReadLimit, minItemRead)
		var most int64
		for _, it := range items {
			var bytes int64
			for _, r := range it {
				p := parts[r.part]
				bytes += p.slabs[r.slab].Elements() * int64(p.a.DType.Size)
			}
			most = max(most, bytes)
		}
		t.Logf("--max-mem %d MiB: %d items, the largest %d MiB", mem>>20, len(items), most>>20)
		if most > limits.MaxItemBytes || most < limits.MaxItemBytes/2 {
			t.Errorf("--max-mem %d MiB: largest item %d bytes, want (%d, %d]", mem>>20, most, limits.MaxItemBytes/2, limits.MaxItemBytes)
		}
		if prev != nil && !slices.EqualFunc(items, prev, slices.Equal) {
			t.Errorf("--max-mem %d MiB: other items than at 256 MiB", mem>>20)
		}
		prev = items
	}
}

// sortRefs must order refs (built unit after unit) as a stable sort by
// file name, offset and unit does, both on packed keys and, when offsets
// are too large to pack, through the comparison.
func TestSortRefs(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	type ref struct {
		b *catalog.Block
		u int
	}
	for it := range 200 {
		files := []string{"data.3", "data.0", "data.10", "data.2"}[:1+rng.IntN(4)]
		span := int64(1 << 20)
		if it%4 == 3 {
			span = 1 << 62 // beyond what packs with the index
		}
		var refs []ref
		for u := range 1 + rng.IntN(6) {
			for range rng.IntN(50) {
				b := &catalog.Block{File: files[rng.IntN(len(files))], Offset: rng.Int64N(span)}
				if rng.IntN(4) == 0 && len(refs) > 0 {
					b.Offset = refs[rng.IntN(len(refs))].b.Offset // ties
				}
				refs = append(refs, ref{b, u})
			}
		}
		want := slices.Clone(refs)
		slices.SortStableFunc(want, func(x, y ref) int {
			return cmp.Or(strings.Compare(x.b.File, y.b.File), cmp.Compare(x.b.Offset, y.b.Offset), cmp.Compare(x.u, y.u))
		})
		sortRefs(refs, func(r ref) (*catalog.Block, int) { return r.b, r.u })
		for i := range refs {
			if refs[i].b.File != want[i].b.File || refs[i].b.Offset != want[i].b.Offset || refs[i].u != want[i].u {
				t.Fatalf("case %d: at %d got %s@%d unit %d, want %s@%d unit %d", it, i,
					refs[i].b.File, refs[i].b.Offset, refs[i].u, want[i].b.File, want[i].b.Offset, want[i].u)
			}
		}
	}
}

// Caps implements catalog.Source: reads are coalesced, as blockio's.
func (s *runsSource) Caps() catalog.Caps { return catalog.Caps{Coalesces: true} }
