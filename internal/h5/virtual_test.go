//go:build cgo

package h5

import (
	"errors"
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
