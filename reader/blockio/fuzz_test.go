package blockio

import (
	"bytes"
	"compress/zlib"
	"errors"
	"os"
	"testing"

	"relayout/catalog"
)

// FuzzDecode feeds arbitrary bytes through every codec combination relayout
// accepts, bzip2, blosc and lzf included (seeds: testdata/fuzz/FuzzDecode holds raw chunks libhdf5 wrote via
// testdata/chunks.py, plus the ones below). Decode must never panic and never return more than want bytes; the
// expected size is capped so a hostile stream cannot exhaust memory.
func FuzzDecode(f *testing.F) {
	var z bytes.Buffer
	w := zlib.NewWriter(&z)
	w.Write(bytes.Repeat([]byte{1, 2, 3, 4, 5, 6, 7, 8}, 64))
	w.Close()
	f.Add(z.Bytes(), uint8(7), uint8(8), uint16(512))
	f.Add([]byte{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11, 0, 0, 0, 0}, uint8(3), uint8(4), uint16(12))
	f.Add([]byte{}, uint8(1), uint8(0), uint16(0))
	// bzip2 -1 of bytes 0..7 repeated 64 times (Python's bz2), alone and doubled
	// (ADIOS2 writes concatenated streams).
	bz := []byte("\x42\x5a\x68\x31\x31\x41\x59\x26\x53\x59\x6a\xb1\xf2\x18\x00\x00\x1f\xc0\x00\x7f\x80\x20\x00\x50\x86\x04\x05\x50\x13\x4e\x02\x40\xa0\x2c\x0c\x03\x40\xf0\x1c\x07\xc5\xdc\x91\x4e\x14\x24\x1a\xac\x7c\x86\x00")
	f.Add(bz, uint8(8), uint8(8), uint16(512))
	f.Add(append(append([]byte(nil), bz...), bz...), uint8(8), uint8(8), uint16(1024))
	// Real blosc buffers (see blosc/testdata/seeds): an ADIOS2 2.12 operator
	// buffer (size_t 8) and a c-blosc1 chunk as the HDF5 filter stores it.
	if b, err := os.ReadFile("blosc/testdata/seeds/adios212-i4-zstd-bitshuffle.adios"); err == nil {
		f.Add(b, uint8(1<<4), uint8(8), uint16(2400))
	}
	if b, err := os.ReadFile("blosc/testdata/seeds/b1-snappy-shuffle-ts2.chunk"); err == nil {
		f.Add(b, uint8(1<<5), uint8(2), uint16(1998))
	}
	// A little-endian chunk of a netCDF-4 member of a classic stream (4-byte
	// elements), and an element size byteswap refuses.
	f.Add([]byte{1, 0, 0, 0, 2, 0, 0, 0}, uint8(1<<7), uint8(4), uint16(8))
	f.Add([]byte{1, 2, 3}, uint8(1<<7), uint8(3), uint16(3))
	f.Fuzz(func(t *testing.T, data []byte, mask uint8, elem uint8, want uint16) {
		const maxWant = 1 << 16 // memory cap: want is a uint16
		all := []catalog.Codec{{Name: "shuffle", Params: []uint32{uint32(elem)}}, {Name: "deflate"}, {Name: "fletcher32"}, {Name: "bzip2"},
			{Name: "blosc", Params: []uint32{uint32(elem % 9), uint32(elem / 128)}}, {Name: "hdf5-blosc"}, {Name: "lzf"},
			{Name: "byteswap", Params: []uint32{uint32(elem)}}}
		var codecs []catalog.Codec
		for i, c := range all {
			if mask&(1<<i) != 0 {
				codecs = append(codecs, c)
			}
		}
		out, err := Decode(append([]byte(nil), data...), codecs, int(elem), int64(want))
		if err == nil && len(out) != int(want) {
			t.Fatalf("decoded %d bytes, want %d", len(out), want)
		}
		if len(out) > maxWant {
			t.Fatalf("output %d bytes exceeds cap", len(out))
		}
	})
}

// FuzzLZF feeds arbitrary streams to the LZF decoder (seed:
// testdata/fuzz/FuzzLZF holds a chunk h5py's lzf filter wrote). It must never
// panic, and return exactly want bytes or an error; want is a uint16, which
// caps memory.
func FuzzLZF(f *testing.F) {
	f.Add([]byte{2, 'a', 'b', 'c', 0xe0, 3, 2}, uint16(3+12)) // literal, then a long overlapping back reference
	f.Add([]byte{0, 7, 0x20, 0}, uint16(4))                   // a run of one byte
	f.Add([]byte{0x20, 0}, uint16(3))                         // reference before the start
	f.Fuzz(func(t *testing.T, data []byte, want uint16) {
		out, err := unlzf(data, int64(want))
		if err == nil && len(out) != int(want) {
			t.Fatalf("decoded %d bytes, want %d", len(out), want)
		}
		if err != nil && !errors.Is(err, catalog.ErrCorrupt) {
			t.Fatalf("error %v is not ErrCorrupt", err)
		}
	})
}
