package blosc

import (
	"bytes"
	"compress/zlib"
	"io"
	"sync"

	"github.com/golang/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// Codec names by the chunk header's codec code (flags >> 5).
var codecNames = [...]string{"blosclz", "lz4", "snappy", "zlib", "zstd"}

// decompress decodes one stream of codec into exactly len(dst) bytes.
func decompress(codec int, dst, src []byte) error {
	var n int
	var err error
	switch codec {
	case 0:
		n, err = BloscLZ(dst, src)
	case 1:
		n, err = lz4.UncompressBlock(src, dst)
	case 2:
		n, err = unsnappy(dst, src)
	case 3:
		n, err = unzlib(dst, src)
	case 4:
		n, err = unzstd(dst, src)
	default:
		return corrupt("codec %d", codec)
	}
	if err != nil {
		return corrupt("%s: %v", codecNames[codec], err)
	}
	if n != len(dst) {
		return corrupt("%s: stream decodes to %d bytes, want %d", codecNames[codec], n, len(dst))
	}
	return nil
}

func unsnappy(dst, src []byte) (int, error) {
	n, err := snappy.DecodedLen(src)
	if err != nil {
		return 0, err
	}
	if n != len(dst) {
		return n, nil
	}
	out, err := snappy.Decode(dst, src)
	return len(out), err
}

// zreaders keeps zlib readers for reuse (each holds a 32 KiB window).
var zreaders sync.Pool

func unzlib(dst, src []byte) (int, error) {
	var zr io.ReadCloser
	var err error
	if v, ok := zreaders.Get().(io.ReadCloser); ok {
		zr = v
		err = v.(zlib.Resetter).Reset(bytes.NewReader(src), nil)
	} else {
		zr, err = zlib.NewReader(bytes.NewReader(src))
	}
	if err != nil {
		return 0, err
	}
	defer zreaders.Put(zr)
	n, err := io.ReadFull(zr, dst)
	if err != nil {
		return n, err
	}
	var one [1]byte
	if m, _ := zr.Read(one[:]); m > 0 {
		return n + m, nil
	}
	return n, nil
}

var zdec = sync.OnceValue(func() *zstd.Decoder {
	d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecodeAllCapLimit(true),
		zstd.WithDecoderMaxMemory(maxBlock))
	if err != nil {
		panic(err) // only invalid options fail
	}
	return d
})

// unzstd decodes into dst's own storage: the decoder is capped at
// cap(dst) bytes, so a hostile frame cannot grow the output.
func unzstd(dst, src []byte) (int, error) {
	out, err := zdec().DecodeAll(src, dst[:0:len(dst)])
	if err != nil {
		return len(out), err
	}
	if len(out) > 0 && &out[0] != &dst[0] {
		copy(dst, out)
	}
	return len(out), nil
}
