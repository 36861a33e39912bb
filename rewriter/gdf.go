package rewriter

// yt views of AMR outputs: one Grid Data Format file (yt's gdf frontend)
// per step and hierarchy, view-amr_<step>.gdf, beside the OverlappingAMR
// view of the same hierarchies. Every box of every level is a grid whose
// fields are virtual datasets of the box's hyperslab of the level's own
// dataset (no copy):
//
//	/gridded_data_format           data_software "relayout", format_version 1
//	/simulation_parameters         refine_by, dimensionality, domain_dimensions,
//	                               domain_left_edge, domain_right_edge (3 entries;
//	                               a 2-D domain is one cell thick), current_time,
//	                               field_ordering 0, num_ghost_zones 0, ...
//	/grid_left_index (grids, 3)    the box's lower corner in its level's index space
//	/grid_dimensions (grids, 3)    its cells per axis
//	/grid_level, /grid_parent_id, /grid_particle_count
//	/field_types/<name>            field_units (gdfUnits: the input's openPMD units as
//	                               a unit string yt parses; never field_to_cgs, whose
//	                               number yt 4.1 takes for the units), field_name
//	/data/grid_%010d/<name>        virtual dataset of the box of <file>:<level dataset>
//
// GDF's axes are the dataset's own (field_ordering 0: the first axis is
// yt's x), so for AMReX and Chombo outputs (axes x, y, z) yt's axes are the
// physical ones. A hierarchy gets one when its levels refine by one integer
// ratio, the same on every axis and level (yt's refine_by).

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"relayout/catalog"
	"relayout/internal/h5"
)

// gdfGrid is the path of grid i's group in a GDF file.
func gdfGrid(i int) string { return fmt.Sprintf("/data/grid_%010d", i) }

// gdfUnits is the unit string, as yt parses it, of the values of an array
// with the input's attributes attrs: openPMD's unitDimension (the powers of
// the SI base units L, M, T, I, theta, N, J) as "kg*m/(A*s**3)", preceded
// by the factor unitSI when it is not 1 ("0.001*A*s/m**3"; values times
// unitSI are SI); "dimensionless" when the input says so, "" (yt:
// dimensionless too) when the input gives no units (AMReX and Chombo
// plotfiles carry none: relayout's output defaults unitDimension to zeros)
// or gives ones that are not a positive finite scale and 7 finite powers
// (why says which). GDF's other way, a number field_to_cgs, is not used:
// yt 4.1's gdf frontend takes that number for the field's units and fails.
func gdfUnits(attrs []catalog.Attr) (units, why string) {
	dim := floats(attrs, "unitDimension")
	if dim == nil {
		return "", ""
	}
	scale := 1.0
	if si := floats(attrs, "unitSI"); si != nil {
		if len(si) != 1 || !(si[0] > 0) || math.IsInf(si[0], 0) {
			return "", fmt.Sprintf("unitSI %v is not one positive finite scale", si)
		}
		scale = si[0]
	}
	if len(dim) != 7 || slices.ContainsFunc(dim, func(x float64) bool { return math.IsNaN(x) || math.IsInf(x, 0) }) {
		return "", fmt.Sprintf("unitDimension %v is not 7 powers of the SI base units", dim)
	}
	// yt's names of openPMD's base units, in the order yt prints them.
	order := []struct {
		i    int
		name string
	}{{1, "kg"}, {0, "m"}, {3, "A"}, {2, "s"}, {4, "K"}, {5, "mol"}, {6, "cd"}}
	var num, den []string
	for _, o := range order {
		p := dim[o.i]
		term := o.name
		if a := math.Abs(p); a != 1 {
			term += "**" + strconv.FormatFloat(a, 'g', -1, 64)
		}
		switch {
		case p > 0:
			num = append(num, term)
		case p < 0:
			den = append(den, term)
		}
	}
	if scale != 1 {
		num = append([]string{strconv.FormatFloat(scale, 'g', -1, 64)}, num...)
	}
	units = strings.Join(num, "*")
	switch {
	case units == "" && len(den) == 0:
		return "dimensionless", ""
	case units == "":
		units = "1"
	}
	switch len(den) {
	case 0:
	case 1:
		units += "/" + den[0]
	default:
		units += "/(" + strings.Join(den, "*") + ")"
	}
	return units, ""
}

// gdfRefine is the one refinement ratio of levels (per VTK axis spacing),
// or 0.
func gdfRefine(levels []amrArray, rank int) int64 {
	r := int64(0)
	for L := 1; L < len(levels); L++ {
		for v := range rank {
			q := levels[L-1].spacing[v] / levels[L].spacing[v]
			n := int64(math.Round(q))
			if n < 2 || math.Abs(q-float64(n)) > 1e-9*q || (r != 0 && n != r) {
				return 0
			}
			r = n
		}
	}
	return r
}

// writeGDF writes the GDF file of view mv's hierarchies (array(L, i): the
// level-L array of hierarchy i) and returns its manifest entry, with notes
// for views_skipped on fields whose units it could not give; or why it
// writes none.
func writeGDF(stage string, mv catalog.ManifestView, levels []amrArray, array func(level, i int) amrArray, time float64) (*catalog.ManifestView, string, []string, error) {
	rank := len(levels[0].spec.Shape)
	refine := gdfRefine(levels, rank)
	if refine == 0 {
		// yt 4.1's gdf frontend sizes level L's cells as level 0's over
		// refine_by**L and takes a grid's children from level L+1 only, so
		// neither per-level ratios nor an empty level standing for a
		// squared ratio (4 = 2*2) can be written.
		var ratios []string
		for L := 1; L < len(levels); L++ {
			var r []string
			for v := range rank {
				r = append(r, strconv.FormatFloat(levels[L-1].spacing[v]/levels[L].spacing[v], 'g', 6, 64))
			}
			ratios = append(ratios, strings.Join(r, "x"))
		}
		return nil, fmt.Sprintf("its levels refine by %s, not by one integer ratio on every axis and level "+
			"(yt 4.1's GDF has one refine_by for the hierarchy; yt.load of the input itself reads it: yt 4.1 has frontends for AMReX and Chombo plotfiles)", strings.Join(ratios, " then ")), nil, nil
	}
	file := mv.File[:len(mv.File)-len(".hdf")] + ".gdf"
	// A GDF field has one unit for all its grids: its levels' own, when
	// they agree.
	var notes []string
	units := make([]string, len(mv.Levels[0].Arrays))
	for i, a := range mv.Levels[0].Arrays {
		units[i] = array(0, i).units
		for L := range mv.Levels {
			la := array(L, i)
			why := la.unitsWhy
			if why == "" && la.units != units[i] {
				why = fmt.Sprintf("level %d's units %q are not level 0's %q", L, la.units, units[i])
			}
			if why != "" {
				notes = append(notes, fmt.Sprintf("%s: %s without units (yt: dimensionless): %s: %s", file, a.Name, la.v, why))
				units[i] = ""
				break
			}
		}
	}
	gv := catalog.ManifestView{File: file, Step: mv.Step, Type: "GDF",
		Arrays: []catalog.ManifestViewArray{}}
	// Domain, in the dataset's axis order (VTK's are reversed).
	l0 := levels[0]
	left, right, dims := make([]float64, 3), []float64{0, 0, 1}, []int64{1, 1, 1}
	for d := range rank {
		v := rank - 1 - d
		left[d] = l0.origin[v]
		dims[d] = l0.spec.Shape[d]
		right[d] = l0.origin[v] + float64(dims[d])*l0.spacing[v]
	}
	gv.Origin = left
	var lowers, counts, lvl, parent []int64
	type gridRef struct{ level, box int }
	var grids []gridRef
	for L, lv := range mv.Levels {
		gl := catalog.ManifestViewLevel{Level: L, Spacing: slices.Clone(lv.Spacing), Boxes: lv.Boxes}
		for i, a := range lv.Arrays {
			gl.Arrays = append(gl.Arrays, catalog.ManifestViewArray{Name: a.Name, Var: a.Var, File: a.File, Path: a.Path,
				Dataset: "/data/grid_*/" + a.Name, Shape: array(L, i).spec.Shape, Units: &units[i]})
		}
		gv.Levels = append(gv.Levels, gl)
		for b, box := range levels[L].boxes {
			lo, n := []int64{0, 0, 0}, []int64{1, 1, 1}
			copy(lo, box.Lower)
			copy(n, box.Count)
			p := int64(-1)
			if L > 0 {
				// The first coarser grid holding the box's lower corner.
				for g, r := range grids {
					if r.level != L-1 {
						continue
					}
					in := true
					for d := range rank {
						c := lo[d] / refine
						in = in && c >= lowers[3*g+d] && c < lowers[3*g+d]+counts[3*g+d]
					}
					if in {
						p = int64(g)
						break
					}
				}
			}
			grids = append(grids, gridRef{L, b})
			lowers, counts = append(lowers, lo...), append(counts, n...)
			lvl, parent = append(lvl, int64(L)), append(parent, p)
		}
	}
	err := writeViewFile(stage, gv.File, func(w *h5.Writer) error {
		ng := int64(len(grids))
		for _, t := range []struct {
			path  string
			shape []int64
			v     []int64
		}{
			{"/grid_left_index", []int64{ng, 3}, lowers},
			{"/grid_dimensions", []int64{ng, 3}, counts},
			{"/grid_level", []int64{ng}, lvl},
			{"/grid_parent_id", []int64{ng}, parent},
			{"/grid_particle_count", []int64{ng, 1}, make([]int64, ng)},
		} {
			if err := writeInt64s(w, t.path, t.shape, t.v); err != nil {
				return err
			}
		}
		i64 := func(n string, v ...int64) catalog.Attr {
			return catalog.Attr{Name: n, Type: "int64", Scalar: len(v) == 1, Ints: v}
		}
		f64 := func(n string, v ...float64) catalog.Attr {
			return catalog.Attr{Name: n, Type: "float64", Scalar: len(v) == 1, Floats: v}
		}
		str := func(n, v string) catalog.Attr {
			return catalog.Attr{Name: n, Type: "string", Scalar: true, Strings: []string{v}}
		}
		err := w.SetAttrs("/gridded_data_format", []catalog.Attr{str("data_software", "relayout"), i64("format_version", 1)})
		if err == nil {
			err = w.SetAttrs("/simulation_parameters", []catalog.Attr{
				i64("refine_by", refine), i64("dimensionality", int64(rank)), i64("domain_dimensions", dims...),
				f64("domain_left_edge", left...), f64("domain_right_edge", right...), f64("current_time", time),
				i64("cosmological_simulation", 0), i64("num_ghost_zones", 0), i64("field_ordering", 0),
				i64("boundary_conditions", 0, 0, 0, 0, 0, 0), str("unique_identifier", fmt.Sprintf("relayout-%d", mv.Step)),
				i64("geometry", 0)})
		}
		if err != nil {
			return err
		}
		for i, a := range gv.Levels[0].Arrays {
			if err := w.SetAttrs("/field_types/"+a.Name, []catalog.Attr{str("field_name", a.Name), str("field_units", units[i]),
				i64("staggering", 0)}); err != nil {
				return err
			}
		}
		for g, r := range grids {
			box := levels[r.level].boxes[r.box]
			shape := []int64{counts[3*g], counts[3*g+1], counts[3*g+2]}
			for i, ga := range gv.Levels[r.level].Arrays {
				a := array(r.level, i)
				src := h5.VirtualSource{File: a.file, Path: a.path, Shape: a.spec.Shape, Sel: &box,
					Box: catalog.Box{Lower: []int64{0, 0, 0}, Count: shape}}
				spec := h5.DatasetSpec{DType: a.spec.DType, Shape: shape, Fill: a.spec.Fill}
				if err := w.CreateVirtual(gdfGrid(g)+"/"+ga.Name, spec, []h5.VirtualSource{src}); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, "", nil, err
	}
	return &gv, "", notes, nil
}

func writeInt64s(w *h5.Writer, path string, shape, v []int64) error {
	data := make([]byte, 0, 8*len(v))
	for _, x := range v {
		data = binary.LittleEndian.AppendUint64(data, uint64(x))
	}
	if len(v) == 0 {
		return fmt.Errorf("%s: no grids", path)
	}
	d, err := w.CreateDataset(path, h5.DatasetSpec{DType: catalog.DType{Kind: catalog.Int, Size: 8}, Shape: shape, Chunk: shape})
	if err != nil {
		return err
	}
	err = d.WriteChunk(make([]int64, len(shape)), data)
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
