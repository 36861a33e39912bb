package rewriter

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"relayout/catalog"
)

// The openPMD attribute lists (openPMD standard 1.1.0, with the
// MeshRefinement and ED-PIC extensions and 2.0's gridUnitDimension) that
// decide where an attribute goes. Readers merge a record's attributes into
// each component's Array.Attrs (a component's own win); the writer splits
// them back: names in recordAttrNames go on the record group, everything
// else (unitSI, position, and any attribute the standard does not name)
// stays on the component dataset. A scalar record is one dataset and keeps
// both.
// recordAttrNames live on a mesh record (the group of a vector record).
var recordAttrNames = []string{"unitDimension", "timeOffset", "geometry", "geometryParameters", "dataOrder",
	"axisLabels", "gridSpacing", "gridGlobalOffset", "gridUnitSI", "gridUnitDimension",
	"refinementRatio", "fieldSmoothing", "fieldSmoothingParameters"}

// openPMDVersion is the standard version claimed for inputs that are not
// openPMD (an openPMD input's own version is kept).
const openPMDVersion = "1.1.0"

// defaultedAttr names, on an object, the openPMD attributes relayout filled
// in because the input did not provide them.
const defaultedAttr = "relayout_defaulted"

func isOpenPMD(format string) bool { return strings.HasPrefix(format, "openpmd") }

func findAttr(as []catalog.Attr, name string) *catalog.Attr {
	for i := range as {
		if as[i].Name == name {
			return &as[i]
		}
	}
	return nil
}

// setAttr replaces or appends a.
func setAttr(as []catalog.Attr, a catalog.Attr) []catalog.Attr {
	if p := findAttr(as, a.Name); p != nil {
		*p = a
		return as
	}
	return append(as, a)
}

func strAttr(name string, v ...string) catalog.Attr {
	return catalog.Attr{Name: name, Type: "string", Scalar: len(v) == 1, Strings: v}
}

func floatAttr(name string, v ...float64) catalog.Attr {
	return catalog.Attr{Name: name, Type: "float64", Scalar: len(v) == 1, Floats: v}
}

// floats returns a numeric attribute's values as float64.
func floats(as []catalog.Attr, name string) []float64 {
	a := findAttr(as, name)
	if a == nil {
		return nil
	}
	switch {
	case a.Floats != nil:
		return a.Floats
	case a.Ints != nil:
		out := make([]float64, len(a.Ints))
		for i, v := range a.Ints {
			out[i] = float64(v)
		}
		return out
	case a.Uints != nil:
		out := make([]float64, len(a.Uints))
		for i, v := range a.Uints {
			out[i] = float64(v)
		}
		return out
	}
	return nil
}

func strs(as []catalog.Attr, name string) []string {
	if a := findAttr(as, name); a != nil {
		return a.Strings
	}
	return nil
}

// seriesRoot is "/" of every output file and of series.h5: the input's root
// attributes with the series-level openPMD attributes of a group-based
// series (a file- or variable-based input's iterationEncoding and
// iterationFormat replaced; basePath "/data/%T/"). An openPMD input keeps its
// meshesPath, software, softwareVersion and date (the data
// is still what that code wrote; relayout only moved it) and any other root
// attribute; relayout records itself in relayout_version, relayout_date and
// relayout_source. Inputs that are not openPMD get software "relayout".
// An openPMD input's particlesPath is kept (openPMD-api requires it of
// openPMD 1.0 series); newFileConfig normalises it (withParticlesPath) and
// sets it when particles are written, and every iteration then has both the
// meshes and the particles group, possibly empty.
func seriesRoot(info catalog.DatasetInfo, version string, now time.Time) []catalog.Attr {
	pmdInput := isOpenPMD(info.Format)
	var out []catalog.Attr
	for _, a := range info.Attrs {
		switch a.Name {
		case "relayout_version", "relayout_source", "relayout_date":
			continue
		case "software", "softwareVersion", "date":
			if !pmdInput {
				a.Name = "relayout_input_" + a.Name
			}
		case "meshesPath":
			if !pmdInput {
				a.Name = "relayout_input_" + a.Name
			}
		case "particlesPath":
			if !pmdInput {
				a.Name = "relayout_input_" + a.Name
			}
		}
		if strings.HasPrefix(a.Name, "relayout_input_") && findAttr(out, a.Name) != nil {
			continue
		}
		out = append(out, a)
	}
	pmd := openPMDVersion
	if s := strs(info.Attrs, "openPMD"); pmdInput && len(s) == 1 && s[0] != "" {
		pmd = s[0]
	}
	ext := uint64(0)
	if v := floats(info.Attrs, "openPMDextension"); pmdInput && len(v) == 1 && v[0] >= 0 && v[0] <= math.MaxUint32 {
		ext = uint64(v[0])
	}
	set := []catalog.Attr{
		strAttr("openPMD", pmd),
		{Name: "openPMDextension", Type: "uint32", Scalar: true, Uints: []uint64{ext}},
		strAttr("basePath", "/data/%T/"),
		strAttr("meshesPath", meshesGroup(info)+"/"),
		strAttr("iterationEncoding", "groupBased"),
		strAttr("iterationFormat", "/data/%T/"),
		strAttr("relayout_version", version),
		strAttr("relayout_date", now.Format("2006-01-02 15:04:05 -0700")),
		strAttr("relayout_source", info.Path),
	}
	if !pmdInput || findAttr(out, "software") == nil {
		set = append(set, strAttr("software", "relayout"), strAttr("softwareVersion", version))
	}
	if !pmdInput || findAttr(out, "date") == nil {
		set = append(set, strAttr("date", now.Format("2006-01-02 15:04:05 -0700")))
	}
	for _, a := range set {
		out = setAttr(out, a)
	}
	return out
}

// meshesGroup is the name of the meshes group of every output iteration:
// an openPMD input's meshesPath (without slashes, one level: WarpX and
// PIConGPU write "fields/"), else "meshes".
func meshesGroup(info catalog.DatasetInfo) string {
	if !isOpenPMD(info.Format) {
		return "meshes"
	}
	m := strs(info.Attrs, "meshesPath")
	if len(m) != 1 {
		return "meshes"
	}
	name := strings.Trim(m[0], "/")
	if name == "" || strings.Contains(name, "/") || name == valuesGroup || name == boxesGroup || name == "." || name == ".." {
		return "meshes"
	}
	return name
}

// meshAttrs is where an array's attributes go in the openPMD structure.
type meshAttrs struct {
	record    []catalog.Attr // on the record group (nil for a scalar record: all on the dataset)
	component []catalog.Attr // on the dataset
	iteration []catalog.Attr // on /data/<step>
	species   []catalog.Attr // on a particle species group (particles only)
}

// openPMDAttrs splits a's attributes by the lists above and fills the
// standard's required mesh attributes the input lacks (named in
// relayout_defaulted on the object that got them):
//
//	geometry "cartesian", dataOrder "C", axisLabels x,y,z (rank <= 3; else
//	dim0, dim1, ...), gridSpacing the array's "dx" attribute (AMReX,
//	Chombo) or 1, gridGlobalOffset prob_lo (when given) + offset * spacing,
//	gridUnitSI 1, unitDimension zeros, timeOffset 0, refinementRatio (level
//	> 0) the "ref_ratio" attribute, unitSI 1, position 0.5 (cell centres)
//	for AMReX and Chombo, else 0; iteration time the array's or step's
//	"time" (else the step number), dt their "dt" (else 0), timeUnitSI 1.
//
// Axis attributes are skipped for scalar (rank 0) arrays.
func openPMDAttrs(a *catalog.Array, format string, scalarRecord bool) meshAttrs {
	var rec, comp []catalog.Attr
	for _, at := range a.Attrs {
		if !scalarRecord && (at.Record || slices.Contains(recordAttrNames, at.Name)) {
			at.Record = false
			rec = append(rec, at)
		} else {
			at.Record = false
			comp = append(comp, at)
		}
	}
	all := a.Attrs
	rank := len(a.Shape)
	var recDef, compDef []string
	fill := func(to *[]catalog.Attr, def *[]string, at catalog.Attr) {
		if findAttr(all, at.Name) != nil || findAttr(*to, at.Name) != nil {
			return
		}
		*to = append(*to, at)
		*def = append(*def, at.Name)
	}
	recTo, recDefTo := &rec, &recDef
	if scalarRecord {
		recTo, recDefTo = &comp, &compDef
	}
	fill(recTo, recDefTo, strAttr("geometry", "cartesian"))
	fill(recTo, recDefTo, strAttr("dataOrder", "C"))
	fill(recTo, recDefTo, floatAttr("gridUnitSI", 1))
	fill(recTo, recDefTo, catalog.Attr{Name: "unitDimension", Type: "float64", Floats: make([]float64, 7)})
	fill(recTo, recDefTo, floatAttr("timeOffset", 0))
	if rank > 0 {
		labels := make([]string, rank)
		for d := range labels {
			labels[d] = fmt.Sprintf("dim%d", d)
			if rank <= 3 {
				labels[d] = []string{"x", "y", "z"}[d]
			}
		}
		fill(recTo, recDefTo, catalog.Attr{Name: "axisLabels", Type: "string", Strings: labels})
		spacing := floats(all, "dx")
		if len(spacing) != rank {
			spacing = make([]float64, rank)
			for d := range spacing {
				spacing[d] = 1
			}
		}
		fill(recTo, recDefTo, catalog.Attr{Name: "gridSpacing", Type: "float64", Floats: slices.Clone(spacing)})
		origin := floats(all, "prob_lo")
		off := make([]float64, rank)
		for d := range off {
			if len(origin) == rank {
				off[d] = origin[d]
			}
			if d < len(a.Offset) {
				off[d] += float64(a.Offset[d]) * spacing[d]
			}
		}
		fill(recTo, recDefTo, catalog.Attr{Name: "gridGlobalOffset", Type: "float64", Floats: off})
		if a.Level > 0 {
			if r := floats(all, "ref_ratio"); len(r) == 1 || len(r) == rank {
				ratio := make([]int64, rank)
				for d := range ratio {
					ratio[d] = int64(r[min(d, len(r)-1)])
				}
				fill(recTo, recDefTo, catalog.Attr{Name: "refinementRatio", Type: "int64", Ints: ratio})
			}
		}
		pos := make([]float64, rank)
		if format == "amrex" || format == "chombo" {
			for d := range pos {
				pos[d] = 0.5
			}
		}
		fill(&comp, &compDef, catalog.Attr{Name: "position", Type: "float64", Floats: pos})
	}
	fill(&comp, &compDef, floatAttr("unitSI", 1))

	mark := func(to []catalog.Attr, def []string) []catalog.Attr {
		if len(def) > 0 {
			to = setAttr(to, catalog.Attr{Name: defaultedAttr, Type: "string", Strings: def})
		}
		return to
	}
	m := meshAttrs{component: mark(comp, compDef), iteration: iterationAttrs(a)}
	if !scalarRecord {
		m.record = mark(rec, recDef)
	}
	return m
}

// iterationAttrs are the attributes of a's iteration group: its StepAttrs
// with time the array's or step's "time" (else the step number), dt their
// "dt" (else 0) and timeUnitSI 1 filled in when missing (named in
// relayout_defaulted).
func iterationAttrs(a *catalog.Array) []catalog.Attr {
	var itDef []string
	fill := func(to *[]catalog.Attr, def *[]string, at catalog.Attr, all []catalog.Attr) {
		if findAttr(all, at.Name) != nil || findAttr(*to, at.Name) != nil {
			return
		}
		*to = append(*to, at)
		*def = append(*def, at.Name)
	}
	it := slices.Clone(a.StepAttrs)
	all := append(slices.Clone(a.Attrs), a.StepAttrs...)
	t := float64(a.Step)
	if v := floats(all, "time"); len(v) == 1 {
		t = v[0]
	}
	dt := 0.0
	if v := floats(all, "dt"); len(v) == 1 {
		dt = v[0]
	}
	fill(&it, &itDef, floatAttr("time", t), a.StepAttrs)
	fill(&it, &itDef, floatAttr("dt", dt), a.StepAttrs)
	fill(&it, &itDef, floatAttr("timeUnitSI", 1), a.StepAttrs)

	if len(itDef) > 0 {
		it = setAttr(it, catalog.Attr{Name: defaultedAttr, Type: "string", Strings: itDef})
	}
	return it
}

// coordinate is one dimension's coordinate variable (an HDF5 dimension
// scale) for netCDF-4 and xarray.
type coordinate struct {
	name   string
	values []float64
}

// coordinates derives one coordinate per dimension of an array from its
// record and component attributes: gridGlobalOffset + (i + position) *
// gridSpacing along each axis (in the grid's units; gridUnitSI converts to
// SI), axes named by axisLabels (reversed for dataOrder "F"). A thetaMode
// record has one more dimension than axes: the first is the mode index.
// Dimensions the attributes do not describe get index coordinates named
// dim<d>. Names get "_lvl<L>" for level L > 0. A name in reserved (the
// names of the file's groups and datasets on the array's path) gets
// "_axis" ("x" -> "x_axis" for component "x").
func coordinates(a *catalog.Array, m meshAttrs, reserved map[string]bool) []coordinate {
	rank := len(a.Shape)
	if rank == 0 {
		return nil
	}
	attrs := append(slices.Clone(m.record), m.component...)
	labels := strs(attrs, "axisLabels")
	spacing, offset, pos := floats(attrs, "gridSpacing"), floats(attrs, "gridGlobalOffset"), floats(attrs, "position")
	if o := strs(attrs, "dataOrder"); len(o) == 1 && o[0] == "F" {
		for _, s := range [][]float64{spacing, offset, pos} {
			slices.Reverse(s)
		}
		labels = slices.Clone(labels)
		slices.Reverse(labels)
	}
	first := 0 // first dimension the axes describe
	if g := strs(attrs, "geometry"); len(g) == 1 && g[0] == "thetaMode" && len(labels) == rank-1 {
		first = 1
	}
	n := rank - first
	physical := len(labels) == n && len(spacing) == n && len(offset) == n
	suffix := ""
	if a.Level > 0 {
		suffix = fmt.Sprintf("_lvl%d", a.Level)
	}
	out := make([]coordinate, rank)
	for d := range rank {
		name := fmt.Sprintf("dim%d", d)
		c := make([]float64, a.Shape[d])
		for i := range c {
			c[i] = float64(i)
		}
		switch {
		case first == 1 && d == 0:
			name = "mode"
		case physical:
			k := d - first
			if l := labels[k]; l != "" && !strings.ContainsAny(l, "/.") {
				name = l
			}
			p := 0.0
			if len(pos) == n {
				p = pos[k]
			}
			for i := range c {
				c[i] = offset[k] + (float64(i)+p)*spacing[k]
			}
		}
		out[d] = coordinate{name: name + suffix, values: c}
	}
	// One clash renames every dimension ("x_axis", "y_axis", "z_axis"), so
	// the files of E/x and E/y name their dimensions alike.
	clash := ""
	for _, c := range out {
		if reserved[c.name] {
			clash = "_axis"
		}
	}
	used := map[string]bool{}
	for d := range out {
		name := out[d].name + clash
		if used[name] || reserved[name] || strings.HasPrefix(name, boxesGroup) || strings.HasPrefix(name, valuesGroup) {
			name = fmt.Sprintf("dim%d%s", d, suffix)
		}
		used[name] = true
		out[d].name = name
	}
	return out
}

// float64LE encodes v as little-endian float64 bytes.
func float64LE(v []float64) []byte {
	b := make([]byte, 0, 8*len(v))
	for _, x := range v {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
	}
	return b
}
