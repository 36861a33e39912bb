package rewriter

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"relayout/catalog"
	"relayout/internal/limits"
	"relayout/internal/membudget"
	"relayout/planner"
)

// TestUnits: units tile the array exactly, each within the budget, and
// contiguous units follow each other in row-major order.
func TestUnits(t *testing.T) {
	shape := []int64{5, 7, 11}
	for _, tc := range []struct {
		layout planner.Layout
		budget int64
		split  bool
	}{
		{planner.Layout{Kind: planner.Contiguous}, 1 << 20, false},
		{planner.Layout{Kind: planner.Contiguous}, 8 * 77, false}, // one row
		{planner.Layout{Kind: planner.Contiguous}, 8 * 30, false}, // split along dim 1
		{planner.Layout{Kind: planner.Contiguous}, 8 * 5, false},  // along dim 2
		{planner.Layout{Kind: planner.Contiguous}, 1, false},      // one element
		{planner.Layout{Kind: planner.Chunked, Chunk: []int64{2, 3, 4}}, 1 << 20, false},
		{planner.Layout{Kind: planner.Chunked, Chunk: []int64{2, 3, 4}}, 8 * 2 * 3 * 11, true},
		{planner.Layout{Kind: planner.Chunked, Chunk: []int64{2, 3, 4}}, 8 * 2 * 3 * 8, true},
		{planner.Layout{Kind: planner.Chunked, Chunk: []int64{2, 3, 4}}, 1, true}, // one chunk each
	} {
		us, split, err := units(shape, tc.layout, 8, tc.budget)
		if err != nil || split != tc.split {
			t.Fatalf("%v budget %d: split %v err %v", tc.layout, tc.budget, split, err)
		}
		seen := make([]int, 5*7*11)
		next := int64(0)
		for _, u := range us {
			if b := u.Elements() * 8; b > tc.budget && u.Elements() > 1 && !(tc.layout.Kind == planner.Chunked && u.Elements() <= 24) {
				t.Errorf("%v budget %d: unit %v of %d bytes", tc.layout, tc.budget, u, b)
			}
			first := (u.Lower[0]*7+u.Lower[1])*11 + u.Lower[2]
			if tc.layout.Kind == planner.Contiguous {
				if first != next {
					t.Fatalf("budget %d: unit %v starts at %d, want %d", tc.budget, u, first, next)
				}
				next += u.Elements()
			} else {
				for d := range 3 {
					if u.Lower[d]%tc.layout.Chunk[d] != 0 {
						t.Fatalf("unit %v not chunk-aligned", u)
					}
				}
			}
			for i := u.Lower[0]; i < u.Lower[0]+u.Count[0]; i++ {
				for j := u.Lower[1]; j < u.Lower[1]+u.Count[1]; j++ {
					for k := u.Lower[2]; k < u.Lower[2]+u.Count[2]; k++ {
						seen[(i*7+j)*11+k]++
					}
				}
			}
		}
		for i, n := range seen {
			if n != 1 {
				t.Fatalf("%v budget %d: element %d covered %d times", tc.layout, tc.budget, i, n)
			}
		}
	}
}

// TestRunJobsAndMemory: every --jobs from 1 to 8 under budgets that force
// units below one row (or chunk row), over byte-swapped and column-major
// sources; the output is compared element by element with the input
// (Verify) and the budget is never exceeded. Where a row cannot fit a
// unit's share (Limits.UnitLimit) units must be split below it; each
// layout must have split somewhere (elsewhere units may grow to whole rows
// aligned on blocks larger than a unit: largeBlockUnits).
func TestRunJobsAndMemory(t *testing.T) {
	all := inputVars()
	for _, layout := range []string{"contiguous", "chunked"} {
		splitSomewhere := false
		for _, mem := range []int64{9000, 16000, 40000, 0} {
			for jobs := 1; jobs <= 8; jobs++ {
				vars, opts := all, Options{Layout: layout, Jobs: jobs, MaxMem: mem, Version: "test-1"}
				// Rows of B/x are 792 bytes, its chunk rows 2376.
				row := int64(792)
				if layout == "chunked" {
					vars, opts.ChunkShape, row = all[:3], []int64{3, 2, 4}, 2376 // B/x only: 3-D
				}
				dir := t.TempDir()
				in, inSrc := buildInput(t, dir, vars)
				stage := filepath.Join(dir, "stage")
				m, err := Run(context.Background(), in, inSrc, stage, opts)
				if err != nil {
					t.Fatalf("%s mem %d jobs %d: %v", layout, mem, jobs, err)
				}
				if m.IO == nil || m.IO.PeakMem > m.IO.MaxMem || m.IO.PeakMem == 0 {
					t.Fatalf("%s mem %d jobs %d: io %+v", layout, mem, jobs, m.IO)
				}
				if lim := limits.For(mem, jobs); mem > 0 && row > lim.UnitLimit && m.IO.Splits == 0 {
					t.Errorf("%s mem %d jobs %d: rows of %d bytes, units of at most %d, but no unit was split", layout, mem, jobs, row, lim.UnitLimit)
				}
				splitSomewhere = splitSomewhere || m.IO.Splits > 0
				if m.IO.WriteBytes < m.IO.LogicalBytes && layout == "contiguous" || m.IO.WriteCalls == 0 {
					t.Errorf("%s: io %+v", layout, m.IO)
				}
				verifyOutput(t, in, inSrc, stage, m, 0)
			}
		}
		if !splitSomewhere {
			t.Errorf("%s: no budget split a unit below a row", layout)
		}
	}
	// Element by element through h5py as well, for the tightest case.
	dir := t.TempDir()
	in, inSrc := buildInput(t, dir, all)
	stage := filepath.Join(dir, "stage")
	m, err := Run(context.Background(), in, inSrc, stage, Options{Jobs: 8, MaxMem: 16000, Version: "test-1", Fill: true})
	if err != nil {
		t.Fatal(err)
	}
	checkOutput(t, stage, m, all, func([]int64) []int64 { return nil })
}

// TestChunkOverBudget: a chunk that cannot fit the budget is a clear error.
func TestChunkOverBudget(t *testing.T) {
	dir := t.TempDir()
	vars := inputVars()[:3]
	in, inSrc := buildInput(t, dir, vars)
	_, err := Run(context.Background(), in, inSrc, filepath.Join(dir, "stage"),
		Options{Layout: "chunked", ChunkShape: []int64{13, 11, 9}, MaxMem: 16000, Version: "x"})
	if !errors.Is(err, catalog.ErrUnsupported) || !strings.Contains(err.Error(), "--max-mem") {
		t.Fatalf("err %v, want a chunk over --max-mem", err)
	}
}

// slowSource cancels the run after a few reads and then blocks readers
// until their context ends, like an interrupted run on a slow file system.
type slowSource struct {
	*fakeSource
	n      atomic.Int64
	cancel context.CancelFunc
}

func (s *slowSource) ReadBlock(ctx context.Context, b *catalog.Block, dt catalog.DType) ([]byte, error) {
	if s.n.Add(1) == 5 {
		s.cancel()
	}
	if s.n.Load() >= 5 {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return s.fakeSource.ReadBlock(ctx, b, dt)
}

// ReadBlocks implements catalog.Source, a block at a time.
func (s *slowSource) ReadBlocks(ctx context.Context, r catalog.Reads, fn func(i int, data []byte) error) error {
	return catalog.ReadEach(ctx, r, func(b *catalog.Block, dt catalog.DType, _ []byte) ([]byte, error) { return s.ReadBlock(ctx, b, dt) }, fn)
}

// TestRunCancelNoLeaks: cancelling mid-run returns context.Canceled and
// leaves no goroutine, no temporary file and no file under a final name.
func TestRunCancelNoLeaks(t *testing.T) {
	dir := t.TempDir()
	vars := inputVars()
	in, inSrc := buildInput(t, dir, vars)
	before := runtime.NumGoroutine()
	for _, jobs := range []int{1, 4, 8} {
		ctx, cancel := context.WithCancel(context.Background())
		src := &slowSource{fakeSource: inSrc, cancel: cancel}
		stage := filepath.Join(dir, fmt.Sprint("stage", jobs))
		mon := NewMonitor()
		stop := showProgress(mon, "json", new(bytes.Buffer))
		_, err := Run(ctx, in, src, stage, Options{Jobs: jobs, MaxMem: 16000, Version: "x", Monitor: mon})
		stop()
		cancel()
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("jobs %d: err %v, want context.Canceled", jobs, err)
		}
		entries, _ := os.ReadDir(stage)
		for _, e := range entries {
			t.Errorf("jobs %d: stage holds %s after a cancelled run", jobs, e.Name())
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<16)
		t.Fatalf("%d goroutines after cancelled runs, %d before:\n%s", n, before, buf[:runtime.Stack(buf, true)])
	}
}

// TestRunNoDigest: with NoDigest no dataset gets a digest, chunked units
// split to fit the budget take no second (hashing) pass over the input, and
// the output still equals the input element by element; with XXH64 every
// dataset has its xxh64 and no sha256.
func TestRunNoDigest(t *testing.T) {
	all := inputVars()
	var reads [3]int64
	for i, digest := range []catalog.Digest{catalog.SHA256, catalog.NoDigest, catalog.XXH64} {
		noDigest := digest == catalog.NoDigest
		dir := t.TempDir()
		in, inSrc := buildInput(t, dir, all[:3])
		stage := filepath.Join(dir, "stage")
		opts := Options{Layout: "chunked", ChunkShape: []int64{3, 2, 4}, Jobs: 2, MaxMem: 9000, Version: "test-1", Digest: digest}
		src := &countingSource{Source: inSrc}
		m, err := Run(context.Background(), in, src, stage, opts)
		if err != nil {
			t.Fatal(err)
		}
		if m.IO.Splits == 0 {
			t.Fatalf("no unit was split: io %+v", m.IO)
		}
		reads[i] = src.n.Load()
		for _, v := range m.Variables {
			for _, d := range v.Datasets {
				if (d.Sum(digest) == "") != noDigest || (d.SHA256 != "") != (digest == catalog.SHA256) || (d.XXH64 != "") != (digest == catalog.XXH64) {
					t.Errorf("digest %v: %s %s sha256 %q xxh64 %q", digest, v.Name, d.Path, d.SHA256, d.XXH64)
				}
				if digest == catalog.XXH64 && len(d.XXH64) != 16 {
					t.Errorf("%s %s: xxh64 %q: want 16 hex digits", v.Name, d.Path, d.XXH64)
				}
			}
		}
		// a budget of 9000 bytes: verify bands of a few elements
		verifyOutput(t, in, inSrc, stage, m, 9000)
	}
	if reads[1] >= reads[0] {
		t.Errorf("%d block reads without digest, %d with: the hashing pass was not skipped", reads[1], reads[0])
	}
}

// countingSource counts the blocks read, each read on its own.
type countingSource struct {
	catalog.Source
	n atomic.Int64
}

func (s *countingSource) ReadBlocks(ctx context.Context, r catalog.Reads, fn func(i int, data []byte) error) error {
	return catalog.ReadEach(ctx, r, func(b *catalog.Block, dt catalog.DType, _ []byte) ([]byte, error) {
		s.n.Add(1)
		return catalog.ReadBlock(ctx, s.Source, b, dt)
	}, fn)
}

// TestRunTiles: a band of block rows larger than the budget's unit limit
// (the 4 GiB bench case under --max-mem 256MiB, in miniature) is written in
// block-aligned tiles: every block is read once, whole, and the digest, taken
// from the written file band by band, is that of the array in row-major order
// (checked, with every value, by h5py against the rule), sha256 and xxh64
// alike.
func TestRunTiles(t *testing.T) {
	for _, src := range []struct {
		name  string
		dt    catalog.DType
		order catalog.Order
	}{
		{"little-endian row-major", catalog.DType{Kind: catalog.Float, Size: 8}, catalog.RowMajor},
		{"big-endian column-major", catalog.DType{Kind: catalog.Float, Size: 8, BigEndian: true}, catalog.ColMajor},
	} {
		t.Run(src.name, func(t *testing.T) { testRunTiles(t, src.dt, src.order) })
	}
}

func testRunTiles(t *testing.T, dt catalog.DType, order catalog.Order) {
	const n0, n1, n2 = 16, 16, 2048 // rows of 256 KiB; one index of dim 1 per row: 16 KiB
	v := testVar{
		a:    catalog.Array{Var: "T", Step: 0, DType: dt, Shape: []int64{n0, n1, n2}, Offset: []int64{0, 0, 0}},
		val:  func(x []int64) uint64 { return f64(float64((x[0]*n1+x[1])*n2+x[2]) + 0.5) },
		expr: "(i*16 + j)*2048 + k + 0.5",
	}
	for i := int64(n0 - 4); i >= 0; i -= 4 { // 4x4 block columns of 256 KiB, listed in reverse
		for j := int64(n1 - 4); j >= 0; j -= 4 {
			v.blocks = append(v.blocks, testBlock{lo: []int64{i, j, 0}, n: []int64{4, 4, n2}, order: order})
		}
	}
	sums := map[string]string{}
	for _, run := range []string{"bands", "budget tiles", "cache tiles", "bands xxh64", "budget tiles xxh64", "cache tiles xxh64"} {
		mode, xxh := strings.CutSuffix(run, " xxh64")
		tiled := mode != "bands"
		dir := t.TempDir()
		in, inSrc := buildInput(t, dir, []testVar{v})
		stage := filepath.Join(dir, "stage")
		opts := Options{Layout: "contiguous", Jobs: 2, Version: "test-1"}
		if xxh {
			opts.Digest = catalog.XXH64
		}
		switch mode {
		case "budget tiles":
			// share 512 KiB: units aim at 384 KiB and may grow to 896 KiB; a
			// 4-row band (1 MiB) does not fit, one block column (256 KiB) does.
			opts.MaxMem = 3 << 20
		case "cache tiles":
			// the default budget, with cache-sized tiles scaled down to this array
			opts = opts.withLimits()
			opts.Limits.TileTarget, opts.Limits.TileLimit = 256<<10, 512<<10
		}
		m, err := Run(context.Background(), in, inSrc, stage, opts)
		if err != nil {
			t.Fatal(err)
		}
		if m.IO.PeakMem > m.IO.MaxMem {
			t.Errorf("budget exceeded: %+v", m.IO)
		}
		if len(inSrc.reads) != len(v.blocks) {
			t.Errorf("%s: %d reads for %d blocks: %v", mode, len(inSrc.reads), len(v.blocks), inSrc.reads)
		}
		for _, r := range inSrc.reads {
			if !strings.HasSuffix(r, "@0+262144") {
				t.Errorf("%s: read %s is not one whole block", mode, r)
			}
		}
		if tiled && m.IO.WriteCalls != n0*n1/4 {
			t.Errorf("%s: %d write calls, want %d: one pwrite per row of each 4-column tile", mode, m.IO.WriteCalls, n0*n1/4)
		}
		if !tiled && m.IO.WriteCalls >= n0 {
			t.Errorf("%s: %d write calls: tiles without need", mode, m.IO.WriteCalls)
		}
		checkOutput(t, stage, m, []testVar{v}, func([]int64) []int64 { return nil })
		d := findDataset(findVar(m, "T"), v.a.Key())
		sums[run] = d.SHA256 + d.XXH64
		verifyOutput(t, in, inSrc, stage, m, 0)
	}
	for _, k := range []string{"bands", "bands xxh64"} {
		if sums["budget tiles"+k[5:]] != sums[k] || sums["cache tiles"+k[5:]] != sums[k] || sums[k] == "" {
			t.Errorf("digests differ: %v", sums)
		}
	}
}

// TestKeptBuffersDroppedAsNeeded: when the budget is full of kept buffers
// of other sizes, a request drops only as many of them (the largest first)
// as it needs, and the others stay kept for reuse (dropping them all made
// a 256MiB run map 1.6 GB of buffers for 1.5 GB of input).
func TestKeptBuffersDroppedAsNeeded(t *testing.T) {
	ctx := context.Background()
	const k = 1 << 10
	m := newMemBudget(100 * k)
	defer m.close()
	keep := func(sizes ...int64) {
		for _, n := range sizes {
			b, err := m.acquireBuf(ctx, n, 0)
			if err != nil || b != nil {
				t.Fatalf("acquireBuf(%d): %v, kept %v", n, err, b != nil)
			}
			if b, err = membudget.Map(n); err != nil {
				t.Fatal(err)
			}
			m.keepBuf(b)
		}
	}
	kept := func() (n int, bytes int64) {
		m.mu.Lock()
		defer m.mu.Unlock()
		for _, b := range m.kept {
			n, bytes = n+1, bytes+int64(cap(b))
		}
		return n, bytes
	}
	keep(20*k, 30*k, 16*k, 24*k) // 90 KiB kept, no two of a size
	b, err := m.acquireBuf(ctx, 40*k, 0)
	if err != nil || b != nil {
		t.Fatalf("acquireBuf(40 KiB): %v, a kept buffer %v", err, b != nil)
	}
	if n, bytes := kept(); n != 3 || bytes != 60*k {
		t.Errorf("after a 40 KiB buffer: %d kept buffers of %d bytes, want 3 of %d (the 30 KiB one dropped)", n, bytes, 60*k)
	}
	m.release(40 * k)
	if err := m.acquire(ctx, 70*k); err != nil {
		t.Fatal(err)
	}
	if n, bytes := kept(); n != 1 || bytes != 16*k {
		t.Errorf("after 70 KiB: %d kept buffers of %d bytes, want 1 of %d (the 24 and 20 KiB ones dropped)", n, bytes, 16*k)
	}
	// A kept buffer of the size asked for is taken, not dropped.
	if b, err = m.acquireBuf(ctx, 16*k, 10*k); err != nil || cap(b) != 16*k {
		t.Fatalf("acquireBuf(16 KiB): %v, cap %d", err, cap(b))
	}
	m.drop(b)
	m.release(80 * k)
	if used := m.sem.Used(); used != 0 {
		t.Errorf("%d bytes still charged", used)
	}
}
