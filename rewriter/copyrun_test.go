package rewriter

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// TestCopyRunSwap: copyRun against the plain definition (element k of dst
// is element k*stride of src, its bytes reversed when swap) for every
// element size, strides 1 and 3, and run lengths that end inside a word.
func TestCopyRunSwap(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, size := range []int{1, 2, 4, 8} {
		for _, stride := range []int64{1, 3} {
			for _, n := range []int64{0, 1, 2, 3, 5, 8, 17, 1000} {
				for _, swap := range []bool{false, true} {
					src := make([]byte, int(n*stride)*size+size)
					for i := range src {
						src[i] = byte(r.Uint32())
					}
					want := make([]byte, int(n)*size)
					for k := range int(n) {
						e := src[int64(k)*stride*int64(size):][:size]
						for j := range size {
							if swap {
								want[k*size+j] = e[size-1-j]
							} else {
								want[k*size+j] = e[j]
							}
						}
					}
					got := make([]byte, len(want))
					copyRun(got, src, n, stride, size, swap)
					if !bytes.Equal(got, want) {
						t.Errorf("size %d stride %d n %d swap %v: %x, want %x", size, stride, n, swap, got, want)
					}
				}
			}
		}
	}
}

// BenchmarkCopyRunSwap: a 1 MiB run of big-endian float32 into little-endian.
func BenchmarkCopyRunSwap(b *testing.B) {
	src := make([]byte, 1<<20)
	dst := make([]byte, len(src))
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		copyRun(dst, src, int64(len(src)/4), 1, 4, true)
	}
}
