package chunkindex

import (
	"os"
	"path/filepath"
	"testing"

	"relayout/internal/h5"
)

// genBench writes one fully written chunked dataset per file: 4,096 chunks
// (64³ float32 in 4³ chunks) and 32,768 chunks (256³ uint8 in 8³ chunks, the
// shape of GUIDE §6's measurement scaled down in bytes), default format
// (version 1 B-tree) and libver='latest' (fixed array).
const genBench = `
import sys, h5py, numpy as np
d = sys.argv[1]
for libver, suffix in [('earliest', ''), ('latest', '-latest')]:
    with h5py.File(d + '/c4096' + suffix + '.h5', 'w', libver=libver) as f:
        f.create_dataset('a', shape=(64, 64, 64), chunks=(4, 4, 4), dtype='f4')[...] = 1
    with h5py.File(d + '/c32768' + suffix + '.h5', 'w', libver=libver) as f:
        f.create_dataset('a', shape=(256, 256, 256), chunks=(8, 8, 8), dtype='u1')[...] = 1
`

func benchFiles(b *testing.B) string {
	dir := b.TempDir()
	runPython(b, genBench, dir)
	return dir
}

func benchNative(b *testing.B, path string, want int) {
	addr := objAddr(b, path, "/a")
	fh, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		n := 0
		if err := List(fh, st.Size(), addr, func(Chunk) error { n++; return nil }); err != nil {
			b.Fatal(err)
		}
		if n != want {
			b.Fatalf("%d chunks, want %d", n, want)
		}
	}
	b.ReportMetric(float64(want)*float64(b.N)/b.Elapsed().Seconds(), "chunks/s")
}

// BenchmarkList lists 4,096 chunks through the native parser.
func BenchmarkList(b *testing.B) {
	dir := benchFiles(b)
	b.Run("btree1-4096", func(b *testing.B) { benchNative(b, filepath.Join(dir, "c4096.h5"), 4096) })
	b.Run("fixedarray-4096", func(b *testing.B) { benchNative(b, filepath.Join(dir, "c4096-latest.h5"), 4096) })
	b.Run("btree1-32768", func(b *testing.B) { benchNative(b, filepath.Join(dir, "c32768.h5"), 32768) })
	b.Run("fixedarray-32768", func(b *testing.B) { benchNative(b, filepath.Join(dir, "c32768-latest.h5"), 32768) })
}

// BenchmarkLibraryChunks is the comparison point: the same 32,768 chunks
// through H5Dget_chunk_info (quadratic; run it with -benchtime=1x).
func BenchmarkLibraryChunks(b *testing.B) {
	dir := benchFiles(b)
	for _, name := range []string{"c4096.h5", "c32768.h5"} {
		b.Run(name, func(b *testing.B) {
			f, err := h5.Open(filepath.Join(dir, name))
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			b.ReportAllocs()
			b.ResetTimer()
			n := 0
			for b.Loop() {
				n = 0
				if err := f.Chunks("/a", func(h5.Chunk) error { n++; return nil }); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "chunks/s")
		})
	}
}
