package bp

import (
	"testing"

	"relayout/catalog"
)

func sattr(name, v string) catalog.Attr {
	return catalog.Attr{Name: name, Type: "string", Scalar: true, Strings: []string{v}}
}

// TestOpenPMDPlace maps openPMD-on-BP variable paths, group-based and
// variable-based, meshes and particles.
func TestOpenPMDPlace(t *testing.T) {
	group := detectOpenPMD([]catalog.Attr{sattr("/openPMD", "1.1.0"), sattr("/basePath", "/data/%T/"),
		sattr("/meshesPath", "fields/"), sattr("/particlesPath", "particles/")})
	for _, c := range []struct {
		name string
		want pmdPlace
	}{
		{"/data/550/fields/E/x", pmdPlace{kind: pmdMesh, Var: "E/x", Step: 550, Record: "/data/550/fields/E", Iter: "/data/550"}},
		{"/data/550/particles/e/position/x", pmdPlace{kind: pmdParticles, Var: "particles/e/position/x", Step: 550,
			Record: "/data/550/particles/e/position", Iter: "/data/550", Species: "e", SpeciesGroup: "/data/550/particles/e"}},
		{"/data/550/particles/e/weighting", pmdPlace{kind: pmdParticles, Var: "particles/e/weighting", Step: 550,
			Iter: "/data/550", Species: "e", SpeciesGroup: "/data/550/particles/e"}},
		{"/data/550/particles/e/particlePatches/numParticles", pmdPlace{kind: pmdParticles, Var: "particles/e/particlePatches/numParticles",
			Step: 550, Iter: "/data/550", Species: "e", SpeciesGroup: "/data/550/particles/e"}},
		{"/data/550/particles/e/particlePatches/extent/z", pmdPlace{kind: pmdParticles, Var: "particles/e/particlePatches/extent/z",
			Step: 550, Record: "/data/550/particles/e/particlePatches/extent", Iter: "/data/550", Species: "e", SpeciesGroup: "/data/550/particles/e"}},
		{"/data/550/particles/stray", pmdPlace{kind: pmdOutside}},
		{"/data/550/other/v", pmdPlace{kind: pmdOutside}},
	} {
		if got := group.locate(c.name, 0); got != c.want {
			t.Errorf("group-based %s: %+v, want %+v", c.name, got, c.want)
		}
	}
	vb := detectOpenPMD([]catalog.Attr{sattr("/openPMD", "1.1.0"), sattr("/basePath", "/data/%T/"),
		sattr("/iterationEncoding", "variableBased"), sattr("/iterationFormat", "/data")})
	vb.iters = []int64{5, 40}
	want := pmdPlace{kind: pmdParticles, Var: "particles/electrons/momentum/y", Step: 40,
		Record: "/data/particles/electrons/momentum", Iter: "/data", Species: "electrons", SpeciesGroup: "/data/particles/electrons"}
	if got := vb.locate("/data/particles/electrons/momentum/y", 1); got != want {
		t.Errorf("variable-based: %+v, want %+v", got, want)
	}
	// species attributes merge below the component's and the record's
	all := []catalog.Attr{
		{Name: "/data/particles/electrons/particleShape", Type: "float64", Floats: []float64{3}},
		{Name: "/data/particles/electrons/unitSI", Type: "float64", Floats: []float64{7}},
		{Name: "/data/particles/electrons/momentum/macroWeighted", Type: "uint32", Uints: []uint64{1}},
		{Name: "/data/particles/electrons/momentum/y/unitSI", Type: "float64", Floats: []float64{2}},
		{Name: "/data/time", Type: "float64", Floats: []float64{1}},
	}
	e := &entry{name: "/data/particles/electrons/momentum/y", record: want.Record, iterKey: want.Iter,
		species: want.Species, speciesGroup: want.SpeciesGroup}
	attrs, step := vb.arrayAttrs(all, e)
	byName := map[string]catalog.Attr{}
	for _, a := range attrs {
		byName[a.Name] = a
	}
	if a := byName["particleShape"]; !a.Species || a.Record {
		t.Errorf("particleShape %+v", a)
	}
	if a := byName["macroWeighted"]; !a.Record || a.Species {
		t.Errorf("macroWeighted %+v", a)
	}
	if a := byName["unitSI"]; a.Floats[0] != 2 || a.Species || a.Record || len(attrs) != 3 {
		t.Errorf("unitSI %+v (attrs %v)", a, attrs)
	}
	if len(step) != 1 || step[0].Name != "time" {
		t.Errorf("iteration attrs %v", step)
	}
}
