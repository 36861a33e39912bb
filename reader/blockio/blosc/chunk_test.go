package blosc

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"relayout/catalog"
	"relayout/internal/testkit"
)

// writerChunks runs testdata/gen_chunks.py (c-blosc2 through the libblosc2
// ADIOS2 links, c-blosc1 through Debian's python3-blosc) and returns the
// directory of <case>.chunk / <case>.raw pairs. It skips without the peers
// and fails under CI=true.
func writerChunks(t testing.TB) string {
	t.Helper()
	lib := testkit.SharedPeer(t, filepath.Join("lib", "libblosc2.so.7"))
	dir := t.TempDir()
	gen, _ := filepath.Abs(filepath.Join("testdata", "gen_chunks.py"))
	out, err := exec.Command("/usr/bin/python3", gen, lib, dir).CombinedOutput()
	if err != nil {
		if strings.Contains(string(out), "No module named 'blosc'") {
			testkit.Unavailable(t, "Debian python3-blosc not installed:\n%s", out)
		}
		t.Fatalf("gen_chunks.py: %v\n%s", err, out)
	}
	return dir
}

// TestWriterChunks decodes every chunk the real libraries wrote and compares
// it byte for byte with the data they compressed.
func TestWriterChunks(t *testing.T) {
	dir := writerChunks(t)
	names, _ := filepath.Glob(filepath.Join(dir, "*.chunk"))
	sort.Strings(names)
	if len(names) < 150 {
		t.Fatalf("%d chunks written", len(names))
	}
	kinds := map[string]int{}
	for _, n := range names {
		chunk, _ := os.ReadFile(n)
		raw, _ := os.ReadFile(strings.TrimSuffix(n, ".chunk") + ".raw")
		name := filepath.Base(n)
		kinds[name[:2]]++
		if strings.Contains(name, "special-uninit") {
			got, err := Decode(chunk, 4000)
			if err != nil || len(got) != 4000 {
				t.Errorf("%s: %d bytes, %v", name, len(got), err)
			}
			continue
		}
		got, err := Decode(chunk, len(raw))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if !bytes.Equal(got, raw) {
			k := 0
			for k < len(raw) && got[k] == raw[k] {
				k++
			}
			t.Errorf("%s: %d bytes differ from the writer's input, first at %d", name, len(raw), k)
		}
		// Wrong expectations and truncation are errors, never panics.
		if _, err := Decode(chunk, len(raw)+1); !errors.Is(err, catalog.ErrCorrupt) {
			t.Errorf("%s: want+1: %v", name, err)
		}
		if len(chunk) > 16 {
			if _, err := Decode(chunk[:len(chunk)-1], len(raw)); !errors.Is(err, catalog.ErrCorrupt) {
				t.Errorf("%s: truncated: %v", name, err)
			}
		}
	}
	if kinds["b1"] < 50 || kinds["b2"] < 80 {
		t.Errorf("chunks by library: %v", kinds)
	}
}

// TestADIOS2Framing frames real chunks as ADIOS2 does: several chunks after
// a DataHeader (the > 2 GiB case, here with small chunks), the raw case, the
// common operator header of 64- and 32-bit and big-endian writers, a bare
// chunk.
func TestADIOS2Framing(t *testing.T) {
	dir := writerChunks(t)
	var chunks, raws [][]byte
	for _, c := range []string{"b2-lz4-shuffle-f8", "b2-zstd-delta-f8", "b1-snappy-shuffle-ts2", "b2-special-zeros"} {
		ch, err := os.ReadFile(filepath.Join(dir, c+".chunk"))
		if err != nil {
			t.Fatal(err)
		}
		r, _ := os.ReadFile(filepath.Join(dir, c+".raw"))
		chunks, raws = append(chunks, ch), append(raws, r)
	}
	want := bytes.Join(raws, nil)
	for _, fr := range []Framing{{}, {Word: 8}, {Word: 4}, {Word: 8, BigEndian: true}} {
		type order interface {
			binary.ByteOrder
			binary.AppendByteOrder
		}
		var bo order = binary.LittleEndian
		if fr.BigEndian {
			bo = binary.BigEndian
		}
		head := func(n int) []byte {
			var b []byte
			if fr.Word != 0 {
				b = []byte{0, 1, 0, 0}
				if fr.Word == 4 {
					b = bo.AppendUint32(b, uint32(n))
				} else {
					b = bo.AppendUint64(b, uint64(n))
				}
				b = append(b, 2, 23, 1)
			}
			return b
		}
		buf := bo.AppendUint32(bo.AppendUint32(head(len(want)), 0), uint32(len(chunks)))
		buf = append(buf, bytes.Join(chunks, nil)...)
		got, err := ADIOS2(buf, fr, int64(len(want)))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%+v: %d chunks: %v", fr, len(chunks), err)
		}
		// One chunk too few or too many is corruption.
		bad := append([]byte(nil), buf...)
		bo.PutUint32(bad[len(head(0))+4:], uint32(len(chunks)-1))
		if _, err := ADIOS2(bad, fr, int64(len(want))); !errors.Is(err, catalog.ErrCorrupt) {
			t.Errorf("%+v: wrong chunk count: %v", fr, err)
		}
		if _, err := ADIOS2(buf[:len(buf)-3], fr, int64(len(want))); !errors.Is(err, catalog.ErrCorrupt) {
			t.Errorf("%+v: truncated: %v", fr, err)
		}
		// Stored raw (under the threshold).
		small := []byte("under 128 bytes")
		rawBuf := append(bo.AppendUint32(bo.AppendUint32(head(len(small)), 0), 0), small...)
		if got, err := ADIOS2(rawBuf, fr, int64(len(small))); err != nil || !bytes.Equal(got, small) {
			t.Errorf("%+v: raw: %q %v", fr, got, err)
		}
		if fr.Word != 0 {
			if _, err := ADIOS2(rawBuf, fr, int64(len(small))+1); !errors.Is(err, catalog.ErrCorrupt) {
				t.Errorf("%+v: raw with the wrong size: %v", fr, err)
			}
		}
	}
	// Before 2.6: one bare chunk.
	if got, err := ADIOS2(chunks[0], Framing{}, int64(len(raws[0]))); err != nil || !bytes.Equal(got, raws[0]) {
		t.Errorf("bare chunk: %v", err)
	}
}

func TestTranspose8(t *testing.T) {
	for _, x := range []uint64{0, 1, 0x8000000000000000, 0x0123456789abcdef, 0xfedcba9876543210, 0xff00ff00ff00ff00} {
		var want uint64
		for r := range 8 {
			for c := range 8 {
				if x>>(8*r+c)&1 != 0 {
					want |= 1 << (8*c + r)
				}
			}
		}
		if got := transpose8(x); got != want {
			t.Errorf("transpose8(%#x) = %#x, want %#x", x, got, want)
		}
	}
}

// TestBloscLZStreams checks hand-made token streams, including the
// malformed ones the reference decoder refuses.
func TestBloscLZStreams(t *testing.T) {
	for _, c := range []struct {
		name string
		src  []byte
		want string
		ok   bool
	}{
		{"literals", []byte{0x20 | 2, 'a', 'b', 'c'}, "abc", true},
		// "ab", then a match of 3+len3-1 = 4 bytes 2 back, then a literal
		// (a match's first byte: len3 in its top 3 bits, the distance's high
		// 5 bits, here 0, below).
		{"overlapping match", []byte{1, 'a', 'b', 2 << 5, 1, 0, 'z'}, "ababab" + "z", true},
		{"match past output", []byte{1, 'a', 'b', 6 << 5, 1, 0, 'z'}, "", false},
		{"match before start", []byte{1, 'a', 'b', 2 << 5, 5, 0, 'z'}, "", false},
		{"literal past input", []byte{5, 'a'}, "", false},
		{"empty", nil, "", false},
	} {
		dst := make([]byte, len(c.want))
		if !c.ok {
			dst = make([]byte, 8)
		}
		n, err := BloscLZ(dst, c.src)
		if c.ok && (err != nil || string(dst[:n]) != c.want) {
			t.Errorf("%s: %q %v", c.name, dst[:n], err)
		}
		if !c.ok && !errors.Is(err, catalog.ErrCorrupt) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

// TestRefused: features relayout does not decode are ErrUnsupported.
func TestRefused(t *testing.T) {
	h := func(version, flags, b2flags, flags2 byte) []byte {
		b := make([]byte, 64)
		b[0], b[1], b[2], b[3] = version, 1, flags, 8
		binary.LittleEndian.PutUint32(b[4:], 16)
		binary.LittleEndian.PutUint32(b[8:], 16)
		binary.LittleEndian.PutUint32(b[12:], 64)
		b[30], b[31] = flags2, b2flags
		return b
	}
	for name, c := range map[string][]byte{
		"lazy":         h(5, 5, 0x08, 0),
		"dictionary":   h(5, 5, 0x01, 0),
		"user-defined": h(5, 5|6<<5, 0, 0),
		"version 7":    h(7, 0, 0, 0),
		"variable":     h(6, 5, 0, 1),
		"instrumented": h(5, 5, 0x80, 0),
	} {
		_, err := Decode(c, 16)
		if !errors.Is(err, catalog.ErrUnsupported) {
			t.Errorf("%s: %v", name, err)
		}
		if word := strings.Fields(name)[0]; !strings.Contains(err.Error(), word) {
			t.Errorf("%s: %q does not say why", name, err)
		}
	}
}

// naiveUntrans is the bit shuffle's definition read literally (bit i%8 of
// byte i/8 of row 8j+k is bit k of byte j of element i), one bit group at a
// time.
func naiveUntrans(dst, src []byte, n, ts int) {
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

// TestUntransBits checks the 8-groups-at-a-time bit unshuffle against the
// literal definition, for several element sizes.
func TestUntransBits(t *testing.T) {
	for _, ts := range []int{1, 2, 3, 4, 8, 12} {
		n := 8 * 77
		src := make([]byte, n*ts)
		for i := range src {
			src[i] = byte(i*7 + i/13)
		}
		a, b, sc := make([]byte, len(src)), make([]byte, len(src)), make([]byte, len(src))
		naiveUntrans(a, src, n, ts)
		untransBits(b, src, sc, n, ts)
		for i := range a {
			if a[i] != b[i] {
				t.Fatalf("ts %d byte %d", ts, i)
			}
		}
	}
}
