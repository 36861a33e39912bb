//go:build cgo

package h5

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"relayout/catalog"
)

// TestSlabReader reads hyperslabs of datasets h5py wrote (contiguous,
// chunked with deflate and partial edge chunks, big-endian, unallocated
// chunks with a fill value, a scalar, a virtual dataset) and compares each
// with the same slice as h5py reads it, as row-major little-endian bytes.
func TestSlabReader(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.h5")
	runPython(t, `
import sys, os, numpy as np, h5py
p = sys.argv[1]
rng = np.random.default_rng(3)
boxes = {
  "cont": ((0, 0, 0), (5, 6, 7)),
  "chunk": ((3, 1), (20, 9)),
  "be": ((2,), (9,)),
  "sparse": ((0, 0), (8, 8)),
  "scalar": ((), ()),
  "vds": ((1, 0), (5, 4)),
  "big": ((3, 5, 7), (10, 20, 30)),
  "bigone": ((2, 16, 16), (5, 14, 16)),
  "bigbe": ((0, 0, 0), (20, 30, 40)),
  "bigsparse": ((1, 2, 3), (15, 25, 33)),
}
with h5py.File(p, "w") as f:
    f.create_dataset("cont", data=rng.random((5, 6, 7)))
    f.create_dataset("g/chunk", data=rng.integers(-9, 9, (23, 11)).astype("<i2"), chunks=(4, 5), compression="gzip")
    f.create_dataset("be", data=rng.random(17).astype(">f4"))
    s = f.create_dataset("sparse", shape=(8, 8), dtype="<u4", chunks=(4, 4), fillvalue=7)
    s[0:4, 0:4] = 1
    f.create_dataset("scalar", data=np.int64(-5))
    f.create_dataset("src", data=np.arange(12.0).reshape(3, 4))
    lay = h5py.VirtualLayout(shape=(6, 4), dtype="<f8")
    lay[2:5] = h5py.VirtualSource(".", "src", shape=(3, 4))
    f.create_virtual_dataset("vds", lay, fillvalue=-1.5)
    big = rng.random((20, 30, 40))
    f.create_dataset("big", data=big, chunks=(8, 16, 16))
    f.create_dataset("bigbe", data=big.astype(">f8"), chunks=(7, 11, 13))
    b = f.create_dataset("bigsparse", shape=(20, 30, 40), dtype="<i4", chunks=(4, 8, 8), fillvalue=5)
    b[4:12, 0:16, 8:40] = rng.integers(-9, 9, (8, 16, 32))
with h5py.File(p, "r") as f:
    for name, (lo, cnt) in boxes.items():
        d = f["g/chunk" if name == "chunk" else "big" if name == "bigone" else name]
        sl = tuple(slice(l, l + c) for l, c in zip(lo, cnt))
        a = d[sl] if sl else d[()]
        np.ascontiguousarray(np.asarray(a).astype(d.dtype.newbyteorder("<"))).tofile(p + "." + name)
`, path)
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f64 := catalog.DType{Kind: catalog.Float, Size: 8}
	cases := []struct {
		name, path   string
		dt           catalog.DType
		lower, count []int64
		cache        int64
	}{
		{"cont", "/cont", f64, []int64{0, 0, 0}, []int64{5, 6, 7}, 0},
		{"chunk", "/g/chunk", catalog.DType{Kind: catalog.Int, Size: 2}, []int64{3, 1}, []int64{20, 9}, 1 << 20},
		{"be", "/be", catalog.DType{Kind: catalog.Float, Size: 4, BigEndian: true}, []int64{2}, []int64{9}, 0},
		{"sparse", "/sparse", catalog.DType{Kind: catalog.Uint, Size: 4}, []int64{0, 0}, []int64{8, 8}, 0},
		{"scalar", "/scalar", catalog.DType{Kind: catalog.Int, Size: 8}, []int64{}, []int64{}, 0},
		{"vds", "/vds", f64, []int64{1, 0}, []int64{5, 4}, 0},
		// Chunks larger than the cache given: read chunk column by chunk
		// column (across columns, partial edge chunks, big-endian, never
		// written chunks), or at once inside one column.
		{"big", "/big", f64, []int64{3, 5, 7}, []int64{10, 20, 30}, 4096},
		{"bigone", "/big", f64, []int64{2, 16, 16}, []int64{5, 14, 16}, 4096},
		{"bigbe", "/bigbe", catalog.DType{Kind: catalog.Float, Size: 8, BigEndian: true}, []int64{0, 0, 0}, []int64{20, 30, 40}, 4096},
		{"bigsparse", "/bigsparse", catalog.DType{Kind: catalog.Int, Size: 4}, []int64{1, 2, 3}, []int64{15, 25, 33}, 512},
	}
	for _, c := range cases {
		want, err := os.ReadFile(path + "." + c.name)
		if err != nil {
			t.Fatal(err)
		}
		r, err := f.OpenSlabReader(c.path, c.dt, c.cache)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if big := strings.HasPrefix(c.name, "big"); big != (r.columns != nil) {
			t.Errorf("%s: read by chunk columns %v, want %v", c.name, r.columns != nil, big)
		}
		got := make([]byte, len(want))
		if err := r.Read(c.lower, c.count, got); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: hyperslab %v+%v differs from h5py's", c.name, c.lower, c.count)
		}
		if c.name == "chunk" {
			// Out of the extent, wrong rank, wrong buffer: refused.
			for _, bad := range []struct{ lo, n []int64 }{{[]int64{20, 0}, []int64{4, 1}}, {[]int64{0}, []int64{1}}, {[]int64{0, 0}, []int64{1, 2}}} {
				if err := r.Read(bad.lo, bad.n, make([]byte, 2)); !errors.Is(err, catalog.ErrCorrupt) {
					t.Errorf("read %v+%v: %v, want ErrCorrupt", bad.lo, bad.n, err)
				}
			}
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		if err := r.Read(c.lower, c.count, got); err == nil {
			t.Errorf("%s: read after close succeeded", c.name)
		}
		// The one-shot form.
		if err := f.ReadHyperslab(c.path, c.lower, c.count, c.dt, got); err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: ReadHyperslab: %v, equal %v", c.name, err, bytes.Equal(got, want))
		}
	}
	if _, err := f.OpenSlabReader("/nope", f64, 0); !errors.Is(err, catalog.ErrNotFound) {
		t.Errorf("missing dataset: %v, want ErrNotFound", err)
	}
	// A reader left open is closed with its file.
	if _, err := f.OpenSlabReader("/cont", f64, 0); err != nil {
		t.Fatal(err)
	}
}
