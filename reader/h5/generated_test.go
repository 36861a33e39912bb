package h5

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"relayout/catalog"
	ih5 "relayout/internal/h5"
)

// makeFilters writes datasets exercising every storage form the reader maps.
const makeFilters = `
import sys, numpy as np, h5py
with h5py.File(sys.argv[1], "w") as f:
    a = (np.arange(37*29*5) * 0.25 - 100).reshape(37, 29, 5)
    f.create_dataset("filtered", data=a, chunks=(8, 8, 5), compression="gzip", shuffle=True, fletcher32=True)
    f.create_dataset("grp/gzip_i2", data=(np.arange(1000) % 300 - 150).astype("<i2"), chunks=(64,), compression="gzip")
    f.create_dataset("bigendian", data=np.arange(24, dtype=">u4").reshape(4, 6), chunks=(3, 4), shuffle=True)
    dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
    dcpl.set_layout(h5py.h5d.COMPACT)
    space = h5py.h5s.create_simple((6,))
    h5py.h5d.create(f.id, b"compact", h5py.h5t.IEEE_F32LE, space, dcpl=dcpl).write(h5py.h5s.ALL, h5py.h5s.ALL, np.arange(6, dtype="<f4") * 1.5)
    f.create_dataset("unwritten", shape=(5, 5), dtype="<f8", fillvalue=-7.5)
    f.create_dataset("sparse", shape=(20,), dtype="<i8", chunks=(4,), fillvalue=3)[8:12] = np.arange(4) + 100
    f.create_dataset("scalar", data=np.float64(2.5))
    f.create_dataset("text", data="hello")
    f.create_dataset("empty", shape=(0, 4), dtype="<f4")
    f.create_dataset("cmpd", data=np.zeros(3, dtype=[("a", "<i4"), ("b", "<f8")]))
`

func TestGeneratedStorageForms(t *testing.T) {
	file := filepath.Join(t.TempDir(), "forms.h5")
	runPython(t, makeFilters, file)
	want := oracle(t, file)
	d, err := Open(file, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	arrays := scanAll(t, d)
	names := []string{}
	byName := map[string]*catalog.Array{}
	for _, a := range arrays {
		names = append(names, a.Var)
		byName[a.Var] = a
	}
	if !slices.Equal(names, []string{"bigendian", "compact", "filtered", "grp/gzip_i2", "scalar", "sparse", "unwritten"}) {
		t.Fatalf("vars = %v", names)
	}
	for _, s := range []string{"forms.h5:/text: non-numeric dataset", "forms.h5:/empty: dataset with zero elements", "forms.h5:/cmpd: non-numeric dataset"} {
		if !containsPrefix(d.Info().Skipped, s) {
			t.Errorf("%q not in Skipped %q", s, d.Info().Skipped)
		}
	}
	f := byName["filtered"]
	if len(f.Blocks) != 5*4 || !slices.Equal(f.Blocks[0].Stored(), []int64{8, 8, 5}) {
		t.Errorf("filtered: %d blocks, stored %v", len(f.Blocks), f.Blocks[0].Stored())
	}
	var codecs []string
	for _, c := range f.Blocks[0].Codecs {
		codecs = append(codecs, c.Name)
	}
	if !slices.Equal(codecs, []string{"shuffle", "deflate", "fletcher32"}) {
		t.Errorf("filtered codecs %v", codecs)
	}
	if b := byName["bigendian"]; !b.DType.BigEndian || b.DType.NumPy() != ">u4" {
		t.Errorf("bigendian dtype %s", b.DType)
	}
	if c := byName["compact"]; len(c.Blocks) != 1 || c.Blocks[0].Inline() == nil || c.Blocks[0].File != "" {
		t.Errorf("compact blocks %+v", c.Blocks)
	}
	if u := byName["unwritten"]; len(u.Blocks) != 0 || u.Fill == nil {
		t.Errorf("unwritten: %d blocks, fill %v", len(u.Blocks), u.Fill)
	}
	if s := byName["sparse"]; len(s.Blocks) != 1 || s.Fill == nil {
		t.Errorf("sparse: %d blocks (want the one written chunk), fill %v", len(s.Blocks), s.Fill)
	}
	if s := byName["scalar"]; len(s.Shape) != 0 || len(s.Blocks) != 1 {
		t.Errorf("scalar: shape %v blocks %d", s.Shape, len(s.Blocks))
	}
	checkValues(t, d, arrays, want)
	// The chunks' lists are compact (lower corners in one arena, equal
	// counts shared, edge chunks' their own): the catalog keeps them as
	// built.
	store, err := catalog.CreateStore(filepath.Join(t.TempDir(), "catalog.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	store.KeepBlocks(1 << 20)
	if err := store.Put(f); err != nil {
		t.Fatal(err)
	}
	if kept, err := store.Array(f.Key()); err != nil || &kept.Blocks[0] != &f.Blocks[0] {
		t.Errorf("filtered: its chunk list was copied, not kept as built (%v)", err)
	}

	// Every block extent is checked against the file size before it is
	// emitted: pretend the file is shorter than the last chunk's end.
	hf, err := ih5.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer hf.Close()
	last := f.Blocks[len(f.Blocks)-1]
	for _, b := range f.Blocks {
		if b.Offset > last.Offset {
			last = b
		}
	}
	_, err = buildArray(hf, "forms.h5", last.Offset+last.Length-1, "/filtered")
	if !errors.Is(err, catalog.ErrCorrupt) || !strings.Contains(err.Error(), "forms.h5: offset ") || !strings.Contains(err.Error(), "dataset /filtered") ||
		!strings.Contains(err.Error(), "past end of file") {
		t.Errorf("short file: %v", err)
	}
	// A flipped byte inside a chunk is caught by fletcher32 on read.
	raw, _ := os.ReadFile(file)
	raw[f.Blocks[3].Offset+f.Blocks[3].Length/2] ^= 0x40
	bad := filepath.Join(t.TempDir(), "forms.h5")
	os.WriteFile(bad, raw, 0o644)
	d2, err := Open(bad, Config{Match: func(v string) bool { return v == "filtered" }})
	if err != nil {
		t.Fatal(err)
	}
	defer d2.Close()
	a2 := scanAll(t, d2)[0]
	if _, err := catalog.ReadBlock(t.Context(), d2, &a2.Blocks[3], a2.DType); !errors.Is(err, catalog.ErrCorrupt) || !strings.Contains(err.Error(), "fletcher32") {
		t.Errorf("flipped byte: %v", err)
	}
}

// TestLZFNative: h5py's LZF filter (32000) is decoded by relayout itself
// (no plugin, no library read), equal to the values h5py wrote.
func TestLZFNative(t *testing.T) {
	file := filepath.Join(t.TempDir(), "lzf.h5")
	runPython(t, `
import sys, numpy as np, h5py
with h5py.File(sys.argv[1], "w") as f:
    f.create_dataset("ok", data=np.arange(10.0))
    f.create_dataset("fields/packed", data=np.arange(1000.0), chunks=(100,), compression="lzf")
`, file)
	d, err := Open(file, Config{Match: func(v string) bool { return v == "fields/packed" }})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	a := scanAll(t, d)[0]
	if len(a.Blocks) != 10 || len(a.Blocks[0].Codecs) != 1 || a.Blocks[0].Codecs[0].Name != "lzf" {
		t.Fatalf("%d blocks, codecs %+v", len(a.Blocks), a.Blocks[0].Codecs)
	}
	got := assemble(t, d, a)
	for i := range 1000 {
		if v := math.Float64frombits(binary.LittleEndian.Uint64(got[8*i:])); v != float64(i) {
			t.Fatalf("element %d = %v", i, v)
		}
	}
	if st := d.IOStats(); st.LibraryBlocks != 0 {
		t.Errorf("%d blocks read through the library", st.LibraryBlocks)
	}
}

// TestUnknownFilterRefused: a filter no HDF5 plugin provides (id 40000,
// set with h5py's low-level API) is refused at Open by name and id, with the
// way out; deselecting the variable avoids the error.
func TestUnknownFilterRefused(t *testing.T) {
	file := filepath.Join(t.TempDir(), "unknown.h5")
	runPython(t, `
import sys, numpy as np, h5py
from h5py import h5p, h5z, h5t, h5s, h5d
with h5py.File(sys.argv[1], "w") as f:
    f.create_dataset("ok", data=np.arange(10.0))
    dcpl = h5p.create(h5p.DATASET_CREATE)
    dcpl.set_chunk((100,))
    dcpl.set_filter(40000, h5z.FLAG_OPTIONAL, (7,))
    g = f.create_group("fields")
    d = h5d.create(g.id, b"packed", h5t.IEEE_F64LE, h5s.create_simple((1000,)), dcpl)
    d.write_direct_chunk((0,), b"z" * 99, filter_mask=0)
`, file)
	_, err := Open(file, Config{})
	if !errors.Is(err, catalog.ErrUnsupported) || !strings.Contains(err.Error(), "filter-40000") ||
		!strings.Contains(err.Error(), "id 40000") || !strings.Contains(err.Error(), "/fields/packed") ||
		!strings.Contains(err.Error(), "set HDF5_PLUGIN_PATH") {
		t.Fatalf("filter 40000: %v", err)
	}
	// Deselecting the variable avoids the error.
	d, err := Open(file, Config{Match: func(v string) bool { return v == "ok" }})
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
}

func TestTruncatedGenerated(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "full.h5")
	runPython(t, makeFilters, file)
	b, _ := os.ReadFile(file)
	for _, n := range []int{len(b) - 1, len(b) / 2, 100} {
		cut := filepath.Join(dir, "cut.h5")
		os.WriteFile(cut, b[:n], 0o644)
		if _, err := Open(cut, Config{}); !errors.Is(err, catalog.ErrCorrupt) {
			t.Errorf("cut at %d of %d: %v, want ErrCorrupt", n, len(b), err)
		}
	}
}

// TestMixedDirectory: plain files in one directory are told apart by their
// file stems; an openPMD file among them keeps its openPMD names.
func TestMixedDirectory(t *testing.T) {
	dir := t.TempDir()
	runPython(t, `
import sys, os, numpy as np, h5py
d = sys.argv[1]
for name, v in (("a.h5", 1.0), ("b.hdf5", 2.0)):
    with h5py.File(os.path.join(d, name), "w") as f:
        f.create_dataset("g/v", data=np.full((3, 4), v))
with h5py.File(os.path.join(d, "pmd.h5"), "w") as f:
    f.attrs["openPMD"] = np.bytes_("1.1.0"); f.attrs["basePath"] = np.bytes_("/data/%T/"); f.attrs["meshesPath"] = np.bytes_("meshes/")
    f.create_dataset("data/7/meshes/rho", data=np.arange(8.0))
open(os.path.join(d, "notes.txt"), "w").write("not hdf5")
`, dir)
	want := oracle(t, filepath.Join(dir, "a.h5"), filepath.Join(dir, "b.hdf5"), filepath.Join(dir, "pmd.h5"))
	d, err := Open(dir, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if d.Info().Format != "hdf5" {
		t.Errorf("format %q", d.Info().Format)
	}
	arrays := scanAll(t, d)
	if got := keys(arrays); !slices.Equal(got, []key{{"a/g/v", 0}, {"b/g/v", 0}, {"rho", 7}}) {
		t.Fatalf("arrays %v", got)
	}
	checkValues(t, d, arrays, want)
}

// TestPlainSeries: plain files named PREFIX<T>SUFFIX in one directory are
// the iterations of one series (step T, names without the file stem).
func TestPlainSeries(t *testing.T) {
	dir := t.TempDir()
	runPython(t, `
import sys, os, numpy as np, h5py
d = sys.argv[1]
for it in (10, 200, 3000):
    with h5py.File(os.path.join(d, "data_%06d.h5" % it), "w") as f:
        f.create_dataset("fields/rho", data=np.arange(12.0).reshape(3, 4) + it, chunks=(2, 2))
        f.create_dataset("n", data=np.int32(it))
`, dir)
	var files []string
	for _, it := range []int{10, 200, 3000} {
		files = append(files, filepath.Join(dir, fmt.Sprintf("data_%06d.h5", it)))
	}
	want := oracle(t, files...)
	d, err := Open(dir, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	arrays := scanAll(t, d)
	if got := keys(arrays); !slices.Equal(got, []key{{"fields/rho", 10}, {"fields/rho", 200}, {"fields/rho", 3000}, {"n", 10}, {"n", 200}, {"n", 3000}}) {
		t.Fatalf("arrays %v", got)
	}
	checkValues(t, d, arrays, want)
}

// TestRelayoutOutput reads a relayout-style output directory back through
// its manifest (contiguous and chunked datasets).
func TestRelayoutOutput(t *testing.T) {
	dir := t.TempDir()
	runPython(t, `
import sys, os, numpy as np, h5py
with h5py.File(os.path.join(sys.argv[1], "B.x.h5"), "w") as f:
    f.create_dataset("data/1/meshes/B/x", data=np.arange(60.0).reshape(3, 4, 5))
    f.create_dataset("data/2/meshes/B/x", data=-np.arange(60.0).reshape(3, 4, 5), chunks=(2, 4, 5))
    f.create_dataset("data/2/meshes/B/x_lvl1", data=np.arange(8.0).reshape(2, 2, 2), chunks=(1, 2, 2))
`, dir)
	m := catalog.Manifest{Tool: "relayout", Version: "test", Variables: []catalog.ManifestVariable{{
		Name: "B/x", DType: "<f8", File: "B.x.h5",
		Datasets: []catalog.ManifestDataset{
			{Step: 2, Level: 0, Path: "/data/2/meshes/B/x", Shape: []int64{3, 4, 5}, Offset: []int64{0, 0, 0}, Layout: "chunked", Chunk: []int64{2, 4, 5}},
			{Step: 1, Level: 0, Path: "/data/1/meshes/B/x", Shape: []int64{3, 4, 5}, Offset: []int64{0, 0, 0}, Layout: "contiguous"},
			{Step: 2, Level: 1, Path: "/data/2/meshes/B/x_lvl1", Shape: []int64{2, 2, 2}, Offset: []int64{4, 6, 8}, Layout: "chunked"},
		},
	}}}
	writeManifest := func(m catalog.Manifest) {
		b, _ := json.Marshal(m)
		if err := os.WriteFile(filepath.Join(dir, catalog.ManifestName), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeManifest(m)
	want := oracle(t, filepath.Join(dir, "B.x.h5"))
	d, err := OpenRelayout(dir, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var got []string
	var arrays []*catalog.Array
	if err := d.Scan(t.Context(), func(a *catalog.Array) error {
		got = append(got, fmt.Sprintf("%s@%d/%d", a.Var, a.Step, a.Level))
		arrays = append(arrays, a)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, []string{"B/x@1/0", "B/x@2/0", "B/x@2/1"}) {
		t.Fatalf("arrays %v", got)
	}
	if d.Info().Format != "relayout" || len(arrays[0].Blocks) != 1 || len(arrays[1].Blocks) != 2 || !slices.Equal(arrays[2].Offset, []int64{4, 6, 8}) {
		t.Errorf("info %+v, blocks %d %d, offset %v", d.Info(), len(arrays[0].Blocks), len(arrays[1].Blocks), arrays[2].Offset)
	}
	checkValues(t, d, arrays, want)

	// A manifest that disagrees with the file is corrupt.
	m.Variables[0].Datasets[1].Shape = []int64{3, 4, 6}
	writeManifest(m)
	d2, err := OpenRelayout(dir, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer d2.Close()
	if err := d2.Scan(t.Context(), func(*catalog.Array) error { return nil }); !errors.Is(err, catalog.ErrCorrupt) {
		t.Errorf("shape mismatch: %v", err)
	}
	m.Variables[0].Datasets[1].Shape = []int64{3, 4, 5}
	m.Variables[0].File = "../B.x.h5"
	writeManifest(m)
	if _, err := OpenRelayout(dir, Config{}); !errors.Is(err, catalog.ErrCorrupt) {
		t.Errorf("escaping file name: %v", err)
	}
}

// TestRelayoutOutputBoxes reads an AMR level of a relayout output back with
// its box table (written here by h5py as relayout writes it: int64
// [box][2][rank], inclusive corners in the level's global index space) as
// the array's Boxes, the "boxes" attribute dropped; a table reaching
// outside the array is corrupt.
func TestRelayoutOutputBoxes(t *testing.T) {
	for _, c := range []struct {
		name  string
		upper string // the second box's upper corner
		err   error
	}{{"good", "[11, 13]", nil}, {"outside", "[11, 16]", catalog.ErrCorrupt}} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			runPython(t, `
import sys, os, numpy as np, h5py
with h5py.File(os.path.join(sys.argv[1], "rho.h5"), "w") as f:
    d = f.create_dataset("data/3/meshes/rho_lvl1", shape=(16, 16), dtype="<f8", chunks=(4, 4), fillvalue=np.nan)
    d[0:4, 0:8] = 1.0
    d[8:12, 12:14] = 2.0
    t = f.create_dataset("data/3/relayout_boxes/rho_lvl1", data=np.array([[[0, 0], [3, 7]], [[8, 12], `+c.upper+`]], dtype="<i8"))
    d.attrs["boxes"] = "/data/3/relayout_boxes/rho_lvl1"
`, dir)
			m := catalog.Manifest{Tool: "relayout", Version: "test", Variables: []catalog.ManifestVariable{{
				Name: "rho", DType: "<f8", File: "rho.h5",
				Datasets: []catalog.ManifestDataset{{Step: 3, Level: 1, Path: "/data/3/meshes/rho_lvl1", Shape: []int64{16, 16},
					Offset: []int64{0, 0}, Layout: "chunked", Chunk: []int64{4, 4}, Boxes: "/data/3/relayout_boxes/rho_lvl1"}},
			}}}
			b, _ := json.Marshal(m)
			if err := os.WriteFile(filepath.Join(dir, catalog.ManifestName), b, 0o644); err != nil {
				t.Fatal(err)
			}
			d, err := OpenRelayout(dir, Config{})
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			var arrays []*catalog.Array
			err = d.Scan(t.Context(), func(a *catalog.Array) error { arrays = append(arrays, a); return nil })
			if c.err != nil {
				if !errors.Is(err, c.err) || !strings.Contains(err.Error(), "box 1 outside") {
					t.Fatalf("error %v, want %v naming box 1", err, c.err)
				}
				return
			}
			if err != nil || len(arrays) != 1 {
				t.Fatalf("%v, %d arrays", err, len(arrays))
			}
			a := arrays[0]
			if fmt.Sprint(a.Boxes) != "[[0:4,0:8] [8:12,12:14]]" {
				t.Errorf("boxes %v", a.Boxes)
			}
			if slices.ContainsFunc(a.Attrs, func(at catalog.Attr) bool { return at.Name == "boxes" }) {
				t.Errorf("the boxes attribute is kept: %v", a.Attrs)
			}
		})
	}
}
