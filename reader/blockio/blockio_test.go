package blockio

import (
	"bytes"
	"compress/zlib"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"relayout/catalog"
	"relayout/internal/testkit"
)

// needPython skips (or fails under CI=true) when the h5py oracle is missing.
func needPython(t *testing.T) {
	t.Helper()
	testkit.NeedPython(t, "the h5py oracle: Debian python3-h5py", "h5py")
}

type chunkCase struct {
	Case   string          `json:"case"`
	Elem   int             `json:"elem"`
	Codecs []catalog.Codec `json:"codecs"`
}

// TestDecodeAgainstHDF5 decodes raw chunks written by libhdf5 (through h5py)
// and compares with the array values h5py put in them.
func TestDecodeAgainstHDF5(t *testing.T) {
	needPython(t)
	dir := t.TempDir()
	if out, err := exec.Command("/usr/bin/python3", "testdata/chunks.py", dir).CombinedOutput(); err != nil {
		t.Fatalf("chunks.py: %v\n%s", err, out)
	}
	var cases []chunkCase
	b, err := os.ReadFile(filepath.Join(dir, "cases.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) < 10 {
		t.Fatalf("only %d cases", len(cases))
	}
	for _, c := range cases {
		raw, _ := os.ReadFile(filepath.Join(dir, c.Case+".raw"))
		want, _ := os.ReadFile(filepath.Join(dir, c.Case+".want"))
		got, err := Decode(append([]byte(nil), raw...), c.Codecs, c.Elem, int64(len(want)))
		if err != nil {
			t.Errorf("%s: %v", c.Case, err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: decoded bytes differ from h5py's values", c.Case)
		}
		// A flipped payload byte must fail: the checksum (or inflate) catches it.
		if hasCodec(c.Codecs, "fletcher32") {
			bad := append([]byte(nil), raw...)
			bad[len(bad)/3] ^= 0x20
			if _, err := Decode(bad, c.Codecs, c.Elem, int64(len(want))); !errors.Is(err, catalog.ErrCorrupt) {
				t.Errorf("%s: corrupted chunk: got %v, want ErrCorrupt", c.Case, err)
			}
		}
	}
}

func hasCodec(cs []catalog.Codec, name string) bool {
	for _, c := range cs {
		if c.Name == name {
			return true
		}
	}
	return false
}

func TestUnshuffleLeftover(t *testing.T) {
	// 3 elements of 4 bytes shuffled into byte planes, then 2 tail bytes kept as is.
	src := []byte{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11, 12, 13}
	got, err := unshuffle(src, 4)
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13}
	if !bytes.Equal(got, want) {
		t.Fatalf("unshuffle = %v, want %v", got, want)
	}
}

func TestDecodeErrors(t *testing.T) {
	var z bytes.Buffer
	w := zlib.NewWriter(&z)
	w.Write(make([]byte, 1000))
	w.Close()
	// Bomb guard: a stream inflating past the expected size is refused.
	if _, err := Decode(z.Bytes(), []catalog.Codec{{Name: "deflate"}}, 8, 800); !errors.Is(err, catalog.ErrCorrupt) || !strings.Contains(err.Error(), "past 800") {
		t.Errorf("oversized inflate: %v", err)
	}
	if _, err := Decode(z.Bytes(), []catalog.Codec{{Name: "deflate"}}, 8, 1200); !errors.Is(err, catalog.ErrCorrupt) {
		t.Errorf("short inflate: %v", err)
	}
	if _, err := Decode([]byte{1, 2, 3}, []catalog.Codec{{Name: "deflate"}}, 1, 3); !errors.Is(err, catalog.ErrCorrupt) {
		t.Errorf("garbage inflate: %v", err)
	}
	if _, err := Decode([]byte{1, 2}, []catalog.Codec{{Name: "fletcher32"}}, 1, 0); !errors.Is(err, catalog.ErrCorrupt) {
		t.Errorf("short fletcher32: %v", err)
	}
	_, err := Decode([]byte{1, 2}, []catalog.Codec{{Name: "lz4"}}, 1, 2)
	if !errors.Is(err, catalog.ErrUnsupported) || !strings.Contains(err.Error(), "lz4") {
		t.Errorf("unknown codec: %v", err)
	}
	// LZF: a literal run past the stream's end, a back reference before
	// the output's start, output past the expected size.
	for _, c := range []struct {
		in   []byte
		want int64
		msg  string
	}{{[]byte{1, 2}, 2, "past the end"}, {[]byte{0x20, 0}, 3, "before the start"}, {[]byte{0, 7, 0x20, 0}, 3, "past 3"}} {
		if _, err := Decode(c.in, []catalog.Codec{{Name: "lzf"}}, 1, c.want); !errors.Is(err, catalog.ErrCorrupt) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("lzf %v: %v", c.in, err)
		}
	}
	if _, err := Decode([]byte{1, 2, 3}, nil, 1, 2); !errors.Is(err, catalog.ErrCorrupt) {
		t.Errorf("wrong size: %v", err)
	}
}

func TestFletcher32ReversedAccepted(t *testing.T) {
	payload := []byte("relayout fletcher")
	sum := Fletcher32(payload)
	rev := (sum&0x00ff00ff)<<8 | (sum&0xff00ff00)>>8
	for _, s := range []uint32{sum, rev} {
		b := binary.LittleEndian.AppendUint32(append([]byte(nil), payload...), s)
		if got, err := stripFletcher32(b); err != nil || !bytes.Equal(got, payload) {
			t.Errorf("checksum %#x: %v", s, err)
		}
	}
}

func writeFile(t *testing.T, dir, name string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestFilesReadAt(t *testing.T) {
	dir := t.TempDir()
	data := make([]byte, 400)
	for i := range data {
		data[i] = byte(i)
	}
	writeFile(t, dir, "data.h5", data)
	p := NewFiles(dir, 2)
	defer p.Close()
	ctx := context.Background()
	got, err := p.ReadAt(ctx, "data.h5", 100, 50)
	if err != nil || !bytes.Equal(got, data[100:150]) {
		t.Fatalf("ReadAt = %v, %v", got, err)
	}
	_, err = p.ReadAt(ctx, "data.h5", 123, 456)
	want := "blockio: data.h5: offset 123: block of 456 bytes past end of file (size 400): corrupt input"
	if !errors.Is(err, catalog.ErrCorrupt) || err.Error() != want {
		t.Errorf("past end: %v", err)
	}
	if _, err := p.ReadAt(ctx, "data.h5", -1, 2); !errors.Is(err, catalog.ErrCorrupt) {
		t.Errorf("negative offset: %v", err)
	}
	for _, bad := range []string{"/etc/passwd", "../x.h5", "a/../../x.h5", ""} {
		if _, err := p.ReadAt(ctx, bad, 0, 1); !errors.Is(err, catalog.ErrCorrupt) {
			t.Errorf("%q: %v, want ErrCorrupt", bad, err)
		}
	}
	if _, err := p.ReadAt(ctx, "missing.h5", 0, 1); !errors.Is(err, catalog.ErrNotFound) {
		t.Errorf("missing: %v", err)
	}
	if n, err := p.Size(ctx, "data.h5"); n != 400 || err != nil {
		t.Errorf("Size = %d, %v", n, err)
	}
}

// TestFilesConcurrent reads many files through a pool smaller than the file
// count from many goroutines (run with -race).
func TestFilesConcurrent(t *testing.T) {
	dir := t.TempDir()
	const nfiles = 9
	for i := 0; i < nfiles; i++ {
		writeFile(t, dir, fmt.Sprintf("sub/f%d.bin", i), bytes.Repeat([]byte{byte(i)}, 1000))
	}
	p := NewFiles(dir, 3)
	defer p.Close()
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for k := 0; k < 200; k++ {
				i := (g*7 + k) % nfiles
				b, err := p.ReadAt(context.Background(), fmt.Sprintf("sub/f%d.bin", i), int64(k%900), 100)
				if err != nil {
					errs <- err
					return
				}
				if b[0] != byte(i) || b[99] != byte(i) {
					errs <- fmt.Errorf("file %d: wrong bytes", i)
					return
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	p.mu.Lock()
	n := len(p.open)
	p.mu.Unlock()
	if n > 3 {
		t.Errorf("%d files open, pool max 3", n)
	}
}

func TestSourceReadBlock(t *testing.T) {
	dir := t.TempDir()
	raw := make([]byte, 64)
	for i := range raw {
		raw[i] = byte(i)
	}
	var z bytes.Buffer
	w := zlib.NewWriter(&z)
	w.Write(raw[:48])
	w.Close()
	file := append(append([]byte("HEADER--"), raw...), z.Bytes()...)
	writeFile(t, dir, "d.h5", file)
	src := NewSource(NewFiles(dir, 4))
	defer src.Files().Close()
	ctx := context.Background()
	dt := catalog.DType{Kind: catalog.Float, Size: 8}
	b := catalog.Block{Box: catalog.Box{Lower: []int64{0, 0}, Count: []int64{2, 4}}, File: "d.h5", Offset: 8, Length: 64}
	got, err := catalog.ReadBlock(ctx, src, &b, dt)
	if err != nil || !bytes.Equal(got, raw) {
		t.Fatalf("plain block: %v", err)
	}
	// Partial edge chunk: valid box 1x2 of a stored 2x3.
	c := catalog.Block{Box: catalog.Box{Lower: []int64{2, 0}, Count: []int64{1, 2}},
		File: "d.h5", Offset: 72, Length: int64(z.Len()), Codecs: []catalog.Codec{{Name: "deflate", Params: []uint32{6}}}}.WithStored([]int64{2, 3}, nil)
	got, err = catalog.ReadBlock(ctx, src, &c, dt)
	if err != nil || !bytes.Equal(got, raw[:48]) {
		t.Fatalf("deflate block: %v", err)
	}
	c = c.WithStored([]int64{2, 4}, nil)
	if _, err := catalog.ReadBlock(ctx, src, &c, dt); !errors.Is(err, catalog.ErrCorrupt) || !strings.Contains(err.Error(), "d.h5: offset 72: block of 60 bytes") {
		t.Errorf("size mismatch: %v", err)
	}
	in := catalog.Block{Box: catalog.Box{}}.WithInline([]byte{1, 2, 3, 4, 5, 6, 7, 8})
	if got, err := catalog.ReadBlock(ctx, src, &in, dt); err != nil || !bytes.Equal(got, in.Inline()) {
		t.Errorf("inline: %v", err)
	}
	b.Length = 16
	if _, err := catalog.ReadBlock(ctx, src, &b, dt); !errors.Is(err, catalog.ErrCorrupt) {
		t.Errorf("length/shape mismatch: %v", err)
	}
}

func TestBzip2(t *testing.T) {
	// bzip2 -1 of bytes 0..7 repeated 64 times, written by Python's bz2.
	bz := []byte("\x42\x5a\x68\x31\x31\x41\x59\x26\x53\x59\x6a\xb1\xf2\x18\x00\x00\x1f\xc0\x00\x7f\x80\x20\x00\x50\x86\x04\x05\x50\x13\x4e\x02\x40\xa0\x2c\x0c\x03\x40\xf0\x1c\x07\xc5\xdc\x91\x4e\x14\x24\x1a\xac\x7c\x86\x00")
	want := bytes.Repeat([]byte{0, 1, 2, 3, 4, 5, 6, 7}, 64)
	c := []catalog.Codec{{Name: "bzip2"}}
	if got, err := Decode(bz, c, 8, 512); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("bzip2: %v", err)
	}
	two := append(append([]byte(nil), bz...), bz...)
	if got, err := Decode(two, c, 8, 1024); err != nil || !bytes.Equal(got, append(want, want...)) {
		t.Fatalf("concatenated bzip2: %v", err)
	}
	if _, err := Decode(two, c, 8, 512); !errors.Is(err, catalog.ErrCorrupt) || !strings.Contains(err.Error(), "past 512") {
		t.Errorf("oversized bzip2: %v", err)
	}
	if _, err := Decode(bz[:30], c, 8, 512); !errors.Is(err, catalog.ErrCorrupt) {
		t.Errorf("truncated bzip2: %v", err)
	}
	if _, err := Decode([]byte("nope"), c, 8, 512); !errors.Is(err, catalog.ErrCorrupt) {
		t.Errorf("garbage bzip2: %v", err)
	}
}

// A read timer (catalog.Reads.Timer) counts the reads of every path a
// block takes: a block read alone (inline or of no extent), a raw block
// read into its destination and ReadBlocks' coalesced runs.
func TestReadTimerCountsEveryRead(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "a.bin", make([]byte, 4096))
	src := NewSource(NewFiles(dir, 2))
	dt := catalog.DType{Kind: catalog.Uint, Size: 1}
	b := &catalog.Block{Box: catalog.Box{Lower: []int64{0}, Count: []int64{4096}}, File: "a.bin", Length: 4096}
	var into, batch int64
	dst := make([]byte, 4096)
	err := src.ReadBlocks(context.Background(), catalog.Reads{Blocks: []*catalog.Block{b}, DTypes: []catalog.DType{dt}, Into: [][]byte{dst}, Timer: &into},
		func(int, []byte) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	err = src.ReadBlocks(context.Background(), catalog.Reads{Blocks: []*catalog.Block{b}, DTypes: []catalog.DType{dt}, Timer: &batch}, func(int, []byte) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	if into <= 0 || batch <= 0 {
		t.Fatalf("read time counted: into its destination %d ns, coalesced %d ns", into, batch)
	}
}
