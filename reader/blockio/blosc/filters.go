package blosc

import "encoding/binary"

// The filters undone after a block is decompressed, each over one block of
// n bytes holding n/ts elements of ts bytes (bytes past the last whole
// element, or past the last multiple of 8 elements for the bit shuffle, are
// stored unfiltered):
//
//	byte shuffle   stored: byte 0 of every element, byte 1 of every element, ...
//
//	bit shuffle    stored: 8*ts rows of N/8 bytes (N = elements, a multiple
//	               of 8); row 8*j+k holds bit k of byte j of element i at
//	               bit i%8 of byte i/8.
//
//	delta          stored: block 0 as x[i] XOR x[i-1] (x[-1] absent), every
//	               other block as x XOR (block 0 decoded), in words of ts
//	               bytes (ts 1, 2, 4, 8; 8 for other multiples of 8, else 1).

// unshuffle writes into dst (len(src) bytes) the byte-unshuffled src.
func unshuffle(dst, src []byte, ts int) {
	n := len(src) / ts
	if ts <= 1 || n <= 1 {
		copy(dst, src)
		return
	}
	switch ts {
	case 8: // one 8-byte store per element, the planes read in step
		p0, p1, p2, p3 := src[:n], src[n:2*n], src[2*n:3*n], src[3*n:4*n]
		p4, p5, p6, p7 := src[4*n:5*n], src[5*n:6*n], src[6*n:7*n], src[7*n:8*n]
		d := dst[:8*n]
		for i := range p0 {
			v := uint64(p0[i]) | uint64(p1[i])<<8 | uint64(p2[i])<<16 | uint64(p3[i])<<24 |
				uint64(p4[i])<<32 | uint64(p5[i])<<40 | uint64(p6[i])<<48 | uint64(p7[i])<<56
			binary.LittleEndian.PutUint64(d[8*i:], v)
		}
	case 4:
		p0, p1, p2, p3 := src[:n], src[n:2*n], src[2*n:3*n], src[3*n:4*n]
		d := dst[:4*n]
		for i := range p0 {
			binary.LittleEndian.PutUint32(d[4*i:], uint32(p0[i])|uint32(p1[i])<<8|uint32(p2[i])<<16|uint32(p3[i])<<24)
		}
	case 2:
		p0, p1 := src[:n], src[n:2*n]
		d := dst[:2*n]
		for i := range p0 {
			binary.LittleEndian.PutUint16(d[2*i:], uint16(p0[i])|uint16(p1[i])<<8)
		}
	default:
		for j := range ts {
			plane := src[j*n : (j+1)*n]
			for i, b := range plane {
				dst[i*ts+j] = b
			}
		}
	}
	copy(dst[n*ts:len(src)], src[n*ts:])
}

// bitunshuffle is c-blosc2's (format >= 3): whole groups of 8 elements are
// bit-unshuffled, the rest copied.
func bitunshuffle(dst, src []byte, ts int) {
	n := len(src) / ts
	n -= n % 8
	untransBits(dst, src, n, ts)
	copy(dst[n*ts:len(src)], src[n*ts:])
}

// bitunshuffle1 is c-blosc1's (format <= 2): a block whose element count is
// not a multiple of 8 was stored unshuffled.
func bitunshuffle1(dst, src []byte, ts int) {
	n := len(src) / ts
	if n%8 != 0 {
		copy(dst, src[:len(dst)])
		return
	}
	untransBits(dst, src, n, ts)
	copy(dst[n*ts:len(src)], src[n*ts:])
}

// untransBits undoes the bit transpose of n elements (n a multiple of 8) of
// ts bytes: 8 elements at a time, the 8 bytes holding bit 0..7 of their byte
// j form an 8x8 bit matrix that is transposed.
func untransBits(dst, src []byte, n, ts int) {
	row := n / 8
	for j := range ts {
		base := 8 * j * row
		for g := range row {
			var x uint64
			for k := range 8 {
				x |= uint64(src[base+k*row+g]) << (8 * k)
			}
			x = transpose8(x)
			for m := range 8 {
				dst[(8*g+m)*ts+j] = byte(x >> (8 * m))
			}
		}
	}
}

// transpose8 transposes the 8x8 bit matrix x whose byte r is row r (bit c
// of byte r = element (r, c)): the result's byte c holds column c.
func transpose8(x uint64) uint64 {
	t := (x ^ (x >> 7)) & 0x00AA00AA00AA00AA
	x = x ^ t ^ (t << 7)
	t = (x ^ (x >> 14)) & 0x0000CCCC0000CCCC
	x = x ^ t ^ (t << 14)
	t = (x ^ (x >> 28)) & 0x00000000F0F0F0F0
	x = x ^ t ^ (t << 28)
	return x
}

// undelta decodes the delta filter in place on chunk[offset:offset+n]; for
// offset > 0 the reference is chunk's first block, already decoded.
func undelta(chunk []byte, offset, n, ts int) {
	u := ts
	switch {
	case ts == 1 || ts == 2 || ts == 4 || ts == 8:
	case ts%8 == 0:
		u = 8
	default:
		u = 1
	}
	end := n / u * u
	if offset == 0 {
		for b := u; b < end; b++ {
			chunk[b] ^= chunk[b-u]
		}
		return
	}
	blk := chunk[offset : offset+n]
	for b := range end {
		blk[b] ^= chunk[b]
	}
}
