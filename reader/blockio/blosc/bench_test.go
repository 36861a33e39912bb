package blosc

import "testing"

// BenchmarkUnshuffle8 is the byte unshuffle of a 256 KiB float64 block.
func BenchmarkUnshuffle8(b *testing.B) {
	src := make([]byte, 256<<10)
	for i := range src {
		src[i] = byte(i * 7)
	}
	dst := make([]byte, len(src))
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for range b.N {
		unshuffle(dst, src, 8)
	}
}

// BenchmarkBitunshuffle8 is the bit unshuffle of a 256 KiB float64 block.
func BenchmarkBitunshuffle8(b *testing.B) {
	src := make([]byte, 256<<10)
	for i := range src {
		src[i] = byte(i * 7)
	}
	dst := make([]byte, len(src))
	scratch := make([]byte, len(src))
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for range b.N {
		bitunshuffle(dst, src, scratch, 8)
	}
}
