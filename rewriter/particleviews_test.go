package rewriter

import (
	"strings"
	"testing"

	"relayout/catalog"
	"relayout/internal/h5"
)

// TestParticleView: which species' steps get a particle view, with which
// arrays, and why the others get none.
func TestParticleView(t *testing.T) {
	f64 := catalog.DType{Kind: catalog.Float, Size: 8}
	comp := func(rel string, n int64) particleArray {
		return particleArray{species: "e", rel: rel, v: "particles/e/" + rel, file: rel + ".h5", path: "/data/0/particles/e/" + rel,
			spec: h5.DatasetSpec{DType: f64, Shape: []int64{n}}}
	}
	constant := func(rel string, zero bool) particleArray {
		a := comp(rel, 100)
		a.constant, a.zero = true, zero
		return a
	}
	warpx := []particleArray{comp("momentum/x", 100), comp("position/x", 100), comp("position/z", 100),
		constant("positionOffset/x", true), constant("positionOffset/z", true), constant("charge", false), comp("weighting", 100)}
	mv, why, left := particleView(0, "e", warpx)
	var names []string
	for _, a := range mv.Arrays {
		names = append(names, a.Name)
	}
	if why != "" || mv.Points != 100 || strings.Join(names, " ") != "Points/x Points/z momentum_x weighting" ||
		strings.Join(left, ", ") != "charge (constant: its value attribute)" {
		t.Errorf("WarpX-like 2-D species: %+v, why %q, left %q", mv, why, left)
	}
	for _, c := range []struct {
		arrays []particleArray
		why    string
	}{
		{[]particleArray{comp("position/x", 100), comp("positionOffset/x", 100)}, "positionOffset/x is not constant 0"},
		{[]particleArray{comp("position/x", 100), constant("positionOffset/x", false)}, "positionOffset/x is not constant 0"},
		{[]particleArray{comp("position/x", particleViewMax+1)}, "steps of more than 16777216 particles"},
		{[]particleArray{comp("position/x", 0)}, "steps without particles"},
		{[]particleArray{comp("position/r", 10)}, `position component "r"`},
		{[]particleArray{comp("position/x", 10), comp("position/y", 11)}, "shapes that differ"},
		{[]particleArray{constant("position/x", false), comp("position/y", 100)}, "position/x is a constant other than 0"},
		{[]particleArray{comp("weighting", 10)}, "no position record"},
	} {
		if _, why, _ := particleView(0, "e", c.arrays); !strings.Contains(why, c.why) {
			t.Errorf("%v: why %q, want %q", c.arrays, why, c.why)
		}
	}
}

// TestParticleViewNames: species whose names sanitize alike get a view
// file each.
func TestParticleViewNames(t *testing.T) {
	f64 := catalog.DType{Kind: catalog.Float, Size: 8}
	var arrays []particleArray
	for _, sp := range []string{"a/b", "a_b"} {
		arrays = append(arrays, particleArray{species: sp, rel: "position/x", v: "particles/" + sp + "/position/x",
			file: "x.h5", path: "/x", spec: h5.DatasetSpec{DType: f64, Shape: []int64{10}}})
	}
	views, skipped, err := writeParticleViews(t.TempDir(), arrays)
	if err != nil || len(skipped) != 0 || len(views) != 2 || views[0].File != "view-particles-a_b_0.hdf" || views[1].File != "view-particles-a_b-2_0.hdf" {
		t.Errorf("views %+v, skipped %q, err %v", views, skipped, err)
	}
}
