package h5

// How dataset paths map to (variable, step):
//
//	plain HDF5            /a/b/c                      -> var "a/b/c", step 0
//	netCDF-4 (root attr _NCProperties)
//	                      /grp/v                      -> var "grp/v", step 0, dimension
//	                                                     names from the dimension scales;
//	                                                     a dimension without a coordinate
//	                                                     variable (a scale whose NAME says so)
//	                                                     is not a variable; netCDF-C's hidden
//	                                                     attributes are dropped (netcdf4.go)
//	ADIOS2 HDF5 engine    /Step<N>/name   (root attr NumSteps)
//	                                                  -> var "name", step N
//	openPMD (root attr openPMD, basePath "/data/%T/", meshesPath "meshes/")
//	                      /data/<it>/meshes/<rec>/<comp> -> var "<rec>/<comp>", step it
//	                      /data/<it>/meshes/<rec>        -> var "<rec>", step it
//	                      /data/<it>/particles/<sp>/<rec>/<comp>
//	                                  -> var "particles/<sp>/<rec>/<comp>", step it, species sp
//	                      /data/<it>/particles/<sp>/<rec>  (scalar record)
//	                                  -> var "particles/<sp>/<rec>"
//	                      /data/<it>/particles/<sp>/particlePatches/<rec>[/<comp>]
//	                                  -> var "particles/<sp>/particlePatches/<rec>[/<comp>]"
//	(catalog.ParticleVar; "particles" is the root attribute particlesPath;
//	a group with a "value" attribute is a constant record component; the
//	species group's attributes merge into each component's, marked Species,
//	the record group's marked Record.)

import (
	"fmt"
	"strconv"
	"strings"

	"relayout/catalog"
)

type fileKind int

const (
	plainFile fileKind = iota
	adiosFile
	openPMDFile
	netCDF4File
)

// scheme is how one file's paths map to variables, decided from its root
// attributes.
type scheme struct {
	kind fileKind
	// openPMD: basePath split around %T, and the iteration-relative paths of
	// meshes and particles without their trailing slash.
	basePrefix, baseSuffix string
	meshes, particles      string
}

func attrString(attrs []catalog.Attr, name string) (string, bool) {
	for _, a := range attrs {
		if a.Name == name && len(a.Strings) > 0 {
			return a.Strings[0], true
		}
	}
	return "", false
}

func hasAttr(attrs []catalog.Attr, name string) bool {
	for _, a := range attrs {
		if a.Name == name {
			return true
		}
	}
	return false
}

// schemeFor decides the mapping of a file from its root attributes.
func schemeFor(file string, root []catalog.Attr) (scheme, error) {
	if _, ok := attrString(root, "openPMD"); ok {
		base, ok := attrString(root, "basePath")
		if !ok {
			base = "/data/%T/"
		}
		pre, suf, found := strings.Cut(base, "%T")
		if !found || !strings.HasPrefix(pre, "/") {
			return scheme{}, fmt.Errorf("reader/h5: %s: openPMD basePath %q without %%T: %w", file, base, catalog.ErrUnsupported)
		}
		s := scheme{kind: openPMDFile, basePrefix: pre, baseSuffix: strings.TrimSuffix(suf, "/")}
		// openPMD 1.x names both paths; default to the standard's examples.
		s.meshes = "meshes"
		if m, ok := attrString(root, "meshesPath"); ok {
			s.meshes = strings.Trim(m, "/")
		}
		s.particles = "particles"
		if p, ok := attrString(root, "particlesPath"); ok {
			s.particles = strings.Trim(p, "/")
		}
		return s, nil
	}
	if hasAttr(root, "NumSteps") {
		return scheme{kind: adiosFile}, nil
	}
	if hasAttr(root, ncPropertiesAttr) {
		return scheme{kind: netCDF4File}, nil
	}
	return scheme{kind: plainFile}, nil
}

type placeKind int

const (
	ignore    placeKind = iota // structural group: nothing to record
	variable                   // a dataset that is a variable
	outside                    // a dataset the scheme does not map: skipped with Reason
	meshGroup                  // openPMD record or component group: constant if it has a "value" attribute
)

// place is where one object of a file lands.
type place struct {
	kind      placeKind
	Var       string
	Step      int64
	StepGroup string // group whose attributes are Array.StepAttrs ("" none)
	Record    string // openPMD record group whose attributes merge into a component's ("" none)
	// openPMD particles: the species name and its group, whose attributes
	// merge into a component's.
	Species, SpeciesGroup string
	Reason                string // for outside
}

// locate maps the object at path p (absolute) to its place.
func (s scheme) locate(p string, isDataset bool) place {
	switch s.kind {
	case adiosFile:
		first, rest, nested := strings.Cut(strings.TrimPrefix(p, "/"), "/")
		if step, ok := adiosStep(first); ok && nested {
			if !isDataset {
				return place{kind: ignore}
			}
			return place{kind: variable, Var: rest, Step: step, StepGroup: "/" + first}
		}
	case openPMDFile:
		return s.locateOpenPMD(p, isDataset)
	}
	if !isDataset {
		return place{kind: ignore}
	}
	return place{kind: variable, Var: strings.TrimPrefix(p, "/")}
}

// adiosStep parses "Step<N>".
func adiosStep(name string) (int64, bool) {
	n, ok := strings.CutPrefix(name, "Step")
	if !ok {
		return 0, false
	}
	return parseIteration(n)
}

func parseIteration(s string) (int64, bool) {
	if s == "" || strings.TrimLeft(s, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

func (s scheme) locateOpenPMD(p string, isDataset bool) place {
	skip := func(reason string) place {
		if !isDataset {
			return place{kind: ignore}
		}
		return place{kind: outside, Reason: reason}
	}
	after, ok := strings.CutPrefix(p, s.basePrefix)
	if !ok {
		return skip("outside the openPMD basePath")
	}
	itName, rest, _ := strings.Cut(after, "/")
	it, ok := parseIteration(itName)
	if !ok {
		return skip("outside the openPMD basePath (not an iteration)")
	}
	stepGroup := s.basePrefix + itName
	if s.baseSuffix != "" {
		// basePath like "/data/%T/fields/": the suffix follows the iteration.
		r, ok := strings.CutPrefix(rest, strings.TrimPrefix(s.baseSuffix, "/"))
		if !ok {
			return skip("outside the openPMD basePath")
		}
		stepGroup += "/" + strings.Trim(strings.TrimPrefix(s.baseSuffix, "/"), "/")
		rest = strings.TrimPrefix(r, "/")
	}
	if rest == "" {
		return place{kind: ignore}
	}
	if s.meshes != "" {
		if sub, ok := strings.CutPrefix(rest, s.meshes+"/"); ok && sub != "" {
			pl := place{Var: sub, Step: it, StepGroup: stepGroup}
			if rec, _, comp := strings.Cut(sub, "/"); comp {
				pl.Record = stepGroup + "/" + s.meshes + "/" + rec
			}
			if isDataset {
				pl.kind = variable
			} else {
				pl.kind = meshGroup
			}
			return pl
		}
		if rest == s.meshes {
			return skip("outside openPMD meshesPath and particlesPath")
		}
	}
	if s.particles != "" {
		if sub, ok := strings.CutPrefix(rest, s.particles+"/"); ok && sub != "" {
			sp, rel, nested := strings.Cut(sub, "/")
			if !nested || rel == "" {
				if !isDataset {
					return place{kind: ignore} // the species group: its attributes go with each component
				}
				return skip("openPMD particlesPath holds a dataset, not a species")
			}
			grp := stepGroup + "/" + s.particles + "/" + sp
			pl := place{Var: catalog.ParticleVar(sp, rel), Step: it, StepGroup: stepGroup, Species: sp, SpeciesGroup: grp}
			if rec, scalar := catalog.ParticleRecord(rel); !scalar {
				pl.Record = grp + "/" + rec
			}
			if isDataset {
				pl.kind = variable
			} else {
				pl.kind = meshGroup
			}
			return pl
		}
	}
	return skip("outside openPMD meshesPath and particlesPath")
}
