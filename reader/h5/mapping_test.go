package h5

import (
	"testing"

	"relayout/catalog"
)

func str(name, v string) catalog.Attr {
	return catalog.Attr{Name: name, Type: "string", Scalar: true, Strings: []string{v}}
}

func TestLocate(t *testing.T) {
	openpmd := []catalog.Attr{str("openPMD", "1.1.0"), str("basePath", "/data/%T/"), str("meshesPath", "fields/"), str("particlesPath", "particles/")}
	adios := []catalog.Attr{{Name: "NumSteps", Type: "uint64", Scalar: true, Uints: []uint64{5}}}
	cases := []struct {
		root  []catalog.Attr
		path  string
		isDS  bool
		want  place
		label string
	}{
		{nil, "/a/b/c", true, place{kind: variable, Var: "a/b/c"}, "plain dataset"},
		{nil, "/a", false, place{kind: ignore}, "plain group"},
		{adios, "/Step3/varR64", true, place{kind: variable, Var: "varR64", Step: 3, StepGroup: "/Step3"}, "adios step"},
		{adios, "/Step3/g/v", true, place{kind: variable, Var: "g/v", Step: 3, StepGroup: "/Step3"}, "adios nested"},
		{adios, "/other", true, place{kind: variable, Var: "other"}, "adios outside steps"},
		{adios, "/StepX/v", true, place{kind: variable, Var: "StepX/v"}, "adios non-numeric step"},
		{openpmd, "/data/100/fields/B/r", true, place{kind: variable, Var: "B/r", Step: 100, StepGroup: "/data/100", Record: "/data/100/fields/B"}, "component"},
		{openpmd, "/data/100/fields/rho", true, place{kind: variable, Var: "rho", Step: 100, StepGroup: "/data/100"}, "scalar record"},
		{openpmd, "/data/0/fields/E/t", false, place{kind: meshGroup, Var: "E/t", StepGroup: "/data/0", Record: "/data/0/fields/E"}, "constant component group"},
		{openpmd, "/data/0/fields/E", false, place{kind: meshGroup, Var: "E", StepGroup: "/data/0"}, "record group"},
		{openpmd, "/data/0/particles/electrons", false, place{kind: ignore}, "species group"},
		{openpmd, "/data/0/particles/electrons/position/x", true, place{kind: variable, Var: "particles/electrons/position/x",
			StepGroup: "/data/0", Record: "/data/0/particles/electrons/position", Species: "electrons", SpeciesGroup: "/data/0/particles/electrons"}, "particle component"},
		{openpmd, "/data/5/particles/electrons/weighting", true, place{kind: variable, Var: "particles/electrons/weighting", Step: 5,
			StepGroup: "/data/5", Species: "electrons", SpeciesGroup: "/data/5/particles/electrons"}, "particle scalar record"},
		{openpmd, "/data/0/particles/electrons/positionOffset/x", false, place{kind: meshGroup, Var: "particles/electrons/positionOffset/x",
			StepGroup: "/data/0", Record: "/data/0/particles/electrons/positionOffset", Species: "electrons", SpeciesGroup: "/data/0/particles/electrons"}, "particle constant component group"},
		{openpmd, "/data/0/particles/e/particlePatches/numParticles", true, place{kind: variable, Var: "particles/e/particlePatches/numParticles",
			StepGroup: "/data/0", Species: "e", SpeciesGroup: "/data/0/particles/e"}, "patch scalar record"},
		{openpmd, "/data/0/particles/e/particlePatches/offset/y", true, place{kind: variable, Var: "particles/e/particlePatches/offset/y",
			StepGroup: "/data/0", Record: "/data/0/particles/e/particlePatches/offset", Species: "e", SpeciesGroup: "/data/0/particles/e"}, "patch component"},
		{openpmd, "/data/0/particles/stray", true, place{kind: outside, Reason: "openPMD particlesPath holds a dataset, not a species"}, "dataset in particlesPath"},
		{openpmd, "/data/0/extra", true, place{kind: outside, Reason: "outside openPMD meshesPath and particlesPath"}, "iteration extra"},
		{openpmd, "/info", true, place{kind: outside, Reason: "outside the openPMD basePath"}, "outside base"},
		{openpmd, "/data/x/fields/B/r", true, place{kind: outside, Reason: "outside the openPMD basePath (not an iteration)"}, "bad iteration"},
		{openpmd, "/data/7", false, place{kind: ignore}, "iteration group"},
		{[]catalog.Attr{str("openPMD", "1.1.0")}, "/data/1/meshes/B/x", true, place{kind: variable, Var: "B/x", Step: 1, StepGroup: "/data/1", Record: "/data/1/meshes/B"}, "default meshesPath"},
	}
	for _, c := range cases {
		s, err := schemeFor("f.h5", c.root)
		if err != nil {
			t.Fatalf("%s: %v", c.label, err)
		}
		got := s.locate(c.path, c.isDS)
		if got != c.want {
			t.Errorf("%s: locate(%q) = %+v, want %+v", c.label, c.path, got, c.want)
		}
	}
	if _, err := schemeFor("f.h5", []catalog.Attr{str("openPMD", "1.1.0"), str("basePath", "/data/")}); err == nil {
		t.Errorf("basePath without %%T accepted")
	}
}
