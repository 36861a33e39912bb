package bp

// openPMD on ADIOS BP (openPMD-api's ADIOS2 backend, group- and file-based
// iteration encoding). Variables and attributes carry full paths; the mapping
// follows reader/h5's openPMD mapping:
//
//	attribute /openPMD, /basePath "/data/%T/", /meshesPath, /particlesPath
//	variable  /data/<it>/<meshes>/<rec>/<comp> -> var "<rec>/<comp>", step it
//	variable  /data/<it>/<meshes>/<rec>        -> var "<rec>",        step it
//	variable  /data/<it>/<particles>/<sp>/<rec>/<comp> -> var "particles/<sp>/<rec>/<comp>", step it,
//	                                                  species sp (catalog.ParticleVar; scalar records
//	                                                  and particlePatches/<rec>[/<comp>] likewise)
//	attribute /data/<it>/<particles>/<sp>/<a>      -> Array.Attrs of each of its components (Species)
//	attribute /data/<it>/<meshes>/<rec>/<comp>/<a> -> Array.Attrs (component)
//	attribute /data/<it>/<meshes>/<rec>/<a>        -> Array.Attrs (record; the
//	                                                  component's win)
//	attribute /data/<it>/<a>                       -> Array.StepAttrs
//	attribute /<a>                                 -> DatasetInfo.Attrs as "<a>"
//
// Variable-based encoding (/iterationEncoding "variableBased"): one ADIOS2
// step per iteration and paths without the iteration number, below
// /iterationFormat (openPMD-api writes "/data"):
//
//	ADIOS2 step s:
//	  attribute or variable /data/snapshot = [it]   the iteration of step s
//	  variable  /data/<meshes>/<rec>/<comp>        -> var "<rec>/<comp>", step it
//	  attribute /data/<a> (time, dt, ...)          -> Array.StepAttrs, as of step s
//	  record and component attributes              -> Array.Attrs, as of step s
//
// A step without a snapshot keeps its ADIOS2 step index as iteration.

import (
	"slices"
	"strconv"
	"strings"

	"relayout/catalog"
)

type openPMD struct {
	basePrefix, baseSuffix string // basePath around %T
	meshes, particles      string // without slashes
	// variable-based encoding: the iteration group ("/data"), and each
	// ADIOS2 step's iteration (from /data/snapshot), filled by finishOpen.
	varBased bool
	iterPath string
	iters    []int64
}

func attrStr(attrs []catalog.Attr, name string) (string, bool) {
	for _, a := range attrs {
		if a.Name == name && len(a.Strings) > 0 {
			return a.Strings[0], true
		}
	}
	return "", false
}

// detectOpenPMD returns the mapping when the root attribute /openPMD exists.
func detectOpenPMD(attrs []catalog.Attr) *openPMD {
	if _, ok := attrStr(attrs, "/openPMD"); !ok {
		return nil
	}
	base, ok := attrStr(attrs, "/basePath")
	if !ok {
		base = "/data/%T/"
	}
	pre, suf, found := strings.Cut(base, "%T")
	if !found {
		return nil
	}
	p := &openPMD{basePrefix: pre, baseSuffix: strings.Trim(suf, "/"), meshes: "meshes", particles: "particles"}
	if m, ok := attrStr(attrs, "/meshesPath"); ok {
		p.meshes = strings.Trim(m, "/")
	}
	if m, ok := attrStr(attrs, "/particlesPath"); ok {
		p.particles = strings.Trim(m, "/")
	}
	if enc, _ := attrStr(attrs, "/iterationEncoding"); enc == "variableBased" {
		p.varBased = true
		p.iterPath = strings.TrimSuffix(pre, "/")
		if f, ok := attrStr(attrs, "/iterationFormat"); ok && strings.HasPrefix(f, "/") && !strings.Contains(f, "%T") {
			p.iterPath = strings.TrimSuffix(f, "/")
		}
	}
	return p
}

// snapshotName is the variable-based encoding's iteration index of a step.
func (p *openPMD) snapshotName() string { return p.iterPath + "/snapshot" }

type pmdKind int

const (
	pmdMesh pmdKind = iota
	pmdParticles
	pmdOutside
)

type pmdPlace struct {
	kind   pmdKind
	Var    string // mesh: "<rec>/<comp>"; particles: the species path
	Step   int64
	Record string // record path when Var has a component
	Iter   string // iteration path
	// particles: the species name and its group path
	Species, SpeciesGroup string
}

// locate maps a variable path written at ADIOS2 step step.
func (p *openPMD) locate(name string, step int) pmdPlace {
	if p.varBased {
		rest, ok := strings.CutPrefix(name, p.iterPath+"/")
		if !ok || step < 0 || step >= len(p.iters) {
			return pmdPlace{kind: pmdOutside}
		}
		return p.place(rest, p.iters[step], p.iterPath)
	}
	after, ok := strings.CutPrefix(name, p.basePrefix)
	if !ok {
		return pmdPlace{kind: pmdOutside}
	}
	itName, rest, _ := strings.Cut(after, "/")
	if itName == "" || strings.TrimLeft(itName, "0123456789") != "" {
		return pmdPlace{kind: pmdOutside}
	}
	it, err := strconv.ParseInt(itName, 10, 64)
	if err != nil {
		return pmdPlace{kind: pmdOutside}
	}
	iter := p.basePrefix + itName
	if p.baseSuffix != "" {
		r, ok := strings.CutPrefix(rest, p.baseSuffix+"/")
		if !ok {
			return pmdPlace{kind: pmdOutside}
		}
		iter += "/" + p.baseSuffix
		rest = r
	}
	return p.place(rest, it, iter)
}

// place maps the iteration-relative path rest of iteration it (group iter).
func (p *openPMD) place(rest string, it int64, iter string) pmdPlace {
	if sub, ok := strings.CutPrefix(rest, p.meshes+"/"); ok && p.meshes != "" && sub != "" {
		pl := pmdPlace{kind: pmdMesh, Var: sub, Step: it, Iter: iter}
		if rec, _, comp := strings.Cut(sub, "/"); comp {
			pl.Record = iter + "/" + p.meshes + "/" + rec
		}
		return pl
	}
	if sub, ok := strings.CutPrefix(rest, p.particles+"/"); ok && p.particles != "" && sub != "" {
		species, rel, _ := strings.Cut(sub, "/")
		if rel == "" {
			return pmdPlace{kind: pmdOutside} // a variable directly in particlesPath
		}
		grp := iter + "/" + p.particles + "/" + species
		pl := pmdPlace{kind: pmdParticles, Var: catalog.ParticleVar(species, rel), Step: it, Iter: iter,
			Species: species, SpeciesGroup: grp}
		if rec, scalar := catalog.ParticleRecord(rel); !scalar {
			pl.Record = grp + "/" + rec
		}
		return pl
	}
	return pmdPlace{kind: pmdOutside}
}

// childAttrs returns the attributes directly below path, named by leaf.
func childAttrs(all []catalog.Attr, path string) []catalog.Attr {
	var out []catalog.Attr
	prefix := path + "/"
	for _, a := range all {
		if leaf, ok := strings.CutPrefix(a.Name, prefix); ok && leaf != "" && !strings.Contains(leaf, "/") {
			a.Name = leaf
			out = append(out, a)
		}
	}
	slices.SortStableFunc(out, func(x, y catalog.Attr) int { return strings.Compare(x.Name, y.Name) })
	return out
}

// rootAttrs are the attributes at "/" (named without the slash).
func (p *openPMD) rootAttrs(all []catalog.Attr) []catalog.Attr { return childAttrs(all, "") }

// arrayAttrs are a mesh array's attributes (record overlaid by component)
// and its iteration's attributes (all: the attributes as of the array's
// step; the variable-based snapshot index is left out).
func (p *openPMD) arrayAttrs(all []catalog.Attr, e *entry) (attrs, step []catalog.Attr) {
	attrs = childAttrs(all, e.name)
	if e.record != "" {
		for _, r := range childAttrs(all, e.record) {
			if !slices.ContainsFunc(attrs, func(a catalog.Attr) bool { return a.Name == r.Name }) {
				r.Record = true
				attrs = append(attrs, r)
			}
		}
		slices.SortStableFunc(attrs, func(x, y catalog.Attr) int { return strings.Compare(x.Name, y.Name) })
	}
	if e.speciesGroup != "" {
		for _, r := range childAttrs(all, e.speciesGroup) {
			if !slices.ContainsFunc(attrs, func(a catalog.Attr) bool { return a.Name == r.Name }) {
				r.Species = true
				attrs = append(attrs, r)
			}
		}
		slices.SortStableFunc(attrs, func(x, y catalog.Attr) int { return strings.Compare(x.Name, y.Name) })
	}
	if e.iterKey != "" {
		step = childAttrs(all, e.iterKey)
		if p.varBased {
			step = slices.DeleteFunc(step, func(a catalog.Attr) bool { return a.Name == "snapshot" })
		}
	}
	return attrs, step
}
