package blockio

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"relayout/catalog"
)

// TestReadBlocksRunCache: two arrays whose 512-byte blocks alternate in one
// file, read one after the other through one run cache: the first read's
// coalesced run holds the second array's blocks, which are then served
// from the cache (no pread), every block's bytes as stored; a block the
// first run did not reach is read alone.
func TestReadBlocksRunCache(t *testing.T) {
	dir := t.TempDir()
	const n, size = 16, 512
	data := make([]byte, (2*n+1)*size)
	for i := range data {
		data[i] = byte(i * 7 / size)
	}
	if err := os.WriteFile(filepath.Join(dir, "d"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	var a, b []*catalog.Block
	for i := 0; i < n; i++ {
		a = append(a, &catalog.Block{Box: catalog.Box{Lower: []int64{0}, Count: []int64{size}}, File: "d", Offset: int64(2*i) * size, Length: size})
		b = append(b, &catalog.Block{Box: catalog.Box{Lower: []int64{0}, Count: []int64{size}}, File: "d", Offset: int64(2*i+1) * size, Length: size})
	}
	b = append(b, &catalog.Block{Box: catalog.Box{Lower: []int64{0}, Count: []int64{size}}, File: "d", Offset: 2 * n * size, Length: size}) // past a's run
	src := NewSource(NewFiles(dir, 2))
	dt := catalog.DType{Kind: catalog.Uint, Size: 1}
	cache := catalog.NewRunCache()
	var allocs, frees int
	cache.Alloc = func(n int64) ([]byte, error) { allocs++; return make([]byte, n), nil }
	cache.Free = func([]byte) { frees++ }
	ctx := catalog.WithRunCache(context.Background(), cache)
	check := func(blocks []*catalog.Block) {
		t.Helper()
		seen := 0
		err := src.ReadBlocks(ctx, blocks, dt, func(i int, got []byte) error {
			seen++
			if o := blocks[i].Offset; !bytes.Equal(got, data[o:o+size]) {
				t.Errorf("block at %d: wrong bytes", o)
			}
			return nil
		})
		if err != nil || seen != len(blocks) {
			t.Fatalf("ReadBlocks: %v, %d of %d blocks", err, seen, len(blocks))
		}
	}
	check(a)
	after := src.IOStats()
	if after.ReadCalls != 1 || after.ReadBytes != (2*n-1)*size {
		t.Fatalf("first array: %d calls, %d bytes; want 1 run of %d", after.ReadCalls, after.ReadBytes, (2*n-1)*size)
	}
	check(b)
	c := src.IOStats()
	if c.ReadCalls-after.ReadCalls != 1 || c.ReadBytes-after.ReadBytes != 2*size {
		t.Errorf("second array: %d calls, %d bytes; want the 2 blocks the first run lacked in 1 call",
			c.ReadCalls-after.ReadCalls, c.ReadBytes-after.ReadBytes)
	}
	if cache.Bytes() != int64(len(data)) {
		t.Errorf("cache holds %d bytes, want %d", cache.Bytes(), len(data))
	}
	cache.Close()
	if allocs != 2 || frees != 2 || cache.Bytes() != 0 {
		t.Errorf("%d buffers allocated, %d freed, %d bytes left", allocs, frees, cache.Bytes())
	}
}
