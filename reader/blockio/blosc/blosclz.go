package blosc

// BloscLZ, Blosc's own LZ77 codec (a FastLZ level-1 derivative). A stream is
// a sequence of tokens; the first byte's low 5 bits are the first token
// (its top 3 bits mark the format), every later token is one byte:
//
//	literal run   ctrl < 32:  ctrl+1 literal bytes follow
//	match         ctrl >= 32: len3 = ctrl>>5, dist = (ctrl&31)<<8
//	              len3 == 7:  more length bytes follow, each added, until
//	                          one is not 255
//	              next byte:  low distance byte; distance = dist + byte + 1,
//	              except when dist == 31<<8 and the byte is 255: a 16-bit
//	              big-endian distance d follows and distance = d + 8191 + 1
//	              match length = len3 - 1 (+ length bytes) + 3, copied
//	              forward byte by byte from distance bytes back (overlap
//	              repeats).
//
//	+------+-----------+------+----------+-----+
//	| ctrl | literals  | ctrl | len, ofs | ... |
//	+------+-----------+------+----------+-----+
//
// The stream ends when the input does; a match token must be followed by
// another token (the reference decoder stops before a final match).

const blosclzFarDistance = 8191

// BloscLZ decompresses src into dst and returns the number of bytes
// written; it fails (never panics) when the stream is malformed or would
// write past len(dst).
func BloscLZ(dst, src []byte) (int, error) {
	if len(src) == 0 {
		return 0, corrupt("blosclz: empty stream")
	}
	ip, op := 1, 0
	ctrl := int(src[0] & 31)
	for {
		if ctrl >= 32 {
			length := ctrl>>5 - 1
			dist := (ctrl & 31) << 8
			if length == 6 {
				for {
					if ip+1 >= len(src) {
						return op, corrupt("blosclz: match length past the end of the stream at %d", ip)
					}
					c := int(src[ip])
					ip++
					length += c
					if c != 255 {
						break
					}
				}
			} else if ip+1 >= len(src) {
				return op, corrupt("blosclz: match past the end of the stream at %d", ip)
			}
			code := int(src[ip])
			ip++
			length += 3
			back := dist + code
			if code == 255 && dist == 31<<8 {
				if ip+1 >= len(src) {
					return op, corrupt("blosclz: far distance past the end of the stream at %d", ip)
				}
				back = int(src[ip])<<8 | int(src[ip+1]) + blosclzFarDistance
				ip += 2
			}
			back++
			if op+length > len(dst) {
				return op, corrupt("blosclz: match of %d bytes at %d past the %d-byte output", length, op, len(dst))
			}
			if back > op {
				return op, corrupt("blosclz: match %d bytes back at output %d", back, op)
			}
			if ip >= len(src) {
				break
			}
			ctrl = int(src[ip])
			ip++
			ref := op - back
			if back >= length {
				copy(dst[op:op+length], dst[ref:ref+length])
			} else {
				for i := range length {
					dst[op+i] = dst[ref+i]
				}
			}
			op += length
		} else {
			n := ctrl + 1
			if op+n > len(dst) {
				return op, corrupt("blosclz: %d literals at %d past the %d-byte output", n, op, len(dst))
			}
			if ip+n > len(src) {
				return op, corrupt("blosclz: %d literals at %d past the end of the stream", n, ip)
			}
			copy(dst[op:], src[ip:ip+n])
			op += n
			ip += n
			if ip >= len(src) {
				break
			}
			ctrl = int(src[ip])
			ip++
		}
	}
	return op, nil
}
