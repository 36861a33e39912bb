//go:build cgo

package h5

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"path/filepath"
	"reflect"
	"testing"

	"relayout/catalog"
)

// TestVirtualRoundTrip creates two source datasets and a virtual dataset
// mapping them onto boxes, and lists the mappings back.
func TestVirtualRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v.h5")
	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	dt := catalog.DType{Kind: catalog.Float, Size: 8}
	srcs := []VirtualSource{
		{Path: "/c/0", Box: catalog.Box{Lower: []int64{0, 0}, Count: []int64{2, 3}}},
		{Path: "/c/1", Box: catalog.Box{Lower: []int64{4, 1}, Count: []int64{1, 5}}},
	}
	for _, s := range srcs {
		d, err := w.CreateDataset(s.Path, DatasetSpec{DType: dt, Shape: s.Box.Count})
		if err != nil {
			t.Fatal(err)
		}
		d.Close()
	}
	if err := w.CreateVirtual("/v", DatasetSpec{DType: dt, Shape: []int64{6, 6}}, srcs); err != nil {
		t.Fatal(err)
	}
	bad := []VirtualSource{{Path: "/c/0", Box: catalog.Box{Lower: []int64{5, 5}, Count: []int64{2, 3}}}}
	if err := w.CreateVirtual("/bad", DatasetSpec{DType: dt, Shape: []int64{6, 6}}, bad); !errors.Is(err, catalog.ErrUnsupported) {
		t.Errorf("box outside the shape: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	info, err := f.Dataset("/v")
	if err != nil || info.Layout != "virtual" {
		t.Fatalf("%+v %v", info, err)
	}
	ms, err := f.VirtualMappings("/v")
	if err != nil {
		t.Fatal(err)
	}
	want := []VirtualMapping{{File: ".", Dataset: "/c/0", Box: srcs[0].Box, Whole: true}, {File: ".", Dataset: "/c/1", Box: srcs[1].Box, Whole: true}}
	if !reflect.DeepEqual(ms, want) {
		t.Errorf("mappings %+v, want %+v", ms, want)
	}
	if _, err := f.VirtualMappings("/c/0"); !errors.Is(err, catalog.ErrUnsupported) {
		t.Errorf("mappings of a contiguous dataset: %v", err)
	}
}

// TestVirtualReshape maps a 2-D dataset onto a (3, 4, 1) slab of a 3-D
// virtual dataset (VirtualSource.Shape) in another file, and reads every
// element back through the virtual dataset in row-major order.
func TestVirtualReshape(t *testing.T) {
	dir := t.TempDir()
	dt := catalog.DType{Kind: catalog.Float, Size: 8}
	w, err := Create(filepath.Join(dir, "src.h5"))
	if err != nil {
		t.Fatal(err)
	}
	d, err := w.CreateDataset("/a", DatasetSpec{DType: dt, Shape: []int64{3, 4}, Chunk: []int64{3, 4}})
	if err != nil {
		t.Fatal(err)
	}
	want := make([]byte, 0, 12*8)
	for i := range 12 {
		want = binary.LittleEndian.AppendUint64(want, math.Float64bits(float64(100+i)))
	}
	if err := d.WriteChunk([]int64{0, 0}, want); err != nil {
		t.Fatal(err)
	}
	d.Close()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	vw, err := Create(filepath.Join(dir, "v.h5"))
	if err != nil {
		t.Fatal(err)
	}
	whole := catalog.Box{Lower: []int64{0, 0, 0}, Count: []int64{3, 4, 1}}
	if err := vw.CreateVirtual("/v", DatasetSpec{DType: dt, Shape: whole.Count}, []VirtualSource{{File: "src.h5", Path: "/a", Box: whole, Shape: []int64{3, 4}}}); err != nil {
		t.Fatal(err)
	}
	bad := []VirtualSource{{File: "src.h5", Path: "/a", Box: whole, Shape: []int64{3, 5}}}
	if err := vw.CreateVirtual("/bad", DatasetSpec{DType: dt, Shape: whole.Count}, bad); !errors.Is(err, catalog.ErrUnsupported) {
		t.Errorf("a source shape that does not fill the box: %v", err)
	}
	if err := vw.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := Open(filepath.Join(dir, "v.h5"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got := make([]byte, len(want))
	if err := f.ReadHyperslab("/v", whole.Lower, whole.Count, dt, got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("read through the virtual dataset %v, want %v", got, want)
	}
	ms, err := f.VirtualMappings("/v")
	if err != nil || len(ms) != 1 || ms[0].File != "src.h5" || ms[0].Dataset != "/a" || !ms[0].Whole || !reflect.DeepEqual(ms[0].Box, whole) {
		t.Errorf("mappings %+v %v", ms, err)
	}
}

// TestVirtualSelection maps two boxes of a 3-D dataset of another file
// (VirtualSource.Sel) onto consecutive runs of a 1-D virtual dataset, reads
// them back in each box's row-major order, and lists the selections.
func TestVirtualSelection(t *testing.T) {
	dir := t.TempDir()
	dt := catalog.DType{Kind: catalog.Float, Size: 8}
	w, err := Create(filepath.Join(dir, "src.h5"))
	if err != nil {
		t.Fatal(err)
	}
	shape := []int64{2, 3, 4}
	d, err := w.CreateDataset("/a", DatasetSpec{DType: dt, Shape: shape, Chunk: shape})
	if err != nil {
		t.Fatal(err)
	}
	var all []byte
	for i := range 24 {
		all = binary.LittleEndian.AppendUint64(all, math.Float64bits(float64(i)))
	}
	if err := d.WriteChunk([]int64{0, 0, 0}, all); err != nil {
		t.Fatal(err)
	}
	d.Close()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	sels := []catalog.Box{{Lower: []int64{0, 1, 1}, Count: []int64{2, 2, 2}}, {Lower: []int64{1, 0, 3}, Count: []int64{1, 3, 1}}}
	var want []byte
	for _, s := range sels {
		for i := s.Lower[0]; i < s.Lower[0]+s.Count[0]; i++ {
			for j := s.Lower[1]; j < s.Lower[1]+s.Count[1]; j++ {
				for k := s.Lower[2]; k < s.Lower[2]+s.Count[2]; k++ {
					want = binary.LittleEndian.AppendUint64(want, math.Float64bits(float64(12*i+4*j+k)))
				}
			}
		}
	}
	vw, err := Create(filepath.Join(dir, "v.h5"))
	if err != nil {
		t.Fatal(err)
	}
	srcs := []VirtualSource{
		{File: "src.h5", Path: "/a", Box: catalog.Box{Lower: []int64{0}, Count: []int64{8}}, Shape: shape, Sel: &sels[0]},
		{File: "src.h5", Path: "/a", Box: catalog.Box{Lower: []int64{8}, Count: []int64{3}}, Shape: shape, Sel: &sels[1]},
	}
	if err := vw.CreateVirtual("/v", DatasetSpec{DType: dt, Shape: []int64{11}}, srcs); err != nil {
		t.Fatal(err)
	}
	bad := []VirtualSource{{File: "src.h5", Path: "/a", Box: catalog.Box{Lower: []int64{0}, Count: []int64{8}}, Shape: shape,
		Sel: &catalog.Box{Lower: []int64{1, 1, 1}, Count: []int64{2, 2, 2}}}}
	if err := vw.CreateVirtual("/bad", DatasetSpec{DType: dt, Shape: []int64{11}}, bad); !errors.Is(err, catalog.ErrUnsupported) {
		t.Errorf("a selection outside the source: %v", err)
	}
	if err := vw.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := Open(filepath.Join(dir, "v.h5"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got := make([]byte, len(want))
	if err := f.ReadHyperslab("/v", []int64{0}, []int64{11}, dt, got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("read through the virtual dataset %v, want %v", got, want)
	}
	ms, err := f.VirtualMappings("/v")
	if err != nil || len(ms) != 2 {
		t.Fatalf("mappings %+v %v", ms, err)
	}
	for i, m := range ms {
		if m.Sel == nil || !reflect.DeepEqual(*m.Sel, sels[i]) || !reflect.DeepEqual(m.Box, srcs[i].Box) {
			t.Errorf("mapping %d: %+v, want box %v of selection %v", i, m, srcs[i].Box, sels[i])
		}
	}
}
