package planner

import (
	"math/bits"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"relayout/catalog"
)

var cube512 = []int64{512, 512, 512}

func pattern(t *testing.T, shape []int64, name string) Pattern {
	t.Helper()
	for _, p := range StandardPatterns(shape) {
		if p.Name == name {
			return p
		}
	}
	t.Fatalf("no pattern %q", name)
	return Pattern{}
}

// TestRuns checks request and byte counts worked out by hand.
func TestRuns(t *testing.T) {
	p := box([]int64{0, 0, 0}, []int64{4, 4, 4})
	for _, tc := range []struct {
		name      string
		in        catalog.Box
		sieve     int64
		req, byts int64
	}{
		// A z-fixed plane: 16 runs of one element; with a sieve of 3 elements
		// the runs merge along y (gap 3), then along x (gap 16-13 = 3): one
		// request from element 2 to 62, 61 elements.
		{"xy no sieve", box([]int64{0, 0, 2}, []int64{4, 4, 1}), 0, 16, 16 * 8},
		{"xy sieve", box([]int64{0, 0, 2}, []int64{4, 4, 1}), 3 * 8, 1, 61 * 8},
		{"xy small sieve", box([]int64{0, 0, 2}, []int64{4, 4, 1}), 2 * 8, 16, 16 * 8},
		{"yz plane", box([]int64{1, 0, 0}, []int64{1, 4, 4}), 0, 1, 16 * 8},
		{"xz plane", box([]int64{0, 3, 0}, []int64{4, 1, 4}), 0, 4, 16 * 8},
		{"whole", p, 0, 1, 64 * 8},
		{"sub 2x2x2", box([]int64{1, 1, 1}, []int64{2, 2, 2}), 0, 4, 8 * 8},
	} {
		req, b := runs(p, tc.in, 8, tc.sieve)
		if req != tc.req || b != tc.byts {
			t.Errorf("%s: %d requests, %d bytes; want %d, %d", tc.name, req, b, tc.req, tc.byts)
		}
	}
}

func TestReaderGrid(t *testing.T) {
	full := box([]int64{0, 0, 0}, cube512)
	for _, tc := range []struct {
		split []int64
		n     int
		want  []int64
	}{
		{[]int64{1, 1, 1}, 8, []int64{2, 2, 2}},
		{[]int64{1, 1, 1}, 512, []int64{8, 8, 8}},
		{[]int64{1, 0, 0}, 64, []int64{64, 1, 1}},
		{[]int64{0, 0, 1}, 1024, []int64{1, 1, 512}}, // only 512 z slices: 512 readers idle
		{[]int64{1, 1, 0}, 6, []int64{3, 2, 1}},
		{[]int64{1, 1, 1}, 1, []int64{1, 1, 1}},
	} {
		got := ReaderGrid(full, tc.split, tc.n)
		if dimsString(got) != dimsString(tc.want) {
			t.Errorf("split %v n %d: %v, want %v", tc.split, tc.n, got, tc.want)
		}
	}
}

// The seed paper's findings, reproduced by the model with default parameters
// on a 512³ float64 array (1 GiB).
//
// Few readers: the contiguous layout beats chunked layouts (64 chunks of
// 128³, the paper's 64 blocks, and 4096 chunks of 32³) for the whole array
// and the xz- and yz-planes, and loses for the xy-plane (one-element runs).
// With one reader every decomposition is a whole-array read, so contiguous
// wins those too. Where the model does not follow "contiguous is best for few
// readers" (documented, not asserted): the central sub-area, and, from two
// readers on, decompositions that split z, the fastest axis (1x1x2, 2x2x2) —
// a reader's rows are then half rows, read through the gaps (2× the bytes) or
// one request per half row.
func TestCostFewReadersContiguousWinsExceptXY(t *testing.T) {
	cp := DefaultCostParams()
	contig := ContiguousStorage(cube512)
	chunked := ChunkedStorage(cube512, []int64{128, 128, 128})
	small := ChunkedStorage(cube512, []int64{32, 32, 32})
	for _, readers := range []int{1, 2, 4} {
		for _, p := range StandardPatterns(cube512) {
			c := PredictRead(contig, 8, p, readers, cp)
			k := PredictRead(chunked, 8, p, readers, cp)
			s := PredictRead(small, 8, p, readers, cp)
			switch {
			case p.Name == "xy":
				if c.Seconds <= k.Seconds || c.Seconds <= s.Seconds {
					t.Errorf("%d readers, xy: contiguous %.3gs should lose to chunked %.3gs / %.3gs", readers, c.Seconds, k.Seconds, s.Seconds)
				}
			case p.Name == "whole" || p.Name == "xz" || p.Name == "yz" || readers == 1 && p.Name != "sub":
				if c.Seconds >= k.Seconds || c.Seconds >= s.Seconds {
					t.Errorf("%d readers, %s: contiguous %.3gs should win over chunked %.3gs / %.3gs (requests %d, bytes %d)",
						readers, p.Name, c.Seconds, k.Seconds, s.Seconds, c.Requests, c.Bytes)
				}
			}
		}
	}
	// Whole-array reads by one reader through a contiguous layout read each
	// byte once in one request.
	c := PredictRead(contig, 8, pattern(t, cube512, "whole"), 1, cp)
	if c.Requests != 1 || c.Bytes != 1<<30 || c.Amplification() != 1 {
		t.Fatalf("whole: %+v", c)
	}
}

// Many readers: chunks matched to the readers' decomposition (one chunk per
// reader) beat a layout of few chunks (contention) and the contiguous layout
// when the readers split z; when they split only x or y both layouts are
// bound by the aggregate bandwidth (each reader's part is a few long runs)
// and tie.
func TestCostManyReadersManyChunksWin(t *testing.T) {
	cp := DefaultCostParams()
	contig := ContiguousStorage(cube512)
	few := ChunkedStorage(cube512, []int64{256, 256, 256}) // 8 chunks
	for _, name := range []string{"2x1x1", "1x2x1", "1x1x2", "2x2x2"} {
		p := pattern(t, cube512, name)
		for _, readers := range []int{64, 512, 1024} {
			g := ReaderGrid(p.Region, p.Split, readers)
			chunk := make([]int64, 3)
			for i := range chunk {
				chunk[i] = (cube512[i] + g[i] - 1) / g[i]
			}
			matched := ChunkedStorage(cube512, chunk)
			c := PredictRead(contig, 8, p, readers, cp)
			f := PredictRead(few, 8, p, readers, cp)
			m := PredictRead(matched, 8, p, readers, cp)
			splitsZ := p.Split[2] != 0
			if m.Seconds >= f.Seconds || m.Seconds > c.Seconds || splitsZ && m.Seconds >= c.Seconds {
				t.Errorf("%s, %d readers: %d chunks of %v %.3gs should beat contiguous %.3gs and 8 chunks %.3gs",
					name, readers, matched.Pieces(), chunk, m.Seconds, c.Seconds, f.Seconds)
			}
		}
	}
}

func TestCostContentionWhenReadersExceedChunks(t *testing.T) {
	cp := DefaultCostParams()
	st := ChunkedStorage(cube512, []int64{128, 128, 128}) // 64 chunks
	p := pattern(t, cube512, "2x2x2")
	at64 := PredictRead(st, 8, p, 64, cp)
	at512 := PredictRead(st, 8, p, 512, cp)
	if at64.MaxSharing != 1 || at64.Amplification() != 1 {
		t.Fatalf("64 readers on 64 chunks: sharing %d, amplification %.3g", at64.MaxSharing, at64.Amplification())
	}
	if at512.MaxSharing != 8 || at512.Amplification() != 8 {
		t.Fatalf("512 readers on 64 chunks: sharing %d, amplification %.3g", at512.MaxSharing, at512.Amplification())
	}
	if at512.Seconds <= at64.Seconds {
		t.Fatalf("more readers than chunks should be slower: 64 readers %.3gs, 512 readers %.3gs", at64.Seconds, at512.Seconds)
	}
}

func TestCostMergedBeatsScatteredBlocks(t *testing.T) {
	// One rank's 16 scattered blocks of the paper example, stored as written
	// and as the 6 merged cuboids: a reader of the whole owned region makes
	// fewer requests from the merged pieces.
	blocks, _ := paperBlocks()
	var cat []catalog.Block
	for _, b := range blocks {
		cat = append(cat, catalog.Block{Box: b})
	}
	cp := DefaultCostParams()
	p := pattern(t, cube512, "whole")
	scattered := PredictRead(BlocksStorage(cube512, cat), 8, p, 1, cp)
	merged := PredictRead(PiecesStorage("merged", cube512, Cluster(blocks), false), 8, p, 1, cp)
	if scattered.Requests != 16 || merged.Requests != 6 || merged.Bytes != scattered.Bytes || merged.Seconds >= scattered.Seconds {
		t.Fatalf("scattered %+v, merged %+v", scattered, merged)
	}
}

func TestAuto(t *testing.T) {
	// Few readers of everything but xy: contiguous.
	var noXY []Pattern
	for _, p := range StandardPatterns(cube512) {
		if p.Name != "xy" {
			noXY = append(noXY, p)
		}
	}
	l, why := Auto(cube512, 8, 1, noXY)
	if l.Kind != Contiguous || why == "" {
		t.Fatalf("1 reader: %+v (%s)", l, why)
	}
	// Many readers in a 3-D decomposition: chunks matching them.
	l, why = Auto(cube512, 8, 512, []Pattern{pattern(t, cube512, "2x2x2")})
	if l.Kind != Chunked || dimsString(l.Chunk) != "64x64x64" || !strings.Contains(why, "vs contiguous") {
		t.Fatalf("512 readers 2x2x2: %+v (%s)", l, why)
	}
	// One reader of xy-planes only: chunked.
	l, why = Auto(cube512, 8, 1, []Pattern{pattern(t, cube512, "xy")})
	if l.Kind != Chunked {
		t.Fatalf("1 reader xy: %+v (%s)", l, why)
	}
	if l, _ := Auto(nil, 8, 4, nil); l.Kind != Contiguous {
		t.Fatal("scalar")
	}
	t.Logf("example reason: %s", why)
}

// TestChunkedMatchesGeneric checks the per-axis arithmetic for chunks against
// the generic piece-by-piece path over the same chunks listed as whole pieces.
func TestChunkedMatchesGeneric(t *testing.T) {
	cp := DefaultCostParams()
	shape := []int64{20, 17, 9}
	chunk := []int64{6, 5, 4}
	var boxes []catalog.Box
	for x := int64(0); x < shape[0]; x += chunk[0] {
		for y := int64(0); y < shape[1]; y += chunk[1] {
			for z := int64(0); z < shape[2]; z += chunk[2] {
				boxes = append(boxes, box([]int64{x, y, z}, chunk))
			}
		}
	}
	fast := ChunkedStorage(shape, chunk)
	slow := PiecesStorage("chunks", shape, boxes, true)
	if fast.Pieces() != int64(len(boxes)) {
		t.Fatalf("%d chunks, want %d", fast.Pieces(), len(boxes))
	}
	for _, p := range StandardPatterns(shape) {
		for _, n := range []int{1, 2, 3, 7, 12, 64, 1000} {
			a := PredictRead(fast, 4, p, n, cp)
			b := PredictRead(slow, 4, p, n, cp)
			// Seconds may differ in the last bits (summation order).
			if d := a.Seconds - b.Seconds; d > 1e-9*b.Seconds || d < -1e-9*b.Seconds {
				t.Fatalf("%s, %d readers: %g s vs %g s", p.Name, n, a.Seconds, b.Seconds)
			}
			a.Seconds = b.Seconds
			if a != b {
				t.Fatalf("%s, %d readers: arithmetic %+v, generic %+v", p.Name, n, a, b)
			}
		}
	}
}

// A declared shape of 2^40 along an axis (hostile metadata) is predicted
// without memory proportional to it: the chunk sharing count is swept over
// the readers' parts, not over every chunk index. The figures equal those of
// the same array cut to the readers' span (sharing is local to the parts).
func TestCostChunkedHugeShape(t *testing.T) {
	cp := DefaultCostParams()
	huge := []int64{1 << 40, 32, 32}
	st := ChunkedStorage(huge, []int64{8, 8, 8})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for _, p := range StandardPatterns(huge) {
		c := PredictRead(st, 8, p, 64, cp)
		if c.Requests <= 0 || c.MaxSharing <= 0 {
			t.Errorf("%s: %+v", p.Name, c)
		}
	}
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
		t.Errorf("predicting a 2^40-long array allocated %d bytes", grew)
	}
	// The sweep agrees with a difference array over every chunk.
	small := []int64{1000, 48, 40}
	cs := ChunkedStorage(small, []int64{7, 5, 16})
	for _, p := range StandardPatterns(small) {
		for _, n := range []int{1, 3, 8, 64} {
			got := PredictRead(cs, 4, p, n, cp)
			grid := ReaderGrid(p.Region, p.Split, n)
			want := naiveSharing(cs, p, grid)
			if int64(got.MaxSharing) != want {
				t.Errorf("%s, %d readers: sharing %d, difference array says %d", p.Name, n, got.MaxSharing, want)
			}
		}
	}
}

// naiveSharing is predictChunked's sharing product computed the old way.
func naiveSharing(st Storage, p Pattern, grid []int64) int64 {
	sharing := int64(1)
	for a, g := range grid {
		cs := st.chunk[a]
		share := make([]int64, (st.Shape[a]+cs-1)/cs+1)
		for i := int64(0); i < g; i++ {
			lo := p.Region.Lower[a] + p.Region.Count[a]*i/g
			hi := p.Region.Lower[a] + p.Region.Count[a]*(i+1)/g
			if hi > lo {
				share[lo/cs]++
				share[(hi-1)/cs+1]--
			}
		}
		var run, top int64
		for _, d := range share {
			run += d
			top = max(top, run)
		}
		sharing *= top
	}
	return sharing
}

// TestPredictPiecesMatchesNaive checks the indexed piece path against the
// piece-by-piece reference over random pieces (whole and partial, some
// empty, some outside the array), patterns and reader counts: every figure
// equal, Seconds to the bit.
func TestPredictPiecesMatchesNaive(t *testing.T) {
	cp := DefaultCostParams()
	rng := rand.New(rand.NewPCG(5, 19))
	for trial := range 360 {
		dims := 1 + trial%MaxDims
		shape := make([]int64, dims)
		for d := range shape {
			shape[d] = 1 + rng.Int64N(40)
		}
		if trial >= 300 { // an axis too wide for predictPieces' part table: partOf
			shape[0] = 2000 + rng.Int64N(3000)
		}
		var pieces []StoredPiece
		for range rng.IntN(60) {
			b := catalog.Box{Lower: make([]int64, dims), Count: make([]int64, dims)}
			for d := range dims {
				b.Lower[d] = rng.Int64N(shape[d]+4) - 2
				b.Count[d] = rng.Int64N(shape[d]/2 + 2)
			}
			pieces = append(pieces, StoredPiece{Box: b, Whole: rng.IntN(3) == 0})
		}
		st := Storage{Name: "random", Shape: shape, pieces: pieces}
		pats := StandardPatterns(shape)
		if dims != 3 {
			sub := catalog.Box{Lower: make([]int64, dims), Count: make([]int64, dims)}
			for d := range dims {
				sub.Lower[d] = rng.Int64N(shape[d])
				sub.Count[d] = 1 + rng.Int64N(shape[d]-sub.Lower[d])
			}
			split := make([]int64, dims)
			split[rng.IntN(dims)] = 1
			split[rng.IntN(dims)] = 1
			pats = append(pats, Pattern{Name: "random", Region: sub, Split: split})
		}
		for _, p := range pats {
			for _, n := range []int{1, 2, 3, 8, 12, 64, 1000} {
				c := Cost{Pattern: p.Name, Readers: n, UsefulBytes: p.Region.Elements() * 8}
				grid := ReaderGrid(p.Region, p.Split, n)
				fast := predictPieces(st, 8, p, grid, c, cp)
				slow := predictPiecesNaive(st, 8, p, grid, c, cp)
				if fast != slow {
					t.Fatalf("trial %d %s, %d readers: indexed %+v, naive %+v", trial, p.Name, n, fast, slow)
				}
			}
		}
	}
}

// TestPartOf checks the part lookup of predictPieces, arithmetic and (for
// regions near 2^63, where the product would overflow) searched, against a
// scan of the part bounds.
func TestPartOf(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 19))
	for trial := range 2000 {
		g := 1 + rng.Int64N(40)
		lo := rng.Int64N(100)
		n := 1 + rng.Int64N(60)
		if trial%3 == 0 {
			n = 1<<62 + rng.Int64N(1<<60)
		}
		b := make([]int64, g+1)
		for i := range b {
			// n·i/g without overflow: as ReaderGrid's parts (forEachPart)
			// for the sizes this test uses.
			hi, lo2 := bitsMul(n, int64(i))
			b[i] = lo + bitsDiv(hi, lo2, g)
		}
		for range 20 {
			x := lo + rng.Int64N(n)
			want := int64(-1)
			for i := int64(0); i < g; i++ {
				if b[i] <= x {
					want = i
				}
			}
			if got := partOf(b, g, x); got != want {
				t.Fatalf("bounds %v, x %d: part %d, want %d", b, x, got, want)
			}
		}
	}
}

func bitsMul(a, b int64) (hi, lo uint64) { return bits.Mul64(uint64(a), uint64(b)) }

func bitsDiv(hi, lo uint64, d int64) int64 {
	q, _ := bits.Div64(hi, lo, uint64(d))
	return int64(q)
}
