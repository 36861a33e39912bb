package rewriter

import (
	"fmt"
	"slices"
	"strings"

	"relayout/catalog"
)

// Particle record components (catalog.Array.Species set; variable
// "particles/<species>/<rel>", see catalog.ParticleVar) are written like
// meshes, through the same pipeline (a 1-D global array whose blocks carry
// their offsets), at openPMD's particle paths:
//
//	/data/<step>/<particles>/<species>                 species group: the species' attributes
//	/data/<step>/<particles>/<species>/<rec>           record group: unitDimension, timeOffset,
//	                                                   macroWeighted, weightingPower (and custom ones)
//	/data/<step>/<particles>/<species>/<rec>/<comp>    the component: unitSI (and custom ones)
//	/data/<step>/<particles>/<species>/<rec>           a scalar record (weighting, id): one dataset
//	                                                   with the record's and the component's attributes
//	/data/<step>/<particles>/<species>/particlePatches/<rec>[/<comp>]   the patches, likewise
//
// <particles> is the input's particlesPath (one level, without slashes),
// else "particles". A constant component is a group with value and shape
// attributes, as for meshes. No mesh attribute (geometry, gridSpacing,
// axisLabels, position) is filled in: the ones openPMD requires of a
// particle record that the input lacks are, named in relayout_defaulted:
// unitDimension zeros, timeOffset 0, macroWeighted 0, weightingPower 0
// (record), unitSI 1 (component); the iteration's time, dt and timeUnitSI
// as for meshes.

// particleRecordAttrNames live on a particle record group.
var particleRecordAttrNames = []string{"unitDimension", "timeOffset", "macroWeighted", "weightingPower"}

// particlesGroup is the particles group of every output iteration: an
// openPMD input's particlesPath (one level, without slashes), else
// "particles".
func particlesGroup(info catalog.DatasetInfo, meshes string) string {
	p := strs(info.Attrs, "particlesPath")
	if !isOpenPMD(info.Format) || len(p) != 1 {
		return "particles"
	}
	name := strings.Trim(p[0], "/")
	if name == "" || strings.Contains(name, "/") || name == meshes || name == valuesGroup || name == boxesGroup || name == "." || name == ".." {
		return "particles"
	}
	return name
}

// hasParticles reports whether any of vars is a particle variable of an
// openPMD input.
func hasParticles(info catalog.DatasetInfo, vars []catalog.VarSummary) bool {
	if !isOpenPMD(info.Format) {
		return false
	}
	for _, v := range vars {
		if rest, ok := strings.CutPrefix(v.Name, catalog.ParticlesPrefix); ok && strings.Contains(rest, "/") {
			return true
		}
	}
	return false
}

// particlePaths are the dataset (or constant group), record group ("" for
// a scalar record) and species group of particle array a.
func particlePaths(particles string, a *catalog.Array) (path, record, species string) {
	rel := strings.TrimPrefix(a.Var, catalog.ParticlesPrefix+a.Species+"/")
	sp := strings.Join(meshParts(a.Species), "_")
	species = fmt.Sprintf("%s/%s/%s", stepGroup(a.Step), particles, sp)
	parts := meshParts(rel)
	path = species + "/" + strings.Join(parts, "/")
	if rec, scalar := catalog.ParticleRecord(strings.Join(parts, "/")); !scalar {
		record = species + "/" + rec
	}
	return path, record, species
}

// particleAttrs splits a's attributes onto species group, record group and
// component (scalar: record and component on the dataset) and fills what
// openPMD requires (see the comment at the top).
func particleAttrs(a *catalog.Array, scalar bool) meshAttrs {
	var sp, rec, comp []catalog.Attr
	for _, at := range a.Attrs {
		switch {
		case at.Species:
			at.Species, at.Record = false, false
			sp = append(sp, at)
		case !scalar && (at.Record || slices.Contains(particleRecordAttrNames, at.Name)):
			at.Record = false
			rec = append(rec, at)
		default:
			at.Record = false
			comp = append(comp, at)
		}
	}
	var recDef, compDef []string
	fill := func(to *[]catalog.Attr, def *[]string, at catalog.Attr) {
		if findAttr(*to, at.Name) != nil {
			return
		}
		*to = append(*to, at)
		*def = append(*def, at.Name)
	}
	recTo, recDefTo := &rec, &recDef
	if scalar {
		recTo, recDefTo = &comp, &compDef
	}
	fill(recTo, recDefTo, catalog.Attr{Name: "unitDimension", Type: "float64", Floats: make([]float64, 7)})
	fill(recTo, recDefTo, floatAttr("timeOffset", 0))
	fill(recTo, recDefTo, catalog.Attr{Name: "macroWeighted", Type: "uint32", Scalar: true, Uints: []uint64{0}})
	fill(recTo, recDefTo, floatAttr("weightingPower", 0))
	fill(&comp, &compDef, floatAttr("unitSI", 1))
	mark := func(to []catalog.Attr, def []string) []catalog.Attr {
		if len(def) > 0 {
			to = setAttr(to, catalog.Attr{Name: defaultedAttr, Type: "string", Strings: def})
		}
		return to
	}
	m := meshAttrs{component: mark(comp, compDef), iteration: iterationAttrs(a), species: sp}
	if !scalar {
		m.record = mark(rec, recDef)
	}
	return m
}

// withParticlesPath is root with particlesPath set to the particles group
// (and the input's kept as relayout_input_particlesPath removed).
func withParticlesPath(root []catalog.Attr, particles string) []catalog.Attr {
	out := slices.DeleteFunc(slices.Clone(root), func(a catalog.Attr) bool { return a.Name == "relayout_input_particlesPath" })
	return setAttr(out, strAttr("particlesPath", particles+"/"))
}
