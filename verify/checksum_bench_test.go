package verify

import (
	"crypto/sha256"
	"testing"
)

func BenchmarkPolyBand(b *testing.B) {
	f := newFields().of(8)
	data := make([]byte, 8<<20)
	for i := range data {
		data[i] = byte(i * 7)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		f.poly(data, 8)
	}
}

func BenchmarkPolyRow4(b *testing.B) {
	f := newFields().of(8)
	data := make([]byte, 32)
	b.SetBytes(32)
	for b.Loop() {
		f.poly(data, 8)
	}
}

func BenchmarkSHA256Band(b *testing.B) {
	data := make([]byte, 8<<20)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		sha256.Sum256(data)
	}
}
