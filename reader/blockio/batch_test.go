package blockio

import (
	"bytes"
	"compress/zlib"
	"context"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"runtime"
	"testing"

	"relayout/catalog"
)

// TestReadBlocksMatchesReadBlock lays out blocks back to back, with small and
// large gaps, some deflated, over two files, and checks that the coalesced
// reads decode every block exactly as one-by-one reads do.
func TestReadBlocksMatchesReadBlock(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(7, 7))
	dt := catalog.DType{Kind: catalog.Float, Size: 8}
	files := map[string]*bytes.Buffer{"a.bin": {}, "b.bin": {}}
	var blocks []*catalog.Block
	var want [][]byte
	for i := 0; i < 60; i++ {
		name := "a.bin"
		if i >= 40 {
			name = "b.bin"
		}
		buf := files[name]
		switch i % 7 { // gaps: none, small (coalesced), large (a new run)
		case 3:
			buf.Write(make([]byte, 100))
		case 5:
			buf.Write(make([]byte, catalog.CoalesceGap+1))
		}
		n := int64(1 + rng.IntN(50))
		raw := make([]byte, 0, n*8)
		for k := int64(0); k < n; k++ {
			raw = binary.LittleEndian.AppendUint64(raw, rng.Uint64())
		}
		b := &catalog.Block{Box: catalog.Box{Lower: []int64{0}, Count: []int64{n}}, File: name, Offset: int64(buf.Len()), Rank: -1}
		stored := raw
		if i%4 == 1 {
			var z bytes.Buffer
			w := zlib.NewWriter(&z)
			w.Write(raw)
			w.Close()
			stored = z.Bytes()
			b.Codecs = []catalog.Codec{{Name: "deflate", Params: []uint32{6}}}
		}
		b.Length = int64(len(stored))
		buf.Write(stored)
		blocks = append(blocks, b)
		want = append(want, raw)
	}
	for name, buf := range files {
		writeFile(t, dir, name, buf.Bytes())
	}
	src := NewSource(NewFiles(dir, 2))
	// Prefetch is a hint: blocks it cannot find (a missing file, a name
	// outside the root, inline bytes, past the end) are skipped, and the
	// reads that follow see the same bytes, through a pool of two files
	// that Prefetch hands back.
	hints := append([]*catalog.Block{
		{File: "missing.bin", Offset: 0, Length: 10},
		{File: "../outside.bin", Offset: 0, Length: 10},
		new(catalog.Block{File: "a.bin"}.WithInline([]byte{1, 2, 3})),
		{File: "b.bin", Offset: 1 << 40, Length: 1 << 20},
	}, blocks...)
	src.Prefetch(context.Background(), hints)
	got := make([][]byte, len(blocks))
	err := src.ReadBlocks(context.Background(), catalog.Reads{Blocks: blocks, DTypes: []catalog.DType{dt}}, func(i int, data []byte) error {
		if got[i] != nil {
			t.Errorf("block %d delivered twice", i)
		}
		got[i] = append([]byte(nil), data...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := range blocks {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("block %d: coalesced read differs", i)
		}
		one, err := catalog.ReadBlock(context.Background(), src, blocks[i], dt)
		if err != nil || !bytes.Equal(one, want[i]) {
			t.Fatalf("block %d: ReadBlock differs: %v", i, err)
		}
	}

	// Destinations: every other block, raw or deflated, lands in its own
	// buffer, which fn gets (the others in the run buffer, as before); a
	// destination of the wrong size is corrupt input named by its file.
	r := catalog.Reads{Blocks: blocks, DTypes: []catalog.DType{dt}, Into: make([][]byte, len(blocks))}
	for i := range blocks {
		if i%2 == 0 {
			r.Into[i] = make([]byte, len(want[i]))
		}
	}
	err = src.ReadBlocks(context.Background(), r, func(i int, data []byte) error {
		if dst := r.Into[i]; dst != nil && &data[0] != &dst[0] {
			t.Errorf("block %d (codecs %v): not handed over in its destination", i, blocks[i].Codecs)
		}
		if !bytes.Equal(data, want[i]) {
			t.Errorf("block %d (codecs %v): read into place differs", i, blocks[i].Codecs)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{0, 1} { // raw, deflated
		short := catalog.Reads{Blocks: blocks[i : i+1], DTypes: []catalog.DType{dt}, Into: [][]byte{make([]byte, len(want[i])-8)}}
		err := src.ReadBlocks(context.Background(), short, func(int, []byte) error { return nil })
		if !errors.Is(err, catalog.ErrCorrupt) || !bytes.Contains([]byte(err.Error()), []byte("a.bin")) {
			t.Errorf("block %d into %d bytes of %d: %v", i, len(want[i])-8, len(want[i]), err)
		}
	}

	// A block past the end of its file fails the batch with the file named.
	bad := *blocks[len(blocks)-1]
	bad.Offset += 1 << 20
	err = src.ReadBlocks(context.Background(), catalog.Reads{Blocks: append(blocks[40:], &bad), DTypes: []catalog.DType{dt}}, func(int, []byte) error { return nil })
	if !errors.Is(err, catalog.ErrCorrupt) || !bytes.Contains([]byte(err.Error()), []byte("b.bin")) {
		t.Fatalf("past end: %v", err)
	}
}

// TestRunBuffersSurviveGC: a run buffer handed back is reused by the next run
// of a similar length even after a garbage collection (a sync.Pool would have
// dropped it, and every run would allocate and zero a new one), and the free
// list never keeps more than keptRunBytes.
func TestRunBuffersSurviveGC(t *testing.T) {
	b := getRun(1<<20, 16<<20)
	putRun(b)
	runtime.GC()
	runtime.GC()
	c := getRun(1<<20-4096, 16<<20)
	if &c[0] != &b[0] {
		t.Fatal("a kept run buffer was not reused after a collection")
	}
	putRun(c)
	for range 200 {
		putRun(make([]byte, 1<<20))
	}
	runs.Lock()
	kept := runs.bytes
	var sum int64
	for _, f := range runs.free {
		sum += int64(cap(f))
	}
	runs.Unlock()
	if kept > keptRunBytes || sum != kept {
		t.Fatalf("free list holds %d bytes (counted %d), limit %d", sum, kept, keptRunBytes)
	}
}
