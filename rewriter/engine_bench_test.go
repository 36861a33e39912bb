package rewriter

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"relayout/catalog"
	"relayout/planner"
)

// BenchmarkRun rewrites one 8 MiB float64 array of 64x128x128 in 512
// blocks of 16³ (held in memory, listed in scattered order) through Run in
// each layout: the engine's own cost (assembly, hashing, pwrite(v) into the
// page cache, encoding, the join), not the disk's.
func BenchmarkRun(b *testing.B) {
	const n0, n1, n2, c = 64, 128, 128, 16
	dt := catalog.DType{Kind: catalog.Float, Size: 8}
	a := catalog.Array{Var: "rho", Step: 0, DType: dt, Shape: []int64{n0, n1, n2}, Offset: []int64{0, 0, 0}}
	src := &fakeSource{files: map[string][]byte{}}
	var order [][3]int64
	for i := int64(0); i < n0; i += c {
		for j := int64(0); j < n1; j += c {
			for k := int64(0); k < n2; k += c {
				order = append(order, [3]int64{i, j, k})
			}
		}
	}
	for x := range order { // a fixed scattered order
		y := (x * 7919) % len(order)
		order[x], order[y] = order[y], order[x]
	}
	for bi, o := range order {
		lo, cnt := []int64{o[0], o[1], o[2]}, []int64{c, c, c}
		data := encode(cnt, lo, catalog.RowMajor, dt, func(idx []int64) uint64 {
			return f64(float64((idx[0]*n1+idx[1])*n2 + idx[2]))
		})
		blk := catalog.Block{Box: catalog.Box{Lower: lo, Count: cnt}, Order: catalog.RowMajor, Rank: int32(bi % 6),
			File: fmt.Sprintf("b%d", bi), Length: int64(len(data))}
		src.files[blk.File] = data
		a.Blocks = append(a.Blocks, blk)
	}
	dir := b.TempDir()
	st, err := catalog.CreateStore(filepath.Join(dir, "in.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	if err := st.SetInfo(catalog.DatasetInfo{Path: "/sim/out", Root: dir, Format: "test"}); err != nil {
		b.Fatal(err)
	}
	if err := st.Put(&a); err != nil {
		b.Fatal(err)
	}
	for _, l := range []struct {
		name string
		opts Options
	}{
		{"contiguous", Options{Layout: "contiguous"}},
		{"chunked", Options{Layout: "chunked", ChunkShape: []int64{32, 32, 32}}},
		{"compressed", Options{Layout: "chunked", ChunkShape: []int64{32, 32, 32}, Deflate: 1}},
		{"merged", Options{Layout: planner.Merged, Merge: MergeOptions{Scope: planner.ScopeRank}}},
	} {
		b.Run(l.name, func(b *testing.B) {
			b.SetBytes(a.Bytes())
			b.ReportAllocs()
			for i := range b.N {
				opts := l.opts
				opts.Jobs, opts.Version = 2, "bench"
				src.mu.Lock()
				src.reads = nil
				src.mu.Unlock()
				if _, err := Run(context.Background(), st, src, filepath.Join(dir, fmt.Sprintf("%s-%d", l.name, i)), opts); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
