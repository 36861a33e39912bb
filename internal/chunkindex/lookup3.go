package chunkindex

import (
	"math/bits"

	"relayout/catalog"
)

// lookup3 is Bob Jenkins' lookup3 hash ("hashlittle", public domain), the
// checksum of HDF5's version 2 structures (v2 B-tree headers and nodes,
// version 2 object headers and their continuation blocks), with an initial
// value of 0. Bytes are taken little-endian in 12-byte rounds; the last
// 1-12 bytes are added byte by byte before the final mix.
func lookup3(k []byte, initval uint32) uint32 {
	a := 0xdeadbeef + uint32(len(k)) + initval
	b, c := a, a
	for len(k) > 12 {
		a += uint32(k[0]) | uint32(k[1])<<8 | uint32(k[2])<<16 | uint32(k[3])<<24
		b += uint32(k[4]) | uint32(k[5])<<8 | uint32(k[6])<<16 | uint32(k[7])<<24
		c += uint32(k[8]) | uint32(k[9])<<8 | uint32(k[10])<<16 | uint32(k[11])<<24
		a -= c
		a ^= bits.RotateLeft32(c, 4)
		c += b
		b -= a
		b ^= bits.RotateLeft32(a, 6)
		a += c
		c -= b
		c ^= bits.RotateLeft32(b, 8)
		b += a
		a -= c
		a ^= bits.RotateLeft32(c, 16)
		c += b
		b -= a
		b ^= bits.RotateLeft32(a, 19)
		a += c
		c -= b
		c ^= bits.RotateLeft32(b, 4)
		b += a
		k = k[12:]
	}
	if len(k) == 0 {
		return c
	}
	var tail [12]byte
	copy(tail[:], k)
	a += uint32(tail[0]) | uint32(tail[1])<<8 | uint32(tail[2])<<16 | uint32(tail[3])<<24
	b += uint32(tail[4]) | uint32(tail[5])<<8 | uint32(tail[6])<<16 | uint32(tail[7])<<24
	c += uint32(tail[8]) | uint32(tail[9])<<8 | uint32(tail[10])<<16 | uint32(tail[11])<<24
	c ^= b
	c -= bits.RotateLeft32(b, 14)
	a ^= c
	a -= bits.RotateLeft32(c, 11)
	b ^= a
	b -= bits.RotateLeft32(a, 25)
	c ^= b
	c -= bits.RotateLeft32(b, 16)
	a ^= c
	a -= bits.RotateLeft32(c, 4)
	b ^= a
	b -= bits.RotateLeft32(a, 14)
	c ^= b
	c -= bits.RotateLeft32(b, 24)
	return c
}

// checksum verifies that the 4 bytes after b[:n] hold lookup3 of b[:n].
func checksum(b []byte, n int, at int64, what string) error {
	if n < 0 || n+4 > len(b) {
		return catalog.Corrupt("hdf5", "", int64(at), "%s: no room for its checksum", what)
	}
	want := uint32(b[n]) | uint32(b[n+1])<<8 | uint32(b[n+2])<<16 | uint32(b[n+3])<<24
	if got := lookup3(b[:n], 0); got != want {
		return catalog.Corrupt("hdf5", "", int64(at), "%s: checksum %#08x, computed %#08x", what, want, got)
	}
	return nil
}
