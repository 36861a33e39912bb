package planner

import (
	"math"
	"testing"
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
			l, why := AutoWith(shape, 8, readers, byName(tc.patterns...), cp)
			if l.Kind != tc.kind {
				t.Errorf("%v, %d readers: %+v (%s), want %s", tc.patterns, readers, l, why, tc.kind)
			}
			if l.Kind == Chunked && 8*product(l.Chunk) > cp.ChunkCache {
				t.Errorf("%v, %d readers: chunk %v beyond the chunk cache", tc.patterns, readers, l.Chunk)
			}
		}
	}
	rank := AutoRanking(shape, 8, 1, nil, cp)
	if len(rank) < 3 {
		t.Fatalf("ranking %+v", rank)
	}
	l, _ := AutoWith(shape, 8, 1, nil, cp)
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
	} {
		c := libParams()
		f(&c)
		if c.Check() == nil {
			t.Errorf("case %d accepted: %+v", i, c)
		}
	}
}
