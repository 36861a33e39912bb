package blosc

// ADIOS2's blosc operator buffer (source/adios2/operator/compress/
// CompressBlosc.cpp), integers in the writer's byte order unless said:
//
//	ADIOS2 >= 2.8 (buffer version 1), Framing.Word = the writer's size_t width:
//
//	 0      1        2          4                 4+W      4+W+3
//	+------+--------+----------+-----------------+--------+-------------+---------+
//	| type | buffer | reserved | original size   | blosc  | DataHeader  | payload |
//	| 0    | ver. 1 | 2 bytes  | size_t (W bytes)| x.y.z  | (8 bytes)   |         |
//	+------+--------+----------+-----------------+--------+-------------+---------+
//
//	ADIOS2 2.7 (and the 2.6 chunked format), Framing.Word = 0:
//
//	+-------------+---------+
//	| DataHeader  | payload |
//	+-------------+---------+
//
//	DataHeader: u32 format (0 = chunked), u32 chunk count.
//	  format 0, count 0: payload = the original bytes, stored raw (blocks
//	                     under the operator's threshold, 128 bytes by default)
//	  format 0, count n: payload = n Blosc chunks back to back, each of at
//	                     most 2^31-33 original bytes (c-blosc1 chunks from 2.7,
//	                     c-blosc2 chunks from 2.10)
//	  format != 0:       no DataHeader at all: the buffer is one bare Blosc
//	                     chunk (ADIOS2 before 2.6), whose first 4 bytes are
//	                     never all zero (the chunk's version byte is >= 1).

import (
	"encoding/binary"
	"fmt"
)

// Framing says how the ADIOS2 writer framed the operator buffer.
type Framing struct {
	Word      int  // 0: no common operator header (ADIOS2 <= 2.7); 4 or 8: its size_t width
	BigEndian bool // the writer's byte order, for the ADIOS2 fields (Blosc's own are little-endian)
}

// ADIOS2 decodes one ADIOS2 blosc operator buffer that must hold exactly
// want original bytes.
func ADIOS2(src []byte, fr Framing, want int64) ([]byte, error) {
	var bo binary.ByteOrder = binary.LittleEndian
	if fr.BigEndian {
		bo = binary.BigEndian
	}
	off := 0
	if fr.Word != 0 {
		if fr.Word != 4 && fr.Word != 8 {
			return nil, corrupt("adios2 operator header with a %d-byte size_t", fr.Word)
		}
		if len(src) < 4+fr.Word+3 {
			return nil, corrupt("adios2 operator header truncated (%d bytes)", len(src))
		}
		if src[0] != 0 {
			return nil, corrupt("adios2 operator type %d, not blosc (0)", src[0])
		}
		if src[1] != 1 {
			return nil, unsupported("adios2 blosc buffer version %d (relayout reads 1)", src[1])
		}
		var size uint64
		if fr.Word == 4 {
			size = uint64(bo.Uint32(src[4:]))
		} else {
			size = bo.Uint64(src[4:])
		}
		if size != uint64(want) {
			return nil, corrupt("adios2 operator header says %d original bytes, the block holds %d", size, want)
		}
		off = 4 + fr.Word + 3
	}
	if len(src)-off < 8 {
		return nil, corrupt("adios2 blosc buffer of %d bytes after its header", len(src)-off)
	}
	if bo.Uint32(src[off:]) != 0 {
		// A bare chunk (before ADIOS2 2.6).
		return Decode(src[off:], int(min(want, 1<<31)))
	}
	nchunks := int64(bo.Uint32(src[off+4:]))
	payload := src[off+8:]
	if nchunks == 0 {
		if int64(len(payload)) != want {
			return nil, corrupt("adios2 blosc raw block of %d bytes, want %d", len(payload), want)
		}
		return payload, nil
	}
	if int64(len(payload)) < nchunks*minHeader {
		return nil, corrupt("%d chunks in %d bytes", nchunks, len(payload))
	}
	dst := make([]byte, want)
	pos, in := int64(0), 0
	for c := range nchunks {
		nb, _, err := Sizes(payload[in:])
		if err != nil {
			return nil, fmt.Errorf("chunk %d at byte %d: %w", c, off+8+in, err)
		}
		if int64(nb) > want-pos {
			return nil, corrupt("chunk %d at byte %d holds %d bytes, %d left of %d", c, off+8+in, nb, want-pos, want)
		}
		cb, err := DecodeInto(dst[pos:pos+int64(nb)], payload[in:])
		if err != nil {
			return nil, fmt.Errorf("chunk %d at byte %d: %w", c, off+8+in, err)
		}
		pos += int64(nb)
		in += cb
	}
	if pos != want || in != len(payload) {
		return nil, corrupt("%d chunks decode to %d of %d bytes using %d of %d bytes", nchunks, pos, want, in, len(payload))
	}
	return dst, nil
}
