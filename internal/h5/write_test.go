//go:build cgo

package h5

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"relayout/catalog"
	"relayout/internal/chunkindex"
	"relayout/internal/testkit"
)

// readBack returns h5py's view of one dataset: values as float64 (row-major),
// shape, layout, chunks and contiguous offset.
type pyDataset struct {
	Values []float64 `json:"values"`
	Shape  []int64   `json:"shape"`
	DType  string    `json:"dtype"`
	Layout int       `json:"layout"`
	Chunks []int64   `json:"chunks"`
	Offset int64     `json:"offset"`
	Fill   float64   `json:"fill"`
	// MaxShape is h5py's maxshape, -1 for an unlimited axis.
	MaxShape []int64 `json:"maxshape"`
}

const readBackScript = `
import sys, json, h5py, numpy as np
f = h5py.File(sys.argv[1], 'r')
out = {}
for name in sys.argv[2:]:
    d = f[name]
    off = d.id.get_offset()
    dcpl = d.id.get_create_plist()
    fill = np.zeros(1, dtype=d.dtype)
    dcpl.get_fill_value(fill)
    out[name] = dict(values=[float(x) for x in np.asarray(d[()]).reshape(-1)], shape=list(d.shape),
                     dtype=d.dtype.str, layout=dcpl.get_layout(), chunks=list(d.chunks) if d.chunks else [],
                     offset=-1 if off is None else off, fill=float(fill[0]),
                     maxshape=[-1 if m is None else m for m in (d.maxshape or ())])
print(json.dumps(out))
`

func readBack(t *testing.T, file string, names ...string) map[string]pyDataset {
	t.Helper()
	out := map[string]pyDataset{}
	if err := json.Unmarshal(runPython(t, readBackScript, append([]string{file}, names...)...), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestContiguousPwrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.h5")
	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	f64, err := w.CreateDataset("/data/7/meshes/B/x", DatasetSpec{DType: catalog.DType{Kind: catalog.Float, Size: 8}, Shape: []int64{3, 4, 5}})
	if err != nil {
		t.Fatal(err)
	}
	i32be, err := w.CreateDataset("/data/7/meshes/rho", DatasetSpec{DType: catalog.DType{Kind: catalog.Int, Size: 4, BigEndian: true}, Shape: []int64{10},
		Fill: []byte{0, 0, 0, 9}})
	if err != nil {
		t.Fatal(err)
	}
	scalar, err := w.CreateDataset("/data/7/s", DatasetSpec{DType: catalog.DType{Kind: catalog.Uint, Size: 2}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.CreateDataset("/data/7/s", DatasetSpec{DType: catalog.DType{Kind: catalog.Uint, Size: 2}}); err == nil {
		t.Error("creating an existing dataset succeeded")
	}
	addrs := []int64{f64.Address(), i32be.Address(), scalar.Address()}
	for _, d := range []*OutDataset{f64, i32be, scalar} {
		if d.Address() <= 0 {
			t.Fatalf("%s: Address %d", d.path, d.Address())
		}
	}
	f64.Close()
	if err := w.Close(); err != nil { // closes i32be and scalar
		t.Fatal(err)
	}
	if st, _ := os.Stat(path); st.Size() < addrs[0]+60*8 || st.Size() < addrs[1]+40 {
		t.Errorf("file size %d does not cover the allocated data at %v", st.Size(), addrs)
	}

	b64 := make([]byte, 60*8)
	for i := range 60 {
		binary.LittleEndian.PutUint64(b64[8*i:], math.Float64bits(float64(i)*1.5-7))
	}
	b32 := make([]byte, 40)
	for i := range 10 {
		binary.BigEndian.PutUint32(b32[4*i:], uint32(int32(-i*1000)))
	}
	out, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i, b := range [][]byte{b64, b32, {0x34, 0x12}} {
		if _, err := out.WriteAt(b, addrs[i]); err != nil {
			t.Fatal(err)
		}
	}
	out.Close()

	got := readBack(t, path, "/data/7/meshes/B/x", "/data/7/meshes/rho", "/data/7/s")
	x := got["/data/7/meshes/B/x"]
	if !reflect.DeepEqual(x.Shape, []int64{3, 4, 5}) || x.DType != "<f8" || x.Layout != 1 || x.Offset != addrs[0] {
		t.Errorf("B/x: %+v", x)
	}
	for i, v := range x.Values {
		if v != float64(i)*1.5-7 {
			t.Fatalf("B/x[%d] = %v", i, v)
		}
	}
	rho := got["/data/7/meshes/rho"]
	if rho.DType != ">i4" || rho.Fill != 9 || rho.Offset != addrs[1] {
		t.Errorf("rho: %+v", rho)
	}
	for i, v := range rho.Values {
		if v != float64(-i*1000) {
			t.Fatalf("rho[%d] = %v", i, v)
		}
	}
	if s := got["/data/7/s"]; len(s.Shape) != 0 || s.DType != "<u2" || len(s.Values) != 1 || s.Values[0] != 0x1234 {
		t.Errorf("scalar: %+v", s)
	}
}

func TestChunkedWrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "chunked.h5")
	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	dt := catalog.DType{Kind: catalog.Float, Size: 8}
	d, err := w.CreateDataset("/data/1/meshes/E/y", DatasetSpec{DType: dt, Shape: []int64{47, 47}, Chunk: []int64{32, 32}})
	if err != nil {
		t.Fatal(err)
	}
	for _, off := range [][]int64{{0, 0}, {0, 32}, {32, 0}, {32, 32}} {
		buf := make([]byte, 32*32*8)
		for i := range 32 {
			for j := range 32 {
				v := -1.0 // beyond the extent: must never show up
				if gi, gj := off[0]+int64(i), off[1]+int64(j); gi < 47 && gj < 47 {
					v = float64(gi*47 + gj)
				}
				binary.LittleEndian.PutUint64(buf[8*(i*32+j):], math.Float64bits(v))
			}
		}
		if err := d.WriteChunk(off, buf); err != nil {
			t.Fatal(err)
		}
	}
	for _, bad := range [][]int64{{1, 0}, {64, 0}, {0}} {
		if err := d.WriteChunk(bad, make([]byte, 32*32*8)); err == nil {
			t.Errorf("WriteChunk(%v) accepted", bad)
		}
	}
	if err := d.WriteChunk([]int64{0, 0}, make([]byte, 8)); err == nil {
		t.Error("short chunk accepted")
	}
	// A chunked int16 dataset with a fill value and one chunk written.
	i16 := catalog.DType{Kind: catalog.Int, Size: 2}
	g, err := w.CreateDataset("/g", DatasetSpec{DType: i16, Shape: []int64{5, 6}, Chunk: []int64{2, 3}, Fill: []byte{0xf9, 0xff}})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.WriteChunk([]int64{2, 3}, []byte{1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.CreateDataset("/bad", DatasetSpec{DType: i16, Shape: []int64{5}, Chunk: []int64{6}}); !errors.Is(err, catalog.ErrUnsupported) {
		t.Errorf("chunk larger than shape: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := d.WriteChunk([]int64{0, 0}, make([]byte, 32*32*8)); err == nil {
		t.Error("WriteChunk after Close accepted")
	}

	got := readBack(t, path, "/data/1/meshes/E/y", "/g")
	y := got["/data/1/meshes/E/y"]
	if !reflect.DeepEqual(y.Chunks, []int64{32, 32}) || len(y.Values) != 47*47 {
		t.Fatalf("E/y: chunks %v, %d values", y.Chunks, len(y.Values))
	}
	for i, v := range y.Values {
		if v != float64(i) {
			t.Fatalf("E/y flat[%d] = %v", i, v)
		}
	}
	want := make([]float64, 30)
	for i := range want {
		want[i] = -7
	}
	for k, idx := range []int{2*6 + 3, 2*6 + 4, 2*6 + 5, 3*6 + 3, 3*6 + 4, 3*6 + 5} {
		want[idx] = float64(k + 1)
	}
	if !reflect.DeepEqual(got["/g"].Values, want) {
		t.Errorf("/g = %v, want %v", got["/g"].Values, want)
	}

	testkit.NeedTool(t, "h5dump", "Debian hdf5-tools")
	dump, err := exec.Command("h5dump", "-p", "-H", "-d", "/data/1/meshes/E/y", path).CombinedOutput()
	if err != nil {
		t.Fatalf("h5dump: %v\n%s", err, dump)
	}
	if !strings.Contains(string(dump), "CHUNKED ( 32, 32 )") {
		t.Errorf("h5dump does not show CHUNKED ( 32, 32 ):\n%s", dump)
	}
}

func TestSetAttrsRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "attrs.h5")
	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	d, err := w.CreateDataset("/data/0/meshes/B/x", DatasetSpec{DType: catalog.DType{Kind: catalog.Float, Size: 4}, Shape: []int64{2}})
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	root := []catalog.Attr{
		{Name: "openPMD", Type: "string", Scalar: true, Strings: []string{"1.1.0"}},
		{Name: "software", Type: "string", Strings: []string{"relayout", "", "ünïcode"}},
		{Name: "iterationEncoding", Type: "string", Scalar: true, Strings: []string{"x"}},
	}
	step := []catalog.Attr{
		{Name: "dt", Type: "float64", Scalar: true, Floats: []float64{1e-15}},
		{Name: "time", Floats: []float64{math.Inf(-1), 0.5, math.MaxFloat64}},
		{Name: "nsteps", Type: "int64", Scalar: true, Ints: []int64{-42}},
		{Name: "big", Type: "uint64", Uints: []uint64{math.MaxUint64, 0}},
		{Name: "empty", Type: "float64"},
		// Narrower types are written in their own width.
		{Name: "f32", Type: "float32", Floats: []float64{0.5, -2}},
		{Name: "i8", Type: "int8", Ints: []int64{-128, 127}},
		{Name: "u16", Type: "uint16", Scalar: true, Uints: []uint64{65535}},
		{Name: "i32", Type: "int32", Ints: []int64{-1 << 31}},
	}
	ds := []catalog.Attr{
		{Name: "position", Type: "float64", Floats: []float64{0.5, 0.25}},
		{Name: "unitDimension", Type: "float64", Floats: []float64{1, 2, 3, 4, 5, 6, 7}},
	}
	for obj, a := range map[string][]catalog.Attr{"/": root, "/data/0": step, "/data/0/meshes/B/x": ds, "/new/group": step[:1]} {
		if err := w.SetAttrs(obj, a); err != nil {
			t.Fatal(err)
		}
	}
	// Replacing an attribute with a different type and shape.
	if err := w.SetAttrs("/", []catalog.Attr{{Name: "iterationEncoding", Type: "string", Scalar: true, Strings: []string{"fileBased"}}}); err != nil {
		t.Fatal(err)
	}
	root[2].Strings = []string{"fileBased"}
	if err := w.SetAttrs("/", []catalog.Attr{{Name: "x", Type: "complex"}}); !errors.Is(err, catalog.ErrUnsupported) {
		t.Errorf("unsupported attribute type: %v", err)
	}
	for _, a := range []catalog.Attr{
		{Name: "x", Type: "uint8", Uints: []uint64{256}},
		{Name: "x", Type: "int16", Ints: []int64{1 << 15}},
		{Name: "x", Type: "float32", Floats: []float64{0.1}}, // not a float32
		{Name: "x", Type: "float32", Ints: []int64{1}},
	} {
		if err := w.SetAttrs("/", []catalog.Attr{a}); !errors.Is(err, catalog.ErrUnsupported) {
			t.Errorf("%+v: value that does not fit its type: %v", a, err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	o := oracle(t, path)
	want := map[string][]catalog.Attr{"/": root, "/data/0": step, "/data/0/meshes/B/x": ds, "/new/group": step[:1]}
	check := func(obj string, got map[string]oracleAttr) {
		w := want[obj]
		if len(got) != len(w) {
			t.Errorf("%s: h5py sees %v, want %v", obj, got, w)
			return
		}
		for _, a := range w {
			g, ok := got[a.Name]
			var vals []string
			switch {
			case a.Strings != nil:
				vals = a.Strings
			case a.Floats != nil:
				for _, f := range a.Floats {
					vals = append(vals, pyRepr(f))
				}
			case a.Ints != nil:
				for _, v := range a.Ints {
					vals = append(vals, jsonNum(v))
				}
			case a.Uints != nil:
				for _, v := range a.Uints {
					vals = append(vals, jsonNum(v))
				}
			}
			typ := a.Type
			if typ == "" {
				typ = "float64"
			}
			if !ok || g.Type != typ || g.Scalar != a.Scalar || !reflect.DeepEqual(nonNil(g.Values), nonNil(vals)) {
				t.Errorf("%s: attribute %s: h5py sees %+v, want %s %v scalar=%v", obj, a.Name, g, typ, vals, a.Scalar)
			}
		}
	}
	check("/", o.RootAttrs)
	for _, ob := range o.Objs {
		if _, ok := want[ob.Path]; ok {
			check(ob.Path, ob.Attrs)
		}
	}
}

// pyRepr formats f as Python's repr(float(f)) does, for the values used above.
func pyRepr(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	b, _ := json.Marshal(f)
	s := string(b)
	if !strings.ContainsAny(s, ".e") {
		s += ".0"
	}
	return s
}

func jsonNum(v any) string { b, _ := json.Marshal(v); return string(b) }

// TestAllocatedChunksPwrite: a chunked dataset created with Allocate has an
// address for every chunk (distinct, each a whole chunk apart from the
// others); whole raw chunks pwritten there after Close are what h5py reads,
// edge chunks included (their padding never shows), and the filter and
// allocation combinations that cannot work are refused.
func TestAllocatedChunksPwrite(t *testing.T) {
	for _, unlimited := range []bool{false, true} {
		t.Run(fmt.Sprint("unlimited=", unlimited), func(t *testing.T) { testAllocatedChunksPwrite(t, unlimited) })
	}
}

func testAllocatedChunksPwrite(t *testing.T, unlimited bool) {
	path := filepath.Join(t.TempDir(), "alloc.h5")
	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	i32 := catalog.DType{Kind: catalog.Int, Size: 4}
	shape, chunk := []int64{10, 7, 5}, []int64{4, 3, 5}
	spec := DatasetSpec{DType: i32, Shape: shape, Chunk: chunk, Allocate: true}
	if unlimited {
		spec.Unlimited = []bool{true, false, false}
	}
	d, err := w.CreateDataset("/a", spec)
	if err != nil {
		t.Fatal(err)
	}
	objAddr := d.ObjAddr()
	if objAddr == 0 {
		t.Fatal("no object header address")
	}
	for _, bad := range []DatasetSpec{
		{DType: i32, Shape: shape, Chunk: chunk, Allocate: true, Deflate: 4},
		{DType: i32, Shape: shape, Allocate: true},
		{DType: i32, Shape: shape, Unlimited: []bool{true, false, false}},        // contiguous
		{DType: i32, Shape: shape, Chunk: chunk, Unlimited: []bool{true, false}}, // wrong rank
		{DType: i32, Shape: shape, Chunk: []int64{4, 8, 5}, Unlimited: []bool{true, false, false}},
	} {
		if _, err := w.CreateDataset("/bad", bad); !errors.Is(err, catalog.ErrUnsupported) {
			t.Errorf("%+v: %v, want ErrUnsupported", bad, err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Every chunk is allocated (the index lists all 9, whole chunks apart).
	st, _ := f.Stat()
	chunkBytes := int64(4 * 3 * 5 * 4)
	addrs := make([]int64, 9)
	n := 0
	if err := chunkindex.List(f, st.Size(), objAddr, func(c chunkindex.Chunk) error {
		if c.Size != chunkBytes {
			t.Errorf("chunk %v: %d bytes stored, want %d", c.Offset, c.Size, chunkBytes)
		}
		addrs[c.Offset[0]/chunk[0]*3+c.Offset[1]/chunk[1]] = c.Address
		n++
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	sorted := slices.Sorted(slices.Values(addrs))
	for i := 1; i < len(sorted); i++ {
		if sorted[i]-sorted[i-1] < chunkBytes {
			t.Fatalf("chunk addresses overlap: %v", addrs)
		}
	}
	if n != 9 {
		t.Fatalf("%d chunks listed, want 9", n)
	}
	k := 0
	for c0 := int64(0); c0 < 3; c0++ {
		for c1 := int64(0); c1 < 3; c1++ {
			buf := make([]byte, chunkBytes)
			for i := range chunk[0] {
				for j := range chunk[1] {
					for l := range chunk[2] {
						gi, gj := c0*chunk[0]+i, c1*chunk[1]+j
						v := int32(-1) // padding beyond the extent
						if gi < shape[0] && gj < shape[1] {
							v = int32((gi*shape[1]+gj)*shape[2] + l)
						}
						binary.LittleEndian.PutUint32(buf[4*((i*chunk[1]+j)*chunk[2]+l):], uint32(v))
					}
				}
			}
			if _, err := f.WriteAt(buf, addrs[k]); err != nil {
				t.Fatal(err)
			}
			k++
		}
	}
	f.Close()
	a := readBack(t, path, "/a")["/a"]
	if !reflect.DeepEqual(a.Chunks, chunk) || len(a.Values) != 350 {
		t.Fatalf("chunks %v, %d values", a.Chunks, len(a.Values))
	}
	wantMax := slices.Clone(shape)
	if unlimited {
		wantMax[0] = -1
	}
	if !slices.Equal(a.MaxShape, wantMax) {
		t.Errorf("maxshape %v, want %v", a.MaxShape, wantMax)
	}
	rf, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer rf.Close()
	info, err := rf.Dataset("/a")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(info.Unlimited, spec.Unlimited) {
		t.Errorf("read back: unlimited %v, want %v", info.Unlimited, spec.Unlimited)
	}
	for i, v := range a.Values {
		if v != float64(i) {
			t.Fatalf("flat[%d] = %v, want %d", i, v, i)
		}
	}
}
