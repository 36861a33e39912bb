package verify

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"relayout/catalog"
	"relayout/internal/h5"
)

// TestViewsChecked: the ParaView views of a real output verify; a view
// whose array maps another variable's dataset, a view file that is missing
// and a variable file a view needs that is missing are each a DIFF naming
// the view.
func TestViewsChecked(t *testing.T) {
	in := shared(t, "hdf5/openpmd-femm/example-femm-3d.h5")
	ds, store := input(t, in)
	out := rewrite(t, in)
	m, err := catalog.ReadManifest(filepath.Join(out, catalog.ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Views) != 1 || len(m.Views[0].Arrays) != 3 {
		t.Fatalf("views %+v", m.Views)
	}
	check := func() (bool, string) {
		t.Helper()
		var log strings.Builder
		res, err := Check(context.Background(), store, ds, out, nil, Options{Log: &log})
		if err != nil {
			t.Fatal(err)
		}
		return res.OK, log.String()
	}
	if ok, log := check(); !ok || !strings.Contains(log, "OK  views  1 ParaView view, 3 arrays") {
		t.Fatalf("ok %v\n%s", ok, log)
	}
	v := m.Views[0]
	path := filepath.Join(out, v.File)
	keep, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// B_x presents B/y's dataset: same shape, the wrong data.
	w, err := h5.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	attrs := []catalog.Attr{
		{Name: "Version", Type: "int64", Ints: []int64{1, 0}},
		{Name: "Type", Type: h5.NullPadString, Scalar: true, Strings: []string{"ImageData"}},
		{Name: "WholeExtent", Type: "int64", Ints: v.WholeExtent},
		{Name: "Origin", Type: "float64", Floats: v.Origin},
		{Name: "Spacing", Type: "float64", Floats: v.Spacing},
		{Name: "Direction", Type: "float64", Floats: v.Direction},
	}
	if err := w.SetAttrs("/VTKHDF", attrs); err != nil {
		t.Fatal(err)
	}
	dt := catalog.DType{Kind: catalog.Float, Size: 8}
	for i, a := range v.Arrays {
		src := v.Arrays[(i+1)%len(v.Arrays)]
		box := catalog.Box{Lower: []int64{0, 0, 0}, Count: a.Shape}
		if err := w.CreateVirtual(a.Dataset, h5.DatasetSpec{DType: dt, Shape: a.Shape}, []h5.VirtualSource{{File: src.File, Path: src.Path, Box: box}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if ok, log := check(); ok || !strings.Contains(log, "DIFF views: view_1.hdf: /VTKHDF/PointData/B_x (B/x) does not map the whole B.x.h5:/data/1/meshes/B/x") {
		t.Errorf("a view of the wrong datasets: ok %v\n%s", ok, log)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if ok, log := check(); ok || !strings.Contains(log, "DIFF views: view_1.hdf is missing") {
		t.Errorf("a missing view: ok %v\n%s", ok, log)
	}
	if err := os.WriteFile(path, keep, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(out, "B.z.h5"), filepath.Join(out, "B.z.h5.away")); err != nil {
		t.Fatal(err)
	}
	if ok, log := check(); ok || !strings.Contains(log, "/VTKHDF/PointData/B_z (B/z) needs B.z.h5, which is missing") {
		t.Errorf("a missing variable file: ok %v\n%s", ok, log)
	}
}
