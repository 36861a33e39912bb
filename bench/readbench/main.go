// Command readbench is make bench's read benchmark: the seed paper's six read
// patterns (whole domain, xy-, xz-, yz-plane, sub-area, 2x1x1 decomposition)
// of one 3-D variable with 1, 2, 4 and 8 concurrent readers, from the
// original layout and from rewritten chunked files through the same reader
// (relayout's own readers and reader/blockio: the blocks or chunks a part
// touches, sorted by file and offset, neighbours within 64 KiB fetched by
// one request), and from rewritten contiguous files by plain preads of the
// part's runs with HDF5's sieve-buffer rule (runs within 64 KiB merged).
// HDF5 1.10 itself (h5py) issues one read per chunk; the per-chunk count is
// printed too ("chunks" column; blocks for the original).
// Every file's page cache is dropped with posix_fadvise(DONTNEED) before
// each measurement. It prints one line per measurement: pattern, readers,
// layout, seconds (median of --runs), read calls, MiB read.
//
//	go run ./bench/readbench --var rho --step 0 ORIG OUT_CONTIG [OUT_CHUNKED]
package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"relayout/catalog"
	"relayout/reader"
)

type layoutIn struct {
	name  string
	root  string // directory or file whose files are dropped from the cache
	ds    reader.Dataset
	array *catalog.Array
	plain bool // a rewritten contiguous dataset: plain preads of its runs
}

func main() {
	varName := flag.String("var", "rho", "variable to read (3-D)")
	step := flag.Int64("step", -1, "step (default: the first)")
	runs := flag.Int("runs", 3, "measurements per case (median reported)")
	readersS := flag.String("readers", "1,2,4,8", "concurrent readers")
	flag.Parse()
	if flag.NArg() < 2 {
		fmt.Fprintln(os.Stderr, "usage: readbench [flags] ORIG OUT [OUT2 ...]")
		os.Exit(2)
	}
	var readers []int
	for _, f := range strings.Split(*readersS, ",") {
		var n int
		fmt.Sscan(f, &n)
		readers = append(readers, n)
	}
	ctx := context.Background()
	var ls []*layoutIn
	for i, p := range flag.Args() {
		ds, err := reader.Open(p, reader.Options{Vars: []string{*varName}})
		check(err)
		var a *catalog.Array
		check(ds.Scan(ctx, func(x *catalog.Array) error {
			if a == nil && x.Var == *varName && (*step < 0 || x.Step == *step) && x.Level == 0 {
				a = x
			}
			return nil
		}))
		if a == nil || len(a.Shape) != 3 {
			check(fmt.Errorf("%s: no 3-D variable %s", p, *varName))
		}
		name := "original"
		if i > 0 {
			name = "rewritten-" + filepath.Base(p)
		}
		contiguous := len(a.Blocks) == 1 && len(a.Blocks[0].Codecs) == 0 && slices.Equal(a.Blocks[0].Box.Count, a.Shape)
		ls = append(ls, &layoutIn{name: name, root: p, ds: ds, array: a, plain: i > 0 && contiguous})
	}
	sh := ls[0].array.Shape
	N0, N1, N2 := sh[0], sh[1], sh[2]
	box := func(l0, l1, l2, c0, c1, c2 int64) catalog.Box {
		return catalog.Box{Lower: []int64{l0, l1, l2}, Count: []int64{c0, c1, c2}}
	}
	patterns := []struct {
		name string
		b    catalog.Box
	}{
		{"whole", box(0, 0, 0, N0, N1, N2)},
		{"xy-plane", box(0, 0, N2/2, N0, N1, 1)},
		{"xz-plane", box(0, N1/2, 0, N0, 1, N2)},
		{"yz-plane", box(N0/2, 0, 0, 1, N1, N2)},
		{"sub-area", box(N0/4, N1/4, N2/4, N0/2, N1/2, N2/2)},
		{"2x1x1", box(0, 0, 0, N0/2, N1, N2)},
	}
	fmt.Printf("# variable %s shape %v, %d runs per case, median seconds\n", *varName, sh, *runs)
	fmt.Printf("%-9s %7s %-24s %10s %10s %10s %10s\n", "pattern", "readers", "layout", "seconds", "calls", "MiB", "chunks")
	for _, p := range patterns {
		for _, r := range readers {
			// interleave layouts within each run
			times := make([][]float64, len(ls))
			calls := make([]int64, len(ls))
			bytes := make([]int64, len(ls))
			for run := 0; run < *runs; run++ {
				for i, l := range ls {
					for _, m := range ls {
						dropCache(m.root)
					}
					t, c, b := measure(ctx, l, p.b, r)
					times[i] = append(times[i], t)
					calls[i], bytes[i] = c, b
				}
			}
			for i, l := range ls {
				fmt.Printf("%-9s %7d %-24s %10.4f %10d %10.1f %10d\n", p.name, r, l.name, median(times[i]), calls[i], float64(bytes[i])/(1<<20), touched(l.array, p.b, r))
			}
		}
	}
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "readbench:", err)
		os.Exit(1)
	}
}

func median(v []float64) float64 {
	sort.Float64s(v)
	return v[len(v)/2]
}

// dropCache: posix_fadvise(POSIX_FADV_DONTNEED) on every file under root.
func dropCache(root string) {
	if fi, err := os.Stat(root); err == nil && !fi.IsDir() {
		root = filepath.Dir(root) // a BP3 file: its sub-files are beside it
	}
	filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err != nil || !fi.Mode().IsRegular() {
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return nil
		}
		unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
		f.Close()
		return nil
	})
}

// split cuts b into n parts along its longest dimension.
func split(b catalog.Box, n int) []catalog.Box {
	d := 0
	for k := range b.Count {
		if b.Count[k] > b.Count[d] {
			d = k
		}
	}
	var out []catalog.Box
	for i := int64(0); i < int64(n); i++ {
		lo := b.Count[d] * i / int64(n)
		hi := b.Count[d] * (i + 1) / int64(n)
		if hi <= lo {
			continue
		}
		p := catalog.Box{Lower: slices.Clone(b.Lower), Count: slices.Clone(b.Count)}
		p.Lower[d] += lo
		p.Count[d] = hi - lo
		out = append(out, p)
	}
	return out
}

// measure reads box with r concurrent readers and returns seconds, read
// calls and bytes read.
func measure(ctx context.Context, l *layoutIn, b catalog.Box, r int) (float64, int64, int64) {
	var calls, nbytes atomic.Int64
	base := l.ds.IOStats()
	files := map[string]*os.File{}
	var fmu sync.Mutex
	open := func(name string) *os.File {
		fmu.Lock()
		defer fmu.Unlock()
		if f, ok := files[name]; ok {
			return f
		}
		root := l.root
		if fi, err := os.Stat(root); err == nil && !fi.IsDir() {
			root = filepath.Dir(root)
		}
		f, err := os.Open(filepath.Join(root, name))
		check(err)
		files[name] = f
		return f
	}
	start := time.Now()
	var wg sync.WaitGroup
	for _, part := range split(b, r) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if l.plain {
				c, n := readPlain(l.array, part, open)
				calls.Add(c)
				nbytes.Add(n)
			} else {
				readBlocks(ctx, l, part)
			}
		}()
	}
	wg.Wait()
	el := time.Since(start).Seconds()
	for _, f := range files {
		f.Close()
	}
	if !l.plain {
		s := l.ds.IOStats().Since(base)
		calls.Store(s.ReadCalls)
		nbytes.Store(s.ReadBytes)
	}
	return el, calls.Load(), nbytes.Load()
}

// touched is the number of blocks (chunks) the parts of b for r readers
// intersect: the read calls of a reader that issues one per chunk.
func touched(a *catalog.Array, b catalog.Box, r int) int {
	n := 0
	for _, part := range split(b, r) {
		for i := range a.Blocks {
			if _, ok := a.Blocks[i].Box.Intersect(part); ok {
				n++
			}
		}
	}
	return n
}

// readBlocks fetches every block (chunk) that the part needs, sorted by file
// and offset, through the source's coalesced reads.
func readBlocks(ctx context.Context, l *layoutIn, part catalog.Box) {
	var reads []*catalog.Block
	for i := range l.array.Blocks {
		bl := &l.array.Blocks[i]
		if _, ok := bl.Box.Intersect(part); ok {
			reads = append(reads, bl)
		}
	}
	slices.SortFunc(reads, func(x, y *catalog.Block) int {
		if c := strings.Compare(x.File, y.File); c != 0 {
			return c
		}
		return cmp.Compare(x.Offset, y.Offset)
	})
	fn := func(int, []byte) error { return nil }
	check(l.ds.ReadBlocks(ctx, catalog.Reads{Blocks: reads, DTypes: []catalog.DType{l.array.DType}}, fn))
}

// readPlain reads part from a rewritten contiguous dataset with plain
// preads of its runs: runs less than 64 KiB apart are merged into one request
// of at most 64 MiB, as HDF5's sieve buffer and the cost model's read-through
// do.
func readPlain(a *catalog.Array, part catalog.Box, open func(string) *os.File) (int64, int64) {
	var calls, n int64
	size := int64(a.DType.Size)
	bl := &a.Blocks[0]
	f := open(bl.File)
	s := a.Shape
	// Runs: merge the trailing dimensions the part covers whole.
	runLen := part.Count[2]
	var rows [][2]int64 // (i, j) of each run start
	switch {
	case part.Count[2] == s[2] && part.Count[1] == s[1]:
		runLen *= s[1] * part.Count[0]
		rows = [][2]int64{{part.Lower[0], 0}}
	case part.Count[2] == s[2]:
		runLen *= part.Count[1]
		for i := part.Lower[0]; i < part.Lower[0]+part.Count[0]; i++ {
			rows = append(rows, [2]int64{i, part.Lower[1]})
		}
	default:
		for i := part.Lower[0]; i < part.Lower[0]+part.Count[0]; i++ {
			for j := part.Lower[1]; j < part.Lower[1]+part.Count[1]; j++ {
				rows = append(rows, [2]int64{i, j})
			}
		}
	}
	// Runs separated by at most sieveGap bytes are read by one request
	// through the gap, up to maxReq bytes a request; the gap bytes count as
	// read.
	const maxReq = 64 << 20
	const sieveGap = 64 << 10
	var buf []byte
	read := func(off, length int64) {
		for length > 0 {
			k := min(length, maxReq)
			if int64(cap(buf)) < k {
				buf = make([]byte, k)
			}
			m, err := f.ReadAt(buf[:k], off)
			if err != nil && m < int(k) {
				check(err)
			}
			calls++
			n += int64(m)
			off += k
			length -= k
		}
	}
	cs, ce := int64(-1), int64(-1) // the request being gathered
	for _, r := range rows {
		off := bl.Offset + ((r[0]*s[1]+r[1])*s[2]+part.Lower[2])*size
		end := off + runLen*size
		if cs >= 0 && off >= ce && off-ce <= sieveGap && end-cs <= maxReq {
			ce = end
			continue
		}
		if cs >= 0 {
			read(cs, ce-cs)
		}
		cs, ce = off, end
	}
	if cs >= 0 {
		read(cs, ce-cs)
	}
	return calls, n
}
