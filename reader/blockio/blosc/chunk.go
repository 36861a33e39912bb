package blosc

// A Blosc chunk, all integers little-endian (c-blosc README_CHUNK_FORMAT):
//
//	c-blosc1 header, 16 bytes (format versions 1, 2; also blosc2 chunks
//	without the extended header):
//
//	 0        1          2      3          4        8           12       16
//	+--------+----------+------+----------+--------+-----------+--------+
//	|version |versionlz |flags |typesize  |nbytes  |blocksize  |cbytes  |
//	+--------+----------+------+----------+--------+-----------+--------+
//	flags: 0x01 byte shuffle, 0x02 memcpyed (the data follows raw),
//	       0x04 bit shuffle, 0x08 delta, 0x10 blocks not split into streams,
//	       bits 5-7 codec: 0 blosclz, 1 lz4/lz4hc, 2 snappy, 3 zlib, 4 zstd,
//	       6 user-defined (byte 25). 0x01|0x04 together with version >= 3
//	       means the extended header follows.
//
//	c-blosc2 extended header, bytes 16..31 (format versions 3..6; 6 marks
//	variable-length blocks, which relayout refuses):
//
//	 16               22        23             24                 30            31
//	+----------------+---------+--------------+------------------+-------------+-------------+
//	| filters[6]     |udcodec  |codec meta    | filters_meta[6]  |blosc2 flags2|blosc2 flags |
//	+----------------+---------+--------------+------------------+-------------+-------------+
//	filters (applied in index order when encoding): 0 none, 1 shuffle
//	(meta: bytes grouped, 0 = typesize), 2 bit shuffle, 3 delta, 4 truncated
//	precision (nothing to undo). flags2 0x01: variable-length blocks.
//	blosc2 flags: 0x01 dictionary, 0x08 lazy chunk, bits 4-6 special value
//	(1 zeros, 2 NaN, 3 one repeated value stored after the header, 4
//	uninitialised), 0x80 instrumented codec.
//
//	Body (not memcpyed, not special):
//
//	+-------------------------------+--------------+---------+-----+
//	| bstarts: int32 x nblocks      | [dict: int32 | block 0 | ... |
//	| (offset of each block from    |  size, bytes]|         |     |
//	|  the chunk start)             |              |         |     |
//	+-------------------------------+--------------+---------+-----+
//	nblocks = ceil(nbytes / blocksize); the last block may be shorter.
//
//	A block is split into typesize streams (byte j of every element in
//	stream j) unless flag 0x10 is set, it is the last short block, or (blosc1)
//	typesize > 16 or blocksize/typesize < 128. Each stream:
//
//	+---------------+----------------------+
//	| csize: int32  | csize compressed     |     csize == stream size: stored raw
//	+---------------+----------------------+     csize == 0 (blosc2): all zeros
//	                                             csize < 0 (blosc2): token byte;
//	                                             bit 0: every byte is -csize
//
//	A memcpyed chunk is the header then nbytes raw bytes (cbytes = header +
//	nbytes).

import (
	"encoding/binary"
	"fmt"

	"relayout/catalog"
)

const (
	minHeader = 16
	extHeader = 32

	flagShuffle    = 0x01
	flagMemcpyed   = 0x02
	flagBitshuffle = 0x04
	flagDelta      = 0x08
	flagNoSplit    = 0x10

	filterNone      = 0
	filterShuffle   = 1
	filterBitshuf   = 2
	filterDelta     = 3
	filterTruncPrec = 4

	maxBlock = 536866816 // BLOSC2_MAXBLOCKSIZE
)

// header is a parsed chunk header.
type header struct {
	version, versionlz, flags uint8
	typesize                  int
	nbytes, blocksize, cbytes int
	size                      int // header length: 16 or 32
	filters, filtersMeta      [6]uint8
	flags2, b2flags           uint8
	scratch                   []byte // bit unshuffle's planes, one block
}

// corrupt is damage inside a blosc buffer; the block's file and offset are
// added by blockio, which knows them.
func corrupt(format string, args ...any) error {
	return catalog.Corrupt("blosc", "", -1, format, args...)
}

func unsupported(format string, args ...any) error {
	return fmt.Errorf("blosc: %s: %w", fmt.Sprintf(format, args...), catalog.ErrUnsupported)
}

// parseHeader reads the header at the start of src and checks it against
// len(src).
func parseHeader(src []byte) (*header, error) {
	if len(src) < minHeader {
		return nil, corrupt("chunk of %d bytes, shorter than its 16-byte header", len(src))
	}
	h := &header{version: src[0], versionlz: src[1], flags: src[2], typesize: int(src[3]), size: minHeader}
	nb, bs, cb := int32(binary.LittleEndian.Uint32(src[4:])), int32(binary.LittleEndian.Uint32(src[8:])), int32(binary.LittleEndian.Uint32(src[12:]))
	if h.version == 0 || h.version > 6 {
		return nil, unsupported("chunk format version %d (relayout reads 1 to 6)", h.version)
	}
	if nb < 0 || cb < minHeader || bs < 0 || (nb > 0 && bs == 0) || bs > maxBlock {
		return nil, corrupt("chunk header: nbytes %d, blocksize %d, cbytes %d", nb, bs, cb)
	}
	h.nbytes, h.blocksize, h.cbytes = int(nb), int(bs), int(cb)
	if h.cbytes > len(src) {
		return nil, corrupt("chunk of %d bytes says it holds %d", len(src), h.cbytes)
	}
	if h.typesize == 0 {
		return nil, corrupt("chunk header: typesize 0")
	}
	if h.version >= 3 && h.flags&(flagShuffle|flagBitshuffle) == flagShuffle|flagBitshuffle {
		if h.cbytes < extHeader {
			return nil, corrupt("extended chunk header in %d bytes", h.cbytes)
		}
		h.size = extHeader
		copy(h.filters[:], src[16:22])
		copy(h.filtersMeta[:], src[24:30])
		h.flags2, h.b2flags = src[30], src[31]
		if src[2]>>5 == 6 {
			return nil, unsupported("user-defined codec %d", src[22])
		}
		if h.version == 3 { // alpha format: only 5 filter slots were initialised
			h.filters[5], h.filtersMeta[5] = 0, 0
		}
	} else {
		if h.flags&flagShuffle != 0 {
			h.filters[5] = filterShuffle
		}
		if h.flags&flagBitshuffle != 0 {
			h.filters[5] = filterBitshuf
		}
		if h.flags&flagDelta != 0 {
			h.filters[4] = filterDelta
		}
	}
	if h.blocksize > h.nbytes {
		h.blocksize = h.nbytes
	}
	return h, nil
}

func (h *header) special() int { return int(h.b2flags>>4) & 7 }

// Sizes returns the decoded size (nbytes) and stored size (cbytes, header
// included) that the chunk at the start of src declares.
func Sizes(src []byte) (nbytes, cbytes int, err error) {
	h, err := parseHeader(src)
	if err != nil {
		return 0, 0, err
	}
	return h.nbytes, h.cbytes, nil
}

// Decode decodes the one chunk that fills src and checks that it holds
// exactly want bytes (the memory cap: nothing is allocated beyond want).
func Decode(src []byte, want int) ([]byte, error) {
	nb, cb, err := Sizes(src)
	if err != nil {
		return nil, err
	}
	if nb != want {
		return nil, corrupt("chunk holds %d bytes, want %d", nb, want)
	}
	if cb != len(src) {
		return nil, corrupt("chunk of %d bytes followed by %d more", cb, len(src)-cb)
	}
	dst := make([]byte, want)
	if _, err := DecodeInto(dst, src); err != nil {
		return nil, err
	}
	return dst, nil
}

// DecodeInto decodes the chunk at the start of src into dst, which must be
// exactly as long as the chunk's nbytes, and returns the chunk's stored size
// (cbytes).
func DecodeInto(dst, src []byte) (int, error) {
	h, err := parseHeader(src)
	if err != nil {
		return 0, err
	}
	if h.nbytes != len(dst) {
		return 0, corrupt("chunk holds %d bytes, want %d", h.nbytes, len(dst))
	}
	src = src[:h.cbytes]
	if h.size == extHeader {
		if h.flags2&0x01 != 0 {
			return 0, unsupported("chunk with variable-length blocks")
		}
		if h.b2flags&0x08 != 0 {
			return 0, unsupported("lazy chunk (its blocks live in a frame file)")
		}
		if h.b2flags&0x80 != 0 {
			return 0, unsupported("chunk with an instrumented codec")
		}
		if s := h.special(); s != 0 {
			return h.cbytes, fillSpecial(dst, src, h, s)
		}
	}
	if h.nbytes == 0 {
		return h.cbytes, nil
	}
	if h.flags&flagMemcpyed != 0 {
		if h.cbytes != h.size+h.nbytes {
			return 0, corrupt("memcpyed chunk of %d bytes for %d bytes of data", h.cbytes, h.nbytes)
		}
		copy(dst, src[h.size:])
		return h.cbytes, nil
	}
	if h.size == extHeader && h.b2flags&0x01 != 0 {
		return 0, unsupported("chunk compressed with a dictionary")
	}
	codec := int(h.flags >> 5)
	if codec > 4 {
		return 0, corrupt("chunk codec %d", codec)
	}
	nblocks := (h.nbytes + h.blocksize - 1) / h.blocksize
	if int64(h.size)+4*int64(nblocks) > int64(h.cbytes) {
		return 0, corrupt("%d block offsets in a chunk of %d bytes", nblocks, h.cbytes)
	}
	var tmp []byte
	if hasFilters(h) {
		tmp = make([]byte, h.blocksize)
	}
	for j := range nblocks {
		bsize, leftover := h.blocksize, false
		if j == nblocks-1 && h.nbytes%h.blocksize != 0 {
			bsize, leftover = h.nbytes%h.blocksize, true
		}
		start := int(int32(binary.LittleEndian.Uint32(src[h.size+4*j:])))
		if start <= 0 || start >= len(src) {
			return 0, corrupt("block %d starts at %d in a chunk of %d bytes", j, start, len(src))
		}
		out := dst[j*h.blocksize : j*h.blocksize+bsize]
		work := out
		if tmp != nil {
			work = tmp[:bsize]
		}
		if err := h.streams(work, src[start:], bsize, leftover, codec); err != nil {
			return 0, fmt.Errorf("block %d: %w", j, err)
		}
		if tmp != nil {
			if err := h.unfilter(dst, out, work, j*h.blocksize); err != nil {
				return 0, fmt.Errorf("block %d: %w", j, err)
			}
		}
	}
	return h.cbytes, nil
}

func hasFilters(h *header) bool {
	for _, f := range h.filters {
		if f != filterNone && f != filterTruncPrec {
			return true
		}
	}
	return false
}

// streams decompresses one block's streams from src into out (len bsize).
func (h *header) streams(out, src []byte, bsize int, leftover bool, codec int) error {
	nstreams := 1
	if h.flags&flagNoSplit == 0 && !leftover {
		if h.version >= 3 || (h.typesize <= 16 && bsize/h.typesize >= 128) {
			nstreams = h.typesize
		}
	}
	neblock := bsize / nstreams
	if neblock == 0 {
		return corrupt("block of %d bytes in %d streams", bsize, nstreams)
	}
	for s := range nstreams {
		if len(src) < 4 {
			return corrupt("stream %d: size past the end of the chunk", s)
		}
		csize := int(int32(binary.LittleEndian.Uint32(src)))
		src = src[4:]
		dst := out[s*neblock : (s+1)*neblock]
		switch {
		case csize == 0 && h.version >= 3:
			clear(dst)
			continue
		case csize < 0 && h.version >= 3:
			if len(src) < 1 {
				return corrupt("stream %d: token past the end of the chunk", s)
			}
			token := src[0]
			src = src[1:]
			if token&1 == 0 || csize < -255 {
				return unsupported("stream %d: token %#x with size %d", s, token, csize)
			}
			b := byte(-csize)
			for i := range dst {
				dst[i] = b
			}
			continue
		case csize < 0 || csize > len(src):
			return corrupt("stream %d: %d compressed bytes, %d left in the chunk", s, csize, len(src))
		}
		in := src[:csize]
		src = src[csize:]
		if csize == neblock {
			copy(dst, in)
			continue
		}
		if err := decompress(codec, dst, in); err != nil {
			return fmt.Errorf("stream %d: %w", s, err)
		}
	}
	return nil
}

// unfilter undoes the filter pipeline of one block: work holds the block's
// decompressed bytes, out is where the block goes in chunk (dst), offset its
// position there.
func (h *header) unfilter(chunk, out, work []byte, offset int) error {
	cur, other := work, out
	inOut := false // cur is out
	for i := len(h.filters) - 1; i >= 0; i-- {
		switch f := h.filters[i]; f {
		case filterNone, filterTruncPrec:
		case filterShuffle:
			size := h.typesize
			if h.filtersMeta[i] != 0 {
				size = int(h.filtersMeta[i])
			}
			unshuffle(other, cur, size)
			cur, other, inOut = other, cur, !inOut
		case filterBitshuf:
			if len(h.scratch) < len(cur) {
				h.scratch = make([]byte, h.blocksize)
			}
			if h.size == minHeader && h.version <= 2 {
				bitunshuffle1(other, cur, h.scratch, h.typesize)
			} else {
				bitunshuffle(other, cur, h.scratch, h.typesize)
			}
			cur, other, inOut = other, cur, !inOut
		case filterDelta:
			if !inOut {
				copy(out, cur)
				cur, other, inOut = out, work, true
			}
			undelta(chunk, offset, len(out), h.typesize)
		default:
			return unsupported("filter %d", f)
		}
	}
	if !inOut {
		copy(out, cur)
	}
	return nil
}

// fillSpecial writes a special-value chunk (no blocks section).
func fillSpecial(dst, src []byte, h *header, s int) error {
	switch s {
	case 1, 4: // zeros; uninitialised (any value will do: zeros)
		clear(dst)
	case 2:
		var nan []byte
		switch h.typesize {
		case 4:
			nan = binary.LittleEndian.AppendUint32(nil, 0x7fc00000) // C's nanf("")
		case 8:
			nan = binary.LittleEndian.AppendUint64(nil, 0x7ff8000000000000) // C's nan("")
		default:
			return corrupt("NaN chunk with typesize %d", h.typesize)
		}
		if len(dst)%len(nan) != 0 {
			return corrupt("NaN chunk of %d bytes for typesize %d", len(dst), h.typesize)
		}
		for i := 0; i < len(dst); i += len(nan) {
			copy(dst[i:], nan)
		}
	case 3:
		ts := h.cbytes - extHeader
		if ts <= 0 || len(dst)%ts != 0 {
			return corrupt("repeated-value chunk: %d-byte value for %d bytes", ts, len(dst))
		}
		v := src[extHeader:h.cbytes]
		for i := 0; i < len(dst); i += ts {
			copy(dst[i:], v)
		}
	default:
		return corrupt("special value kind %d", s)
	}
	return nil
}
