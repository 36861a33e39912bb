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
		p0 := src[:n]
		p1, p2, p3 := src[n : 2*n][:len(p0)], src[2*n : 3*n][:len(p0)], src[3*n : 4*n][:len(p0)]
		p4, p5, p6, p7 := src[4*n : 5*n][:len(p0)], src[5*n : 6*n][:len(p0)], src[6*n : 7*n][:len(p0)], src[7*n : 8*n][:len(p0)]
		d := dst[:8*len(p0)]
		for i := range p0 {
			v := uint64(p0[i]) | uint64(p1[i])<<8 | uint64(p2[i])<<16 | uint64(p3[i])<<24 |
				uint64(p4[i])<<32 | uint64(p5[i])<<40 | uint64(p6[i])<<48 | uint64(p7[i])<<56
			binary.LittleEndian.PutUint64(d[8*i:8*i+8], v)
		}
	case 4:
		p0, p1, p2, p3 := src[:n], src[n:2*n], src[2*n:3*n], src[3*n:4*n]
		p1, p2, p3 = p1[:len(p0)], p2[:len(p0)], p3[:len(p0)]
		d := dst[:4*len(p0)]
		for i := range p0 {
			binary.LittleEndian.PutUint32(d[4*i:4*i+4], uint32(p0[i])|uint32(p1[i])<<8|uint32(p2[i])<<16|uint32(p3[i])<<24)
		}
	case 2:
		p0, p1 := src[:n], src[n:2*n]
		p1 = p1[:len(p0)]
		d := dst[:2*len(p0)]
		for i := range p0 {
			binary.LittleEndian.PutUint16(d[2*i:2*i+2], uint16(p0[i])|uint16(p1[i])<<8)
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

// transposeBytes transposes the 8x8 byte matrix whose row k is r[k] (byte m
// of r[k], little-endian, is column m): afterwards r[m] holds column m.
func transposeBytes(r *[8]uint64) {
	const m1, m2, m4 = 0x00FF00FF00FF00FF, 0x0000FFFF0000FFFF, 0x00000000FFFFFFFF
	r[0], r[1] = swapBytes(r[0], r[1], 8, m1)
	r[2], r[3] = swapBytes(r[2], r[3], 8, m1)
	r[4], r[5] = swapBytes(r[4], r[5], 8, m1)
	r[6], r[7] = swapBytes(r[6], r[7], 8, m1)
	r[0], r[2] = swapBytes(r[0], r[2], 16, m2)
	r[1], r[3] = swapBytes(r[1], r[3], 16, m2)
	r[4], r[6] = swapBytes(r[4], r[6], 16, m2)
	r[5], r[7] = swapBytes(r[5], r[7], 16, m2)
	r[0], r[4] = swapBytes(r[0], r[4], 32, m4)
	r[1], r[5] = swapBytes(r[1], r[5], 32, m4)
	r[2], r[6] = swapBytes(r[2], r[6], 32, m4)
	r[3], r[7] = swapBytes(r[3], r[7], 32, m4)
}

// swapBytes exchanges the blocks of a's upper and b's lower halves of every
// 2*sh-bit group (one step of the recursive transpose).
func swapBytes(a, b uint64, sh uint, m uint64) (uint64, uint64) {
	t := (a>>sh ^ b) & m
	return a ^ t<<sh, b ^ t
}

// bitunshuffle is c-blosc2's (format >= 3): whole groups of 8 elements are
// bit-unshuffled, the rest copied. scratch holds at least len(src) bytes.
func bitunshuffle(dst, src, scratch []byte, ts int) {
	n := len(src) / ts
	n -= n % 8
	untransBits(dst, src, scratch, n, ts)
	copy(dst[n*ts:len(src)], src[n*ts:])
}

// bitunshuffle1 is c-blosc1's (format <= 2): a block whose element count is
// not a multiple of 8 was stored unshuffled.
func bitunshuffle1(dst, src, scratch []byte, ts int) {
	n := len(src) / ts
	if n%8 != 0 {
		copy(dst, src[:len(dst)])
		return
	}
	untransBits(dst, src, scratch, n, ts)
	copy(dst[n*ts:len(src)], src[n*ts:])
}

// untransBits undoes the bit transpose of n elements (n a multiple of 8) of
// ts bytes into dst. Per byte plane j, the 8 bytes holding bits 0..7 of
// byte j of 8 elements form an 8x8 bit matrix that is transposed into the
// plane's 8 bytes (in scratch, byte-shuffled order), 8 groups at a time;
// the planes are then byte-unshuffled into dst.
func untransBits(dst, src, scratch []byte, n, ts int) {
	if n == 0 {
		return
	}
	row := n / 8
	planes := scratch[:n*ts]
	for j := range ts {
		rows := src[8*j*row : 8*(j+1)*row]
		out := planes[j*n : (j+1)*n]
		g := 0
		for ; g+8 <= row; g += 8 {
			var r [8]uint64
			for k := range 8 {
				r[k] = binary.LittleEndian.Uint64(rows[k*row+g : k*row+g+8])
			}
			transposeBytes(&r)
			for q := range 8 {
				binary.LittleEndian.PutUint64(out[8*(g+q):8*(g+q)+8], transpose8(r[q]))
			}
		}
		for ; g < row; g++ {
			var x uint64
			for k := range 8 {
				x |= uint64(rows[k*row+g]) << (8 * k)
			}
			binary.LittleEndian.PutUint64(out[8*g:8*g+8], transpose8(x))
		}
	}
	unshuffle(dst[:n*ts], planes, ts)
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
