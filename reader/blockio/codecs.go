package blockio

// Decoders for the HDF5 filter pipeline stages relayout supports (deflate,
// shuffle, fletcher32, lzf: see lzf.go; blosc), for
// the ADIOS2 operators (bzip2, blosc: see package blosc for its framing), and
// byteswap: a block stored in the other byte order than its array's (a
// netCDF-4 member, little-endian, of a stream of big-endian classic files;
// Params [element size]), its first stage in encode order. A block's
// Codecs are listed in encode order (as HDF5 applies them when writing); they
// are undone here in reverse:
//
//	encode: raw ─shuffle─▶ bytes regrouped ─deflate─▶ zlib stream ─fletcher32─▶ stream + 4-byte checksum
//	decode: stream + checksum ─strip/verify─▶ zlib stream ─inflate─▶ shuffled ─unshuffle─▶ raw
//
// fletcher32 trailer (little-endian uint32, HDF5's H5_checksum_fletcher32 over
// the preceding bytes taken as big-endian 16-bit words; an odd last byte is the
// high half of a final word):
//
//	+------------------------+----------+
//	| payload (n bytes)      | sum2|sum1|
//	+------------------------+----------+

import (
	"bytes"
	"compress/bzip2"
	"compress/zlib"
	"encoding/binary"
	"fmt"
	"io"

	"relayout/catalog"
	"relayout/reader/blockio/blosc"
)

// Decode undoes codecs (given in encode order) on data and checks that the
// result is exactly want bytes. elemSize is the default shuffle element size
// when a shuffle codec carries no parameter. data may be modified.
func Decode(data []byte, codecs []catalog.Codec, elemSize int, want int64) ([]byte, error) {
	if want < 0 {
		return nil, catalog.Corrupt("blockio", "", -1, "decoded size %d", want)
	}
	for i := len(codecs) - 1; i >= 0; i-- {
		c := codecs[i]
		var err error
		switch c.Name {
		case "fletcher32":
			data, err = stripFletcher32(data)
		case "shuffle":
			size := elemSize
			if len(c.Params) > 0 {
				size = int(c.Params[0])
			}
			data, err = unshuffle(data, size)
		case "deflate":
			data, err = inflate(data, stageSize(codecs[:i], want))
		case "lzf":
			// HDF5 filter 32000 (h5py's lzf): one raw LZF stream (lzf.go).
			data, err = unlzf(data, stageSize(codecs[:i], want))
		case "blosc":
			// ADIOS2's blosc operator buffer: Params [size_t width of
			// the common operator header (0: none, ADIOS2 <= 2.7),
			// 1 if the writer was big-endian].
			fr := blosc.Framing{}
			if len(c.Params) > 0 {
				fr.Word = int(c.Params[0])
			}
			fr.BigEndian = len(c.Params) > 1 && c.Params[1] != 0
			data, err = blosc.ADIOS2(data, fr, want)
		case "hdf5-blosc":
			// HDF5 filter 32001: each chunk is one bare Blosc chunk (its
			// header says typesize, shuffle and codec; cd_values are not
			// needed to decode).
			data, err = blosc.Decode(data, int(min(want, 1<<31)))
		case "byteswap":
			// The stored elements' bytes reversed into the array's order.
			data, err = byteswap(data, c.Params)
		case "bzip2":
			// One bzip2 stream or several concatenated (ADIOS2 compresses
			// in batches); the output is capped like deflate's.
			data, err = bunzip2(data, want)
		default:
			return nil, fmt.Errorf("codec %q: %w", c.Name, catalog.ErrUnsupported)
		}
		if err != nil {
			return nil, err
		}
	}
	if int64(len(data)) != want {
		return nil, catalog.Corrupt("blockio", "", -1, "decoded %d bytes, want %d", len(data), want)
	}
	return data, nil
}

// stageSize is the decoded size of a compression stage: the final size plus
// the checksums of the fletcher32 stages applied before it when encoding
// (inner, in encode order).
func stageSize(inner []catalog.Codec, want int64) int64 {
	for _, c := range inner {
		if c.Name == "fletcher32" {
			want += 4
		}
	}
	return want
}

// inflate decompresses a zlib stream that must produce exactly want bytes.
// Reading stops at want+1 bytes so a hostile stream cannot exhaust memory.
func inflate(src []byte, want int64) ([]byte, error) {
	zr, err := zlib.NewReader(bytes.NewReader(src))
	if err != nil {
		return nil, catalog.Corrupt("deflate", "", -1, "%v", err)
	}
	defer zr.Close()
	out := make([]byte, 0, want+1)
	buf := bytes.NewBuffer(out)
	n, err := io.Copy(buf, io.LimitReader(zr, want+1))
	if err != nil {
		return nil, catalog.Corrupt("deflate", "", -1, "%v", err)
	}
	if n != want {
		if n > want {
			return nil, catalog.Corrupt("deflate", "", -1, "stream inflates past %d bytes", want)
		}
		return nil, catalog.Corrupt("deflate", "", -1, "stream inflates to %d bytes, want %d", n, want)
	}
	return buf.Bytes(), nil
}

// unshuffle reverses HDF5's byte shuffle: the encoder wrote byte j of every
// element together (all first bytes, then all second bytes, ...). Bytes past the
// last whole element were left in place.
// bunzip2 decompresses src, refusing output beyond want bytes.
func bunzip2(src []byte, want int64) ([]byte, error) {
	if len(src) < 4 || string(src[:3]) != "BZh" {
		return nil, catalog.Corrupt("bzip2", "", -1, "no stream header")
	}
	// want comes from metadata: grow towards it instead of trusting it
	// for one allocation.
	buf := bytes.NewBuffer(make([]byte, 0, min(want+1, 64<<20)))
	n, err := io.Copy(buf, io.LimitReader(bzip2.NewReader(bytes.NewReader(src)), want+1))
	if err != nil {
		return nil, catalog.Corrupt("bzip2", "", -1, "%v", err)
	}
	if n != want {
		if n > want {
			return nil, catalog.Corrupt("bzip2", "", -1, "stream decompresses past %d bytes", want)
		}
		return nil, catalog.Corrupt("bzip2", "", -1, "stream decompresses to %d bytes, want %d", n, want)
	}
	return buf.Bytes(), nil
}

func unshuffle(src []byte, size int) ([]byte, error) {
	if size <= 0 {
		return nil, catalog.Corrupt("shuffle", "", -1, "element size %d", size)
	}
	n := len(src) / size
	if size == 1 || n <= 1 {
		return src, nil
	}
	dst := make([]byte, len(src))
	for j := 0; j < size; j++ {
		plane := src[j*n : (j+1)*n]
		for i, b := range plane {
			dst[i*size+j] = b
		}
	}
	copy(dst[n*size:], src[n*size:])
	return dst, nil
}

// stripFletcher32 verifies and removes the 4-byte checksum trailer. Like HDF5
// (H5Z__filter_fletcher32), it also accepts the byte-swapped checksum written
// by HDF5 releases before 1.6.3.
func stripFletcher32(src []byte) ([]byte, error) {
	if len(src) < 4 {
		return nil, catalog.Corrupt("fletcher32", "", -1, "%d bytes, shorter than the checksum", len(src))
	}
	payload := src[:len(src)-4]
	stored := binary.LittleEndian.Uint32(src[len(src)-4:])
	sum := Fletcher32(payload)
	reversed := (sum&0x00ff00ff)<<8 | (sum&0xff00ff00)>>8
	if stored != sum && stored != reversed {
		return nil, catalog.Corrupt("fletcher32", "", -1, "checksum %#08x, computed %#08x", stored, sum)
	}
	return payload, nil
}

// Fletcher32 is HDF5's H5_checksum_fletcher32: Fletcher's checksum over
// big-endian 16-bit words with end-around-carry folding every 360 words.
func Fletcher32(data []byte) uint32 {
	var sum1, sum2 uint32
	words := len(data) / 2
	p := 0
	for words > 0 {
		t := min(words, 360)
		words -= t
		for ; t > 0; t-- {
			sum1 += uint32(data[p])<<8 | uint32(data[p+1])
			p += 2
			sum2 += sum1
		}
		sum1 = (sum1 & 0xffff) + (sum1 >> 16)
		sum2 = (sum2 & 0xffff) + (sum2 >> 16)
	}
	if len(data)%2 == 1 {
		sum1 += uint32(data[p]) << 8
		sum2 += sum1
		sum1 = (sum1 & 0xffff) + (sum1 >> 16)
		sum2 = (sum2 & 0xffff) + (sum2 >> 16)
	}
	sum1 = (sum1 & 0xffff) + (sum1 >> 16)
	sum2 = (sum2 & 0xffff) + (sum2 >> 16)
	return sum2<<16 | sum1
}

// byteswap undoes the byteswap stage: params holds the element size (2, 4
// or 8).
func byteswap(data []byte, params []uint32) ([]byte, error) {
	if len(params) != 1 || params[0] != 2 && params[0] != 4 && params[0] != 8 {
		return nil, catalog.Corrupt("blockio", "", -1, "byteswap of element size %v", params)
	}
	size := int(params[0])
	if len(data)%size != 0 {
		return nil, catalog.Corrupt("blockio", "", -1, "byteswap of %d bytes in elements of %d", len(data), size)
	}
	SwapBytes(data, size)
	return data, nil
}

// SwapBytes reverses the byte order of each size-byte element of data in
// place (size 2, 4 or 8; any other size leaves data as it is).
func SwapBytes(data []byte, size int) {
	switch size {
	case 2:
		for i := 0; i+1 < len(data); i += 2 {
			binary.BigEndian.PutUint16(data[i:], binary.LittleEndian.Uint16(data[i:]))
		}
	case 4:
		for i := 0; i+3 < len(data); i += 4 {
			binary.BigEndian.PutUint32(data[i:], binary.LittleEndian.Uint32(data[i:]))
		}
	case 8:
		for i := 0; i+7 < len(data); i += 8 {
			binary.BigEndian.PutUint64(data[i:], binary.LittleEndian.Uint64(data[i:]))
		}
	}
}
