package blockio

import (
	"bytes"
	"compress/zlib"
	"testing"

	"relayout/catalog"
)

// FuzzDecode feeds arbitrary bytes through every codec combination relayout
// accepts (seeds: testdata/fuzz/FuzzDecode holds raw chunks libhdf5 wrote via
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
	f.Fuzz(func(t *testing.T, data []byte, mask uint8, elem uint8, want uint16) {
		const maxWant = 1 << 16 // memory cap: want is a uint16
		all := []catalog.Codec{{Name: "shuffle", Params: []uint32{uint32(elem)}}, {Name: "deflate"}, {Name: "fletcher32"}}
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
