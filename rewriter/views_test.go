package rewriter

import (
	"slices"
	"strings"
	"testing"

	"relayout/catalog"
)

// TestMeshView: the ImageData geometry of arrays, from their openPMD
// attributes: VTK's x is the array's last axis, Direction sends each VTK
// index axis to the physical axis its array axis is labelled with, Origin
// is at the elements' positions; 2-D arrays are (n0, n1, 1) slabs, flat
// along VTK's x; dataOrder F reverses the attribute lists.
func TestMeshView(t *testing.T) {
	f := func(name string, v ...float64) catalog.Attr { return catalog.Attr{Name: name, Floats: v} }
	s := func(name string, v ...string) catalog.Attr { return catalog.Attr{Name: name, Strings: v} }
	for _, c := range []struct {
		name    string
		shape   []int64
		attrs   []catalog.Attr
		ext     []int64
		dir     []float64
		origin  []float64
		spacing []float64
		why     string
	}{
		{"xyz", []int64{64, 48, 40}, []catalog.Attr{s("axisLabels", "x", "y", "z"), f("gridSpacing", 1, 2, 3), f("gridGlobalOffset", 10, 20, 30), f("position", 0.5, 0.5, 0.5)},
			[]int64{0, 39, 0, 47, 0, 63}, []float64{0, 0, 1, 0, 1, 0, 1, 0, 0}, []float64{10.5, 21, 31.5}, []float64{3, 2, 1}, ""},
		{"zyx", []int64{64, 48, 40}, []catalog.Attr{s("axisLabels", "z", "y", "x"), f("gridSpacing", 1, 2, 3), f("gridGlobalOffset", 0, 0, 0), f("position", 0, 0, 0.5)},
			[]int64{0, 39, 0, 47, 0, 63}, []float64{1, 0, 0, 0, 1, 0, 0, 0, 1}, []float64{1.5, 0, 0}, []float64{3, 2, 1}, ""},
		{"F order", []int64{64, 48, 40}, []catalog.Attr{s("dataOrder", "F"), s("axisLabels", "z", "y", "x"), f("gridSpacing", 3, 2, 1), f("gridGlobalOffset", 0, 0, 0)},
			[]int64{0, 39, 0, 47, 0, 63}, []float64{0, 0, 1, 0, 1, 0, 1, 0, 0}, []float64{0, 0, 0}, []float64{3, 2, 1}, ""},
		{"2-D xz", []int64{30, 20}, []catalog.Attr{s("axisLabels", "x", "z"), f("gridSpacing", 1, 2), f("gridGlobalOffset", 0, 0), f("position", 0.5, 0.5, 0.5)},
			[]int64{0, 0, 0, 19, 0, 29}, []float64{0, 0, 1, 1, 0, 0, 0, 1, 0}, []float64{0.5, 0, 1}, []float64{1, 2, 1}, ""},
		{"thetaMode", []int64{3, 8, 8}, []catalog.Attr{s("geometry", "thetaMode"), s("axisLabels", "r", "z"), f("gridSpacing", 1, 1), f("gridGlobalOffset", 0, 0)},
			nil, nil, nil, nil, "geometry"},
		{"no grid", []int64{1, 2, 1}, []catalog.Attr{s("axisLabels", "x"), f("gridSpacing", 1), f("gridGlobalOffset", 0)}, nil, nil, nil, nil, "do not describe"},
	} {
		a := &catalog.Array{Var: "v", Shape: c.shape}
		g, why := meshView(a, meshAttrs{component: c.attrs})
		if c.why != "" {
			if !strings.Contains(why, c.why) {
				t.Errorf("%s: reason %q, want %q", c.name, why, c.why)
			}
			continue
		}
		if why != "" {
			t.Errorf("%s: no view: %s", c.name, why)
			continue
		}
		if !slices.Equal(g.wholeExtent(), c.ext) || !slices.Equal(g.direction(), c.dir) || !slices.Equal(g.origin[:], c.origin) || !slices.Equal(g.spacing[:], c.spacing) {
			t.Errorf("%s: extent %v direction %v origin %v spacing %v, want %v %v %v %v", c.name,
				g.wholeExtent(), g.direction(), g.origin, g.spacing, c.ext, c.dir, c.origin, c.spacing)
		}
	}
}
