package bp

// openPMD on ADIOS BP (openPMD-api's ADIOS2 backend, group-based iteration
// encoding). Variables and attributes carry full paths; the mapping follows
// reader/h5's openPMD mapping:
//
//	attribute /openPMD, /basePath "/data/%T/", /meshesPath, /particlesPath
//	variable  /data/<it>/<meshes>/<rec>/<comp> -> var "<rec>/<comp>", step it
//	variable  /data/<it>/<meshes>/<rec>        -> var "<rec>",        step it
//	variable  /data/<it>/<particles>/<sp>/...  -> Skipped (particles)
//	attribute /data/<it>/<meshes>/<rec>/<comp>/<a> -> Array.Attrs (component)
//	attribute /data/<it>/<meshes>/<rec>/<a>        -> Array.Attrs (record; the
//	                                                  component's win)
//	attribute /data/<it>/<a>                       -> Array.StepAttrs
//	attribute /<a>                                 -> DatasetInfo.Attrs as "<a>"

import (
	"slices"
	"strconv"
	"strings"

	"relayout/catalog"
)

type openPMD struct {
	basePrefix, baseSuffix string // basePath around %T
	meshes, particles      string // without slashes
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
	return p
}

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
}

// locate maps a variable path.
func (p *openPMD) locate(name string) pmdPlace {
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
	if sub, ok := strings.CutPrefix(rest, p.meshes+"/"); ok && p.meshes != "" && sub != "" {
		pl := pmdPlace{kind: pmdMesh, Var: sub, Step: it, Iter: iter}
		if rec, _, comp := strings.Cut(sub, "/"); comp {
			pl.Record = iter + "/" + p.meshes + "/" + rec
		}
		return pl
	}
	if sub, ok := strings.CutPrefix(rest, p.particles+"/"); ok && p.particles != "" && sub != "" {
		species, _, _ := strings.Cut(sub, "/")
		return pmdPlace{kind: pmdParticles, Var: iter + "/" + p.particles + "/" + species}
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
// and its iteration's attributes.
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
	if e.iterKey != "" {
		step = childAttrs(all, e.iterKey)
	}
	return attrs, step
}
