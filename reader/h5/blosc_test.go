package h5

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"relayout/catalog"
	"relayout/internal/testkit"
)

// makeBlosc writes, with h5py and hdf5plugin.Blosc (HDF5 filter 32001,
// c-blosc1 chunks), one dataset per compressor and shuffle mode, in several
// element types, chunk shapes with partial edge chunks, and a chunk blosc
// stores memcpyed (random bytes).
const makeBlosc = `
import sys, numpy as np, h5py, hdf5plugin
rng = np.random.default_rng(5)
with h5py.File(sys.argv[1], "w") as f:
    for c in ["blosclz", "lz4", "lz4hc", "snappy", "zlib", "zstd"]:
        for s, sn in [(hdf5plugin.Blosc.NOSHUFFLE, "noshuffle"), (hdf5plugin.Blosc.SHUFFLE, "shuffle"), (hdf5plugin.Blosc.BITSHUFFLE, "bitshuffle")]:
            kw = hdf5plugin.Blosc(cname=c, clevel=5, shuffle=s)
            f.create_dataset(f"{c}/{sn}/f8", data=np.round(np.sin(np.arange(70*90) / 40.0).reshape(70, 90) * 512) / 8, chunks=(32, 40), **kw)
            f.create_dataset(f"{c}/{sn}/i2", data=(np.arange(5000) % 700 - 350).astype("<i2"), chunks=(1024,), **kw)
            f.create_dataset(f"{c}/{sn}/f4", data=(np.arange(6*50*40, dtype="<f4") * 0.5).reshape(6, 50, 40), chunks=(2, 50, 40), **kw)
    f.create_dataset("random/u1", data=rng.integers(0, 256, 10000, dtype="u1"), chunks=(4096,), **hdf5plugin.Blosc(cname="lz4"))
    f.create_dataset("bigendian/i4", data=np.arange(3000, dtype=">i4"), chunks=(1000,), **hdf5plugin.Blosc(cname="zstd"))
`

// TestBloscFilter: every element relayout's reader decodes from blosc
// chunks equals what h5py (libhdf5 with the blosc plugin) reads.
func TestBloscFilter(t *testing.T) {
	testkit.NeedPython(t, "Debian python3-hdf5plugin", "hdf5plugin")
	file := filepath.Join(t.TempDir(), "blosc.h5")
	runPython(t, makeBlosc, file)
	want := oracle(t, file)
	d, err := Open(file, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	arrays := scanAll(t, d)
	if len(arrays) != 6*3*3+2 {
		t.Fatalf("%d arrays", len(arrays))
	}
	// Chunks blosc could not shrink are stored with the (optional) filter
	// skipped, as the chunk's filter mask says.
	filtered, skipped := 0, 0
	for _, a := range arrays {
		for _, b := range a.Blocks {
			switch c := b.Codecs; {
			case len(c) == 1 && c[0].Name == "hdf5-blosc":
				filtered++
			case len(c) == 0:
				skipped++
			default:
				t.Fatalf("%s: codecs %v", a.Var, c)
			}
		}
	}
	if filtered < 200 {
		t.Errorf("%d blosc chunks (%d stored unfiltered)", filtered, skipped)
	}
	t.Logf("%d blosc chunks, %d stored unfiltered", filtered, skipped)
	checkValues(t, d, arrays, want)

	// A damaged chunk is corruption naming the file and the chunk's offset.
	a := arrays[1]
	b := a.Blocks[1]
	b.Length -= 7
	_, err = catalog.ReadBlock(t.Context(), d, &b, a.DType)
	if !errors.Is(err, catalog.ErrCorrupt) || !strings.Contains(err.Error(), "blosc.h5") {
		t.Errorf("truncated chunk: %v", err)
	}
}
