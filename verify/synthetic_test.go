package verify

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"relayout/catalog"
)

// fileSource serves raw blocks from files of a directory.
type fileSource struct {
	catalog.Plain
	dir string
}

func (s fileSource) ReadBlock(_ context.Context, b *catalog.Block, dt catalog.DType) ([]byte, error) {
	f, err := os.Open(filepath.Join(s.dir, b.File))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, b.Length)
	_, err = f.ReadAt(buf, b.Offset)
	return buf, err
}

// ReadBlocks implements catalog.Source, a block at a time.
func (s fileSource) ReadBlocks(ctx context.Context, r catalog.Reads, fn func(i int, data []byte) error) error {
	return catalog.ReadEach(ctx, r, func(b *catalog.Block, dt catalog.DType, _ []byte) ([]byte, error) { return s.ReadBlock(ctx, b, dt) }, fn)
}

// batchSource is a coalescing source over fileSource: every block read
// on its own, handed to fn in reverse order (the order is unspecified).
type batchSource struct{ fileSource }

// Caps implements catalog.Source.
func (s batchSource) Caps() catalog.Caps { return catalog.Caps{Coalesces: true} }

func (s batchSource) ReadBlocks(ctx context.Context, r catalog.Reads, fn func(i int, data []byte) error) error {
	for i := len(r.Blocks) - 1; i >= 0; i-- {
		data, err := s.ReadBlock(ctx, r.Blocks[i], r.DType(i))
		if err == nil && r.Dst(i) != nil {
			data = append(r.Dst(i)[:0], data...)
		}
		if err == nil {
			err = fn(i, data)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// synthetic is an input written here (blocks encoded by the reference
// encoder: big-endian, column-major, ghost cells, padded edges, a hole)
// and an output written by h5py alone from the expected array: verify
// must accept it, with no relayout writer involved, and refuse each
// variation.
type synthetic struct {
	dir   string
	store *catalog.Store
	src   catalog.Source
	a     *catalog.Array
	want  []byte // the expected output, row-major little-endian
}

func newSynthetic(t *testing.T, fill []byte, overlap bool) *synthetic {
	t.Helper()
	dir := t.TempDir()
	dt := catalog.DType{Kind: catalog.Float, Size: 8, BigEndian: true}
	a := &catalog.Array{Var: "E/x", Step: 3, DType: dt, Shape: []int64{9, 10, 11}, Offset: []int64{0, 0, 0}, Fill: fill}
	// Blocks tiling the array but for the box [6:9, 5:10, 0:11] (a hole).
	boxes := []catalog.Box{
		{Lower: []int64{0, 0, 0}, Count: []int64{6, 10, 11}},
		{Lower: []int64{6, 0, 0}, Count: []int64{3, 5, 6}},
		{Lower: []int64{6, 0, 6}, Count: []int64{3, 5, 5}},
	}
	if overlap {
		boxes = append(boxes, catalog.Box{Lower: []int64{2, 2, 2}, Count: []int64{2, 2, 2}})
	}
	r := rand.New(rand.NewPCG(5, 6))
	var file []byte
	for i, box := range boxes {
		b := catalog.Block{Box: box, File: "data.0", Offset: int64(len(file)), Rank: int32(i)}
		if i%2 == 0 {
			b.Order = catalog.ColMajor
		}
		if i == 0 || i == 2 {
			b = b.WithStored([]int64{box.Count[0] + 2, box.Count[1] + 3, box.Count[2] + 1}, []int64{1, 2, 0})
		}
		data := encode(&b, dt, r)
		if overlap && i == 3 {
			data[7] ^= 1 // a value that disagrees with block 0's
		}
		b.Length = int64(len(data))
		file = append(file, data...)
		a.Blocks = append(a.Blocks, b)
	}
	if err := os.WriteFile(filepath.Join(dir, "data.0"), file, 0o644); err != nil {
		t.Fatal(err)
	}
	le, anyNaN := expectedFill(a)
	if anyNaN {
		le = []byte{0, 0, 0, 0, 0, 0, 0xf8, 0x7f}
	}
	want := bytes.Repeat(le, int(a.Elements()))
	for _, box := range boxes[:3] {
		idx := make([]int64, 3)
		eachIndex(box, idx, func() {
			e := (idx[0]*10+idx[1])*11 + idx[2]
			copy(want[e*8:], value(idx, 8))
		})
	}
	store, err := catalog.CreateStore(filepath.Join(t.TempDir(), "in.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	if err := store.SetInfo(catalog.DatasetInfo{Path: dir, Root: dir, Format: "test"}); err != nil {
		t.Fatal(err)
	}
	if err := store.Put(a); err != nil {
		t.Fatal(err)
	}
	return &synthetic{dir: dir, store: store, src: fileSource{dir: dir}, a: a, want: want}
}

func slicesClone(v []int64) []int64 { return append([]int64(nil), v...) }

// writeOutput writes OUT with h5py: E.x.h5 holding data (row-major
// little-endian float64 bytes) at /data/3/meshes/E/x, its fill value
// fillHex (16 hex digits, little-endian bytes; "" for HDF5's default),
// and a manifest with data's sha256.
func (s *synthetic) writeOutput(t *testing.T, data []byte, fillHex string, chunked bool) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	raw := filepath.Join(t.TempDir(), "raw")
	if err := os.WriteFile(raw, data, 0o644); err != nil {
		t.Fatal(err)
	}
	chunks := "None"
	if chunked {
		chunks = "(4, 3, 11)"
	}
	sum := python(t, `
import sys, hashlib, numpy as np, h5py
out, raw, fill, chunks = sys.argv[1], sys.argv[2], sys.argv[3], eval(sys.argv[4])
b = open(raw, "rb").read()
a = np.frombuffer(b, dtype="<f8").reshape(9, 10, 11)
kw = {}
if fill:
    kw["fillvalue"] = np.frombuffer(bytes.fromhex(fill), dtype="<f8")[0]
with h5py.File(out + "/E.x.h5", "w") as f:
    f.create_dataset("/data/3/meshes/E/x", data=a, chunks=chunks, compression="gzip" if chunks else None, **kw)
print(hashlib.sha256(b).hexdigest())
`, out, raw, fillHex, chunks)
	m := catalog.Manifest{Tool: "relayout", Variables: []catalog.ManifestVariable{{
		Name: "E/x", DType: "<f8", File: "E.x.h5",
		Datasets: []catalog.ManifestDataset{{Step: 3, Path: "/data/3/meshes/E/x", Shape: []int64{9, 10, 11},
			Offset: []int64{0, 0, 0}, Layout: "contiguous", SHA256: strings.TrimSpace(sum)}},
	}}}
	if chunked {
		m.Variables[0].Datasets[0].Layout, m.Variables[0].Datasets[0].Chunk = "chunked", []int64{4, 3, 11}
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, catalog.ManifestName), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

func (s *synthetic) verify(t *testing.T, out string) (bool, string) {
	t.Helper()
	var log strings.Builder
	ok, err := Output(context.Background(), s.store, s.src, out, nil, Options{MaxMem: 4 << 10, Jobs: 3, Log: &log})
	if err != nil {
		t.Fatalf("verify: %v\n%s", err, log.String())
	}
	return ok, log.String()
}

func TestSynthetic(t *testing.T) {
	nan := "000000000000f87f"
	cases := []struct {
		name    string
		fill    []byte // the input's fill value (big-endian)
		overlap bool
		data    func(want []byte) []byte
		outFill string
		chunked bool
		want    string // regexp; "" = OK
	}{
		{name: "ok", outFill: nan},
		{name: "ok-chunked", outFill: nan, chunked: true},
		{name: "ok-own-fill", fill: []byte{0xbf, 0xf0, 0, 0, 0, 0, 0, 0}, outFill: "000000000000f0bf"}, // -1
		{name: "fill-not-nan", outFill: "", want: `^DIFF E/x step 3 level 0: fill value in=NaN \(none declared\) out=0$`},
		{name: "fill-differs", fill: []byte{0xbf, 0xf0, 0, 0, 0, 0, 0, 0}, outFill: nan,
			want: `^DIFF E/x step 3 level 0: fill value in=-1 out=NaN\(0x7ff8000000000000\)$`},
		{name: "hole-written", outFill: nan, data: func(w []byte) []byte {
			w = bytes.Clone(w)
			e := (8*10+9)*11 + 10 // the hole's last element
			copy(w[e*8:], []byte{1, 0, 0, 0, 0, 0, 0, 0})
			return w
		}, want: `^DIFF E/x step 3 level 0 at \[8,9,10\]: fill=NaN\(0x7ff8000000000000\) out=5e-324$`},
		{name: "nan-payload", outFill: nan, data: func(w []byte) []byte {
			w = bytes.Clone(w)
			e := (7*10+6)*11 + 2 // in the hole: another NaN
			copy(w[e*8:], []byte{1, 0, 0, 0, 0, 0, 0xf8, 0x7f})
			return w
		}, want: `^DIFF E/x step 3 level 0 at \[7,6,2\]: fill=NaN\(0x7ff8000000000000\) out=NaN\(0x7ff8000000000001\)$`},
		{name: "ghost-shifted", outFill: nan, data: func(w []byte) []byte {
			// Block 0 as an assembly that ignored its ghost cells would
			// place it: shifted by one row.
			w = bytes.Clone(w)
			copy(w[0:], w[10*11*8:6*10*11*8])
			return w
		}, want: `^DIFF E/x step 3 level 0 at \[0,0,0\]: in=\S+ out=\S+$`},
		{name: "overlap-disagrees", overlap: true, outFill: nan, want: `^DIFF E/x step 3 level 0 at \[2,2,2\]: in=\S+ out=\S+$`},
	}
	for _, c := range cases {
		for _, batch := range []bool{false, true} {
			name := c.name
			if batch {
				name += "-batch"
			}
			t.Run(name, func(t *testing.T) {
				s := newSynthetic(t, c.fill, c.overlap)
				if batch {
					s.src = batchSource{fileSource{dir: s.dir}}
				}
				data := s.want
				if c.data != nil {
					data = c.data(data)
				}
				out := s.writeOutput(t, data, c.outFill, c.chunked)
				ok, log := s.verify(t, out)
				if c.want == "" {
					if !ok {
						t.Fatalf("want OK:\n%s", log)
					}
					return
				}
				line := strings.SplitN(log, "\n", 2)[0]
				if ok || !regexp.MustCompile(c.want).MatchString(line) {
					t.Fatalf("ok %v, want %s, got:\n%s", ok, c.want, log)
				}
			})
		}
	}
}
