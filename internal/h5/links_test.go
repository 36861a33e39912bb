//go:build cgo

package h5

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"path/filepath"
	"testing"

	"relayout/catalog"
)

// TestLinksScalesAlignment writes a file with an aligned contiguous
// dataset, a dimension scale and a uint32 attribute, and a second file that
// reaches the dataset through an external link; h5py checks all of it.
func TestLinksScalesAlignment(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data.h5")
	w, err := CreateWith(data, CreateOptions{Alignment: 64 << 10, AlignThreshold: 1024})
	if err != nil {
		t.Fatal(err)
	}
	f64 := catalog.DType{Kind: catalog.Float, Size: 8}
	d, err := w.CreateDataset("/g/v", DatasetSpec{DType: f64, Shape: []int64{4, 300}})
	if err != nil {
		t.Fatal(err)
	}
	addr := d.Address()
	d.Close()
	coord := make([]byte, 0, 4*8)
	for i := range 4 {
		coord = binary.LittleEndian.AppendUint64(coord, math.Float64bits(0.5*float64(i)))
	}
	c, err := w.CreateDataset("/x", DatasetSpec{DType: f64, Shape: []int64{4}, Chunk: []int64{4}})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.WriteChunk([]int64{0}, coord); err != nil {
		t.Fatal(err)
	}
	c.Close()
	if err := w.AttachScale("/g/v", 0, "/x", "x"); err != nil {
		t.Fatal(err)
	}
	if err := w.SetAttrs("/", []catalog.Attr{{Name: "ext", Type: "uint32", Scalar: true, Uints: []uint64{7}}}); err != nil {
		t.Fatal(err)
	}
	if err := w.SetAttrs("/", []catalog.Attr{{Name: "big", Type: "uint32", Uints: []uint64{1 << 32}}}); err == nil {
		t.Error("uint32 attribute out of range accepted")
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if addr <= 0 || addr%(64<<10) != 0 {
		t.Errorf("contiguous data at %d, not aligned to 64 KiB", addr)
	}
	series := filepath.Join(dir, "series.h5")
	s, err := Create(series)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ExternalLink("/a/b/v", "data.h5", "/g/v"); err != nil {
		t.Fatal(err)
	}
	if err := s.ExternalLink("relative", "data.h5", "/g/v"); err == nil {
		t.Error("relative link path accepted")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	out := runPython(t, `
import sys, json, h5py
s = h5py.File(sys.argv[1], "r")
l = s.get("/a/b/v", getlink=True)
v = s["/a/b/v"]
f = h5py.File(sys.argv[2], "r")
print(json.dumps({"file": l.filename, "path": l.path, "shape": list(v.shape),
    "scale": bool(h5py.h5ds.is_scale(f["/x"].id)), "dim0": [d.name for d in f["/g/v"].dims[0].values()], "coord": f["/x"][()].tolist(),
    "ext": int(f.attrs["ext"]), "ext_type": f.attrs["ext"].dtype.str}))
`, series, data)
	var r struct {
		File, Path string
		Shape      []int64
		Scale      bool
		Dim0       []string
		Coord      []float64
		Ext        int
		ExtType    string `json:"ext_type"`
	}
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if r.File != "data.h5" || r.Path != "/g/v" || len(r.Shape) != 2 || r.Shape[1] != 300 {
		t.Errorf("external link: %+v", r)
	}
	if !r.Scale || len(r.Dim0) != 1 || r.Dim0[0] != "/x" || len(r.Coord) != 4 || r.Coord[3] != 1.5 {
		t.Errorf("dimension scale: %+v", r)
	}
	if r.Ext != 7 || r.ExtType != "<u4" {
		t.Errorf("uint32 attribute: %+v", r)
	}
}
