package rewriter

import (
	"slices"
	"testing"

	"relayout/catalog"
	"relayout/planner"
)

func TestParticlePathsAndAttrs(t *testing.T) {
	a := &catalog.Array{Var: "particles/e/position/x", Species: "e", Step: 550, Shape: []int64{10},
		DType: catalog.DType{Kind: catalog.Float, Size: 4},
		Attrs: []catalog.Attr{
			{Name: "particleShape", Type: "string", Strings: []string{"TSC"}, Species: true},
			{Name: "macroWeighted", Type: "uint32", Scalar: true, Uints: []uint64{1}, Record: true},
			{Name: "custom_rec", Type: "int64", Scalar: true, Ints: []int64{3}, Record: true},
			floatAttr("unitSI", 2.5),
		},
		StepAttrs: []catalog.Attr{floatAttr("time", 1), floatAttr("dt", 0.5), floatAttr("timeUnitSI", 1)}}
	path, rec, sp := particlePaths("particles", a)
	if path != "/data/550/particles/e/position/x" || rec != "/data/550/particles/e/position" || sp != "/data/550/particles/e" {
		t.Errorf("paths %q %q %q", path, rec, sp)
	}
	m := particleAttrs(a, rec == "")
	names := func(as []catalog.Attr) (out []string) {
		for _, x := range as {
			out = append(out, x.Name)
		}
		return out
	}
	if got := names(m.species); !slices.Equal(got, []string{"particleShape"}) || m.species[0].Species {
		t.Errorf("species attrs %v", m.species)
	}
	// macroWeighted and custom_rec from the input; the rest defaulted
	if got := names(m.record); !slices.Equal(got, []string{"macroWeighted", "custom_rec", "unitDimension", "timeOffset", "weightingPower", defaultedAttr}) {
		t.Errorf("record attrs %v", got)
	}
	if d := strs(m.record, defaultedAttr); !slices.Equal(d, []string{"unitDimension", "timeOffset", "weightingPower"}) {
		t.Errorf("record defaulted %v", d)
	}
	if got := names(m.component); !slices.Equal(got, []string{"unitSI"}) || floats(m.component, "unitSI")[0] != 2.5 {
		t.Errorf("component attrs %v", m.component)
	}
	for _, mesh := range []string{"geometry", "gridSpacing", "axisLabels", "position", "dataOrder"} {
		if findAttr(m.record, mesh) != nil || findAttr(m.component, mesh) != nil {
			t.Errorf("mesh attribute %s on a particle record", mesh)
		}
	}
	if findAttr(m.iteration, defaultedAttr) != nil {
		t.Errorf("iteration attributes defaulted: %v", m.iteration)
	}

	// A scalar record: everything on the dataset.
	w := &catalog.Array{Var: "particles/e/weighting", Species: "e", Shape: []int64{10}}
	path, rec, _ = particlePaths("ptcl", w)
	if path != "/data/0/ptcl/e/weighting" || rec != "" {
		t.Errorf("scalar record paths %q %q", path, rec)
	}
	m = particleAttrs(w, true)
	if m.record != nil || !slices.Equal(strs(m.component, defaultedAttr), []string{"unitDimension", "timeOffset", "macroWeighted", "weightingPower", "unitSI"}) {
		t.Errorf("scalar record attrs %v / %v", m.record, m.component)
	}
	// Patches: particlePatches/offset is the record of component x.
	p := &catalog.Array{Var: "particles/e/particlePatches/offset/x", Species: "e", Shape: []int64{2}}
	if _, rec, _ := particlePaths("particles", p); rec != "/data/0/particles/e/particlePatches/offset" {
		t.Errorf("patch record %q", rec)
	}
}

func TestParticleChunks(t *testing.T) {
	if got := planner.ParticleChunks([]int64{2, 2, 2}); !slices.Equal(got, []int64{8}) {
		t.Errorf("2x2x2: %v", got)
	}
	if got := planner.ParticleChunks([]int64{64}); !slices.Equal(got, []int64{64}) {
		t.Errorf("64: %v", got)
	}
	if got := planner.ParticleChunks(nil); got != nil {
		t.Errorf("nil: %v", got)
	}
	a := &catalog.Array{Var: "particles/e/id", Species: "e", Shape: []int64{100}, DType: catalog.DType{Kind: catalog.Uint, Size: 8}}
	l, err := arrayLayout(a, Options{Layout: planner.Chunked, Chunks: []int64{2, 2, 1}}, nil)
	if err != nil || !slices.Equal(l.Chunk, []int64{25}) {
		t.Errorf("layout %+v, %v", l, err)
	}
}
