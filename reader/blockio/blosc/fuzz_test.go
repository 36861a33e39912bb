package blosc

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
)

// maxFuzzOut is the memory cap of every fuzz body: the decoded size asked
// for, and so everything the decoders may allocate, stays below it.
const maxFuzzOut = 1 << 18

func seeds(f *testing.F, ext string) [][]byte {
	names, _ := filepath.Glob(filepath.Join("testdata", "seeds", "*"+ext))
	if len(names) == 0 {
		f.Fatalf("no testdata/seeds/*%s", ext)
	}
	var out [][]byte
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			f.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

// FuzzChunk feeds arbitrary bytes to the chunk decoder (seeds: real c-blosc1
// and c-blosc2 chunks). It must never panic, and succeed only with exactly
// want bytes.
func FuzzChunk(f *testing.F) {
	for _, s := range seeds(f, ".chunk") {
		nb, _, _ := Sizes(s)
		f.Add(s, uint32(nb))
	}
	f.Fuzz(func(t *testing.T, data []byte, want uint32) {
		if want > maxFuzzOut {
			want %= maxFuzzOut
		}
		out, err := Decode(data, int(want))
		if err == nil && len(out) != int(want) {
			t.Fatalf("decoded %d bytes, want %d", len(out), want)
		}
	})
}

// FuzzADIOS2 feeds arbitrary bytes to the ADIOS2 operator framing (seeds:
// real ADIOS2 2.12 and 2.7.1 blosc blocks).
func FuzzADIOS2(f *testing.F) {
	for _, s := range seeds(f, ".adios") {
		word, want := uint8(8), uint32(0)
		if len(s) > 12 && s[0] == 0 && s[1] == 1 {
			want = uint32(binary.LittleEndian.Uint64(s[4:]))
		} else {
			word = 0
			want = 160000 // the 2.7.1 block: 100x200 float64
		}
		f.Add(s, word, false, want)
	}
	f.Fuzz(func(t *testing.T, data []byte, word uint8, be bool, want uint32) {
		if want > maxFuzzOut {
			want %= maxFuzzOut
		}
		out, err := ADIOS2(data, Framing{Word: int(word % 9), BigEndian: be}, int64(want))
		if err == nil && len(out) != int(want) {
			t.Fatalf("decoded %d bytes, want %d", len(out), want)
		}
	})
}

// FuzzBloscLZ feeds arbitrary streams to the BloscLZ decompressor (seeds:
// the BloscLZ streams of the real blosclz chunks).
func FuzzBloscLZ(f *testing.F) {
	for _, s := range seeds(f, ".chunk") {
		h, err := parseHeader(s)
		if err != nil || h.flags>>5 != 0 || h.flags&flagMemcpyed != 0 || h.size != minHeader || h.nbytes == 0 {
			continue
		}
		// The first stream of the first block.
		start := int(binary.LittleEndian.Uint32(s[h.size:]))
		if start+4 > len(s) {
			continue
		}
		n := int(binary.LittleEndian.Uint32(s[start:]))
		if start+4+n <= len(s) {
			f.Add(s[start+4:start+4+n], uint16(h.blocksize))
		}
	}
	f.Add([]byte{1, 'a', 'b', 2 << 5, 1, 0, 'z'}, uint16(7))
	f.Fuzz(func(t *testing.T, src []byte, n uint16) {
		dst := make([]byte, n)
		got, err := BloscLZ(dst, src)
		if got > len(dst) || got < 0 {
			t.Fatalf("wrote %d of %d bytes", got, len(dst))
		}
		_ = err
	})
}
