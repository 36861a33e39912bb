package chunkindex

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"relayout/catalog"
)

func TestRealOpenPMD(t *testing.T) {
	dir := dataDir(t, "hdf5/openpmd-femm")
	for _, name := range []string{"example-femm-3d.h5", "example-femm-thetaMode.h5"} {
		t.Run(name, func(t *testing.T) {
			if n := compareFile(t, filepath.Join(dir, name)); n == 0 {
				t.Fatal("no chunked dataset compared")
			}
		})
	}
}

// genDefault writes files with the default (1.8-compatible) format: version 3
// layouts indexed by version 1 B-trees.
const genDefault = `
import sys, h5py, numpy as np
d = sys.argv[1]
rng = np.random.default_rng(7)
with h5py.File(d + '/many.h5', 'w') as f:
    a = f.create_dataset('a', shape=(64, 64, 64), chunks=(4, 4, 4), dtype='f4')
    a[0:32] = np.arange(32*64*64, dtype='f4').reshape(32, 64, 64)
    a[40:44, 8:60] = 1      # chunks 40..43 x 8..59, rest unwritten
    b = f.create_dataset('g/one', shape=(1000,), chunks=(7,), dtype='i2')
    b[3:500] = 5
    f.create_dataset('empty', shape=(10, 10), chunks=(5, 5), dtype='f8')
    f.create_dataset('partial', shape=(47, 47), chunks=(32, 32), dtype='f8', data=np.ones((47, 47)))
with h5py.File(d + '/gzip.h5', 'w') as f:
    g = f.create_dataset('g', shape=(64, 64), chunks=(8, 8), dtype='i4', compression='gzip', shuffle=True)
    g[...] = rng.integers(0, 1 << (np.arange(64) % 30 + 1)[:, None], size=(64, 64)).astype('i4')
    # chunks written with filters skipped: mask 1 (shuffle skipped), 2, 3
    for i, m in enumerate([1, 2, 3]):
        g.id.write_direct_chunk((56, 8 * i), b'x' * (10 + i), filter_mask=m)
with h5py.File(d + '/userblock.h5', 'w', userblock_size=512) as f:
    u = f.create_dataset('u', shape=(30, 40), chunks=(8, 8), dtype='f8', compression='gzip')
    u[...] = np.arange(1200.).reshape(30, 40)
`

// genLatest writes libver='latest' files: version 4 layouts with each
// chunk index type.
const genLatest = `
import sys, h5py, numpy as np
from h5py import h5d, h5p, h5s, h5t
d = sys.argv[1]
rng = np.random.default_rng(3)
with h5py.File(d + '/latest.h5', 'w', libver='latest') as f:
    s = f.create_dataset('single', shape=(8, 8), chunks=(8, 8), dtype='f4'); s[...] = 1
    s = f.create_dataset('single_gz', shape=(8, 9), chunks=(8, 9), dtype='f4', compression='gzip'); s[...] = rng.random((8, 9))
    f.create_dataset('single_empty', shape=(8, 8), chunks=(8, 8), dtype='f4')
    x = f.create_dataset('fixed', shape=(40, 30), chunks=(7, 8), dtype='i8'); x[0:20, 0:16] = 3; x[35:, 25:] = 4
    x = f.create_dataset('fixed_max', shape=(10, 10), maxshape=(20, 20), chunks=(3, 3), dtype='u1'); x[...] = 9
    x = f.create_dataset('fixed_gz', shape=(64, 64), chunks=(8, 8), dtype='f8', compression='gzip', shuffle=True)
    x[0:48] = rng.random((48, 64))
    x = f.create_dataset('fixed_paged', shape=(3000,), chunks=(1,), dtype='u1'); x[10:20] = 1; x[2100:2200] = 2
    e = f.create_dataset('ea', shape=(50, 10), maxshape=(None, 20), chunks=(4, 3), dtype='f4'); e[0:30] = 1; e[45:50, 0:3] = 2
    # unlimited middle dimension; element [i,j,k] = 100*i + 10*j + k at each chunk's first element
    e = f.create_dataset('ea_mid', shape=(5, 9, 6), maxshape=(7, None, 6), chunks=(2, 2, 4), dtype='<f4')
    i, j, k = np.meshgrid(np.arange(5), np.arange(9), np.arange(6), indexing='ij')
    e[...] = 100 * (i - i % 2) + 10 * (j - j % 2) + (k - k % 4)
    e = f.create_dataset('ea_gz', shape=(100, 8), maxshape=(None, 8), chunks=(3, 8), dtype='f8', compression='gzip'); e[...] = rng.random((100, 8))
    # super block 13 (from element 131060) has paged data blocks of 2048 elements
    e = f.create_dataset('ea_long', shape=(140000,), maxshape=(None,), chunks=(1,), dtype='u1')
    e[0:100] = 1; e[20000:20100] = 2; e[133000:133100] = 3; e[135000:135010] = 4
    b = f.create_dataset('bt2', shape=(64, 64), maxshape=(None, None), chunks=(2, 2), dtype='i2'); b[...] = 1
    b = f.create_dataset('bt2_gz', shape=(30, 30), maxshape=(None, None), chunks=(4, 4), dtype='f8', compression='gzip')
    b[0:20] = rng.random((20, 30))
    # implicit index: early allocation, no filters, fixed maximum extent
    for name, shape, maxshape in [('implicit', (10, 10), (10, 10)), ('implicit_max', (10, 10), (20, 20))]:
        dcpl = h5p.create(h5p.DATASET_CREATE)
        dcpl.set_chunk((3, 3))
        dcpl.set_alloc_time(h5d.ALLOC_TIME_EARLY)
        sp = h5s.create_simple(shape, maxshape)
        h5d.create(f.id, name.encode(), h5t.NATIVE_INT32, sp, dcpl=dcpl)
with h5py.File(d + '/latest-ub.h5', 'w', libver='latest', userblock_size=1024) as f:
    f.create_dataset('fixed', shape=(20, 20), chunks=(3, 3), dtype='f4', compression='gzip')[...] = 2
    f.create_dataset('bt2', shape=(9, 9), maxshape=(None, None), chunks=(2, 2), dtype='f4')[...] = 2
`

func TestDefaultFormat(t *testing.T) {
	dir := t.TempDir()
	runPython(t, genDefault, dir)
	if n := compareFile(t, filepath.Join(dir, "many.h5")); n != 4 {
		t.Errorf("compared %d datasets, want 4", n)
	}
	compareFile(t, filepath.Join(dir, "gzip.h5"))
	compareFile(t, filepath.Join(dir, "userblock.h5"))

	// The oracle comparison alone would pass on two empty lists.
	p := filepath.Join(dir, "many.h5")
	got, err := native(t, p, objAddr(t, p, "/a"))
	if err != nil {
		t.Fatal(err)
	}
	if want := 8*16*16 + 1*13*16; len(got) != want { // 32/4 x 64/4 x 64/4 + 4/4 x (8..59)/4 x 64/4
		t.Errorf("/a: %d chunks, want %d", len(got), want)
	}
	p = filepath.Join(dir, "gzip.h5")
	got, err = native(t, p, objAddr(t, p, "/g"))
	if err != nil {
		t.Fatal(err)
	}
	masks, sizes := map[uint32]int{}, map[int64]bool{}
	for _, c := range got {
		masks[c.FilterMask]++
		sizes[c.Size] = true
	}
	if masks[1] != 1 || masks[2] != 1 || masks[3] != 1 || len(sizes) < 10 {
		t.Errorf("/g: filter masks %v, %d distinct sizes", masks, len(sizes))
	}
}

// genIstoreK writes chunk B-trees of K = 2 (superblock version 1, which
// records K): nodes of up to 4 entries, many levels.
const genIstoreK = `
import sys, ctypes, ctypes.util, h5py, numpy as np
fcpl = h5py.h5p.create(h5py.h5p.FILE_CREATE)
# h5py has no binding for H5Pset_istore_k: call the library it loaded
lib = ctypes.CDLL(ctypes.util.find_library("hdf5_serial") or ctypes.util.find_library("hdf5"))
assert lib.H5Pset_istore_k(ctypes.c_int64(fcpl.id), ctypes.c_uint(2)) >= 0
fid = h5py.h5f.create((sys.argv[1] + "/k2.h5").encode(), h5py.h5f.ACC_TRUNC, fcpl=fcpl)
with h5py.File(fid) as f:
    d = f.create_dataset("a", (40, 40), dtype="f8", chunks=(4, 4))
    d[...] = np.arange(1600.0).reshape(40, 40)
`

// TestIstoreK: a file whose chunk B-trees have a K other than the default
// (superblock version 1) lists like the library's, and a node is held to
// 2K entries of that K.
func TestIstoreK(t *testing.T) {
	dir := t.TempDir()
	runPython(t, genIstoreK, dir)
	p := filepath.Join(dir, "k2.h5")
	if n := compareFile(t, p); n != 1 {
		t.Errorf("compared %d datasets, want 1", n)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if data[8] != 1 {
		t.Fatalf("superblock version %d, want 1 (K recorded)", data[8])
	}
	tree := bytes.Index(data, []byte("TREE\x01"))
	binary.LittleEndian.PutUint16(data[tree+6:], 5) // 2K = 4
	err = List(bytes.NewReader(data), int64(len(data)), objAddr(t, p, "/a"), func(Chunk) error { return nil })
	if !errors.Is(err, catalog.ErrCorrupt) || !strings.Contains(err.Error(), "more than 2K = 4") {
		t.Errorf("5 entries in a node of K = 2: %v", err)
	}
}

func TestLatestFormat(t *testing.T) {
	dir := t.TempDir()
	runPython(t, genLatest, dir)
	p := filepath.Join(dir, "latest.h5")
	for _, d := range []string{"single", "single_gz", "single_empty", "fixed", "fixed_max", "fixed_gz", "fixed_paged",
		"ea", "ea_gz", "ea_long", "bt2", "bt2_gz", "implicit", "implicit_max"} {
		t.Run(d, func(t *testing.T) {
			compareFile(t, p, "/"+d)
		})
	}
	t.Run("userblock", func(t *testing.T) {
		if n := compareFile(t, filepath.Join(dir, "latest-ub.h5")); n != 2 {
			t.Errorf("compared %d datasets, want 2", n)
		}
	})
	// HDF5 1.10.8's H5Dget_chunk_info (and H5Dget_chunk_info_by_coord)
	// report wrong offsets for extensible arrays whose unlimited dimension
	// is not the first: [0, 2, 0] for the chunk at [2, 0, 0] of ea_mid.
	// The oracle here is the data h5py wrote: every element of a chunk
	// encodes the chunk's offset.
	t.Run("ea_mid", func(t *testing.T) {
		got, err := native(t, p, objAddr(t, p, "/ea_mid"))
		if err != nil {
			t.Fatal(err)
		}
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[int64]bool{}
		for _, c := range got {
			v := math.Float32frombits(binary.LittleEndian.Uint32(raw[c.Address:]))
			if want := float32(100*c.Offset[0] + 10*c.Offset[1] + c.Offset[2]); v != want || seen[c.Address] || c.Size != 2*2*4*4 {
				t.Errorf("chunk %+v: first element %v, want %v (or address repeated / size wrong)", c, v, want)
			}
			seen[c.Address] = true
		}
		if len(got) != 3*5*2 {
			t.Errorf("%d chunks, want 30", len(got))
		}
	})
}

func TestNotChunked(t *testing.T) {
	dir := t.TempDir()
	runPython(t, `
import sys, h5py
with h5py.File(sys.argv[1] + '/c.h5', 'w') as f:
    f.create_dataset('contig', data=[1, 2, 3])
`, dir)
	p := filepath.Join(dir, "c.h5")
	_, err := native(t, p, objAddr(t, p, "/contig"))
	if !errors.Is(err, catalog.ErrUnsupported) || !strings.Contains(err.Error(), "not chunked") {
		t.Errorf("contiguous dataset: %v, want ErrUnsupported", err)
	}
}
