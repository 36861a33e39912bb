package planner

import (
	"math"
	"math/rand/v2"
	"testing"

	"relayout/catalog"
)

// libParams is a library model with HDF5's default buffers.
func libParams() CostParams {
	cp := DefaultCostParams()
	cp.SieveBuf, cp.ChunkCache, cp.Page, cp.CallCost, cp.RandomBW = 64<<10, 1<<20, 4096, 2e-6, 250e6
	return cp
}

// TestLibRequestsMatchHDF5: the reads the library model counts for one
// reader of 448³ float64 equal the pread64 calls strace showed HDF5 1.10.8
// (h5py, default sieve buffer and chunk cache) make for the same selections
// after opening the dataset (chunked: less the chunk index's node reads,
// which the model adds separately; bytes within 0.01%: the model does not
// clip the last sieve read at the end of the dataset).
func TestLibRequestsMatchHDF5(t *testing.T) {
	shape := []int64{448, 448, 448}
	cp := libParams()
	line := Pattern{Name: "line", Region: box([]int64{0, 224, 224}, []int64{448, 1, 1}), Split: []int64{1, 0, 0}}
	sub := Pattern{Name: "sub", Region: box([]int64{112, 112, 112}, []int64{224, 224, 224}), Split: []int64{1, 1, 1}}
	pat := func(name string) Pattern {
		switch name {
		case "line":
			return line
		case "sub":
			return sub
		}
		return pattern(t, shape, name)
	}
	for _, tc := range []struct {
		storage  Storage
		pattern  string
		requests int64
		bytes    int64
	}{
		{ContiguousStorage(shape), "line", 448, 448 << 16},
		{ContiguousStorage(shape), "xz", 448, 448 << 16},
		{ContiguousStorage(shape), "xy", 10564, 692280064},
		{ContiguousStorage(shape), "yz", 1, 1605632},
		{ContiguousStorage(shape), "sub", 2912, 190840832},
		{ChunkedStorage(shape, []int64{64, 64, 64}), "line", 448, 448 * 8},
		{ChunkedStorage(shape, []int64{64, 64, 64}), "xy", 200704, 200704 * 8},
		{ChunkedStorage(shape, []int64{64, 64, 64}), "xz", 3136, 1605632},
		{ChunkedStorage(shape, []int64{64, 64, 64}), "sub", 250880, 89915392},
		{ChunkedStorage(shape, []int64{112, 112, 112}), "xy", 200704, 200704 * 8},
		{ChunkedStorage(shape, []int64{112, 112, 112}), "sub", 100352, 89915392},
		{ChunkedStorage(shape, []int64{32, 32, 32}), "xz", 196, 196 << 18},
		{ChunkedStorage(shape, []int64{32, 32, 32}), "line", 14, 14 << 18},
		{ChunkedStorage(shape, []int64{50, 50, 50}), "sub", 125, 125 * 1000000},
	} {
		c := PredictRead(tc.storage, 8, pat(tc.pattern), 1, cp)
		idx := int64(0)
		if tc.storage.chunk != nil && c.Requests > tc.requests {
			idx = c.Requests - tc.requests
			if idx > 64 {
				t.Errorf("%s %s: %d index reads", tc.storage.Name, tc.pattern, idx)
			}
		}
		if b := c.Bytes - idx*4096; c.Requests-idx != tc.requests || b < tc.bytes || b > tc.bytes+tc.bytes/10000 {
			t.Errorf("%s %s: %d reads of %d bytes (+%d index reads), HDF5 made %d of %d", tc.storage.Name, tc.pattern, c.Requests-idx, c.Bytes-idx*4096, idx, tc.requests, tc.bytes)
		}
	}
}

// TestAutoLibPicksPerPatternWinners: under a library model auto keeps
// contiguous for whole-array reads and chunks for planes across the fastest
// axis and lines along the slowest (where a contiguous layout reads 64 KiB
// per element), never a chunk beyond the chunk cache, and ranks what it
// weighed, fastest first.
func TestAutoLibPicksPerPatternWinners(t *testing.T) {
	shape := []int64{448, 448, 448}
	cp := libParams()
	cp.CopyBW, cp.ChunkCost, cp.Cores = 2e9, 13e-6, 2
	pats := ReadPatterns(shape, 1)
	byName := func(names ...string) []Pattern {
		var ps []Pattern
		for _, p := range pats {
			for _, n := range names {
				if p.Name == n {
					ps = append(ps, p)
				}
			}
		}
		return ps
	}
	for _, tc := range []struct {
		patterns []string
		kind     string
	}{
		{[]string{"whole"}, Contiguous},
		{[]string{"yz"}, Contiguous},
		{[]string{"xy"}, Chunked},
		{[]string{"line"}, Chunked},
		{[]string{"xy", "xz", "line"}, Chunked},
	} {
		for _, readers := range []int{1, 8} {
			l, why := AutoWith(shape, 8, nil, readers, byName(tc.patterns...), cp)
			if l.Kind != tc.kind {
				t.Errorf("%v, %d readers: %+v (%s), want %s", tc.patterns, readers, l, why, tc.kind)
			}
			if l.Kind == Chunked && 8*product(l.Chunk) > cp.ChunkCache {
				t.Errorf("%v, %d readers: chunk %v beyond the chunk cache", tc.patterns, readers, l.Chunk)
			}
		}
	}
	rank := AutoRanking(shape, 8, nil, 1, nil, cp)
	if len(rank) < 3 {
		t.Fatalf("ranking %+v", rank)
	}
	l, _ := AutoWith(shape, 8, nil, 1, nil, cp)
	for i, c := range rank {
		if i > 0 && c.Seconds < rank[i-1].Seconds {
			t.Errorf("ranking out of order at %d: %+v", i, rank)
		}
	}
	if rank[0].Layout.Kind != l.Kind || dimsString(rank[0].Layout.Chunk) != dimsString(l.Chunk) {
		t.Errorf("ranking's first %+v, auto %+v", rank[0].Layout, l)
	}
	if len(rank[0].Costs) != len(ReadPatterns(shape, 1)) {
		t.Errorf("%d costs, want one per read pattern", len(rank[0].Costs))
	}
}

// TestCheckLibraryFields: the library fields are refused when negative or
// not finite.
func TestCheckLibraryFields(t *testing.T) {
	if err := libParams().Check(); err != nil {
		t.Fatal(err)
	}
	for i, f := range []func(*CostParams){
		func(c *CostParams) { c.SieveBuf = -1 },
		func(c *CostParams) { c.ChunkCache = -1 },
		func(c *CostParams) { c.Page = -1 },
		func(c *CostParams) { c.CallCost = -1 },
		func(c *CostParams) { c.RandomBW = math.Inf(1) },
		func(c *CostParams) { c.CopyBW = math.NaN() },
		func(c *CostParams) { c.ChunkCost = -1e-6 },
		func(c *CostParams) { c.Cores = -2 },
		func(c *CostParams) { c.CPUShare = 1.5 },
		func(c *CostParams) { c.ChunkByteCost = -1e-9 },
		func(c *CostParams) { c.FreshByteCost = math.NaN() },
		func(c *CostParams) { c.RandomOverlap = math.Inf(1) },
	} {
		c := libParams()
		f(&c)
		if c.Check() == nil {
			t.Errorf("case %d accepted: %+v", i, c)
		}
	}
}

// TestPredictPiecesMatchesNaiveLib: under the library model too, the
// indexed prediction over pieces gives the naive path's figures (seconds to
// rounding: the readers' sums run in another order), for HDF5-read pieces
// and ADIOS2 span reads of blocks.
func TestPredictPiecesMatchesNaiveLib(t *testing.T) {
	cp := libParams()
	cp.CopyBW, cp.ChunkCost, cp.Cores, cp.AggBW = 2e9, 13e-6, 2, 2*cp.ReaderBW
	cp.FreshByteCost, cp.RandomOverlap = 2.5e-9, 1.8
	rng := rand.New(rand.NewPCG(7, 23))
	for trial := range 200 {
		dims := 1 + trial%MaxDims
		shape := make([]int64, dims)
		for d := range shape {
			shape[d] = 1 + rng.Int64N(40)
		}
		var pieces []StoredPiece
		for range rng.IntN(60) {
			b := catalog.Box{Lower: make([]int64, dims), Count: make([]int64, dims)}
			for d := range dims {
				b.Lower[d] = rng.Int64N(shape[d]+4) - 2
				b.Count[d] = rng.Int64N(shape[d]/2 + 2)
			}
			pieces = append(pieces, StoredPiece{Box: b, Whole: rng.IntN(4) == 0})
		}
		st := Storage{Name: "random", Shape: shape, pieces: pieces, span: trial%2 == 1}
		for _, p := range StandardPatterns(shape) {
			for _, n := range []int{1, 3, 8, 64} {
				c := Cost{Pattern: p.Name, Readers: n, UsefulBytes: p.Region.Elements() * 8}
				grid := ReaderGrid(p.Region, p.Split, n)
				fast := predictPieces(st, 8, p, grid, c, cp)
				slow := predictPiecesNaive(st, 8, p, grid, c, cp)
				if d := math.Abs(fast.Seconds - slow.Seconds); d > 1e-9*max(slow.Seconds, 1e-12) {
					t.Fatalf("trial %d %s, %d readers: %g s, naive %g s", trial, p.Name, n, fast.Seconds, slow.Seconds)
				}
				fast.Seconds = slow.Seconds
				if fast != slow {
					t.Fatalf("trial %d %s, %d readers: indexed %+v, naive %+v", trial, p.Name, n, fast, slow)
				}
			}
		}
	}
}

// TestLibHugeShape: hostile declared shapes are predicted under the library
// model without work or memory proportional to them and with sane figures.
func TestLibHugeShape(t *testing.T) {
	cp := libParams()
	huge := []int64{1 << 40, 32, 32}
	for _, st := range []Storage{ChunkedStorage(huge, []int64{8, 8, 8}), ChunkedStorage(huge, []int64{1 << 20, 32, 32}), ContiguousStorage(huge)} {
		for _, p := range ReadPatterns(huge, 1) {
			for _, n := range []int{1, 64, MaxReaders} {
				c := PredictRead(st, 8, p, n, cp)
				if c.Requests <= 0 || c.Bytes <= 0 || !(c.Seconds > 0) || math.IsInf(c.Seconds, 0) {
					t.Errorf("%s %s %d readers: %+v", st.Name, p.Name, n, c)
				}
			}
		}
	}
}

// TestFreshMemoryAndChunkBytes: a reader pays FreshByteCost for every byte
// of its array, and through the chunk cache ChunkByteCost for every byte of
// every chunk it touches and FreshByteCost for the cache's first fill (at
// most the cache's size) — one reader, where its own time is the
// prediction, the figures add exactly.
func TestFreshMemoryAndChunkBytes(t *testing.T) {
	shape := []int64{64, 64, 64}
	whole := StandardPatterns(shape)[0]
	if whole.Name != "whole" {
		t.Fatalf("first standard pattern %s", whole.Name)
	}
	arrayBytes := float64(64 * 64 * 64 * 8)
	const fresh, perByte = 3e-9, 4e-10
	cp := libParams()
	with := cp
	with.FreshByteCost, with.ChunkByteCost = fresh, perByte
	for _, c := range []struct {
		st    Storage
		extra float64
	}{
		{ContiguousStorage(shape), arrayBytes * fresh},
		// 32 KiB chunks: all 512 touched, the 1 MiB cache filled once.
		{ChunkedStorage(shape, []int64{16, 16, 16}), arrayBytes*fresh + arrayBytes*perByte + (1<<20)*fresh},
		// 2 MiB chunks are above the cache: read run by run, no cache.
		{ChunkedStorage(shape, []int64{64, 64, 64}), arrayBytes * fresh},
	} {
		a, b := PredictRead(c.st, 8, whole, 1, cp), PredictRead(c.st, 8, whole, 1, with)
		if d := b.Seconds - a.Seconds; math.Abs(d-c.extra) > 1e-9*c.extra {
			t.Errorf("%s: %g s more, want %g s", c.st.Name, d, c.extra)
		}
	}
}

// TestRandomOverlap: eight readers of the contiguous xy plane each start a
// stream per row (their reads scatter over the file); with storage that
// streams no faster for eight (AggBW = ReaderBW), the readers' stream
// starts bound the time unless the storage overlaps them.
func TestRandomOverlap(t *testing.T) {
	shape := []int64{192, 192, 192}
	var xy Pattern
	for _, p := range StandardPatterns(shape) {
		if p.Name == "xy" {
			xy = p
		}
	}
	cp := libParams()
	cp.AggBW = cp.ReaderBW
	serial := PredictRead(ContiguousStorage(shape), 8, xy, 8, cp)
	cp.RandomOverlap = 4
	overlapped := PredictRead(ContiguousStorage(shape), 8, xy, 8, cp)
	if !(overlapped.Seconds < serial.Seconds*0.5) {
		t.Errorf("xy, 8 readers: %g s with stream starts overlapped 4 times, %g s without", overlapped.Seconds, serial.Seconds)
	}
	cp.RandomOverlap = 0.5 // below 1: no overlap, never worse than serial
	if r := PredictRead(ContiguousStorage(shape), 8, xy, 8, cp); r.Seconds != serial.Seconds {
		t.Errorf("overlap 0.5: %g s, want %g s", r.Seconds, serial.Seconds)
	}
}
